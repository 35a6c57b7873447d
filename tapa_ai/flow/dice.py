"""Dice sources: a ``random.Random`` or a callable, :func:`roll_die`, and :class:`ScriptedDice` for replays."""

from __future__ import annotations

import random
from typing import Callable, Iterable, Sequence, Union

from .errors import FlowError

__all__ = ["DiceSource", "roll_die", "ScriptedDice"]

DiceSource = Union[random.Random, Callable[[], int]]
"""A ``random.Random`` or a callable returning one die 1..6."""


def roll_die(source: DiceSource) -> int:
    """One die from a dice source, checked to be an integer 1..6."""
    if isinstance(source, random.Random):
        return source.randint(1, 6)
    if not callable(source):
        raise FlowError(f"dice source must be a random.Random or a callable returning 1..6, got {source!r}")
    value = source()
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
        raise FlowError(f"dice source returned {value!r}; a die must be an integer 1..6")
    return value


class ScriptedDice:
    """A dice source that returns fixed dice in order, for tests and replays.

    ``ScriptedDice([3, 1, 6, 6])`` gives 3, then 1, then 6, then 6; pairs are
    flattened, so ``ScriptedDice([(3, 1), (6, 6)])`` is the same. Running out
    raises :class:`FlowError`.
    """

    def __init__(self, dice: Iterable[int | Sequence[int]]):
        values: list[int] = []
        for item in dice:
            values.extend(item if isinstance(item, (tuple, list)) else [item])
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
                raise FlowError(f"scripted dice: {value!r} is not a die 1..6")
        self._values = values
        self._next = 0

    def __call__(self) -> int:
        if self._next >= len(self._values):
            raise FlowError(f"scripted dice ran out after {len(self._values)} dice")
        value = self._values[self._next]
        self._next += 1
        return value

    @property
    def remaining(self) -> int:
        """How many scripted dice are left."""
        return len(self._values) - self._next
