"""``tapa-ai tournament A B C ...``: a round robin of several bots, Elo ratings with 95% CIs (docs/arena.md)."""

from __future__ import annotations

import argparse
import os

from .command_options import arena_options, arena_rules, bots_help, check_arena_options


def add_parser(subparsers) -> None:
    """The ``tournament`` command on ``subparsers`` (``tapa-ai``'s)."""
    tournament = subparsers.add_parser("tournament", help="round robin of several bots: Elo ratings with 95%% CIs")
    tournament.add_argument("bots", nargs="+", metavar="BOT", help=bots_help())
    arena_options(tournament, games=400)
    tournament.add_argument("--out", metavar="DIR", help="write tournament.json, tournament.md and tournament.png "
                            "here")
    tournament.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    from .tournament import run_tournament

    check_arena_options(args)
    connected = False
    try:
        rules = arena_rules(args.bots, args.variant)
        if args.ray_address:  # once for all the pairings
            from ..ray_cluster import connect

            connected = connect(args.ray_address, num_cpus=os.cpu_count())
        result = run_tournament(args.bots, rules, args.games, seed=args.seed, workers=args.workers,
                                progress=not args.quiet, ray_address=args.ray_address)
        if args.out:
            result.write(args.out)
    finally:
        if connected:
            from ..ray_cluster import disconnect

            disconnect(connected)
    print(result.markdown())
    if args.out:
        print(f"\nwritten: {args.out}/tournament.json, tournament.md, tournament.png")
    return 0
