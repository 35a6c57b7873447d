"""The checkpoints of one run directory: ``latest.pt``, the newest ``step_<games>.pt`` files and ``best.pt``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .atomic_files import TEMP_PREFIX, TEMP_SUFFIX, atomic_copy
from .checkpoint import Checkpoint, CheckpointError, load_checkpoint, make_payload, save_checkpoint, write_payload


_STEP_PATTERN = re.compile(r"^step_(\d+)\.pt$")


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
        if self.latest_path.is_file():
            return self.latest_path
        steps = self.steps()
        return steps[-1][1] if steps else None

    def load_latest(self, **expect: Any) -> Checkpoint | None:
        """Load :meth:`latest` (with :func:`load_checkpoint`'s ``expect_*`` checks), or None if there is none."""
        path = self.latest()
        return None if path is None else load_checkpoint(path, **expect)

    def _remove_stale_temporaries(self) -> None:
        # Left behind only when a writer was killed mid-write; one run writes one directory.
        for entry in self.directory.glob(TEMP_PREFIX + "*" + TEMP_SUFFIX):
            entry.unlink(missing_ok=True)
