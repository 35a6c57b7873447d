"""``onnx:PATH``: a model exported by ``tapa-ai export --format onnx``, run by onnxruntime, playing 0-ply.

The file describes itself (its ``metadata_props``, written by
:mod:`tapa_ai.export.onnx`): ``metadata_json`` holds the rule options, the
encoding version and the outcome points, so the bot knows its variant as a
``net:`` checkpoint does. It chooses exactly as ``net:PATH`` at 0 plies
(:meth:`tapa_ai.bots.search.NetBot.choose`,
:func:`tapa_ai.net.afterstates.afterstate_distributions`):

- every afterstate is encoded from the opponent's view
  (``encode(afterstates.positions.flipped())``), the model gives its outcome
  probabilities (float32), read back from the mover's view with
  :func:`~tapa_ai.net.model.swap_sides`;
- a finished game is its exact outcome (one-hot, :func:`~tapa_ai.net.model.outcome_classes`);
- a bear-off (no contact left, :func:`tapa_ai.bearoff.evaluate.bearoff_mask`) gets the bear-off
  database's value instead of the model's, as the net bot gives it (``bearoff=False``: the model's, as
  ``NetBot(bearoff=False)``);
- the equity is computed in float64 from the float32 probabilities, as the
  net bot computes it (the graph's own float32 ``equity`` output is not
  used: its rounding differs, see docs/arena.md);
- :func:`~tapa_ai.movegen.choice.segment_argmax` with the arena's rng breaks ties.

onnxruntime computes the same float32 network in another order of
operations than the net bot's numba kernel, so the two disagree by up to
about 2e-6 per probability, and a move the net prefers to another by less
than about 3e-7 points may go the other way: 1 decision in 600 to 3,000 on
random positions, fewer in games; the net's own torch reference path
disagrees with its kernel as often (docs/arena.md, ``scripts/onnx_agreement.py``).
The cube is passive (never doubles, always takes).

onnxruntime (and onnx) are the optional ``export`` extra; without them the
bot is a :class:`~tapa_ai.bots.base.BotError` saying what to install.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..movegen.choice import segment_argmax
from ..movegen.generate import Afterstates
from ..rules.options import RuleOptions, RulesError
from .base import Bot, BotError

_MISSING = ("bot {name!r} needs onnxruntime, which is not installed: pip install 'tapa-ai[export]' "
            "(or pip install onnxruntime)")


def _import_onnxruntime(name: str):
    try:
        import onnxruntime
    except ImportError:
        raise BotError(_MISSING.format(name=name)) from None
    return onnxruntime


def _session(path: Path, name: str):
    """An onnxruntime session of ``path`` (CPU), using as many threads as torch is told to (arena workers: 1)."""
    onnxruntime = _import_onnxruntime(name)
    if not path.is_file():
        raise BotError(f"bot spec {name!r}: no ONNX model file {str(path)!r}")
    options = onnxruntime.SessionOptions()
    try:
        import torch

        options.intra_op_num_threads = max(1, torch.get_num_threads())
    except ImportError:  # pragma: no cover - torch is a core dependency
        pass
    options.inter_op_num_threads = 1
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own exception types for unreadable models
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BotError(f"bot spec {name!r}: {path} is not a readable ONNX model ({first})") from None


def _metadata(session, path: Path, name: str) -> dict[str, Any]:
    props = session.get_modelmeta().custom_metadata_map
    if "metadata_json" not in props:
        raise BotError(f"bot spec {name!r}: {path} has no tapa_ai metadata (metadata_json); "
                       "export it with tapa-ai export --format onnx")
    try:
        metadata = json.loads(props["metadata_json"])
        if not isinstance(metadata, dict):
            raise ValueError("not a JSON object")
    except ValueError as error:
        raise BotError(f"bot spec {name!r}: {path}: unreadable metadata_json ({error})") from None
    return metadata


def onnx_model_rules(path: str | Path, name: Optional[str] = None) -> RuleOptions:
    """The rule set an exported ONNX model was trained for (lets commands infer the variant, as for ``net:``)."""
    path = Path(path)
    name = name or f"onnx:{path}"
    return _rules_of(_metadata(_session(path, name), path, name), path, name)


def _rules_of(metadata: dict[str, Any], path: Path, name: str) -> RuleOptions:
    try:
        return RuleOptions.from_dict(metadata["rule_options"])
    except (KeyError, RulesError) as error:
        raise BotError(f"bot spec {name!r}: {path}: metadata without usable rule_options ({error})") from None


class OnnxBot(Bot):
    """``onnx:PATH``: an exported evaluator choosing at 0 plies exactly as ``net:`` does (module docstring)."""

    def __init__(self, path: str | Path, name: Optional[str] = None, bearoff: bool = True) -> None:
        from ..net.encoding import check_version, num_features
        from ..rules.outcomes import outcome_points

        path = Path(path)
        self.name = name or f"onnx:{path}"
        self.path = path
        self.session = _session(path, self.name)
        metadata = _metadata(self.session, path, self.name)
        self.rules = _rules_of(metadata, path, self.name)
        self.variants = (self.rules.name,)
        try:
            self.encoding_version = check_version(metadata.get("encoding_version"))
        except ValueError as error:
            raise BotError(f"bot spec {self.name!r}: {path}: {error}") from None
        inputs = self.session.get_inputs()
        width = inputs[0].shape[-1] if inputs else None
        if len(inputs) != 1 or width != num_features(self.encoding_version):
            raise BotError(f"bot spec {self.name!r}: {path}: want one input of {num_features(self.encoding_version)} "
                           f"features (encoding version {self.encoding_version}), the model has "
                           f"{[(item.name, item.shape) for item in inputs]}")
        self.input_name = inputs[0].name
        outputs = [item.name for item in self.session.get_outputs()]
        if "probabilities" not in outputs:
            raise BotError(f"bot spec {self.name!r}: {path}: no 'probabilities' output (outputs: {outputs})")
        points = np.asarray(metadata.get("outcome_points", []), dtype=np.float64)
        expected = outcome_points(self.rules).astype(np.float64)
        if points.shape != expected.shape or not np.array_equal(points, expected):
            raise BotError(f"bot spec {self.name!r}: {path}: outcome_points {points.tolist()} differ from the rule "
                           f"set's {expected.tolist()}")
        self.points = points
        """(K,) float64 points of each outcome class, as the net bot uses them."""
        self.metadata = metadata
        self.bearoff = bool(bearoff)
        """True: bear-offs get the database's value, as ``net:`` bots give them; False: the model's."""

    def check_rules(self, rules: RuleOptions) -> None:
        if rules != self.rules:
            raise BotError(f"bot {self.name!r} was trained for rule set {self.rules.name!r}; "
                           f"it cannot play {rules.name!r}")

    def model_distributions(self, afterstates: Afterstates) -> np.ndarray:
        """(N, K) float32 outcome probabilities of every afterstate from the mover's view by the model alone
        (as :func:`tapa_ai.net.afterstates.afterstate_distributions`): finished games exact."""
        from ..net.encoding import encode
        from ..net.afterstates import with_finished_outcomes
        from ..rules.outcomes import swap_sides

        if len(afterstates) == 0:
            return np.zeros((0, self.points.size), dtype=np.float32)
        features = encode(afterstates.positions.flipped(), version=self.encoding_version)
        (opponent_view,) = self.session.run(["probabilities"], {self.input_name: features})
        return with_finished_outcomes(swap_sides(np.asarray(opponent_view, dtype=np.float32)), afterstates)

    def distributions(self, afterstates: Afterstates) -> np.ndarray:
        """(N, K) float64 0-ply values of every afterstate from the mover's view, as the net bot's
        (:meth:`model_distributions`, bear-offs from the database when :attr:`bearoff`)."""
        values = self.model_distributions(afterstates).astype(np.float64)
        if self.bearoff and len(afterstates):
            from ..bearoff.evaluate import bearoff_distributions, bearoff_mask
            from ..rules.outcomes import swap_sides

            known = np.flatnonzero(bearoff_mask(afterstates.positions) & ~afterstates.game_over)
            if known.size:
                # The opponent rolls next: the database's value of the flipped position, sides swapped.
                _, roller_view = bearoff_distributions(afterstates.positions.take(known).flipped())
                values[known] = swap_sides(roller_view)
        return values

    def equities(self, afterstates: Afterstates) -> np.ndarray:
        """(N,) float64 expected points of every afterstate for the side that moved."""
        return self.distributions(afterstates) @ self.points

    def choose(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        return segment_argmax(self.equities(afterstates), afterstates.offsets, rng)
