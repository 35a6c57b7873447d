"""Property tests on random games of every variant (Hypothesis draws the seed).

A game is played from the start position by rolling seeded dice and choosing
a random legal move until the game ends. Every position on the way, and every
legal afterstate offered, must keep the invariants of docs/rules.md, survive the
JSON, move-text and (backgammon) gnubg Position ID round trips, and the game
must end.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tapa_ai.notation.gnubg_id import position_from_gnubg_id, position_to_gnubg_id
from tapa_ai.notation.json_position import position_from_json, position_to_json
from tapa_ai.notation.move_text import find_move, format_move
from tapa_ai.rules import SIDES, Move, Position, legal_moves, next_turn, other, start_position

VARIANTS = ["tapa", "plakoto", "backgammon"]

MAX_TURNS = 1000
"""Far above any random game seen (about 150 turns): a game still going after this does not end."""

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def _settings(examples: int):
    return settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_game(variant: str, seed: int) -> Iterator[tuple[Position, tuple[int, int], list[Move]]]:
    """Each turn of a random game: (position to move, dice, legal moves); fails if the game never ends."""
    rng = random.Random(seed)
    position = start_position(variant, rng.choice(SIDES))
    for _ in range(MAX_TURNS):
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        moves = legal_moves(position, dice)
        yield position, dice, moves
        move = rng.choice(moves)
        if move.position.result is not None:
            return
        position = next_turn(move.position)
    pytest.fail(f"{variant} game with seed {seed} has not ended after {MAX_TURNS} turns")


# --------------------------------------------------------------------------
# Invariants, checked without the code under test's own validator
# --------------------------------------------------------------------------

def assert_fifteen_checkers_a_side(position: Position) -> None:
    for index, side in enumerate(SIDES):
        on_board = sum(stack.count(side) for stack in position.points)
        total = on_board + position.off[index] + position.bar[index]
        assert total == 15, f"{side} has {total} checkers: board {on_board}, off {position.off}, bar {position.bar}"
        assert 0 <= position.off[index] <= 15 and position.bar[index] >= 0


def assert_legal_stack_shapes(position: Position) -> None:
    assert len(position.points) == 24
    for index, stack in enumerate(position.points):
        assert set(stack) <= set(SIDES), f"points[{index}] = {stack!r}"
        if len(set(stack)) <= 1:
            continue
        assert position.rules.pins, f"points[{index}] = {stack!r}: mixed stack in {position.variant}"
        bottom, top = stack[0], stack[1:]
        assert top == other(bottom) * len(top), f"points[{index}] = {stack!r}: not one checker pinned under the other side"


def assert_no_bar_in_pin_games(position: Position) -> None:
    if position.rules.pins:
        assert position.bar == (0, 0), f"{position.variant} has a bar: {position.bar}"


def assert_result_fits_position(position: Position) -> None:
    result = position.result
    if result is None:
        assert 15 not in position.off, f"all checkers off but no result: off {position.off}"
        return
    if result.kind in ("single", "gammon", "backgammon"):
        assert position.off_count(result.winner) == 15
        assert result.points == {"single": 1, "gammon": 2, "backgammon": 3}[result.kind]
    else:
        assert position.rules.pins and position.rules.mother_points, f"{result.kind} result in {position.variant}"


def assert_sound(position: Position) -> None:
    assert_fifteen_checkers_a_side(position)
    assert_legal_stack_shapes(position)
    assert_no_bar_in_pin_games(position)
    assert_result_fits_position(position)


def positions_and_afterstates(variant: str, seed: int) -> Iterator[Position]:
    for position, _, moves in random_game(variant, seed):
        yield position
        for move in moves:
            yield move.position


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
@_settings(examples=30)
@given(seed=SEEDS)
def test_random_games_end_and_every_position_is_sound(variant, seed):
    turns = 0
    for position, dice, moves in random_game(variant, seed):
        turns += 1
        assert position.result is None
        assert moves, "legal_moves must offer at least a pass"
        assert_sound(position)
        for move in moves:
            assert move.position.turn == position.turn, "an afterstate keeps the mover as turn"
            assert_sound(move.position)
        if len(moves) == 1 and not moves[0].steps:
            assert moves[0].position == position, "a pass leaves the position unchanged"
    assert turns > 0


@pytest.mark.parametrize("variant", VARIANTS)
@_settings(examples=12)
@given(seed=SEEDS)
def test_json_round_trip_on_random_games(variant, seed):
    for position in positions_and_afterstates(variant, seed):
        data = position_to_json(position)
        assert position_from_json(data) == position
        assert position_from_json(json.loads(json.dumps(data))) == position


@pytest.mark.parametrize("variant", VARIANTS)
@_settings(examples=8)
@given(seed=SEEDS)
def test_move_text_round_trip_on_random_games(variant, seed):
    for position, dice, moves in random_game(variant, seed):
        for move in moves:
            text = format_move(move)
            assert find_move(position, dice, text, moves).position == move.position, (text, dice)


@_settings(examples=20)
@given(seed=SEEDS)
def test_gnubg_id_round_trip_on_random_backgammon_games(seed):
    for position in positions_and_afterstates("backgammon", seed):
        pid = position_to_gnubg_id(position)
        # The ID holds neither the side names nor the result.
        assert position_from_gnubg_id(pid, position.turn, position.rules) == position.with_changes(result=None)


# --------------------------------------------------------------------------
# Random self-play summarised (tapa_ai/rules/demo.py, ``tapa-ai demo``).
# Found by mutation testing: no test ran the module before.
# --------------------------------------------------------------------------

def _counting_generator(monkeypatch):
    """Replace the demo's move generator by one that counts what it is asked and answers."""
    from tapa_ai.rules import demo

    seen = {"calls": 0, "moves": 0, "passes": 0, "dice": Counter()}

    def counting(position, dice):
        moves = legal_moves(position, dice)
        seen["calls"] += 1
        seen["moves"] += len(moves)
        seen["passes"] += not moves[0].steps
        seen["dice"].update(dice)
        return moves

    monkeypatch.setattr(demo, "legal_moves", counting)
    return seen


@pytest.mark.parametrize("variant, seed", [("backgammon", 1), ("plakoto", 1)])
def test_random_self_play_counts_every_turn_legal_move_pass_and_result(variant, seed, monkeypatch):
    import time

    from tapa_ai.rules import variant_rules
    from tapa_ai.rules.demo import RandomPlayStats, play_random_game

    seen = _counting_generator(monkeypatch)
    rules, rng, stats = variant_rules(variant), random.Random(seed), RandomPlayStats(variant)
    started = time.perf_counter()
    finals = [play_random_game(rules, rng, stats) for _ in range(6)]
    wall = time.perf_counter() - started
    results = [final.result for final in finals]
    assert stats.games == 6 and all(result is not None for result in results)
    assert (stats.turns, stats.legal_moves, stats.passes) == (seen["calls"], seen["moves"], seen["passes"])
    assert 0 < stats.generator_seconds <= wall
    assert stats.kinds == Counter(result.kind for result in results)
    assert stats.winners == Counter(result.winner or "draw" for result in results)
    assert stats.points == Counter({side: sum(r.points for r in results if r.winner == side) for side in "XO"})
    # The seeds are chosen so that passes (backgammon) and a draw (plakoto) happen.
    assert seen["passes"] > 0 if variant == "backgammon" else stats.winners["draw"] > 0
    assert sorted(seen["dice"]) == [1, 2, 3, 4, 5, 6]


def test_a_random_game_that_does_not_end_in_max_turns_is_an_error(monkeypatch):
    from tapa_ai.rules import variant_rules
    from tapa_ai.rules.demo import RandomPlayStats, play_random_game

    seen = _counting_generator(monkeypatch)
    with pytest.raises(RuntimeError, match="a random game of tapa did not end in 3 turns"):
        play_random_game(variant_rules("tapa"), random.Random(0), RandomPlayStats("tapa"), max_turns=3)
    assert seen["calls"] == 3


def test_random_play_summary_is_per_game_and_per_position():
    from tapa_ai.rules.demo import RandomPlayStats

    stats = RandomPlayStats("plakoto", games=3, turns=10, passes=1, legal_moves=25, generator_seconds=0.25,
                            kinds=Counter({"mother": 2, "draw": 1}), winners=Counter({"X": 1, "O": 1, "draw": 1}),
                            points=Counter({"X": 2, "O": 2}))
    assert stats.summary() == {
        "variant": "plakoto", "games": 3, "turns_per_game": 3.33, "legal_moves_per_position": 2.5,
        "pass_rate": 0.1, "reference_positions_per_s": 40.0, "result_kinds": {"draw": 1, "mother": 2},
        "winners": {"O": 1, "X": 1, "draw": 1}, "points_X": 2, "points_O": 2,
    }
    one = RandomPlayStats("tapa", games=1, turns=7, passes=0, legal_moves=25, generator_seconds=3.0,
                          kinds=Counter({"single": 1}), winners=Counter({"X": 1}), points=Counter({"X": 1}))
    summary = one.summary()
    assert (summary["turns_per_game"], summary["legal_moves_per_position"]) == (7.0, 3.57)
    assert summary["reference_positions_per_s"] == 2.3  # 7 / 3, to one decimal
    assert RandomPlayStats("odd", turns=3, passes=2, legal_moves=7).summary()["pass_rate"] == 0.6667
    one_pass = RandomPlayStats("plakoto", turns=1, passes=1, legal_moves=1).summary()
    assert (one_pass["legal_moves_per_position"], one_pass["pass_rate"]) == (1.0, 1.0)
    empty = RandomPlayStats("tapa")
    assert (empty.games, empty.turns, empty.passes, empty.legal_moves, empty.generator_seconds) == (0, 0, 0, 0, 0.0)
    assert empty.positions_per_second == 0.0
    assert empty.summary() == {
        "variant": "tapa", "games": 0, "turns_per_game": 0.0, "legal_moves_per_position": 0.0, "pass_rate": 0.0,
        "reference_positions_per_s": 0.0, "result_kinds": {}, "winners": {}, "points_X": 0, "points_O": 0,
    }


def test_random_play_takes_a_variant_or_a_rule_set_and_repeats_with_its_seed():
    from tapa_ai.rules import variant_rules
    from tapa_ai.rules.demo import random_play

    def without_speed(stats):
        return {k: v for k, v in stats.summary().items() if k != "reference_positions_per_s"}

    by_name = random_play("backgammon", 3, seed=4, progress=False)
    by_rules = random_play(variant_rules("backgammon"), 3, seed=4, progress=False)
    assert by_name.games == 3 and without_speed(by_name) == without_speed(by_rules)
    assert without_speed(random_play("backgammon", 3, seed=5, progress=False)) != without_speed(by_name)
