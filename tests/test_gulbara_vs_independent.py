"""Cross-check the reference generator's Gul Bara decisions (docs/rules.md 10.2-10.3) against an independent one.

``tests/independent_rules.py`` (:func:`gulbara_decision`) implements cascading doubles a second time, from the
rules text alone. For the same position and roll (or pending stage) both must give the same set of afterstates
(board, borne off, result) and, for each, the same next decision: who plays next, each side's turn count and
the pending stage (number, steps, remainder).

Positions come from, for each of the four rule sets ``plain_double_turns`` in {3, 0} x ``cascade_remainder``
in {lost, opponent}:

(a) random games from the start, each decision's move picked at random from the reference's list (dice drawn
    with doubles made common, so that cascades begin often); every decision on the way is compared, and every
    position where a side rolls is compared with one more random roll as well;
(b) random boards (checkers anywhere, some borne off), with random turn counts and, half of the time, a random
    pending stage (its number, steps and, under ``opponent``, remainder flag), checked with no dice and with the
    stage's ``[k, k]`` or, without a pending stage, with every double and a few other rolls;
(c) bear-off boards (the mover's checkers all home, the opponent's often in the way) made the same way, so that
    stages are cut short, remainders are handed over and games end in the middle of a cascade.

Everything is seeded; a failure prints the position, the dice and both sides' answers.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import independent_rules as ind  # noqa: E402

from tapa_ai.rules import legal_moves, next_turn, start_position  # noqa: E402
from tapa_ai.rules.options import GULBARA  # noqa: E402
from tapa_ai.rules.position import Position  # noqa: E402
from tapa_ai.rules.turns import Cascade  # noqa: E402

SCALE = max(1, int(os.environ.get("TAPA_CROSSCHECK_SCALE", "1")))
GAMES = 8 * SCALE              # per rule set
EXTRA_PLAYOUT_ROLLS = 1        # more rolls compared at each roll decision of a game
BOARDS = 100 * SCALE           # random boards per rule set
BEAROFF_BOARDS = 100 * SCALE   # bear-off boards per rule set
MAX_DECISIONS = 600            # per game (a running game ends long before)
DOUBLE_CHANCE = 0.4            # how often a game's roll is forced to be a double
MAX_REPORTED = 4

RULE_SETS = [
    (pdt, remainder)
    for pdt in (3, 0)
    for remainder in ("lost", "opponent")
]

STATS: Counter = Counter()


def rules_of(pdt: int, remainder: str):
    return GULBARA.replace(plain_double_turns=pdt, cascade_remainder=remainder)


# -- the two sides of the comparison ---------------------------------------------------

def to_data(position: Position) -> dict:
    """The position as the dict the independent implementation reads (10.3's keys)."""
    data = {
        "points": list(position.points),
        "off": {"X": position.off[0], "O": position.off[1]},
        "turn": position.turn,
        "turns": {"X": position.turns[0], "O": position.turns[1]},
        "rules": {"plain_double_turns": position.rules.plain_double_turns,
                  "cascade_remainder": position.rules.cascade_remainder},
    }
    if position.cascade is not None:
        data["cascade"] = {"number": position.cascade.number, "steps": position.cascade.steps,
                           "remainder": position.cascade.remainder}
    return data


def canonical(position: Position) -> tuple:
    result = position.result
    res = None if result is None else (result.winner, result.kind, result.points)
    return (tuple(position.points), position.off[0], position.off[1], position.bar[0], position.bar[1], res)


def decision_of(after: Position) -> tuple:
    cascade = after.cascade
    pending = None if cascade is None else (cascade.number, cascade.steps, cascade.remainder)
    return (after.next, tuple(after.turns), pending)


def reference_decisions(position: Position, dice) -> tuple[dict, list]:
    """{afterstate: next decision} from the reference, the moves, and the problems seen in its list."""
    moves = legal_moves(position, dice)
    out: dict = {}
    problems = []
    for move in moves:
        after = move.position
        key = canonical(after)
        if key in out:
            problems.append(f"afterstate listed twice: {key}")
        if after.turn != position.turn:
            problems.append(f"afterstate turn {after.turn!r}, the mover is {position.turn!r}")
        if after.rules != position.rules:
            problems.append("afterstate rules changed")
        out[key] = decision_of(after)
    return out, moves


def describe(position: Position, dice, ref: dict, mine: dict) -> str:
    lines = [f"position: {to_data(position)}", f"dice: {dice}"]
    only_ref = set(ref) - set(mine)
    only_ind = set(mine) - set(ref)
    if only_ref:
        lines.append("  only in the reference:\n" + ind.describe(only_ref))
    if only_ind:
        lines.append("  only in the independent:\n" + ind.describe(only_ind))
    for key in sorted(set(ref) & set(mine), key=repr):
        if ref[key] != mine[key]:
            lines.append(f"  next decision differs for {ind.describe([key]).strip()}:\n"
                         f"    reference   {ref[key]}\n    independent {mine[key]}")
    return "\n".join(lines)


def classify(position: Position, dice, ref: dict) -> None:
    """Coverage counts: what kind of decision this was and what came of it."""
    cascade = position.cascade
    if cascade is not None:
        STATS["remainder stage" if cascade.remainder else "cascade stage (2nd+)"] += 1
        if cascade.steps < 4:
            STATS["stage of 1-3 steps"] += 1
    elif dice[0] == dice[1]:
        STATS["double rolled"] += 1
    else:
        STATS["non-double rolled"] += 1
    me = 0 if position.turn == "X" else 1
    cascading = cascade is not None or (dice[0] == dice[1] and position.turns[me] >= position.rules.plain_double_turns)
    for key, (nxt, _, pending) in ref.items():
        if key[5] is not None:
            STATS["game ended" + (" mid-cascade" if cascading else "")] += 1
        elif pending is not None and pending[2] and (cascade is None or not cascade.remainder):
            STATS["remainder handed over"] += 1
        elif nxt == position.turn and pending is None:
            STATS["remainder's player rolls next"] += 1
        elif nxt == position.turn:
            STATS["same side plays next stage"] += 1


def compare(position: Position, dice, failures: list) -> list:
    """Compare one decision; returns the reference's moves (for playouts)."""
    STATS["decisions compared"] += 1
    ref, moves = reference_decisions(position, dice)
    roll = None if dice is None else tuple(dice)
    mine = ind.gulbara_decision(to_data(position), roll)
    classify(position, dice, ref)
    problems = []
    if ref != mine:
        problems.append(describe(position, dice, ref, mine))
    if failures is not None and problems:
        failures.extend(problems)
    STATS["afterstates compared"] += len(ref)
    return moves


# -- position sources ------------------------------------------------------------------

def random_roll(rng: random.Random, double_chance: float = DOUBLE_CHANCE) -> tuple[int, int]:
    if rng.random() < double_chance:
        d = rng.randint(1, 6)
        return d, d
    return rng.randint(1, 6), rng.randint(1, 6)


def playout(rules, rng: random.Random, failures: list) -> int:
    """One random game, every decision compared. Returns the number of decisions."""
    position = start_position(rules, rng.choice("XO"))
    decisions = 0
    for _ in range(MAX_DECISIONS):
        if position.cascade is None:
            for _ in range(EXTRA_PLAYOUT_ROLLS):
                compare(position, random_roll(rng), failures)
            dice = random_roll(rng)
        else:
            k = position.cascade.number
            dice = rng.choice([None, [k, k]])
        moves = compare(position, dice, failures)
        decisions += 1
        STATS["playout positions"] += 1
        after = rng.choice(moves).position
        if after.result is not None:
            STATS["playout games finished"] += 1
            return decisions
        position = next_turn(after)
        if len(failures) > MAX_REPORTED:
            return decisions
    raise AssertionError("a random game did not end")


def square(side: str, point: int) -> int:
    """Absolute index of ``side``'s own point on the parallel board (docs/rules.md 8.1)."""
    if side == "X":
        return point - 1
    return point + 11 if point <= 12 else point - 13


def random_board(rng: random.Random, bearoff: bool) -> tuple[list, tuple[int, int]]:
    """A random running-game board (each point one side's only); in ``bearoff`` the side to move (X here,
    swapped later at random) has all its checkers home."""
    board = [""] * 24
    off = [0, 0]
    for index, side in enumerate("XO"):
        if bearoff and side == "X":
            region = list(range(1, 7))
            off[index] = rng.randint(0, 13)
        elif bearoff:
            region = list(range(1, 25)) if rng.random() < 0.5 else list(range(1, 13))
            off[index] = rng.choice([0, 0, rng.randint(0, 12)])
        else:
            region = list(range(1, 25))
            off[index] = rng.choice([0, 0, 0, rng.randint(0, 10)])
        free = [p for p in region if not board[square(side, p)]]
        n_points = rng.randint(1, min(len(free), 8))
        chosen = rng.sample(free, n_points)
        for p in chosen:
            board[square(side, p)] = side
        for _ in range(15 - off[index] - n_points):
            p = rng.choice(chosen)
            board[square(side, p)] += side
    return board, (off[0], off[1])


def random_position(rules, rng: random.Random, bearoff: bool) -> Position:
    board, off = random_board(rng, bearoff)
    turn = "X" if bearoff else rng.choice("XO")
    if bearoff and rng.random() < 0.5:
        # the same board from O's side: swap the colours and the parallel halves
        swapped = [""] * 24
        for index, stack in enumerate(board):
            swapped[(index + 12) % 24] = stack.translate(str.maketrans("XO", "OX"))
        board, off, turn = swapped, (off[1], off[0]), "O"
    pdt = rules.plain_double_turns
    me = 0 if turn == "X" else 1
    turns = [rng.randint(0, pdt), rng.randint(0, pdt)]
    cascade = None
    if rng.random() < 0.5:
        remainder = rules.cascade_remainder == "opponent" and rng.random() < 0.5
        if not remainder:
            turns[me] = pdt  # a cascade of one's own comes after one's plain turns
        cascade = Cascade(rng.randint(1, 6), rng.randint(1, 4), remainder)
    return Position(rules, tuple(board), off, (0, 0), turn, None, (turns[0], turns[1]), cascade)


OTHER_ROLLS = [(a, b) for a in range(1, 7) for b in range(a + 1, 7)]


def check_board(position: Position, rng: random.Random, failures: list) -> None:
    STATS["random positions"] += 1
    if position.cascade is not None:
        k = position.cascade.number
        compare(position, None, failures)
        compare(position, [k, k], failures)
        return
    for d in range(1, 7):
        compare(position, (d, d), failures)
    for dice in rng.sample(OTHER_ROLLS, 3):
        compare(position, dice, failures)


def report(failures: list, what: str) -> None:
    if failures:
        shown = "\n\n".join(failures[:MAX_REPORTED])
        pytest.fail(f"{len(failures)} disagreement(s) in {what}:\n{shown}")


# -- the tests -----------------------------------------------------------------------------

@pytest.mark.parametrize("pdt,remainder", RULE_SETS)
def test_random_games_agree(pdt, remainder):
    rules = rules_of(pdt, remainder)
    rng = random.Random(f"gulbara-games-{pdt}-{remainder}")
    failures: list = []
    start = time.perf_counter()
    before = STATS["decisions compared"]
    for _ in range(GAMES):
        playout(rules, rng, failures)
        if len(failures) > MAX_REPORTED:
            break
    report(failures, f"random games (plain_double_turns={pdt}, cascade_remainder={remainder})")
    print(f"\n[gulbara games pdt={pdt} {remainder}] {STATS['decisions compared'] - before} decisions "
          f"in {time.perf_counter() - start:.1f}s")


@pytest.mark.parametrize("bearoff", [False, True], ids=["boards", "bearoff"])
@pytest.mark.parametrize("pdt,remainder", RULE_SETS)
def test_random_boards_agree(pdt, remainder, bearoff):
    rules = rules_of(pdt, remainder)
    rng = random.Random(f"gulbara-boards-{pdt}-{remainder}-{bearoff}")
    failures: list = []
    start = time.perf_counter()
    before = STATS["decisions compared"]
    for _ in range(BEAROFF_BOARDS if bearoff else BOARDS):
        check_board(random_position(rules, rng, bearoff), rng, failures)
        if len(failures) > MAX_REPORTED:
            break
    report(failures, f"random {'bear-off ' if bearoff else ''}boards (plain_double_turns={pdt}, "
                     f"cascade_remainder={remainder})")
    print(f"\n[gulbara {'bearoff' if bearoff else 'boards'} pdt={pdt} {remainder}] "
          f"{STATS['decisions compared'] - before} decisions in {time.perf_counter() - start:.1f}s")


def test_coverage_of_the_comparison():
    """The comparison above reached every case of 10.2 (runs after the others, in file order)."""
    if STATS["decisions compared"] == 0:
        pytest.skip("run with the comparisons above")
    print("\n[gulbara coverage] " + ", ".join(f"{k}: {v}" for k, v in sorted(STATS.items())))
    for case in ("double rolled", "cascade stage (2nd+)", "remainder stage", "stage of 1-3 steps",
                 "remainder handed over", "remainder's player rolls next", "same side plays next stage",
                 "game ended mid-cascade", "playout games finished"):
        assert STATS[case] > 0, f"no {case!r} in the comparison: {dict(STATS)}"
