"""Saved games of ``tapa-ai play``: one JSON file, written by ``save FILE``, read by ``load FILE`` and ``--load``.

The file (format ``tapa-ai/play``, version 1)::

    {"format": "tapa-ai/play", "version": 1,
     "variant": "tapa", "rules": {...all rule options...},
     "bot": "runner", "human": "X", "seed": 7,
     "match_length": 0, "score": {"X": 0, "O": 0}, "game_number": 1,
     "turn": "X", "phase": "move", "dice": [6, 5], "cube": {"value": 1, "owner": null},
     "position": {...the JSON position of docs/rules.md section 7...},
     "history": [{"action": "opening", "dice": [6, 5]}, ...],
     "match": {...MatchState.to_dict(): the whole state...},
     "rng": {"dice": {...}, "bot": {...}}}

A Tavli match (``tapa-ai play --tavli N``) adds ``tavli``, its length and
its finished games, each with its variant and whole game snapshot (history
included); ``match`` and the fields before it are then the current game's
(its variant, the match score, the game number)::

     "tavli": {"format": "tapa-ai/tavli", "version": 1, "length": 3,
               "rotation": ["portes", "plakoto", "fevga"],
               "played": [{"number": 1, "variant": "portes", "game": {...}}]}

``tavli`` and ``match`` load together as a
:class:`~tapa_ai.flow.tavli.TavliMatch` (:meth:`~tapa_ai.flow.tavli.TavliMatch.from_dict`:
every game of its variant, the results, the score and the openers checked).

``match`` is the whole state (:meth:`tapa_ai.flow.MatchState.to_dict`)
and is what loading uses; the fields before it are the same facts in
readable form and must agree with it. ``rng`` continues the same dice after a
load. A hand-written file may leave out ``match`` (and anything else but
``position``): the game then starts from ``position`` with ``dice`` if given
(else the side to move is to roll), the cube, ``score`` and
``match_length``. A bare JSON position file loads the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..errors import TapaError
from ..flow import SNAPSHOT_VERSION, FlowError, GameState, MatchState
from ..flow.tavli import TavliMatch
from ..notation.json_file import MAX_FILE_BYTES, MAX_NESTING, JsonFileError, read_json_file
from ..notation.json_position import position_from_json, position_to_json
from ..rules.options import RuleOptions, RulesError
from ..rules.position import SIDES
from ..quoting import PATH_LIMIT, quoted

FORMAT = "tapa-ai/play"
VERSION = 1

__all__ = ["SaveError", "SavedGame", "save_game", "load_game", "read_file"]


class SaveError(TapaError, ValueError):
    """A file that cannot be written or loaded; the message says where and why."""


@dataclass
class SavedGame:
    """What a save file holds."""

    match: MatchState | TavliMatch
    """The match (a :class:`~tapa_ai.flow.tavli.TavliMatch` for a Tavli match)."""
    human: Optional[str] = None
    """The side the human played (None: not said)."""
    bot: Optional[str] = None
    """The bot spec it was played against (None: not said)."""
    seed: Optional[int] = None
    rng: Optional[dict] = None
    """Bit-generator states of the dice and the bot (numpy ``bit_generator.state``)."""

    @property
    def rules(self) -> RuleOptions:
        """The rules of the current game."""
        return self.match.rules

    @property
    def is_tavli(self) -> bool:
        return isinstance(self.match, TavliMatch)


def save_game(path: str | Path, saved: SavedGame) -> Path:
    """Write ``saved`` to ``path`` as JSON (atomically: a temporary file renamed)."""
    match = saved.match.match if saved.is_tavli else saved.match
    summary = _summary(match)
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "variant": summary.pop("variant"),
        "rules": match.rules.to_dict(),
        "bot": saved.bot,
        "human": saved.human,
        "seed": saved.seed,
        **summary,
        "history": [event.to_dict() for event in match.game.history],
        "match": match.to_dict(),
    }
    if saved.is_tavli:
        tavli = saved.match.to_dict()
        del tavli["match"]
        data["tavli"] = tavli
    if saved.rng is not None:
        data["rng"] = saved.rng
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    try:
        temporary.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        temporary.replace(path)
    except OSError as error:
        raise SaveError(f"cannot write {quoted(str(path), PATH_LIMIT)}: {error.strerror or error}") from None
    return path


def read_file(path: str | Path) -> Any:
    """The parsed JSON of ``path``, or :class:`SaveError` saying why not.

    Bounded (:func:`tapa_ai.notation.json_file.read_json_file`): at most
    :data:`MAX_FILE_BYTES` are read and nesting deeper than :data:`MAX_NESTING`
    is refused.
    """
    try:
        return read_json_file(path, "a saved game or a position")
    except JsonFileError as error:
        raise SaveError(str(error)) from None


def load_game(data: Any, where: str = "file") -> SavedGame:
    """A :class:`SavedGame` from parsed JSON: a save file, a hand-written one, or a bare position."""
    if not isinstance(data, dict):
        raise SaveError(f"{where}: must be a JSON object (a saved game or a position), got {type(data).__name__}")
    if "points" in data and "format" not in data:
        return SavedGame(_from_position(data, None, where))
    fmt = data.get("format")
    if fmt != FORMAT:
        raise SaveError(f"{where}.format: expected {FORMAT!r} (a game saved by tapa-ai play) or a JSON position, "
                        f"got {quoted(fmt)}")
    if data.get("version") != VERSION:
        raise SaveError(f"{where}.version: this tapa-ai reads version {VERSION}, got {quoted(data.get('version'))}")
    human = data.get("human")
    if human is not None and human not in SIDES:
        raise SaveError(f"{where}.human: must be 'X' or 'O', got {quoted(human)}")
    bot = data.get("bot")
    if bot is not None and not isinstance(bot, str):
        raise SaveError(f"{where}.bot: must be a bot spec string, got {quoted(bot)}")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise SaveError(f"{where}.seed: must be an integer >= 0, got {quoted(seed)}")
    rng = data.get("rng")
    if rng is not None and not isinstance(rng, dict):
        raise SaveError(f"{where}.rng: must be an object of generator states")
    if "match" in data:
        try:
            match = MatchState.from_dict(data["match"], f"{where}.match")
        except RulesError as error:
            raise SaveError(str(error)) from None
        _check_summary(data, match, where)
        if "tavli" in data:
            tavli = data["tavli"]
            if not isinstance(tavli, dict) or "match" in tavli:
                raise SaveError(f"{where}.tavli: must be an object of the Tavli match's length and finished games "
                                f"(its current game is {where}.match)")
            try:
                match = TavliMatch.from_dict({**tavli, "match": data["match"]}, f"{where}.tavli")
            except RulesError as error:
                raise SaveError(str(error).replace(f"{where}.tavli.match", f"{where}.match")) from None
    else:
        if "tavli" in data:
            raise SaveError(f"{where}.tavli: a Tavli match needs 'match' (the state of its current game)")
        if "position" not in data:
            raise SaveError(f"{where}: needs 'match' (the whole state) or at least 'position'")
        match = _from_position(data["position"], data, where)
    return SavedGame(match, human, bot, seed, rng)


def _summary(match: MatchState) -> dict[str, Any]:
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
    }


def _check_summary(data: dict, match: MatchState, where: str) -> None:
    """The readable fields, where present, must say what ``match`` says."""
    for key, value in _summary(match).items():
        if key in data and data[key] != value:
            raise SaveError(f"{where}.{key}: {quoted(data[key], 60)} disagrees with {where}.match "
                            f"({quoted(value, 60)}); 'match' is the saved state: edit it, or delete it to start "
                            "from 'position'")
    if "rules" in data:
        try:
            rules = RuleOptions.from_dict(data["rules"])
        except RulesError as error:
            raise SaveError(f"{where}.rules: {error}") from None
        if rules != match.rules:
            raise SaveError(f"{where}.rules: disagree with the rules of {where}.match.game.position")


def _from_position(position_data: Any, data: Optional[dict], where: str) -> MatchState:
    """A match at a given position (hand-written files and bare positions)."""
    data = data or {}
    inner = f"{where}.position" if data else where
    try:
        position = position_from_json(position_data, inner)
    except RulesError as error:
        raise SaveError(str(error)) from None
    if "turn" in data and data["turn"] != position.turn:
        raise SaveError(f"{where}.turn: {quoted(data['turn'])} disagrees with {inner}.turn {quoted(position.turn)}")
    dice = data.get("dice")
    cube = data.get("cube") or {"value": 1, "owner": None}
    if not isinstance(cube, dict):
        raise SaveError(f"{where}.cube: must be an object like {{\"value\": 2, \"owner\": \"X\"}}")
    length = data.get("match_length", 0)
    score = data.get("score", {"X": 0, "O": 0})
    game_number = data.get("game_number", 1)
    if not isinstance(score, dict) or sorted(score) != ["O", "X"]:
        raise SaveError(f"{where}.score: must be an object {{\"X\": n, \"O\": n}}, got {quoted(score, 60)}")
    if position.result is not None:
        phase, dice = "over", None
    else:
        phase = "move" if dice is not None else "roll"
    position_data = position_to_json(position)
    game_data = {"format": "tapa-ai/game", "version": SNAPSHOT_VERSION, "position": position_data, "phase": phase,
                 "dice": dice, "cube": cube, "result": position_data.get("result")}
    match_data = {"format": "tapa-ai/match", "version": SNAPSHOT_VERSION, "length": length, "score": score,
                  "game_number": game_number, "game": game_data}
    if length and position.result is not None:
        raise SaveError(f"{where}: a match cannot start from a finished position")
    try:
        return MatchState.from_dict(match_data, where)
    except (RulesError, FlowError) as error:
        raise SaveError(str(error).replace(f"{where}.game.", f"{where}.")) from None


def game_summary(game: GameState) -> str:
    """``X to move with 6-5`` / ``O to roll`` / ``over``: what happens next in a loaded game."""
    if game.phase == "move":
        return f"{game.position.turn} to move with {game.dice[0]}-{game.dice[1]}"
    if game.phase == "roll":
        return f"{game.position.turn} to roll"
    if game.phase == "double":
        return f"{game.side_to_act} to take or pass a double to {game.offered_value}"
    if game.phase == "opening":
        return "the opening roll"
    return "the game is over"
