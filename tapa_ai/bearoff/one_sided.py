"""One-sided bear-off database: for every arrangement of up to 15 checkers on the 6 home points, the
distribution of the number of turns needed to bear them all off, and of the turns to the first one off.

Once no checker can meet an opposing one and both sides are home, tapa, plakoto and backgammon play the
same game (no pin or hit is possible), so one table serves all three.

Positions are ``(n1, ..., n6)``: checkers on the side's 1- to 6-points, at most 15 in all; 54,264 of them,
ranked by the combinatorial number system (``rank``). Each roll is played to minimise the expected number
of turns (for ``turns``) or the expected turns to the first checker off (for ``first_off``), every legal
way of playing the dice considered: a die moves a checker ``d`` points down, bears off a checker from the
``d``-point, or bears off from the highest occupied point when ``d`` is larger; a double is played four
times; dice that cannot be used (no checkers left) are not.
"""

from __future__ import annotations

from math import comb
from numbers import Integral

import numpy as np
from numba import njit

from ..rules.reference import DISTINCT_ROLLS

__all__ = ["POINTS", "MAX_CHECKERS", "MAX_TURNS", "POSITIONS", "check_home", "rank", "unrank", "build_tables"]

POINTS = 6
MAX_CHECKERS = 15
MAX_TURNS = 32
"""Turn slots of a distribution (15 checkers on the 6-point need at most 23 turns: 90 pips, 4 a turn at worst)."""
POSITIONS = comb(MAX_CHECKERS + POINTS, POINTS)
"""54,264 arrangements of 0 to 15 checkers on 6 points."""

_BINOMIAL = np.array([[comb(n, k) for k in range(POINTS + 1)] for n in range(MAX_CHECKERS + POINTS + 1)],
                     dtype=np.int64)
_ROLLS = np.array([(a, b) for a, b, _ in DISTINCT_ROLLS], dtype=np.int64)
_ROLL_WEIGHTS = np.array([count for _, _, count in DISTINCT_ROLLS], dtype=np.float64) / 36.0


@njit(cache=True)
def _rank(counts, binomial):
    """Rank of (n1..n6): the bars of stars-and-bars at b_j = n1 + .. + n_j + j - 1, ranked as a combination."""
    total = 0
    result = 0
    for j in range(POINTS):
        total += counts[j]
        result += binomial[total + j, j + 1]
    return result


def check_home(counts) -> tuple[int, ...]:
    """``counts`` as a tuple, if it is 6 integers >= 0 summing to at most 15; else ValueError saying so."""
    if (isinstance(counts, (str, bytes)) or not hasattr(counts, "__len__") or len(counts) != POINTS
            or not all(isinstance(n, Integral) and not isinstance(n, bool) and n >= 0 for n in counts)
            or sum(counts) > MAX_CHECKERS):
        raise ValueError(f"bear-off position {counts!r}: want 6 counts >= 0 summing to at most {MAX_CHECKERS}")
    return tuple(int(n) for n in counts)


def rank(counts) -> int:
    """Index in [0, 54,264) of the arrangement ``(n1, ..., n6)`` (checkers on the 1- to 6-points)."""
    return int(_rank(np.array(check_home(counts), dtype=np.int64), _BINOMIAL))


def _all_positions() -> np.ndarray:
    """(54,264, 6) int64 arrangements, row i the one of rank i."""
    rows = np.zeros((POSITIONS, POINTS), dtype=np.int64)

    def walk(prefix: list[int], left: int) -> None:
        if len(prefix) == POINTS:
            rows[_rank(np.array(prefix, dtype=np.int64), _BINOMIAL)] = prefix
            return
        for n in range(left + 1):
            walk(prefix + [n], left - n)

    walk([], MAX_CHECKERS)
    return rows


def unrank(index: int) -> tuple[int, ...]:
    """The arrangement ``(n1, ..., n6)`` of rank ``index``."""
    if not 0 <= index < POSITIONS:
        raise ValueError(f"bear-off index {index}: want 0 <= index < {POSITIONS}")
    return tuple(int(n) for n in _positions()[index])


_POSITIONS_CACHE: list[np.ndarray] = []


def _positions() -> np.ndarray:
    if not _POSITIONS_CACHE:
        _POSITIONS_CACHE.append(_all_positions())
    return _POSITIONS_CACHE[0]


@njit  # not cached: numba's on-disk cache of a recursive function crashed on reload
def _best_after(counts, dice, moves_left, objective, binomial, first_mode, done_first, best):
    """Smallest ``objective`` over every way of playing ``dice`` (a stack of ``moves_left`` dice) from ``counts``.

    ``first_mode``: the objective is the first-off one, which is 0 once ``done_first`` (a checker was borne
    off earlier in this turn).
    Returns the best value and writes the rank of the position reached into ``best[0]``.
    """
    checkers = 0
    for p in range(POINTS):
        checkers += counts[p]
    if moves_left == 0 or checkers == 0:
        index = _rank(counts, binomial)
        best[0] = index
        return 0.0 if first_mode and done_first else objective[index]
    die = dice[moves_left - 1]
    highest = -1
    for p in range(POINTS - 1, -1, -1):
        if counts[p] > 0:
            highest = p
            break
    value = np.inf
    chosen = -1
    for p in range(POINTS):
        if counts[p] == 0:
            continue
        point = p + 1
        if point > die:
            target = p - die
        elif point == die or p == highest:
            target = -1  # borne off
        else:
            continue
        counts[p] -= 1
        if target >= 0:
            counts[target] += 1
        candidate = _best_after(counts, dice, moves_left - 1, objective, binomial, first_mode,
                                 done_first or target < 0, best)
        if target >= 0:
            counts[target] -= 1
        counts[p] += 1
        if candidate < value:
            value = candidate
            chosen = best[0]
    best[0] = chosen
    return value


@njit
def _best_roll(counts, a, b, objective, binomial, first_mode, dice, best):
    """``_best_after`` for the roll (a, b): a double played four times, else the better of the two orders."""
    if a == b:
        for m in range(4):
            dice[m] = a
        return _best_after(counts, dice, 4, objective, binomial, first_mode, False, best)
    dice[0] = a
    dice[1] = b
    value = _best_after(counts, dice, 2, objective, binomial, first_mode, False, best)
    reached = best[0]
    dice[0] = b
    dice[1] = a
    other = _best_after(counts, dice, 2, objective, binomial, first_mode, False, best)
    if value <= other:
        best[0] = reached
        return value
    return other


@njit
def _build(positions, order, start, stop, rolls, weights, binomial, turns, first_off, mean_turns, mean_first,
           max_turns):
    """Fill rows ``order[start:stop]`` of ``turns`` and ``first_off`` (P, max_turns) and their means.

    ``order`` puts every successor before its position (by pips), so a range may follow the ranges before it.
    """
    counts = np.zeros(POINTS, dtype=np.int64)
    dice = np.zeros(4, dtype=np.int64)
    best = np.zeros(1, dtype=np.int64)
    for k in range(start, stop):
        index = order[k]
        checkers = 0
        for p in range(POINTS):
            counts[p] = positions[index, p]
            checkers += counts[p]
        if checkers == 0:
            turns[index, 0] = 1.0
            first_off[index, 0] = 1.0
            continue
        for r in range(rolls.shape[0]):
            a = rolls[r, 0]
            b = rolls[r, 1]
            w = weights[r]
            _best_roll(counts, a, b, mean_turns, binomial, False, dice, best)
            after_all = best[0]
            _best_roll(counts, a, b, mean_first, binomial, True, dice, best)
            after_first = best[0]
            reached_first = _first_done(counts, positions, after_first)
            # This turn, then the distribution of the position reached.
            for t in range(max_turns - 1):
                turns[index, t + 1] += w * turns[after_all, t]
            if reached_first:
                first_off[index, 1] += w
            else:
                for t in range(max_turns - 1):
                    first_off[index, t + 1] += w * first_off[after_first, t]
        total = 0.0
        first = 0.0
        for t in range(max_turns):
            total += t * turns[index, t]
            first += t * first_off[index, t]
        mean_turns[index] = total
        mean_first[index] = first


@njit(cache=True)
def _first_done(counts, positions, reached):
    """Whether the play from ``counts`` to the position of rank ``reached`` bore a checker off."""
    before = 0
    after = 0
    for p in range(POINTS):
        before += counts[p]
        after += positions[reached, p]
    return after < before


def build_tables(progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(54,264, MAX_TURNS) float64 ``turns`` and ``first_off`` distributions, row i of the position of rank i.

    ``turns[i, k]``: probability that bearing off every checker takes exactly k turns;
    ``first_off[i, k]`` the same for the first checker (row of the empty position: 1 at k = 0).
    ``progress``: a progress bar (the positions are built in 16 slices).
    """
    from tqdm import tqdm

    positions = _positions()
    # Successors have fewer pips: process by total pips.
    pips = positions @ np.arange(1, POINTS + 1)
    order = np.argsort(pips, kind="stable").astype(np.int64)
    turns = np.zeros((POSITIONS, MAX_TURNS))
    first_off = np.zeros((POSITIONS, MAX_TURNS))
    mean_turns = np.zeros(POSITIONS)
    mean_first = np.zeros(POSITIONS)
    bounds = np.linspace(0, POSITIONS, 17).astype(np.int64)
    with tqdm(total=POSITIONS, desc="one-sided bear-off", unit="pos", disable=not progress) as bar:
        for start, stop in zip(bounds[:-1], bounds[1:]):
            _build(positions, order, int(start), int(stop), _ROLLS, _ROLL_WEIGHTS, _BINOMIAL, turns, first_off,
                   mean_turns, mean_first, MAX_TURNS)
            bar.update(int(stop - start))
    return turns, first_off
