"""One test per rule of docs/rules.md section 8 (Fevga and Narde), asserting exact move sets or results.

Positions are written in the mini-language of ``tapa_ai.notation.mini``: stacks are placed by **X's**
point number (the absolute board + 1), so an O checker on O's own point ``q`` is written at ``q + 12``
(``q <= 12``) or ``q - 12`` (8.1). X is to move unless a test says otherwise; move text is the mover's view.
"""

import re

import pytest

from tapa_ai.notation import board, find_move, format_move, position_from_json, position_to_json
from tapa_ai.rules import GameResult, PositionError, legal_moves, start_position, variant_rules
from tapa_ai.rules.reference import RESTRICTIONS, broken_restriction, holds_prime, single_steps, turn_start
from tests.helpers import assert_moves, play_literally

O15 = "O" * 15


def X(n):
    return "X" * n


def is_legal(position, dice, text):
    """Whether the move text reaches a legal move's position (played literally, no legality check)."""
    reached = play_literally(position, text)
    return any(move.position == reached for move in legal_moves(position, dice))


# ------------------------------------------------------------------ 8.1 paths

@pytest.mark.parametrize("variant", ["fevga", "narde"])
def test_both_sides_start_with_fifteen_checkers_in_diagonally_opposite_corners(variant):
    position = start_position(variant)
    assert position.points[23] == X(15) and position.points[11] == O15
    assert all(stack == "" for i, stack in enumerate(position.points) if i not in (11, 23))
    assert position.stack("O", 24) == O15 and position.stack("X", 12) == O15


def test_the_opponents_point_is_twelve_away_in_the_running_games():
    rules = variant_rules("fevga")
    assert [rules.opponent_point(p) for p in (1, 6, 12, 13, 19, 24)] == [13, 18, 24, 1, 7, 12]
    assert [variant_rules("plakoto").opponent_point(p) for p in (1, 12, 24)] == [24, 13, 1]


def test_o_moves_the_same_way_round_from_its_own_corner():
    position = start_position("fevga", turn="O")
    moves = legal_moves(position, (6, 5))
    assert [format_move(m) for m in moves] == ["24/18 18/13"]
    after = moves[0].position
    # O's 24 is points[11], O's 13 is points[0]: O too moves towards points[0] first.
    assert after.points[11] == "O" * 14 and after.points[0] == "O"


# ------------------------------------------------------------------ 8.2 landing

def test_a_single_opposing_checker_closes_its_point():
    position = board("narde", "10:X 7:O 24:" + X(14) + " 12:" + "O" * 14)
    turn = turn_start(position, (3, 1))
    assert single_steps(position, "X", 3, turn) == [(24, 21)]
    assert single_steps(position, "X", 1, turn) == [(24, 23), (10, 9)]
    with pytest.raises(ValueError, match="the head rule needs the turn's start"):
        single_steps(position, "X", 3)


def test_a_checker_using_both_dice_must_land_on_an_open_intermediate_point():
    # 10/7/5 is closed at 7 (one O); 10/8/5 is open: 10/5 is legal only that way.
    position = board("fevga", "10:X 7:O 24:" + X(14) + " 12:" + "O" * 14)
    assert is_legal(position, (3, 2), "10/8 8/5")
    position = board("fevga", "10:X 7:O 8:O 24:" + X(14) + " 12:" + "O" * 13)
    assert not any(m.position == play_literally(position, "10/8 8/5") for m in legal_moves(position, (3, 2)))


def test_a_running_game_position_with_a_mixed_stack_or_a_bar_checker_is_refused():
    with pytest.raises(PositionError, match="mixes X and O, but fevga has no pins"):
        board("fevga", "10:XO 24:" + X(14) + " 12:" + "O" * 14)
    with pytest.raises(PositionError, match="narde has no bar"):
        board("narde", "bar:X 24:" + X(14) + " 12:" + O15)


# ------------------------------------------------------------------ 8.3 bearing off

def test_running_game_bear_off_uses_the_exact_die_or_a_larger_one_from_the_highest_point():
    assert_moves(board("fevga", "5:X 3:X 13:" + O15), (6, 4), ["5/off 3/off", "5/1 3/off"])


def test_running_game_bear_off_waits_until_all_fifteen_are_home():
    # 3/off is not allowed while the checker on 7 is out; once it is in, the 3 or the 6 bears off.
    position = board("narde", "7:X 3:" + X(14) + " 13:" + O15)
    assert_moves(position, (6, 3), ["7/1 3/off", "7/4 4/off"])


# ------------------------------------------------------------------ 8.4 a: leaving the start

def test_fevga_first_turn_the_runner_leaves_alone():
    start = start_position("fevga")
    assert_moves(start, (6, 5), ["24/18 18/13"])
    # 18/12 would land on the opponent's start: one die is all that can be played.
    assert_moves(start, (6, 6), ["24/18"])
    assert_moves(start, (4, 4), ["24/20 20/16"])
    assert_moves(start, (2, 2), ["24/22 22/20 20/18 18/16"])
    # Past the opponent's start on the third five (9 is below 12): a second checker may leave.
    assert_moves(start, (5, 5), ["24/19 19/14 14/9 9/4", "24/19 19/14 14/9 24/19"])


def test_fevga_a_runner_on_the_12_point_has_not_passed_the_opponents_start():
    position = board("fevga", "24:" + X(14) + " 14:X 6:" + O15)
    assert_moves(position, (2, 1), ["14/12 12/11"])


def test_fevga_a_second_checker_may_leave_in_the_same_turn_once_the_runner_has_passed():
    position = board("fevga", "24:" + X(14) + " 15:X 6:" + O15)
    assert_moves(position, (5, 3), ["15/10 24/21", "15/10 10/7"])


def test_fevga_maximum_use_counts_only_the_steps_the_restrictions_allow():
    # 20/14/12 is closed at 12 and 24/x would leave a second checker before the runner passed:
    # only one die can be played, and then the higher one.
    position = board("fevga", "24:" + X(14) + " 20:X 12:" + O15)
    assert_moves(position, (6, 2), ["20/14"])


@pytest.mark.parametrize("dice, expected", [
    ((6, 6), ["24/18 24/18"]),
    ((4, 4), ["24/20 24/20 20/16 20/16"]),
    ((3, 3), ["24/21 24/21 21/18 21/18", "24/21 24/21 21/18 18/15"]),
    ((5, 5), ["24/19 19/14 14/9 9/4"]),
    ((2, 2), ["24/22 22/20 20/18 18/16"]),
    ((6, 5), ["24/18 18/13"]),
])
def test_narde_first_turn_two_checkers_leave_the_head_only_with_six_six_four_four_or_three_three(dice, expected):
    assert_moves(start_position("narde"), dice, expected)


def test_narde_after_the_first_turn_six_six_lets_only_one_checker_leave_the_head():
    position = board("narde", "24:" + X(14) + " 18:X 12:" + O15)
    assert_moves(position, (6, 6), ["24/18"])
    assert turn_start(position, (6, 6)).may_leave_head == 1
    assert turn_start(start_position("narde"), (6, 6)).may_leave_head == 2


def test_narde_head_rule_counts_the_checkers_that_left_during_this_turn():
    # 24/21 24/23 would take a second checker off the head: not legal; one checker may go on from there.
    position = board("narde", "24:" + X(14) + " 20:X 12:" + O15)
    assert_moves(position, (3, 1), ["24/21 20/19", "24/21 21/20", "20/17 24/23", "20/17 17/16"])


# ------------------------------------------------------------------ 8.4 b: the prime rule

PRIME_BOARD = "24:" + X(9) + " 18:X 17:X 16:X 15:X 14:XX"  # X's 18..14 are O's 6..2; X's 13 is O's 1


def test_prime_rule_six_points_in_a_row_with_every_opposing_checker_behind_them_are_not_allowed():
    position = board("narde", PRIME_BOARD + " 12:" + O15)
    # 14/13 would hold O's points 1..6 with all 15 O checkers behind them.
    assert not is_legal(position, (2, 1), "14/13 24/22")
    assert holds_prime(play_literally(position, "14/13"), "X")
    assert broken_restriction(play_literally(position, "14/13"), "X", turn_start(position, (2, 1))) == "prime"


def test_prime_rule_allows_six_in_a_row_when_an_opposing_checker_is_ahead_of_them():
    # One O checker borne off is ahead of O's points 1..6.
    position = board("narde", PRIME_BOARD + " 12:" + "O" * 14)
    assert is_legal(position, (2, 1), "14/13 24/22")
    # O's points 8..13 (X's 20..24 and 1) with one O on O's 5 (X's 17) ahead of them: allowed.
    run = "24:" + X(10) + " 23:X 22:X 21:X 20:X 2:X "
    assert is_legal(board("narde", run + "17:O 12:" + "O" * 14), (2, 1), "2/1 24/22")
    assert not is_legal(board("narde", run + "12:" + O15), (2, 1), "2/1 24/22")


def test_prime_rule_a_run_across_the_movers_24_and_1_points_is_a_prime():
    # X's 24, 23, 22, 3, 2 and 1 are O's 12, 11, 10, 15, 14, 13: six in a row on O's path, all O behind.
    position = board("fevga", "24:" + X(10) + " 23:X 22:X 4:X 3:X 2:X 6:" + O15)
    assert not is_legal(position, (3, 1), "4/1 24/23")
    assert holds_prime(play_literally(position, "4/1"), "X")
    # With an O checker ahead (on O's 9 = X's 21) it is allowed.
    position = board("fevga", "24:" + X(10) + " 23:X 22:X 4:X 3:X 2:X 21:O 6:" + "O" * 14)
    assert is_legal(position, (3, 1), "4/1 24/23")


def test_prime_rule_a_run_across_the_movers_12_and_13_points_is_not_a_prime():
    # X's 15..10 are O's 3, 2, 1, 24, 23, 22: not six in a row on O's path (its start and its end).
    position = board("narde", "24:" + X(9) + " 16:X 15:X 14:X 13:X 12:X 11:X 9:" + O15)
    assert is_legal(position, (6, 1), "16/10 24/23")
    assert not holds_prime(play_literally(position, "16/10"), "X")


def test_a_step_that_breaks_a_restriction_is_illegal_even_if_the_next_step_would_mend_it():
    # 14/13/11 makes the prime on its first step, and 14/12/11 lands on X's 12, closed by O's checkers.
    position = board("narde", PRIME_BOARD + " 12:" + O15)
    ending = play_literally(position, "14/13 13/11")
    assert not holds_prime(ending, "X")
    assert not is_legal(position, (2, 1), "14/13 13/11")
    unrestricted = position.with_changes(rules=position.rules.replace(prime_rule=False))
    assert is_legal(unrestricted, (2, 1), "14/13 13/11")


# ------------------------------------------------------------------ 8.4 c: the starting quarter

QUARTER = "24:" + X(10) + " 23:X 22:X 21:X 20:X 5:X 14:" + O15  # O on O's 2: ahead of any run of X's


def test_fevga_may_not_hold_all_six_points_of_its_starting_quarter():
    position = board("fevga", QUARTER)
    assert not is_legal(position, (5, 4), "24/19 5/1")
    # 24/19 is legal once a point of 20-23 has been left first.
    assert is_legal(position, (5, 4), "20/16 24/19")
    assert broken_restriction(play_literally(position, "24/19"), "X", turn_start(position, (5, 4))) == "start_quarter"


def test_narde_may_hold_all_six_points_of_its_starting_quarter():
    position = board("narde", QUARTER)
    assert is_legal(position, (5, 4), "24/19 5/1")


def test_every_restriction_has_a_message():
    assert set(RESTRICTIONS) == {"head", "head_double", "runner", "prime", "start_quarter"}


# ------------------------------------------------------------------ 8.5 results

def test_running_game_gammon_when_the_loser_has_borne_off_none():
    move = find_move(board("fevga", "1:X 13:" + O15), (6, 5), "1/off")
    assert move.position.result == GameResult("X", "gammon", 2)


def test_running_game_single_win_when_the_loser_has_borne_off_one():
    move = find_move(board("narde", "1:X 13:" + "O" * 14), (6, 5), "1/off")
    assert move.position.result == GameResult("X", "single", 1)


def test_running_games_have_no_backgammon_even_with_the_loser_in_the_winners_home():
    # O's checkers on X's 1..6 (O's 13..18) do not make it a backgammon: a gammon, 2 points.
    move = find_move(board("fevga", "2:X 3:" + O15), (6, 5), "2/off")
    assert move.position.result == GameResult("X", "gammon", 2)


# ------------------------------------------------------------------ positions as JSON (7, 8.1)

def test_running_game_json_uses_the_absolute_board():
    position = start_position("narde", turn="O")
    data = position_to_json(position)
    assert data["points"][23] == X(15) and data["points"][11] == O15 and data["variant"] == "narde"
    assert position_from_json(data) == position


# ------------------------------------------------------------------ move text and the protocol (2 of the issue)

@pytest.mark.parametrize("variant, layout, dice, text, rule", [
    ("narde", None, (6, 5), "24/18 24/19", "only one checker may leave the head (the 24-point) this turn"),
    ("fevga", None, (6, 5), "24/18 24/19", "a second checker may not leave the 24-point until the first has passed"),
    ("narde", PRIME_BOARD + " 12:" + O15, (2, 1), "14/11", "the prime rule"),
    ("fevga", QUARTER, (5, 4), "24/19 5/1", "all six points of the starting quarter (19-24) may not be held"),
])
def test_a_move_that_breaks_a_restriction_is_refused_naming_the_rule(variant, layout, dice, text, rule):
    from tapa_ai.notation import MoveTextError, broken_rule

    position = board(variant, layout) if layout else start_position(variant)
    with pytest.raises(MoveTextError, match=f"is not a legal move with dice .*: {re.escape(rule)}"):
        find_move(position, dice, text)
    assert broken_rule(position, dice, text).startswith(rule)


def test_a_move_the_dice_cannot_play_names_no_restriction():
    from tapa_ai.notation import broken_rule

    assert broken_rule(start_position("narde"), (6, 5), "24/13 24/19") is None
    assert broken_rule(start_position("plakoto"), (6, 5), "24/18 24/19") is None


def test_the_engine_protocol_plays_the_running_games_and_names_a_broken_rule():
    import json

    from tapa_ai.engine.protocol import Engine

    engine = Engine("reference")
    start = json.loads(engine.handle_line(json.dumps({"cmd": "start", "variant": "narde", "turn": "O"})))
    assert start["position"]["points"][11] == O15 and start["position"]["turn"] == "O" and "bar" not in start["position"]
    answer = json.loads(engine.handle_line(json.dumps({"cmd": "legal_moves", "position": start["position"],
                                                       "dice": [6, 6]})))
    assert [m["move"] for m in answer["moves"]] == ["24/18 24/18"]
    # O's 18 is points[5]: O runs down from points[11] towards points[0] first.
    assert answer["moves"][0]["position"]["points"][5] == "OO"
    error = json.loads(engine.handle_line(json.dumps({"cmd": "apply", "position": start["position"], "dice": [6, 5],
                                                      "move": "24/18 24/19"})))
    assert "only one checker may leave the head" in error["error"]
    bad = dict(start["position"], points=["X"] + start["position"]["points"][1:23] + ["X" * 13 + "O"])
    error = json.loads(engine.handle_line(json.dumps({"cmd": "legal_moves", "position": bad, "dice": [6, 6]})))
    assert "mixes X and O, but narde has no pins" in error["error"]


# ------------------------------------------------------------------ 8.6 the presets and their options

def test_the_running_presets_have_the_options_of_the_rules_table():
    # docs/rules.md 8.6.
    table = {
        "fevga": (((24, 15),), "parallel", "block", "runner", True, False, False, False, "reroll", "winner"),
        "narde": (((24, 15),), "parallel", "block", "head", True, True, False, False, "reroll", "winner"),
    }
    for name, options in table.items():
        rules = variant_rules(name)
        assert (rules.start, rules.paths, rules.contact, rules.start_rule, rules.prime_rule,
                rules.full_start_quarter_allowed, rules.backgammons, rules.cube, rules.opening,
                rules.next_game_opener) == options, name
        assert rules.mother_points == 0 and not rules.crawford and not rules.has_draws
        assert rules.parallel and rules.has_restrictions and not rules.pins and not rules.hits
    for name in ("tapa", "plakoto", "backgammon"):
        rules = variant_rules(name)
        assert (rules.paths, rules.start_rule, rules.prime_rule, rules.full_start_quarter_allowed) == (
            "opposite", "none", False, True)
        assert not rules.parallel and not rules.has_restrictions
    assert variant_rules("backgammon").hits and not variant_rules("tapa").hits


@pytest.mark.parametrize("changes, message", [
    ({"paths": "sideways"}, "paths='sideways': must be one of"),
    ({"start_rule": "bogus"}, "start_rule='bogus': must be one of"),
    ({"paths": "opposite"}, "the running games pair paths='parallel' with contact='block'"),
    ({"contact": "pin"}, "the running games pair"),
    ({"prime_rule": 1}, "prime_rule=1: must be true or false"),
    ({"full_start_quarter_allowed": "no"}, "full_start_quarter_allowed='no': must be true or false"),
    ({"mother_points": 2}, "the mother rules need contact='pin'"),
    ({"start": ((24, 14), (12, 1))}, "point 24 overlaps the other side's point 12"),
])
def test_a_running_rule_set_refuses_options_that_do_not_fit_it(changes, message):
    from tapa_ai.rules import RulesError

    with pytest.raises(RulesError, match=re.escape(message) if "=" in message else message):
        variant_rules("fevga").replace(**changes)


@pytest.mark.parametrize("changes", [{"start_rule": "runner"}, {"prime_rule": True},
                                     {"full_start_quarter_allowed": False}])
def test_the_restrictions_belong_to_the_running_games_only(changes):
    from tapa_ai.rules import RulesError

    with pytest.raises(RulesError, match="restrictions of the running games"):
        variant_rules("plakoto").replace(**changes)


def test_a_rule_set_stored_before_the_running_options_existed_reads_as_the_same_rule_set():
    from tapa_ai.rules import RuleOptions

    for name in ("tapa", "plakoto", "backgammon"):
        old = {k: v for k, v in variant_rules(name).to_dict().items()
               if k not in ("paths", "start_rule", "prime_rule", "full_start_quarter_allowed")}
        assert RuleOptions.from_dict(old) == variant_rules(name)
    for name in ("fevga", "narde"):
        assert RuleOptions.from_dict(variant_rules(name).to_dict()) == variant_rules(name)
    custom = variant_rules("fevga").replace(prime_rule=False)
    assert RuleOptions.from_dict({"variant": "fevga", "prime_rule": False}) == custom


# ------------------------------------------------------------------ found by mutation testing of rules/reference.py

def test_fevga_holding_five_points_of_the_starting_quarter_is_allowed():
    position = board("fevga", QUARTER)  # X holds 24-20; 19 is free
    assert is_legal(position, (5, 4), "24/20 20/15")


def test_fevga_a_runner_on_the_1_point_or_one_checker_off_has_passed_the_opponents_start():
    position = board("fevga", "24:" + X(14) + " 1:X 6:" + O15)
    assert is_legal(position, (2, 1), "24/22 24/23")
    # Hand-written (no game reaches it): a checker borne off and none on 1-11 also counts as passed.
    assert not is_legal(board("fevga", "24:" + X(14) + " 20:X 6:" + O15), (2, 1), "24/22 24/23")
    one_off = board("fevga", "24:" + X(13) + " 20:X 6:" + O15)  # the checker not placed is borne off
    assert one_off.off == (1, 0) and is_legal(one_off, (2, 1), "24/22 24/23")


def test_prime_rule_an_opposing_checker_on_its_1_point_is_ahead_of_the_run():
    # X's 18-14 and 13 would be O's 6..1 — but take O's 7..12 instead (X's 19-24): X holds 24-20, makes 19.
    # O's only checker ahead of the run stands on its 1-point (X's 13): the prime is allowed.
    run = "24:" + X(10) + " 23:X 22:X 21:X 20:X 5:X "
    with_one_ahead = board("narde", run + "13:O 12:" + "O" * 14)
    assert is_legal(with_one_ahead, (5, 4), "24/19 5/1")
    all_behind = board("narde", run + "12:" + O15)
    assert not is_legal(all_behind, (5, 4), "24/19 5/1")
