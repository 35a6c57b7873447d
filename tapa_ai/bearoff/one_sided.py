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

from ..rules.rolls import ROLL_WEIGHTS, ROLLS

__all__ = ["POINTS", "MAX_CHECKERS", "MAX_TURNS", "POSITIONS", "check_home", "rank", "unrank", "build_tables"]

POINTS = 6
MAX_CHECKERS = 15
MAX_TURNS = 32
"""Turn slots of a distribution (15 checkers on the 6-point need at most 23 turns: 90 pips, 4 a turn at worst)."""
POSITIONS = comb(MAX_CHECKERS + POINTS, POINTS)
"""54,264 arrangements of 0 to 15 checkers on 6 points."""

_BINOMIAL = np.array([[comb(n, k) for k in range(POINTS + 1)] for n in range(MAX_CHECKERS + POINTS + 1)],
                     dtype=np.int64)
_ROLLS = ROLLS.astype(np.int64)  # writable copies in the kernels' types
_ROLL_WEIGHTS = ROLL_WEIGHTS.copy()


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


@njit(cache=True)
def _collect_plays(counts, dice, moves, binomial, seen, stamp, out, found):
    """Append to ``out[found:]`` the rank of every position reached by playing the stack of ``moves`` dice.

    The dice are played from the top of the stack (``dice[moves - 1]`` first); a die moves a checker
    down, bears one off from its point, or bears off from the highest occupied point when it is larger;
    once no checker is left the rest are not played. A rank already marked ``seen[rank] == stamp`` is not
    appended again, so the list holds each position once, in the order a depth-first search first finds
    it. ``counts`` is changed while searching and restored. Returns the new count.

    An explicit stack rather than recursion, so numba can cache the compiled function on disk.
    """
    tried = np.full(5, -1, dtype=np.int64)  # per depth: the point last moved from (-1: none yet)
    moved_to = np.zeros(5, dtype=np.int64)  # per depth: where that checker went (-1: borne off)
    depth = 0
    while True:
        checkers = 0
        for p in range(POINTS):
            checkers += counts[p]
        if depth == moves or checkers == 0:  # a leaf: the turn is over
            index = _rank(counts, binomial)
            if seen[index] != stamp:
                seen[index] = stamp
                out[found] = index
                found += 1
            back_up = True
        else:  # the next play of this depth's die, from a point above the last one tried
            die = dice[moves - 1 - depth]
            highest = -1
            for p in range(POINTS - 1, -1, -1):
                if counts[p] > 0:
                    highest = p
                    break
            p = tried[depth] + 1
            while p < POINTS and not (counts[p] > 0 and (p + 1 >= die or p == highest)):
                p += 1
            back_up = p == POINTS
            if back_up:
                tried[depth] = -1
            else:
                tried[depth] = p
                moved_to[depth] = p - die if p + 1 > die else -1
                counts[p] -= 1
                if moved_to[depth] >= 0:
                    counts[moved_to[depth]] += 1
                depth += 1
        if back_up:
            if depth == 0:
                return found
            depth -= 1
            counts[tried[depth]] += 1
            if moved_to[depth] >= 0:
                counts[moved_to[depth]] -= 1


@njit(cache=True)
def _roll_plays(counts, a, b, binomial, dice, seen, stamp, out):
    """The positions the roll (a, b) reaches from ``counts`` (``_collect_plays``): a double played four
    times, else both orders, those playing ``b`` first listed first. Returns how many were written to ``out``.

    ``stamp`` must differ from every earlier call's that used the same ``seen``.
    """
    if a == b:
        for m in range(4):
            dice[m] = a
        return _collect_plays(counts, dice, 4, binomial, seen, stamp, out, 0)
    dice[0] = a
    dice[1] = b  # the top of the stack: played first
    found = _collect_plays(counts, dice, 2, binomial, seen, stamp, out, 0)
    dice[0] = b
    dice[1] = a
    return _collect_plays(counts, dice, 2, binomial, seen, stamp, out, found)


@njit(cache=True)
def _build(positions, order, start, stop, rolls, weights, binomial, turns, first_off, mean_turns, mean_first,
           max_turns):
    """Fill rows ``order[start:stop]`` of ``turns`` and ``first_off`` (P, max_turns) and their means.

    ``order`` puts every successor before its position (by pips), so a range may follow the ranges before it.
    Each roll is played to the reachable position of the least expected turns (``turns``) or turns to the
    first checker off (``first_off``; 0 once this turn bore one off); on a tie, the first found.
    """
    counts = np.zeros(POINTS, dtype=np.int64)
    dice = np.zeros(4, dtype=np.int64)
    seen = np.full(positions.shape[0], -1, dtype=np.int64)
    reached = np.zeros(positions.shape[0], dtype=np.int64)
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
            w = weights[r]
            found = _roll_plays(counts, rolls[r, 0], rolls[r, 1], binomial, dice, seen, index * rolls.shape[0] + r,
                                reached)
            after_all = -1
            after_first = -1
            best_all = np.inf
            best_first = np.inf
            reached_first = False
            for s in range(found):
                after = reached[s]
                if mean_turns[after] < best_all:
                    best_all = mean_turns[after]
                    after_all = after
                left = 0
                for p in range(POINTS):
                    left += positions[after, p]
                value = 0.0 if left < checkers else mean_first[after]
                if value < best_first:
                    best_first = value
                    after_first = after
                    reached_first = left < checkers
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
