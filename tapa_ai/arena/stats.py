"""Statistics shared by the arena's results: a mean and its 95% confidence interval."""

from __future__ import annotations

import dataclasses
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


def concatenate_slot_records(parts: list):
    """Records of several runs of duplicate slots joined into one, each part's slots numbered after those of the
    parts before it: ``parts`` are dataclasses of one type with ``slot`` ((G,) slot of each game), ``slots``
    (their count), every array field joined (per game or per slot) and every other field (``match_length``, a
    rotation) the first part's."""
    first = parts[0]
    offset, slots = 0, []
    for part in parts:
        slots.append(part.slot + offset)
        offset += part.slots
    values = {field.name: (np.concatenate([getattr(part, field.name) for part in parts])
                           if isinstance(getattr(first, field.name), np.ndarray) else getattr(first, field.name))
              for field in dataclasses.fields(first) if field.name != "slot"}
    return type(first)(slot=np.concatenate(slots), **values)
