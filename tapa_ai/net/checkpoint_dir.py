"""The checkpoints of one run directory: ``latest.pt``, the newest ``step_<games>.pt`` files and ``best.pt``.

One process at a time trains in a run directory: :class:`RunLock` holds an
exclusive ``flock`` on the file ``.tapa-ai-train.lock`` in it (the holder's
pid written inside) for as long as the run trains. The operating system drops
the lock when the holder exits in any way (a crash or ``kill -9`` too), so a
lock is never left stale. Where ``fcntl`` does not exist (Windows) the lock
does nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .atomic_files import TEMP_PREFIX, TEMP_SUFFIX, WriteError, atomic_copy
from .checkpoint import Checkpoint, CheckpointError, load_checkpoint, make_payload, save_checkpoint, write_payload

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

_STEP_PATTERN = re.compile(r"^step_(\d+)\.pt$")
LOCK_NAME = ".tapa-ai-train.lock"
"""The lock file of a run directory (:class:`RunLock`)."""


class RunDirectoryBusy(CheckpointError):
    """Another process trains in this run directory (it holds its :class:`RunLock`)."""


class RunLock:
    """The exclusive lock of one run directory: ``with RunLock(directory): ...`` or :meth:`acquire`/:meth:`release`.

    Raises :class:`RunDirectoryBusy`, naming the holder's pid, when another
    process holds it. Within one process it is re-entrant: every
    :class:`RunLock` of the same directory shares one lock, released when the
    last of them releases (the lock keeps other processes out, not this one).
    """

    _held: dict[Path, list[int]] = {}
    """Resolved directory -> [file descriptor, holds] of the locks this process holds."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_NAME
        self._holds = 0

    def acquire(self) -> "RunLock":
        key = self.directory.resolve()
        held = RunLock._held.get(key)
        if held is None:
            held = RunLock._held[key] = [self._lock(), 0]
        held[1] += 1
        self._holds += 1
        return self

    def _lock(self) -> int:
        try:
            descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:  # a directory we cannot write: nor could we write checkpoints there
            raise WriteError(self.path, error) from error
        if fcntl is None:  # pragma: no cover - Windows
            return descriptor
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip()
            os.close(descriptor)
            who = f"pid {holder}" if holder.isdigit() else "a process that is starting"
            raise RunDirectoryBusy(f"run directory {self.directory} is in use: another tapa-ai train ({who}) trains "
                                   f"in it; wait for it to finish, or stop it (kill -TERM {holder or '<pid>'} saves "
                                   "a checkpoint) and resume then") from None
        except BaseException:
            os.close(descriptor)
            raise
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode("ascii"), 0)
        return descriptor

    def release(self) -> None:
        if self._holds == 0:
            return
        self._holds -= 1
        key = self.directory.resolve()
        held = RunLock._held[key]
        held[1] -= 1
        if held[1] == 0:
            del RunLock._held[key]
            os.close(held[0])  # drops the flock; the file stays (removing it would race a new holder)

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc_info: Any) -> None:
        self.release()


class CheckpointManager:
    """The checkpoints of one run: ``step_<games>.pt`` (the last ``keep_last``), ``latest.pt`` and ``best.pt``.

    ``latest.pt`` is written first and the numbered file copied from it, so
    ``latest.pt`` is never older than the newest numbered file, even after a
    kill between the two writes.
    """

    LATEST = "latest.pt"
    BEST = "best.pt"

    def __init__(self, directory: str | Path, keep_last: int) -> None:
        if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 1:
            raise CheckpointError(f"keep_last={keep_last!r}: must be an integer >= 1")
        self.directory = Path(directory)
        self.keep_last = keep_last
        self.directory.mkdir(parents=True, exist_ok=True)
        self._remove_stale_temporaries()

    def step_path(self, games: int) -> Path:
        return self.directory / f"step_{games}.pt"

    @property
    def latest_path(self) -> Path:
        return self.directory / self.LATEST

    @property
    def best_path(self) -> Path:
        return self.directory / self.BEST

    def save(self, *, best: bool = False, **payload: Any) -> Path:
        """Write ``step_<games>.pt`` and ``latest.pt`` (and ``best.pt`` if ``best``), then prune.

        Takes the keyword arguments of :func:`save_checkpoint`; returns the numbered file.
        """
        data = make_payload(**payload)
        write_payload(self.latest_path, data)
        step_path = self.step_path(data["counters"]["games"])
        atomic_copy(self.latest_path, step_path)
        if best:
            atomic_copy(self.latest_path, self.best_path)
        self.prune()
        return step_path

    def save_best(self, **payload: Any) -> Path:
        """Write ``best.pt`` alone (for a best model found between checkpoints)."""
        return save_checkpoint(self.best_path, **payload)

    def mark_best(self, path: str | Path) -> Path:
        """Copy an existing checkpoint of this run to ``best.pt``."""
        atomic_copy(Path(path), self.best_path)
        return self.best_path

    def steps(self) -> list[tuple[int, Path]]:
        """The numbered checkpoints as (games, path), oldest first."""
        found = []
        for entry in self.directory.iterdir():
            match = _STEP_PATTERN.match(entry.name)
            if match and entry.is_file():
                found.append((int(match.group(1)), entry))
        return sorted(found)

    def prune(self) -> list[Path]:
        """Delete all but the newest ``keep_last`` numbered checkpoints; returns the deleted paths."""
        removed = [path for _, path in self.steps()[:-self.keep_last]]
        for path in removed:
            path.unlink(missing_ok=True)
        return removed

    def latest(self) -> Path | None:
        """The checkpoint to resume from: ``latest.pt``, else the newest numbered one, else None."""
        candidates = self.newest_first()
        return candidates[0] if candidates else None

    def newest_first(self) -> list[Path]:
        """Every checkpoint a run could resume from, newest first: ``latest.pt``, then ``step_<games>.pt`` by games."""
        latest = [self.latest_path] if self.latest_path.is_file() else []
        return latest + [path for _, path in reversed(self.steps())]

    def load_latest(self, **expect: Any) -> Checkpoint | None:
        """Load :meth:`latest` (with :func:`load_checkpoint`'s ``expect_*`` checks), or None if there is none."""
        path = self.latest()
        return None if path is None else load_checkpoint(path, **expect)

    def _remove_stale_temporaries(self) -> None:
        # Left behind only when a writer was killed mid-write. Only while no other process holds the
        # run's lock: a run training here now may be writing one of them.
        # (No lock file: no run has ever trained here, so none holds it; the file is not made for this.)
        try:
            if (self.directory / LOCK_NAME).exists():
                with RunLock(self.directory):
                    self._unlink_temporaries()
            else:
                self._unlink_temporaries()
        except (RunDirectoryBusy, OSError):
            pass

    def _unlink_temporaries(self) -> None:
        for entry in self.directory.glob(TEMP_PREFIX + "*" + TEMP_SUFFIX):
            entry.unlink(missing_ok=True)
