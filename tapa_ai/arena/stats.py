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
