"""The network a checkpoint describes, checked against the weights it holds, before anything is built.

A checkpoint states its architecture (``model_config``) and holds the
weights (``model_state``). A damaged or hostile file may claim a network far
larger than its weights (``hidden = 4000000`` beside a few kilobytes of
tensors), or hold NaN weights. :func:`check_network_state` lays the stated
network out on torch's ``meta`` device (shapes only, no memory however large
it claims to be) and compares; the real network is built only after it passes.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from ..config import ConfigError
from ..rules.options import RulesError
from .model import EvaluatorNet


def check_network_state(architecture: Mapping[str, Any], state: Mapping[str, Any]) -> None:
    """Raise ValueError (one line) unless ``state`` is exactly the weights of ``architecture``, all finite.

    ``architecture`` is checked like a config (sizes within the config's
    bounds), every tensor of ``state`` must have a name and shape of the
    described network, none may be missing, and all must be floating point
    and finite.
    """
    try:
        with torch.device("meta"):
            skeleton = EvaluatorNet.from_architecture(architecture)
    except (KeyError, TypeError, ValueError, RuntimeError, OverflowError, RulesError, ConfigError) as error:
        raise ValueError(f"the network it describes cannot be built: {error}") from None
    described = skeleton.config.describe()
    wanted = {name: tuple(tensor.shape) for name, tensor in skeleton.state_dict().items()}
    missing = [name for name in wanted if name not in state]
    unknown = [name for name in state if name not in wanted]
    if missing or unknown:
        what = f"lacks {missing[0]}" if missing else f"has {unknown[0]}, which is not part of it"
        raise ValueError(f"its weights do not fit the network it describes ({described}): the file {what}")
    for name, shape in wanted.items():
        tensor = state[name]
        if not isinstance(tensor, torch.Tensor):
            raise ValueError(f"weights {name} are a {type(tensor).__name__}, not a tensor")
        if tuple(tensor.shape) != shape:
            raise ValueError(f"its weights do not fit the network it describes ({described}): "
                             f"{name} is {tuple(tensor.shape)} in the file, {shape} in that network")
        if not tensor.is_floating_point():
            raise ValueError(f"weights {name} are {tensor.dtype}, not floating point")
        if not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"weights {name} hold non-finite numbers (NaN or infinity): the network is unusable "
                             "(its training diverged, or the file was altered)")
