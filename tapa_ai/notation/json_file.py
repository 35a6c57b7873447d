"""Reading a JSON file a user hands over (a saved game, a game record), bounded and with one-line errors.

The one reader behind ``tapa-ai play``'s ``load`` (:func:`tapa_ai.play.saves.read_file`) and
``tapa-ai analyse`` (:func:`tapa_ai.analysis.records.read_record`): at most :data:`MAX_FILE_BYTES`
are read (an endless or huge file is refused, not read to the end), the text must be UTF-8 JSON,
and arrays and objects may nest at most :data:`MAX_NESTING` deep (no ``RecursionError``). Every
refusal is a :class:`JsonFileError` whose message names the file and what it is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import TapaError
from ..quoting import PATH_LIMIT, quoted

MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest file read (a long match's save or record is well under 1 MB); reading stops there."""
MAX_NESTING = 64
"""The deepest nesting of arrays and objects a file may have (saves and records nest about 8 deep)."""

__all__ = ["JsonFileError", "read_json_file", "nesting", "MAX_FILE_BYTES", "MAX_NESTING"]


class JsonFileError(TapaError, ValueError):
    """A file that cannot be read as bounded JSON; the message is one line naming the file."""


def read_json_file(path: str | Path, what: str) -> Any:
    """The parsed JSON of file ``path``, or :class:`JsonFileError`.

    ``what``: what the file should be, for the messages ("a game record": "... is larger than
    16 MB: not a game record").
    """
    name = str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise JsonFileError(f"no file {quoted(name, PATH_LIMIT)}") from None
    except OSError as error:
        raise JsonFileError(f"cannot read {quoted(name, PATH_LIMIT)}: {error.strerror or error}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise JsonFileError(f"{quoted(name, PATH_LIMIT)} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB: not {what} "
                            "(reading stopped there)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JsonFileError(f"{quoted(name, PATH_LIMIT)} is not UTF-8 text ({error.reason} at byte {error.start}): not {what}") \
            from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        cut = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated")
        end = " (the file ends too early: truncated?)" if cut else ""
        raise JsonFileError(f"{quoted(name, PATH_LIMIT)} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
                            f"{end}") from None
    except RecursionError:  # nested past the interpreter's limit
        too_deep = True
    else:
        too_deep = nesting(data) > MAX_NESTING
    if too_deep:
        raise JsonFileError(f"{quoted(name, PATH_LIMIT)} nests arrays or objects more than {MAX_NESTING} deep: not {what}")
    return data


def nesting(data: Any) -> int:
    """How deep arrays and objects nest in parsed JSON (0 for a plain value), without recursion.

    Stops counting past :data:`MAX_NESTING` (any larger answer means "too deep").
    """
    deepest, stack = 0, [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            depth += 1
            deepest = max(deepest, depth)
            if depth > MAX_NESTING:
                return depth
            stack.extend((item, depth) for item in (value.values() if isinstance(value, dict) else value))
    return deepest
