"""The engine's ``read_match`` command: a match file's text read, replayed and answered in the web board's form.

``{"cmd": "read_match", "name": "match3.sgf", "text": "(;FF[4]GM[6]..."}`` (docs/protocol.md, ``read_match``)
reads the text with the project's one reader of match and game files, as ``tapa-ai analyse FILE`` and
``tapa-ai play --load FILE`` read a file:

- GNU Backgammon's SGF and the .mat text (and the variants' extension of them, docs/match-files.md) through
  :mod:`tapa_ai.matchfiles` (:func:`~tapa_ai.matchfiles.parse_match_text`, then
  :func:`~tapa_ai.matchfiles.replay_match`: an error names the file, the game and the move);
- the project's own JSON records (the web board's ``tapa-ai/games`` and ``tapa-ai/rotation-match``, a
  ``tapa-ai/play`` save, a game or match snapshot) through :func:`tapa_ai.analysis.records.read_saved`;

then plays the games through the flow to where the match stands
(:func:`tapa_ai.analysis.match_state.match_file_state`, the same as ``tapa-ai play --load``) and answers the
games as the web board's own record (the ``tapa-ai/games`` or ``tapa-ai/rotation-match`` document its *Save
game* writes) with the match's length, score, Crawford game, and the last game's state: over, or its position,
phase, dice, side to act and cube.

The format is the name's (``.sgf``, ``.mat``; ``.json``), or for any other name (``.txt`` ...) the text's first
characters (an SGF game tree ``(;``, a ``N point match`` or ``Game 1`` line, a JSON object). A match the board
cannot play (rule options other than its variant's, a rotation with options changed, a match longer than
:data:`~tapa_ai.cube.met.MAX_MATCH_LENGTH` points) is refused in one line naming it. Bounded: the text is at
most the protocol's :data:`~tapa_ai.engine.protocol.MAX_REQUEST_BYTES` (the request's own limit over HTTP and
stdin).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..analysis.analyzer import AnalysisError
from ..analysis.match_state import match_file_state
from ..analysis.records import ROTATION_MATCH_FORMAT, RecordError, read_saved
from ..arena.recorded_games import GAMES_FORMAT
from ..cube.met import MAX_MATCH_LENGTH
from ..flow import MatchState
from ..flow.rotation import RotationMatch
from ..matchfiles import (WRITTEN_SUFFIXES, MatchFileError, from_record, parse_match_text, replay_match, text_kind,
                          to_document)
from ..notation.json_position import position_to_json, result_to_json
from ..rules.options import RulesError, variant_rules

__all__ = ["MatchReadError", "answer_read_match", "MAX_MATCH_TEXT_BYTES", "BOARD_SOURCE"]

MAX_MATCH_TEXT_BYTES = 64 * 1024
"""The longest text read (UTF-8 bytes): the protocol's request limit (``protocol.MAX_REQUEST_BYTES``)."""
BOARD_SOURCE = "the web board"
"""The ``source`` of the web board's own records (app.js ``gameRecord``, ``rotationRecord``)."""


class MatchReadError(AnalysisError):
    """A text that cannot be opened: one line naming the file (and the game and the move); an
    :class:`~tapa_ai.analysis.analyzer.AnalysisError`, which the engine answers as a bad request."""


def _kind(name: str, text: str) -> str:
    """``sgf``, ``mat`` or ``json``: by the name's suffix, else by the text's first characters
    (:func:`tapa_ai.matchfiles.text_kind`, as :func:`~tapa_ai.matchfiles.is_match_file` decides for a file)."""
    lower = name.lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(WRITTEN_SUFFIXES):
        return "sgf" if text.lstrip("\ufeff \t\r\n").startswith("(") else "mat"
    kind = text_kind(text)
    if kind is not None:
        return kind
    raise MatchReadError(f"{name}: not a match file or a saved game: neither GNU Backgammon's SGF (a game tree "
                         "'(;...'), a .mat match (a 'N point match' or 'Game 1' line) nor a JSON record "
                         "(docs/match-files.md)")


def _json_state(name: str, text: str) -> tuple[dict, MatchState | RotationMatch, Any]:
    """The document, the state at its end and its replayed record (read_saved, then match_file_state) of a JSON
    record."""
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except (ValueError, RecursionError) as error:
        raise MatchReadError(f"{name}: not valid JSON ({error})") from None
    fmt = data.get("format") if isinstance(data, dict) else None
    try:
        saved = read_saved(data, name)
        if fmt in (GAMES_FORMAT, ROTATION_MATCH_FORMAT, "tapa-ai/tavli-match"):
            # The web board's own records and the arena's: their games as they are, played through the flow.
            state = match_file_state(data, name, saved.record)
            if fmt == "tapa-ai/tavli-match":  # the Tavli match saved before rotations were data
                data = {**data, "format": ROTATION_MATCH_FORMAT, "rotation": "tavli"}
            return data, state, saved.record
    except (RecordError, RulesError) as error:
        raise MatchReadError(str(error)) from None
    if saved.record is None:
        raise MatchReadError(f"{saved.no_record}: nothing to open on the board, which opens games and matches")
    try:  # a tapa-ai/play save, a game or match snapshot: its games written as a document, as --export does
        document = to_document(from_record(saved.record), saved.record.source)
    except MatchFileError as error:
        raise MatchReadError(f"{name}: {error}") from None
    return document, saved.match, saved.record


def _board_game(item: dict, number: int, length: int, rotation: bool) -> dict[str, Any]:
    """A game of a document as the web board records one (app.js ``newGame``'s entry)."""
    players = item.get("players") or {}
    entry: dict[str, Any] = {"number": item.get("number", number),
                             "players": {"X": str(players.get("X", "X")), "O": str(players.get("O", "O"))}}
    if not rotation:
        entry["match_length"] = item.get("match_length", length)
    score = item.get("score", {"X": 0, "O": 0})
    entry["score"] = {"X": score["X"], "O": score["O"]}
    entry["history"] = [dict(event) for event in item["history"]]
    result = item.get("result")
    entry["result"] = None if result is None else {key: result.get(key) for key in ("winner", "kind", "points")}
    if rotation:
        entry["variant"] = item["variant"]
    elif item.get("crawford"):
        entry["crawford"] = True
    return entry


def _playable(name: str, document: dict, state: MatchState | RotationMatch) -> None:
    """A match the board cannot play, refused in one line naming it."""
    length = state.length
    if length > MAX_MATCH_LENGTH:
        raise MatchReadError(f"{name}: a match to {length} points: the board plays matches to at most "
                             f"{MAX_MATCH_LENGTH} (the match equity tables' reach)")
    if isinstance(state, RotationMatch):
        data = state.rotation.to_data()
        if not isinstance(data, str) and not all(isinstance(game, str) for game in data):
            raise MatchReadError(f"{name}: a {state.rotation.match_name()} of games with rule options changed "
                                 f"({json.dumps(data)[:120]}): the board plays a preset rotation or a list of the "
                                 "family's games, each with its variant's options")
        return
    rules = state.rules
    changed = sorted(rules.changes_from(variant_rules(rules.name)))
    if changed:
        raise MatchReadError(f"{name}: a {rules.name} match with rule options other than {rules.name}'s "
                             f"({', '.join(changed)}): the board plays each variant with its own options only")


def _game_state(state: MatchState) -> dict[str, Any]:
    game = state.game
    result = None if game.result is None else result_to_json(game.result)
    return {"number": state.game_number, "variant": game.rules.name, "over": game.is_over, "phase": game.phase,
            "turn": game.side_to_act if not game.is_over else None,
            "dice": list(game.dice) if game.dice is not None else None,
            "cube": {"value": game.cube_value, "owner": game.cube_owner}, "crawford": game.crawford,
            "result": result, "position": position_to_json(game.position)}


def _next_game(state: MatchState | RotationMatch) -> Optional[dict[str, Any]]:
    """The game the match goes on with once its last game is over (None: not over, or the match is)."""
    if not state.game.is_over or state.is_over:
        return None
    following = state.start_next_game()
    game = following.game
    return {"number": following.game_number, "variant": game.rules.name, "crawford": game.crawford,
            "opener": None if game.phase == "opening" else game.position.turn}


def answer_read_match(request: dict) -> dict[str, Any]:
    """The answer to a ``read_match`` request (keys and types: its schema); :class:`MatchReadError` for a text
    that cannot be opened."""
    name = request.get("name") or "file"
    text = request["text"]
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_MATCH_TEXT_BYTES:
        raise MatchReadError(f"{name}: the text is {size:,} bytes, more than the {MAX_MATCH_TEXT_BYTES:,} "
                             "one request may send (a match file without gnubg's analysis is a few kilobytes)")
    if not text.strip("\ufeff \t\r\n"):
        raise MatchReadError(f"{name}: the text is empty: nothing to open")
    kind = _kind(name, text)
    if kind == "json":
        document, state, record = _json_state(name, text)
    else:

        def replay(document: dict, where: str) -> tuple:
            replayed = read_saved(document, where).record
            return document, match_file_state(document, where, replayed), replayed

        try:
            document, state, record = replay_match(parse_match_text(text, name, kind), name, replay)
        except MatchFileError as error:
            raise MatchReadError(str(error)) from None
    _playable(name, document, state)
    rotation = isinstance(state, RotationMatch)
    games = [_board_game(item, index + 1, state.length, rotation) for index, item in enumerate(document["games"])
             if item["history"]]
    # Each game's result as the replay finds it (a game a drop ends, or that the moves end, has none in the file):
    # the board's record holds the result of every finished game.
    replayed = {game.number: game for game in record.games}
    for entry in games:
        game = replayed.get(entry["number"])
        if game is not None and game.result is not None:
            entry["result"] = result_to_json(game.result)
    if not games:
        raise MatchReadError(f"{name}: no game has begun: nothing to open")
    if rotation:
        record = {"format": ROTATION_MATCH_FORMAT, "version": 1, "source": BOARD_SOURCE,
                  "rotation": state.rotation.to_data(), "length": state.length,
                  "score": {"X": state.score[0], "O": state.score[1]}, "winner": state.winner,
                  "players": dict(games[-1]["players"]), "games": games}
        current = state.match
    else:
        record = {"format": GAMES_FORMAT, "version": 1, "variant": state.rules.name, "source": BOARD_SOURCE,
                  "players": {}, "games": games}
        current = state
    return {"name": name, "kind": kind, "record": record,
            "variant": None if rotation else state.rules.name,
            "rotation": state.rotation.to_data() if rotation else None,
            "length": state.length, "score": {"X": state.score[0], "O": state.score[1]},
            "games": len(games), "post_crawford": current.post_crawford,
            "match_over": state.is_over, "winner": state.winner,
            "game": _game_state(current), "next": _next_game(state)}

