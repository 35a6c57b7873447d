"""``tapa-ai analyse FILE``: read a record, rate it with the bot, print the report, write the JSON."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional, TextIO

from .analyse import DEFAULT_BLUNDER_MP, DEFAULT_ERROR_MP, AnalysisError, analyse_record, analysis_bot
from .records import RecordError, read_record

DEFAULT_PLIES = 1
"""Depth of the default analysing bot, the shipped network of the record's variant."""


def analyse_command(path: str, bot: Optional[str] = None, json_path: Optional[str] = None,
                    blunder_mp: float = DEFAULT_BLUNDER_MP, error_mp: float = DEFAULT_ERROR_MP,
                    game: Optional[int] = None, quiet: bool = False, output: Optional[TextIO] = None,
                    errors: Optional[TextIO] = None) -> int:
    """Run the command; the exit code (2 with one line on ``errors`` for any bad input)."""
    output = output or sys.stdout
    errors = errors or sys.stderr
    try:
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
        spec = bot or f"net:{record.rules.name}@{DEFAULT_PLIES}ply"
        the_bot = analysis_bot(spec, record)
        moves = sum(len(g.moves) for g in record.games)
        from tqdm import tqdm

        with tqdm(total=moves, unit="move", desc=f"analysing {Path(path).name}", disable=quiet,
                  dynamic_ncols=True, file=errors) as bar:
            analysis = analyse_record(record, the_bot, error_mp=error_mp, blunder_mp=blunder_mp,
                                      progress=bar.update)
        if json_path:
            target = Path(json_path)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(analysis.to_dict(), indent=1) + "\n", encoding="utf-8")
            except OSError as error:
                raise AnalysisError(f"--json {json_path}: cannot write it ({error.strerror or error})") from None
    except (RecordError, AnalysisError) as error:
        errors.write(f"tapa-ai analyse: {error}\n")
        return 2
    output.write(analysis.report(path) + "\n")
    if json_path:
        output.write(f"written: {json_path}\n")
    return 0


def _ranges(numbers: list[int]) -> str:
    if len(numbers) > 1 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]} to {numbers[-1]}"
    return ", ".join(map(str, numbers[:20])) + (" ..." if len(numbers) > 20 else "")
