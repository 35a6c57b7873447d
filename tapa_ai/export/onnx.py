"""ONNX export: the evaluator MLP written directly as an ONNX graph (opset :data:`~tapa_ai.export.ONNX_OPSET`).

The graph is built node by node with ``onnx.helper`` from the network's
weights, not traced through ``torch.onnx.export``: in torch 2.13 that
function's default (``dynamo=True``) needs the ``onnxscript`` package and its
dependencies, and the older TorchScript-based path (``dynamo=False``) is
deprecated and announced for removal. The network is a handful of standard
operators, so writing them out needs only the ``onnx`` package and does not
depend on torch's exporter at all. ``tests/test_export.py`` checks the result
against torch with onnxruntime.

Graph::

    features [batch, 259 ... 318] -> (Gemm -> activation) x layers -> Gemm -> logits [batch, K]
    (with a race network: that twice, ``contact_logits`` and ``race_logits``, and
    ``logits = Where(race_column, race_logits, contact_logits)``, ``race_column``
    computed from the point and bar columns, and in version 4 ``rules.parallel``, as
    ``tapa_ai.net.model.race_rows`` does)
    logits -> Softmax(axis=-1) -> probabilities [batch, K]
    probabilities -> MatMul(outcome_points [K]) -> equity [batch]

Activations: ``Relu``, ``Tanh``, ``Sigmoid``; GELU as ``0.5 x (1 + Erf(x / sqrt 2))``
(the exact form torch uses; the ``Gelu`` operator needs opset 20) and SiLU as
``x * Sigmoid(x)``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from .. import __version__
from ..net.encoding import PARALLEL_COLUMN, RUNNING_COLUMNS
from ..net.model import EvaluatorNet, network_arrays
from . import ONNX_OPSET, ExportError

__all__ = ["onnx_model", "onnx_model_bytes", "metadata_props", "IR_VERSION"]

IR_VERSION = 8
"""ONNX IR version written (8 = ONNX 1.10-1.12, the one that introduced opset 17), so older runtimes load the file."""


def _require_onnx():
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError as error:
        raise ExportError(
            f"ONNX export needs the 'onnx' package ({error}); install it with: pip install 'tapa-ai[export]'"
        ) from None
    return onnx, helper, numpy_helper


def metadata_props(metadata: dict[str, Any]) -> dict[str, str]:
    """The string-to-string ``metadata_props`` of an exported model.

    One entry per metadata key (a string value as it is, any other value as
    JSON text) and ``metadata_json``: the whole metadata as one JSON object.
    """
    props = {key: value if isinstance(value, str) else json.dumps(value, sort_keys=True)
             for key, value in metadata.items()}
    props["metadata_json"] = json.dumps(metadata, sort_keys=True)
    return props


def onnx_model(net: EvaluatorNet, metadata: dict[str, Any]):
    """The ``onnx.ModelProto`` of ``net``, checked with ``onnx.checker``."""
    onnx, helper, numpy_helper = _require_onnx()
    TensorProto = onnx.TensorProto
    weights, biases = network_arrays(net)
    activation = net.config.activation
    nodes = []
    initializers = [numpy_helper.from_array(np.asarray(metadata["outcome_points"], dtype=np.float32),
                                            "outcome_points")]

    def constant(name: str, value: float) -> str:
        initializers.append(numpy_helper.from_array(np.array(value, dtype=np.float32), name))
        return name

    def network(prefix: str, weights: list, biases: list, logits: str) -> None:
        """The MLP of one part (``layers`` or ``race_layers``) from ``features`` to ``logits``."""
        current = "features"
        last = len(weights) - 1
        tag = "" if prefix == "layers" else "race_"
        for index, (weight, bias) in enumerate(zip(weights, biases)):
            initializers.append(numpy_helper.from_array(weight, f"{prefix}.{index}.weight"))
            initializers.append(numpy_helper.from_array(bias, f"{prefix}.{index}.bias"))
            output = logits if index == last else f"{tag}linear{index}"
            nodes.append(helper.make_node("Gemm", [current, f"{prefix}.{index}.weight", f"{prefix}.{index}.bias"],
                                          [output], name=f"{tag}layer{index}", transB=1))
            current = output
            if index == last:
                break
            hidden = f"{tag}hidden{index}"
            name = f"{tag}{activation}{index}"
            if activation in ("relu", "tanh", "sigmoid"):
                op = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid"}[activation]
                nodes.append(helper.make_node(op, [current], [hidden], name=name))
            elif activation == "silu":
                nodes.append(helper.make_node("Sigmoid", [current], [f"{tag}gate{index}"], name=f"{tag}sigmoid{index}"))
                nodes.append(helper.make_node("Mul", [current, f"{tag}gate{index}"], [hidden], name=name))
            elif activation == "gelu":
                if not any(init.name == "inv_sqrt2" for init in initializers):
                    constant("inv_sqrt2", 1.0 / math.sqrt(2.0))
                    constant("one", 1.0)
                    constant("half", 0.5)
                nodes.extend([
                    helper.make_node("Mul", [current, "inv_sqrt2"], [f"{tag}scaled{index}"], name=f"{name}_scale"),
                    helper.make_node("Erf", [f"{tag}scaled{index}"], [f"{tag}erf{index}"], name=f"{name}_erf"),
                    helper.make_node("Add", [f"{tag}erf{index}", "one"], [f"{tag}erf_plus_one{index}"],
                                     name=f"{name}_add"),
                    helper.make_node("Mul", [current, f"{tag}erf_plus_one{index}"], [f"{tag}gelu_twice{index}"],
                                     name=f"{name}_mul"),
                    helper.make_node("Mul", [f"{tag}gelu_twice{index}", "half"], [hidden], name=f"{name}_half"),
                ])
            else:
                raise ExportError(f"ONNX export: activation {activation!r} is not implemented")
            current = hidden

    if net.race_layers is None:
        network("layers", weights, biases, "logits")
    else:
        network("layers", weights, biases, "contact_logits")
        network("race_layers", *network_arrays(net, "race_layers"), "race_logits")
        nodes.extend(_race_nodes(helper, numpy_helper, initializers, net.num_features))
        nodes.append(helper.make_node("Where", ["race_column", "race_logits", "contact_logits"], ["logits"],
                                      name="phase"))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1))
    nodes.append(helper.make_node("MatMul", ["probabilities", "outcome_points"], ["equity"], name="equity"))

    classes = len(metadata["outcome_names"])
    inputs = [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", net.num_features],
                                            doc_string=f"tapa-td v{net.encoding_version} encoding of each position, "
                                                       "from its side to move")]
    outputs = [
        helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", classes],
                                      doc_string=metadata["outputs"]["probabilities"]),
        helper.make_tensor_value_info("equity", TensorProto.FLOAT, ["batch"],
                                      doc_string=metadata["outputs"]["equity"]),
    ]
    graph = helper.make_graph(nodes, f"tapa_ai_{metadata['variant']}_evaluator", inputs, outputs, initializers,
                              doc_string=f"tapa_ai evaluator for {metadata['variant']}: outcome classes "
                                         f"{metadata['outcome_names']}")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)],
                              producer_name="tapa_ai", producer_version=__version__,
                              doc_string="tapa_ai position evaluator; see docs/export.md")
    model.ir_version = IR_VERSION
    helper.set_model_props(model, metadata_props(metadata))
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as error:  # onnx raises several checker/inference error types
        raise ExportError(f"ONNX export produced an invalid model: {error}") from None
    return model


def _race_nodes(helper, numpy_helper, initializers: list, width: int) -> list:
    """Nodes computing ``race_column`` (batch, 1) bool from ``features``: the rows with no contact left.

    As ``tapa_ai.net.model.race_rows``: each side's rearmost checker is its highest own point whose
    ``free1`` or ``pinned`` column is set (25 with its ``bar`` scalar above 0, 0 with none); a race where
    the two add up to 25 or less, or, for the rows of a running game (``rules.parallel`` above 0, an input
    of encoding version 4, ``width`` 318), where both are 12 or less.
    """
    def array(name: str, value) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    array("race.points_start", np.array([0], dtype=np.int64))
    array("race.points_stop", np.array([240], dtype=np.int64))
    array("race.points_axis", np.array([1], dtype=np.int64))
    array("race.points_shape", np.array([-1, 2, 24, 5], dtype=np.int64))
    array("race.unit_free1", np.array(0, dtype=np.int64))
    array("race.unit_pinned", np.array(4, dtype=np.int64))
    array("race.zero", np.array(0.0, dtype=np.float32))
    array("race.numbers", np.arange(1, 25, dtype=np.int64))
    array("race.none", np.array(0, dtype=np.int64))
    array("race.bar_columns", np.array([246, 254], dtype=np.int64))
    array("race.on_bar", np.array(25, dtype=np.int64))
    array("race.sum_axis", np.array([1], dtype=np.int64))
    array("race.column_axis", np.array([1], dtype=np.int64))
    node = helper.make_node
    running = []
    opposite_row = "race_row"
    if width >= RUNNING_COLUMNS.stop:
        opposite_row = "race_row_opposite"
        array("race.parallel_column", np.array(PARALLEL_COLUMN, dtype=np.int64))
        array("race.passed_limit", np.array(12, dtype=np.int64))
        running = [
            node("ReduceMax", ["race_rearmost"], ["race_rearmost_both"], name="race_rearmost_both", axes=[1],
                 keepdims=0),
            node("LessOrEqual", ["race_rearmost_both", "race.passed_limit"], ["race_row_parallel"],
                 name="race_row_parallel"),
            node("Gather", ["features", "race.parallel_column"], ["race_parallel_flag"], name="race_parallel_flag",
                 axis=1),
            node("Greater", ["race_parallel_flag", "race.zero"], ["race_parallel"], name="race_parallel"),
            # race_row = parallel ? race_row_parallel : race_row_opposite (onnxruntime has no Where on bool).
            node("And", ["race_parallel", "race_row_parallel"], ["race_row_if_parallel"], name="race_row_if_parallel"),
            node("Not", ["race_parallel"], ["race_opposite"], name="race_opposite"),
            node("And", ["race_opposite", "race_row_opposite"], ["race_row_if_opposite"], name="race_row_if_opposite"),
            node("Or", ["race_row_if_parallel", "race_row_if_opposite"], ["race_row"], name="race_row_by_paths"),
        ]
    return [
        node("Slice", ["features", "race.points_start", "race.points_stop", "race.points_axis"], ["race_points_flat"],
             name="race_points"),
        node("Reshape", ["race_points_flat", "race.points_shape"], ["race_points"], name="race_points_shape"),
        node("Gather", ["race_points", "race.unit_free1"], ["race_free1"], name="race_free1", axis=3),
        node("Gather", ["race_points", "race.unit_pinned"], ["race_pinned"], name="race_pinned", axis=3),
        node("Greater", ["race_free1", "race.zero"], ["race_has_free"], name="race_has_free"),
        node("Greater", ["race_pinned", "race.zero"], ["race_has_pinned"], name="race_has_pinned"),
        node("Or", ["race_has_free", "race_has_pinned"], ["race_occupied"], name="race_occupied"),
        node("Where", ["race_occupied", "race.numbers", "race.none"], ["race_numbers"], name="race_numbers"),
        node("ReduceMax", ["race_numbers"], ["race_rearmost_board"], name="race_rearmost_board", axes=[2],
             keepdims=0),
        node("Gather", ["features", "race.bar_columns"], ["race_bar"], name="race_bar", axis=1),
        node("Greater", ["race_bar", "race.zero"], ["race_on_bar"], name="race_on_bar"),
        node("Where", ["race_on_bar", "race.on_bar", "race_rearmost_board"], ["race_rearmost"], name="race_rearmost"),
        node("ReduceSum", ["race_rearmost", "race.sum_axis"], ["race_sum"], name="race_sum", keepdims=0),
        node("LessOrEqual", ["race_sum", "race.on_bar"], [opposite_row], name=opposite_row),
        *running,
        node("Unsqueeze", ["race_row", "race.column_axis"], ["race_column"], name="race_column"),
    ]


def onnx_model_bytes(net: EvaluatorNet, metadata: dict[str, Any]) -> bytes:
    """The serialized ONNX model of ``net``."""
    return onnx_model(net, metadata).SerializeToString()
