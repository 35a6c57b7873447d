"""Reading a player's move at the terminal: whole moves, a move entered in parts, and why a move is illegal.

A whole move is read by :func:`tapa_ai.notation.move_text.find_move` (``24/21
13/11``, ``6/off``, ``bar/22``, ``24/21/18``, ``13/11(2)``). On top of it:

- a **partial move**: text that plays some of the dice in a way that can still
  be completed to a legal move (``24/21`` with 3-1) is kept, and the rest is
  asked for; :class:`TurnInProgress` holds it until the move is complete;
- a **short reason** for an illegal move (:func:`illegal_reason`): a blocked
  point, a pinned checker, a missing checker, a distance the dice cannot make,
  bearing off too early, a checker left on the bar, or the maximum-use rule
  (a restriction of the running games is named by
  :func:`tapa_ai.notation.move_text.broken_rule`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from typing import Optional, Sequence

from ..notation.move_text import MoveTextError, Segment, find_move, format_move, parse_move_text
from ..rules.position import BAR_POINT, OFF_POINT, Position, other
from ..quoting import quoted
from ..rules.reference import (Move, Step, all_checkers_home, has_free_checker, is_closed, number_orders, play_step,
                               result_after_step, single_steps, turn_start)
from ..rules.turns import decision_numbers, without_decision

__all__ = ["LegalSequences", "TurnInProgress", "illegal_reason", "legal_moves_text", "point_text",
           "in_other_view", "display_move"]


def point_text(point: int) -> str:
    return {BAR_POINT: "bar", OFF_POINT: "off"}.get(point, str(point))


def display_move(text: str) -> str:
    """Move text with repeated steps counted, for the screen: ``24/22 24/22 24/22`` -> ``24/22(3)``."""
    counts: dict[str, int] = {}
    for token in text.split():
        counts[token] = counts.get(token, 0) + 1
    return " ".join(token if n == 1 else f"{token}({n})" for token, n in counts.items())


def legal_moves_text(moves: Sequence[Move], limit: int = 24) -> str:
    """``24/18 18/13, 24/18 24/19, ... (and 40 more)``: the legal moves, the first ``limit`` of them."""
    texts = [display_move(format_move(move)) or "(pass)" for move in moves]
    shown = ", ".join(texts[:limit])
    if len(texts) > limit:
        shown += f", ... and {len(texts) - limit} more (type 'moves' for all)"
    return shown


def in_other_view(text: str, parallel: bool = False) -> str:
    """Move text rewritten in the other side's numbering (point p is 25 - p; in the running games, ``parallel``,
    p + 12 or p - 12, docs/rules.md 8.1; bar and off stay)."""
    def other_point(point: int) -> int:
        if parallel:
            return point + 12 if point <= 12 else point - 12
        return 25 - point

    out = []
    for token in text.split():
        path, bracket, repeat = token.partition("(")
        words = path.split("/")
        out.append("/".join(str(other_point(int(w))) if w.isascii() and w.isdigit() and len(w) <= 2 else w
                            for w in words) + bracket + repeat)
    return " ".join(out)


# --------------------------------------------------------------------------
# Every legal way to play the dice, step by step
# --------------------------------------------------------------------------

class LegalSequences:
    """Every step sequence that plays a legal move of ``position`` with ``dice``, with the positions on the way.

    The legal moves (:func:`tapa_ai.rules.reference.legal_moves`) keep one
    sequence per resulting position; a move entered in parts needs all of
    them, to tell whether its first steps can still be completed.
    """

    def __init__(self, position: Position, dice: tuple[int, int], moves: Sequence[Move]):
        self.position = position
        self.dice = dice
        self.legal = {without_decision(move.position) for move in moves}
        self.sequences: list[tuple[tuple[Step, ...], tuple[Position, ...]]] = []
        numbers = decision_numbers(position, dice)
        self.turn = turn_start(position, numbers)
        side = position.turn
        for order in number_orders(numbers):
            self._walk(side, position, order, (), ())

    def _walk(self, side: str, position: Position, dice: tuple[int, ...], steps: tuple, positions: tuple) -> None:
        options = single_steps(position, side, dice[0], self.turn) if dice else []
        if not options:
            if position in self.legal:
                self.sequences.append((steps, positions))
            return
        for from_point, to_point in options:
            after = play_step(position, side, from_point, to_point)
            step = Step(from_point, to_point, dice[0])
            result = result_after_step(after, side)
            if result is not None:
                after = after.with_changes(result=result)
                if after in self.legal:
                    self.sequences.append((steps + (step,), positions + (after,)))
                continue
            self._walk(side, after, dice[1:], steps + (step,), positions + (after,))

    def prefixes(self, segments: Sequence[Segment]) -> dict[Position, tuple[tuple[Step, ...], bool]]:
        """The positions reached by playing ``segments`` (in any order) as the first steps of a legal sequence.

        Keys are the positions after those steps; values the steps played and
        whether they are a whole legal move.
        """
        found: dict[Position, tuple[tuple[Step, ...], bool]] = {}
        orders = {tuple(order) for order in permutations(segments)}
        for steps, positions in self.sequences:
            for order in orders:
                used = _match_segments(steps, order)
                if used:
                    found.setdefault(positions[used - 1], (steps[:used], used == len(steps)))
        return found


def _match_segments(steps: Sequence[Step], segments: Sequence[Segment]) -> int:
    """How many leading ``steps`` play ``segments`` in order (each one checker, maybe over several dice); 0 if not."""
    index = 0
    for segment in segments:
        at = segment.start
        while True:
            if index >= len(steps) or steps[index].from_point != at:
                return 0
            at = steps[index].to_point
            index += 1
            if at == segment.end:
                break
            if segment.end != OFF_POINT and at < segment.end:
                return 0
            if at == OFF_POINT:
                return 0
    return index


# --------------------------------------------------------------------------
# A turn being entered
# --------------------------------------------------------------------------

@dataclass
class TurnInProgress:
    """The human's turn: the dice, the legal moves, and the text entered so far (a partial move)."""

    position: Position
    dice: tuple[int, int]
    moves: tuple[Move, ...]
    entered: str = ""
    """Move text already accepted as the start of a move."""
    partial_position: Optional[Position] = None
    """The board after the steps entered so far (None: nothing entered)."""
    partial_steps: tuple[Step, ...] = ()
    _sequences: Optional[LegalSequences] = field(default=None, repr=False)

    @property
    def dice_left(self) -> list[int]:
        """The dice not yet played by the partial move."""
        left = list(decision_numbers(self.position, self.dice))
        for step in self.partial_steps:
            left.remove(step.die)
        return left

    @property
    def shown_position(self) -> Position:
        return self.partial_position or self.position

    def sequences(self) -> LegalSequences:
        if self._sequences is None:
            self._sequences = LegalSequences(self.position, self.dice, self.moves)
        return self._sequences

    def reset(self) -> None:
        self.entered, self.partial_position, self.partial_steps = "", None, ()

    def enter(self, text: str) -> Move | str:
        """A complete legal move, or ``"partial"`` when the text starts one; :class:`MoveTextError` otherwise.

        ``text`` continues what was entered before (:attr:`entered`).
        """
        combined = f"{self.entered} {text}".strip()
        parse_move_text(text)  # a syntax error is reported for the part just typed
        segments = parse_move_text(combined)
        if not segments:
            raise MoveTextError("empty move")
        try:
            return find_move(self.position, self.dice, combined, list(self.moves))
        except MoveTextError as error:
            if "ambiguous" in str(error):
                raise
            whole_move_error = error
        prefixes = self.sequences().prefixes(segments)
        if len(prefixes) == 1:
            (after, (steps, complete)), = prefixes.items()
            if complete:
                legal = next(move for move in self.moves if without_decision(move.position) == after)
                return Move(steps, legal.position)
            self.entered, self.partial_position, self.partial_steps = combined, after, steps
            return "partial"
        if len(prefixes) > 1:
            raise MoveTextError(f"{quoted(combined)} can be played more than one way; write each step, e.g. "
                                "24/21 21/18 instead of 24/18")
        raise whole_move_error


# --------------------------------------------------------------------------
# Why a move is illegal
# --------------------------------------------------------------------------

def _reachable_distances(dice: Sequence[int]) -> set[int]:
    """Pips one checker can travel with some of ``dice`` (the dice of the turn, or those left)."""
    sums = {0}
    for die in dice:
        sums |= {total + die for total in sums}
    return sums - {0}


def _dice_fit(segments: Sequence[Segment], dice: Sequence[int]) -> bool:
    """Can each segment get its own dice, summing to its distance (bearing off: reaching off)?"""
    if not segments:
        return True
    first, rest = segments[0], segments[1:]
    count = len(dice)
    for mask in range(1, 1 << count):
        chosen = [dice[i] for i in range(count) if mask >> i & 1]
        total = sum(chosen)
        distance = first.start - first.end
        fits = total >= first.start if first.end == OFF_POINT else total == distance
        if fits and _dice_fit(rest, [dice[i] for i in range(count) if not mask >> i & 1]):
            return True
    return False


def _no_bar(rules) -> str:
    """Why ``bar/N`` means nothing in a game without hits (docs/rules.md: the pinning and the running games)."""
    if rules.pins:
        return f"{rules.name} has no bar: checkers are pinned, not hit"
    return f"{rules.name} has no bar: no checker is ever hit (a single checker holds its point)"


def illegal_reason(position: Position, dice: Sequence[int], text: str) -> str:
    """A short reason why ``text`` is not a legal move of ``position``'s side to move with ``dice``.

    ``dice`` are the dice still to play: two, four for doubles, or fewer in
    the middle of a move entered in parts.
    """
    dice = list(dice)
    if len(dice) == 2:
        dice = list(decision_numbers(position, dice))
    try:
        segments = parse_move_text(text)
    except MoveTextError as error:
        return str(error)
    side = position.turn
    opponent = other(side)
    if len(dice) == 2 or (len(dice) == 4 and len(set(dice)) == 1):
        dice_text = f"your dice are {dice[0]}-{dice[1]}"
    else:
        dice_text = f"you still have {' '.join(map(str, dice))} to play"
    if position.bar_count(side) and segments and segments[0].start != BAR_POINT:
        return "you have a checker on the bar: enter it first (bar/N)"
    for segment in segments:
        start, end = segment.start, segment.end
        move = f"{point_text(start)}/{point_text(end)}"
        if start == BAR_POINT:
            if not position.rules.hits:
                return _no_bar(position.rules)
            if not position.bar_count(side):
                return "you have no checker on the bar"
        elif side not in position.stack(side, start):
            return f"you have no checker on your {start}-point"
        elif not has_free_checker(position, side, start):
            return f"your checker on {start} is pinned (an {opponent} checker sits on it)"
        if end == OFF_POINT:
            if not all_checkers_home(position, side):
                return "you may bear off only when all your checkers are in your home board (points 1-6)"
            if max(dice) < start and start not in _reachable_distances(dice):
                return f"{move} needs {start} pips; {dice_text}"
            continue
        if is_closed(position, side, end):
            stack = position.stack(side, end)
            if position.rules.contact == "block":
                return f"your {end}-point is blocked (an {opponent} checker holds it)"
            if stack.count(opponent) >= 2:
                return f"your {end}-point is blocked ({stack.count(opponent)} {opponent} checkers on it)"
            return f"your {end}-point is blocked ({opponent} pins one of your checkers there)"
        distance = start - end
        if distance not in _reachable_distances(dice):
            return f"{move} is {distance} pips; {dice_text}"
    if not _dice_fit(segments, dice):
        return f"{text.strip()} does not fit your dice ({dice_text})"
    return ("that does not play your dice legally: play as many dice as you can, the higher one when only one "
            "can be played, and land only on open points on the way")
