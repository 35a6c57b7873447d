"""``tapa-ai match A B``: two bots over many games in duplicate pairs, money play with the cube, matches to N
points, or a rotation's matches to N points (``--tavli N``, ``--tabla N``, ``--rotation GAMES --length N``)
(docs/arena.md, docs/cube.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Optional

from .command_options import arena_options, arena_rules, bots_help, check_arena_options


def add_parser(subparsers) -> None:
    """The ``match`` command on ``subparsers`` (``tapa-ai``'s)."""
    match = subparsers.add_parser("match", help="two bots over many games in duplicate pairs (points per game, "
                                  "95%% CI)")
    match.add_argument("bot_a", metavar="A", help=bots_help())
    match.add_argument("bot_b", metavar="B", help="the opponent (same forms)")
    arena_options(match, games=1000)
    match.add_argument("--cube", action="store_true", help="money play with the doubling cube (docs/cube.md); "
                       "points per game count the cube")
    match.add_argument("--match-length", type=int, default=0, metavar="N",
                       help="play matches to N points with the cube and Crawford rule (match-win %%, 95%% CI)")
    match.add_argument("--tavli", type=int, default=None, metavar="N",
                       help="play Tavli matches to N points (docs/rules.md 9: portes, plakoto, fevga in turn, no cube); "
                       "A and B are players of the rotation: net:tavli, tavli:PORTES,PLAKOTO,FEVGA or a bot that "
                       "plays all three (docs/arena.md)")
    match.add_argument("--tabla", type=int, default=None, metavar="N",
                       help="play Tabla matches to N points (docs/rules.md 10.4: backgammon, gulbara, tapa in turn, no "
                       "cube); players net:tabla, tabla:BACKGAMMON,GULBARA,TAPA or a bot that plays all three")
    match.add_argument("--rotation", metavar="GAMES",
                       help="play matches of any rotation to --length N points: a preset (tavli, tabla) or the games "
                       "comma-separated (backgammon,gulbara,tapa); players net:rotation, rotation:SPEC1,SPEC2,... "
                       "or a bot that plays every game")
    match.add_argument("--length", type=int, default=None, metavar="N", help="the points of a --rotation match")
    match.add_argument("--matches", type=int, default=None, metavar="M",
                       help="matches to play with --match-length, --tavli, --tabla or --rotation, in duplicate pairs "
                       "(default 1000)")
    match.add_argument("--out", metavar="JSON", help="write the full record here (and a CSV of the games)")
    match.add_argument("--csv", metavar="CSV", help="where the CSV goes (default: --out with .csv)")
    match.add_argument("--json", action="store_true", help="print the record as one JSON line")
    match.add_argument("--partial", metavar="DIR", help="save every finished chunk of games here and resume from "
                       "it: a killed match loses only the chunks in flight; more --games reuses the first ones")
    match.add_argument("--record-games", metavar="FILE", help="also write the moves of the games here (a "
                       "tapa-ai/games record that tapa-ai analyse reads; FILE.sgf or FILE.mat: GNU Backgammon's "
                       "SGF or the .mat text, docs/match-files.md); single games only")
    match.add_argument("--record-count", type=int, default=None, metavar="N",
                       help="with --record-games: record the first N games only (default: all)")
    match.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    from ..bots.base import BotError
    from .match import run_cube_match, run_match

    check_arena_options(args)
    if any(value is not None for value in (args.tavli, args.tabla, args.rotation, args.length)):
        return run_rotation(args)
    rules = arena_rules([args.bot_a, args.bot_b], args.variant)
    if args.matches is not None and not args.match_length:
        raise BotError("--matches needs --match-length N, --tavli N, --tabla N or --rotation GAMES --length N (the "
                       "points to win each match)")
    if args.partial and (args.match_length or args.cube):
        raise BotError("--partial keeps the chunks of single games (no --cube, no --match-length)")
    if args.match_length and args.cube:
        raise BotError("--cube is money play with the cube; matches (--match-length) always use the cube "
                       "where the rules have one: give one or the other")
    if args.record_games and (args.match_length or args.cube):
        raise BotError("--record-games records single games (no --cube, no --match-length)")
    if args.record_count is not None and not args.record_games:
        raise BotError("--record-count needs --record-games FILE (where the games go)")
    if args.match_length:
        result = run_cube_match(args.bot_a, args.bot_b, rules, args.matches or 1000, seed=args.seed,
                                workers=args.workers, match_length=args.match_length, progress=not args.quiet,
                                ray_address=args.ray_address)
    elif args.cube:
        result = run_cube_match(args.bot_a, args.bot_b, rules, args.games, seed=args.seed, workers=args.workers,
                                progress=not args.quiet, ray_address=args.ray_address)
    else:
        record = (args.games if args.record_count is None else max(args.record_count, 0)) if args.record_games \
            else 0
        result = run_match(args.bot_a, args.bot_b, rules, args.games, seed=args.seed, workers=args.workers,
                           progress=not args.quiet, ray_address=args.ray_address, partial=args.partial,
                           record_games=record)
    recorded = result.write_games(args.record_games, rules) if args.record_games else 0
    return _report(args, result, f"  recorded               {recorded} games in {args.record_games} (tapa-ai "
                                 "analyse reads it)" if args.record_games else None)


def _report(args: argparse.Namespace, result, recorded: Optional[str] = None) -> int:
    """Write ``result`` to ``--out`` and print it (its JSON with ``--json``, else its report, the files written
    and ``recorded``); the exit code."""
    if args.out:
        result.write(args.out, args.csv)
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(result.report())
        if args.out:
            print(f"  written                {args.out} and {args.csv or Path(args.out).with_suffix('.csv')}")
        if recorded:
            print(recorded)
    return 0


def rotation_and_length(args: argparse.Namespace, error: type[Exception]) -> tuple:
    """The (rotation, length, option) of ``--tavli N``, ``--tabla N`` or ``--rotation GAMES --length N`` (one of
    them, each None when not given: 0 or an empty rotation is given, and refused; ``option`` names it for
    messages); ``error``, one line, for anything else. Shared by ``tapa-ai play``."""
    from ..cube.rotation_met import check_match_length
    from ..quoting import quoted
    from ..rules.rotations import ROTATIONS, RotationError, parse_rotation

    given = [name for name, value in (("--tavli", args.tavli), ("--tabla", args.tabla),
                                      ("--rotation", args.rotation)) if value is not None]
    if len(given) > 1:
        raise error(f"{' and '.join(given)}: give one rotation")
    if args.rotation is not None:
        if args.length is None:
            raise error(f"--rotation {args.rotation}: give the match's points with --length N")
        shown = args.rotation if args.rotation.strip() else quoted(args.rotation)
        try:
            rotation = parse_rotation(args.rotation)
        except RotationError as problem:
            raise error(f"--rotation {shown}: {problem}") from None
        length, option = args.length, f"--rotation {args.rotation} --length {args.length}"
    else:
        if args.length is not None:
            raise error(f"--length {args.length} is the points of a --rotation match (--tavli N and --tabla N take "
                        "theirs)")
        name, length = ("tavli", args.tavli) if args.tavli is not None else ("tabla", args.tabla)
        rotation, option = ROTATIONS[name], f"--{name} {length}"
    check_match_length(length, option, error)
    return rotation, length, option


def run_rotation(args: argparse.Namespace) -> int:
    """``--tavli N``, ``--tabla N``, ``--rotation GAMES --length N``: a rotation's matches to N points in duplicate
    pairs; the exit code."""
    from ..bots.base import BotError
    from .rotation import run_rotation_match

    rotation, length, option = rotation_and_length(args, BotError)
    others = [name for name, given in (("--variant", args.variant), ("--match-length", args.match_length),
                                        ("--cube", args.cube), ("--partial", args.partial),
                                        ("--record-games", args.record_games)) if given]
    if others:
        raise BotError(f"{option.split()[0]} plays its own rotation of rule sets without a cube; it takes no "
                       f"{', '.join(others)}")
    if args.matches is not None and args.matches < 2:
        raise BotError(f"--matches {args.matches}: play at least one pair (2)")
    result = run_rotation_match(args.bot_a, args.bot_b, rotation, length, args.matches or 1000, seed=args.seed,
                                workers=args.workers, progress=not args.quiet, ray_address=args.ray_address)
    return _report(args, result)
