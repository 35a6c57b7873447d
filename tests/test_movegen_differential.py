"""The vectorized generator finds exactly the reference's afterstates, on random and chosen positions.

Random positions come from ``tapa_ai.movegen.random_positions`` with fixed
seeds: uniform playouts, playouts that prefer pinning and hitting, and
end-game boards with pins, about 2,000 per variant. For each, the set of
afterstates (results included) must equal the reference's, and the move
text the fast generator gives for an afterstate must replay to it.
``scripts/check_movegen.py`` runs the same comparison on millions.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from tapa_ai.movegen import PositionBatch, concatenate, generate, legal_moves_fast
from tapa_ai.rules import outcomes
from tapa_ai.movegen.differential import compare_with_reference
from tapa_ai.movegen.random_positions import endgame_positions, playout_positions, random_dice
from tapa_ai.notation import board, position_from_json, position_to_json
from tapa_ai.rules import RulesError, legal_moves, start_position, variant_rules
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


# -- a quick sample, small enough to run the kernel as Python --------------------------------------------------
# ``NUMBA_DISABLE_JIT=1`` runs tapa_ai.movegen.kernel as plain Python, a few hundred times slower: what
# mutation testing of the kernel does (docs/mutation-testing.md). These tests keep the sources and the rare
# rules of the tests above on a few hundred positions in all; select them with ``-k quick``.
QUICK_RULES = {
    "tapa": "tapa", "plakoto": "plakoto", "backgammon": "backgammon",
    "tapa-without-mothers": ("tapa", {"mother_points": 0}),
    "tapa-mother-5-no-backgammons": ("tapa", {"mother_points": 5, "backgammons": False}),
    "backgammon-without-backgammons": ("backgammon", {"backgammons": False}),
}


def _quick_rules(name: str):
    from tapa_ai.rules import variant_rules

    spec = QUICK_RULES[name]
    return variant_rules(spec) if isinstance(spec, str) else variant_rules(spec[0]).replace(**spec[1])


@pytest.mark.parametrize("name", list(QUICK_RULES))
def test_quick_sample_of_playouts_and_end_games_matches_the_reference(name):
    rules = _quick_rules(name)
    rng = np.random.default_rng([18, list(QUICK_RULES).index(name)])
    batch = concatenate([playout_positions(rules, 30, rng, "uniform", games=4),
                         playout_positions(rules, 30, rng, "contact", games=4), endgame_positions(rules, 40, rng)])
    _assert_same_as_reference(batch, random_dice(len(batch), rng))


@pytest.mark.parametrize("variant", ["tapa", "plakoto"])
def test_quick_doubles_with_the_opponents_mother_alone_on_the_one_point(variant):
    rng = np.random.default_rng([19, VARIANTS.index(variant)])
    pool = endgame_positions(variant, 300, rng)
    alone = (np.clip(-pool.board[:, 0], 0, None) + (pool.pinned[:, 0] == -1)) == 1
    index = np.flatnonzero(alone)[:30]
    assert index.size >= 20
    die = rng.integers(1, 7, size=index.size)
    _assert_same_as_reference(pool.take(index), np.stack([die, die], axis=1), replay_every=1)


# -- found by mutation testing: tapa_ai/movegen/generate.py --------------------------------------------------------
def _endgame_afterstates(seed: int, count: int = 6):
    rng = np.random.default_rng(seed)
    batch = endgame_positions("tapa", count, rng)
    dice = random_dice(count, rng)
    return batch, dice, generate(batch, dice)


def test_the_afterstates_of_some_sources_keep_their_moves_inputs_and_dice_with_offsets_from_zero():
    import dataclasses

    batch, dice, after = _endgame_afterstates(20)
    index = np.array([1, 3, 4])
    part = after.of_sources(index)
    counts = np.diff(after.offsets)[index]
    assert part.offsets.tolist() == [0, *np.cumsum(counts).tolist()]
    assert part.source.tolist() == np.repeat(np.arange(3), counts).tolist()
    assert [part.moves_of(new) for new in range(3)] == [after.moves_of(old) for old in index]
    assert part.inputs.to_positions() == batch.take(index).to_positions()
    assert part.dice.tolist() == dice[index].tolist()
    bare = dataclasses.replace(after, inputs=None, dice=None).of_sources(index)
    assert bare.inputs is None and bare.dice is None and len(bare) == counts.sum()


def test_chosen_rows_of_afterstates_stand_alone_each_its_own_source():
    _, _, after = _endgame_afterstates(21)
    rows = np.array([len(after) - 1, 0, 2])
    alone = after.rows(rows)
    assert alone.source.tolist() == [0, 1, 2] and alone.offsets.tolist() == [0, 1, 2, 3]
    assert [alone.move(i) for i in range(3)] == [after.move(int(r)) for r in rows]
    assert [alone.moves_of(i) for i in range(3)] == [[after.move(int(r))] for r in rows]


@pytest.mark.parametrize("turn", ["X", "O"])
def test_the_winner_of_an_afterstate_is_the_side_that_moved_and_nobody_for_a_draw_or_a_game_in_progress(turn):
    # X: pinning O's mother ends the game (a draw while X's own mother is pinned); O: the same, mirrored.
    layouts = {"X": "24:XO 3:XX 1:O 10:O", "O": "1:OX 22:OO 24:X 15:X"}
    position = board("plakoto", layouts[turn], turn=turn)
    win = board("tapa", {"X": "24:X 5:XX 1:O", "O": "1:O 20:OO 24:X"}[turn], turn=turn)
    parts = [generate(PositionBatch.from_positions([p]), (2, 2)) for p in (position, win)]
    kinds = set(np.concatenate([part.result_kind for part in parts]).tolist())
    assert {outcomes.RESULT_DRAW, outcomes.RESULT_MOTHER, outcomes.RESULT_NONE} <= kinds
    for part in parts:
        for row in range(len(part)):
            code = int(part.result_kind[row])
            over, wins = code != outcomes.RESULT_NONE, code not in (outcomes.RESULT_NONE, outcomes.RESULT_DRAW)
            assert bool(part.game_over[row]) == over
            assert int(part.winner[row]) == ("XO".index(turn) if wins else -1)
            result = part.result(row)
            assert (result is None) == (not over)
            if over:
                assert result.winner == (turn if wins else None)


def test_dice_are_one_roll_for_the_batch_or_one_roll_per_position():
    _, dice, after = _endgame_afterstates(22, count=3)
    batch = after.inputs
    each = generate(batch, dice)
    assert each.dice.tolist() == dice.tolist() and each.dice.dtype == np.int8
    one = generate(batch, [5, 2])
    assert one.dice.tolist() == [[5, 2]] * 3
    for wrong in ([5, 2, 1], [[5, 2]] * 2, [[[5, 2]]] * 3, 5):
        with pytest.raises(RulesError, match="dice: want shape"):
            generate(batch, wrong)


def test_the_thread_count_comes_from_tapa_movegen_threads_and_is_at_least_one(monkeypatch):
    import importlib

    generate_module = importlib.import_module("tapa_ai.movegen.generate")

    monkeypatch.setenv("TAPA_MOVEGEN_THREADS", "3")
    assert generate_module.default_threads() == 3
    monkeypatch.setenv("TAPA_MOVEGEN_THREADS", "0")
    assert generate_module.default_threads() == 1
    monkeypatch.delenv("TAPA_MOVEGEN_THREADS")
    assert generate_module.default_threads() == max(1, os.cpu_count() or 1)


def test_a_result_of_one_call_is_not_changed_by_the_next_call_on_the_same_thread():
    rng = np.random.default_rng(23)
    first_batch = endgame_positions("backgammon", 50, rng)
    first = generate(first_batch, random_dice(50, rng), threads=1)
    kept = [first.move(r) for r in range(len(first))]
    generate(endgame_positions("plakoto", 50, rng), random_dice(50, rng), threads=1)
    assert [first.move(r) for r in range(len(first))] == kept


def test_a_passed_turn_keeps_the_very_position_and_a_finished_position_is_refused():
    position = board("backgammon", "bar:X 19:OO 20:OO 21:OO 22:OO 23:OO 24:OO 6:XXXXX", turn="X")
    moves = legal_moves_fast(position, (6, 6))
    assert moves[0].position is position
    one_step = board("backgammon", "bar:X 19:OO 20:OO 21:OO 22:OO 23:OO 6:XXXXX", turn="X")
    only = legal_moves_fast(one_step, (1, 1))  # enters on the 24-point, then moves on: not a pass
    assert all(move.steps for move in only)
    from tapa_ai.rules.position import GameResult

    over = start_position("tapa").with_changes(result=GameResult("X", "single", 1))
    with pytest.raises(PositionError, match="already over"):
        legal_moves_fast(over, (3, 1))


# -- found by mutation testing: tapa_ai/movegen/differential.py ----------------------------------------------------
def _start_afterstates():
    import dataclasses

    batch = PositionBatch.from_positions([start_position("backgammon")])
    dice = np.array([[3, 1]], dtype=np.int8)
    after = generate(batch, dice)
    return batch, dice, after, dataclasses.replace


def test_the_comparison_finds_nothing_wrong_with_the_fast_generator_s_own_afterstates():
    batch, dice, after, _ = _start_afterstates()
    assert compare_with_reference(batch, dice) == (16, [])
    assert compare_with_reference(batch, dice, afterstates=after, replay=False) == (16, [])


def test_the_comparison_reports_a_missing_an_extra_and_a_duplicated_afterstate():
    batch, dice, after, replace = _start_afterstates()
    last = after.position(len(after) - 1)
    missing = replace(after, offsets=np.array([0, len(after) - 1]))
    _, (problem,) = compare_with_reference(batch, dice, afterstates=missing)
    assert problem["position"] == position_to_json(start_position("backgammon")) and problem["dice"] == [3, 1]
    assert problem["only_reference"] == [position_to_json(last)] and problem["only_fast"] == []
    assert "duplicates" not in problem and "text_does_not_replay" not in problem

    other = generate(batch, (6, 5))  # 24/13: a move of another roll
    mixed = other.rows(np.r_[0, np.arange(len(other))])
    extra = replace(after.rows(np.r_[np.arange(len(after)), 0]), offsets=np.array([0, len(after) + 1]))
    _, (problem,) = compare_with_reference(batch, dice, afterstates=extra, replay=False)
    assert problem == {"position": problem["position"], "dice": [3, 1], "duplicates": 1}
    wrong = replace(mixed, offsets=np.array([0, len(mixed)]))
    _, (problem,) = compare_with_reference(batch, dice, afterstates=wrong, replay=False)
    assert len(problem["only_reference"]) == 16 and len(problem["only_fast"]) == len(other)
    assert problem["duplicates"] == 1


def test_the_comparison_reports_steps_that_do_not_replay_or_use_a_die_not_rolled():
    batch, dice, after, replace = _start_afterstates()
    steps = after.steps.copy()
    row = next(r for r in range(len(after)) if after.move_text(r) == "8/5 6/5")
    steps[row, :2, 2] = 3  # the same points, as if both steps had used the 3
    _, (problem,) = compare_with_reference(batch, dice, afterstates=replace(after, steps=steps))
    assert problem["text_does_not_replay"] == ["8/5 6/5"] and "only_fast" not in problem
    assert compare_with_reference(batch, dice, afterstates=replace(after, steps=steps), replay=False)[1] == []
    steps = after.steps.copy()
    steps[row, 0, :2] = (6, 3)  # "6/3 6/5": legal steps, another afterstate
    _, (problem,) = compare_with_reference(batch, dice, afterstates=replace(after, steps=steps))
    assert problem["text_does_not_replay"] == ["6/3 6/5"]


def test_a_move_text_replays_legal_steps_only_and_stops_with_the_result_of_a_game_ending_step():
    from tapa_ai.movegen.differential import replay_text

    start = start_position("backgammon")
    played = {m.position for m in legal_moves(start, (3, 1))}
    assert replay_text(start, "8/5 6/5") in played and replay_text(start, "24/23 13/10") in played
    assert replay_text(start, "24/23 24/23") is not None  # single steps, each of a die from 1 to 6
    assert replay_text(start, "8/1") is None and replay_text(start, "13/6") is None  # 7 pips: no die
    assert replay_text(start, "24/23 6/1") is None  # 6/1 lands on O's two checkers
    last = board("backgammon", "1:X 2:X 24:O", turn="X")
    (won,) = {m.position for m in legal_moves(last, (2, 1)) if m.position.result is not None}
    assert replay_text(last, "2/1 1/off").result is None  # one checker is left on the 1-point
    assert replay_text(last, "1/off 2/off") == won
    assert replay_text(last, "1/off 2/off 2/off") == won  # steps after the game's end are not replayed


# -- found by mutation testing: tapa_ai/movegen/choice.py ----------------------------------------------------------
def test_segment_argmax_picks_each_segment_s_highest_score_and_breaks_ties_at_random_only_with_a_generator():
    from tapa_ai.movegen.choice import segment_argmax

    offsets = np.array([0, 3, 4, 8])
    scores = np.array([0.5, 0.7, 0.7, -2.0, 0.1, 0.1 + 1e-6, 0.1, -5.0])
    assert segment_argmax(scores, offsets).tolist() == [1, 3, 5]  # the first of equal scores without a generator
    picks = {tuple(segment_argmax(scores, offsets, np.random.default_rng(seed)).tolist()) for seed in range(40)}
    assert picks == {(1, 3, 5), (2, 3, 5)}  # the tie at random; a score 1e-6 higher always wins


def test_segment_argmax_refuses_offsets_that_leave_a_segment_empty_or_do_not_cover_the_scores():
    from tapa_ai.movegen.choice import segment_argmax

    scores = np.array([0.5, 0.7, 0.1, 0.2, 0.3])
    assert segment_argmax(scores, np.array([0, 2, 5])).tolist() == [1, 4]
    assert segment_argmax(np.zeros(0), np.array([0])).tolist() == []  # no positions, no choices
    for offsets in ([0, 2, 2, 5], [1, 3, 5], [0, 3, 4], [0, 4, 3, 5]):
        with pytest.raises(ValueError, match="every segment non-empty"):
            segment_argmax(scores, np.array(offsets))


def test_choose_random_picks_every_afterstate_of_each_position_and_nothing_outside_it():
    from tapa_ai.movegen.choice import choose_random

    _, _, after = _endgame_afterstates(24, count=4)
    rng = np.random.default_rng(25)
    counts = np.diff(after.offsets)
    drawn = np.array([choose_random(after, rng) for _ in range(400)])
    for b in range(4):
        assert set(drawn[:, b].tolist()) == set(range(after.offsets[b], after.offsets[b + 1])), (b, counts[b])
    segments = np.array([3, 1])
    drawn = np.array([choose_random(after, rng, segments) for _ in range(400)])
    for column, b in enumerate(segments):
        assert set(drawn[:, column].tolist()) == set(range(after.offsets[b], after.offsets[b + 1]))


# -- found by mutation testing: tapa_ai/movegen/random_positions.py -----------------------------------------------
def test_mixed_positions_are_a_third_uniform_playouts_a_third_contact_playouts_and_the_rest_end_games():
    from tapa_ai.movegen.random_positions import mixed_positions

    for count, games in [(7, 4), (400, 4), (602, 5)]:  # games: a third // 40, at least 4
        mixed = mixed_positions("plakoto", count, np.random.default_rng(26))
        rng = np.random.default_rng(26)
        third = count // 3
        parts = [playout_positions("plakoto", third, rng, "uniform", games=games),
                 playout_positions("plakoto", third, rng, "contact", games=games),
                 endgame_positions("plakoto", count - 2 * third, rng)]
        assert len(mixed) == count
        assert mixed.to_positions() == concatenate(parts).to_positions()


def test_a_contact_playout_scores_an_afterstate_by_the_checkers_it_pins_or_hits_and_the_24_point_kept():
    from types import SimpleNamespace

    from tapa_ai.movegen.random_positions import _contact_score

    # Afterstates as the mover sees them: pins (-1 under its checkers), the opponent's bar, its own 24-point.
    layouts = [
        ("plakoto", "20:XX 13:O 2:O", "X"),       # nothing: 0
        ("plakoto", "20:OX 13:OX 2:O", "X"),      # two of O's checkers pinned: 2
        ("plakoto", "1:OX 13:O 20:XX", "X"),      # O's mother (on X's 1-point) pinned: 1 + 3
        ("plakoto", "24:X 13:O 20:XX", "X"),      # a checker kept on X's own 24-point: 0.5
        ("plakoto", "24:XO 1:O 12:X 13:X", "O"),  # the same seen by O: X's mother pinned, 1:O kept: 1 + 3 + 0.5
        ("backgammon", "bar:OO 10:X 12:X 24:X", "X"),  # two of O's checkers hit: 4, plus 0.5
    ]
    positions = [board(rules, layout, turn=turn) for rules, layout, turn in layouts]
    after = SimpleNamespace(positions=concatenate([PositionBatch.from_positions([p]) for p in positions]))
    assert _contact_score(after).tolist() == [0.0, 2.0, 4.0, 0.5, 4.5, 4.5]


def test_random_dice_are_each_of_the_36_rolls_as_two_int8_values_from_one_to_six():
    dice = random_dice(3600, np.random.default_rng(27))
    assert dice.dtype == np.int8 and dice.shape == (3600, 2)
    assert set(map(tuple, dice.tolist())) == {(a, b) for a in range(1, 7) for b in range(1, 7)}


def test_playouts_take_the_asked_number_of_positions_and_refuse_an_unknown_style():
    rng = np.random.default_rng(28)
    assert len(playout_positions("tapa", 0, rng)) == 0 and len(playout_positions("tapa", -3, rng)) == 0
    assert len(playout_positions("tapa", 1, rng, games=1)) == 1
    with pytest.raises(ValueError, match="style 'greedy'"):
        playout_positions("tapa", 5, rng, "greedy")


@pytest.mark.parametrize("style", ["uniform", "contact"])
def test_each_playout_ply_continues_every_game_with_one_of_its_own_moves_chosen_by_the_style(style, monkeypatch):
    import importlib

    module = importlib.import_module("tapa_ai.movegen.random_positions")
    plies = []

    def recording(batch, dice):
        plies.append(generate(batch, dice))
        return plies[-1]

    monkeypatch.setattr(module, "generate", recording)
    module.playout_positions("plakoto", 300, np.random.default_rng(29), style, games=8)
    first, best, choices = 0, 0, 0
    for this, following in zip(plies, plies[1:]):
        moved = following.inputs.flipped().to_positions()  # the next ply's positions, as the side that moved sees them
        scores = module._contact_score(this)
        j = 0
        for game in range(len(this.offsets) - 1):
            rows = range(int(this.offsets[game]), int(this.offsets[game + 1]))
            going_on = {this.positions.position(r): r for r in rows if not this.game_over[r]}
            if j < len(moved) and moved[j] in going_on:
                row = going_on[moved[j]]
                j += 1
                if len(rows) > 1:
                    choices += 1
                    first += row == rows[0]
                    best += scores[row] == scores[rows.start:rows.stop].max()
            else:
                assert this.game_over[rows.start:rows.stop].any(), "a game went on from a move not its own"
        assert j == len(moved)
    assert choices > 200
    if style == "uniform":
        assert first < 0.5 * choices  # not always the first move found
    else:
        assert best > 0.75 * choices  # mostly the move that pins or hits most (85% greedy)


def test_end_game_boards_have_pins_of_both_sides_mothers_checkers_kept_back_and_in_backgammon_the_bar():
    for variant in ("plakoto", "backgammon"):
        batch = endgame_positions(variant, 300, np.random.default_rng(30))
        between = batch.pinned[:, 1:23]  # pins off the 1- and 24-points, not only mothers
        on_24, kept_back = batch.board[:, 23], (batch.board[:, 23] >= 2).sum()
        assert set(batch.turn.tolist()) == {0, 1} and (batch.off[:, 0] > 0).sum() > 100
        if variant == "plakoto":
            assert (between == 1).any(axis=1).sum() >= 5 and (between == -1).any(axis=1).sum() >= 5
            assert ((on_24 == 1) & (batch.pinned[:, 23] == 0)).sum() >= 20 and kept_back >= 5  # mothers, and more
            assert not batch.bar.any()
        else:
            assert not batch.pinned.any() and (batch.bar[:, 0] > 0).sum() >= 20 and (batch.bar[:, 1] > 0).sum() >= 20


# -- found by mutation testing: tapa_ai/movegen/kernel.py (run as Python, -k quick and the hand-worked tests) ------
@pytest.mark.parametrize("layout, dice", [
    ("4:XO 3:XX 2:X 20:OOOOOOOOOOOOOO", [(6, 5), (6, 6), (5, 5), (6, 1)]),  # the highest checker is pinned
    ("3:XX 2:X 1:OO 20:OOOOOOOOOOOOO", [(2, 1), (2, 2), (4, 2)]),  # the 1-point is closed to X
])
def test_a_larger_die_bears_off_only_from_the_highest_point_and_only_a_checker_that_can_move(layout, dice):
    position = board("tapa", layout, turn="X")
    for roll in dice:
        assert {m.position for m in legal_moves_fast(position, roll)} == {m.position for m in legal_moves(position, roll)}


@pytest.mark.parametrize("layout, dice, kind", [
    ("1:X bar:O 13:OOOOOOOOOOOOOO", (2, 1), "backgammon"),  # one O checker on the bar
    ("1:X 6:O 13:OOOOOOOOOOOOOO", (2, 1), "backgammon"),  # one in X's home board
    ("4:X 3:X 2:O 13:OOOOOOOOOOOOOO", (2, 2), "backgammon"),  # hit on the way off: on the bar at the end
    ("1:X 7:O 13:OOOOOOOOOOOOOO", (2, 1), "gammon"),
    ("1:X 13:OOOOOOOOOOOOOO", (2, 1), "single"),  # the loser has borne off one checker
])
def test_bearing_off_the_last_checker_wins_a_backgammon_a_gammon_or_a_single_game_by_the_loser_s_checkers(
        layout, dice, kind):
    position = board("backgammon", layout, turn="X")
    moves = legal_moves_fast(position, dice)
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, dice)}
    assert {m.position.result.kind for m in moves} == {kind}


def test_the_larger_die_bears_off_after_the_smaller_brings_the_last_checker_home():
    # 7/6 brings X's last checker home; only then may the 5 bear off from the 5-point. No order with the 5
    # first reaches "7/6 5/off", so the search must not skip it as already found.
    position = board("backgammon", "7:X 5:X 2:X 20:OOOOOOOOOOOOOOO", turn="X")
    moves = legal_moves_fast(position, (5, 1))
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, (5, 1))}
    assert any({(s.from_point, s.to_point) for s in m.steps} == {(7, 6), (5, 0)} for m in moves)


@pytest.mark.parametrize("variant", ["backgammon", "plakoto"])
def test_when_either_die_but_not_both_can_be_played_the_higher_one_is(variant):
    # X's last checker off the home board: 13/7 or 13/10, and then the other die lands on O's closed 4-point.
    position = board(variant, "13:X 4:OO 24:OOOOOOOOOOOOO", turn="X")
    moves = legal_moves_fast(position, (6, 3))
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, (6, 3))}
    assert [[(s.from_point, s.to_point, s.die) for s in m.steps] for m in moves] == [[(13, 7, 6)]]



def test_a_move_reached_only_with_the_smaller_die_first_is_kept_though_the_larger_die_alone_blocks_the_other():
    # 13 of X's checkers are off. With the 5 first, 7/2 leaves no 1 to play (O holds X's 4- and 1-points);
    # with the 1 first, 7/6 brings X's last checker home and the 5 bears off from the 5-point. Both dice can
    # be played, so the higher-die rule (one die of two) does not apply, and "7/6 5/off" is the only move.
    position = board("backgammon", "7:X 5:X 4:OO 1:OO 24:OOOOOOOOOOO", turn="X")
    moves = legal_moves_fast(position, (5, 1))
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, (5, 1))}
    assert [sorted((s.from_point, s.to_point, s.die) for s in m.steps) for m in moves] == [[(5, 0, 5), (7, 6, 1)]]


def test_when_either_die_bears_off_the_same_checker_and_only_one_can_be_played_the_step_is_the_higher_die():
    # X's 5-point checker bears off with the 6 (the highest point) or the 5 (exactly); X's other checker is
    # pinned on the 4-point, so nothing follows either. The move is 5/off, played with the 6.
    position = board("tapa", "5:X 4:XO 20:OOOOOOOOOOOOOO", turn="X")
    moves = legal_moves_fast(position, (6, 5))
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, (6, 5))}
    assert [[(s.from_point, s.to_point, s.die) for s in m.steps] for m in moves] == [[(5, 0, 6)]]


def test_the_kernel_grows_a_small_output_buffer_to_hold_every_afterstate_of_a_call():
    # generate() gives each thread 4,096 output rows, more than the tests' batches fill; start from 2 rows.
    from tapa_ai.movegen import kernel

    rng = np.random.default_rng(61)
    batch = concatenate([endgame_positions("tapa", 20, rng), playout_positions("backgammon", 20, rng, "uniform",
                                                                               games=4)])
    dice = random_dice(len(batch), rng)
    dice[::4] = dice[::4, :1]  # some doubles: a few hundred afterstates in one position
    from tapa_ai.movegen.generate import decision_plan

    arrays = (batch.board, batch.pinned, batch.off, batch.bar, batch.rules_id, batch.kernel_rule_table(),
              decision_plan(batch, dice))
    arrays = tuple(np.ascontiguousarray(a) for a in arrays)
    counts, status, n_out, outputs = kernel.generate_range(*arrays, 0, len(batch), kernel.make_scratch(),
                                                           kernel.make_outputs(2))
    expected = generate(batch, dice)
    assert not status.any() and n_out == len(expected) > 500
    assert counts.tolist() == np.diff(expected.offsets).tolist() and counts.max() > 100
    board_rows, pinned_rows, off_rows, bar_rows, result_rows, points_rows, step_rows, n_step_rows = outputs
    assert np.array_equal(board_rows[:n_out], expected.positions.board)
    assert np.array_equal(pinned_rows[:n_out], expected.positions.pinned)
    assert np.array_equal(bar_rows[:n_out], expected.positions.bar)
    assert np.array_equal(result_rows[:n_out], expected.result_kind)
    assert np.array_equal(step_rows[:n_out], expected.steps) and np.array_equal(n_step_rows[:n_out], expected.n_steps)


# Positions whose second copy in one batch lost an afterstate when a key of the first copy was left in the last
# two slots of the afterstate table.
REPEATED = [
    ({"variant": "tapa", "points": ["XXX", "OXXXXX", "", "O", "X", "X", "", "", "", "", "", "", "", "", "O", "XX", "",
                                    "", "OX", "OO", "OOOOOOOO", "XX", "O", ""], "off": {"X": 0, "O": 0}, "turn": "O"},
     (4, 2)),
    ({"variant": "tapa", "points": ["", "OOOO", "O", "X", "O", "O", "XX", "OO", "O", "O", "O", "XOO", "", "X", "", "",
                                    "XO", "X", "", "", "", "", "XXXXX", "XXX"], "off": {"X": 0, "O": 0}, "turn": "O"},
     (6, 3)),
    ({"variant": "backgammon", "points": ["", "X", "X", "OO", "XX", "XXXXX", "", "", "", "OO", "", "OOO", "", "", "",
                                          "", "", "O", "OOO", "O", "X", "XX", "OOO", "XX"],
      "off": {"X": 0, "O": 0}, "bar": {"X": 1, "O": 0}, "turn": "X"}, (5, 1)),
]


def test_a_position_repeated_in_one_batch_gives_each_copy_the_reference_afterstates():
    positions = [position_from_json(data) for data, _ in REPEATED for _ in range(2)]
    dice = np.array([roll for _, roll in REPEATED for _ in range(2)], dtype=np.int8)
    _assert_same_as_reference(PositionBatch.from_positions(positions), dice, replay_every=1)


# -- found by mutation testing: tapa_ai/movegen/kernel.py, generate_range up to the step made ----------------------
@pytest.mark.parametrize("variant, layout, winner, kind", [
    ("backgammon", "20:OO", "X", "single"),  # X, to move, has borne off all 15
    ("backgammon", "6:XX", "O", "single"),  # O has
    ("tapa", "24:XO 12:O 5:XX", "O", "mother"),  # O pins X's mother and has left its own 24-point (X's 1)
    ("tapa", "24:XO 12:O 5:XX 2:OX", "O", "mother"),  # the same, with an O checker pinned on X's 2-point
    ("plakoto", "24:XO 12:O 1:XX", "O", "mother"),  # X's checkers on X's 1-point, O's 24-point, none of O's
])
def test_a_game_already_won_by_either_side_is_refused(variant, layout, winner, kind):
    position = board(variant, layout, turn="X")
    result = finished_result(position)
    assert (result.winner, result.kind) == (winner, kind)
    batch = PositionBatch.from_positions([start_position(variant), position])
    for dice in [(3, 1), (2, 2)]:
        with pytest.raises(PositionError):
            legal_moves(position, dice)
        with pytest.raises(PositionError, match="position 1 of the batch"):
            generate(batch, dice)


def test_a_die_outside_one_to_six_in_either_place_is_refused():
    batch = PositionBatch.from_positions([start_position("tapa")] * 2)
    for bad in [(0, 3), (3, 0), (7, 1), (1, 7)]:
        with pytest.raises(RulesError, match="position 1"):
            generate(batch, np.array([(3, 1), bad]))
    assert len(generate(batch, np.array([(1, 6), (6, 1)]))) > 0


def test_a_mother_win_worth_one_point_ends_the_game_like_any_other():
    # tapa with one-point mothers: 4/1 pins O's mother, alone on X's 1-point, and X has left its 24-point.
    rules = variant_rules("tapa").replace(name="tapa-mother-1", mother_points=1)
    position = board(rules, "1:O 4:X 6:XXXXX 8:XXXX 13:XXXXX 19:OOOOO 17:OOOOO 12:OOOO", turn="X")
    moves = legal_moves_fast(position, (3, 1))
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, (3, 1))}
    won = [m.position.result for m in moves if m.position.result is not None]
    assert won and {(r.winner, r.kind, r.points) for r in won} == {("X", "mother", 1)}


def test_with_the_opponents_mother_already_pinned_leaving_the_24_point_wins_after_any_steps_before_it():
    # tapa: X pins O's mother on X's 1-point and has one checker left on its 24-point. With 2-2, 24/22 wins at
    # once, or after one, two or three other steps: each order that leaves the 24-point last is its own move.
    position = board("tapa", "1:OX 24:X 10:XX 8:XXXX 6:XXXXX 5:XX 19:OOOOO 17:OOOOO 13:OOOO", turn="X")
    moves = legal_moves_fast(position, (2, 2))
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, (2, 2))}
    wins = {len(m.steps) for m in moves if m.position.result is not None and m.position.result.kind == "mother"}
    assert wins == {1, 2, 3, 4}


def test_a_checker_brought_to_the_1_point_by_the_smaller_die_may_bear_off_with_the_larger():
    # X on its 3- and 1-points, 6-2: 3/off 1/off wins. The other move, 3/1 and then 1/off with the 6, is reached
    # only with the 2 first: while a checker stands on the 3-point, the 6 bears off from there.
    position = board("backgammon", "3:X 1:X 20:OOOOOOOOOOOOOOO", turn="X")
    moves = legal_moves_fast(position, (6, 2))
    assert {m.position for m in moves} == {m.position for m in legal_moves(position, (6, 2))}
    assert sorted(m.position.off[0] for m in moves) == [14, 15]
