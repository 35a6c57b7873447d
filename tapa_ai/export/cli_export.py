"""``tapa-ai export CHECKPOINT --format F --out PATH``: a trained network for other programs (docs/export.md)."""

from __future__ import annotations

import argparse

from ..rules.options import shipped_models


def add_parser(subparsers) -> None:
    """The ``export`` command on ``subparsers`` (``tapa-ai``'s)."""
    export = subparsers.add_parser("export", help="write a checkpoint's network as ONNX, TorchScript or npz "
                                   "(docs/export.md)")
    export.add_argument("checkpoint", metavar="CHECKPOINT", help="a training checkpoint, or a shipped model's "
                        f"name: {', '.join(shipped_models())}")
    export.add_argument("--format", required=True, metavar="FORMAT", help="onnx, torchscript or npz")
    export.add_argument("--out", required=True, metavar="PATH", help="the file to write (parent folders are made)")
    export.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    from . import FORMATS, ExportError, export_checkpoint

    if args.format not in FORMATS:
        raise ExportError(f"--format {args.format!r}: unknown; choose one of {', '.join(FORMATS)}")
    path = export_checkpoint(args.checkpoint, args.format, args.out)
    print(f"wrote {path} ({args.format}, {path.stat().st_size:,} bytes; docs/export.md)")
    return 0
