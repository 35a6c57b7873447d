"""The vectorized generator finds exactly the reference's afterstates, on random and chosen positions.

Random positions come from ``tapa_ai.movegen.random_positions`` with fixed
seeds: uniform playouts, playouts that prefer pinning and hitting, and
end-game boards with pins, about 2,000 per variant. For each, the set of
afterstates (results included) must equal the reference's, and the move
text the fast generator gives for an afterstate must replay to it.
``scripts/check_movegen.py`` runs the same comparison on millions.
"""

from __future__ import annotations

import numpy as np
import pytest

from tapa_ai.movegen import PositionBatch, concatenate, generate, legal_moves_fast
from tapa_ai.rules import outcomes
from tapa_ai.movegen.differential import compare_with_reference
from tapa_ai.movegen.random_positions import endgame_positions, playout_positions, random_dice
from tapa_ai.notation import board, position_from_json, position_to_json
from tapa_ai.rules import RulesError, legal_moves, start_position
from tapa_ai.rules.position import PositionError, validate_position
from tapa_ai.rules.reference import finished_result

VARIANTS = ("tapa", "plakoto", "backgammon")
SOURCES = {
    "uniform": (700, lambda variant, count, rng: playout_positions(variant, count, rng, "uniform", games=64)),
    "contact": (700, lambda variant, count, rng: playout_positions(variant, count, rng, "contact", games=64)),
    "endgame": (600, endgame_positions),
}


def _sample(variant: str, source: str) -> tuple[PositionBatch, np.ndarray]:
    count, make = SOURCES[source]
    rng = np.random.default_rng([VARIANTS.index(variant), list(SOURCES).index(source), 2026])
    batch = make(variant, count, rng)
    return batch, random_dice(len(batch), rng)


def _assert_same_as_reference(batch: PositionBatch, dice: np.ndarray, replay_every: int = 3) -> None:
    replay = np.zeros(len(batch), dtype=bool)
    replay[::replay_every] = True
    mismatches = []
    for flag in (True, False):
        part = np.flatnonzero(replay == flag)
        mismatches += compare_with_reference(batch.take(part), dice[part], replay=flag)[1]
    assert not mismatches, f"{len(mismatches)} mismatches; first: {mismatches[0]}"


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_generator_finds_exactly_the_reference_afterstates(variant, source):
    batch, dice = _sample(variant, source)
    for position in batch.to_positions()[:50]:
        validate_position(position)
    _assert_same_as_reference(batch, dice)


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_samples_reach_the_rare_rules(variant):
    """The samples above are only worth their count if they exercise the hard cases."""
    batches, rolls = zip(*(_sample(variant, source) for source in SOURCES))
    batch, dice = concatenate(batches), np.concatenate(rolls)
    after = generate(batch, dice)
    kinds = set(after.result_kind.tolist())
    assert {outcomes.RESULT_SINGLE, outcomes.RESULT_GAMMON} <= kinds
    assert (after.n_steps == 0).any(), "no passed turn in the sample"
    doubles = dice[:, 0] == dice[:, 1]
    most_steps = np.zeros(len(batch), dtype=np.int64)
    np.maximum.at(most_steps, after.source, after.n_steps)
    assert ((~doubles) & (most_steps == 1)).any(), "no roll where only one die can be played"
    assert (doubles & (most_steps > 0) & (most_steps < 4) & ~np.isin(np.arange(len(batch)), after.source[after.game_over])).any()
    if variant == "backgammon":
        assert (batch.bar[:, 0] > 0).any() and outcomes.RESULT_BACKGAMMON in kinds
    else:
        assert {outcomes.RESULT_MOTHER, outcomes.RESULT_DRAW} <= kinds
        assert (batch.pinned == 1).any() and (batch.pinned == -1).any()
        opponent_alone_on_one = (np.clip(-batch.board[:, 0], 0, None) + (batch.pinned[:, 0] == -1)) == 1
        assert (doubles & opponent_alone_on_one).sum() >= 20, "too few doubles searched in every order"


def test_mother_win_in_the_middle_of_doubles_keeps_every_order_of_the_earlier_steps():
    # X pins O's mother (X's 1-point) and leaves its own 24-point in either order:
    # the game ends at the step that completes both, so what came before differs.
    position = board("tapa", "24:X 5:XX 1:O", turn="X")
    _assert_same_as_reference(PositionBatch.from_positions([position]), np.array([[2, 2]]), replay_every=1)
    assert {m.position for m in legal_moves_fast(position, (2, 2))} == {m.position for m in legal_moves(position, (2, 2))}


def test_draw_when_both_mothers_are_pinned_ends_the_turn():
    position = board("plakoto", "24:XO 3:XX 1:O 10:O", turn="X")
    moves = legal_moves_fast(position, (2, 2))
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, (2, 2))}
    assert any(m.position.result is not None and m.position.result.kind == "draw" for m in moves)


def test_checkers_on_the_bar_enter_before_anything_moves():
    position = board("backgammon", "bar:XX 20:OO 6:XXXXX 1:O", turn="X")
    for dice in [(5, 3), (5, 5), (6, 1), (3, 3)]:
        assert {m.position for m in legal_moves_fast(position, dice)} == {
            m.position for m in legal_moves(position, dice)
        }


def test_bearing_off_with_a_pinned_checker_on_a_higher_point():
    position = board("tapa", "6:XO 4:XX 2:XXX 20:OO", turn="X")
    for dice in [(6, 5), (5, 5), (6, 6), (3, 1)]:
        assert {m.position for m in legal_moves_fast(position, dice)} == {
            m.position for m in legal_moves(position, dice)
        }


def test_a_passed_turn_is_one_move_without_steps():
    position = board("backgammon", "bar:X 19:OO 20:OO 21:OO 22:OO 23:OO 24:OO 6:XXXXX", turn="X")
    moves = legal_moves_fast(position, (6, 6))
    assert len(moves) == 1 and moves[0].steps == () and moves[0].position == position


def test_finished_games_and_bad_dice_are_refused_like_the_reference():
    over = board("tapa", "1:OX 24:XO 12:O", turn="X")  # both mothers pinned: a draw already
    assert finished_result(over) is not None
    with pytest.raises(PositionError):
        legal_moves_fast(over, (3, 1))
    with pytest.raises(PositionError):
        generate(PositionBatch.from_positions([over]), (3, 1))
    with pytest.raises(RulesError):
        legal_moves_fast(start_position("tapa"), (0, 3))
    with pytest.raises(RulesError):
        generate(PositionBatch.from_positions([start_position("tapa")]), np.array([[7, 1]]))


def test_batch_conversion_round_trips_positions_and_json():
    rng = np.random.default_rng(11)
    batch = concatenate([playout_positions(v, 200, rng, "contact", games=16) for v in VARIANTS]
                        + [endgame_positions(v, 100, rng) for v in VARIANTS])
    positions = batch.to_positions()
    again = PositionBatch.from_positions(positions)
    for name in ("board", "pinned", "off", "bar", "turn"):
        assert np.array_equal(getattr(again, name), getattr(batch, name)), name
    assert again.to_positions() == positions
    assert [position_from_json(data) for data in batch.to_json()] == positions
    assert PositionBatch.from_json([position_to_json(p) for p in positions]).to_positions() == positions
    assert (batch.checker_counts() == 15).all()


def test_flipping_twice_gives_the_same_batch_and_once_gives_the_other_sides_view():
    rng = np.random.default_rng(12)
    batch = playout_positions("tapa", 300, rng, "contact", games=16)
    twice = batch.flipped().flipped()
    assert twice.to_positions() == batch.to_positions()
    flipped = batch.flipped().to_positions()
    for before, after in zip(batch.to_positions(), flipped):
        assert after.points == before.points and after.turn != before.turn


def test_one_batch_may_mix_variants_and_rolls():
    rng = np.random.default_rng(13)
    batch = concatenate([endgame_positions(v, 40, rng) for v in VARIANTS])
    dice = random_dice(len(batch), rng)
    mixed = generate(batch, dice)
    for index, variant in enumerate(VARIANTS):
        part = np.arange(40 * index, 40 * (index + 1))
        alone = generate(batch.take(part), dice[part])
        rows = np.arange(mixed.offsets[part[0]], mixed.offsets[part[-1] + 1])
        assert [mixed.position(r) for r in rows] == [alone.position(r) for r in range(len(alone))]
        assert all(mixed.position(r).rules.name == variant for r in rows)


def test_threads_do_not_change_the_result():
    rng = np.random.default_rng(14)
    batch = playout_positions("backgammon", 1000, rng, "uniform", games=32)
    dice = random_dice(len(batch), rng)
    one, two = generate(batch, dice, threads=1), generate(batch, dice, threads=2)
    assert np.array_equal(one.offsets, two.offsets)
    for name in ("board", "pinned", "off", "bar"):
        assert np.array_equal(getattr(one.positions, name), getattr(two.positions, name))
    assert np.array_equal(one.steps, two.steps) and np.array_equal(one.result_kind, two.result_kind)


@pytest.mark.parametrize(
    "changes",
    [{"mother_points": 0}, {"mother_points": 5, "backgammons": False}],
    ids=["tapa-without-mothers", "tapa-mother-5-no-backgammons"],
)
def test_custom_rule_sets_follow_their_options(changes):
    from tapa_ai.rules import variant_rules

    rules = variant_rules("tapa").replace(**changes)
    rng = np.random.default_rng(15)
    batch = concatenate([playout_positions(rules, 150, rng, "contact", games=8), endgame_positions(rules, 150, rng)])
    assert batch.rules == (rules,)
    _assert_same_as_reference(batch, random_dice(len(batch), rng))


def test_backgammon_without_backgammons_scores_a_gammon_instead():
    from tapa_ai.rules import variant_rules

    rules = variant_rules("backgammon").replace(backgammons=False)
    rng = np.random.default_rng(16)
    batch = endgame_positions(rules, 300, rng)
    _assert_same_as_reference(batch, random_dice(len(batch), rng))


@pytest.mark.parametrize("variant", ["tapa", "plakoto"])
def test_doubles_with_the_opponents_mother_alone_on_the_one_point(variant):
    """Where a mother can end the game mid-turn the order of equal dice matters (kernel docstring)."""
    rng = np.random.default_rng([17, VARIANTS.index(variant)])
    pool = concatenate([playout_positions(variant, 3000, rng, "contact", games=64), endgame_positions(variant, 1000, rng)])
    alone = (np.clip(-pool.board[:, 0], 0, None) + (pool.pinned[:, 0] == -1)) == 1
    index = np.flatnonzero(alone)[:200]
    assert index.size >= 100
    die = rng.integers(1, 7, size=index.size)
    _assert_same_as_reference(pool.take(index), np.stack([die, die], axis=1), replay_every=4)
