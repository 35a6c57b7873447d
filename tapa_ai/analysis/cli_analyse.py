"""``tapa-ai analyse FILE``: read a record, rate it with the bot, print the report, write the JSON."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional, TextIO

from ..matchfiles import WRITTEN_SUFFIXES
from ..rules.outcomes import CUMULATIVE_NAMES
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
    analyse.add_argument("file", metavar="FILE", help="a game saved by tapa-ai play, the web board's Save game, "
                         "tapa-ai match --record-games, or a match file of GNU Backgammon and the servers: .sgf, "
                         ".mat, .txt (docs/match-files.md)")
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
    analyse.add_argument("--export", metavar="PATH", help="also write the games read (--game: that one) as GNU "
                         "Backgammon's SGF (PATH ending in .sgf: each rated move's candidates as gnubg's A[], the "
                         "analysis as a comment) or as .mat text (docs/match-files.md)")
    analyse.add_argument("--export-only", action="store_true", help="with --export: write the file, rate nothing "
                         "(no network needed)")
    analyse.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    return analyse_command(args.file, bot=args.bot, json_path=args.json, blunder_mp=args.blunder,
                           error_mp=args.error, game=args.game, quiet=args.quiet, export_path=args.export,
                           export_only=args.export_only)


def analyse_command(path: str, bot: Optional[str] = None, json_path: Optional[str] = None,
                    blunder_mp: float = DEFAULT_BLUNDER_MP, error_mp: float = DEFAULT_ERROR_MP,
                    game: Optional[int] = None, quiet: bool = False, output: Optional[TextIO] = None,
                    errors: Optional[TextIO] = None, export_path: Optional[str] = None,
                    export_only: bool = False) -> int:
    """Analyse the record at ``path``, the report on ``output`` (the progress bar on ``errors``); the exit code.
    Bad input raises a :class:`~tapa_ai.errors.TapaError` (:class:`AnalysisError`, a ``RecordError``, ...):
    ``tapa-ai`` prints it as one line, exit code 2. ``export_path``: also write the games as .sgf or .mat
    (``export_only``: only that, no rating)."""
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
    if export_only and not export_path:
        raise AnalysisError("--export-only needs --export PATH (where the games go)")
    if export_path and Path(export_path).suffix.lower() not in WRITTEN_SUFFIXES:
        raise AnalysisError(f"--export {export_path}: the name must end in .sgf (GNU Backgammon's SGF) or .mat")
    if export_only:
        _export(record, export_path, None, output)
        return 0
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
    if export_path:
        _export(record, export_path, analysis.to_dict(), output)
    return 0


def _export(record, path: str, analysis: Optional[dict], output: TextIO) -> None:
    """Write ``record`` as .sgf or .mat (:mod:`tapa_ai.matchfiles`); in SGF each rated turn's analysis as a
    comment ``C[...]`` and, in backgammon's games, a rated move's candidates as GNU Backgammon's ``A[...]``
    (the equities in points: a rotation's, in match-winning chances, stay in the comments) and a rated cube
    decision as its ``DA[...]`` (money: equities for a cube of 1; a match: match-winning chances)."""
    from ..matchfiles import from_record, write_match_file

    notes = {}
    plies = (analysis or {}).get("plies", 0)
    for game in (analysis or {}).get("games", []):
        for turn in game.get("turns", []):
            note: dict = {}
            if comment := _note(turn):
                note["comment"] = comment
            candidates = turn.get("candidates") if turn.get("units", "points") == "points" else None
            if candidates:
                note["candidates"] = [(c["move"], [c["chances"][name] for name in CUMULATIVE_NAMES[:5]],
                                       c["equity"]) for c in candidates]
                note["played"] = next((i for i, c in enumerate(candidates) if c["move"] == turn["move"]), 0)
                note["plies"] = plies
            cube = turn.get("cube") if turn.get("action") == "move" else turn if turn.get("rated") else None
            if cube and cube.get("chances"):
                scale = cube["cube_value"] if cube["units"] == "points" else 1  # money: per cube of 1
                note["cube"] = {"chances": [cube["chances"][name] for name in CUMULATIVE_NAMES[:5]],
                                "cubeless": cube["cubeless_equity"], "plies": plies,
                                "no_double": cube["equities"]["no_double"] / scale,
                                "double_take": cube["equities"]["double_take"] / scale}
            if note:
                notes[(game["number"], turn["index"])] = note
    try:
        write_match_file(path, from_record(record, notes))
    except OSError as error:
        raise AnalysisError(f"--export {path}: cannot write it ({error.strerror or error})") from None
    output.write(f"written: {path}\n")


def _note(turn: dict) -> str:
    """A rated turn's analysis in words: the error (mp or MWC), the mark, the best move, the luck."""
    parts = []
    if turn.get("error_mwc") is not None:
        parts.append(f"error {100 * turn['error_mwc']:.2f}% MWC")
    elif turn.get("error_mp") is not None:
        parts.append(f"error {turn['error_mp']:.1f} mp")
    if turn.get("mark"):
        parts.append(turn["mark"])
    best = turn.get("best")
    if best is not None and turn.get("action") == "move" and best != turn.get("move"):
        parts.append(f"best {best or '(no move)'}")
    elif best is not None and turn.get("action") != "move":
        parts.append(f"best {best}")
    for key, unit in (("luck", ""), ("luck_mwc", " MWC")):
        if turn.get(key) is not None:
            parts.append(f"luck {turn[key]:+.3f}{unit}")
    return "; ".join(parts)


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
