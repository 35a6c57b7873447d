"""A small position mini-language for tests, docs and the command line.

``board("tapa", "6:XXX 5:XX 1:OX 24:O", turn="X")`` places stacks by X's
point number (= absolute index + 1), bottom to top; ``bar:XX`` puts two X
checkers on the bar. Every checker not placed is borne off. The result is
validated like any position.
"""

from __future__ import annotations

from ..rules.options import RuleOptions, variant_rules
from ..rules.position import CHECKERS_PER_SIDE, SIDES, Position, PositionError, validate_position
from ..quoting import quoted

__all__ = ["board"]


def board(rules: RuleOptions | str, layout: str, turn: str = "X") -> Position:
    """A validated position from the mini-language (see module docstring)."""
    if isinstance(rules, str):
        rules = variant_rules(rules)
    points = [""] * 24
    bar = {"X": 0, "O": 0}
    for token in layout.split():
        where, _, stack = token.partition(":")
        if where == "bar":
            if set(stack) - set(SIDES):
                raise PositionError(f"mini-language {quoted(token)}: bar holds only X and O checkers")
            for side in SIDES:
                bar[side] += stack.count(side)
            continue
        if not (where.isascii() and where.isdigit() and len(where) <= 2) or not 1 <= int(where) <= 24:
            raise PositionError(f"mini-language {quoted(token)}: expected POINT:STACK with POINT 1..24, or bar:XX")
        points[int(where) - 1] = stack
    off = []
    for side in SIDES:
        placed = sum(s.count(side) for s in points) + bar[side]
        if placed > CHECKERS_PER_SIDE:
            raise PositionError(f"mini-language: {placed} {side} checkers placed, at most {CHECKERS_PER_SIDE}")
        off.append(CHECKERS_PER_SIDE - placed)
    position = Position(rules, tuple(points), (off[0], off[1]), (bar["X"], bar["O"]), turn)
    validate_position(position)
    return position
