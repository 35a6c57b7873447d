"""What a side can play of each number in a running game (contact ``block``, docs/rules.md 8): the steps a
number gives along chains of open points, the pips a cascade plays before its first stage that cannot be played in
full (docs/rules.md 10.2), and the playable pips a side can expect of its next roll. The running-game heuristic
(:mod:`.heuristic`) scores Gul Bara's positions by them.
"""

from __future__ import annotations

import numpy as np

from ..rules.rolls import DISTINCT_ROLLS

__all__ = ["step_capacity", "cascade_pips", "expected_pips", "last_true"]

_COLUMNS = np.arange(24)


def last_true(mask: np.ndarray, default: int) -> np.ndarray:
    """(N,) index of the last True per row, ``default`` where none."""
    width = mask.shape[1]
    return np.where(mask.any(axis=1), width - 1 - mask[:, ::-1].argmax(axis=1), default)


def step_capacity(checkers: np.ndarray, open_: np.ndarray, home_all: np.ndarray) -> np.ndarray:
    """(N, 7) int: for each number k = 1..6 (column k; column 0 unused), how many steps of k a side could play in a
    row, at most 4, in a running game (contact ``block``).

    ``checkers`` (N, 24): the side's checkers by its own point - 1 (it moves towards index 0); ``open_`` (N, 24)
    bool: the points it may land on, by the same index; ``home_all`` (N,) bool: all its checkers are in its home
    board (it may bear off). The side's own steps never close a point to itself, so each checker can go on along
    its chain of open points ``i - k, i - 2k, ...``; the capacity counts the steps of every checker's chain, up to
    four. Bearing off (docs/rules.md 8.3) ends a chain: from point k exactly, or from any point when k is above
    the side's highest point, once the side is home (``home_all``, or all its checkers outside come in along their
    chains with at most three steps of k). Approximations: a checker left highest by the others' bearing off does
    not bear off with a higher number, and the steps are not ordered (coming in first, then bearing off).
    """
    n = checkers.shape[0]
    counts = checkers.astype(np.int16)
    highest = last_true(counts > 0, -1)
    capacity = np.zeros((n, 7), dtype=np.int16)
    outside = _COLUMNS >= 6
    for k in range(1, 7):
        # Steps of k that bring the checkers outside the home board in (each along its chain of open points).
        alive = counts > 0
        entering = np.zeros(n, dtype=np.int16)
        entered = ~outside[None, :] | ~alive
        for m in range(1, 5):
            distance = m * k
            ok = np.zeros((n, 24), dtype=bool)
            if distance < 24:
                ok[:, distance:] = open_[:, : 24 - distance]
            alive &= ok
            now_in = alive & outside[None, :] & (_COLUMNS - distance < 6)[None, :]
            entering += (counts * now_in).sum(axis=1, dtype=np.int16) * m
            entered |= now_in
        # It may bear off when home, or when a step or more is left after all have come in.
        may_bear_off = home_all | (entered.all(axis=1) & (entering <= 3))
        above_all = may_bear_off & (k - 1 > highest)
        alive = counts > 0
        total = np.zeros(n, dtype=np.int16)
        for m in range(1, 5):
            distance = m * k
            ok = np.zeros((n, 24), dtype=bool)
            if distance < 24:
                ok[:, distance:] = open_[:, : 24 - distance]
            crossing = (_COLUMNS < distance) & (_COLUMNS >= distance - k)  # the step leaves the board
            exact = _COLUMNS == distance - 1  # ... from point k
            ok |= (exact[None, :] & may_bear_off[:, None]) | (crossing[None, :] & above_all[:, None])
            alive &= ok
            if not alive.any():
                break
            total += (counts * alive).sum(axis=1, dtype=np.int16)
        capacity[:, k] = np.minimum(total, 4)
    return capacity


def cascade_pips(capacity: np.ndarray, first: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """(N,) pips a cascade starting with ``steps`` (N,) steps of ``first`` (N,) (0: none) plays on a board of
    ``capacity`` (:func:`step_capacity`): each stage's steps while the one before was played in full, up to 6."""
    n = capacity.shape[0]
    played = np.zeros(n, dtype=np.float64)
    going = first > 0
    for k in range(1, 7):
        stage = going & (k >= first)
        want = np.where(k == first, steps, 4)
        can = np.minimum(capacity[:, k], want)
        played += stage * k * can
        going &= ~stage | (can >= want)
    return played


def expected_pips(capacity: np.ndarray, cascading: np.ndarray) -> np.ndarray:
    """(N,) a side's expected playable pips on its next roll (approximately) from its :func:`step_capacity`:
    a roll a-b plays each number it can; a double d-d its four steps of d, or where ``cascading`` (N,) bool the
    whole cascade from d until a stage cannot be played in full."""
    n = capacity.shape[0]
    can = capacity > 0
    total = np.zeros(n, dtype=np.float64)
    four = np.full(n, 4, dtype=np.int16)
    for a, b, count in DISTINCT_ROLLS:
        if a == b:
            plain = a * capacity[:, a].astype(np.float64)
            cascade = cascade_pips(capacity, np.full(n, a, dtype=np.int16), four)
            total += np.where(cascading, cascade, plain) * count
        else:
            total += (a * can[:, a] + b * can[:, b]) * count
    return total / 36.0
