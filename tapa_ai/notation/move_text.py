"""Move text (docs/rules.md section 7): ``24/21 23/22``, ``6/off``, ``bar/22``, ``""`` for a pass.

Written from the mover's own view, steps in the order played. The reader also
takes the usual shorthands: one checker over several dice (``24/18/13`` or
``24/13``), repeats (``13/11(2)``), hit marks (``13/7*``) and commas.
Turning text into a legal move is :func:`find_move`: the text is played out
step by step on the position, and what it reaches must be one of the legal
resulting positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import permutations
from typing import Sequence

from ..rules.options import RulesError
from ..rules.rolls import roll_steps
from ..rules.turns import STAGE_STEPS, decision_numbers, without_decision
from ..rules.position import BAR_POINT, OFF_POINT, SIDES, Position, other
from ..quoting import quoted
from ..rules.reference import (RESTRICTIONS, Move, Step, TurnStart, broken_restriction, check_dice, legal_moves,
                               play_step, result_after_step, single_steps, turn_start)


class MoveTextError(RulesError):
    """Move text that cannot be read, or that is not a legal move here."""


@dataclass(frozen=True)
class Segment:
    """One checker from ``start`` to ``end`` (own view; 25 = bar, 0 = off), maybe over several dice."""

    start: int
    end: int
    hit: bool = False


_TOKEN = re.compile(r"^(?P<path>[^()]+?)(?:\((?P<times>\d)\))?$")


def _point_word(word: str, token: str, *, is_start: bool) -> tuple[int, bool]:
    hit = word.endswith("*")
    word = word.rstrip("*").strip().lower()
    if word == "bar" and is_start:
        return BAR_POINT, hit
    if word == "off" and not is_start:
        return OFF_POINT, hit
    if word.isascii() and word.isdigit() and len(word) <= 2 and 1 <= int(word) <= 24:  # never int() of 5,000 digits
        return int(word), hit
    where = "a start point (1-24 or bar)" if is_start else "a point (1-24 or off)"
    raise MoveTextError(f"move text {quoted(token)}: {quoted(word)} is not {where}")


def parse_move_text(text: str) -> list[Segment]:
    """Segments of a move text, in the order written; raises :class:`MoveTextError` naming the bad part."""
    if not isinstance(text, str):
        raise MoveTextError(f"move text must be a string, got {type(text).__name__}")
    segments: list[Segment] = []
    for token in text.replace(",", " ").split():
        match = _TOKEN.match(token)
        if not match:
            raise MoveTextError(f"move text {quoted(token)}: expected from/to, e.g. 24/21, bar/22, 6/off")
        words = match.group("path").split("/")
        if len(words) < 2 or any(not w.strip() for w in words):
            raise MoveTextError(f"move text {quoted(token)}: expected from/to, e.g. 24/21, bar/22, 6/off")
        times = int(match.group("times") or 1)
        if not 1 <= times <= STAGE_STEPS:  # a decision plays at most a double's four steps (docs/rules.md 2, 10.2)
            raise MoveTextError(f"move text {quoted(token)}: repeat count must be 1..{STAGE_STEPS}")
        chain = []
        for i, word in enumerate(words):
            chain.append(_point_word(word, token, is_start=(i == 0)))
            if 0 < i < len(words) - 1 and chain[-1][0] == OFF_POINT:
                raise MoveTextError(f"move text {quoted(token)}: 'off' can only be the last point")
        for (start, _), (end, hit) in zip(chain, chain[1:]):
            if end >= start:
                raise MoveTextError(f"move text {quoted(token)}: {start}/{end} does not move forward")
            segments.extend([Segment(start, end, hit)] * times)
    if len(segments) > 4:
        raise MoveTextError(f"move text {quoted(text)}: more than four checker moves")
    return segments


def _point_text(point: int) -> str:
    if point == BAR_POINT:
        return "bar"
    if point == OFF_POINT:
        return "off"
    return str(point)


def format_steps(steps: Sequence[Step]) -> str:
    """Move text of steps in the order played, one ``from/to`` per die (``""`` for a pass)."""
    return " ".join(f"{_point_text(s.from_point)}/{_point_text(s.to_point)}" for s in steps)


def format_move(move: Move) -> str:
    return format_steps(move.steps)


# --------------------------------------------------------------------------
# Text -> legal move
# --------------------------------------------------------------------------

def _play_segments(position: Position, segments: Sequence[Segment], dice: list[int], turn: TurnStart):
    """Every (steps, end position, hits) that plays ``segments`` in order with some of ``dice``."""
    side = position.turn
    opponent_bar = SIDES.index(other(side))

    def walk(pos: Position, index: int, at: int, dice_left: list[int], steps: tuple, hits: int):
        if index == len(segments):
            yield steps, pos, hits
            return
        segment = segments[index]
        here = segment.start if at is None else at
        for die in sorted(set(dice_left), reverse=True):
            for from_point, to_point in single_steps(pos, side, die, turn):
                if from_point != here:
                    continue
                if segment.end == OFF_POINT:
                    if to_point != OFF_POINT and to_point < 1:
                        continue
                elif to_point < segment.end:
                    continue
                after = play_step(pos, side, from_point, to_point)
                hit = after.bar[opponent_bar] > pos.bar[opponent_bar]
                remaining = list(dice_left)
                remaining.remove(die)
                done = to_point == segment.end
                result = result_after_step(after, side)
                new_steps = steps + (Step(from_point, to_point, die),)
                if result is not None:
                    if done and index == len(segments) - 1:
                        yield new_steps, after.with_changes(result=result), hits + hit
                    continue
                yield from walk(after, index + 1 if done else index, None if done else to_point,
                                remaining, new_steps, hits + hit)

    yield from walk(position, 0, None, list(dice), (), 0)


def _orders(segments: Sequence[Segment]) -> list[list[Segment]]:
    """The segments as written first, then every other order."""
    return [list(segments)] + [list(p) for p in permutations(segments) if list(p) != list(segments)]


def _dice_list(dice: Sequence[int], position: Position | None = None) -> list[int]:
    """The numbers the decision plays: a roll's (both dice, a double's four), or a pending stage's
    (docs/rules.md 10.2)."""
    if position is None:
        return list(roll_steps(dice))
    return list(decision_numbers(position, dice))


def broken_rule(position: Position, dice: Sequence[int], text: str) -> str | None:
    """The restriction of the running games (docs/rules.md 8.4) that move text ``text`` breaks, as a sentence, or None.

    None when the rule set has no restrictions, or when the text cannot be played even without them
    (it is illegal for another reason: a closed point, a die it does not have, ...).
    """
    rules = position.rules
    if not rules.has_restrictions:
        return None
    segments = parse_move_text(text)
    side = position.turn
    turn = turn_start(position, dice)
    free = position.with_changes(rules=rules.replace(start_rule="none", prime_rule=False,
                                                     full_start_quarter_allowed=True))
    for order in _orders(segments):
        for steps, _, _ in _play_segments(free, order, _dice_list(dice, position), turn):
            after = position
            for step in steps:
                after = play_step(after, side, step.from_point, step.to_point)
                key = broken_restriction(after, side, turn)
                if key is not None:
                    return f"{RESTRICTIONS[key]}, and {_point_text(step.from_point)}/{_point_text(step.to_point)} breaks it"
    return None


def find_move(position: Position, dice: Sequence[int], text: str, moves: list[Move] | None = None) -> Move:
    """The legal move that ``text`` describes, or :class:`MoveTextError` listing the legal moves."""
    dice = check_dice(dice)
    segments = parse_move_text(text)
    if moves is None:
        moves = legal_moves(position, dice)
    legal = {without_decision(move.position): move for move in moves}

    def legal_list() -> str:
        return ", ".join(repr(format_move(m)) for m in moves)

    if not segments:
        if len(moves) == 1 and not moves[0].steps:
            return moves[0]
        raise MoveTextError(f"an empty move (pass) is not legal here; legal moves: {legal_list()}")

    dice_list = _dice_list(dice, position)
    stars = sum(s.hit for s in segments)
    turn = turn_start(position, dice)
    for order in _orders(segments):
        found: dict[Position, tuple[int, Move]] = {}
        for steps, after, hits in _play_segments(position, order, dice_list, turn):
            if after in legal:
                found.setdefault(after, (hits, Move(steps, legal[after].position)))
        if len(found) > 1 and stars:
            marked = {p: v for p, v in found.items() if v[0] == stars}
            found = marked or found
        elif len(found) > 1:
            unmarked = {p: v for p, v in found.items() if v[0] == 0}
            found = unmarked or found
        if len(found) == 1:
            return next(iter(found.values()))[1]
        if len(found) > 1:
            options = ", ".join(repr(format_move(m)) for _, m in found.values())
            raise MoveTextError(f"move text {quoted(text)} is ambiguous; write the steps out: {options}")
    rule = broken_rule(position, dice, text)
    because = f": {rule}" if rule else ""
    raise MoveTextError(f"move text {quoted(text)} is not a legal move with dice {list(dice)}{because}; "
                        f"legal moves: {legal_list()}")
