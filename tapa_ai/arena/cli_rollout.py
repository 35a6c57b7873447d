"""``tapa-ai rollout --position P``: roll out a position, or the candidate moves of a roll on the same dice
(docs/rollout.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .command_options import bots_help, worker_options


def add_parser(subparsers) -> None:
    """The ``rollout`` command on ``subparsers`` (``tapa-ai``'s)."""
    rollout = subparsers.add_parser("rollout", help="roll out a position, or the candidate moves of a roll on the "
                                    "same dice (docs/rollout.md)")
    rollout.add_argument("--position", required=True, metavar="POSITION",
                         help="JSON position (text or a file) before the roll, or a GNU Backgammon Position ID")
    rollout.add_argument("--turn", choices=["X", "O"], default="X", help="side to roll of a Position ID (default X)")
    rollout.add_argument("--dice", type=int, nargs=2, metavar=("D1", "D2"),
                         help="analyse the moves of this roll instead of rolling out the position")
    rollout.add_argument("--candidates", type=int, default=5, metavar="N",
                         help="with --dice: roll out the N best moves of the ranking net's search (default 5)")
    rollout.add_argument("--move", action="append", metavar="MOVE", help="with --dice: roll out this move "
                         "(move notation, e.g. '24/18 13/11'; repeatable) instead of the best N")
    rollout.add_argument("--ranker", metavar="SPEC", help="net:PATH[@Nply] ranking the candidates (default: the "
                         "bot if it is a net, else the evaluator)")
    rollout.add_argument("--bot", metavar="SPEC", help="the bot playing both sides (default: the variant's shipped "
                         "net, 0-ply); " + bots_help())
    rollout.add_argument("--evaluator", metavar="SPEC", help="net:PATH valuing luck and truncated games (default: "
                         "the bot when it is a net)")
    rollout.add_argument("--games", type=int, default=1296, help="games per position or move (default 1296; "
                         "rounded up to a multiple of 36 when rotating)")
    rollout.add_argument("--truncate", type=int, default=0, metavar="PLIES",
                         help="stop after PLIES plies and take the evaluator's value (default 0: play to the end)")
    rollout.add_argument("--bearoff", action="store_true",
                         help="stop at the first bear-off position and take the bear-off database's value")
    rollout.add_argument("--rotate", type=int, choices=[0, 1, 2], default=1,
                         help="balance the first 0, 1 or 2 rolls over every 36 games (default 1)")
    rollout.add_argument("--luck", action="store_true", help="luck-adjusted results by the evaluator's 21-roll "
                         "mean: a narrower CI per game, at 10-20x the time with a 0-ply bot (docs/rollout.md)")
    rollout.add_argument("--seed", type=int, default=1, help="seed of the dice (default 1)")
    worker_options(rollout)
    rollout.add_argument("--json", action="store_true", help="print the result as one JSON object")
    rollout.add_argument("--out", metavar="JSON", help="also write the result here")
    rollout.set_defaults(func=run)


def read_position(text: str, turn: str):
    """A position from ``--position``: JSON text, a JSON file, or a GNU Backgammon Position ID (backgammon)."""
    from ..notation.gnubg_id import position_from_gnubg_id
    from ..notation.json_position import position_from_json
    from ..rules.position import PositionError

    source = text.strip()
    if not source.startswith("{") and Path(source).is_file():
        source = Path(source).read_text().strip()
    if source.startswith("{"):
        try:
            data = json.loads(source)
        except ValueError as error:
            raise PositionError(f"--position: not valid JSON ({error})") from None
        return position_from_json(data)
    try:
        return position_from_gnubg_id(source, turn=turn)
    except (PositionError, ValueError) as error:
        raise PositionError(f"--position {text!r}: neither JSON, a JSON file, nor a GNU Backgammon Position ID "
                            f"({error})") from None


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    from ..net.shipped import default_net_spec
    from .rollout import RolloutError, RolloutSettings, rollout_moves, rollout_position

    position = read_position(args.position, args.turn)
    bot = args.bot or default_net_spec(position.rules.name)
    if bot is None:
        raise RolloutError(f"no shipped network for {position.rules.name!r}: give --bot SPEC")
    settings = RolloutSettings(games=args.games, truncate=args.truncate, bearoff=args.bearoff,
                               rotate=args.rotate, luck=args.luck, seed=args.seed)
    common = dict(evaluator=args.evaluator, workers=args.workers, ray_address=args.ray_address,
                  progress=not args.quiet)
    if args.dice:
        result = rollout_moves(position, tuple(args.dice), bot, settings, moves=args.move,
                               candidates=args.candidates, ranker=args.ranker, **common)
    else:
        if args.move:
            raise RolloutError("--move needs --dice (the roll the moves are played with)")
        result = rollout_position(position, bot, settings, **common)
    data = result.to_dict()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(data) if args.json else result.report())
    return 0
