"""Options shared by the ``tapa-ai`` commands that play games: bot specs, --variant/--games/--seed, workers.

Used by the command modules (``cli_match``, ``cli_tournament``, ``cli_rollout``, ``cli_benchmark``, and
``tapa_ai/play/cli_play.py`` for the bot help); it imports nothing heavy until a command runs.
"""

from __future__ import annotations

import argparse
import os
from typing import Optional

from ..rules.options import VARIANTS, RuleOptions


def bots_help() -> str:
    """The help of a bot spec argument: the valid forms."""
    from ..bots.spec import SPEC_FORMS

    return "bot spec: " + ", ".join(SPEC_FORMS)


def worker_options(parser: argparse.ArgumentParser) -> None:
    """--workers, --ray-address and --quiet of the commands that play games over processes."""
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="processes playing games (default: the CPU count); results do not depend on it")
    parser.add_argument("--ray-address", metavar="ADDRESS", help="play on a Ray cluster instead of --workers "
                        "processes: auto, host:port, or local; same results (needs pip install 'tapa-ai[ray]')")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def arena_options(parser: argparse.ArgumentParser, games: int) -> None:
    """--variant, --games, --seed and the worker options of ``match`` and ``tournament``."""
    parser.add_argument("--variant", choices=list(VARIANTS), help="rule set (default: the net's, else tapa)")
    parser.add_argument("--games", type=int, default=games, help=f"games per pairing, played in duplicate pairs "
                        f"(default {games}; rounded up to even)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the dice and of every random choice (default 1)")
    worker_options(parser)


def check_arena_options(args: argparse.Namespace) -> None:
    """:class:`~tapa_ai.errors.UsageError` for --games or --workers out of range."""
    from ..errors import UsageError

    if args.games < 2:
        raise UsageError("--games must be at least 2 (one duplicate pair)")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")


def arena_rules(specs: list[str], variant: Optional[str]) -> RuleOptions:
    """The rule set of an arena command: ``--variant``, else the first model file's (``net:``, ``onnx:``), else
    tapa.

    A checkpoint's rules are read by :func:`~tapa_ai.bots.spec.model_rules`, which loads the whole checkpoint
    (:func:`~tapa_ai.net.checkpoint.load_checkpoint`, every field checked: about 15 ms for a shipped model); the
    checkpoint module has no reader of its ``rule_options`` alone yet."""
    from ..bots.spec import model_rules
    from ..rules.options import variant_rules

    if variant:
        return variant_rules(variant)
    for spec in specs:
        rules = model_rules(spec)
        if rules is not None:
            return rules
    return variant_rules("tapa")
