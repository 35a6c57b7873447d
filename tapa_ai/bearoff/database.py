"""The one-sided bear-off database on disk: built once, cached where a user's cache belongs, checked on load.

``one_sided()`` returns the tables, from the cache when a valid file is there, else built (about ten
seconds, with a progress bar) and written. The file holds the arrays and a SHA-256 of them; a file that
is missing, unreadable, of another format version or whose checksum does not match is rebuilt, with a
message saying why. The cache directory is ``$TAPA_AI_CACHE``, else ``$XDG_CACHE_HOME/tapa_ai``, else
``~/.cache/tapa_ai``.
"""

from __future__ import annotations

import hashlib
import os
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from .one_sided import POSITIONS, build_tables, rank
from .two_sided import DEFAULT_CHECKERS, build_two_sided, positions_up_to

__all__ = ["FORMAT_VERSION", "OneSided", "cache_dir", "database_path", "one_sided", "two_sided", "two_sided_path"]

FORMAT_VERSION = 1
"""Bumped when the tables' meaning or layout changes: an older file is then rebuilt."""


def cache_dir() -> Path:
    """Where cached databases live (see the module docstring)."""
    if os.environ.get("TAPA_AI_CACHE"):
        return Path(os.environ["TAPA_AI_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tapa_ai"


def database_path(directory: Optional[Path] = None) -> Path:
    return (directory or cache_dir()) / f"bearoff-one-sided-v{FORMAT_VERSION}.npz"


def _checksum(*arrays: np.ndarray) -> str:
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class OneSided:
    """Distributions of the turns to bear off all checkers (``turns``) and the first (``first_off``), per rank."""

    turns: np.ndarray
    first_off: np.ndarray

    def distributions(self, home) -> tuple[list[float], list[float]]:
        """``(turns, first_off)`` of the checkers ``home = [n1, ..., n6]`` on the 1- to 6-points, trailing zeros cut."""
        index = rank(home)
        return _trim(self.turns[index]), _trim(self.first_off[index])

    def mean_turns(self, home) -> float:
        row = self.turns[rank(home)]
        return float(np.arange(len(row)) @ row)


def _trim(row: np.ndarray) -> list[float]:
    last = int(np.flatnonzero(row)[-1]) if row.any() else 0
    return [float(value) for value in row[:last + 1]]


def _load_arrays(path: Path, names: tuple[str, ...]) -> tuple[Optional[dict], str]:
    """({name: array}, "") from a valid file (readable, this format version, checksum right), else (None, why not)."""
    if not path.is_file():
        return None, f"no database at {path}"
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in names}
            stored = str(data["sha256"])
            version = int(data["format_version"])
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as error:
        return None, f"{path} is unreadable ({type(error).__name__}: {error})"
    if version != FORMAT_VERSION:
        return None, f"{path} has format version {version}, this version reads {FORMAT_VERSION}"
    if _checksum(*arrays.values()) != stored:
        return None, f"{path} fails its checksum (corrupt or edited)"
    return arrays, ""


def _save_arrays(path: Path, **arrays: np.ndarray) -> None:
    """Write the arrays, their checksum and the format version; atomically (a partial file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial.npz")
    np.savez_compressed(partial, sha256=_checksum(*arrays.values()), format_version=FORMAT_VERSION, **arrays)
    os.replace(partial, path)


def _load(path: Path) -> tuple[Optional[OneSided], str]:
    """(tables, "") from a valid one-sided file, else (None, why not)."""
    arrays, why = _load_arrays(path, ("turns", "first_off"))
    if arrays is None:
        return None, why
    turns, first_off = arrays["turns"], arrays["first_off"]
    if turns.ndim != 2 or turns.shape[0] != POSITIONS or first_off.shape != turns.shape:
        return None, f"{path} holds arrays of shape {turns.shape} / {first_off.shape}, not ({POSITIONS}, turns)"
    return OneSided(turns, first_off), ""


_LOADED: dict[Path, OneSided] = {}


def one_sided(directory: Optional[Path] = None, rebuild: bool = False, progress: bool = True,
              quiet: bool = False) -> OneSided:
    """The one-sided database: cached in memory and on disk, (re)built when missing or invalid."""
    path = database_path(directory)
    if not rebuild and path in _LOADED:
        return _LOADED[path]
    tables, why = (None, "rebuild asked for") if rebuild else _load(path)
    if tables is None:
        if not quiet:
            print(f"tapa-ai: building the one-sided bear-off database ({why}) ...", file=sys.stderr)
        turns, first_off = build_tables(progress=progress and not quiet)
        # float32 and the turns that occur (15 checkers on the 6-point need 23 at most): ~5 MB on disk.
        used = int(max(np.flatnonzero(turns.any(axis=0))[-1], np.flatnonzero(first_off.any(axis=0))[-1])) + 1
        turns = np.ascontiguousarray(turns[:, :used], dtype=np.float32)
        first_off = np.ascontiguousarray(first_off[:, :used], dtype=np.float32)
        _save_arrays(path, turns=turns, first_off=first_off)
        tables = OneSided(turns, first_off)
        if not quiet:
            print(f"tapa-ai: wrote {path}", file=sys.stderr)
    _LOADED[path] = tables
    return tables


def two_sided_path(checkers: int = DEFAULT_CHECKERS, directory: Optional[Path] = None) -> Path:
    return (directory or cache_dir()) / f"bearoff-two-sided-{checkers}-v{FORMAT_VERSION}.npz"


_TWO_SIDED: dict[Path, np.ndarray] = {}


def two_sided(checkers: int = DEFAULT_CHECKERS, directory: Optional[Path] = None, rebuild: bool = False,
              quiet: bool = False) -> np.ndarray:
    """(n, n) float32 cubeless win chances of the side to move (``two_sided.build_two_sided``), cached like ``one_sided``."""
    path = two_sided_path(checkers, directory)
    if not rebuild and path in _TWO_SIDED:
        return _TWO_SIDED[path]
    arrays, why = (None, "rebuild asked for") if rebuild else _load_arrays(path, ("wins",))
    count = positions_up_to(checkers)
    if arrays is not None and arrays["wins"].shape != (count, count):
        arrays, why = None, f"{path} holds a table of shape {arrays['wins'].shape}, not ({count}, {count})"
    if arrays is None:
        if not quiet:
            print(f"tapa-ai: building the two-sided bear-off database, up to {checkers} checkers a side ({why}) ...",
                  file=sys.stderr)
        wins = np.ascontiguousarray(build_two_sided(checkers), dtype=np.float32)
        _save_arrays(path, wins=wins)
        if not quiet:
            print(f"tapa-ai: wrote {path}", file=sys.stderr)
    else:
        wins = arrays["wins"]
    _TWO_SIDED[path] = wins
    return wins
