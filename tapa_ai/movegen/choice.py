"""Choosing one afterstate per position from per-afterstate scores, or at random (the rows of :class:`Afterstates`)."""

from __future__ import annotations

import numpy as np

from .generate import Afterstates


def segment_argmax(scores: np.ndarray, offsets: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """Row of the highest score in each segment ``offsets[b]:offsets[b+1]`` (ties broken at random).

    scores: (N,) float; offsets: (B + 1,) int, every segment non-empty. Returns (B,) int64 rows.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if rng is not None:
        # Scale-aware jitter far below any real difference between equities.
        scores = scores + rng.random(scores.shape[0]) * 1e-9
    starts = offsets[:-1]
    counts = np.diff(offsets)
    best = np.maximum.reduceat(scores, starts)
    hits = np.flatnonzero(scores == np.repeat(best, counts))
    segment_of_hit = np.searchsorted(offsets, hits, side="right") - 1
    _, first = np.unique(segment_of_hit, return_index=True)
    return hits[first]


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
