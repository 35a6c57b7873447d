"""The position type of the reference rules (docs/rules.md sections 1, 3.1 and 7).

A :class:`Position` stores the **absolute board** of docs/rules.md section 1: 24
stacks numbered from X's view, each written bottom to top (``""``, ``"XXX"``,
``"OX"`` = an O pinned by one X). Rules are stated from the view of the side
to move; :meth:`Position.stack` turns a side's own point number into the
absolute stack, so rule code reads like the rules text.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, Optional

from .options import CHECKERS_PER_SIDE, RuleOptions, RulesError, variant_rules
from .turns import Cascade
from ..quoting import quoted

SIDES = ("X", "O")
BAR_POINT = 25
"""A side's bar, as a point number in its own view (checkers enter from 25)."""
OFF_POINT = 0
"""Borne off, as a point number in a side's own view."""

RESULT_KINDS = ("single", "gammon", "backgammon", "mother", "draw")


class PositionError(RulesError):
    """A malformed or impossible position."""


def other(side: str) -> str:
    """The opponent of ``side``."""
    return "O" if side == "X" else "X"


def absolute_index(side: str, point: int, parallel: bool = False) -> int:
    """Index into the absolute board of ``side``'s point ``point`` (1..24).

    X's point ``p`` is ``points[p - 1]``. O's is ``points[24 - p]`` when the sides move in opposite directions,
    and ``points[p + 11]`` / ``points[p - 13]`` in the running games (``parallel``, docs/rules.md 8.1).
    """
    if side == "X":
        return point - 1
    if parallel:
        return point + 11 if point <= 12 else point - 13
    return 24 - point


@dataclass(frozen=True)
class GameResult:
    """How a game ended. ``points`` are before any cube."""

    winner: Optional[str]
    """``"X"``, ``"O"`` or ``None`` for a draw."""
    kind: str
    """One of ``single``, ``gammon``, ``backgammon``, ``mother``, ``draw``."""
    points: int
    """Points won, before the cube (0 for a draw)."""

    def __post_init__(self) -> None:
        if self.kind not in RESULT_KINDS:
            raise PositionError(f"result kind {quoted(self.kind)}: must be one of {RESULT_KINDS}")
        if (self.kind == "draw") != (self.winner is None):
            raise PositionError("result: a draw has winner null, every other kind a winner")
        if self.winner is not None and self.winner not in SIDES:
            raise PositionError(f"result winner {quoted(self.winner)}: must be 'X', 'O' or null")


@dataclass(frozen=True)
class Position:
    """A position: board, borne-off and bar counts, side to move, result if over.

    Immutable and hashable; two positions are equal when they are the same
    position, which is how moves are deduplicated.
    """

    rules: RuleOptions
    points: tuple[str, ...]
    """24 stacks, ``points[0]`` = X's 1-point, each written bottom to top."""
    off: tuple[int, int]
    """Checkers borne off, (X, O)."""
    bar: tuple[int, int]
    """Checkers on the bar, (X, O); always (0, 0) in the pinning games."""
    turn: str
    """Side to move (in an afterstate: the side that just moved)."""
    result: Optional[GameResult] = None
    """Set when the game has ended."""
    turns: tuple[int, int] = (0, 0)
    """Cascading doubles only (docs/rules.md 10.3): the turns each side, (X, O), has begun this game, counted up
    to ``plain_double_turns``; (0, 0) in every other rule set."""
    cascade: Optional[Cascade] = None
    """Cascading doubles only: the stage the side to move plays without rolling, or None (it rolls)."""
    next: Optional[str] = None
    """Cascading doubles, in an afterstate only: the side that plays next (the mover itself inside its cascade);
    None everywhere else (the other side plays next, or the game is over)."""

    # -- views from one side -------------------------------------------------
    def stack(self, side: str, point: int) -> str:
        """The stack on ``side``'s point ``point`` (1..24, its own numbering)."""
        return self.points[absolute_index(side, point, self.rules.parallel)]

    def off_count(self, side: str) -> int:
        return self.off[SIDES.index(side)]

    def bar_count(self, side: str) -> int:
        return self.bar[SIDES.index(side)]

    def checkers_on_point(self, side: str, point: int) -> int:
        """How many of ``side``'s checkers, pinned or free, stand on its point ``point``."""
        return self.stack(side, point).count(side)

    def checkers_on_board(self, side: str) -> int:
        return sum(stack.count(side) for stack in self.points)

    def occupied_points(self, side: str) -> Iterator[int]:
        """``side``'s points (own numbering) holding any of its checkers, highest first."""
        for point in range(24, 0, -1):
            if side in self.stack(side, point):
                yield point

    def pip_count(self, side: str) -> int:
        """Pips ``side`` still has to travel (bar counts 25)."""
        total = BAR_POINT * self.bar_count(side)
        for point in range(1, 25):
            total += point * self.checkers_on_point(side, point)
        return total

    # -- building ------------------------------------------------------------
    def with_changes(self, **changes) -> "Position":
        return replace(self, **changes)

    @property
    def variant(self) -> str:
        return self.rules.name


def empty_board() -> list[str]:
    return [""] * 24


def start_position(rules: RuleOptions | str, turn: str = "X") -> Position:
    """The start position of a rule set, with ``turn`` to move."""
    if isinstance(rules, str):
        rules = variant_rules(rules)
    if turn not in SIDES:
        raise PositionError(f"turn {quoted(turn)}: must be 'X' or 'O'")
    board = empty_board()
    for side in SIDES:
        for point, count in rules.start:
            board[absolute_index(side, point, rules.parallel)] += side * count
    return Position(rules, tuple(board), (0, 0), (0, 0), turn)


def check_stack(stack: str, pins: bool, game: str = "this variant") -> Optional[str]:
    """Why ``stack`` is not a legal stack, or None when it is (docs/rules.md 3.1, 8.2)."""
    if not isinstance(stack, str):
        return f"must be a string, got {type(stack).__name__}"
    if any(ch not in SIDES for ch in stack):
        return "may contain only the letters 'X' and 'O'"
    if len(set(stack)) <= 1:
        return None
    if not pins:
        return f"mixes X and O, but {game} has no pins: a point holds checkers of one side only"
    bottom, rest = stack[0], stack[1:]
    if rest != other(bottom) * len(rest):
        return "is not a legal stack: a pin is one checker at the bottom under checkers of the other side only"
    return None


def check_decision_state(position: Position) -> None:
    """Raise :class:`PositionError` if the turn counts, pending stage or next side do not fit the rule set."""
    rules = position.rules
    turns = position.turns
    if (not isinstance(turns, tuple) or len(turns) != 2
            or any(isinstance(t, bool) or not isinstance(t, int) for t in turns)):
        raise PositionError(f"turns: must be two integers, got {quoted(turns)}")
    if not rules.cascades:
        if turns != (0, 0) or position.cascade is not None or position.next is not None:
            raise PositionError(f"turns, cascade and next belong to rule sets whose doubles cascade; "
                                f"{rules.name}'s doubles are plain")
        return
    if any(not 0 <= t <= rules.plain_double_turns for t in turns):
        raise PositionError(f"turns: each side's count must be 0..{rules.plain_double_turns} (plain_double_turns), "
                            f"got {dict(zip(SIDES, turns))}")
    if position.cascade is not None and not isinstance(position.cascade, Cascade):
        raise PositionError(f"cascade: must be a Cascade, got {quoted(position.cascade)}")
    if position.cascade is not None and position.cascade.remainder and rules.cascade_remainder != "opponent":
        raise PositionError("cascade.remainder: true only when cascade_remainder is 'opponent' (the opponent plays "
                            f"what is left); {rules.name}'s is {quoted(rules.cascade_remainder)}")
    if position.cascade is not None and not position.cascade.remainder:
        mover = SIDES.index(position.turn) if position.turn in SIDES else 0
        if turns[mover] < rules.plain_double_turns:
            raise PositionError(f"cascade: {position.turn} has begun {turns[mover]} turns, fewer than "
                                f"plain_double_turns = {rules.plain_double_turns}, so its doubles are still plain")
    if position.next is not None and position.next not in SIDES:
        raise PositionError(f"next: must be 'X', 'O' or absent, got {quoted(position.next)}")


def validate_position(position: Position) -> None:
    """Raise :class:`PositionError` naming what is wrong, if the position is impossible."""
    rules = position.rules
    if position.turn not in SIDES:
        raise PositionError(f"turn {quoted(position.turn)}: must be 'X' or 'O'")
    if len(position.points) != 24:
        raise PositionError(f"points: must list 24 stacks, got {len(position.points)}")
    for index, stack in enumerate(position.points):
        problem = check_stack(stack, rules.pins, rules.name)
        if problem:
            raise PositionError(f"points[{index}] = {quoted(stack)} {problem}")
    for name, counts in (("off", position.off), ("bar", position.bar)):
        if len(counts) != 2 or any(not isinstance(c, int) or isinstance(c, bool) or c < 0 for c in counts):
            raise PositionError(f"{name}: must be two non-negative integers, got {quoted(counts)}")
    if not rules.hits and any(position.bar):
        raise PositionError(f"bar: {rules.name} has no bar (nothing is hit), but bar = "
                            f"{dict(zip(SIDES, position.bar))}")
    for side in SIDES:
        total = position.checkers_on_board(side) + position.off_count(side) + position.bar_count(side)
        if total != CHECKERS_PER_SIDE:
            raise PositionError(
                f"side {side} has {total} checkers (board {position.checkers_on_board(side)}, "
                f"off {position.off_count(side)}, bar {position.bar_count(side)}); must have {CHECKERS_PER_SIDE}"
            )
    if rules.pins:
        # A side never lands on its own 24-point (checkers only move forward), so
        # it can never pin a checker there.
        for side in SIDES:
            stack = position.stack(side, 24)
            if len(stack) >= 2 and stack[0] != side and stack[-1] == side:
                raise PositionError(
                    f"points[{absolute_index(side, 24, rules.parallel)}] = {quoted(stack)}: {side} pins on its own 24-point, "
                    f"where no {side} checker can ever land"
                )
    check_decision_state(position)
    if position.off == (CHECKERS_PER_SIDE, CHECKERS_PER_SIDE):
        raise PositionError("off: both sides cannot have borne off all their checkers")
