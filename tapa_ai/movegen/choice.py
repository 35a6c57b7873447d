"""Choosing one afterstate per position from per-afterstate scores, or at random (the rows of :class:`Afterstates`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .generate import Afterstates


@njit(cache=True, nogil=True)
def _first_highest(scores, offsets):
    """Row of the first highest score of each segment ``offsets[b]:offsets[b+1]``; None unless the offsets
    rise from 0 to ``len(scores)`` in steps of at least 1."""
    size = offsets.shape[0] - 1
    if size < 0 or offsets[0] != 0 or offsets[size] != scores.shape[0]:
        return None
    rows = np.empty(size, dtype=np.int64)
    for segment in range(size):
        best = offsets[segment]
        if offsets[segment + 1] <= best:
            return None
        top = scores[best]
        for row in range(best + 1, offsets[segment + 1]):
            if scores[row] > top:
                top = scores[row]
                best = row
        rows[segment] = best
    return rows


def segment_argmax(scores: np.ndarray, offsets: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """Row of the highest score in each segment ``offsets[b]:offsets[b+1]`` (ties broken at random).

    scores: (N,) float; offsets: (B + 1,) int, every segment non-empty. Returns (B,) int64 rows.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if rng is not None:
        # Scale-aware jitter far below any real difference between equities.
        scores = scores + rng.random(scores.shape[0]) * 1e-9
    # The first of a segment's equal highest scores, in one compiled pass (the numpy reductions it replaces
    # were 8% of self-play's main thread).
    rows = _first_highest(np.ascontiguousarray(scores).reshape(-1), np.ascontiguousarray(offsets, dtype=np.int64))
    if rows is None:
        raise ValueError(f"segment_argmax: offsets must rise from 0 to {scores.shape[0]} (the number of scores) "
                         "in steps of at least 1 (every segment non-empty)")
    return rows


def choose_random(afterstates: Afterstates, rng: np.random.Generator,
                  segments: np.ndarray | None = None) -> np.ndarray:
    """A uniformly random afterstate per position: (B,) rows; with ``segments``, one per listed position only."""
    offsets = afterstates.offsets
    if segments is None:
        starts, counts = offsets[:-1], np.diff(offsets)
    else:
        starts = offsets[segments]
        counts = offsets[segments + 1] - starts
    return starts + (rng.random(starts.shape[0]) * counts).astype(np.int64)
