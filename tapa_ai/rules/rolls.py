"""The dice, in one place (docs/rules.md section 2): the 21 distinct rolls and their chances, the 36 ordered
ones, and a roll's **plan**, the numbers it gives the side to move to play.

Every module that averages over the rolls (the search, rollouts' luck, expected targets in self-play, the
heuristic's exposure, the encoding's roll features, the bear-off databases) reads :data:`DISTINCT_ROLLS`,
:data:`ROLLS` and :data:`ROLL_WEIGHTS` from here, and every one that needs to know how many numbers a roll gives
asks :func:`roll_steps`. Today a roll gives both dice, a double its number four times; a rule set whose doubles
give more (docs/rules.md 10.2, Gul Bara's cascades) changes the plan here, not in each caller. (The numba
kernels of the move generator and the fast evaluator keep their own loops over the dice: compiled code cannot
call this module.)
"""

from __future__ import annotations

import numpy as np

__all__ = ["DISTINCT_ROLLS", "ROLLS", "ROLL_WEIGHTS", "ROLL_INDEX", "ORDERED_ROLLS", "roll_steps", "is_double"]

DISTINCT_ROLLS: tuple[tuple[int, int, int], ...] = tuple(
    (a, b, 1 if a == b else 2) for a in range(1, 7) for b in range(a, 7))
"""The 21 distinct rolls ``(a, b, count)``, ``a <= b``, and how many of the 36 each stands for."""

ROLLS = np.array([(a, b) for a, b, _ in DISTINCT_ROLLS], dtype=np.int8)
"""(21, 2) the distinct rolls, in :data:`DISTINCT_ROLLS`' order."""
ROLLS.setflags(write=False)
ROLL_WEIGHTS = np.array([count for _, _, count in DISTINCT_ROLLS], dtype=np.float64) / 36.0
"""(21,) the chance of each of :data:`ROLLS` (a double 1/36, any other 2/36)."""
ROLL_WEIGHTS.setflags(write=False)
ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
"""``ROLL_INDEX[a, b]``: the row of :data:`ROLLS` of the dice ``a`` and ``b`` (1..6, either order)."""
for _index, (_a, _b) in enumerate(ROLLS.tolist()):
    ROLL_INDEX[_a, _b] = ROLL_INDEX[_b, _a] = _index
ROLL_INDEX.setflags(write=False)
ORDERED_ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int8)
"""(36, 2) every ordered roll, each as likely as the others."""
ORDERED_ROLLS.setflags(write=False)


def is_double(dice) -> bool:
    """Whether a roll's two dice show the same number."""
    return int(dice[0]) == int(dice[1])


def roll_steps(dice) -> tuple[int, ...]:
    """The numbers a roll gives to play, in the order the dice are read: both dice, or a double's number four
    times (docs/rules.md 2). Which of two different numbers is played first is the mover's choice."""
    first, second = int(dice[0]), int(dice[1])
    return (first,) * 4 if first == second else (first, second)
