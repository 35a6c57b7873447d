"""Export a trained evaluator for other programs: ONNX, TorchScript, or numpy ``.npz`` weights.

Every format computes the same function of the ``tapa-td`` input
(``docs/encoding.md``), from the side to move::

    features (batch, 259) float32  ->  probabilities (batch, K) float32,  equity (batch,) float32

with ``K`` outcome classes (``tapa_ai.net.model.outcome_names``) and the equity
``probabilities @ outcome_points``. Each file carries the same metadata
(variant, rule options, encoding, outcome classes and their points, training
games, versions); ``docs/export.md`` lists the keys, shapes and the ONNX opset.

::

    from tapa_ai.export import export_checkpoint
    export_checkpoint("checkpoints/tapa.pt", "onnx", "tapa.onnx")      # or "torchscript", "npz"

or ``tapa-ai export checkpoints/tapa.pt --format onnx --out tapa.onnx``.

:mod:`tapa_ai.export.numpy_model` reads ``.npz`` files and encodes JSON
positions with numpy alone (no torch, no other ``tapa_ai`` module), and can be
copied as a single file. This package's ``__init__`` imports no torch either:
the exporters are loaded on first use.
"""

from __future__ import annotations

from typing import Any

from ..errors import TapaError

__all__ = [
    "FORMATS", "SUFFIXES", "ExportError", "export_checkpoint", "export_network", "export_metadata",
    "load_npz_network", "ONNX_OPSET",
]

FORMATS = ("onnx", "torchscript", "npz")
"""Export formats, as ``tapa-ai export --format`` names them."""

SUFFIXES = {"onnx": ".onnx", "torchscript": ".pt", "npz": ".npz"}
"""The usual file suffix of each format (not enforced)."""

ONNX_OPSET = 17
"""ONNX operator set of exported models (``onnx`` 1.12+, onnxruntime 1.12+)."""


class ExportError(TapaError, ValueError):
    """An export that cannot be done: unknown format, bad checkpoint, missing exporter package, unwritable output."""


_LAZY = {
    "export_checkpoint": "core",
    "export_network": "core",
    "export_metadata": "core",
    "load_npz_network": "core",
}


def __getattr__(name: str) -> Any:
    # The exporters need torch; importing them lazily keeps ``tapa_ai.export.numpy_model`` torch-free.
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
