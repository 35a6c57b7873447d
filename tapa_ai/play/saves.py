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

A rotation's match (``tapa-ai play --tavli N``, ``--tabla N``, ``--rotation GAMES --length N``) adds
``rotation_match``: its length, its rotation (:meth:`~tapa_ai.rules.rotations.Rotation.to_data`: a preset's
name, ``"tavli"`` or ``"tabla"``, or the list of games) and its finished games, each with its variant and whole
game snapshot (history included); ``match`` and the fields before it are then the current game's (its variant,
the match score, the game number)::

     "rotation_match": {"format": "tapa-ai/rotation", "version": 1, "length": 3, "rotation": "tabla",
                        "played": [{"number": 1, "variant": "backgammon", "game": {...}}]}

``rotation_match`` and ``match`` load together as a
:class:`~tapa_ai.flow.rotation.RotationMatch` (:meth:`~tapa_ai.flow.rotation.RotationMatch.from_dict`:
every game of its variant, the results, the score and the openers checked). Saves of a Tavli match written
before rotations were data hold the same under ``tavli`` (format ``tapa-ai/tavli``, ``"rotation": ["portes",
"plakoto", "fevga"]``): they load as the Tavli rotation's match.

``match`` is the whole state (:meth:`tapa_ai.flow.MatchState.to_dict`)
and is what loading uses; the fields before it are the same facts in
readable form and must agree with it. ``rng`` continues the same dice after a
load. ``start``, written only for a game that began from a loaded position, is
that position, from which the game's history is replayed. A hand-written file
may leave out ``match`` (and anything else but ``position``): the game then
starts from ``position`` with ``dice`` if given (else the side to move is to
roll), the cube, ``score`` and ``match_length``. A bare JSON position file
loads the same way; so do game and match snapshots (``tapa-ai/game``,
``tapa-ai/match``).

Loading goes through :func:`tapa_ai.analysis.records.read_saved`, the one
reader of saved files that ``tapa-ai analyse`` and the engine's ``analyse`` use
too: the shape by the declared schema ``tapa_ai/schemas/saved_game.json``
(``play_save``: rotation and match lengths 1 to 25, scores, dice, moves as bounded
strings, the generators' 128-bit states ...), then every game replayed through
the rules. A file gets the same verdict from every command.

A **match file** (GNU Backgammon's SGF, the .mat text, the variants' extension of them: docs/match-files.md)
loads too: :func:`read_file` reads it through :mod:`tapa_ai.matchfiles` into the project's own record document
(``tapa-ai/games``, or ``tapa-ai/rotation-match`` for a rotation's match), which
:func:`~tapa_ai.analysis.records.read_saved` replays whole (an error names the file, the game and the move), and
:func:`match_file_state` then plays its games through the flow to the state at the file's end: the last game's
position, cube and score, the match length, the Crawford game. A finished match, from any file, is one line
(:func:`finished_match`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..analysis.match_state import match_file_state
from ..analysis.records import RecordError, read_saved
from ..arena.recorded_games import GAMES_FORMAT
from ..errors import TapaError
from ..flow import GameState, MatchState
from ..flow.saved_state import readable_fields
from ..flow.rotation import RotationMatch
from ..matchfiles import WRITTEN_SUFFIXES
from ..notation.json_file import MAX_FILE_BYTES, MAX_NESTING, JsonFileError, read_json_file
from ..notation.json_position import position_to_json
from ..rules.options import RuleOptions
from ..rules.position import Position
from ..quoting import PATH_LIMIT, quoted

FORMAT = "tapa-ai/play"
VERSION = 1

__all__ = ["SaveError", "SavedGame", "save_game", "save_document", "load_game", "read_file", "read_match_save",
           "finished_match", "MAX_FILE_BYTES", "MAX_NESTING"]


class SaveError(TapaError, ValueError):
    """A file that cannot be written or loaded; the message says where and why."""


@dataclass
class SavedGame:
    """What a save file holds."""

    match: MatchState | RotationMatch
    """The match (a :class:`~tapa_ai.flow.rotation.RotationMatch` for a rotation's match)."""
    human: Optional[str] = None
    """The side the human played (None: not said)."""
    bot: Optional[str] = None
    """The bot spec it was played against (None: not said)."""
    seed: Optional[int] = None
    rng: Optional[dict] = None
    """Bit-generator states of the dice and the bot (numpy ``bit_generator.state``)."""
    start: Optional[Position] = None
    """Where the current game began when not at its variant's start (a loaded position): saved as ``start``,
    so that its history can be replayed."""

    @property
    def rules(self) -> RuleOptions:
        """The rules of the current game."""
        return self.match.rules

    @property
    def is_rotation(self) -> bool:
        """A rotation's match (Tavli, Tabla, ...)."""
        return isinstance(self.match, RotationMatch)


def save_game(path: str | Path, saved: SavedGame) -> Path:
    """Write ``saved`` to ``path``: as GNU Backgammon's SGF or the .mat text for a name ending in .sgf or .mat
    (the save's games as :func:`tapa_ai.matchfiles.from_record` writes them: what gnubg opens, what ``load``
    reads back to go on), else as JSON (atomically: a temporary file renamed)."""
    data = save_document(saved)
    path = Path(path)
    if path.suffix.lower() in WRITTEN_SUFFIXES:  # docs/match-files.md
        from ..matchfiles import MatchFileError, from_record, write_match_file

        try:
            return write_match_file(path, from_record(read_saved(data, str(path)).record))
        except (MatchFileError, RecordError) as error:
            raise SaveError(f"cannot write {quoted(str(path), PATH_LIMIT)} as {path.suffix.lower()[1:]}: "
                            f"{error}") from None
        except OSError as error:
            raise SaveError(f"cannot write {quoted(str(path), PATH_LIMIT)}: {error.strerror or error}") from None
    temporary = path.with_name(path.name + ".tmp")
    try:
        temporary.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        temporary.replace(path)
    except OSError as error:
        raise SaveError(f"cannot write {quoted(str(path), PATH_LIMIT)}: {error.strerror or error}") from None
    return path


def save_document(saved: SavedGame) -> dict[str, Any]:
    """The JSON document of ``saved`` (format ``tapa-ai/play``)."""
    match = saved.match.match if saved.is_rotation else saved.match
    summary = readable_fields(match)
    del summary["history"]
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
    if saved.is_rotation:
        rotation = saved.match.to_dict()
        del rotation["match"]  # it is the save's match
        data["rotation_match"] = rotation
    if saved.rng is not None:
        data["rng"] = saved.rng
    if saved.start is not None and not saved.is_rotation:
        data["start"] = position_to_json(saved.start)
    return data


def read_file(path: str | Path) -> Any:
    """The parsed JSON of ``path``, or :class:`SaveError` saying why not; for a match file
    (:func:`tapa_ai.matchfiles.is_match_file`: .sgf, .mat, a .txt of either), the :class:`SavedGame` at its end
    (:func:`read_match_save`), which :func:`load_game` hands on as it is.

    Bounded (:func:`tapa_ai.notation.json_file.read_json_file`): at most
    :data:`MAX_FILE_BYTES` are read and nesting deeper than :data:`MAX_NESTING`
    is refused.
    """
    from ..matchfiles import is_match_file

    if is_match_file(path):
        return read_match_save(path)
    try:
        return read_json_file(path, "a saved game or a position")
    except JsonFileError as error:
        raise SaveError(str(error)) from None


def load_game(data: Any, where: str = "file") -> SavedGame:
    """A :class:`SavedGame` from parsed JSON: a save file, a hand-written one, a game or match snapshot, or a bare
    position; read by :func:`tapa_ai.analysis.records.read_saved`, the one reader ``tapa-ai analyse`` uses too
    (the schema, then every game replayed), so that a file gets the same verdict from both. A match file's
    :class:`SavedGame` (what :func:`read_file` makes of one) is returned as it is."""
    if isinstance(data, SavedGame):
        return data
    try:
        saved = read_saved(data, where)
    except RecordError as error:
        raise SaveError(str(error)) from None
    if saved.match is None:
        raise SaveError(f"{where}: a record of games ({GAMES_FORMAT}: the web board's Save game, tapa-ai match "
                        "--record-games) is for tapa-ai analyse; tapa-ai play continues a game saved by its save "
                        "command, or starts from a JSON position")
    fields = saved.data if saved.format == FORMAT else {}
    return SavedGame(saved.match, fields.get("human"), fields.get("bot"), fields.get("seed"), fields.get("rng"),
                     saved.start)


# -- match files: GNU Backgammon's SGF and the .mat text (tapa_ai.matchfiles) ---------------------------------
def read_match_save(path: str | Path) -> SavedGame:
    """The match of match file ``path`` as a :class:`SavedGame` at the file's end (:func:`match_file_state`);
    :class:`SaveError`, one line naming the file, the game and the move, for a file that cannot be read or
    replayed."""
    from ..matchfiles import MatchFileError, read_match_file, replay_match

    try:
        state = replay_match(read_match_file(path), str(path), match_file_state)
    except MatchFileError as error:
        raise SaveError(str(error)) from None
    return SavedGame(state)


def finished_match(match: MatchState | RotationMatch) -> Optional[str]:
    """Why a loaded match cannot be played on, in words (``the match to 3 is over: X won it 3-0 ...``); None when
    it can."""
    if not match.is_over:
        return None
    x, o = match.score
    what = f"the {match.rotation.match_name()}" if isinstance(match, RotationMatch) else "the match"
    games = match.game_number
    return (f"{what} to {match.length} is over: {match.winner} won it {max(x, o)}-{min(x, o)} in {games} "
            f"game{'s' if games != 1 else ''}; there is nothing to play on (tapa-ai analyse FILE rates its games)")


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
