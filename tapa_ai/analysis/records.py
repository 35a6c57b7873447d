"""Game records of every source read into one model: :class:`Record` of :class:`RecordedGame` of :class:`Turn`.

What each source saves, and what is read of it (docs/analysis.md):

- ``tapa-ai play``'s ``save FILE`` (format ``tapa-ai/play``): the match state
  with the **current game's** history (its earlier games only as results);
  that game is read, from its opening roll (or, for a game opened by the
  previous winner, from its first roll; for a game begun from a loaded
  position, from the save's ``start``). The side the person played is
  ``human``, the other the saved bot spec. A saved **rotation's match**
  (``tapa-ai play --tavli N``, ``--tabla N``, ``--rotation GAMES --length N``)
  holds every game: all are read, each of its own variant
  (:attr:`Record.rotation`).
- The web board's *Save game* and ``tapa-ai match --record-games FILE``
  (format ``tapa-ai/games``, :mod:`tapa_ai.arena.recorded_games`): every game
  with its history and result.
- The web board's *Save game* of a rotation's match (format
  ``tapa-ai/rotation-match``; ``tapa-ai/tavli-match`` for a Tavli match saved
  before rotations were data): every game of the match, each of its variant.
- A bare game or match snapshot (``tapa-ai/game``, ``tapa-ai/match``,
  :meth:`tapa_ai.flow.GameState.to_dict`): its game, as for a save.

One reader, :func:`read_saved`, reads every saved file for every caller
(``tapa-ai play --load`` and its ``load`` command, ``tapa-ai analyse``, the
engine's ``analyse`` command), so that a file gets the same verdict everywhere:
its shape is checked by its declared schema (``tapa_ai/schemas/saved_game.json``,
docs/schemas.md: types, ranges, lengths, known keys), then every game is
**replayed** through the game flow (:class:`tapa_ai.flow.GameState`) from its
start: each move must be legal with its dice, each cube action allowed, the
readable fields of a save must say what its state says, so a corrupt or
hand-edited record is refused with the game, the event and the reason. Reading
a file is bounded (:data:`MAX_FILE_BYTES`, :data:`MAX_NESTING`).

Kept whole: the one reader of every saved format and the one replay they all share (the match files of
:mod:`tapa_ai.matchfiles` too); split, each format would need the replay's internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..arena.recorded_games import GAMES_FORMAT
from ..errors import TapaError
from ..flow import Event, FlowError, GameState, MatchState
from ..flow.saved_state import check_results, match_at, saved_state
from ..flow.rotation import RotationMatch
from ..matchfiles import is_match_file, load_record
from ..notation.json_file import MAX_FILE_BYTES, MAX_NESTING, JsonFileError, nesting, read_json_file
from ..notation.json_position import position_from_json, result_from_json
from ..rules.options import RuleOptions, RulesError, variant_rules
from ..rules.position import SIDES, GameResult, Position
from ..rules.rotations import ROTATIONS, Rotation, RotationError, rotation_from_data
from ..quoting import quoted
from ..schema import check

PLAY_FORMAT = "tapa-ai/play"
MAX_GAMES = 100_000
"""The most games one file may hold (the bound of ``games`` in ``tapa_ai/schemas/saved_game.json``)."""

__all__ = ["RecordError", "Turn", "RecordedGame", "Record", "SavedFile", "read_record", "record_from_json",
           "read_saved", "MAX_FILE_BYTES"]


class RecordError(TapaError, ValueError):
    """A record that cannot be read or replayed; the message says where and why, in one line."""


@dataclass(frozen=True)
class Turn:
    """One event of a replayed game: a move (with the position before it) or a cube action."""

    index: int
    """1, 2, ...: the event's number in its game (moves and cube actions; opening rolls are not counted)."""
    side: str
    """Who acted: the mover, the doubler, the side taking or passing."""
    action: str
    """``move``, ``double``, ``take`` or ``drop``."""
    position: Position
    """The position when it acted (for a move: before it, its side to move; for a cube action: before the roll)."""
    dice: Optional[tuple[int, int]] = None
    """A move's dice."""
    move: Optional[str] = None
    """A move's text in the mover's numbering (``""``: no legal move, a pass)."""
    after: Optional[Position] = None
    """A move's resulting position (the mover's turn still; ``result`` set when it ended the game)."""
    cube: int = 1
    """The cube's value before the event (a double offers twice it)."""
    opening: bool = False
    """The dice are the opening roll's (``use-opening-dice``: never a double)."""
    cube_owner: Optional[str] = None
    """Who owned the cube before the event (None: centred)."""
    may_double: bool = False
    """A move's mover could have doubled before this roll, and rolled: a decision not to double."""


@dataclass(frozen=True)
class RecordedGame:
    """One game as replayed: who played which side, its turns, how it ended."""

    number: int
    rules: RuleOptions
    players: dict[str, str]
    """The player of each side, ``{"X": ..., "O": ...}``."""
    turns: tuple[Turn, ...]
    result: Optional[GameResult]
    """How it ended (None: not over); ``points`` times ``cube`` is the score."""
    cube: int
    """The cube at the end."""
    ending: str
    """``move`` (a move ended it), ``drop`` (a passed double), ``resigned``, ``unfinished``."""
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    """The match score (X, O) before the game."""
    crawford: bool = False
    """The game is a match's Crawford game (no doubling)."""

    @property
    def moves(self) -> list[Turn]:
        return [turn for turn in self.turns if turn.action == "move"]


@dataclass(frozen=True)
class Record:
    """The games of one file (or request), all of one rule set, but for a rotation's match (:attr:`rotation`)."""

    source: str
    """Where it comes from, in words: ``a game saved by tapa-ai play``, ``games of tapa-ai match`` ..."""
    rules: RuleOptions
    games: tuple[RecordedGame, ...]
    players: dict[str, str]
    """The file's players by key (the arena's A and B), or by side."""
    cube: bool = False
    """The games were played with the cube, so a roll without a double where one was allowed was a decision:
    ``tapa-ai play``'s saves and game or match snapshots (the rules having a cube), a games file where a game
    has a cube action (the arena's and the web board's games are played without it)."""
    rotation: Optional[Rotation] = None
    """The rotation of a rotation's match (Tavli, Tabla ...; docs/rules.md 9; None: not one): each game's
    :attr:`RecordedGame.rules` is its own variant's, :attr:`rules` the first game's."""
    length: int = 0
    """The points of a rotation's match (0: not one)."""


def read_record(path: str | Path) -> Record:
    """The record in file ``path``; :class:`RecordError` (one line) for anything unreadable."""
    if is_match_file(path):  # GNU Backgammon's .sgf, the .mat text (tapa_ai.matchfiles, docs/match-files.md)
        return load_record(path, record_from_json, RecordError)
    try:
        data = read_json_file(path, "a game record")
    except JsonFileError as error:
        raise RecordError(str(error)) from None
    return record_from_json(data, str(path))


def record_from_json(data: Any, where: str = "record") -> Record:
    """The record of parsed JSON: a ``tapa-ai/play`` save, a ``tapa-ai/games`` file, a game or match snapshot
    (read by :func:`read_saved`, the one reader of saved files); :class:`RecordError` when it has no moves."""
    saved = read_saved(data, where)
    if saved.record is None:
        raise RecordError(saved.no_record)
    return saved.record


# -- the one reader of saved files ---------------------------------------------------------------------------
SAVED_SCHEMA = "saved_game"
"""The schema of every saved file (``tapa_ai/schemas/saved_game.json``), one ``$defs`` entry per format."""

ROTATION_MATCH_FORMAT = "tapa-ai/rotation-match"
"""The web board's *Save game* of a rotation's match (docs/analysis.md): its ``rotation`` as
:meth:`~tapa_ai.rules.rotations.Rotation.to_data` writes it."""
TAVLI_MATCH_FORMAT = "tapa-ai/tavli-match"
"""The web board's *Save game* of a Tavli match before rotations were data (read as the Tavli rotation)."""
_DEFINITIONS = {PLAY_FORMAT: "play_save", GAMES_FORMAT: "games_file", "tapa-ai/match": "match",
                "tapa-ai/game": "game", ROTATION_MATCH_FORMAT: "rotation_match_file",
                TAVLI_MATCH_FORMAT: "tavli_match_file"}


@dataclass(frozen=True)
class SavedFile:
    """A saved file read whole by :func:`read_saved`: its shape checked by its schema, every game replayed."""

    format: str
    """``tapa-ai/play``, ``tapa-ai/games``, ``tapa-ai/match``, ``tapa-ai/game``, or ``position`` (a bare JSON
    position)."""
    data: dict
    """The file's JSON (of the declared shape)."""
    match: Any = None
    """The state to continue: a :class:`~tapa_ai.flow.MatchState`, or a
    :class:`~tapa_ai.flow.rotation.RotationMatch` for a saved rotation's match; None for a ``tapa-ai/games`` record (finished games, nothing to continue)."""
    start: Optional[Position] = None
    """Where the current game began, when not at its variant's start (a play save's ``start``)."""
    record: Optional[Record] = None
    """The games replayed, for analysis; None when there are none (:attr:`no_record` says why)."""
    no_record: str = ""


def read_saved(data: Any, where: str = "file") -> SavedFile:
    """The one reader of saved games and matches (``tapa-ai play --load`` and ``load``, ``tapa-ai analyse``, the
    engine's ``analyse``): the shape by the schema :data:`SAVED_SCHEMA`, then the content by the rules: every
    game replayed from its start (each move legal with its dice, each cube action allowed), the readable fields
    of a save equal to its state, a rotation's match's rotation, openers, results and score. :class:`RecordError`,
    one line naming the place, for anything else."""
    if nesting(data) > MAX_NESTING:
        raise RecordError(f"{where}: nests arrays or objects more than {MAX_NESTING} deep: not a saved game")
    if not isinstance(data, dict):
        raise RecordError(f"{where}: must be a JSON object (a saved game, a game record or a position), got "
                          f"{type(data).__name__}")
    fmt = data.get("format")
    try:
        if fmt is None and "points" in data:
            check(data, "protocol", "position", where, RecordError)
            match = match_at(data, {}, where)
            return SavedFile("position", data, match, None, None,
                             f"{where}: a position, not a game: there are no moves to analyse")
        definition = _DEFINITIONS.get(fmt) if isinstance(fmt, str) else None
        if definition is None:
            raise RecordError(f"{where}.format: {quoted(fmt, 40)} is not a game record; expected {PLAY_FORMAT!r} "
                              f"(tapa-ai play's save), {GAMES_FORMAT!r} (games), {ROTATION_MATCH_FORMAT!r} or "
                              f"{TAVLI_MATCH_FORMAT!r} (the web board's match), a tapa-ai/match or tapa-ai/game "
                              "snapshot, or a JSON position (docs/analysis.md)")
        check(data, SAVED_SCHEMA, definition, where, RecordError)
        if fmt == GAMES_FORMAT:
            return SavedFile(fmt, data, record=_games_file(data, where))
        if fmt in (ROTATION_MATCH_FORMAT, TAVLI_MATCH_FORMAT):
            return SavedFile(fmt, data, record=_rotation_match_file(data, where))
        if fmt == PLAY_FORMAT:
            return _play_save(data, where)
        match = MatchState.from_dict(data, where) if fmt == "tapa-ai/match" else \
            MatchState(GameState.from_dict(data, where))
        check_results(match, where)
        players = {"X": "X", "O": "O"}
        inner = f"{where}.game" if fmt == "tapa-ai/match" else where
        if not match.game.history:
            return SavedFile(fmt, data, match, None, None,
                             f"{inner}.history: no moves to analyse (the game has not begun)")
        record = Record(f"a {fmt[len('tapa-ai/'):]} snapshot", match.rules, (_current_game(match, players, inner),),
                        players, match.rules.cube)
        return SavedFile(fmt, data, match, None, record)
    except RecordError:
        raise
    except RulesError as error:  # FlowError, SnapshotError, PositionError: they name the place
        raise RecordError(str(error)) from None


# -- tapa-ai play's saves ------------------------------------------------------------------------------
def _play_save(data: dict, where: str) -> SavedFile:
    match, start = saved_state(data, where)
    players = _save_players(data)
    if isinstance(match, RotationMatch):
        record, why = _rotation_save(data, match, players, where)
        return SavedFile(PLAY_FORMAT, data, match, None, record, why)
    if "match" not in data:
        return SavedFile(PLAY_FORMAT, data, match, None, None,
                         f"{where}: a hand-written position file without 'match': there are no moves to analyse")
    if not match.game.history:
        return SavedFile(PLAY_FORMAT, data, match, start, None,
                         f"{where}.match.game.history: no moves to analyse (the game has not begun)")
    game = _current_game(match, players, f"{where}.match.game", start)
    return SavedFile(PLAY_FORMAT, data, match, start,
                     Record("a game saved by tapa-ai play", match.rules, (game,), players, match.rules.cube))


def _save_players(data: dict) -> dict[str, str]:
    """The player of each side of a ``tapa-ai play`` save: ``human`` and the saved bot spec."""
    human, bot = data.get("human"), data.get("bot")
    bot_name = bot if isinstance(bot, str) and bot else "the bot"
    if human is None:
        return {"X": "X", "O": "O"}
    return {human: "human", ("O" if human == "X" else "X"): bot_name}


def _rotation_save(data: dict, match: RotationMatch, players: dict[str, str], where: str
                   ) -> tuple[Optional[Record], str]:
    """Every game of a saved rotation's match, each replayed with its own variant's rules at the score before
    it."""
    state = match.match
    key = "rotation_match" if "rotation_match" in data else "tavli"
    name = match.rotation.match_name()
    games = []
    score = [0, 0]
    for number, game in enumerate(match.played + (state.game,), start=1):
        if not game.history:
            continue  # the current game has not begun
        if game.is_over and game.winner is not None:
            score[SIDES.index(game.winner)] += game.points_won
        at = MatchState(game, state.length, (score[0], score[1]), number)  # the score after it, as a save has it
        inner = f"{where}.{key}.played[{number - 1}].game" if number < state.game_number else f"{where}.match.game"
        games.append(_current_game(at, players, inner))
    if not games:
        return None, f"{where}: the {name} has not begun: there are no moves to analyse"
    return Record(f"a {name} to {state.length} saved by tapa-ai play", match.rotation.rules(1), tuple(games),
                  players, False, match.rotation, state.length), ""


def _rotation_match_file(data: dict, where: str) -> Record:
    """The web board's saved rotation's match (``tapa-ai/rotation-match``; a ``tapa-ai/tavli-match`` is the Tavli
    rotation's): every game replayed with its own variant's rules (the rotation by the game's number), the score
    before each and the match's score and winner those the results make."""
    if data["format"] == TAVLI_MATCH_FORMAT:
        rotation = ROTATIONS["tavli"]
        if data.get("rotation", list(rotation.variants)) != list(rotation.variants):
            raise RecordError(f"{where}.rotation: a {TAVLI_MATCH_FORMAT} file is of {list(rotation.variants)}, got "
                              f"{quoted(data['rotation'], 60)}")
    else:
        try:
            rotation = rotation_from_data(data["rotation"], f"{where}.rotation")
        except RotationError as error:
            raise RecordError(str(error)) from None
    name = rotation.match_name()
    length, players, score, games = data["length"], data.get("players", {}), [0, 0], []
    for index, item in enumerate(data["games"]):
        inner, rules = f"{where}.games[{index}]", rotation.rules(index + 1)
        if item.get("variant", rules.name) != rules.name or item.get("number", index + 1) != index + 1:
            raise RecordError(f"{inner}: game {index + 1} of the {name} is {rules.name} (the rotation "
                              f"{', '.join(rotation.variants)}), got game {quoted(item.get('number'), 20)} of "
                              f"{quoted(item.get('variant'), 20)}")
        if item.get("score", {"X": score[0], "O": score[1]}) != {"X": score[0], "O": score[1]}:
            raise RecordError(f"{inner}.score: {quoted(item['score'], 60)}, but the games before it make X "
                              f"{score[0]}, O {score[1]}")
        if max(score) >= length:
            raise RecordError(f"{inner}: a game after the match to {length} was won")
        if not item["history"]:
            continue  # the current game, not begun
        game = _game_entry({**item, "match_length": length}, rules, players, inner, index + 1)
        games.append(game)
        if game.result is not None and game.result.winner is not None:
            score[SIDES.index(game.result.winner)] += game.result.points
    winner = next((side for side, points in zip(SIDES, score) if points >= length), None)
    if data["score"] != {"X": score[0], "O": score[1]} or data.get("winner", winner) != winner:
        raise RecordError(f"{where}.score: X {data['score']['X']}, O {data['score']['O']} (winner "
                          f"{data.get('winner')}), but the games make X {score[0]}, O {score[1]} (winner {winner})")
    if not games:
        raise RecordError(f"{where}: the {name} has not begun: there are no moves to analyse")
    return Record(f"a {name} to {length} saved by the web board", rotation.rules(1), tuple(games), players,
                  False, rotation, length)


def _current_game(match: MatchState, players: dict[str, str], where: str,
                  start: Optional[Position] = None) -> RecordedGame:
    """The current game of a match snapshot, replayed from its start (``start``, else its variant's start) and
    checked against the saved state.

    ``where``: the place of the game snapshot in the file (``file.match.game``).
    """
    game = match.game
    history = game.history
    score = list(match.score)
    if game.is_over and game.winner is not None:
        score[SIDES.index(game.winner)] -= game.points_won  # the score before this game
    try:
        replayed = _replay(game.rules, start, history, match.game_number, players, f"{where}.history",
                           crawford=game.crawford, length=match.length, score=(score[0], score[1]))
    except RecordError as error:
        if "an illegal move" not in str(error) or start is not None or history[0].action == "opening":
            raise
        raise RecordError(f"{error} (a game that began from a loaded position is replayed from the save's "
                          "'start', which this file does not have)") from None
    moves = replayed.moves
    if moves and _board(moves[-1].after) != _board(game.position):
        raise RecordError(f"{where}: the saved history does not lead to the saved position (a game that began from "
                          "a loaded position is replayed from the save's 'start')")
    if replayed.cube != game.cube_value:
        raise RecordError(f"{where}.cube: {game.cube_value} disagrees with the history, which leaves the cube at "
                          f"{replayed.cube}")
    if game.is_over and replayed.result is None:  # resigned: the play session ends the game without an event
        return RecordedGame(replayed.number, replayed.rules, players, replayed.turns, game.result,
                            game.cube_value, "resigned", match.length, replayed.score, replayed.crawford)
    if replayed.result is not None and not game.is_over:
        raise RecordError(f"{where}.phase: {game.phase!r}, but the history ends the game")
    return replayed


def _board(position: Position) -> tuple:
    return position.points, position.off, position.bar


# -- tapa-ai/games files -------------------------------------------------------------------------------
def _games_file(data: dict, where: str) -> Record:
    """A ``tapa-ai/games`` record, its shape checked by the schema (a known variant, players' names, 1 to
    :data:`MAX_GAMES` games): each game replayed."""
    variant = data["variant"]
    rules = variant_rules(variant)
    if "rules" in data:
        try:
            file_rules = RuleOptions.from_dict(data["rules"])
        except (RulesError, TypeError, AttributeError) as error:
            raise RecordError(f"{where}.rules: {error}") from None
        if file_rules.name != rules.name:
            raise RecordError(f"{where}.rules: the rules of {quoted(file_rules.name)} disagree with variant "
                              f"{quoted(variant)}")
        rules = file_rules
    players, games = data.get("players", {}), data["games"]
    read = tuple(_game_entry(item, rules, players, f"{where}.games[{i}]", i + 1) for i, item in enumerate(games))
    source = data.get("source")
    if isinstance(source, str) and source:
        source = f"{'games' if len(read) > 1 else 'a game'} of {source[:100]}"
    else:
        source = "game records" if len(read) > 1 else "a game record"
    cube = any(turn.action != "move" for game in read for turn in game.turns)
    return Record(source, rules, read, dict(players), cube)


def _game_entry(item: dict, rules: RuleOptions, players: dict[str, str], where: str, default_number: int
                ) -> RecordedGame:
    """One game of a record, its shape checked by the schema (``games_entry``): replayed."""
    number = item.get("number", default_number)
    sides = item.get("players", {"X": "X", "O": "O"})
    if item.get("variant", rules.name) != rules.name:
        raise RecordError(f"{where}.variant: a {item['variant']} game in a {rules.name} record")
    named = {side: (f"{key} {players[key]}" if key in players else key) for side, key in sides.items()}
    length = item.get("match_length", 0)
    score = item.get("score", {"X": 0, "O": 0})
    if length and max(score.values()) >= length:
        raise RecordError(f"{where}.score: X {score['X']}, O {score['O']} before a game of a match to {length}: "
                          "a side that has reached the length has won the match, which has no more games")
    start = None
    if item.get("start") is not None:
        start = position_from_json(item["start"], f"{where}.start")
        if start.rules != rules:
            raise RecordError(f"{where}.start: a {start.rules.name} position in a {rules.name} record")
    history = item.get("history")
    if not isinstance(history, list):
        raise RecordError(f"{where}.history: must be a list of events")
    events = tuple(Event.from_dict(event, f"{where}.history[{i}]") for i, event in enumerate(history))
    game = _replay(rules, start, events, number, named, f"{where}.history", crawford=bool(item.get("crawford")),
                   length=length, score=(score["X"], score["O"]))
    result = item.get("result")
    if result is not None:
        stated = result_from_json(result, f"{where}.result")
        if game.result is not None and game.ending == "move" and stated != game.result:
            raise RecordError(f"{where}.result: {quoted(result)} disagrees with the moves, which end in "
                              f"{game.result.winner} winning a {game.result.kind}")
        if game.result is None:
            game = RecordedGame(game.number, game.rules, game.players, game.turns, stated, game.cube, "resigned",
                                game.match_length, game.score, game.crawford)
    return game


# -- replaying ------------------------------------------------------------------------------------------
def _replay(rules: RuleOptions, start: Optional[Position], events, number: int, players: dict[str, str],
            where: str, crawford: bool = False, length: int = 0, score: tuple[int, int] = (0, 0)) -> RecordedGame:
    """Play ``events`` through the game flow from the game's start; RecordError at the first bad one."""
    if not events:
        raise RecordError(f"{where}: no moves to analyse (the game has not begun)")
    first = events[0]
    try:
        if first.action == "opening":
            if start is not None:
                raise RecordError(f"{where}[0]: a game from a given start position has no opening roll")
            state = GameState.new(rules, crawford=crawford)
        else:
            opener = first.side if start is None else start.turn
            state = GameState.new(rules, opener=opener, crawford=crawford, position=start)
    except FlowError as error:
        raise RecordError(f"{where}: {error}") from None
    turns: list[Turn] = []
    opening_dice = False
    for i, event in enumerate(events):
        here = f"{where}[{i}]"
        try:
            if event.action == "opening":
                if state.phase != "opening":
                    raise RecordError(f"{here}: an opening roll after the game began")
                state = state.rolled(event.dice)
                opening_dice = state.phase == "move"
                continue
            if state.is_over:
                raise RecordError(f"{here}: the game is already over ({state.result.winner or 'nobody'} won); "
                                  "the record goes on (corrupt?)")
            if event.action == "move":
                what = f"{event.side} {event.dice[0]}-{event.dice[1]} {quoted(event.move, 40)}"
                could_double = state.phase == "roll" and state.may_double
                if state.phase == "roll":
                    state = state.rolled(event.dice, event.side)
                elif state.phase != "move":
                    raise RecordError(f"{here} ({what}): a move while {state.side_to_act} is to "
                                      f"{'take or pass a double' if state.phase == 'double' else 'roll'}")
                elif sorted(state.dice) != sorted(event.dice):
                    given = ("the cascade's stage is" if state.position.cascade is not None
                             else "the opening roll gave")
                    raise RecordError(f"{here} ({what}): {given} {state.dice[0]}-{state.dice[1]}")
                before, cube, owner = state.position, state.cube_value, state.cube_owner
                try:
                    state = state.play(event.move, event.side)
                except FlowError as error:
                    reason, listed, legal = str(error).partition("; legal moves: ")
                    if listed:  # the first of the legal moves, not all of them
                        reason += f" ({legal.count(',') + 1} legal moves, e.g. {legal.split(', ')[0]})"
                    raise RecordError(f"{here} ({what}): an illegal move: {reason}") from None
                after = state.position if state.is_over else state.position.with_changes(turn=event.side)
                turns.append(Turn(len(turns) + 1, event.side, "move", before, state.history[-1].dice,
                                  state.history[-1].move, after, cube, opening_dice, owner, could_double))
                opening_dice = False
            else:
                before, cube, owner = state.position, state.cube_value, state.cube_owner
                state = getattr(state, event.action)(event.side)
                turns.append(Turn(len(turns) + 1, event.side, event.action, before, cube=cube, cube_owner=owner))
        except RecordError:
            raise
        except FlowError as error:
            raise RecordError(f"{here} ({event.action} by {event.side or 'both'}): {error}") from None
    ending = "unfinished"
    if state.is_over:
        ending = "drop" if state.dropped else "move"
    return RecordedGame(number, rules, dict(players), tuple(turns), state.result, state.cube_value, ending,
                        length, score, crawford)
