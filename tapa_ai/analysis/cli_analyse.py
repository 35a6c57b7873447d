"""``tapa-ai analyse FILE``: read a record, rate it with the bot, print the report, write the JSON."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional, TextIO

from .analyse import (DEFAULT_BLUNDER_MP, DEFAULT_ERROR_MP, AnalysisError, analyse_record,
                      analyse_rotation_record, analysis_bot)
from .records import read_record

DEFAULT_PLIES = 1
"""Depth of the default analysing bot, the shipped network of the record's variant."""


def default_rotation_bot(rotation) -> str:
    """The default analysing networks of a rotation's match: the shipped model of each game's variant
    (``net:tavli@1ply``, ``net:tabla@1ply``, ``net:rotation@1ply`` for a rotation of other games)."""
    return f"net:{rotation.player_name}@{DEFAULT_PLIES}ply"


def add_parser(subparsers) -> None:
    """The ``analyse`` command on ``subparsers`` (``tapa-ai``'s)."""
    analyse = subparsers.add_parser("analyse", help="rate the moves and rolls of a recorded game or match: errors, "
                                    "blunders, luck per player (docs/analysis.md)")
    analyse.add_argument("file", metavar="FILE", help="a game saved by tapa-ai play, the web board's Save game, or "
                         "tapa-ai match --record-games")
    analyse.add_argument("--bot", metavar="SPEC", help="the analysing network, net:PATH[@Nply] (default: the shipped "
                         "net:<variant>@1ply of the record's variant; a saved rotation's match: net:tavli@1ply, "
                         "net:tabla@1ply or net:rotation@1ply, the network of each game's variant, or "
                         "tavli:net:A,net:B,net:C, tabla:..., rotation:...)")
    analyse.add_argument("--json", metavar="PATH", help="also write the full analysis here as JSON")
    analyse.add_argument("--blunder", type=float, default=80.0, metavar="MP",
                         help="mark a move losing more than MP millipoints a blunder (default 80)")
    analyse.add_argument("--error", type=float, default=20.0, metavar="MP",
                         help="mark a move losing more than MP millipoints an error (default 20)")
    analyse.add_argument("--game", type=int, metavar="N", help="analyse game number N of the file only")
    analyse.add_argument("--quiet", action="store_true", help="no progress bar")
    analyse.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    return analyse_command(args.file, bot=args.bot, json_path=args.json, blunder_mp=args.blunder,
                           error_mp=args.error, game=args.game, quiet=args.quiet)


def analyse_command(path: str, bot: Optional[str] = None, json_path: Optional[str] = None,
                    blunder_mp: float = DEFAULT_BLUNDER_MP, error_mp: float = DEFAULT_ERROR_MP,
                    game: Optional[int] = None, quiet: bool = False, output: Optional[TextIO] = None,
                    errors: Optional[TextIO] = None) -> int:
    """Analyse the record at ``path``, the report on ``output`` (the progress bar on ``errors``); the exit code.
    Bad input raises a :class:`~tapa_ai.errors.TapaError` (:class:`AnalysisError`, a ``RecordError``, ...):
    ``tapa-ai`` prints it as one line, exit code 2."""
    output = output or sys.stdout
    errors = errors or sys.stderr
    for name, value in (("--blunder", blunder_mp), ("--error", error_mp)):
        if not 0 <= value <= 100_000:
            raise AnalysisError(f"{name} {value:g}: must be a number of millipoints, 0 or more")
    record = read_record(path)
    if game is not None:
        chosen = tuple(g for g in record.games if g.number == game)
        if not chosen:
            numbers = [g.number for g in record.games]
            raise AnalysisError(f"--game {game}: {path} holds game{'s' if len(numbers) > 1 else ''} "
                                f"{_ranges(numbers)}")
        record = replace(record, games=chosen, source=f"{record.source}: game {game} of {len(record.games)}")
    from ..net.shipped import model_variant

    if record.rotation is not None:
        bots = rotation_bots(bot or default_rotation_bot(record.rotation), record)
    else:
        spec = bot or f"net:{model_variant(record.rules.name)}@{DEFAULT_PLIES}ply"  # portes: the backgammon model
        the_bot = analysis_bot(spec, record)
    moves = sum(len(g.moves) for g in record.games)
    from tqdm import tqdm

    with tqdm(total=moves, unit="move", desc=f"analysing {Path(path).name}", disable=quiet,
              dynamic_ncols=True, file=errors) as bar:
        if record.rotation is not None:
            analysis = analyse_rotation_record(record, bots, error_mp=error_mp, blunder_mp=blunder_mp,
                                               progress=bar.update)
        else:
            analysis = analyse_record(record, the_bot, error_mp=error_mp, blunder_mp=blunder_mp,
                                      progress=bar.update)
    if json_path:
        target = Path(json_path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(analysis.to_dict(), indent=1) + "\n", encoding="utf-8")
        except OSError as error:
            raise AnalysisError(f"--json {json_path}: cannot write it ({error.strerror or error})") from None
    output.write(analysis.report(path) + "\n")
    if json_path:
        output.write(f"written: {json_path}\n")
    return 0


def rotation_bots(spec: str, record) -> dict:
    """The analysing network of each variant of a rotation's match's games, from a rotation spec of networks
    (``net:tabla@1ply``: each game's shipped model, ``net:backgammon`` for Portes with Portes' points;
    ``tavli:net:A,net:B,net:C``, ``rotation:...``), for the record's rotation."""
    from ..bots.base import BotError
    from ..bots.rotation import rotation_specs

    try:
        specs = rotation_specs(spec, record.rotation)
    except BotError as error:
        raise AnalysisError(f"--bot: {error}") from None
    bots = {}
    for variant, one in specs.items():
        games = tuple(game for game in record.games if game.rules.name == variant)
        if games:
            bots[variant] = analysis_bot(one, replace(record, rules=games[0].rules, games=games))
    return bots


def _ranges(numbers: list[int]) -> str:
    if len(numbers) > 1 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]} to {numbers[-1]}"
    return ", ".join(map(str, numbers[:20])) + (" ..." if len(numbers) > 20 else "")
