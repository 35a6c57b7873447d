"""Input quoted in an error message, bounded: the one helper every layer's errors use (:func:`quoted`).

An error says what was wrong with the input and quotes it, but never whole: a 600 KB move text or a
60 KB request field would make a 600 KB error line. A string is quoted by its first characters and its
length, ``'24/20 24/20 24/20 ...'... (600,000 characters)``; any other value by a shortened repr
(:mod:`reprlib`: ``[7, 7, 7, 7, 7, 7, ...]... (20,000 items)``).
"""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["QUOTE_LIMIT", "PATH_LIMIT", "quoted", "nearest"]

QUOTE_LIMIT = 80
"""Characters of the input an error quotes."""
PATH_LIMIT = 4096
"""Characters of a file's path an error quotes: the whole path a system can open (Linux's PATH_MAX), so the user
sees which of their files is meant; only a path no system opens is cut."""

_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 3, 8, 8, 4
_SHORT.maxset = _SHORT.maxfrozenset = _SHORT.maxdeque = _SHORT.maxarray = 8
_SHORT.maxstring = _SHORT.maxother = 40
_SHORT.maxlong = 40


def quoted(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` for an error message, at most about ``limit`` characters of it: a longer string as the
    repr of its first characters (``limit`` characters of repr) and ``... (N characters)``, any other value
    by a shortened repr (and its length, when it was shortened)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        cut = limit
        while cut > 1 and len(repr(value[:cut])) > limit + 2:  # characters escaped in the repr count
            cut -= 1
        return f"{value[:cut]!r}... ({len(value):,} characters)"
    try:
        text = _SHORT.repr(value)
    except ValueError:  # an int past Python's digits limit for str()
        return f"an {type(value).__name__} too long to show"
    if len(text) > limit:
        text = text[:limit] + "..."
    if "..." in text and isinstance(value, (list, tuple, dict, set, frozenset, bytes, bytearray)):
        noun = "byte" if isinstance(value, (bytes, bytearray)) else "item"
        return f"{text} ({len(value):,} {noun}{'' if len(value) == 1 else 's'})"
    return text


def nearest(word: Any, choices) -> "str | None":
    """The choice closest to a mistyped ``word`` (difflib's, cutoff 0.6), for "did you mean"; None when none is
    close, or ``word`` is not a short string (no suggestion is worth matching 60 KB of input)."""
    import difflib

    if not isinstance(word, str) or len(word) >= 100:
        return None
    close = difflib.get_close_matches(word, [choice for choice in choices if isinstance(choice, str)], n=1)
    return close[0] if close else None
