"""``tapa-ai benchmark build|score|reroll|study``: their options and the command (docs/benchmark.md).

:func:`add_parser` adds the ``benchmark`` command to ``tapa-ai``'s parser; :func:`run` runs it: a bad input (a
set of another variant than a bot's model, a truncated or damaged file, an unknown bot spec, an empty set,
other settings on an existing set) is a :class:`~tapa_ai.errors.TapaError`, one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ...errors import TapaError
from ..command_options import bots_help, worker_options


def run(args: argparse.Namespace) -> int:
    """Run the action; the exit code (130 for Ctrl-C)."""
    from .file import BenchmarkError

    try:
        if args.action == "build":
            from .build import build_benchmark
            from .sample import parse_weights

            result = build_benchmark(
                args.variant, args.positions, args.out, seed=args.seed, games=args.games, candidates=args.candidates,
                player=args.player, sources=parse_weights(args.source, "--source") if args.source else None,
                mix=dict(parse_weights(args.mix, "--mix")) if args.mix else None, ranker=args.ranker,
                references=args.reference, bot=args.bot, evaluator=args.evaluator, rotate=args.rotate,
                luck=args.luck, truncate=args.truncate, bearoff=args.bearoff, workers=args.workers,
                ray_address=args.ray_address, progress=not args.quiet)
            print(result.report())
            return 0
        if args.action == "study":
            from .study import report, study_command

            data = study_command(args.score, args.duel, args.known, args.out)
            print(json.dumps(data) if args.json else report(data))
            return 0
        if args.action == "reroll":
            from .reroll import reroll_benchmark

            result = reroll_benchmark(
                args.set, args.out, args.bot, evaluator=args.evaluator, every=args.every, games=args.games,
                rotate=args.rotate, luck=args.luck, truncate=args.truncate, bearoff=args.bearoff,
                workers=args.workers, ray_address=args.ray_address, progress=not args.quiet)
            print(result.report())
            return 0
        if args.against:
            from .reroll import compare_rollouts

            if args.every != 1 or args.no_rollout:
                raise BenchmarkError("--against takes the positions the reroll took and rates every move on both "
                                     "sets: give it without --every and --no-rollout")
            result = compare_rollouts(args.set, args.against, args.bots, blunder_mp=args.blunder,
                                      replicates=args.bootstrap, seed=args.seed, workers=args.workers,
                                      ray_address=args.ray_address, progress=not args.quiet)
        else:
            from .score import score_bots

            result = score_bots(args.set, args.bots, blunder_mp=args.blunder, rollout=not args.no_rollout,
                                replicates=args.bootstrap, seed=args.seed, workers=args.workers,
                                ray_address=args.ray_address, progress=not args.quiet, every=args.every)
        data = result.to_dict()
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    except OSError as error:
        if isinstance(error, TapaError):
            raise
        raise BenchmarkError(str(error)) from None
    except KeyboardInterrupt:
        again = " (every finished position is kept: run the same command to go on)" \
            if args.action in ("build", "reroll") else ""
        print(f"tapa-ai benchmark {args.action}: stopped{again}", file=sys.stderr)
        return 130
    print(json.dumps(data) if args.json else result.report())
    return 0


def add_parser(subparsers) -> None:
    """The ``benchmark`` command with its actions on ``subparsers`` (``tapa-ai``'s)."""
    from ...rules.options import VARIANTS
    from .file import shipped_sets

    benchmark = subparsers.add_parser("benchmark", help="benchmark sets of positions rated by rollouts: build one, score "
                               "bots on it (equity lost a move; docs/benchmark.md)")
    actions = benchmark.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = actions.add_parser("build", help="draw positions from games and roll out their candidate moves")
    build.add_argument("--variant", required=True, choices=list(VARIANTS), help="rule set")
    build.add_argument("--positions", type=int, required=True, metavar="N", help="positions in the set")
    build.add_argument("--out", required=True, metavar="FILE", help="the set (JSON lines); run the same command "
                       "again to resume a stopped build")
    build.add_argument("--seed", type=int, default=1, help="seed of the sampling games and the rollouts (default 1)")
    build.add_argument("--games", type=int, default=1296, help="rollout games per candidate move (default 1296)")
    build.add_argument("--candidates", type=int, default=5, metavar="K",
                       help="the ranker's K best moves are candidates (default 5), beside the references' moves")
    build.add_argument("--player", metavar="SPEC", help="the bot whose games give the positions (default "
                       "net:<variant>)")
    build.add_argument("--source", action="append", metavar="OPPONENT=WEIGHT", help="an opponent of the player's "
                       "sampling games and its share of the positions, self for itself (repeatable; default: "
                       "self, heuristic, an older generation, runner, random, gnubg:0 for backgammon)")
    build.add_argument("--mix", action="append", metavar="PHASE=SHARE", help="target share of a phase: contact, "
                       "pins, mother, race, bearoff (repeatable; default per variant)")
    build.add_argument("--ranker", metavar="SPEC", help="the net: search whose best moves are candidates "
                       "(default net:<variant>@2ply)")
    build.add_argument("--reference", action="append", metavar="SPEC", help="a bot whose move is a candidate "
                       "(repeatable; none for no references; default: the shipped net at 0 and 1 ply, its kept "
                       "generations, heuristic, and for backgammon pubeval and gnubg:0/1)")
    build.add_argument("--bot", metavar="SPEC", help="the rollout bot (default net:<variant>, 0-ply)")
    build.add_argument("--evaluator", metavar="SPEC", help="net: spec valuing luck and truncated games (default: "
                       "the bot when it is a net)")
    build.add_argument("--rotate", type=int, choices=[0, 1, 2], default=1,
                       help="balance the first 0, 1 or 2 rolls over every 36 games (default 1)")
    build.add_argument("--luck", action="store_true", help="luck-adjusted rollouts (docs/rollout.md)")
    build.add_argument("--truncate", type=int, default=0, metavar="PLIES",
                       help="stop rollout games after PLIES plies (default 0: play to the end)")
    build.add_argument("--bearoff", action="store_true", help="stop rollout games at the bear-off database")
    worker_options(build)
    build.set_defaults(func=run)
    score = actions.add_parser("score", help="equity each bot loses a move on a set, by phase, with bootstrap CIs "
                               "and paired differences")
    score.add_argument("bots", nargs="+", metavar="BOT", help=bots_help())
    score.add_argument("--set", required=True, metavar="FILE",
                       help="a set written by tapa-ai benchmark build, or a shipped set by name "
                       f"({', '.join(shipped_sets())})")
    score.add_argument("--blunder", type=float, default=80.0, metavar="MP",
                       help="a move losing more than MP millipoints is a blunder (default 80)")
    score.add_argument("--no-rollout", action="store_true", help="leave moves the set lacks unrated (default: roll "
                       "them out with the set's settings and keep them in the file)")
    score.add_argument("--bootstrap", type=int, default=2000, metavar="B", help="bootstrap resamples (default 2000)")
    score.add_argument("--seed", type=int, default=1, help="seed of the bots' random choices and the bootstrap "
                       "(default 1)")
    score.add_argument("--every", type=int, default=1, metavar="K", help="score every K-th position only (those "
                       "a reroll --every K took; default 1: all)")
    score.add_argument("--against", metavar="SET", help="--set is a reroll of SET: also rate the same moves by SET's "
                       "rollouts, and show how far the reroll's rollouts move each pair's difference")
    score.add_argument("--json", action="store_true", help="print the result as one JSON object")
    score.add_argument("--out", metavar="JSON", help="also write the result here")
    worker_options(score)
    score.set_defaults(func=run)
    reroll = actions.add_parser("reroll", help="roll a set's candidate moves out again with another rollout bot "
                                "or settings, into a set of the same positions")
    reroll.add_argument("--set", required=True, metavar="FILE", help="the set whose candidates to roll out: a "
                        f"file or a shipped set's name ({', '.join(shipped_sets())})")
    reroll.add_argument("--bot", required=True, metavar="SPEC", help="the new rollout bot (e.g. gnubg:0, "
                        "net:<variant>@1ply)")
    reroll.add_argument("--out", required=True, metavar="FILE", help="the new set (JSON lines); run the same "
                        "command again to resume a stopped reroll")
    reroll.add_argument("--every", type=int, default=1, metavar="K", help="every K-th position of the set "
                        "(default 1: all)")
    reroll.add_argument("--evaluator", metavar="SPEC", help="net: spec valuing luck and truncated games (default: "
                        "the bot when it is a net)")
    reroll.add_argument("--games", type=int, metavar="N", help="rollout games per candidate (default: the set's)")
    reroll.add_argument("--rotate", type=int, choices=[0, 1, 2], help="balance the first 0, 1 or 2 rolls "
                        "(default: the set's)")
    reroll.add_argument("--truncate", type=int, metavar="PLIES", help="stop rollout games after PLIES plies "
                        "(default: the set's)")
    reroll.add_argument("--luck", action="store_const", const=True, help="luck-adjusted rollouts (default: the "
                        "set's)")
    reroll.add_argument("--bearoff", action="store_const", const=True, help="stop rollout games at the bear-off "
                        "database (default: the set's)")
    worker_options(reroll)
    reroll.set_defaults(func=run)
    study = actions.add_parser("study", help="does a set predict match play: a score's paired differences against "
                               "duels of the same bots")
    study.add_argument("score", metavar="SCORE", help="the JSON of tapa-ai benchmark score --out")
    study.add_argument("--duel", action="append", default=[], metavar="MATCH",
                       help="a tapa-ai match --out record of two scored bots (repeatable)")
    study.add_argument("--known", action="append", nargs=5, default=[], metavar=("A", "B", "PPG", "LOW", "HIGH"),
                       help="a duel stated by hand: A's points per game against B and its 95%% CI (repeatable)")
    study.add_argument("--json", action="store_true", help="print the result as one JSON object")
    study.add_argument("--out", metavar="JSON", help="also write the result here")
    study.set_defaults(func=run)
