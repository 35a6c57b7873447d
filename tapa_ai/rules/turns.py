"""A turn as a plan of stages (docs/rules.md sections 2 and 10.2): who decides next, with which numbers.

A roll gives the side to move a **plan**: one or more **stages**, each a decision of its own with the numbers it
plays. Under plain doubles (every variant but Gul Bara) the plan is one stage, both dice or a double's number four
times, and the other side decides next. Under cascading doubles (option ``doubles = "cascade"``) a double rolled
after a side's first ``plain_double_turns`` turns is a plan of stages ``d``, ``d + 1``, ..., 6, four steps each;
the same side plays the next stage without rolling when it played this one in full; otherwise the steps left are
lost, or played by the opponent (option ``cascade_remainder``), stage by stage, before its own roll.

To stay Markov a position of such a rule set carries what the next decision needs (docs/rules.md 10.3): each
side's turn count (up to ``plain_double_turns``) and the pending stage, :class:`Cascade`. The functions here are
the one statement of these rules: the reference generator (:mod:`.reference`) asks :func:`stage_numbers` what to
play and :func:`after_stage` who plays next; the vectorized generator does the same sums on arrays and is checked
against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from .options import RuleOptions, RulesError
from .rolls import roll_steps
from ..quoting import quoted

__all__ = ["STAGE_STEPS", "Cascade", "Decision", "check_dice", "stage_numbers", "stage_dice", "after_stage",
           "roll_plan", "is_cascade_roll", "decision_numbers", "without_decision", "describe_stage"]

STAGE_STEPS = 4
"""Steps in a full stage of a double (plain or cascading)."""


@dataclass(frozen=True)
class Cascade:
    """The pending stage of a position (docs/rules.md 10.3): the side to move plays ``steps`` steps of ``number``
    without rolling. ``remainder``: these are the opponent's steps it could not play (``cascade_remainder =
    "opponent"``); after them the side to move rolls for its own turn."""

    number: int
    steps: int = STAGE_STEPS
    remainder: bool = False

    def __post_init__(self) -> None:
        for name, value, low, high in (("number", self.number, 1, 6), ("steps", self.steps, 1, STAGE_STEPS)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise RulesError(f"cascade.{name}: must be an integer {low}..{high}, got {quoted(value)}")
        if not isinstance(self.remainder, bool):
            raise RulesError(f"cascade.remainder: must be true or false, got {quoted(self.remainder)}")

    @property
    def numbers(self) -> tuple[int, ...]:
        return (self.number,) * self.steps


@dataclass(frozen=True)
class Decision:
    """Who decides after a stage, and the state that decision starts from."""

    side: Optional[str]
    """The side that plays next (None when the game is over)."""
    turns: tuple[int, int]
    """Each side's turn count, (X, O), for the next decision."""
    cascade: Optional[Cascade]
    """The stage the next decision plays without rolling, or None: the next side rolls."""


def check_dice(dice: Iterable[int]) -> tuple[int, int]:
    """Two dice 1..6, or a :class:`RulesError` saying what is wrong."""
    try:
        values = tuple(dice)
    except TypeError:
        raise RulesError(f"dice must be two integers 1..6, got {quoted(dice)}") from None
    if len(values) != 2 or any(
        isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 6 for d in values
    ):
        raise RulesError(f"dice must be two integers 1..6, got {quoted(list(values))}")
    return values  # type: ignore[return-value]


def is_cascade_roll(rules: RuleOptions, turns_begun: int, dice) -> bool:
    """Whether ``dice`` rolled by a side that has begun ``turns_begun`` turns (before this one) cascade."""
    return rules.cascades and int(dice[0]) == int(dice[1]) and turns_begun >= rules.plain_double_turns


def stage_dice(cascade: Cascade) -> tuple[int, int]:
    """The dice a protocol names a pending stage by: ``[k, k]``."""
    return cascade.number, cascade.number


def stage_numbers(position, dice: Optional[Iterable[int]]) -> tuple[tuple[int, ...], Optional[tuple[int, int]]]:
    """The numbers the side to move plays in this decision, and the roll it came with (None inside a cascade).

    A position with a pending stage plays it: ``dice`` must be None or the stage's ``[k, k]``. Any other position
    needs two dice, and plays :func:`~tapa_ai.rules.rolls.roll_steps` of them (a cascade's first stage is its
    double's four steps too).
    """
    cascade = position.cascade
    if cascade is not None:
        if dice is not None:
            given = check_dice(dice)
            if given != stage_dice(cascade):
                raise RulesError(
                    f"dice {list(given)}: {position.turn} is inside a cascade and plays {cascade.steps} step"
                    f"{'s' * (cascade.steps != 1)} of {cascade.number} with no roll; give no dice or "
                    f"{list(stage_dice(cascade))}")
        return cascade.numbers, None
    if dice is None:
        raise RulesError(f"dice: {position.turn} is to roll; give two dice 1..6")
    dice = check_dice(dice)
    return roll_steps(dice), dice


def decision_numbers(position, dice) -> tuple[int, ...]:
    """The numbers the side to move plays now, unchecked: its pending stage's, else the roll's (docs/rules.md 2)."""
    if position.cascade is not None:
        return position.cascade.numbers
    return roll_steps(dice)


def without_decision(position):
    """``position`` without the decision state a move's afterstate carries (turn counts, pending stage, next side):
    the board that stepping through a move reaches, to find the legal move it is."""
    if not position.rules.cascades:
        return position
    return position.with_changes(turns=(0, 0), cascade=None, next=None)


def describe_stage(cascade: Cascade) -> str:
    """The pending stage in words, with the stages after it: ``"4 steps of 5, then 6s"``."""
    steps = f"{cascade.steps} step{'s' * (cascade.steps != 1)} of {cascade.number}"
    later = ", ".join(f"{number}s" for number in range(cascade.number + 1, 7))
    return steps + (f", then {later}" if later else "")


def after_stage(position, dice: Optional[tuple[int, int]], used: int, ended: bool) -> Decision:
    """The next decision after the side to move of ``position`` played ``used`` steps of this decision.

    ``dice`` is the roll the decision began with (None for a pending stage); ``ended``: the move ended the game.
    """
    rules: RuleOptions = position.rules
    mover = position.turn
    opponent = "O" if mover == "X" else "X"
    me = 0 if mover == "X" else 1
    if not rules.cascades:
        return Decision(None if ended else opponent, position.turns, None)
    turns = list(position.turns)
    cascade = position.cascade
    if cascade is None:
        # A roll: a turn begun (counted up to plain_double_turns). Its plan cascades when it is a double
        # rolled after the side's plain turns.
        begun = turns[me]
        turns[me] = min(begun + 1, rules.plain_double_turns)
        if is_cascade_roll(rules, begun, dice):
            cascade = Cascade(int(dice[0]), STAGE_STEPS, False)
    counts = (turns[0], turns[1])
    if ended:
        return Decision(None, counts, None)
    if cascade is None:
        return Decision(opponent, counts, None)
    full = used == cascade.steps
    if full and cascade.number < 6:
        return Decision(mover, counts, Cascade(cascade.number + 1, STAGE_STEPS, cascade.remainder))
    if cascade.remainder:
        # The remainder's last stage played (or one not played in full, whose rest is lost): its player rolls.
        return Decision(mover, counts, None)
    if full or rules.cascade_remainder == "lost":
        return Decision(opponent, counts, None)
    return Decision(opponent, counts, Cascade(cascade.number, cascade.steps - used, True))


def roll_plan(rules: RuleOptions, turns_begun: int, dice) -> tuple[tuple[int, ...], ...]:
    """Every stage a roll can give, in order, when each is played in full: one stage under plain doubles, ``d``
    ... 6 for a cascading double (1-1: six stages, 24 steps)."""
    dice = check_dice(dice)
    if not is_cascade_roll(rules, turns_begun, dice):
        return (roll_steps(dice),)
    return tuple((number,) * STAGE_STEPS for number in range(dice[0], 7))
