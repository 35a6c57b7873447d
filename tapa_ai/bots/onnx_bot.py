"""``onnx:PATH[@Nply]``: a model exported by ``tapa-ai export --format onnx``, run by onnxruntime.

The file describes itself (its ``metadata_props``, written by
:mod:`tapa_ai.export.onnx`): ``metadata_json`` holds the rule options, the
encoding version and the outcome points, so the bot knows its variant as a
``net:`` checkpoint does. :func:`onnx_evaluator` turns the file into an
:class:`~tapa_ai.net.evaluator.EncodedEvaluator` (the model's class
probabilities of ``encode(positions)``, float32), and the bot is a
:class:`~tapa_ai.bots.search.NetBot` over it: it searches 0 to 3 plies,
values bear-offs by the databases (``,nobearoff``: by the model) and decides
the cube exactly as ``net:PATH`` does, with the model's numbers (the graph's
own float32 ``equity`` output is not used: the bot computes the equity in
float64 as the net bot does, see docs/arena.md).

onnxruntime computes the same float32 network in another order of
operations than the net bot's numba kernel, so the two disagree by up to
about 2e-6 per probability, and a move the net prefers to another by less
than about 3e-7 points may go the other way: 1 decision in 600 to 3,000 on
random positions, fewer in games; the net's own torch reference path
disagrees with its kernel as often (docs/arena.md, ``scripts/onnx_agreement.py``).

onnxruntime (and onnx) are the optional ``export`` extra; without them the
bot is a :class:`~tapa_ai.bots.base.BotError` saying what to install.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..net.evaluator import EncodedEvaluator
from ..rules.options import RuleOptions, RulesError
from .base import BotError

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


def onnx_evaluator(path: str | Path, name: Optional[str] = None) -> "OnnxEvaluator":
    """The :class:`~tapa_ai.net.evaluator.EncodedEvaluator` of an exported ONNX model (BotError, one line, for a
    missing runtime, an unreadable file or metadata that does not fit the model)."""
    from ..net.encoding import check_version, num_features
    from ..rules.outcomes import outcome_points

    path = Path(path)
    name = name or f"onnx:{path}"
    session = _session(path, name)
    metadata = _metadata(session, path, name)
    rules = _rules_of(metadata, path, name)
    try:
        encoding_version = check_version(metadata.get("encoding_version"))
    except ValueError as error:
        raise BotError(f"bot spec {name!r}: {path}: {error}") from None
    inputs = session.get_inputs()
    width = inputs[0].shape[-1] if inputs else None
    if len(inputs) != 1 or width != num_features(encoding_version):
        raise BotError(f"bot spec {name!r}: {path}: want one input of {num_features(encoding_version)} "
                       f"features (encoding version {encoding_version}), the model has "
                       f"{[(item.name, item.shape) for item in inputs]}")
    input_name = inputs[0].name
    outputs = [item.name for item in session.get_outputs()]
    if "probabilities" not in outputs:
        raise BotError(f"bot spec {name!r}: {path}: no 'probabilities' output (outputs: {outputs})")
    points = np.asarray(metadata.get("outcome_points", []), dtype=np.float64)
    expected = outcome_points(rules).astype(np.float64)
    if points.shape != expected.shape or not np.array_equal(points, expected):
        raise BotError(f"bot spec {name!r}: {path}: outcome_points {points.tolist()} differ from the rule "
                       f"set's {expected.tolist()}")

    return OnnxEvaluator(session, input_name, metadata, rules, encoding_version, name)


class OnnxEvaluator(EncodedEvaluator):
    """An ONNX session as an :class:`~tapa_ai.net.evaluator.Evaluator` (its ``probabilities`` output)."""

    def __init__(self, session: Any, input_name: str, metadata: dict[str, Any], rules: RuleOptions,
                 encoding_version: int, name: str) -> None:
        super().__init__(self._run, rules, encoding_version, name)
        self.session, self.input_name, self.metadata = session, input_name, metadata

    def _run(self, features: np.ndarray) -> np.ndarray:
        return self.session.run(["probabilities"], {self.input_name: features})[0]
