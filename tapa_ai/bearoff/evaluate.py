"""Values of bear-off positions for whole batches: the exact two-sided table, else the one-sided convolution.

A position (a :class:`~tapa_ai.movegen.batch.PositionBatch` row, seen from ``turn``, the side to roll) is a
**bear-off** (:func:`bearoff_mask`) when its game goes on and no contact is left: every checker of both
sides is on its own 1- to 6-points or borne off, none on the bar, none pinned, and both still have one on
the board. The two home boards lie at opposite ends of the board and both sides move away from each other
there (in tapa and plakoto as in backgammon, docs/rules.md section 1), so no checker can meet an opposing one
again: no hit, no pin, no mother. In the running games (docs/rules.md 8.1) the other's home board is the
mover's points 13-18, twelve points away on the same track, and both sides bear off without meeting
either. Every variant then plays the same end game, and a finished one scores a single, or a gammon when
the loser has borne off none; never a backgammon (the loser's checkers are all in its own home, none in
the winner's or on the bar), a mother win or a draw. ``tests/test_bearoff.py`` checks this on the
reference rules, for every variant.

:func:`bearoff_distributions` values them from the side to roll's view in the network's outcome classes
(:mod:`tapa_ai.rules.outcomes`; only the single and gammon classes are ever non-zero here):

- both sides with at most :data:`EXACT_CHECKERS` checkers on the board: the exact cubeless chance of
  winning from the two-sided table (no gammon is possible, at least 9 checkers are off);
- otherwise, as GNU Backgammon does with its one-sided database: the roller needs ``K`` turns to bear off,
  the other ``J`` (independent, each side playing to bear off in the fewest turns on average), and the
  roller wins iff ``K <= J``; it wins a gammon iff ``K <= F`` with ``F`` the other's turns to its first
  checker off (from the first-off distribution; only when the other has borne off none), and loses one iff
  ``F' > J`` for its own ``F'`` (only when it has borne off none).

Only for the rule sets the databases are exact for (:func:`tapa_ai.bearoff.exactness.why_not_exact`: plain
doubles; not Gul Bara's cascading ones, docs/rules.md 10.2): :func:`bearoff_mask` says where no contact is left
whatever the rules, :func:`database_mask` where the databases answer, a bear-off of such a rule set; the values
(:func:`bearoff_values`, :func:`bearoff_distributions`) and :func:`exact_mask` are of those rows only, so a
position of another rule set is left to the network everywhere they are used.

The databases (:mod:`tapa_ai.bearoff.database`) are loaded on first need, once per process: code that never
meets a bear-off never reads them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional

import numpy as np
from numba import njit

from ..movegen.batch import PositionBatch
from ..rules.outcomes import LOSE_GAMMON, LOSE_SINGLE, WIN_GAMMON, WIN_SINGLE, num_outcomes
from ..rules.position import CHECKERS_PER_SIDE, SIDES
from . import database
from .exactness import exact_for
from .one_sided import _BINOMIAL, POINTS
from .two_sided import DEFAULT_CHECKERS

__all__ = [
    "EXACT_CHECKERS", "BearoffValues", "bearoff_mask", "exact_rules_mask", "database_mask", "exact_mask", "homes",
    "bearoff_values", "bearoff_distributions", "home_distributions", "bearoff_problems",
]

EXACT_CHECKERS = DEFAULT_CHECKERS
"""Checkers a side (on the board) up to which the two-sided table answers exactly."""

_HOME = POINTS  # the mover's home is columns 0..5, the other's columns 18..23 (its points 6..1)
_OTHER_HOME = 24 - POINTS
_PARALLEL_OTHER_HOME = 12  # in the running games the other's points 1..6 are the mover's columns 12..17


@njit(cache=True)
def _classify(board, pinned, bar, parallel, exact_checkers, bearoff, exact):
    """Fill (N,) ``bearoff`` (the mask) and ``exact`` (a bear-off with both sides <= exact_checkers on board).

    ``parallel``: (N,) bool, the row is a running game (the other's home is columns 12..17).
    """
    for row in range(board.shape[0]):
        bearoff[row] = False
        exact[row] = False
        if bar[row, 0] != 0 or bar[row, 1] != 0:
            continue
        mine = 0
        theirs = 0
        contact = False
        low = _PARALLEL_OTHER_HOME if parallel[row] else _OTHER_HOME
        high = low + POINTS
        for column in range(24):
            count = board[row, column]
            if pinned[row, column] != 0 or (count > 0 and column >= _HOME) or (
                    count < 0 and (column < low or column >= high)):
                contact = True
                break
            if count > 0:
                mine += count
            else:
                theirs -= count
        if contact or mine == 0 or theirs == 0:
            continue
        bearoff[row] = True
        exact[row] = mine <= exact_checkers and theirs <= exact_checkers


def _classified(batch: PositionBatch) -> tuple[np.ndarray, np.ndarray]:
    count = len(batch)
    bearoff = np.zeros(count, dtype=np.bool_)
    exact = np.zeros(count, dtype=np.bool_)
    if count:
        _classify(np.ascontiguousarray(batch.board), np.ascontiguousarray(batch.pinned),
                  np.ascontiguousarray(batch.bar), batch.parallel_rows(), EXACT_CHECKERS, bearoff, exact)
    return bearoff, exact


def bearoff_mask(batch: PositionBatch) -> np.ndarray:
    """(N,) bool: the positions whose game goes on with no contact left (module docstring), whatever their rules:
    :func:`database_mask` is where the databases value them.

    The same from either side's view, so afterstates (seen from the side that moved) may be masked as they are.
    """
    return _classified(batch)[0]


def exact_rules_mask(batch: PositionBatch) -> np.ndarray:
    """(N,) bool: the positions of rule sets the databases are exact for (:func:`~tapa_ai.bearoff.exactness.exact_for`,
    asked once per rule set of the batch's ``rules`` table, picked by ``rules_id``)."""
    exact = np.array([exact_for(rules) for rules in batch.rules], dtype=np.bool_)
    return exact[batch.rules_id] if len(exact) else np.zeros(len(batch), dtype=np.bool_)


def _gated(batch: PositionBatch, mask: np.ndarray) -> np.ndarray:
    """``mask`` where the batch's rule sets are exact for the databases, False elsewhere."""
    if not mask.any() or all(exact_for(rules) for rules in batch.rules):
        return mask
    return mask & exact_rules_mask(batch)


def database_mask(batch: PositionBatch) -> np.ndarray:
    """(N,) bool: the bear-offs (:func:`bearoff_mask`) the databases value, those of rule sets they are exact for:
    the rows :func:`bearoff_values` answers. Masks afterstates as :func:`bearoff_mask` does."""
    return _gated(batch, _classified(batch)[0])


def exact_mask(batch: PositionBatch) -> np.ndarray:
    """(N,) bool: bear-offs the two-sided table answers exactly (both sides <= :data:`EXACT_CHECKERS` on the board,
    of a rule set the databases are exact for)."""
    return _gated(batch, _classified(batch)[1])


def homes(batch: PositionBatch, rows: Optional[np.ndarray] = None) -> np.ndarray:
    """(M, 2, 6) int64 checkers on each side's own 1- to 6-points: ``[:, 0]`` the side to roll's, ``[:, 1]`` the other's.

    Of ``rows`` (all by default); only checkers on top count (a bear-off has no pins).
    """
    board = batch.board if rows is None else batch.board[rows]
    parallel = batch.parallel_rows() if rows is None else batch.parallel_rows()[rows]
    board = board.astype(np.int64)
    mine = np.clip(board[:, :POINTS], 0, None)
    theirs = np.clip(-board[:, :_OTHER_HOME - 1:-1], 0, None)  # columns 23..18: the other's points 1..6
    if parallel.any():  # running games: columns 12..17 are the other's points 1..6
        theirs[parallel] = np.clip(-board[parallel, _PARALLEL_OTHER_HOME:_PARALLEL_OTHER_HOME + POINTS], 0, None)
    return np.stack([mine, theirs], axis=1)


def _ranks(home: np.ndarray) -> np.ndarray:
    """(M,) int64 one-sided ranks of (M, 6) homes (``one_sided.rank``, vectorized)."""
    if not len(home):
        return np.zeros(0, dtype=np.int64)
    running = np.cumsum(home, axis=1)
    columns = np.arange(POINTS)
    return _BINOMIAL[running + columns, columns + 1].sum(axis=1)


# -- the databases, loaded on first need ----------------------------------------------------------
_TABLES: dict[str, object] = {}
"""``"one_sided"``: :class:`~tapa_ai.bearoff.database.OneSided`; ``"two_sided"``: the (n, n) win table."""
_TABLES_LOCK = threading.Lock()


def _one_sided() -> database.OneSided:
    with _TABLES_LOCK:
        if "one_sided" not in _TABLES:
            _TABLES["one_sided"] = database.one_sided(progress=False)
        return _TABLES["one_sided"]


def _two_sided() -> np.ndarray:
    with _TABLES_LOCK:
        if "two_sided" not in _TABLES:
            _TABLES["two_sided"] = database.two_sided(EXACT_CHECKERS)
        return _TABLES["two_sided"]


@njit(cache=True)
def _one_sided_values(turns, first_off, mine, theirs, mine_off_none, theirs_off_none):
    """(M, 4) float64 ``win, win_gammon, lose, lose_gammon`` by the one-sided convolution (module docstring).

    ``turns``, ``first_off``: (P, L) the tables; ``mine``, ``theirs``: (M,) ranks of the side to roll's and
    the other's homes. ``K`` (``J``): the roller's (other's) turns to bear off, ``F`` (``F'``) to the other's
    (roller's) first checker off: ``win = P(K <= J)``, ``lose = P(J < K)``, ``win_gammon = P(K <= F)``,
    ``lose_gammon = P(F' > J)``; each row is divided by ``win + lose`` (1 up to the float32 tables' rounding).
    """
    count = mine.shape[0]
    length = turns.shape[1]
    out = np.zeros((count, 4))
    for row in range(count):
        a = mine[row]
        b = theirs[row]
        win = 0.0
        lose = 0.0
        win_gammon = 0.0
        lose_gammon = 0.0
        theirs_at_least = 0.0  # P(J >= k)
        theirs_first_at_least = 0.0  # P(F >= k)
        mine_above = 0.0  # P(K >= k + 1)
        mine_first_above = 0.0  # P(F' >= k + 1)
        for k in range(length - 1, -1, -1):
            theirs_at_least += turns[b, k]
            theirs_first_at_least += first_off[b, k]
            win += turns[a, k] * theirs_at_least
            win_gammon += turns[a, k] * theirs_first_at_least
            lose += turns[b, k] * mine_above
            lose_gammon += turns[b, k] * mine_first_above
            mine_above += turns[a, k]
            mine_first_above += first_off[a, k]
        total = win + lose
        out[row, 0] = win / total
        out[row, 1] = min(win_gammon / total, win / total) if theirs_off_none[row] else 0.0
        out[row, 2] = lose / total
        out[row, 3] = min(lose_gammon / total, lose / total) if mine_off_none[row] else 0.0
    return out


def home_distributions(roller: np.ndarray, other: np.ndarray, roller_off_none: np.ndarray,
                       other_off_none: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(M, classes) float64 outcome distributions of the side to roll and (M,) bool: whether each was exact.

    ``roller``, ``other``: (M, 6) homes, each side's checkers on its own 1- to 6-points (at least one each);
    ``*_off_none``: (M,) bool, that side has borne off none (only then can it lose a gammon).
    """
    roller = np.asarray(roller, dtype=np.int64).reshape(-1, POINTS)
    other = np.asarray(other, dtype=np.int64).reshape(-1, POINTS)
    count = roller.shape[0]
    mine, theirs = _ranks(roller), _ranks(other)
    exact = (roller.sum(axis=1) <= EXACT_CHECKERS) & (other.sum(axis=1) <= EXACT_CHECKERS)
    out = np.zeros((count, classes))
    if exact.any():
        # Clipped: the build's 1 - (a sum of chances) can leave -2e-16 where the chance is 0.
        win = np.clip(_two_sided()[mine[exact], theirs[exact]].astype(np.float64), 0.0, 1.0)
        out[exact, WIN_SINGLE] = win
        out[exact, LOSE_SINGLE] = 1.0 - win
    rest = np.flatnonzero(~exact)
    if rest.size:
        tables = _one_sided()
        win, win_gammon, lose, lose_gammon = _one_sided_values(
            tables.turns, tables.first_off, mine[rest], theirs[rest], np.asarray(roller_off_none, dtype=np.bool_)[rest],
            np.asarray(other_off_none, dtype=np.bool_)[rest]).T
        out[rest, WIN_SINGLE] = win - win_gammon
        out[rest, WIN_GAMMON] = win_gammon
        out[rest, LOSE_SINGLE] = lose - lose_gammon
        out[rest, LOSE_GAMMON] = lose_gammon
    return out, exact


@dataclass(frozen=True)
class BearoffValues:
    """The bear-off rows of a batch and their values (:func:`bearoff_values`)."""

    rows: np.ndarray
    """(M,) int64 indices into the batch where :func:`database_mask` holds, ascending."""
    distributions: np.ndarray
    """(M, K) float64 outcome distributions from the side to roll's view, in the outcome classes' order (:mod:`tapa_ai.rules.outcomes`)."""
    exact: np.ndarray
    """(M,) bool: the two-sided table answered (else the one-sided convolution)."""
    homes: np.ndarray
    """(M, 2, 6) int64 the side to roll's and the other's homes (:func:`homes`)."""


def _classes_of(batch: PositionBatch, rows: np.ndarray) -> int:
    """The outcome classes of the rule sets of ``rows`` (ValueError if they differ); of the batch's first if none."""
    if not rows.size:
        return num_outcomes(batch.rules[0]) if batch.rules else 6
    counts = {num_outcomes(batch.rules[int(index)]) for index in np.unique(batch.rules_id[rows])}
    if len(counts) > 1:
        raise ValueError("bear-off values: the batch mixes rule sets with and without draws (6 and 7 outcome "
                         "classes); value them separately")
    return counts.pop()


def bearoff_values(batch: PositionBatch) -> BearoffValues:
    """The bear-off positions of ``batch`` valued from the side to roll's view (module docstring): those of rule
    sets the databases are exact for (:func:`database_mask`); the other rows are not among ``rows``."""
    rows = np.flatnonzero(database_mask(batch)).astype(np.int64)
    classes = _classes_of(batch, rows)
    found = homes(batch, rows)
    off = batch.off[rows]
    distributions, exact = home_distributions(found[:, 0], found[:, 1], off[:, 0] == 0, off[:, 1] == 0, classes)
    return BearoffValues(rows, distributions, exact, found)


def bearoff_distributions(batch: PositionBatch) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, dist)``: (M,) int64 rows of ``batch`` the databases value (:func:`database_mask`) and (M, K)
    float64 their outcome distributions from the side to roll's view (K = 6, or 7 with ``draw`` last where the
    rules have draws)."""
    values = bearoff_values(batch)
    return values.rows, values.distributions


def bearoff_problems(batch: PositionBatch, row: int) -> list[str]:
    """What keeps position ``row`` from being a bear-off, in words naming the colours (empty: it is one)."""
    board = batch.board[row].astype(np.int64)
    pinned = batch.pinned[row].astype(np.int64)
    mover, other = SIDES[int(batch.turn[row])], SIDES[1 - int(batch.turn[row])]
    problems = []
    other_home = slice(_OTHER_HOME, 24)
    if batch.rules[int(batch.rules_id[row])].parallel:
        other_home = slice(_PARALLEL_OTHER_HOME, _PARALLEL_OTHER_HOME + POINTS)
    for side, sign, home in ((mover, 1, slice(0, POINTS)), (other, -1, other_home)):
        on_top = np.clip(sign * board, 0, None)
        under = (pinned == sign).astype(np.int64)
        outside = on_top + under
        outside[home] = 0
        index = 0 if sign == 1 else 1
        off = int(batch.off[row, index])
        if off >= CHECKERS_PER_SIDE or on_top.sum() + under.sum() + batch.bar[row, index] == 0:
            problems.append(f"the game is over: {side} has borne off all its checkers")
            continue
        if outside.sum():
            problems.append(f"{side} has {_checkers(int(outside.sum()))} outside its home board")
        if batch.bar[row, index]:
            problems.append(f"{side} has {_checkers(int(batch.bar[row, index]))} on the bar")
        if under.sum():
            problems.append(f"{side} has {_checkers(int(under.sum()))} pinned")
    return problems


def _checkers(count: int) -> str:
    return f"{count} checker" if count == 1 else f"{count} checkers"
