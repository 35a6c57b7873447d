"""Portes (docs/rules.md 9): backgammon's board game with no cube, a backgammon counted as a gammon, the opener
rolling both dice afresh and the winner of a game opening the next. The rules layer and the move generators."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tapa_ai.flow import FlowError, GameState, MatchState, ScriptedDice
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.movegen.random_positions import mixed_positions, random_dice
from tapa_ai.notation import board
from tapa_ai.rules.options import (BACKGAMMON, PLAKOTO, PORTES, SCORING_OPTIONS, RulesError, board_game_difference,
                                   same_board_game, variant_rules)
from tapa_ai.rules.outcomes import RESULT_BACKGAMMON, RESULT_GAMMON, outcome_names, outcome_points, top_points
from tapa_ai.rules.position import GameResult, start_position
from tapa_ai.rules.reference import finished_result, legal_moves


def x_bears_off_its_last_checker_with_an_o_checker_in_xs_home():
    """X has one checker on its 1-point; O has borne off none and has a checker on X's 2-point (X's home):
    any roll wins X a backgammon in backgammon."""
    return "1:X 2:O 20:" + "O" * 14


# -- the preset ---------------------------------------------------------------------------------------------

def test_portes_preset_is_backgammon_without_cube_or_backgammons_opened_by_reroll_and_the_winner():
    assert variant_rules("portes") is PORTES
    assert PORTES.start == BACKGAMMON.start and PORTES.contact == "hit" and PORTES.mother_points == 0
    assert (PORTES.cube, PORTES.crawford, PORTES.backgammons) == (False, False, False)
    assert (PORTES.opening, PORTES.next_game_opener) == ("reroll", "winner")
    assert start_position(PORTES).points == start_position(BACKGAMMON).points


def test_portes_plays_backgammons_board_game_and_plakoto_does_not():
    assert same_board_game(PORTES, BACKGAMMON) and same_board_game(BACKGAMMON, PORTES)
    assert board_game_difference(PORTES, BACKGAMMON) == {}
    assert not same_board_game(PLAKOTO, BACKGAMMON)
    assert set(board_game_difference(PLAKOTO, BACKGAMMON)) == {"contact", "mother_points", "start"}
    # Scoring, cube and opening options only: the options that change a move or a result are not among them.
    assert set(SCORING_OPTIONS) == {"name", "backgammons", "cube", "crawford", "opening", "next_game_opener"}
    assert not same_board_game(BACKGAMMON.replace(name="x", start=((24, 15),)), BACKGAMMON)


def test_an_unknown_variant_is_one_line_naming_portes_among_the_known():
    with pytest.raises(RulesError, match=r"unknown variant 'porte'; known variants: .*'portes'") as error:
        variant_rules("porte")
    assert "\n" not in str(error.value)


# -- results -------------------------------------------------------------------------------------------------

def test_portes_backgammon_counts_as_a_gammon():
    portes = board(PORTES, x_bears_off_its_last_checker_with_an_o_checker_in_xs_home())
    backgammon = board(BACKGAMMON, x_bears_off_its_last_checker_with_an_o_checker_in_xs_home())
    for dice in ((6, 5), (1, 1)):
        assert {finished_result(move.position) for move in legal_moves(portes, dice)} == {GameResult("X", "gammon", 2)}
        assert {finished_result(move.position) for move in legal_moves(backgammon, dice)} == \
            {GameResult("X", "backgammon", 3)}


def test_portes_backgammon_counts_as_a_gammon_in_the_fast_generator():
    layout = x_bears_off_its_last_checker_with_an_o_checker_in_xs_home()
    dice = np.array([[6, 5]], dtype=np.int8)
    portes = generate(PositionBatch.from_positions([board(PORTES, layout)]), dice)
    backgammon = generate(PositionBatch.from_positions([board(BACKGAMMON, layout)]), dice)
    assert portes.result_kind.tolist() == [RESULT_GAMMON] and portes.result_points.tolist() == [2]
    assert backgammon.result_kind.tolist() == [RESULT_BACKGAMMON] and backgammon.result_points.tolist() == [3]


def test_portes_outcome_classes_value_a_backgammon_as_a_gammon():
    # The top class never happens in Portes' own games; the backgammon model playing Portes puts its backgammons
    # there, and Portes counts them 2.
    assert top_points(PORTES) == 2
    assert outcome_points(PORTES).tolist() == [1, 2, 2, -1, -2, -2]
    assert outcome_points(BACKGAMMON).tolist() == [1, 2, 3, -1, -2, -3]
    assert outcome_names(PORTES) == outcome_names(BACKGAMMON)
    # The other games without backgammons keep their values (the class never happens there).
    assert top_points(variant_rules("fevga")) == 3 and top_points(PLAKOTO) == 2


def test_a_single_win_in_portes_counts_1():
    position = board(PORTES, "1:X 20:OOOOO")
    assert {finished_result(move.position) for move in legal_moves(position, (3, 2))} == {GameResult("X", "single", 1)}


# -- the flow: no cube, opening re-roll, the winner opens -------------------------------------------------------

def test_portes_has_no_cube_a_double_is_refused():
    game = GameState.new(PORTES).roll(ScriptedDice([5, 2]))
    assert game.phase == "roll" and not game.may_double
    with pytest.raises(FlowError, match="'portes' has no cube"):
        game.double()


def test_portes_opening_rerolls_equal_dice_and_the_opener_rolls_both_dice_afresh():
    dice = ScriptedDice([3, 3, 2, 5, 6, 4])
    game = GameState.new(PORTES).roll(dice)
    # 3-3 rolled again; 2-5: O opens, and does not play the opening dice: it rolls afresh.
    assert [event.dice for event in game.history] == [(3, 3), (2, 5)]
    assert game.phase == "roll" and game.position.turn == "O" and game.dice is None
    game = game.roll(dice)
    assert game.phase == "move" and game.dice == (6, 4) and game.position.turn == "O"
    assert dice.remaining == 0


def test_backgammon_opener_plays_the_opening_dice_unlike_portes():
    game = GameState.new(BACKGAMMON).roll(ScriptedDice([2, 5]))
    assert game.phase == "move" and game.dice == (5, 2)


def test_portes_winner_opens_the_next_game():
    position = board(PORTES, "24:O 5:XXXXX", turn="O")  # O's last checker on its 1-point
    match = MatchState(GameState.new(PORTES, opener="O", position=position), length=5)
    match = match.rolled((6, 5))
    match = match.play(match.game.moves[0])
    assert match.game.winner == "O" and match.score == (0, 1)  # (X, O)
    match = match.start_next_game()
    assert match.game.phase == "roll" and match.game.history == ()
    assert match.game.position == start_position(PORTES, "O")
    match = match.roll(ScriptedDice([2, 1]))
    assert match.game.dice == (2, 1) and match.game.position.turn == "O"


# -- the move generators: the same board game as backgammon --------------------------------------------------------

def as_portes(batch: PositionBatch) -> PositionBatch:
    assert batch.rules == (BACKGAMMON,)
    return replace(batch, rules=(PORTES,))


def test_portes_fast_generator_equals_backgammons_on_random_positions():
    rng = np.random.default_rng(52)
    batch = mixed_positions(BACKGAMMON, 600, rng)
    dice = random_dice(len(batch), rng)
    want, got = generate(batch, dice), generate(as_portes(batch), dice)
    assert np.array_equal(want.offsets, got.offsets) and np.array_equal(want.source, got.source)
    for field in ("board", "pinned", "off", "bar", "turn"):
        assert np.array_equal(getattr(want.positions, field), getattr(got.positions, field)), field
    assert np.array_equal(want.game_over, got.game_over) and np.array_equal(want.winner, got.winner)
    # Results: the same, except that a backgammon is a gammon worth 2.
    backgammons = want.result_kind == RESULT_BACKGAMMON
    assert np.array_equal(np.where(backgammons, RESULT_GAMMON, want.result_kind), got.result_kind)
    assert np.array_equal(np.where(backgammons, 2, want.result_points), got.result_points)
    assert want.game_over.sum() > 0


def test_portes_reference_generator_equals_backgammons_on_random_positions():
    rng = np.random.default_rng(9)
    batch = mixed_positions(BACKGAMMON, 90, rng)
    dice = random_dice(len(batch), rng)
    fast = generate(as_portes(batch), dice)
    compared = 0
    for index, position in enumerate(batch.to_positions()):
        roll = tuple(int(d) for d in dice[index])
        if finished_result(position) is not None:
            continue
        portes = position.with_changes(rules=PORTES)
        want = sorted((m.position.points, m.position.off, m.position.bar) for m in legal_moves(position, roll))
        got = sorted((m.position.points, m.position.off, m.position.bar) for m in legal_moves(portes, roll))
        assert got == want
        rows = range(int(fast.offsets[index]), int(fast.offsets[index + 1]))
        kernel = sorted((p.points, p.off, p.bar) for p in (fast.position(row) for row in rows))
        assert kernel == sorted(set(want))
        compared += 1
    assert compared > 60
