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

Deeper networks go by Net2Net's other half: a new hidden layer between the
last hidden layer and the outputs, as wide as the layer under it, with the
identity for its weights and zero biases. Under ReLU the layer under it
only passes values >= 0, which ReLU passes unchanged, so the new layer
hands the outputs what they had (the same floats in torch and in the fast
kernel: ``1 * a + 0 * b`` sums). Its Adam moments start afresh (no state,
as for a new network's parameters). A wider new layer is grown the same
way as any other once it is there.

    python scripts/grow_network.py checkpoints/tapa.pt --hidden 256 128 128 --out runs/<run>/latest.pt
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

    ``hidden`` lists one width per hidden layer, input side first: one for each layer the network has, none
    narrower than now, and then any new layers (added before the outputs), none narrower than the last
    hidden layer now; at least one layer wider or one more. New layers start as the identity (module
    docstring; ReLU networks only); new units' incoming weights are drawn as a new network's are, from
    ``seed``; every weight out of a new unit into an old unit or an output is zero. Every network part (the
    race network too) and self-play's copy of the weights (``learning.overlap``) grow the same way; Adam's
    moments of new entries are zero, of new layers absent. CheckpointError for a width list that does not fit.
    """
    architecture = payload["model_config"]
    config = EvaluatorNet.architecture_config(architecture)
    old = list(config.widths)
    hidden = list(hidden)
    if any(isinstance(w, bool) or not isinstance(w, int) for w in hidden):
        raise CheckpointError(f"hidden widths {hidden}: give whole numbers of units")
    if len(hidden) < len(old) or (len(hidden) > len(old) and not old):
        raise CheckpointError(f"hidden widths {hidden}: the network has {len(old)} hidden layers {old}; give one "
                              f"width for each, then any new layers")
    if (any(new < width for new, width in zip(hidden, old))
            or any(new < old[-1] for new in hidden[len(old):]) or hidden == old):
        raise CheckpointError(f"hidden widths {hidden}: growing only widens or deepens, and the network is {old}; "
                              f"give widths at least as wide (new layers at least {old[-1] if old else 0}), one of "
                              f"them wider or one more layer")
    if len(hidden) > len(old):
        payload = _deepened(payload, config, len(hidden) - len(old))
        architecture = payload["model_config"]
        config = EvaluatorNet.architecture_config(architecture)
        old = list(config.widths)
        if hidden == old:
            return payload
    grown_config = _reshaped(config, hidden)
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
    return _with_widths(grown, hidden)


def _reshaped(config: Any, hidden: list[int]) -> Any:
    """``config`` (a ModelConfig) with ``hidden`` as its hidden widths; CheckpointError for widths it refuses
    (too wide, too many layers, too many weights between layers)."""
    try:
        return type(config).from_dict({**config.to_dict(), "layers": len(hidden), "hidden": hidden})
    except ValueError as error:  # ConfigError
        raise CheckpointError(str(error)) from None


def _with_widths(payload: dict[str, Any], hidden: list[int]) -> dict[str, Any]:
    """``payload`` with ``hidden`` as the hidden widths of its stored architecture and training config."""
    architecture = payload["model_config"]
    payload["model_config"] = {**architecture, "model": {**architecture["model"], "layers": len(hidden),
                                                         "hidden": hidden}}
    train_config = dict(payload["config"])
    train_config["model"] = {**train_config["model"], "layers": len(hidden), "hidden": hidden}
    payload["config"] = train_config
    return payload


def _deepened(payload: dict[str, Any], config: Any, extra: int) -> dict[str, Any]:
    """``payload`` with ``extra`` identity layers (as wide as the last hidden layer) before the outputs."""
    if config.activation != "relu":
        raise CheckpointError(f"a {config.describe()} network cannot be deepened without changing what it "
                              f"computes: a new layer starts as the identity, which only ReLU passes unchanged")
    architecture = payload["model_config"]
    old = list(config.widths)
    hidden = old + [old[-1]] * extra
    deeper_net = EvaluatorNet(_reshaped(config, hidden), RuleOptions.from_dict(architecture["rules"]), seed=0)
    fresh = deeper_net.state_dict()
    model_state = payload["model_state"]
    output, new_output = 2 * len(old), 2 * len(hidden)

    def renamed(key: str) -> str:  # the output layer moves up; every other parameter keeps its name
        part, index, kind = key.rsplit(".", 2)
        return f"{part}.{new_output}.{kind}" if int(index) == output else key

    added = {f"{part}.{2 * layer}.{kind}" for part in deeper_net.parts for layer in range(len(old), len(hidden))
             for kind in ("weight", "bias")}
    if set(fresh) != {renamed(key) for key in model_state} | added:
        raise CheckpointError(f"the checkpoint's parameters {sorted(model_state)} are not those of a "
                              f"{config.describe()} network")

    def deepen_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        moved = {renamed(key): value for key, value in state.items()}
        deeper = {}
        for key, value in fresh.items():
            if key in moved:
                deeper[key] = moved[key]
            elif key.endswith(".weight"):
                deeper[key] = torch.eye(value.shape[0], dtype=value.dtype)
            else:
                deeper[key] = torch.zeros_like(value)
        return deeper

    deeper = _with_states(payload, deepen_state, {})
    optimizer_state = payload.get("optimizer_state")
    if optimizer_state is not None:  # keyed by the parameters' order: old states move to their new places
        order = [renamed(key) for key in model_state]
        index_of = {key: index for index, key in enumerate(fresh)}
        states = {index_of[order[index]]: state for index, state in optimizer_state["state"].items()}
        groups = [{**group, "params": list(range(len(fresh)))} for group in optimizer_state["param_groups"]]
        deeper["optimizer_state"] = {"param_groups": groups, "state": states}
    return _with_widths(deeper, hidden)


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
