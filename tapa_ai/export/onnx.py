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

    features [batch, 259] -> (Gemm -> activation) x layers -> Gemm -> logits [batch, K]
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

    current = "features"
    last = len(weights) - 1
    for index, (weight, bias) in enumerate(zip(weights, biases)):
        initializers.append(numpy_helper.from_array(weight, f"layers.{index}.weight"))
        initializers.append(numpy_helper.from_array(bias, f"layers.{index}.bias"))
        output = "logits" if index == last else f"linear{index}"
        nodes.append(helper.make_node("Gemm", [current, f"layers.{index}.weight", f"layers.{index}.bias"], [output],
                                      name=f"layer{index}", transB=1))
        current = output
        if index == last:
            break
        hidden = f"hidden{index}"
        if activation in ("relu", "tanh", "sigmoid"):
            op = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid"}[activation]
            nodes.append(helper.make_node(op, [current], [hidden], name=f"{activation}{index}"))
        elif activation == "silu":
            nodes.append(helper.make_node("Sigmoid", [current], [f"gate{index}"], name=f"sigmoid{index}"))
            nodes.append(helper.make_node("Mul", [current, f"gate{index}"], [hidden], name=f"silu{index}"))
        elif activation == "gelu":
            if index == 0:
                constant("inv_sqrt2", 1.0 / math.sqrt(2.0))
                constant("one", 1.0)
                constant("half", 0.5)
            nodes += [
                helper.make_node("Mul", [current, "inv_sqrt2"], [f"scaled{index}"], name=f"gelu{index}_scale"),
                helper.make_node("Erf", [f"scaled{index}"], [f"erf{index}"], name=f"gelu{index}_erf"),
                helper.make_node("Add", [f"erf{index}", "one"], [f"erf_plus_one{index}"], name=f"gelu{index}_add"),
                helper.make_node("Mul", [current, f"erf_plus_one{index}"], [f"gelu_twice{index}"],
                                 name=f"gelu{index}_mul"),
                helper.make_node("Mul", [f"gelu_twice{index}", "half"], [hidden], name=f"gelu{index}_half"),
            ]
        else:
            raise ExportError(f"ONNX export: activation {activation!r} is not implemented")
        current = hidden
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


def onnx_model_bytes(net: EvaluatorNet, metadata: dict[str, Any]) -> bytes:
    """The serialized ONNX model of ``net``."""
    return onnx_model(net, metadata).SerializeToString()
