"""Widen a checkpoint's network without changing what it computes: a later encoding, or wider hidden layers.

Each version of the ``tapa-td`` encoding appends columns to the one before
(docs/encoding.md: version 2 the exposure columns 259-308, version 3 the
contact columns 309-314), so a network of an earlier version becomes one of
a later version by giving its first layer zero weights for the new columns:
on any position it then computes what it did (the new inputs add ``0 * x``:
the same values to the bit in the fast kernel, to float32 rounding in
torch's products, whose blocking depends on the width), and training goes
on from there, learning what the new inputs are worth. The optimizer's
state grows the same way (zero moments for the new weights), so a training
run resumes from the widened checkpoint as from any other (``tapa-ai train
--resume``, ``scripts/learning_curve.py --resume``).

    python scripts/widen_encoding.py runs/<run>/latest.pt --version 2      # in place, the old file kept beside it

Wider hidden layers (:func:`grow_payload`, ``scripts/grow_network.py``) go
the same way one layer up (Net2Net's function-preserving widening, done with
zeros): every new unit gets freshly initialized incoming weights (torch's
default initialization, from a seeded generator), and every weight *from* a
new unit into an old unit or an output is zero. Old units and the outputs
then compute what they did, to the bit in the fast kernel (the new units add
``0 * activation``); training starts from the trained net and teaches the new
units from the first step, because their activations are nonzero and so are
the gradients of their outgoing weights. The Adam moments of new weights
start at zero.

    python scripts/grow_network.py checkpoints/tapa.pt --hidden 512 256 --out runs/<run>/latest.pt
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable

import torch

from ..rules.options import RuleOptions
from .checkpoint import CheckpointError, load_checkpoint, write_payload
from .checkpoint_read import read_payload
from .encoding import ENCODING_VERSIONS, num_features
from .model import EvaluatorNet

__all__ = ["widen_payload", "widen_checkpoint", "grow_payload", "grow_checkpoint", "rewrite_in_place"]


def _first_layer_keys(model_state: dict[str, torch.Tensor], width: int) -> list[str]:
    """The first-layer weights of every network part (``layers.0.weight``, ``race_layers.0.weight``)."""
    keys = [key for key, value in model_state.items()
            if key.endswith(".0.weight") and value.dim() == 2 and value.shape[1] == width]
    if not keys:
        raise CheckpointError(f"no first layer with {width} inputs in the network")
    return keys


def _padded(tensor: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """``tensor`` in the top-left block of a zero tensor of ``shape`` (a widened weight, or its Adam moment)."""
    padded = tensor.new_zeros(shape)
    padded[tuple(slice(0, n) for n in tensor.shape)] = tensor
    return padded


def _with_states(payload: dict[str, Any], change: Callable[[dict[str, torch.Tensor]], dict[str, torch.Tensor]],
                 shapes: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """A copy of ``payload`` whose network weights and self-play's copy of them (``learning.overlap``) went
    through ``change``, and whose Adam moments of the parameters in ``shapes`` are zero-padded to those shapes."""
    changed = dict(payload)
    changed["model_state"] = change(payload["model_state"])
    extra = payload.get("extra")
    if isinstance(extra, dict) and extra.get("play_weights"):
        changed["extra"] = {**extra, "play_weights": change(extra["play_weights"])}
    optimizer_state = payload.get("optimizer_state")
    if optimizer_state is not None:
        order = list(payload["model_state"])  # Adam's state is keyed by the parameters' order, the state dict's
        states = {}
        for index, state in optimizer_state["state"].items():
            shape = shapes.get(order[index])
            states[index] = {name: _padded(moment, shape)
                             if shape is not None and torch.is_tensor(moment) and moment.dim() == len(shape) else moment
                             for name, moment in state.items()}
        changed["optimizer_state"] = {"param_groups": optimizer_state["param_groups"], "state": states}
    return changed


def widen_payload(payload: dict[str, Any], version: int) -> dict[str, Any]:
    """A copy of checkpoint ``payload`` (as :func:`read_payload` returns it) on encoding ``version``.

    The first layer of each network part gains zero columns for the inputs that ``version`` adds, and the
    Adam moments of those weights are zero; self-play's copy of the weights (``learning.overlap``) widens the
    same way; counters, generators and running games are unchanged.
    CheckpointError if ``version`` is not later than the checkpoint's or not a known version.
    """
    if version not in ENCODING_VERSIONS:
        raise CheckpointError(f"encoding version {version!r}: known versions are {list(ENCODING_VERSIONS)}")
    old = int(payload["encoding"]["version"])
    if version <= old:
        raise CheckpointError(f"the checkpoint is already on encoding version {old}: it can only be widened to a "
                              f"later one, not {version}")
    width, wider = num_features(old), num_features(version)
    model_state = payload["model_state"]
    shapes = {key: (model_state[key].shape[0], wider) for key in _first_layer_keys(model_state, width)}

    def widen_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {key: _padded(value, shapes[key]) if key in shapes else value for key, value in state.items()}

    widened = _with_states(payload, widen_state, shapes)
    widened["encoding"] = {**payload["encoding"], "version": version}
    widened["model_config"] = _with_version(payload["model_config"], version, wider)
    config = dict(payload["config"])
    config["model"] = {**config["model"], "encoding_version": version}
    widened["config"] = config
    return widened


def _with_version(model_config: dict[str, Any], version: int, width: int) -> dict[str, Any]:
    """The stored architecture with the new encoding version and input count."""
    architecture = dict(model_config)
    if isinstance(architecture.get("model"), dict):
        architecture["model"] = {**architecture["model"], "encoding_version": version}
    if "encoding_version" in architecture:
        architecture["encoding_version"] = version
    if "num_features" in architecture:
        architecture["num_features"] = width
    return architecture


def widen_checkpoint(source: str | Path, version: int, target: str | Path) -> Path:
    """Read checkpoint ``source``, widen it to encoding ``version`` and write it to ``target`` (atomically)."""
    load_checkpoint(source)  # every check of a checkpoint, with its clear errors
    return write_payload(target, widen_payload(read_payload(Path(source)), version))


def _grown(old: torch.Tensor, fresh: torch.Tensor, is_output: bool) -> torch.Tensor:
    """``fresh`` (a new-shape weight or bias) with the ``old`` values in its top-left block.

    A weight's rows of old units keep zero for the new inputs (the new units of the layer below); the rows of
    new units keep their fresh values for every input. The output layer has no new rows: zero columns for the
    new units of the last hidden layer."""
    grown = fresh.clone()
    if old.dim() == 1:
        grown[: old.shape[0]] = old
        return grown
    rows, columns = old.shape
    grown[:rows, :columns] = old
    grown[:rows, columns:] = 0.0
    if is_output:
        grown[:, columns:] = 0.0
    return grown


def grow_payload(payload: dict[str, Any], hidden: list[int], seed: int = 1) -> dict[str, Any]:
    """A copy of checkpoint ``payload`` whose hidden layers are ``hidden`` units wide, computing what it did.

    ``hidden`` lists one width per hidden layer (as many as the network has, input side first), none narrower
    than now and at least one wider. New units' incoming weights are drawn as a new network's are, from
    ``seed``; every weight out of a new unit into an old unit or an output is zero (module docstring). Every
    network part (the race network too) and self-play's copy of the weights (``learning.overlap``) grow the
    same way; Adam's moments of new entries are zero. CheckpointError for a width list that does not fit.
    """
    architecture = payload["model_config"]
    config = EvaluatorNet.architecture_config(architecture)
    old = list(config.widths)
    hidden = list(hidden)
    if len(hidden) != len(old) or any(isinstance(w, bool) or not isinstance(w, int) for w in hidden):
        raise CheckpointError(f"hidden widths {hidden}: the network has {len(old)} hidden layers {old}; give one "
                              f"width for each")
    if any(new < width for new, width in zip(hidden, old)) or hidden == old:
        raise CheckpointError(f"hidden widths {hidden}: growing only widens, and the network is {old}; give widths "
                              f"at least as wide, one of them wider")
    try:
        grown_config = type(config).from_dict({**config.to_dict(), "layers": len(hidden), "hidden": hidden})
    except ValueError as error:  # ConfigError: too wide
        raise CheckpointError(str(error)) from None
    fresh_net = EvaluatorNet(grown_config, RuleOptions.from_dict(architecture["rules"]), seed=seed)
    fresh = fresh_net.state_dict()
    model_state = payload["model_state"]
    if set(fresh) != set(model_state):
        raise CheckpointError(f"the checkpoint's parameters {sorted(model_state)} are not those of a "
                              f"{config.describe()} network {sorted(fresh)}")
    outputs = {f"{part}.{2 * len(old)}.{kind}" for part in fresh_net.parts for kind in ("weight", "bias")}

    def grow_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {key: _grown(value, fresh[key], key in outputs) for key, value in state.items()}

    grown = _with_states(payload, grow_state, {key: tuple(value.shape) for key, value in fresh.items()})
    model = {**architecture["model"], "layers": len(hidden), "hidden": hidden}
    grown["model_config"] = {**architecture, "model": model}
    train_config = dict(payload["config"])
    train_config["model"] = {**train_config["model"], "layers": len(hidden), "hidden": hidden}
    grown["config"] = train_config
    return grown


def grow_checkpoint(source: str | Path, hidden: list[int], target: str | Path, seed: int = 1) -> Path:
    """Read checkpoint ``source``, widen its hidden layers to ``hidden`` and write it to ``target`` (atomically)."""
    load_checkpoint(source)
    return write_payload(target, grow_payload(read_payload(Path(source)), hidden, seed))


def rewrite_in_place(path: Path, kept_label: str, write: Callable[[Path], Path]) -> Path:
    """Replace checkpoint ``path`` by what ``write(temporary_path)`` writes, keeping the original beside it as
    ``<stem>.<kept_label><suffix>`` (e.g. ``latest.v1.pt``); returns that path. CheckpointError, with nothing
    changed, if it exists already; the replacement is atomic (``os.replace``)."""
    kept = path.with_name(f"{path.stem}.{kept_label}{path.suffix}")
    if kept.exists():
        raise CheckpointError(f"{kept} exists already: move it away first (it would be overwritten)")
    written = write(path.with_name(path.name + ".new"))
    shutil.copy2(path, kept)
    os.replace(written, path)
    return kept
