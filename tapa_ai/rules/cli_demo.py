"""``tapa-ai demo``: random self-play games of each variant, summarised (game length, legal moves, speed)."""

from __future__ import annotations

import argparse
import json

from ..errors import UsageError
from .options import VARIANTS


def add_parser(subparsers) -> None:
    """The ``demo`` command on ``subparsers`` (``tapa-ai``'s)."""
    demo = subparsers.add_parser("demo", help="play random self-play games and summarise them")
    demo.add_argument("--variant", default="all", choices=["all", *VARIANTS], help="rule set (default: all of them)")
    demo.add_argument("--games", type=int, default=200, help="games per variant (default 200)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--json", action="store_true", help="print the summary as JSON")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    from .demo import random_play

    if args.games < 1:
        raise UsageError("--games must be at least 1")
    variants = list(VARIANTS) if args.variant == "all" else [args.variant]
    rows = []
    for variant in variants:
        stats = random_play(variant, args.games, args.seed, progress=not args.quiet)
        rows.append(stats.summary())
    if args.json:
        print(json.dumps(rows if len(rows) > 1 else rows[0]))
        return 0
    for row in rows:
        print(f"\n{row['variant']}: {row['games']} random games, seed {args.seed}")
        print(f"  turns per game           {row['turns_per_game']}")
        print(f"  legal moves per position {row['legal_moves_per_position']}")
        print(f"  passed turns             {row['pass_rate']:.2%}")
        print(f"  reference generator      {row['reference_positions_per_s']} positions/s")
        print(f"  results                  {row['result_kinds']}")
        print(f"  wins                     {row['winners']}  points X {row['points_X']} O {row['points_O']}")
    return 0
