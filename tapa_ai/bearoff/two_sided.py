"""Two-sided exact bear-off database: the cubeless chance that the side to move wins, both sides bearing off.

For every pair of home boards with up to ``checkers`` checkers each (6 by default: 924 x 924 pairs),
by exact expectimax: the side to move plays each roll to leave the opponent the smallest chance, and
``P[i, j] = sum over rolls of weight * (1 - min over plays of P[j, reached])`` with ``P[j, 0] = 0`` (a side
with no checkers left has won). Pairs are filled by increasing total pips, so every pair a play reaches
is known before it is needed. The plays of each roll from each home are listed once
(``one_sided._roll_plays``) and shared by all its pairs, which makes the build a fraction of a second once
numba has compiled it. With 6 or fewer checkers left on the board no gammon is possible (at least 9 are
off), so the cubeless equity is ``2 P - 1``.
"""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

from .one_sided import _BINOMIAL, _ROLL_WEIGHTS, _ROLLS, MAX_CHECKERS, POINTS, _positions, _roll_plays

__all__ = ["DEFAULT_CHECKERS", "build_two_sided", "positions_up_to"]

DEFAULT_CHECKERS = 6


def positions_up_to(checkers: int) -> int:
    """Arrangements of up to ``checkers`` checkers on 6 points: ranks 0 .. this - 1 of the one-sided numbering."""
    return comb(checkers + POINTS, POINTS)


@njit(cache=True)
def _successors(positions, rolls, binomial):
    """Every position each roll can reach from each position: CSR ``(offsets (P * R + 1,), ranks)``.

    Row ``i * R + r`` lists, once each, the ranks that roll ``r`` reaches from position ``i``
    (``one_sided._roll_plays``).
    """
    count = positions.shape[0]
    roll_count = rolls.shape[0]
    counts = np.zeros(POINTS, dtype=np.int64)
    dice = np.zeros(4, dtype=np.int64)
    seen = np.full(count, -1, dtype=np.int64)
    buffer = np.zeros(count, dtype=np.int64)
    offsets = np.zeros(count * roll_count + 1, dtype=np.int64)
    ranks = np.zeros(16 * count * roll_count, dtype=np.int64)
    total = 0
    for i in range(count):
        for p in range(POINTS):
            counts[p] = positions[i, p]
        for r in range(roll_count):
            stamp = i * roll_count + r
            found = _roll_plays(counts, rolls[r, 0], rolls[r, 1], binomial, dice, seen, stamp, buffer)
            if total + found > ranks.shape[0]:
                grown = np.zeros(2 * (total + found), dtype=np.int64)
                grown[:total] = ranks[:total]
                ranks = grown
            ranks[total:total + found] = buffer[:found]
            total += found
            offsets[stamp + 1] = total
    return offsets, ranks[:total]


@njit(cache=True)
def _fill(order_i, order_j, roll_count, weights, offsets, ranks, wins):
    """``wins[i, j]`` for the pairs in order; the mover's plays of each roll are the successor lists."""
    for k in range(order_i.shape[0]):
        i = order_i[k]
        j = order_j[k]
        if i == 0:
            wins[i, j] = 1.0 if j > 0 else 0.0  # the mover has borne everything off: won
            continue
        if j == 0:
            wins[i, j] = 0.0  # the opponent has: lost
            continue
        total = 0.0
        for r in range(roll_count):
            row = i * roll_count + r
            least = np.inf
            for s in range(offsets[row], offsets[row + 1]):
                value = wins[j, ranks[s]]
                if value < least:
                    least = value
            total += weights[r] * (1.0 - least)
        wins[i, j] = total


def build_two_sided(checkers: int = DEFAULT_CHECKERS) -> np.ndarray:
    """(n, n) float64 ``P[i, j]``: the side to move with home ``unrank(i)`` wins against ``unrank(j)``.

    ``n = positions_up_to(checkers)`` (924 for 6 checkers).
    """
    if not 1 <= checkers <= MAX_CHECKERS:
        raise ValueError(f"two-sided bear-off database: checkers={checkers}, want 1 to {MAX_CHECKERS}")
    count = positions_up_to(checkers)
    positions = _positions()[:count]
    pips = positions @ np.arange(1, POINTS + 1)
    i, j = np.meshgrid(np.arange(count), np.arange(count), indexing="ij")
    order = np.argsort((pips[:, None] + pips[None, :]).ravel(), kind="stable")
    # The plays of a roll from a home do not depend on the opponent's: found once per (home, roll), not per pair.
    offsets, ranks = _successors(positions, _ROLLS, _BINOMIAL)
    wins = np.zeros((count, count))
    _fill(i.ravel()[order].astype(np.int64), j.ravel()[order].astype(np.int64), len(_ROLLS), _ROLL_WEIGHTS,
          offsets, ranks, wins)
    return wins
