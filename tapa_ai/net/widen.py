"""Move a checkpoint to a later encoding version without changing what its network computes.

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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .checkpoint import CheckpointError, load_checkpoint, write_payload
from .checkpoint_read import read_payload
from .encoding import ENCODING_VERSIONS, num_features

__all__ = ["widen_payload", "widen_checkpoint"]


def _first_layer_keys(model_state: dict[str, torch.Tensor], width: int) -> list[str]:
    """The first-layer weights of every network part (``layers.0.weight``, ``race_layers.0.weight``)."""
    keys = [key for key, value in model_state.items()
            if key.endswith(".0.weight") and value.dim() == 2 and value.shape[1] == width]
    if not keys:
        raise CheckpointError(f"no first layer with {width} inputs in the network")
    return keys


def widen_payload(payload: dict[str, Any], version: int) -> dict[str, Any]:
    """A copy of checkpoint ``payload`` (as :func:`read_payload` returns it) on encoding ``version``.

    The first layer of each network part gains zero columns for the inputs that ``version`` adds, and the
    Adam moments of those weights are zero; counters, generators and running games are unchanged.
    CheckpointError if ``version`` is not later than the checkpoint's or not a known version.
    """
    if version not in ENCODING_VERSIONS:
        raise CheckpointError(f"encoding version {version!r}: known versions are {list(ENCODING_VERSIONS)}")
    old = int(payload["encoding"]["version"])
    if version <= old:
        raise CheckpointError(f"the checkpoint is already on encoding version {old}: it can only be widened to a "
                              f"later one, not {version}")
    width, wider = num_features(old), num_features(version)
    model_state = dict(payload["model_state"])
    keys = _first_layer_keys(model_state, width)
    order = list(payload["model_state"])
    optimizer_state = payload.get("optimizer_state")
    if optimizer_state is not None:
        # Adam's state is keyed by the parameters' order in net.parameters(), which is the state dict's order.
        optimizer_state = {"param_groups": optimizer_state["param_groups"],
                           "state": {index: dict(state) for index, state in optimizer_state["state"].items()}}
    for key in keys:
        weight = model_state[key]
        model_state[key] = torch.cat([weight, weight.new_zeros(weight.shape[0], wider - width)], dim=1)
        if optimizer_state is not None:
            state = optimizer_state["state"].get(order.index(key))
            for name, moment in (state or {}).items():
                if torch.is_tensor(moment) and moment.shape == weight.shape:
                    state[name] = torch.cat([moment, moment.new_zeros(moment.shape[0], wider - width)], dim=1)
    widened = dict(payload)
    widened["model_state"] = model_state
    widened["optimizer_state"] = optimizer_state
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
