"""The state a saved game holds: :func:`saved_state` reads a ``tapa-ai play`` save's match (and a rotation's
match: ``rotation_match``, or ``tavli`` in saves written before rotations were data), checked against its readable
fields; :func:`check_results` checks a match's results against its score.

These are the state checks of :func:`tapa_ai.analysis.records.read_saved`, the one reader of saved files
(``tapa-ai play --load``, ``tapa-ai analyse``, the engine's ``analyse``), which checks the file's shape by the
schema ``tapa_ai/schemas/saved_game.json`` before and replays every game after. Each raises
:class:`~tapa_ai.flow.snapshots.SnapshotError`, one line naming the place in the file.
"""

from __future__ import annotations

from typing import Any, Optional

from ..notation.json_position import position_from_json, position_to_json
from ..quoting import quoted
from ..rules.options import RuleOptions, RulesError
from ..rules.position import SIDES, Position
from .match import MatchState
from .snapshots import SNAPSHOT_VERSION, SnapshotError
from .rotation import RotationMatch

__all__ = ["ROTATION_KEYS", "saved_state", "readable_fields", "check_results", "match_at"]

ROTATION_KEYS = ("rotation_match", "tavli")
"""The keys of a save that hold a rotation's match (with ``match``, its current game): ``rotation_match`` (a
:meth:`~tapa_ai.flow.rotation.RotationMatch.to_dict` snapshot less ``match``, format ``tapa-ai/rotation``), and
``tavli``, what saves of a Tavli match held before rotations were data (format ``tapa-ai/tavli``), still read."""


def saved_state(data: dict, where: str) -> tuple[MatchState | RotationMatch, Optional[Position]]:
    """The match of a ``tapa-ai play`` save of the declared shape (a :class:`RotationMatch` for a rotation's
    match, :data:`ROTATION_KEYS`) and where its current game began when not at its variant's start (``start``,
    else None).

    With ``match``: that state, which the readable fields (``variant``, ``score``, ``position`` ...), where
    present, must agree with; without it (a hand-written file): a match at ``position``."""
    rotation = None
    keys = [key for key in ROTATION_KEYS if key in data]
    if len(keys) > 1:
        raise SnapshotError(f"{where}: both {' and '.join(repr(key) for key in keys)}: a save holds one rotation's "
                            "match ('rotation_match'; 'tavli' in older saves)")
    if "match" in data:
        if keys:
            key = keys[0]
            try:
                rotation = RotationMatch.from_dict({**data[key], "match": data["match"]}, f"{where}.{key}")
            except RulesError as error:
                raise SnapshotError(str(error).replace(f"{where}.{key}.match", f"{where}.match")) from None
            match = rotation.match
        else:
            match = MatchState.from_dict(data["match"], f"{where}.match")
        _check_summary(data, match, where, rotation)
        check_results(match, f"{where}.match")
    else:
        for key in (*keys, "history"):
            if key in data:
                raise SnapshotError(f"{where}.{key}: a saved {'history' if key == 'history' else 'rotation match'} "
                                    "needs 'match' (the state of the current game)")
        if "position" not in data:
            raise SnapshotError(f"{where}: needs 'match' (the whole state) or at least 'position'")
        match = match_at(data["position"], data, where)
    start = None
    if data.get("start") is not None:
        if rotation is not None:
            raise SnapshotError(f"{where}.start: every game of a rotation's match begins at its variant's start")
        start = position_from_json(data["start"], f"{where}.start")
        if start.rules != match.rules:
            raise SnapshotError(f"{where}.start: a {start.rules.name} position, but the game is {match.rules.name}")
        if match.game.history and match.game.history[0].action == "opening":
            raise SnapshotError(f"{where}.start: a game that begins with an opening roll begins at its variant's "
                                "start position")
    return (rotation if rotation is not None else match), start


def readable_fields(match: MatchState) -> dict[str, Any]:
    """The readable fields of a save file: what ``match`` (the saved state itself) says."""
    game = match.game
    return {
        "variant": match.rules.name,
        "match_length": match.length,
        "score": {"X": match.score[0], "O": match.score[1]},
        "game_number": match.game_number,
        "turn": game.position.turn,
        "phase": game.phase,
        "dice": list(game.dice) if game.dice is not None else None,
        "cube": {"value": game.cube_value, "owner": game.cube_owner},
        "position": position_to_json(game.position),
        "history": [event.to_dict() for event in game.history],
    }


def _check_summary(data: dict, match: MatchState, where: str, rotation: Optional[RotationMatch] = None) -> None:
    """The readable fields of a save, where present, must say what its ``match`` says."""
    for key, value in readable_fields(match).items():
        if key not in data or data[key] == value:
            continue
        if key == "variant" and rotation is not None:
            raise SnapshotError(f"{where}.variant: {quoted(data['variant'], 40)} disagrees with {where}.match (game "
                                f"{match.game_number} of the {rotation.rotation.name} match, {value})")
        if key == "cube" and data[key] == {"value": 1} and value == {"value": 1, "owner": None}:
            continue
        raise SnapshotError(f"{where}.{key}: {quoted(data[key], 60)} disagrees with {where}.match "
                            f"({quoted(value, 60)}); 'match' is the saved state: edit it, or delete it to start "
                            "from 'position'")
    if "rules" in data:
        try:
            rules = RuleOptions.from_dict(data["rules"])
        except RulesError as error:
            raise SnapshotError(f"{where}.rules: {error}") from None
        if rules != match.rules:
            raise SnapshotError(f"{where}.rules: disagree with the rules of {where}.match.game.position")


def check_results(match: MatchState, where: str) -> None:
    """A match's results: numbered in order up to the current game, and no side's recorded wins worth more than
    its score (a hand-written start may give a score without the games that made it)."""
    won = [0, 0]
    last = 0
    for i, result in enumerate(match.results):
        if result.number <= last or result.number > match.game_number:
            raise SnapshotError(f"{where}.results[{i}].number: {result.number} after game {last}, with the current "
                                f"game {match.game_number}: the results must be the finished games in order")
        last = result.number
        if result.winner is not None:
            won[SIDES.index(result.winner)] += result.points
    for side, points, score in zip(SIDES, won, match.score):
        if points > score:
            raise SnapshotError(f"{where}.score.{side}: {score}, less than the {points} point(s) of the games "
                                f"{side} won in {where}.results")


def match_at(position_data: Any, data: dict, where: str) -> MatchState:
    """A match at a given position (hand-written files and bare positions)."""
    inner = f"{where}.position" if data else where
    position = position_from_json(position_data, inner)
    if "turn" in data and data["turn"] != position.turn:
        raise SnapshotError(f"{where}.turn: {quoted(data['turn'])} disagrees with {inner}.turn {quoted(position.turn)}")
    dice = data.get("dice")
    cube = data.get("cube") or {"value": 1, "owner": None}
    length = data.get("match_length", 0)
    score = data.get("score", {"X": 0, "O": 0})
    game_number = data.get("game_number", 1)
    if position.result is not None:
        phase, dice = "over", None
    else:
        phase = "move" if dice is not None else "roll"
    if "phase" in data and data["phase"] != phase:
        raise SnapshotError(f"{where}.phase: {quoted(data['phase'])} disagrees with the position and dice ({phase})")
    position_data = position_to_json(position)
    game_data = {"format": "tapa-ai/game", "version": SNAPSHOT_VERSION, "position": position_data, "phase": phase,
                 "dice": dice, "cube": cube, "result": position_data.get("result")}
    match_data = {"format": "tapa-ai/match", "version": SNAPSHOT_VERSION, "length": length, "score": score,
                  "game_number": game_number, "game": game_data}
    if length and position.result is not None:
        raise SnapshotError(f"{where}: a match cannot start from a finished position")
    try:
        return MatchState.from_dict(match_data, where)
    except RulesError as error:
        raise SnapshotError(str(error).replace(f"{where}.game.", f"{where}.")) from None
