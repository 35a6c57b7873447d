"""The ``tapa-ai`` command line: thin wrappers over the package."""

from __future__ import annotations

import argparse
import json
import sys

from .rules.options import VARIANTS


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import random_play

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


def _cmd_engine(args: argparse.Namespace) -> int:
    from .engine.protocol import RequestError, serve

    try:
        return serve(generator=args.generator)
    except RequestError as error:
        print(f"tapa-ai engine: {error}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tapa-ai", description="Self-play AI toolkit for Tapa, Plakoto and backgammon.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="play random self-play games and summarise them (the default job)")
    demo.add_argument("--variant", default="all", choices=["all", *VARIANTS], help="rule set (default: all three)")
    demo.add_argument("--games", type=int, default=200, help="games per variant (default 200)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--json", action="store_true", help="print the summary as JSON")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=_cmd_demo)

    engine = sub.add_parser("engine", help="JSON-lines engine protocol on stdin/stdout (docs/protocol.md)")
    engine.add_argument("--generator", choices=["reference", "vectorized"], default=None,
                        help="default move generator (default: vectorized when available)")
    engine.set_defaults(func=_cmd_engine)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["demo", *(argv or [])])
    if getattr(args, "games", 1) is not None and getattr(args, "games", 1) < 1:
        parser.error("--games must be at least 1")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
