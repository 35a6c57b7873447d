"""A batch of positions as a struct of small integer arrays, seen from the side to move.

The fast generator works on :class:`PositionBatch`, never on
:class:`~tapa_ai.rules.position.Position` objects. Every array is indexed by
position first; the board is **mover-relative**: column ``i`` is the mover's
own point ``i + 1`` (docs/rules.md section 1), so the mover always moves towards
column 0 and bears off below it, whatever its colour.

A point holds one of the stacks of docs/rules.md 3.1, stored in two int8 numbers:

- ``board[b, i]``: the checkers on top, signed: ``+n`` = ``n`` of the mover's,
  ``-n`` = ``n`` of the opponent's, 0 = empty.
- ``pinned[b, i]``: the checker pinned under them: ``+1`` = one of the
  mover's (so ``board < 0``), ``-1`` = one of the opponent's (so ``board > 0``),
  0 = none. Always 0 in backgammon.

So ``"OX"`` with X to move is ``board = +1, pinned = -1``; with O to move it is
``board = -1, pinned = +1``. In the running games (``paths = "parallel"``,
docs/rules.md 8.1) the opponent's checkers still sit in the column of the mover's
point they stand on: the other side's view is the board turned by 12 columns,
not reversed. Conversions to and from ``Position`` and JSON are
exact and cheap (a cached table per stack string), but the hot paths
(self-play, search) should stay in batch form.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from ..notation.json_position import position_from_json, position_to_json
from ..rules.options import RuleOptions
from ..rules.position import SIDES, Position
from ..rules.turns import Cascade

X, O = 0, 1
"""Side codes of ``turn``: the absolute colour of the side to move."""


@dataclass
class PositionBatch:
    """``B`` positions from the view of their side to move (see module docstring).

    ``rules`` is a small table of rule sets; ``rules_id`` picks one per
    position, so one batch may mix variants.
    """

    board: np.ndarray
    """(B, 24) int8: signed count of the checkers on top of each of the mover's points 1..24."""
    pinned: np.ndarray
    """(B, 24) int8: +1 a mover's checker pinned there, -1 an opponent's, 0 none."""
    off: np.ndarray
    """(B, 2) int8: checkers borne off, (mover, opponent)."""
    bar: np.ndarray
    """(B, 2) int8: checkers on the bar, (mover, opponent); zero in the pinning games."""
    turn: np.ndarray
    """(B,) int8: colour of the mover, 0 = X, 1 = O (only needed to go back to absolute positions)."""
    rules_id: np.ndarray
    """(B,) int8: index into ``rules``."""
    rules: tuple[RuleOptions, ...]
    """The rule sets the batch uses."""
    turns: Optional[np.ndarray] = field(default=None)
    """(B, 2) int8: turns begun this game, (mover, opponent), counted up to ``plain_double_turns``; zeros unless
    doubles cascade (docs/rules.md 10.3). Made zero when not given."""
    stage: Optional[np.ndarray] = field(default=None)
    """(B, 3) int8: the pending stage the mover plays without rolling, (number, steps, remainder); number 0 = none,
    the mover rolls (docs/rules.md 10.2). Made zero when not given."""

    def __post_init__(self) -> None:
        size = self.board.shape[0]
        if self.turns is None:
            self.turns = np.zeros((size, 2), dtype=np.int8)
        if self.stage is None:
            self.stage = np.zeros((size, 3), dtype=np.int8)

    def __len__(self) -> int:
        return int(self.board.shape[0])

    def has_stages(self) -> bool:
        """Whether any position is inside a cascade (plays a pending stage with no roll)."""
        return bool(self.stage[:, 0].any())

    # -- rule flags per position, as arrays for the kernels ----------------------------
    def rule_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per rule set: pins (R,) bool, mother_points (R,) int8, backgammons (R,) bool."""
        pins = np.array([r.pins for r in self.rules], dtype=np.bool_)
        mother = np.array([r.mother_points for r in self.rules], dtype=np.int8)
        backgammons = np.array([r.backgammons for r in self.rules], dtype=np.bool_)
        return pins, mother, backgammons

    def kernel_rule_table(self) -> np.ndarray:
        """(R, ``kernel.RULE_COLUMNS``) int8: the move generator's rule flags, one row per rule set, one named column
        per flag (``kernel.RULE_*``). Made once per tuple of rule sets: shared, never to be written (numba types
        read-only arrays apart, so it is not marked so)."""
        return _kernel_rule_table(self.rules)

    def cascade_rows(self) -> np.ndarray:
        """(B,) bool: the positions of a rule set whose doubles cascade (docs/rules.md 10.2)."""
        cascades = np.array([r.cascades for r in self.rules], dtype=np.bool_)
        return cascades[self.rules_id] if len(cascades) else np.zeros(len(self), dtype=np.bool_)

    # -- slicing and joining -----------------------------------------------------------
    def take(self, index: Any) -> "PositionBatch":
        """The positions at ``index`` (an int array, a slice or a bool mask), same rules table."""
        return PositionBatch(
            self.board[index], self.pinned[index], self.off[index], self.bar[index],
            self.turn[index], self.rules_id[index], self.rules, self.turns[index], self.stage[index],
        )

    def parallel_rows(self) -> np.ndarray:
        """(B,) bool: the positions of a running game (both sides travel the same way round, docs/rules.md 8.1)."""
        parallel = np.array([r.parallel for r in self.rules], dtype=np.bool_)
        return parallel[self.rules_id] if len(parallel) else np.zeros(len(self), dtype=np.bool_)

    def flipped(self) -> "PositionBatch":
        """The same positions seen from the other side, which is then to move.

        This turns an afterstate (seen from the side that just moved) into the
        next position to play, when its game is not over and the other side
        plays next (inside a cascade the mover plays on: ``Afterstates.next_positions``).
        Turn counts swap sides; a pending stage is the next mover's. The other side's
        point ``p`` is the mover's ``25 - p`` (columns reversed), or in the
        running games ``p +- 12`` (columns turned by 12).
        """
        parallel = self.parallel_rows()
        if not parallel.any():
            board, pinned = -self.board[:, ::-1], -self.pinned[:, ::-1]
        elif parallel.all():
            board, pinned = -self.board[:, _TURNED], -self.pinned[:, _TURNED]
        else:
            board, pinned = -self.board[:, ::-1], -self.pinned[:, ::-1]
            board[parallel] = -self.board[parallel][:, _TURNED]
            pinned[parallel] = -self.pinned[parallel][:, _TURNED]
        return PositionBatch(
            np.ascontiguousarray(board),
            np.ascontiguousarray(pinned),
            np.ascontiguousarray(self.off[:, ::-1]),
            np.ascontiguousarray(self.bar[:, ::-1]),
            (1 - self.turn).astype(np.int8),
            self.rules_id.copy(),
            self.rules,
            np.ascontiguousarray(self.turns[:, ::-1]),
            self.stage.copy(),
        )

    def flipped_where(self, rows: np.ndarray) -> "PositionBatch":
        """A new batch: the positions where ``rows`` (B,) bool seen from the other side (:meth:`flipped`), the
        others as they are. An afterstate followed by its own mover's stage (docs/rules.md 10.2) stays as it is
        while the others go to the opponent: ``flipped_where(~same_side)``."""
        flipped = self.flipped()
        if not rows.all():
            kept = ~rows
            for name in ("board", "pinned", "off", "bar", "turn", "turns", "stage"):
                getattr(flipped, name)[kept] = getattr(self, name)[kept]
        return flipped

    def checker_counts(self) -> np.ndarray:
        """(B, 2) int: checkers of (mover, opponent) on board, bar and off; 15 each in any legal position."""
        board = self.board.astype(np.int16)
        pinned = self.pinned.astype(np.int16)
        mover = np.clip(board, 0, None).sum(1) + (pinned == 1).sum(1) + self.off[:, 0] + self.bar[:, 0]
        opponent = np.clip(-board, 0, None).sum(1) + (pinned == -1).sum(1) + self.off[:, 1] + self.bar[:, 1]
        return np.stack([mover, opponent], axis=1)

    # -- conversions -------------------------------------------------------------------
    @classmethod
    def from_positions(cls, positions: Sequence[Position]) -> "PositionBatch":
        """A batch of the given positions, each seen from its ``turn``.

        Results (``Position.result``) are not stored: a batch holds games in progress.
        """
        size = len(positions)
        board = np.zeros((size, 24), dtype=np.int8)
        pinned = np.zeros((size, 24), dtype=np.int8)
        off = np.zeros((size, 2), dtype=np.int8)
        bar = np.zeros((size, 2), dtype=np.int8)
        turn = np.zeros(size, dtype=np.int8)
        rules_id = np.zeros(size, dtype=np.int8)
        turns = np.zeros((size, 2), dtype=np.int8)
        stage = np.zeros((size, 3), dtype=np.int8)
        rules: list[RuleOptions] = []
        rule_index: dict[RuleOptions, int] = {}
        for row, position in enumerate(positions):
            mover = position.turn
            side = SIDES.index(mover)
            turn[row] = side
            if position.rules not in rule_index:
                rule_index[position.rules] = len(rules)
                rules.append(position.rules)
            rules_id[row] = rule_index[position.rules]
            codes = _STACK_CODES[side]
            points = _mover_view(position.points, side, position.rules.parallel)
            for column, stack in enumerate(points):
                if stack:
                    code = codes.get(stack)
                    if code is None:
                        code = codes[stack] = _stack_code(stack, mover)
                    board[row, column], pinned[row, column] = code
            if side == X:
                off[row] = position.off
                bar[row] = position.bar
                turns[row] = position.turns
            else:
                off[row] = position.off[::-1]
                bar[row] = position.bar[::-1]
                turns[row] = position.turns[::-1]
            if position.cascade is not None:
                stage[row] = (position.cascade.number, position.cascade.steps, position.cascade.remainder)
        return cls(board, pinned, off, bar, turn, rules_id, tuple(rules), turns, stage)

    def to_positions(self) -> list[Position]:
        """The positions as reference ``Position`` objects (``result`` unset)."""
        return self.positions(range(len(self)))

    def position(self, row: int, result=None) -> Position:
        """One position as a reference ``Position``, with ``turn`` the mover and the given result."""
        return self.positions([row], [result])[0]

    def positions(self, rows, results=None, next_sides=None) -> list[Position]:
        """Positions of ``rows`` (a sequence of ints), with ``results`` (one per row, or None for all) and, for
        afterstates of a rule set whose doubles cascade, ``next_sides`` (one ``"X"``/``"O"`` per row)."""
        rows = np.asarray(rows, dtype=np.int64)
        codes = ((self.board[rows].astype(np.int64) + 16) * 3 + self.pinned[rows] + 1).tolist()
        offs, bars = self.off[rows].tolist(), self.bar[rows].tolist()
        sides, rule_ids = self.turn[rows].tolist(), self.rules_id[rows].tolist()
        turns_rows, stage_rows = self.turns[rows].tolist(), self.stage[rows].tolist()
        if results is None:
            results = [None] * len(codes)
        if next_sides is None:
            next_sides = [None] * len(codes)
        out = []
        for code_row, off, bar, side, rule_id, result, turns, stage, next_side in zip(
                codes, offs, bars, sides, rule_ids, results, turns_rows, stage_rows, next_sides):
            names = _STACK_NAMES[side]
            rules = self.rules[rule_id]
            stacks = _mover_view([names[code] for code in code_row], side, rules.parallel)
            if side == O:
                off, bar, turns = off[::-1], bar[::-1], turns[::-1]
            cascade = Cascade(stage[0], stage[1], bool(stage[2])) if stage[0] else None
            out.append(Position(rules, tuple(stacks), (off[0], off[1]), (bar[0], bar[1]),
                                SIDES[side], result, (turns[0], turns[1]), cascade,
                                next_side if rules.cascades else None))
        return out

    @classmethod
    def from_json(cls, objects: Iterable[Any]) -> "PositionBatch":
        """A batch from JSON position objects (or strings), validated like every JSON position."""
        return cls.from_positions([position_from_json(data) for data in objects])

    def to_json(self) -> list[dict[str, Any]]:
        return [position_to_json(position) for position in self.to_positions()]


def concatenate(batches: Sequence[PositionBatch]) -> PositionBatch:
    """One batch of all the positions of ``batches``, in order (rules tables merged)."""
    rules: list[RuleOptions] = []
    ids = []
    for batch in batches:
        mapping = []
        for rule_set in batch.rules:
            if rule_set not in rules:
                rules.append(rule_set)
            mapping.append(rules.index(rule_set))
        ids.append(np.asarray(mapping, dtype=np.int8)[batch.rules_id] if len(batch) else batch.rules_id)
    return PositionBatch(
        np.concatenate([b.board for b in batches]), np.concatenate([b.pinned for b in batches]),
        np.concatenate([b.off for b in batches]), np.concatenate([b.bar for b in batches]),
        np.concatenate([b.turn for b in batches]), np.concatenate(ids).astype(np.int8), tuple(rules),
        np.concatenate([b.turns for b in batches]), np.concatenate([b.stage for b in batches]),
    )


@functools.lru_cache(maxsize=64)
def _kernel_rule_table(rules: tuple[RuleOptions, ...]) -> np.ndarray:
    from .kernel import rule_table  # the kernel's columns; imported here, where the kernel is about to run

    return rule_table(rules)


_TURNED = (np.arange(24) - 12) % 24
"""The columns of the other side's view in the running games: its point p is the mover's p +- 12."""


def _mover_view(points, side: int, parallel: bool):
    """The absolute board's stacks in the order of ``side``'s own points 1..24 (and back: the map is its own
    inverse). X's own order is the absolute one; O's is the reverse, or in the running games the board turned
    by 12 points (docs/rules.md 8.1)."""
    if side == X:
        return points
    if parallel:
        return tuple(points[12:]) + tuple(points[:12])
    return points[::-1]


def _stack_code(stack: str, mover: str) -> tuple[int, int]:
    """(board, pinned) of one legal stack string, seen from ``mover``."""
    top_side = stack[-1]
    top_count = len(stack) if len(set(stack)) == 1 else len(stack) - 1
    top = top_count if top_side == mover else -top_count
    if len(set(stack)) == 1:
        return top, 0
    return top, (1 if stack[0] == mover else -1)


def _stack_names(mover: str) -> list[str]:
    """Stack string of every (board, pinned) code ``(board + 16) * 3 + pinned + 1``, seen from ``mover``."""
    opponent = SIDES[1 - SIDES.index(mover)]
    names = []
    for code in range(33 * 3):
        top, pin = code // 3 - 16, code % 3 - 1
        stack = mover if pin == 1 else opponent if pin == -1 else ""
        names.append(stack + (mover * top if top > 0 else opponent * -top))
    return names


_STACK_NAMES = (_stack_names("X"), _stack_names("O"))
# Stack strings repeat endlessly; decoding each once per mover colour keeps conversion cheap.
_STACK_CODES: tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]] = ({}, {})
