"""Match files of other programs, in and out: GNU Backgammon's SGF (``GM[6]``) and the .mat text format.

Reading (:func:`read_match_file`): a file becomes a :class:`~.model.MatchFile`,
whose games :func:`~.model.to_document` turns into the project's own record
document; :func:`load_record` has :mod:`tapa_ai.analysis.records` replay it
through the rules (its one replay), and an error names the file, the game and
the move (``m.mat: game 2, move 14 (O 5-2 '6/1 4/2'): an illegal move: ...``).
Writing (:func:`write_match_file`): a record (:func:`~.model.from_record`) or a
``tapa-ai/games`` document (:func:`~.model.from_document`) as .sgf or .mat.
The variants' extension and every quirk read: docs/match-files.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Optional

from ..notation.json_file import MAX_FILE_BYTES
from .mat import read_mat, write_mat
from .model import MatchFile, MatchFileError, MatchGame, from_document, from_record, to_document
from .sgf import read_sgf, write_sgf

__all__ = ["MatchFile", "MatchFileError", "MatchGame", "MATCH_SUFFIXES", "WRITTEN_SUFFIXES", "text_kind",
           "is_match_file", "read_match_file",
           "parse_match_text", "load_record", "write_match_file", "match_text", "from_document", "from_record",
           "to_document", "read_mat", "write_mat", "read_sgf", "write_sgf"]

MATCH_SUFFIXES = (".sgf", ".mat", ".txt")
WRITTEN_SUFFIXES = (".sgf", ".mat")
"""A file named so is a match file, read and written as SGF or the .mat text; other names are read by their text
(:func:`text_kind`)."""
_MAT_LINE = re.compile(r"^\s*(\d+ points? match|Game 1)\s*$", re.M | re.I)


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


def text_kind(text: str) -> Optional[str]:
    """What a file's text is by its first characters: ``json`` (an object or an array), ``sgf`` (a game tree
    ``(;``), ``mat`` (a ``N point match`` or ``Game 1`` line), or None."""
    head = text[:4096]
    stripped = head.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{") or stripped.startswith("["):
        return "json"
    if stripped.startswith("(;"):
        return "sgf"
    return "mat" if _MAT_LINE.search(head) else None


def is_match_file(path: str | Path) -> bool:
    """Whether ``path`` is read as a match file: by its name (.sgf, .mat), or by its first bytes for any other
    name (.txt ...: :func:`text_kind`), never a JSON file."""
    path = Path(path)
    return path.suffix.lower() in WRITTEN_SUFFIXES or text_kind(_head(path)) in ("sgf", "mat")


def parse_match_text(text: str, where: str, kind: str = "") -> MatchFile:
    """The match of a file's text: SGF when it begins with a game tree (or ``kind`` is ``sgf``), else .mat."""
    if kind == "sgf" or (kind != "mat" and text.lstrip("\ufeff \t\r\n").startswith("(")):
        return read_sgf(text, where)
    return read_mat(text, where)


def read_match_file(path: str | Path) -> MatchFile:
    """The match in file ``path`` (.sgf or .mat, by its content); :class:`MatchFileError`, one line."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise MatchFileError(f"cannot read {str(path)!r}: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise MatchFileError(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB: not a match file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_match_text(text, str(path))


_PLACE = re.compile(r"^(?P<where>.*?)\.games\[(?P<game>\d+)\](?:\.history\[(?P<event>\d+)\])?")


def load_record(path: str | Path, replay: Callable[[Any, str], Any], error: type = MatchFileError) -> Any:
    """The record of match file ``path``, its games replayed by ``replay`` (``record_from_json`` of
    :mod:`tapa_ai.analysis.records`); its errors, raised as ``error`` (one line), name the file's game and move
    instead of the document's place."""
    try:
        return replay_match(read_match_file(path), str(path), replay)
    except MatchFileError as failure:
        raise error(str(failure)) from None


def replay_match(match: MatchFile, where: str, replay: Callable[[Any, str], Any]) -> Any:
    """The record of ``match`` (read from ``where``), replayed by ``replay``; :class:`MatchFileError` naming the
    game and the move."""
    kind = "an SGF match" if str(where).lower().endswith(".sgf") else "a .mat match"
    document = to_document(match, f"{kind} ({Path(where).name})")
    try:
        return replay(document, where)
    except ValueError as error:  # RecordError
        message = str(error)
        place = _PLACE.match(message)
        if place is None:
            raise MatchFileError(message) from None
        game = match.games[int(place.group("game"))]
        label = f"game {game.number}"
        if place.group("event") is not None:
            event = int(place.group("event"))
            label += f", {game.labels[event]}" if event < len(game.labels) else ""
        raise MatchFileError(f"{where}: {label}{message[place.end():]}") from None


def match_text(match: MatchFile, kind: str) -> str:
    """``match`` as ``sgf`` or ``mat`` text."""
    return write_sgf(match) if kind == "sgf" else write_mat(match)


def write_match_file(path: str | Path, match: MatchFile) -> Path:
    """Write ``match`` to ``path``, as SGF for a name ending in .sgf, else as .mat."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(match_text(match, "sgf" if path.suffix.lower() == ".sgf" else "mat"), encoding="utf-8")
    return path
