"""``tapa-ai engine``: the JSON-lines engine protocol on stdin/stdout (docs/protocol.md)."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    """The ``engine`` command on ``subparsers`` (``tapa-ai``'s)."""
    engine = subparsers.add_parser("engine", help="JSON-lines engine protocol on stdin/stdout (docs/protocol.md)")
    engine.add_argument("--generator", choices=["reference", "vectorized"], default=None,
                        help="default move generator (default: vectorized when available)")
    engine.add_argument("--bot", metavar="SPEC", help="the model of encode/evaluate/best_move/hint: net:PATH or "
                        "net:PATH@Nply, e.g. net:tapa@1ply, the shipped model (its checkpoint fixes the variant)")
    engine.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    from .protocol import serve

    return serve(generator=args.generator, bot=args.bot)
