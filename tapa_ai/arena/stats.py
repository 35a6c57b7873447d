"""Statistics shared by the arena's results: a mean and its 95% confidence interval."""

from __future__ import annotations

import math

import numpy as np


def mean_ci(values: np.ndarray) -> tuple[float, tuple[float, float]]:
    """The mean of independent ``values`` (e.g. one per duplicate pair) and its 95% CI (normal approximation;
    unbounded for fewer than two values)."""
    mean = float(values.mean())
    if values.size < 2:
        return mean, (-math.inf, math.inf)
    half = 1.96 * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, (mean - half, mean + half)


def match_win_rate(match_a_won: np.ndarray, match_unfinished: np.ndarray) -> tuple[float, list[float]]:
    """A's share of matches in duplicate pairs (slots ``2i``, ``2i + 1``) and its 95% CI over the pairs, clipped
    to [0, 1]; an unfinished match counts as half a win to each side."""
    score = np.where(match_unfinished, 0.5, match_a_won.astype(np.float64))
    rate, ci = mean_ci(score.reshape(-1, 2).mean(axis=1))
    return rate, [max(0.0, ci[0]), min(1.0, ci[1])]
