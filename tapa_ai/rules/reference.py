"""Reference generator of legal whole-turn moves, written to read like docs/rules.md.

This is the oracle of the project: plain, slow and exact. Faster generators
are tested against it. Every function here speaks from the view of the side
to move, ``P``, with points numbered 1..24 in ``P``'s own view, 25 for the bar
and 0 for borne off.

The turn is searched step by step (one die per step) in every order of the
dice, which gives intermediate landings, pins made and released on the way,
hits and bar entry for free; the running games' restrictions (docs/rules.md 8.4)
are checked on the position after every step. Then the whole-turn rules
filter the sequences:
maximum use of the dice, the higher die, and the Decision that a step which
ends the game ends the turn and counts as using every die.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Optional

from .options import CHECKERS_PER_SIDE, RulesError
from .rolls import roll_steps
from .turns import after_stage, check_dice, stage_numbers
from .position import (
    BAR_POINT,
    OFF_POINT,
    SIDES,
    GameResult,
    Position,
    PositionError,
    absolute_index,
    other,
)
from ..quoting import quoted


@dataclass(frozen=True)
class Step:
    """One checker moved by one die, in the mover's numbering (25 = bar, 0 = off)."""

    from_point: int
    to_point: int
    die: int


@dataclass(frozen=True)
class Move:
    """A legal whole-turn move: the steps in the order played and the position they reach.

    ``position`` is the afterstate: ``turn`` is still the side that moved, and
    ``result`` is set if the move ended the game. A passed turn has no steps.
    """

    steps: tuple[Step, ...]
    position: Position




# --------------------------------------------------------------------------
# Landing (3.2, 4)
# --------------------------------------------------------------------------

def is_closed(position: Position, side: str, point: int) -> bool:
    """A point of ``side`` (own numbering) on which it may not land.

    Closed: two or more opposing checkers, or (pin games) an opposing checker
    on top pinning one of ``side``'s, or (running games, 8.2) any opposing checker.
    """
    stack = position.stack(side, point)
    opponent = other(side)
    if position.rules.contact == "block":
        return opponent in stack
    if stack.count(opponent) >= 2:
        return True
    return position.rules.pins and len(stack) >= 2 and stack[-1] == opponent


def has_free_checker(position: Position, side: str, point: int) -> bool:
    """``side`` has a checker it may move on this point: its own checker on top.

    A pinned checker (at the bottom, under an opposing one) cannot move.
    """
    stack = position.stack(side, point)
    return bool(stack) and stack[-1] == side


# --------------------------------------------------------------------------
# Bearing off (3.3, 4)
# --------------------------------------------------------------------------

def all_checkers_home(position: Position, side: str) -> bool:
    """All 15 of ``side``'s checkers are on its points 1-6 (pinned ones count) or off."""
    if position.bar_count(side):
        return False
    return all(side not in position.stack(side, point) for point in range(7, 25))


def may_bear_off(position: Position, side: str, point: int, die: int) -> bool:
    """May ``side`` bear off the free checker on ``point`` with ``die``?

    Exact: die == point. A larger die: only from the highest point holding any
    of ``side``'s checkers, pinned ones included.
    """
    if not all_checkers_home(position, side):
        return False
    if die == point:
        return True
    if die < point:
        return False
    return all(side not in position.stack(side, higher) for higher in range(point + 1, 7))


# --------------------------------------------------------------------------
# Restrictions of the running games (8.4), checked after every step
# --------------------------------------------------------------------------

HEAD_DOUBLES = (6, 4, 3)
"""The doubles with which two checkers may leave the head on a turn that begins with all 15 on it (8.4 a)."""

RESTRICTIONS = {
    "head": "only one checker may leave the head (the 24-point) this turn",
    "head_double": "only two checkers may leave the head (the 24-point) this turn",
    "runner": "a second checker may not leave the 24-point until the first has passed the opponent's "
              "starting point, to the 11-point or beyond",
    "prime": "the prime rule: six points in a row may not shut in every opposing checker",
    "start_quarter": "all six points of the starting quarter (19-24) may not be held at once",
}
"""What each restriction forbids, as error messages quote it."""


@dataclass(frozen=True)
class TurnStart:
    """What the restrictions need to know of the start of the turn: only the head rule looks back."""

    head: int = 0
    """Checkers the mover had on its 24-point when the turn began."""
    may_leave_head: int = CHECKERS_PER_SIDE
    """How many of them may leave it this turn."""


NO_TURN_START = TurnStart()
"""The turn start of a rule set without the head rule (nothing to remember)."""


def turn_start(position: Position, dice: Iterable[int]) -> TurnStart:
    """The :class:`TurnStart` of the side to move in ``position`` playing ``dice`` (a roll's two dice or the
    numbers of its stage)."""
    if position.rules.start_rule != "head":
        return NO_TURN_START
    dice = tuple(dice)
    head = position.checkers_on_point(position.turn, 24)
    first_turn = head == CHECKERS_PER_SIDE
    double = len(dice) in (2, 4) and len(set(dice)) == 1 and dice[0] in HEAD_DOUBLES
    return TurnStart(head, 2 if first_turn and double else 1)


def holds_prime(position: Position, side: str) -> bool:
    """Does ``side`` hold six points in a row on the opponent's path with every opposing checker behind them?

    The run is the opponent's points ``k .. k+5`` in its own numbering (1 <= k <= 19), each holding
    one of ``side``'s checkers; an opposing checker on the opponent's points below ``k``, or borne off, is
    ahead of it and makes it allowed (8.4 b).
    """
    opponent = other(side)
    held = [False] + [side in position.stack(opponent, point) for point in range(1, 25)]
    for low in range(1, 20):
        if all(held[low:low + 6]):
            ahead = position.off_count(opponent) > 0 or any(
                opponent in position.stack(opponent, point) for point in range(1, low))
            if not ahead:
                return True
    return False


def has_passed_the_opponents_start(position: Position, side: str) -> bool:
    """One of ``side``'s checkers stands on its points 1-11 or is off (8.4 a, the runner rule)."""
    return position.off_count(side) > 0 or any(side in position.stack(side, point) for point in range(1, 12))


def broken_restriction(position: Position, side: str, turn: TurnStart) -> Optional[str]:
    """The key in :data:`RESTRICTIONS` of a restriction ``position`` breaks after a step of ``side``, or None."""
    rules = position.rules
    if rules.start_rule == "head":
        if turn.head - position.checkers_on_point(side, 24) > turn.may_leave_head:
            return "head" if turn.may_leave_head == 1 else "head_double"
    elif rules.start_rule == "runner":
        if (CHECKERS_PER_SIDE - position.checkers_on_point(side, 24) > 1
                and not has_passed_the_opponents_start(position, side)):
            return "runner"
    if not rules.full_start_quarter_allowed and all(side in position.stack(side, p) for p in range(19, 25)):
        return "start_quarter"
    if rules.prime_rule and holds_prime(position, side):
        return "prime"
    return None


# --------------------------------------------------------------------------
# Single steps
# --------------------------------------------------------------------------

def single_steps(position: Position, side: str, die: int,
                 turn: TurnStart = NO_TURN_START) -> list[tuple[int, int]]:
    """Every legal single step ``(from, to)`` of ``side`` with one die, highest first.

    ``turn`` is the :func:`turn_start` of the turn this step belongs to; only the head rule reads it, and a
    rule set with the head rule refuses to go without it (it would silently let every checker leave).
    """
    if turn is NO_TURN_START and position.rules.start_rule == "head":
        raise ValueError("single_steps: the head rule needs the turn's start: pass turn_start(position, dice)")
    steps = _landing_steps(position, side, die)
    if not position.rules.has_restrictions:
        return steps
    return [(start, end) for start, end in steps
            if broken_restriction(play_step(position, side, start, end), side, turn) is None]


def _landing_steps(position: Position, side: str, die: int) -> list[tuple[int, int]]:
    """The single steps that move a free checker to an open point or off, before the restrictions."""
    steps: list[tuple[int, int]] = []
    if position.bar_count(side):
        # Backgammon: every checker on the bar enters before anything else moves.
        entry = BAR_POINT - die
        if not is_closed(position, side, entry):
            steps.append((BAR_POINT, entry))
        return steps
    for point in range(24, 0, -1):
        if not has_free_checker(position, side, point):
            continue
        target = point - die
        if target >= 1:
            if not is_closed(position, side, target):
                steps.append((point, target))
        elif may_bear_off(position, side, point, die):
            steps.append((point, OFF_POINT))
    return steps


def play_step(position: Position, side: str, from_point: int, to_point: int) -> Position:
    """The position after ``side`` moves one checker; pins, hits and releases happen here."""
    board = list(position.points)
    off = list(position.off)
    bar = list(position.bar)
    me = SIDES.index(side)
    opponent = other(side)
    parallel = position.rules.parallel
    if from_point == BAR_POINT:
        bar[me] -= 1
    else:
        index = absolute_index(side, from_point, parallel)
        # Taking the top checker away releases a checker it pinned.
        board[index] = board[index][:-1]
    if to_point == OFF_POINT:
        off[me] += 1
    else:
        index = absolute_index(side, to_point, parallel)
        stack = board[index]
        if stack == opponent and position.rules.hits:
            # Backgammon: a blot is hit and goes to the bar.
            bar[SIDES.index(opponent)] += 1
            stack = ""
        # Pin games: landing on a lone opposing checker pins it (it stays below).
        board[index] = stack + side
    return Position(position.rules, tuple(board), (off[0], off[1]), (bar[0], bar[1]), position.turn)


# --------------------------------------------------------------------------
# Game end (3.4, 3.5, 4)
# --------------------------------------------------------------------------

def mother_is_pinned(position: Position, side: str) -> bool:
    """``side``'s mother (its lone checker on its own 24-point) is pinned by an opposing checker."""
    stack = position.stack(side, 24)
    return len(stack) >= 2 and stack[0] == side and stack[-1] == other(side)


def normal_win(position: Position, winner: str) -> GameResult:
    """Single, gammon or backgammon for the side that bore off its last checker (3.5, 4)."""
    loser = other(winner)
    if position.off_count(loser) > 0:
        return GameResult(winner, "single", 1)
    loser_in_winner_home = position.bar_count(loser) > 0 or any(
        loser in position.stack(winner, point) for point in range(1, 7)
    )
    if position.rules.backgammons and loser_in_winner_home:
        return GameResult(winner, "backgammon", 3)
    return GameResult(winner, "gammon", 2)


def result_after_step(position: Position, mover: str) -> Optional[GameResult]:
    """The game result, if the step just played by ``mover`` ended the game.

    Checked after every single step: both mothers pinned is a draw (checked
    first); the opponent's mother pinned while ``mover`` has no checker on its
    own 24-point is a mother win; the last checker borne off is a normal win.
    """
    rules = position.rules
    if rules.pins and rules.mother_points:
        opponent = other(mover)
        if mother_is_pinned(position, mover) and mother_is_pinned(position, opponent):
            return GameResult(None, "draw", 0)
        if mother_is_pinned(position, opponent) and position.checkers_on_point(mover, 24) == 0:
            return GameResult(mover, "mother", rules.mother_points)
    if position.off_count(mover) == CHECKERS_PER_SIDE:
        return normal_win(position, mover)
    return None


def finished_result(position: Position) -> Optional[GameResult]:
    """The result of a position that is already over, looked at from both sides.

    Used to refuse to play on from a finished game that arrives without its
    ``result`` (for example a hand-written JSON position).
    """
    if position.result is not None:
        return position.result
    for side in (position.turn, other(position.turn)):
        result = result_after_step(position, side)
        if result is not None:
            return result
    return None


def result_contradiction(position: Position) -> Optional[str]:
    """Why ``position``'s ``result`` is not the one its board shows, or None (no result, or the board's own).

    A position with a result is a finished game's last position: its result is the board's (who has borne
    off, whose mother is pinned), never a claim beside it (a gammon on the start position).
    """
    if position.result is None:
        return None
    board = finished_result(replace(position, result=None))
    if board == position.result:
        return None

    def said(result) -> str:
        points = f"{result.points} point{'s' * (result.points != 1)}"
        return f"{result.winner or 'nobody'} won {result.kind} ({points})"

    shown = "no finished game" if board is None else said(board)
    return f"position.result contradicts the board: the result says {said(position.result)}, the board shows {shown}"


# --------------------------------------------------------------------------
# Whole turns (2)
# --------------------------------------------------------------------------

def dice_orders(dice) -> list[tuple[int, ...]]:
    """The orders a roll's numbers may be played in: a double's one, both of two different numbers."""
    return number_orders(roll_steps((max(dice), min(dice))))


def number_orders(numbers: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The orders a stage's numbers may be played in: one when they are all equal, else both (highest first)."""
    numbers = tuple(sorted(numbers, reverse=True))
    return [numbers] if len(set(numbers)) == 1 else [numbers, numbers[::-1]]


def _sequences(position: Position, side: str, dice: tuple[int, ...], played: tuple[Step, ...], turn: TurnStart):
    """Every maximal sequence of steps playing ``dice`` in order, with its end and whether it ended the game.

    Yields ``(steps, position, ended)``. A sequence stops when the dice run out,
    when no step is possible, or when a step ends the game.
    """
    if not dice:
        yield played, position, False
        return
    die = dice[0]
    steps = single_steps(position, side, die, turn)
    if not steps:
        yield played, position, False
        return
    for from_point, to_point in steps:
        after = play_step(position, side, from_point, to_point)
        sequence = played + (Step(from_point, to_point, die),)
        result = result_after_step(after, side)
        if result is not None:
            yield sequence, after.with_changes(result=result), True
        else:
            yield from _sequences(after, side, dice[1:], sequence, turn)


def legal_moves(position: Position, dice: Optional[Iterable[int]] = None) -> list[Move]:
    """All legal moves of the side to move's present decision, one per distinct resulting position.

    The decision is the roll ``dice`` (a whole turn, or a cascade's first stage), or, for a position inside a
    cascade (docs/rules.md 10.2), its pending stage (``dice`` None or the stage's ``[k, k]``). A pass is a single
    move with no steps. Each afterstate keeps ``turn`` = the mover; under cascading doubles it also carries the
    next decision's state (``next``, ``turns``, ``cascade``: :func:`~tapa_ai.rules.turns.after_stage`). Raises
    :class:`RulesError` for bad dice and for a game that is already over.
    """
    if finished_result(position) is not None:
        raise PositionError("the game is already over")
    numbers, dice = stage_numbers(position, dice)
    side = position.turn
    number_of_dice = len(numbers)

    turn = turn_start(position, numbers)
    candidates = []  # (dice used, steps, position)
    for order in number_orders(numbers):
        for steps, after, ended in _sequences(position, side, order, (), turn):
            # Decision (docs/rules.md 2): a game-ending step counts as using all the dice.
            used = number_of_dice if ended else len(steps)
            candidates.append((used, steps, after))

    most = max(used for used, _, _ in candidates)
    if most == 0:
        kept = [((), position)]
    else:
        kept = [(steps, after) for used, steps, after in candidates if used == most]
    if number_of_dice == 2 and most == 1:
        # Only one die can be played: the higher one when it can be.
        higher = max(numbers)
        with_higher = [(steps, after) for steps, after in kept if steps[0].die == higher]
        if with_higher:
            kept = with_higher

    moves: dict[Position, Move] = {}
    for steps, after in kept:
        if after not in moves:
            moves[after] = Move(steps, after)
    if not position.rules.cascades:
        return list(moves.values())
    decided = []
    for move in moves.values():
        after = move.position
        ended = after.result is not None
        decision = after_stage(position, dice, number_of_dice if ended else len(move.steps), ended)
        after = after.with_changes(turns=decision.turns, cascade=decision.cascade, next=decision.side)
        decided.append(Move(move.steps, after))
    return decided


def next_turn(position: Position) -> Position:
    """The position of the next decision after an afterstate of a game still going: the other side to move, or
    the side its ``next`` names (inside a cascade, docs/rules.md 10.3)."""
    if position.result is not None:
        raise PositionError("the game is already over")
    return position.with_changes(turn=position.next or other(position.turn), next=None)
