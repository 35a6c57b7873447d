"""The matches of the match files, between the formats: :class:`MatchGame` and :class:`MatchFile`.

A reader (:mod:`.mat`, :mod:`.sgf`) turns a file into a :class:`MatchFile`; a
writer turns one into text. Its games hold their history as the project's
events (:class:`tapa_ai.flow.Event` as dicts: ``opening``, ``move``, ``double``,
``take``, ``drop``), so :func:`to_document` makes of it a ``tapa-ai/games`` (or
``tapa-ai/rotation-match``) document that :mod:`tapa_ai.analysis.records`
replays through the rules, the one replay of every record; and
:func:`from_document` and :func:`from_record` make one of the project's own
records, to be written.

Sides: the files' player 1 (gnubg's ``B``, the right column of a .mat file,
``X`` on gnubg's board) is X, player 0 (``W``, the left column) is O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import TapaError
from ..quoting import quoted
from ..rules.options import REGISTRY, VARIANTS, RuleOptions, variant_rules
from ..rules.rotations import Rotation, RotationError, rotation_from_data

__all__ = ["MatchFileError", "MatchGame", "MatchFile", "variant_title", "variant_of_title", "result_kind",
           "to_document", "from_document", "from_record", "rotation_text", "rotation_of_text", "rules_text",
           "rules_of_text", "file_steps",
           "own_move"]

GAMES_FORMAT = "tapa-ai/games"
ROTATION_MATCH_FORMAT = "tapa-ai/rotation-match"


class MatchFileError(TapaError, ValueError):
    """A match file that cannot be read: one line naming the file, the game and the move."""


@dataclass
class MatchGame:
    """One game of a match file."""

    number: int
    variant: str
    players: dict[str, str]
    """``{"X": name, "O": name}``."""
    score: tuple[int, int] = (0, 0)
    """The match score (X, O) before the game."""
    crawford: bool = False
    history: list[dict[str, Any]] = field(default_factory=list)
    """The events, as :meth:`tapa_ai.flow.Event.to_dict` writes them."""
    labels: list[str] = field(default_factory=list)
    """For each event, where it is in the file, in words (``move 12``), for the error messages."""
    result: Optional[dict[str, Any]] = None
    """The result the file states (``{"winner", "kind", "points"}``, points before the cube), or None."""
    stated_points: Optional[tuple[str, int]] = None
    """(winner, points won with the cube) as the file says (``Wins 2 points``, ``RE[B+2]``), to check."""
    resigned: bool = False
    """The file says the game was resigned (gnubg's ``RE[B+2R]``)."""
    jacoby: bool = False
    """The file plays the Jacoby rule (gnubg's money play, ``RU[Jacoby]``): a gammon with the cube centred counts
    one point in its result (the moves are read by the project's rules, which have no such rule)."""
    analysis: list[Optional[dict[str, Any]]] = field(default_factory=list)
    """Per event, the analysis to write with it (SGF), or None: ``{"comment": text}``, and for a rated move
    ``"candidates"`` (``[(move text, (win, win_gammon, win_backgammon, lose_gammon, lose_backgammon), equity),
    ...]`` best first, the mover's cubeless chances and equity in points), ``"played"`` (the played move's index in
    them) and ``"plies"`` (the depth they were valued at)."""


@dataclass
class MatchFile:
    """The games of one match file."""

    games: list[MatchGame]
    length: int = 0
    """The match's points (0: money play, or single games)."""
    variant: str = "backgammon"
    rotation: Optional[Rotation] = None
    rules: Optional[RuleOptions] = None
    """The rules of a match whose options differ from its variant's preset (outside a rotation), or None: written
    as the options changed (:func:`rules_text`, SGF ``RU[...:Rules=...]``, .mat ``; [Rules "..."]``)."""
    source: str = ""
    players: dict[str, str] = field(default_factory=dict)
    """The file's players by side, as its header names them (informational)."""


# -- names of the variants and rotations ---------------------------------------------------------------
def variant_title(variant: str) -> str:
    """``Gul Bara``: the name a file's ``Variation`` header gives."""
    return REGISTRY[variant].title


def _key(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def variant_of_title(text: str) -> Optional[str]:
    """The variant a ``Variation`` header or an SGF ``Variant=`` names (``Gul Bara``, ``gulbara``, ``Backgammon``),
    or None for one this project does not play (gnubg's ``Nackgammon``, ``Hypergammon``)."""
    key = _key(text)
    for name in VARIANTS:
        if key in (_key(name), _key(REGISTRY[name].title)):
            return name
    return None


def rotation_text(rotation: Rotation) -> str:
    """A rotation as a file names it: a preset's name, its games comma-separated, or (options changed) the JSON of
    :meth:`~tapa_ai.rules.rotations.Rotation.to_data`."""
    data = rotation.to_data()
    if isinstance(data, str):
        return data
    if all(isinstance(item, str) for item in data):
        return ",".join(data)
    return json.dumps(data, separators=(",", ":"))


def rotation_of_text(text: str, where: str) -> Rotation:
    text = text.strip()
    try:
        if text.startswith("["):
            data: Any = json.loads(text)
        elif "," in text:
            data = [part.strip() for part in text.split(",")]
        else:
            data = text
        return rotation_from_data(data, where)
    except (RotationError, ValueError) as error:
        raise MatchFileError(f"{where}: {error}") from None


def rules_text(rules: RuleOptions) -> str:
    """The options of ``rules`` changed from its variant's preset, as a file names them: compact JSON
    (``{"mother_points":3}``); ``""`` for the preset itself."""
    changes = rules.changes_from(variant_rules(rules.name))
    return json.dumps(changes, separators=(",", ":")) if changes else ""


def rules_of_text(text: str, variant: str, where: str) -> RuleOptions:
    """The rules a file's ``Rules`` names: ``variant``'s preset with the options of JSON object ``text`` changed."""
    try:
        changes = json.loads(text)
        if not isinstance(changes, dict):
            raise ValueError(f"{quoted(text, 40)} is not a JSON object of rule options")
        return variant_rules(variant).replace(**changes)
    except json.JSONDecodeError:
        raise MatchFileError(f"{where}: {quoted(text, 40)} is not a JSON object of rule options") from None
    except (ValueError, TypeError) as error:  # RulesError is a ValueError
        raise MatchFileError(f"{where}: {error}") from None


def result_kind(rules: RuleOptions, points: int) -> str:
    """The kind of a win worth ``points`` (before the cube) by ``rules``: what a file that only says the points
    means (a resignation)."""
    if points <= 0:
        return "draw"
    if points == 1:
        return "single"
    if points == 2:
        return "gammon"
    return "backgammon" if rules.backgammons or not rules.mother_points else "mother"


# -- moves: the files' own-view steps and the project's move text --------------------------------------------
_STEP = re.compile(r"^(\d{1,2}|bar)/(\d{1,2}|off)$")


def file_steps(move: str) -> list[tuple[int, int]]:
    """The steps of move text in the mover's numbering as (from, to), 25 the bar and 0 off: the text as the
    project writes it (one ``from/to`` a die, :func:`tapa_ai.notation.move_text.format_move`), or any move
    text (read by :func:`~tapa_ai.notation.move_text.parse_move_text`: repeats, chains)."""
    steps = []
    for token in move.split():
        match = _STEP.match(token.rstrip("*").replace("*", ""))
        if match is None:
            return _parsed_steps(move)
        start, end = match.groups()
        steps.append((25 if start == "bar" else int(start), 0 if end == "off" else int(end)))
    return steps


def _parsed_steps(move: str) -> list[tuple[int, int]]:
    from ..notation.move_text import parse_move_text
    return [(segment.start, segment.end) for segment in parse_move_text(move)]


def own_move(text: str) -> str:
    """A file's move (``25/22 6/0``, ``bar/22*``, ``13/11(2)``) as the project's move text (``bar/22 6/off``):
    gnubg's 25 is the bar, its 0 off."""
    tokens = []
    for token in text.split():
        parts = token.split("/")
        if len(parts) >= 2:
            head = parts[0]
            if head.rstrip("*") == "25":
                parts[0] = "bar" + head[2:]
            tail = parts[-1]
            number = re.match(r"^0(?=$|[*(])", tail)
            if number:
                parts[-1] = "off" + tail[1:]
            token = "/".join(parts)
        tokens.append(token)
    return " ".join(tokens)


# -- to and from the project's records ------------------------------------------------------------------------
def to_document(match: MatchFile, source: str) -> dict[str, Any]:
    """The ``tapa-ai/games`` document of ``match`` (a ``tapa-ai/rotation-match`` for a rotation's match), for
    :func:`tapa_ai.analysis.records.record_from_json`."""
    games = []
    for game in match.games:
        entry: dict[str, Any] = {"number": game.number, "players": dict(game.players),
                                 "match_length": match.length, "score": {"X": game.score[0], "O": game.score[1]},
                                 "history": game.history}
        if match.rotation is not None:
            entry["variant"] = game.variant
            del entry["match_length"]
        elif game.crawford:
            entry["crawford"] = True
        if game.result is not None:
            entry["result"] = game.result
        games.append(entry)
    if match.rotation is not None:
        score = [0, 0]
        for game in match.games:
            if game.stated_points is not None and game.stated_points[0] in ("X", "O"):
                score["XO".index(game.stated_points[0])] += game.stated_points[1]
        winner = next((side for side, points in zip("XO", score) if points >= match.length), None)
        return {"format": ROTATION_MATCH_FORMAT, "version": 1, "source": source[:200],
                "rotation": match.rotation.to_data(), "length": match.length,
                "score": {"X": score[0], "O": score[1]}, "winner": winner, "games": games}
    rules = match.rules or variant_rules(match.variant)
    return {"format": GAMES_FORMAT, "version": 1, "variant": match.variant, "rules": rules.to_dict(),
            "source": source[:200], "games": games}


def from_document(document: dict[str, Any]) -> MatchFile:
    """A ``tapa-ai/games`` document (``tapa-ai match --record-games``, the web board's *Save game*) as a
    :class:`MatchFile`, to be written: its events as they are (the arena writes the moves as
    :func:`~tapa_ai.notation.move_text.format_move` does)."""
    players = document.get("players", {})
    variant = document["variant"]
    games = []
    for index, item in enumerate(document["games"]):
        sides = item.get("players", {"X": "X", "O": "O"})
        named = {side: (f"{key} {players[key]}" if key in players else key) for side, key in sides.items()}
        score = item.get("score", {"X": 0, "O": 0})
        result = item.get("result")
        game = MatchGame(item.get("number", index + 1), variant, named, (score["X"], score["O"]),
                         bool(item.get("crawford")), list(item["history"]), result=result)
        if result is not None and result.get("winner") is not None:
            cube = 1
            for event in game.history:
                if event["action"] == "take":
                    cube = event.get("cube", cube * 2)
            game.stated_points = (result["winner"], result["points"] * cube)
        games.append(game)
    rules = RuleOptions.from_dict(document["rules"]) if "rules" in document else None
    return MatchFile(games, max((item.get("match_length", 0) for item in document["games"]), default=0), variant,
                     None, rules, document.get("source", ""))


def from_record(record: Any, notes: Optional[dict[tuple[int, int], dict[str, Any]]] = None) -> MatchFile:
    """A replayed record (:class:`tapa_ai.analysis.records.Record`: a play save, the arena's games, a match file,
    anything ``tapa-ai analyse`` reads) as a :class:`MatchFile`: every game's turns as events, the opening roll
    (where the rules play it) before the first move. ``notes``: the analysis to write with turn ``(game number,
    turn index)`` (:attr:`MatchGame.analysis`'s form: SGF ``C[...]`` and ``A[...]``)."""
    from ..rules.position import start_position

    games = []
    for game in record.games:
        first = game.turns[0].position if game.turns else None
        if first is not None and (first.points, first.off, first.bar) != \
                (lambda start: (start.points, start.off, start.bar))(start_position(game.rules, first.turn)):
            raise MatchFileError(f"game {game.number} began from a set-up position, not the {game.rules.name} start: "
                                 "a match file's games begin at the start")
        history: list[dict[str, Any]] = []
        analysis: list[Optional[dict[str, Any]]] = []
        for turn in game.turns:
            while len(analysis) < len(history):
                analysis.append(None)
            if turn.action == "move":
                if turn.opening:
                    high, low = max(turn.dice), min(turn.dice)
                    history.append({"action": "opening", "dice": [high, low] if turn.side == "X" else [low, high]})
                history.append({"action": "move", "side": turn.side, "dice": list(turn.dice), "move": turn.move})
            elif turn.action == "double":
                history.append({"action": "double", "side": turn.side, "cube": 2 * turn.cube})
            elif turn.action == "take":
                history.append({"action": "take", "side": turn.side, "cube": 2 * turn.cube})
            else:
                history.append({"action": "drop", "side": turn.side})
            note = (notes or {}).get((game.number, turn.index))
            analysis += [None] * (len(history) - len(analysis) - 1) + [note or None]
        result = None
        stated = None
        if game.result is not None:
            result = {"winner": game.result.winner, "kind": game.result.kind, "points": game.result.points}
            if game.result.winner is not None:
                stated = (game.result.winner, game.result.points * game.cube)
        games.append(MatchGame(game.number, game.rules.name, dict(game.players), tuple(game.score), game.crawford,
                               history, result=result, stated_points=stated, resigned=game.ending == "resigned",
                               analysis=analysis))
    rotation = getattr(record, "rotation", None)
    length = record.length if rotation is not None else max((game.match_length for game in record.games), default=0)
    rules = record.rules if rotation is None and record.rules != variant_rules(record.rules.name) else None
    return MatchFile(games, length, record.rules.name, rotation, rules, record.source, dict(record.players))


def game_rules(match: MatchFile, game: MatchGame) -> RuleOptions:
    """The rules a game of ``match`` is played by."""
    if match.rotation is not None:
        return match.rotation.rules(game.number)
    return match.rules or variant_rules(game.variant)


def add_opening(game: MatchGame, rules: RuleOptions) -> None:
    """Where the rules play the opening roll (``use-opening-dice``), the first move's roll (not a double) is it:
    the opening event before it, the mover's die the higher."""
    first = next((i for i, event in enumerate(game.history) if event["action"] != "opening"), None)
    if rules.opening != "use-opening-dice" or first != 0:
        return
    event = game.history[0]
    if event["action"] != "move" or event["dice"][0] == event["dice"][1]:
        return
    high, low = max(event["dice"]), min(event["dice"])
    game.history.insert(0, {"action": "opening", "dice": [high, low] if event["side"] == "X" else [low, high]})
    game.labels.insert(0, game.labels[0] if game.labels else "the opening roll")
    if game.analysis:
        game.analysis.insert(0, None)


def settle(match: MatchFile, game: MatchGame, where: str) -> None:
    """Check a game's stated result against its moves, played through the game flow, and state the result of a
    game its moves do not end (resigned): the kind by the points the file says, divided by the cube. An illegal
    event is left for the replay (:mod:`tapa_ai.analysis.records`), which names it."""
    from ..flow import Event, GameState
    from ..rules.options import RulesError

    rules = game_rules(match, game)
    try:
        state = GameState.new(rules, crawford=game.crawford) if game.history and \
            game.history[0]["action"] == "opening" else GameState.new(
                rules, opener=game.history[0].get("side") if game.history else "X", crawford=game.crawford)
        for index, event in enumerate(game.history):
            state = Event.from_dict(event, f"history[{index}]").played_on(state)
    except (RulesError, KeyError, TypeError):  # a FlowError (a SnapshotError too) is a RulesError
        return
    if state.is_over:
        jacoby = game.jacoby and state.cube_value == 1 and game.stated_points == (state.winner, 1)
        if game.stated_points is not None and state.winner is not None and not jacoby and \
                game.stated_points != (state.winner, state.points_won):
            side, points = game.stated_points
            raise MatchFileError(f"{where}: game {game.number}: the file says {side} wins {points} point(s), but the "
                                 f"moves end it with {state.winner} winning {state.points_won}")
        game.result = None
        return
    if game.stated_points is not None:
        side, points = game.stated_points
        if side is None or points % state.cube_value:
            raise MatchFileError(f"{where}: game {game.number}: {points} point(s) with the cube at "
                                 f"{state.cube_value} is no result")
        if game.result is None or game.result.get("winner") != side:
            base = points // state.cube_value
            game.result = {"winner": side, "kind": result_kind(rules, base), "points": base}
