"""The evaluator network: encoded positions -> distribution over how the game ends, from the side to move.

The network is an MLP from the ``tapa-td`` encoding (:mod:`tapa_ai.net.encoding`)
to a softmax over mutually exclusive **outcome classes**, always from the view
of the side to move (the side the encoded batch is seen from): the classes, their
points and the equity of :mod:`tapa_ai.rules.outcomes`.

``docs/encoding.md`` describes the outputs and the equity formula with the
encoding. Torch's thread count is left alone here; call
:func:`configure_threads` once at start-up if it should change.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Union

import numpy as np
import torch
from torch import nn

from ..config import ModelConfig
from ..rules.options import RuleOptions
from ..rules.outcomes import (  # the outcome classes' one home; named here for the network's users
    WIN_SINGLE, WIN_GAMMON, WIN_TOP, LOSE_SINGLE, LOSE_GAMMON, LOSE_TOP, DRAW, OUTCOME_NAMES,
    CUMULATIVE_NAMES, num_outcomes, outcome_names, outcome_points, top_points, outcome_class,
    outcome_classes, equity, cumulative_probabilities, named_probabilities, swap_sides,
)
from .encoding import (
    ENCODING_NAME, ENCODING_VERSIONS, MOVER_POINTS, MOVER_SCALARS, OPPONENT_POINTS, OPPONENT_SCALARS, PARALLEL_COLUMN,
    POINT_UNITS, RUNNING_COLUMNS, SIDE_SCALARS, check_rules_version, num_features as encoding_width,
)

__all__ = [
    "ACTIVATIONS", "ModelConfig", "EvaluatorNet", "WIN_SINGLE", "WIN_GAMMON", "WIN_TOP", "LOSE_SINGLE",
    "LOSE_GAMMON", "LOSE_TOP", "DRAW", "OUTCOME_NAMES", "CUMULATIVE_NAMES", "num_outcomes", "outcome_names",
    "outcome_points", "top_points", "outcome_class", "outcome_classes", "equity", "cumulative_probabilities",
    "named_probabilities", "swap_sides", "evaluate", "configure_threads", "race_rows", "NETWORK_PARTS",
]

Array = Union[np.ndarray, torch.Tensor]

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "gelu": nn.GELU, "silu": nn.SiLU,
}
"""Activation names accepted by :class:`ModelConfig`."""

# -- phases: contact and race ------------------------------------------------------------------------
_BAR = (MOVER_SCALARS.start + SIDE_SCALARS.index("bar"), OPPONENT_SCALARS.start + SIDE_SCALARS.index("bar"))
_FREE1, _PINNED = POINT_UNITS.index("free1"), POINT_UNITS.index("pinned")


def race_rows(features: torch.Tensor) -> torch.Tensor:
    """(B,) bool: the encoded positions that are **races**, where no checker can meet an opposing one again.

    Each side's rearmost checker is its highest own point holding a checker
    of it (free or pinned; 25 on the bar, 0 with none on the board). With
    opposite paths the mover's own point ``p`` is the opponent's ``25 - p``,
    so the two can still meet exactly when the rearmost points add up to
    more than 25. In the running games (``rules.parallel``, version 4) a
    side's points 1..12 are the other's 13..24, which the other has left
    behind for good: a race once both rearmost points are 12 or less
    (docs/encoding.md, *Races*). Read from the point and bar columns, which
    every encoding version has, and ``rules.parallel`` (version 4); the fast
    evaluator, the exports and ``numpy_model`` compute the same from their
    own inputs (``tests/test_race_network.py``).
    """
    points = features[:, MOVER_POINTS.start:OPPONENT_POINTS.stop].reshape(-1, 2, 24, len(POINT_UNITS))
    occupied = (points[..., _FREE1] > 0) | (points[..., _PINNED] > 0)  # (B, 2 sides, 24 own points)
    numbers = torch.arange(1, 25, device=features.device, dtype=torch.int64)
    rearmost = torch.where(occupied, numbers, 0).amax(dim=2)  # (B, 2)
    on_bar = features[:, list(_BAR)] > 0
    rearmost = torch.where(on_bar, 25, rearmost)
    race = rearmost.sum(dim=1) <= 25
    if features.shape[1] >= RUNNING_COLUMNS.stop:
        race = torch.where(features[:, PARALLEL_COLUMN] > 0, rearmost.amax(dim=1) <= 12, race)
    return race


NETWORK_PARTS = ("layers", "race_layers")
"""The module names of an :class:`EvaluatorNet`'s networks: every position's (or, with a race network, the
contact positions'), then the races' (present only with ``ModelConfig.race_network``)."""


# -- the network ----------------------------------------------------------------------------------
class EvaluatorNet(nn.Module):
    """MLP: (B, NUM_FEATURES) encoded positions -> (B, K) outcome-class logits for the side to move.

    Built for one rule set (``rules``), which fixes the classes
    (:func:`outcome_names`) and their points. ``seed`` initializes the weights
    from a private generator (reproducible, leaves torch's global RNG alone);
    without it the global RNG is used, as torch does.
    """

    def __init__(self, config: ModelConfig, rules: RuleOptions, seed: Optional[int] = None) -> None:
        super().__init__()
        # The running games need encoding version 4 (versions 1-3 would describe their board wrongly).
        check_rules_version(rules, config.encoding_version)
        self.config = config
        self.rules = rules
        self.num_outcomes = num_outcomes(rules)
        self.outcome_names = outcome_names(rules)
        self.race_layers: Optional[nn.Sequential] = None
        if seed is None:
            self._build_parts(config)
        else:
            # nn.Linear initializes itself from the global RNG; fork it so that a
            # seeded network leaves the global state exactly as it found it.
            with torch.random.fork_rng(devices=[]):
                self._build_parts(config)
            self._initialize(torch.Generator().manual_seed(seed))
        # Not a parameter and not saved: derived from the rules, which a checkpoint stores.
        self.register_buffer("points", torch.from_numpy(outcome_points(rules)), persistent=False)

    @property
    def encoding_version(self) -> int:
        """The ``tapa-td`` version of this network's input: call ``encode(batch, version=net.encoding_version)``."""
        return self.config.encoding_version

    @property
    def num_features(self) -> int:
        """Width of the input (259, 309, 315 or 318 for encoding versions 1-4)."""
        return encoding_width(self.config.encoding_version)

    def _build_parts(self, config: ModelConfig) -> None:
        """``layers``, and ``race_layers`` of the same shape with a race network."""
        self.layers = self._build(config)
        if config.race_network:
            self.race_layers = self._build(config)

    def _build(self, config: ModelConfig) -> nn.Sequential:
        modules: list[nn.Module] = []
        width = encoding_width(config.encoding_version)
        for units in config.widths:
            modules += [nn.Linear(width, units), ACTIVATIONS[config.activation]()]
            width = units
        modules.append(nn.Linear(width, self.num_outcomes))
        return nn.Sequential(*modules)

    def _initialize(self, generator: torch.Generator) -> None:
        """torch's default ``nn.Linear`` initialization, drawn from ``generator``."""
        with torch.no_grad():
            for module in self.linear_layers():
                nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
                bound = 1.0 / math.sqrt(module.in_features)
                nn.init.uniform_(module.bias, -bound, bound, generator=generator)

    @property
    def parts(self) -> tuple[str, ...]:
        """The names of this network's parts (:data:`NETWORK_PARTS`): ``("layers",)``, with a race network both."""
        return NETWORK_PARTS if self.race_layers is not None else NETWORK_PARTS[:1]

    def part(self, name: str) -> nn.Sequential:
        """The network of one part (:data:`NETWORK_PARTS`); ValueError for a part this network does not have."""
        if name not in self.parts:
            raise ValueError(f"network part {name!r}: this network has {list(self.parts)}")
        return getattr(self, name)

    def linear_layers(self, part: Optional[str] = None) -> list[nn.Linear]:
        """The linear layers of one part (``"layers"``, ``"race_layers"``), input first; of every part in order
        without ``part`` (every other module is an activation)."""
        parts = self.parts if part is None else (part,)
        return [module for name in parts for module in self.part(name) if isinstance(module, nn.Linear)]

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """(B, NUM_FEATURES) float32 -> (B, K) logits (use ``log_softmax`` for a loss).

        With a race network, each row goes through the network of its phase (:func:`race_rows`).
        """
        if self.race_layers is None:
            return self.layers(features)
        race = race_rows(features)
        if bool(race.all()):
            return self.race_layers(features)
        if not bool(race.any()):
            return self.layers(features)
        logits = features.new_empty((features.shape[0], self.num_outcomes))
        logits[~race] = self.layers(features[~race])
        logits[race] = self.race_layers(features[race])
        return logits

    def part_logits(self, features: torch.Tensor, part: str) -> torch.Tensor:
        """(B, NUM_FEATURES) -> (B, K) logits of one part (:data:`NETWORK_PARTS`) for every row, whatever its
        phase: for rows known to be of that part's phase (a learning step of one phase)."""
        return self.part(part)(features)

    def probabilities(self, features: torch.Tensor) -> torch.Tensor:
        """(B, NUM_FEATURES) -> (B, K) class probabilities (softmax of the logits)."""
        return torch.softmax(self(features), dim=-1)

    def equity(self, features: torch.Tensor) -> torch.Tensor:
        """(B, NUM_FEATURES) -> (B,) expected points for the side to move."""
        return self.probabilities(features) @ self.points

    def architecture(self) -> dict[str, Any]:
        """Everything needed to rebuild this network (JSON-friendly), for checkpoints."""
        return {
            "model": self.config.to_dict(),
            "rules": self.rules.to_dict(),
            "num_features": self.num_features,
            "num_outcomes": self.num_outcomes,
            "outcome_names": list(self.outcome_names),
            "encoding": ENCODING_NAME,
            "encoding_version": self.encoding_version,
        }

    @classmethod
    def from_architecture(cls, architecture: Mapping[str, Any]) -> "EvaluatorNet":
        """A freshly initialized network of a stored :meth:`architecture`; refuses another encoding."""
        found = (architecture.get("encoding"), architecture.get("encoding_version"), architecture.get("num_features"))
        known = [(ENCODING_NAME, version, encoding_width(version)) for version in ENCODING_VERSIONS]
        if found not in known:
            raise ValueError(
                f"network was built for encoding {found[0]!r} version {found[1]} with {found[2]} features; "
                f"this program has {ENCODING_NAME!r} " + ", ".join(f"version {v} with {n}" for _, v, n in known)
            )
        config = cls.architecture_config(architecture)
        if config.encoding_version != found[1]:
            raise ValueError(f"network's model config says encoding version {config.encoding_version}, "
                             f"its architecture {found[1]}")
        return cls(config, RuleOptions.from_dict(architecture["rules"]))

    @staticmethod
    def architecture_config(architecture: Mapping[str, Any]) -> ModelConfig:
        """The :class:`ModelConfig` of a stored :meth:`architecture` (no encoding check)."""
        # Networks written before ModelConfig had encoding_version store it only beside the model config.
        return ModelConfig.from_dict({"encoding_version": architecture.get("encoding_version"),
                                      **architecture["model"]})


def network_arrays(net: EvaluatorNet, part: str = "layers") -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The weights (out, in) and biases of one part's linear layers (:data:`NETWORK_PARTS`), in order, as
    float32 numpy copies."""
    linears = net.linear_layers(part)
    weights = [module.weight.detach().cpu().numpy().astype(np.float32, copy=True) for module in linears]
    biases = [module.bias.detach().cpu().numpy().astype(np.float32, copy=True) for module in linears]
    return weights, biases


def evaluate(net: EvaluatorNet, features: Array) -> tuple[np.ndarray, np.ndarray]:
    """Batch evaluation without gradients: (B, NUM_FEATURES) -> probabilities (B, K) and equity (B,), numpy float32.

    ``features`` may be a numpy array (shared with torch, not copied) or a tensor.
    """
    if isinstance(features, np.ndarray):
        features = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))
    with torch.inference_mode():
        probabilities = net.probabilities(features.to(net.points.device))
        values = probabilities @ net.points
    return probabilities.cpu().numpy(), values.cpu().numpy()


def soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of target outcome distributions under ``logits``: the loss of every learning step."""
    return -(targets * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


def configure_threads(threads: Optional[int]) -> None:
    """Set torch's intra-op thread count (``None`` or 0 leaves torch's default). Call once at start-up."""
    if threads:
        torch.set_num_threads(int(threads))
