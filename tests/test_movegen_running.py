"""The vectorized generator plays the running games (fevga, narde: docs/rules.md 8) exactly as the reference does.

For random positions of both games (uniform playouts, playouts that prefer holding points in a row,
end-game boards, and boards built at the edges of the restrictions of docs/rules.md 8.4: primes nearly made,
the head on the first turns, the runner about to pass, the starting quarter nearly full) the set of
afterstates, results included, must equal the reference's, and the steps the fast generator gives for an
afterstate must be a legal sequence reaching it: each step a legal single step of the reference with the
turn's head allowance (``turn_start``), the rolled dice used once each. Chosen positions pin down the cases
where the order of the same steps decides their legality (the kernel searches every order there, see its
docstring); custom rule sets switch single restrictions on and off.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tapa_ai.movegen import PositionBatch, concatenate, generate, legal_moves_fast
from tapa_ai.movegen.differential import compare_with_reference
from tapa_ai.movegen.random_positions import (EDGE_KINDS, endgame_positions, playout_positions, random_dice,
                                              running_edge_positions)
from tapa_ai.notation import board, position_from_json, position_to_json
from tapa_ai.rules import legal_moves, outcomes, start_position, variant_rules
from tapa_ai.rules.position import validate_position
from tapa_ai.rules.rolls import DISTINCT_ROLLS
from tapa_ai.rules.reference import (_landing_steps, broken_restriction, holds_prime, next_turn,
                                     play_step, result_after_step, single_steps, turn_start)

GAMES = ("fevga", "narde")
SOURCES = {
    "uniform": (300, lambda rules, count, rng: playout_positions(rules, count, rng, "uniform", games=16)),
    "contact": (300, lambda rules, count, rng: playout_positions(rules, count, rng, "contact", games=16)),
    "endgame": (200, endgame_positions),
    "edge": (400, running_edge_positions),
}
ALL_ROLLS = np.array([(a, b) for a, b, _ in DISTINCT_ROLLS], dtype=np.int8)
X15, O15 = "X" * 15, "O" * 15


@functools.lru_cache(maxsize=None)
def _sample(rules, source: str, seed: int = 0) -> tuple[PositionBatch, np.ndarray]:
    count, make = SOURCES[source]
    rng = np.random.default_rng([seed, list(SOURCES).index(source), 51])
    batch = make(rules, count, rng)
    return batch, random_dice(len(batch), rng)


def _replays_strictly(position, roll, steps, after) -> bool:
    """``steps`` are a legal sequence of the turn from ``position`` with ``roll`` that reaches ``after``."""
    turn = turn_start(position, roll)
    dice = [roll[0]] * 4 if roll[0] == roll[1] else list(roll)
    side = position.turn
    for step in steps:
        if step.die not in dice or (step.from_point, step.to_point) not in single_steps(position, side, step.die, turn):
            return False
        dice.remove(step.die)
        position = play_step(position, side, step.from_point, step.to_point)
        result = result_after_step(position, side)
        if result is not None:
            position = position.with_changes(result=result)
            break
    return position == after


def _assert_same_as_reference(batch: PositionBatch, dice: np.ndarray, replay_every: int = 2) -> int:
    """Afterstate sets equal the reference's; the steps of every row of every ``replay_every``-th position replay
    strictly. Returns the afterstates compared."""
    after = generate(batch, dice)
    seen, mismatches = compare_with_reference(batch, dice, replay=False, afterstates=after)
    assert not mismatches, f"{len(mismatches)} mismatches of {len(batch)}; first: {mismatches[0]}"
    bad = []
    for index in range(0, len(batch), replay_every):
        position = batch.position(index)
        roll = (int(dice[index, 0]), int(dice[index, 1]))
        for row in range(int(after.offsets[index]), int(after.offsets[index + 1])):
            if not _replays_strictly(position, roll, after.step_list(row), after.position(row)):
                bad.append((position_to_json(position), roll, after.move_text(row)))
    assert not bad, f"{len(bad)} step lists do not replay; first: {bad[0]}"
    return seen


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("game", GAMES)
def test_fast_generator_finds_exactly_the_reference_afterstates(game, source):
    batch, dice = _sample(game, source)
    assert batch.rules == (variant_rules(game),)
    for position in batch.to_positions()[:50]:
        validate_position(position)
    _assert_same_as_reference(batch, dice)


@pytest.mark.parametrize("game", GAMES)
def test_every_roll_on_boards_at_the_edges_of_the_restrictions(game):
    rng = np.random.default_rng([GAMES.index(game), 52])
    edges = running_edge_positions(game, 2 * len(EDGE_KINDS), rng)
    batch = concatenate([PositionBatch.from_positions([start_position(game, "X"), start_position(game, "O")]), edges])
    rows = np.repeat(np.arange(len(batch)), len(ALL_ROLLS))
    _assert_same_as_reference(batch.take(rows), np.tile(ALL_ROLLS, (len(batch), 1)), replay_every=3)


def _same_moves(position, dice) -> set:
    fast = {move.position for move in legal_moves_fast(position, dice)}
    assert fast == {move.position for move in legal_moves(position, dice)}
    return fast


# Positions where one order of the same steps breaks a restriction on its way and another does not: the
# canonical order of doubles (sources not increasing) would play the breaking order only.
ORDER_MATTERS = [
    # fevga, starting quarter: 24/19 first holds all of 19-24; 20/15 first leaves 20 before 19 is taken.
    ("fevga", "24:XXXXX 23:XX 22:XX 21:XX 20:X 10:XX 5:X 12:" + O15, (5, 5), "20/15 24/19"),
    # fevga, runner: 24/19 first takes a second checker out before the runner on 16 has passed.
    ("fevga", "24:" + "X" * 14 + " 16:X 6:" + O15, (5, 5), "16/11 24/19"),
    # narde, prime: 24/18 first would hold O's 1..6 (X's 13..18) with all of O behind; 13/7 first opens 13.
    ("narde", "24:" + "X" * 10 + " 17:X 16:X 15:X 14:X 13:X 12:" + O15, (6, 6), "13/7 24/18"),
]


@pytest.mark.parametrize("game, text, dice, prefix", ORDER_MATTERS, ids=["quarter", "runner", "prime"])
def test_doubles_whose_legal_order_is_not_the_canonical_one(game, text, dice, prefix):
    position = board(game, text)
    first, later = (tuple(int(p) for p in step.split("/")) for step in prefix.split())
    turn = turn_start(position, dice)
    # The higher source first breaks a restriction on its first step ...
    assert later in _landing_steps(position, "X", dice[0])
    assert broken_restriction(play_step(position, "X", *later), "X", turn) is not None
    # ... yet after the lower one it is legal, and legal moves play it.
    assert later in single_steps(play_step(position, "X", *first), "X", dice[0], turn)
    moves = legal_moves(position, dice)
    assert any(later in [(s.from_point, s.to_point) for s in move.steps] for move in moves)
    assert {move.position for move in legal_moves_fast(position, dice)} == {move.position for move in moves}
    _assert_same_as_reference(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8), 1)


def test_the_head_rule_on_the_first_turn_and_later_turns():
    for game in GAMES:
        for roll in ALL_ROLLS.tolist():
            _same_moves(start_position(game), tuple(roll))
    later = board("narde", "24:" + "X" * 14 + " 18:X 12:" + O15)
    assert len(_same_moves(later, (6, 6))) == 1
    for roll in ALL_ROLLS.tolist():
        _same_moves(later, tuple(roll))


CUSTOM = {
    "fevga-no-prime": ("fevga", {"prime_rule": False}),
    "fevga-quarter-allowed": ("fevga", {"full_start_quarter_allowed": True}),
    "narde-no-start-rule": ("narde", {"start_rule": "none"}),
    "narde-runner": ("narde", {"start_rule": "runner"}),
    "narde-head-and-quarter": ("narde", {"full_start_quarter_allowed": False}),
    "running-no-restrictions": ("narde", {"start_rule": "none", "prime_rule": False}),
}


@pytest.mark.parametrize("name", list(CUSTOM))
def test_custom_running_rule_sets_follow_their_options(name):
    game, changes = CUSTOM[name]
    rules = variant_rules(game).replace(name=name, **changes)
    rng = np.random.default_rng([list(CUSTOM).index(name), 53])
    batch = concatenate([playout_positions(rules, 60, rng, "contact", games=4),
                         running_edge_positions(rules, 90, rng)])
    assert batch.rules == (rules,)
    _assert_same_as_reference(batch, random_dice(len(batch), rng), replay_every=3)


def test_one_batch_may_mix_running_and_other_games():
    rng = np.random.default_rng(54)
    parts = [endgame_positions(v, 30, rng) for v in ("plakoto", "fevga", "backgammon", "narde")]
    batch = concatenate(parts)
    dice = random_dice(len(batch), rng)
    mixed = generate(batch, dice)
    for index, part in enumerate(parts):
        rows = np.arange(30 * index, 30 * (index + 1))
        alone = generate(part, dice[rows])
        mixed_rows = range(int(mixed.offsets[rows[0]]), int(mixed.offsets[rows[-1] + 1]))
        assert [mixed.position(r) for r in mixed_rows] == [alone.position(r) for r in range(len(alone))]
    _assert_same_as_reference(batch, dice, replay_every=4)


def test_samples_reach_every_restriction_and_result():
    """The samples above are only worth their count if steps really break each restriction there."""
    broken: set[str] = set()
    kinds: set[int] = set()
    passes = 0
    for game in GAMES:
        batches, rolls = zip(*(_sample(game, source) for source in SOURCES))
        batch, dice = concatenate(batches), np.concatenate(rolls)
        after = generate(batch, dice)
        kinds |= set(after.result_kind.tolist())
        passes += int((after.n_steps == 0).sum())
        for index in range(0, len(batch), 3):
            # The first two steps of the turn: a restriction broken by a landing step, after a legal one.
            position = batch.position(index)
            side = position.turn
            roll = (int(dice[index, 0]), int(dice[index, 1]))
            turn = turn_start(position, roll)
            for die, second in ((roll[0], roll[1]), (roll[1], roll[0])):
                firsts = single_steps(position, side, die, turn)
                starts = [position] + [play_step(position, side, *step) for step in firsts]
                for depth, now in enumerate(starts):
                    for step in _landing_steps(now, side, second if depth else die):
                        key = broken_restriction(play_step(now, side, *step), side, turn)
                        if key:
                            broken.add(f"{game}:{key}")
    # (The head rule's first-turn doubles, a third checker off the head, are checked on the start position with
    # every roll above.)
    assert {"fevga:runner", "fevga:prime", "fevga:start_quarter", "narde:head", "narde:prime"} <= broken, broken
    assert {outcomes.RESULT_SINGLE, outcomes.RESULT_GAMMON} <= kinds and outcomes.RESULT_BACKGAMMON not in kinds
    assert passes > 0


@pytest.mark.parametrize("game", GAMES)
def test_running_batches_convert_and_flip_exactly(game):
    rng = np.random.default_rng([GAMES.index(game), 55])
    batch = concatenate([playout_positions(game, 150, rng, "contact", games=8), endgame_positions(game, 60, rng),
                         running_edge_positions(game, 60, rng)])
    positions = batch.to_positions()
    again = PositionBatch.from_positions(positions)
    for name in ("board", "pinned", "off", "bar", "turn"):
        assert np.array_equal(getattr(again, name), getattr(batch, name)), name
    assert again.to_positions() == positions
    assert [position_from_json(data) for data in batch.to_json()] == positions
    assert PositionBatch.from_json([position_to_json(p) for p in positions]).to_positions() == positions
    assert (batch.checker_counts() == 15).all() and not batch.pinned.any() and not batch.bar.any()
    assert batch.flipped().flipped().to_positions() == positions
    for before, flipped in zip(positions, batch.flipped().to_positions()):
        assert flipped.points == before.points and flipped.off == before.off and flipped.turn != before.turn
    # The mover's point p holds what the other side calls p +- 12.
    assert np.array_equal(batch.flipped().board, -np.roll(batch.board, 12, axis=1))
    # Afterstates turned to the other side are the reference's next positions.
    dice = random_dice(len(batch), rng)
    after = generate(batch, dice)
    alive = np.flatnonzero(~after.game_over)[::7]
    nexts = after.positions.take(alive).flipped().to_positions()
    assert nexts == [next_turn(after.position(int(row))) for row in alive]


# -- found by mutation testing: tapa_ai/movegen/kernel.py --------------------------------------------------------
# narde, X on 14 points with its starting quarter open to it: doubles are searched in every order (the quarter
# rule), and with 1-1 the search expands more than 256 distinct positions, past the first sizes of its tables.
SPREAD = "24:XX 23:X 21:X 20:X 18:X 17:X 16:X 15:X 14:X 13:X 12:X 10:X 9:X 8:X 1:" + O15


def test_a_double_searched_in_every_order_through_hundreds_of_positions_matches_the_reference():
    position = board("narde", SPREAD)
    assert len(_same_moves(position, (1, 1))) > 1000


# Doubles searched in every order. In the first, a key of the first copy left in the last two slots of the table
# of expanded positions hid one of them (and two afterstates reached only through it) from the second copy.
REPEATED = [
    ({"variant": "fevga", "points": ["", "", "OOO", "", "OO", "", "X", "", "OOO", "", "", "OOOOOOO", "X", "", "", "X",
                                     "X", "", "XX", "X", "XX", "X", "XX", "XXX"], "off": {"X": 0, "O": 0}, "turn": "X"},
     (3, 3)),
    ({"variant": "narde", "points": ["O", "O", "", "", "", "", "", "O", "O", "", "OO", "OOO", "OO", "OO", "O", "O",
                                     "XXXX", "XX", "", "XX", "", "XXX", "", "XXXX"], "off": {"X": 0, "O": 0},
      "turn": "O"}, (1, 1)),
    ({"variant": "fevga", "points": ["", "O", "O", "OOO", "", "O", "", "", "O", "OO", "O", "OO", "O", "O", "O", "XXXX",
                                     "", "XXXXXXX", "", "XXXX", "", "", "", ""], "off": {"X": 0, "O": 0}, "turn": "O"},
     (3, 3)),
]


def test_a_position_repeated_in_one_batch_gives_each_copy_the_same_afterstates():
    # The key tables are cleared between positions: a key left from the first copy would hide the same
    # expanded position (or afterstate) of the second.
    positions = [board("narde", SPREAD)] + [position_from_json(data) for data, _ in REPEATED]
    rolls = [(1, 1)] + [roll for _, roll in REPEATED]
    batch = PositionBatch.from_positions([p for p in positions for _ in range(2)])
    dice = np.array([roll for roll in rolls for _ in range(2)], dtype=np.int8)
    after = generate(batch, dice)
    for first in range(0, len(batch), 2):
        copies = [[after.position(r) for r in range(int(after.offsets[i]), int(after.offsets[i + 1]))]
                  for i in (first, first + 1)]
        assert copies[0] == copies[1]
    assert len(after) > 2000
    _assert_same_as_reference(batch.take(np.arange(0, len(batch), 2)), dice[::2], replay_every=4)


# The prime rule (docs/rules.md 8.4 b) when the opponent's last checker stands on its 7-point and its checkers hold
# each of its points 7 to 13 (X's 19-24 and 1): the only run of six with every opposing checker behind it is the
# opponent's home board, its points 1-6 (X's 13-18). X holds five of them, two checkers on its 18-point, and
# 18/13 with a 5 would close the sixth. No other restriction can bind (no X checker on the 24-point, runners
# on X's 10, 8 and 6, O on the starting quarter), so only the prime watch keeps the kernel from playing it.
LAST_ON_ITS_7 = "18:XX 17:X 16:X 15:X 14:X 10:XXX 8:XXX 6:XXX 24:OOO 23:OO 22:OO 21:OO 20:OO 19:OO 1:OO"


@pytest.mark.parametrize("game", GAMES)
def test_prime_rule_the_opponents_home_board_may_not_be_closed_while_its_last_checker_is_on_its_7_point(game):
    position = board(game, LAST_ON_ITS_7)
    made = play_step(position, "X", 18, 13)
    assert holds_prime(made, "X")
    assert broken_restriction(made, "X", turn_start(position, (5, 1))) == "prime"
    for roll in ALL_ROLLS.tolist():
        moves = _same_moves(position, tuple(roll))
        assert not any(holds_prime(after, "X") for after in moves)
    # 14/13 first and then 18/13 is legal (14 is left open); each move's steps replay one by one.
    _assert_same_as_reference(PositionBatch.from_positions([position]), np.array([(5, 1)], dtype=np.int8), 1)
    # Without the prime rule, 18/13 is played.
    free = board(variant_rules(game).replace(name=f"{game}-no-prime", prime_rule=False), LAST_ON_ITS_7)
    assert any(holds_prime(move.position, "X") for move in legal_moves_fast(free, (5, 1)))


# A start rule without the prime rule and the quarter rule: the kernel must still check the restrictions.
# With 5-2 from the start, 24/19 24/22 would take a second checker off the 24-point: the head rule allows one (not
# a first-turn 6-6, 4-4 or 3-3), the runner rule none before a checker has passed the opponent's start.
@pytest.mark.parametrize("game, changes", [
    ("narde", {"prime_rule": False}),  # the head rule alone
    ("fevga", {"prime_rule": False, "full_start_quarter_allowed": True}),  # the runner rule alone
])
def test_a_start_rule_alone_limits_the_checkers_leaving_the_24_point(game, changes):
    rules = variant_rules(game).replace(name=f"{game}-start-rule-only", **changes)
    assert rules.start_rule != "none" and rules.has_restrictions
    start = start_position(rules)
    moves = _same_moves(start, (5, 2))
    assert all(after.checkers_on_point("X", 24) == 14 for after in moves)
    for roll in ALL_ROLLS.tolist():
        _same_moves(start, tuple(roll))
    unrestricted = start_position(rules.replace(start_rule="none"))
    assert any(m.position.checkers_on_point("X", 24) == 13 for m in legal_moves_fast(unrestricted, (5, 2)))
