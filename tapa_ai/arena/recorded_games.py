"""Game records: the moves of whole games in one JSON file (format ``tapa-ai/games``), for ``tapa-ai analyse``.

``tapa-ai match A B --record-games FILE`` writes the games it plays in this
form, and the web board's *Save game* downloads the same form (docs/analysis.md)::

    {"format": "tapa-ai/games", "version": 1, "variant": "tapa", "rules": {...all rule options...},
     "source": "tapa-ai match", "players": {"A": "net:tapa@1ply", "B": "heuristic"}, "seed": 1,
     "games": [{"number": 1, "players": {"X": "A", "O": "B"}, "match_length": 0, "score": {"X": 0, "O": 0},
                "history": [{"action": "opening", "dice": [5, 2]},
                            {"action": "move", "side": "X", "dice": [5, 2], "move": "24/22 24/19"}, ...],
                "result": {"winner": "X", "kind": "single", "points": 1}}, ...]}

``history`` holds the events of :class:`tapa_ai.flow.Event` (``opening``,
``move``, ``double``, ``take``, ``drop``): a game whose history begins with
``opening`` starts from the variant's starting position with an opening roll,
any other from it (or from ``start``, a JSON position, when given) with the
first event's side to roll. ``players`` of a game names each side by a key of
the file's ``players`` (the arena: A and B change sides every game) or by
itself; ``result`` is null for a game that did not end. Only this writer lives
here; :mod:`tapa_ai.analysis.records` reads every kind of record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Sequence

from ..rules.options import RuleOptions

GAMES_FORMAT = "tapa-ai/games"
GAMES_VERSION = 1

__all__ = ["GAMES_FORMAT", "GAMES_VERSION", "arena_game", "games_document", "write_games"]


def arena_game(number: int, first: str, second: str, rules: RuleOptions,
               turns: Sequence[tuple[int, tuple[int, int], str]], result: Optional[dict[str, Any]]) -> dict:
    """One game of a duel as the file holds it: ``first`` (a key of the file's players) moved first, as X.

    ``turns``: (side code 0 = X / 1 = O, dice, move text) of every turn; the first roll of a variant whose
    opening roll is played (``use-opening-dice``, never a double) is written as that opening roll, won by X.
    """
    history: list[dict[str, Any]] = []
    for turn, (side, dice, move) in enumerate(turns):
        dice = [max(dice), min(dice)] if turn == 0 and rules.opening == "use-opening-dice" else list(dice)
        if turn == 0 and rules.opening == "use-opening-dice":
            history.append({"action": "opening", "dice": dice})
        history.append({"action": "move", "side": "XO"[side], "dice": dice, "move": move})
    return {"number": number, "players": {"X": first, "O": second}, "match_length": 0,
            "score": {"X": 0, "O": 0}, "history": history, "result": result}


def games_document(rules: RuleOptions, players: dict[str, str], games: list[dict], source: str,
                   **extra: Any) -> dict[str, Any]:
    """The whole file: the rules, the players by key, the games, and ``extra`` fields (a seed...)."""
    return {"format": GAMES_FORMAT, "version": GAMES_VERSION, "variant": rules.name, "rules": rules.to_dict(),
            "source": source, "players": dict(players), **extra, "games": games}


def write_games(path: str | Path, document: dict[str, Any]) -> Path:
    """Write a :func:`games_document` as JSON (one game a line, so that a long file stays readable); a path ending
    in .sgf or .mat gets GNU Backgammon's SGF or the .mat text instead (:mod:`tapa_ai.matchfiles`)."""
    path = Path(path)
    from ..matchfiles import WRITTEN_SUFFIXES

    if path.suffix.lower() in WRITTEN_SUFFIXES:
        from ..matchfiles import from_document, write_match_file
        return write_match_file(path, from_document(document))
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {key: value for key, value in document.items() if key != "games"}
    lines = [json.dumps(game, separators=(",", ":")) for game in document["games"]]
    text = json.dumps(head, indent=1)[:-2] + ',\n "games": [\n' + ",\n".join(lines) + "\n ]\n}\n"
    path.write_text(text, encoding="utf-8")
    return path
