"""The JSON position of docs/rules.md section 7: read with validation, write.

Reading checks everything a position file can get wrong and says where:
``position.points[3]: 'XOX' is not a legal stack ...``. An optional ``rules``
object carries a custom rule set (overrides of the named variant), and an
optional ``result`` marks a finished game.
"""

from __future__ import annotations

import json
from typing import Any

from ..rules.options import RuleOptions, RulesError, variant_rules
from ..rules.position import SIDES, GameResult, Position, PositionError, validate_position
from ..rules.turns import STAGE_STEPS, Cascade
from ..quoting import quoted

_KNOWN_KEYS = {"variant", "points", "off", "bar", "turn", "result", "rules", "turns", "cascade", "next"}
_CASCADE_KEYS = ("number", "steps", "remainder")


def _side_counts(data: Any, name: str, where: str) -> tuple[int, int]:
    if not isinstance(data, dict):
        raise PositionError(f"{where}.{name}: must be an object like {{\"X\": 0, \"O\": 0}}, got {quoted(data)}")
    extra = sorted(set(data) - set(SIDES))
    if extra:
        raise PositionError(f"{where}.{name}: unknown key(s) {quoted(extra)}; only 'X' and 'O'")
    counts = []
    for side in SIDES:
        value = data.get(side, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 15:
            raise PositionError(f"{where}.{name}.{side}: must be an integer 0..15, got {quoted(value)}")
        counts.append(value)
    return counts[0], counts[1]


def result_from_json(data: Any, where: str = "position.result") -> GameResult:
    if not isinstance(data, dict):
        raise PositionError(f"{where}: must be an object with winner, points, kind")
    try:
        winner, kind, points = data["winner"], data["kind"], data["points"]
    except KeyError as missing:
        raise PositionError(f"{where}: missing key {missing}") from None
    if isinstance(points, bool) or not isinstance(points, int) or points < 0:
        raise PositionError(f"{where}.points: must be a non-negative integer, got {quoted(points)}")
    try:
        return GameResult(winner, kind, points)
    except PositionError as error:
        raise PositionError(f"{where}: {error}") from None


def result_to_json(result: GameResult) -> dict[str, Any]:
    return {"winner": result.winner, "points": result.points, "kind": result.kind}


def position_from_json(data: Any, where: str = "position") -> Position:
    """A validated :class:`Position` from a parsed JSON object (or a JSON string)."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as error:
            raise PositionError(f"{where}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise PositionError(f"{where}: must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise PositionError(f"{where}: unknown key(s) {quoted(unknown)}; known: {sorted(_KNOWN_KEYS)}")
    for key in ("variant", "points", "turn"):
        if key not in data:
            raise PositionError(f"{where}: missing key '{key}'")
    try:
        rules = variant_rules(data["variant"])
        if "rules" in data:
            overrides = data["rules"]
            if not isinstance(overrides, dict):
                raise RulesError("must be an object of rule options")
            rules = rules.replace(**overrides)
    except RulesError as error:
        raise PositionError(f"{where}.{'rules' if 'rules' in data else 'variant'}: {error}") from None
    points = data["points"]
    if not isinstance(points, list) or len(points) != 24:
        raise PositionError(f"{where}.points: must be a list of 24 stacks (strings), got {quoted(points)}")
    for index, stack in enumerate(points):
        if not isinstance(stack, str):
            raise PositionError(f"{where}.points[{index}]: must be a string like \"XX\" or \"OX\", got {quoted(stack)}")
    off = _side_counts(data.get("off", {"X": 0, "O": 0}), "off", where)
    bar = _side_counts(data.get("bar", {"X": 0, "O": 0}), "bar", where)
    turn = data["turn"]
    if turn not in SIDES:
        raise PositionError(f"{where}.turn: must be \"X\" or \"O\", got {quoted(turn)}")
    result = None
    if data.get("result") is not None:
        result = result_from_json(data["result"], f"{where}.result")
    turns = (0, 0)
    if "turns" in data:
        turns = _side_counts(data["turns"], "turns", where)
    cascade = None
    if data.get("cascade") is not None:
        cascade = cascade_from_json(data["cascade"], f"{where}.cascade")
    next_side = data.get("next")
    if next_side is not None and next_side not in SIDES:
        raise PositionError(f"{where}.next: must be \"X\", \"O\" or absent, got {quoted(next_side)}")
    position = Position(rules, tuple(points), off, bar, turn, result, turns, cascade, next_side)
    try:
        validate_position(position)
    except PositionError as error:
        raise PositionError(f"{where}: {error}") from None
    return position


def cascade_from_json(data: Any, where: str = "position.cascade") -> Cascade:
    """A pending stage from ``{"number": k, "steps": s, "remainder": false}`` (docs/rules.md 10.3)."""
    if not isinstance(data, dict):
        raise PositionError(f"{where}: must be an object like {{\"number\": 4, \"steps\": 4, \"remainder\": false}}, "
                            f"got {quoted(data)}")
    extra = sorted(set(data) - set(_CASCADE_KEYS))
    if extra:
        raise PositionError(f"{where}: unknown key(s) {quoted(extra)}; known: {list(_CASCADE_KEYS)}")
    if "number" not in data:
        raise PositionError(f"{where}: missing key 'number'")
    try:
        return Cascade(data["number"], data.get("steps", STAGE_STEPS), data.get("remainder", False))
    except RulesError as error:
        raise PositionError(f"{where}: {error}".replace(f"{where}: cascade.", f"{where}.")) from None


def cascade_to_json(cascade: Cascade) -> dict[str, Any]:
    return {"number": cascade.number, "steps": cascade.steps, "remainder": cascade.remainder}


def position_to_json(position: Position) -> dict[str, Any]:
    """The JSON object of a position (``bar`` only for backgammon-style rules)."""
    data: dict[str, Any] = {
        "variant": position.rules.name,
        "points": list(position.points),
        "off": {"X": position.off[0], "O": position.off[1]},
    }
    if position.rules.hits:
        data["bar"] = {"X": position.bar[0], "O": position.bar[1]}
    data["turn"] = position.turn
    try:
        preset = variant_rules(position.rules.name)
    except RulesError:
        preset = None
    if preset != position.rules:
        if preset is None:
            raise PositionError(
                f"rule set {quoted(position.rules.name)} is not a named variant; name it after the variant it modifies"
            )
        data["rules"] = position.rules.changes_from(preset)
    if position.result is not None:
        data["result"] = result_to_json(position.result)
    if position.rules.cascades:
        if position.turns != (0, 0):
            data["turns"] = {"X": position.turns[0], "O": position.turns[1]}
        if position.cascade is not None:
            data["cascade"] = cascade_to_json(position.cascade)
        if position.next is not None:
            data["next"] = position.next
    return data


def rules_to_json(rules: RuleOptions) -> dict[str, Any]:
    return rules.to_dict()
