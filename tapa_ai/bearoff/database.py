"""The bear-off databases on disk: built once, cached where a user's cache belongs, checked on load.

``one_sided()`` and ``two_sided()`` return their tables from memory, else from the cache when a valid file
is there, else build them (a few seconds, more the first time numba compiles the builders) and write the
file. Both go through one mechanism (:func:`_cached`): the file holds the arrays, their SHA-256 and the
format version; a file that is missing, unreadable, of another format version, of the wrong shapes or
whose checksum does not match is rebuilt, with a message saying why. The cache directory is
``$TAPA_AI_CACHE``, else ``$XDG_CACHE_HOME/tapa_ai``, else ``~/.cache/tapa_ai``.

Several processes may meet an empty cache at once (pytest-xdist workers, a match's worker processes):
the file is written to a temporary name in the same directory and renamed over the final one
(``os.replace``: a reader sees the whole old file or the whole new one), and where the platform has
``fcntl`` a lock file makes the others wait for the first builder and read its file instead of building
too. A cache directory that cannot be written is reported and the tables are kept in memory only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

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
    """The one-sided database's file."""
    return (directory or cache_dir()) / f"bearoff-one-sided-v{FORMAT_VERSION}.npz"


def two_sided_path(checkers: int = DEFAULT_CHECKERS, directory: Optional[Path] = None) -> Path:
    """The two-sided database's file for homes of up to ``checkers`` checkers."""
    return (directory or cache_dir()) / f"bearoff-two-sided-{checkers}-v{FORMAT_VERSION}.npz"


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


# -- one mechanism for both databases -------------------------------------------------------------
Arrays = dict[str, np.ndarray]

_LOADED: dict[Path, Arrays] = {}
"""Tables already read or built in this process, by file."""


def _checksum(*arrays: np.ndarray) -> str:
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _load_arrays(path: Path, names: tuple[str, ...], check: Callable[[Arrays], str]) -> tuple[Optional[Arrays], str]:
    """({name: array}, "") from a valid file, else (None, why not).

    Valid: readable, this format version, the checksum right and ``check(arrays)`` empty (it says what is wrong).
    """
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
    wrong = check(arrays)
    if wrong:
        return None, f"{path} holds {wrong}"
    return arrays, ""


def _save_arrays(path: Path, arrays: Arrays) -> None:
    """Write the arrays, their checksum and the format version atomically: a temporary file, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as file:
            np.savez_compressed(file, sha256=_checksum(*arrays.values()), format_version=FORMAT_VERSION, **arrays)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path``'s lock file (none where there is no fcntl or it cannot be made)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: the atomic rename alone keeps the file whole
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.with_name(path.name + ".lock"), "a")
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _cached(path: Path, what: str, names: tuple[str, ...], check: Callable[[Arrays], str],
            build: Callable[[], Arrays], rebuild: bool, quiet: bool) -> Arrays:
    """The arrays ``names`` of ``path``: from memory, else a valid file (``_load_arrays``), else built (saying why),
    saved and kept."""
    if not rebuild and path in _LOADED:
        return _LOADED[path]
    arrays, why = (None, "rebuild asked for") if rebuild else _load_arrays(path, names, check)
    if arrays is None:
        with _build_lock(path):
            if not rebuild:  # another process may have built it while this one waited for the lock
                arrays, _ = _load_arrays(path, names, check)
            if arrays is None:
                if not quiet:
                    print(f"tapa-ai: building {what} ({why}) ...", file=sys.stderr)
                arrays = build()
                try:
                    _save_arrays(path, arrays)
                except OSError as error:
                    print(f"tapa-ai: could not write {path} ({error}); {what} is kept in memory only",
                          file=sys.stderr)
                else:
                    if not quiet:
                        print(f"tapa-ai: wrote {path}", file=sys.stderr)
    _LOADED[path] = arrays
    return arrays


# -- the two databases -----------------------------------------------------------------------------
def one_sided(directory: Optional[Path] = None, rebuild: bool = False, progress: bool = True,
              quiet: bool = False) -> OneSided:
    """The one-sided database (``one_sided.build_tables``): cached in memory and on disk, (re)built when missing or invalid."""

    def build() -> Arrays:
        turns, first_off = build_tables(progress=progress and not quiet)
        # float32 and the turns that occur (15 checkers on the 6-point need 23 at most): ~2.3 MB on disk.
        used = int(max(np.flatnonzero(turns.any(axis=0))[-1], np.flatnonzero(first_off.any(axis=0))[-1])) + 1
        return {"turns": np.ascontiguousarray(turns[:, :used], dtype=np.float32),
                "first_off": np.ascontiguousarray(first_off[:, :used], dtype=np.float32)}

    def check(arrays: Arrays) -> str:
        turns, first_off = arrays["turns"], arrays["first_off"]
        if turns.ndim != 2 or turns.shape[0] != POSITIONS or first_off.shape != turns.shape:
            return f"arrays of shape {turns.shape} / {first_off.shape}, not ({POSITIONS}, turns)"
        return ""

    arrays = _cached(database_path(directory), "the one-sided bear-off database", ("turns", "first_off"), check,
                     build, rebuild, quiet)
    return OneSided(arrays["turns"], arrays["first_off"])


def two_sided(checkers: int = DEFAULT_CHECKERS, directory: Optional[Path] = None, rebuild: bool = False,
              quiet: bool = False) -> np.ndarray:
    """(n, n) float32 cubeless win chances of the side to move (``two_sided.build_two_sided``), cached like ``one_sided``."""
    count = positions_up_to(checkers)

    def build() -> Arrays:
        return {"wins": np.ascontiguousarray(build_two_sided(checkers), dtype=np.float32)}

    def check(arrays: Arrays) -> str:
        shape = arrays["wins"].shape
        return "" if shape == (count, count) else f"a table of shape {shape}, not ({count}, {count})"

    return _cached(two_sided_path(checkers, directory), f"the two-sided bear-off database, up to {checkers} checkers "
                   "a side", ("wins",), check, build, rebuild, quiet)["wins"]
