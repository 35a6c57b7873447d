"""One test per rule of docs/rules.md, named after the rule, asserting exact move sets or results.

Positions are written in the mini-language of ``tapa_ai.notation.mini``:
``"20:X 17:OX"`` places stacks by X's point number, bottom to top; checkers
not placed are borne off. Unless a test says otherwise X is to move, so X's
point numbers are also the mover's numbers used in move text.
"""

import pytest

from tapa_ai.notation import board, find_move
from tapa_ai.rules import GameResult, legal_moves, next_turn, start_position
from tests.helpers import assert_moves, play_literally


def only_move(position, dice):
    moves = legal_moves(position, dice)
    assert len(moves) == 1
    return moves[0]


# ---------------------------------------------------------------- openings

def test_tapa_opening_plays_both_dice_from_the_three_start_points():
    assert_moves(start_position("tapa"), (5, 2), [
        "24/19 24/22", "24/19 23/21", "24/19 22/20",
        "23/18 24/22", "23/18 23/21", "23/18 22/20",
        "22/17 23/21", "22/17 22/20",
        "24/19 19/17", "23/18 18/16", "22/17 17/15",
    ])


def test_tapa_opening_for_o_is_written_from_os_own_view():
    assert_moves(start_position("tapa", turn="O"), (5, 2), [
        "24/19 24/22", "24/19 23/21", "24/19 22/20",
        "23/18 24/22", "23/18 23/21", "23/18 22/20",
        "22/17 23/21", "22/17 22/20",
        "24/19 19/17", "23/18 18/16", "22/17 17/15",
    ])


def test_plakoto_opening_moves_from_the_single_start_point():
    assert_moves(start_position("plakoto"), (6, 5), ["24/18 24/19", "24/18 18/13"])


def test_backgammon_opening_six_five():
    assert_moves(start_position("backgammon"), (6, 5), [
        "24/18 18/13", "13/7 7/2", "13/7 13/8", "13/7 8/3", "24/18 13/8", "24/18 8/3", "8/2 8/3",
    ])


# ---------------------------------------------------------- shared movement

def test_both_dice_must_be_played_when_possible():
    # 14/8 alone would leave the 2 unplayable (8/6 and 20/18 closed): not legal.
    position = board("tapa", "20:X 14:X 18:OO 6:OO")
    assert_moves(position, (6, 2), ["20/14 14/12"])


def test_higher_die_must_be_played_when_only_one_can():
    position = board("tapa", "14:X 6:OO 23:OO")
    assert_moves(position, (6, 2), ["14/8"])


def test_lower_die_is_played_when_the_higher_cannot_be():
    position = board("tapa", "14:X 8:OO 6:OO 23:OO")
    assert_moves(position, (6, 2), ["14/12"])


def test_doubles_give_four_moves():
    position = board("tapa", "20:X 23:OO")
    assert_moves(position, (3, 3), ["20/17 17/14 14/11 11/8"])


def test_doubles_play_as_many_of_the_four_as_possible():
    position = board("tapa", "20:X 11:OO")
    assert_moves(position, (3, 3), ["20/17 17/14"])


def test_doubles_spread_over_several_checkers():
    # Fours: 10/6 and 9/5 are closed, so nothing moves.
    assert_moves(board("plakoto", "10:X 9:X 2:OO 3:OO 4:OO 5:OO 6:OO"), (4, 4), [""])
    # Ones: the checkers share four steps; {10,5}, {9,6} and {8,7} are the distinct results.
    assert_moves(board("plakoto", "10:X 9:X 23:OO"), (1, 1), [
        "9/8 8/7 7/6 6/5", "10/9 9/8 8/7 7/6", "10/9 9/8 9/8 8/7",
    ])


def test_intermediate_point_must_be_open_for_a_checker_using_both_dice():
    # 20/15/12 is blocked at 15; only 20/17/12 remains.
    position = board("tapa", "20:X 15:OO")
    assert_moves(position, (5, 3), ["20/17 17/12"])


def test_no_legal_step_passes_the_turn():
    position = board("tapa", "20:X 17:OO 15:OO")
    moves = legal_moves(position, (5, 3))
    assert len(moves) == 1 and moves[0].steps == () and moves[0].position == position


def test_two_sequences_reaching_the_same_position_are_one_move():
    position = board("plakoto", "20:X 19:X 23:OO")
    moves = legal_moves(position, (2, 1))
    # Six orders of play reach only three positions.
    assert len(moves) == 3
    assert_moves(position, (2, 1), ["20/18 19/18", "20/18 18/17", "19/17 17/16"])


# ---------------------------------------------------------- pins and landing

def test_landing_on_a_lone_opposing_checker_pins_it():
    position = board("tapa", "20:X 17:O 16:OO 14:OO")
    move = only_move(position, (3, 1))
    assert move.position.points[16] == "OX"


def test_two_opposing_checkers_close_a_point():
    assert_moves(board("tapa", "20:X 17:OO"), (3, 3), [""])


def test_point_where_an_opposing_checker_pins_mine_is_closed():
    assert_moves(board("tapa", "20:X 17:XO"), (3, 3), [""])


def test_point_where_my_checker_pins_is_open_to_me():
    position = board("tapa", "20:X 17:OX 19:OO 16:OO 14:OO")
    move = only_move(position, (3, 1))
    assert move.position.points[16] == "OXX"
    assert_moves(position, (3, 1), ["20/17"])


def test_pinned_checker_cannot_move():
    assert_moves(board("tapa", "17:XO 10:X"), (3, 3), ["10/7 7/4 4/1"])


def test_pin_made_on_the_way_is_released_when_the_checker_moves_on():
    position = board("tapa", "20:X 17:O")
    assert_moves(position, (3, 2), ["20/17 17/15"])
    after = legal_moves(position, (3, 2))[0].position
    assert after.points[16] == "O" and after.points[14] == "X"


def test_pinned_checker_is_free_once_the_pinner_leaves():
    # O pins X on X's 17 (O's 8). O moves that checker away; X can then move it.
    position = board("tapa", "17:XO 20:OO", turn="O")
    released = find_move(position, (3, 1), "8/5 5/4").position
    assert released.points[16] == "X"
    x_to_move = next_turn(released)
    assert_moves(x_to_move, (2, 1), ["17/15 15/14"])


# ------------------------------------------------------------- bearing off

def test_bear_off_with_the_exact_die():
    assert_moves(board("tapa", "6:X 5:X 4:X 13:OO"), (6, 5), ["6/off 5/off", "6/1 5/off"])


def test_bear_off_with_a_larger_die_from_the_highest_point():
    position = board("tapa", "4:X 3:X 13:OO")
    move = only_move(position, (6, 5))
    assert move.position == play_literally(position, "4/off 3/off")
    assert move.position.result == GameResult("X", "single", 1)


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_no_bearing_off_while_a_checker_is_outside_home(variant):
    assert_moves(board(variant, "8:X 2:X 13:OO"), (2, 1), ["8/6 6/5", "8/6 2/1"])


def test_pinned_checker_outside_home_prevents_bearing_off():
    assert_moves(board("tapa", "10:XO 2:X 1:X 13:OO"), (2, 1), ["2/1"])


def test_pinned_checker_inside_home_does_not_prevent_bearing_off():
    # 3/off is exact; after 3/2 the 3 cannot bear off from 2 over the pinned checker on 5.
    assert_moves(board("tapa", "5:XO 3:X 13:OO"), (3, 1), ["3/off"])


def test_pinned_checker_on_a_higher_point_blocks_bearing_off_with_a_larger_die():
    assert_moves(board("tapa", "5:XO 2:X 13:OO"), (6, 4), [""])


def test_pinned_checker_is_never_borne_off():
    assert_moves(board("tapa", "6:XO 3:X 13:OO"), (6, 6), [""])


def test_moving_inside_home_is_allowed_instead_of_bearing_off():
    assert_moves(board("tapa", "6:X 5:X 13:OO"), (4, 1), ["6/2 5/4", "6/2 2/1", "5/1 1/off"])


# --------------------------------------------------------------- the mother

def test_pinning_the_mother_wins_at_once_when_the_pinner_has_no_checker_on_its_24_point():
    position = board("tapa", "3:X 20:XX 1:O 13:OOOO")
    assert_moves(position, (2, 1), ["3/1", "20/18 20/19", "20/18 18/17", "20/18 3/2", "20/19 3/1"])
    win = next(m for m in legal_moves(position, (2, 1)) if len(m.steps) == 1)
    assert win.position.result == GameResult("X", "mother", 3)


def test_game_ending_step_ends_the_turn_and_counts_as_using_all_dice():
    # 3/1 pins the mother with the 2: the game is over and the 1 is never played,
    # yet 3/1 is legal beside the moves that play both dice.
    position = board("tapa", "3:X 20:XX 1:O 13:OOOO")
    moves = {len(m.steps): m for m in legal_moves(position, (2, 1)) if m.position.result}
    assert moves[1].steps[0].die == 2 and moves[1].position.result.kind == "mother"


def test_pinning_the_mother_while_the_pinner_keeps_checkers_on_its_24_point_play_goes_on():
    position = board("tapa", "24:XX 3:X 1:O 13:OOOO")
    assert_moves(position, (2, 1), ["24/22 24/23", "24/22 22/21", "24/22 3/2", "3/1 24/23"])
    assert all(m.position.result is None for m in legal_moves(position, (2, 1)))


def test_mother_win_when_the_pinners_last_checker_leaves_its_24_point():
    position = board("tapa", "24:X 10:X 1:OX 13:OO")
    assert_moves(position, (3, 1), ["24/21", "24/23", "10/7 24/23", "10/9 24/21", "10/7 7/6"])
    results = {m.steps[-1].from_point: m.position.result for m in legal_moves(position, (3, 1))}
    assert results[24] == GameResult("X", "mother", 3)
    assert results[7] is None


def test_both_mothers_pinned_is_a_draw():
    position = board("tapa", "24:XO 3:X 20:XX 1:O 13:OOO")
    assert_moves(position, (2, 1), ["3/1", "20/18 20/19", "20/18 18/17", "20/18 3/2", "20/19 3/1"])
    draws = [m.position.result for m in legal_moves(position, (2, 1)) if m.position.result]
    assert draws == [GameResult(None, "draw", 0)] * 2


@pytest.mark.parametrize("variant,points", [("tapa", 3), ("plakoto", 2)])
def test_mother_win_is_worth_the_variants_mother_points(variant, points):
    position = board(variant, "3:X 20:XX 1:O 13:OOOO")
    win = next(m for m in legal_moves(position, (2, 1)) if len(m.steps) == 1)
    assert win.position.result == GameResult("X", "mother", points)


# ----------------------------------------------------------------- results

@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_single_win_when_the_loser_has_borne_off(variant):
    move = only_move(board(variant, "1:X 13:OO"), (6, 5))
    assert move.position.result == GameResult("X", "single", 1)


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_gammon_when_the_loser_has_borne_off_none(variant):
    move = only_move(board(variant, "1:X 13:" + "O" * 15), (6, 5))
    assert move.position.result == GameResult("X", "gammon", 2)


@pytest.mark.parametrize("variant,result", [
    ("tapa", GameResult("X", "backgammon", 3)),
    ("plakoto", GameResult("X", "gammon", 2)),
    ("backgammon", GameResult("X", "backgammon", 3)),
])
def test_backgammon_when_the_loser_still_has_a_checker_in_the_winners_home(variant, result):
    move = only_move(board(variant, "1:X 3:O 13:" + "O" * 14), (6, 5))
    assert move.position.result == result


def test_loser_checker_released_in_the_winners_home_counts_for_a_backgammon():
    # X's last checker pins an O on X's 4; bearing it off frees the O, which is
    # still in X's home board when the game ends.
    position = board("tapa", "4:OX 13:" + "O" * 14)
    move = only_move(position, (6, 5))
    assert move.position.result == GameResult("X", "backgammon", 3)


def test_backgammon_when_the_loser_has_a_checker_on_the_bar():
    move = only_move(board("backgammon", "1:X bar:O 13:" + "O" * 14), (6, 5))
    assert move.position.result == GameResult("X", "backgammon", 3)


# --------------------------------------------------------------- backgammon

def test_landing_on_a_blot_hits_it_to_the_bar():
    position = board("backgammon", "13:X 10:O 20:" + "O" * 14)
    assert_moves(position, (3, 1), ["13/10 10/9", "13/12 12/9"])
    hit = find_move(position, (3, 1), "13/10 10/9").position
    assert hit.bar == (0, 1) and hit.points[9] == ""


def test_checker_on_the_bar_must_enter_before_any_other_moves():
    position = board("backgammon", "bar:X 13:X 24:OO")
    assert_moves(position, (6, 1), ["bar/19 19/18", "bar/19 13/12"])


def test_no_entry_on_closed_points_passes_the_turn():
    assert_moves(board("backgammon", "bar:X 13:X 24:OO 19:OO"), (6, 1), [""])


def test_all_checkers_on_the_bar_enter_before_the_rest_may_move():
    assert_moves(board("backgammon", "bar:XX 13:X 24:OO"), (6, 1), ["bar/19"])


def test_entering_hits_a_blot_in_the_opponents_home():
    position = board("backgammon", "bar:X 13:X 22:O 19:OO 20:OO 21:OO 23:OO 24:OO")
    move = only_move(position, (3, 3))
    assert move.position.bar == (0, 1)
    assert move.position == play_literally(position, "bar/22 13/10 10/7 7/4")


def test_hit_checker_must_come_home_before_bearing_off_resumes():
    # With a checker on the bar X cannot bear off, even after entering with one die.
    position = board("backgammon", "bar:X 1:X 13:" + "O" * 15)
    assert_moves(position, (6, 1), ["bar/19 19/18"])


# ------------------------------------------------- found by mutation testing
# Each test below fails on a mutant of tapa_ai/rules/reference.py that the rest
# of the rules tests let through (docs/mutation-testing.md).

def test_the_21_distinct_rolls_stand_for_the_36_rolls_of_two_dice():
    from collections import Counter
    from itertools import product

    from tapa_ai.rules.rolls import DISTINCT_ROLLS

    counts = Counter(tuple(sorted(roll)) for roll in product(range(1, 7), repeat=2))
    assert {(a, b): count for a, b, count in DISTINCT_ROLLS} == counts
    assert len(DISTINCT_ROLLS) == 21


@pytest.mark.parametrize("dice", [(7, 1), (0, 3), (6, 7), (1, 2, 3), (4,), (True, 2), (2.0, 3), 5, "12"])
def test_dice_are_two_integers_from_one_to_six(dice):
    from tapa_ai.rules import RulesError

    with pytest.raises(RulesError):
        legal_moves(start_position("tapa"), dice)


def test_a_checker_on_the_seven_point_is_outside_home():
    # The 6 cannot play 7/1 (closed) nor bear off 3 while 7 is outside; the 3 brings it home first.
    assert_moves(board("tapa", "7:X 3:X 1:OO 13:OO"), (6, 3), ["7/4 4/off"])


def test_a_larger_die_bears_off_only_from_the_highest_point_even_when_the_next_point_up_holds_the_checker():
    # The 6 may not bear off from 4 while 5 holds a checker: 4/off 4/3 is not legal.
    assert_moves(board("tapa", "5:X 4:XX 13:OO"), (6, 1), ["5/4 4/off", "5/off 4/3"])


def test_doubles_that_end_the_game_on_any_step_stand_beside_the_moves_that_play_all_four():
    position = board("tapa", "3:X 10:X 1:O 13:OOOO")
    assert_moves(position, (2, 2), [
        "3/1", "10/8 3/1", "10/8 8/6 3/1", "10/8 8/6 6/4 3/1", "10/8 8/6 6/4 4/2",
    ])
    results = {len(m.steps): m.position.result for m in legal_moves(position, (2, 2)) if m.position.result}
    assert results == {n: GameResult("X", "mother", 3) for n in (1, 2, 3, 4)}


@pytest.mark.parametrize("turn", ["X", "O"])
def test_a_finished_game_has_no_legal_moves(turn):
    from tapa_ai.rules import PositionError

    # X has borne off all 15: the game is over whoever is written as to move.
    with pytest.raises(PositionError, match="already over"):
        legal_moves(board("tapa", "13:OO", turn=turn), (2, 1))


def test_single_win_when_the_loser_has_borne_off_exactly_one_checker():
    move = only_move(board("tapa", "1:X 13:" + "O" * 14), (6, 5))
    assert move.position.result == GameResult("X", "single", 1)


def test_backgammon_when_the_loser_has_a_checker_on_the_winners_one_point():
    move = only_move(board("backgammon", "2:X 1:O 13:" + "O" * 14), (6, 5))
    assert move.position.result == GameResult("X", "backgammon", 3)


def test_gammon_not_backgammon_when_the_losers_nearest_checker_is_on_the_winners_seven_point():
    move = only_move(board("backgammon", "1:X 7:O 13:" + "O" * 14), (6, 5))
    assert move.position.result == GameResult("X", "gammon", 2)


def test_without_the_mother_rule_pinning_the_mother_does_not_end_the_game():
    from tapa_ai.rules import variant_rules

    position = board(variant_rules("tapa").replace(mother_points=0), "3:X 20:XX 1:O 13:OOOO")
    assert_moves(position, (2, 1), ["3/1 20/19", "20/18 18/17", "20/18 20/19", "20/18 3/2"])
    assert all(m.position.result is None for m in legal_moves(position, (2, 1)))


def test_a_checker_on_the_bar_is_not_home():
    # legal_moves enters from the bar before it asks; the explanations of illegal moves
    # (tapa_ai/play/moves.py) ask directly.
    from tapa_ai.rules.reference import all_checkers_home

    assert not all_checkers_home(board("backgammon", "bar:X 1:X 13:" + "O" * 15), "X")
    assert all_checkers_home(board("backgammon", "1:X 13:" + "O" * 15), "X")


# Found by mutation testing of tapa_ai/rules/position.py.

@pytest.mark.parametrize("stack", ["XXO", "OOX", "XOX"])
def test_a_pin_is_one_checker_at_the_bottom_under_checkers_of_the_other_side_only(stack):
    from tapa_ai.rules import PositionError

    with pytest.raises(PositionError, match="not a legal stack"):
        board("tapa", f"10:{stack}")


@pytest.mark.parametrize("field, counts", [
    ("off", (15, -1)), ("bar", (-1, 0)), ("off", (True, 14)), ("bar", (0.0, 0)), ("off", (14, 14, 0)),
])
def test_borne_off_and_bar_counts_are_two_non_negative_integers(field, counts):
    from tapa_ai.rules import PositionError, validate_position

    position = board("backgammon", "1:X 13:" + "O" * 15).with_changes(**{field: counts})
    with pytest.raises(PositionError, match=f"{field}: must be two non-negative integers"):
        validate_position(position)


@pytest.mark.parametrize("variant, pips", [("tapa", 345), ("plakoto", 360), ("backgammon", 167)])
def test_pip_count_of_the_start_positions(variant, pips):
    position = start_position(variant)
    assert (position.pip_count("X"), position.pip_count("O")) == (pips, pips)


def test_pip_count_counts_the_bar_as_25_and_each_side_from_its_own_view():
    position = board("backgammon", "bar:X 2:XX 13:" + "O" * 15)
    assert (position.pip_count("X"), position.pip_count("O")) == (25 + 2 + 2, 15 * 12)


def test_occupied_points_are_each_sides_own_points_highest_first_pinned_ones_included():
    position = board("tapa", "20:X 17:OX 3:XO 5:O 1:X 24:O")
    assert list(position.occupied_points("X")) == [20, 17, 3, 1]
    assert list(position.occupied_points("O")) == [22, 20, 8, 1]
    assert (position.pip_count("X"), position.pip_count("O")) == (41, 51)


# Found by mutation testing of tapa_ai/rules/options.py.

def test_the_three_presets_have_the_options_of_the_rules_table():
    from tapa_ai.rules import variant_rules

    # docs/rules.md, "Rule options and variants".
    table = {
        "tapa": ("pin", 3, True, True, True, "use-opening-dice", "opening-roll"),
        "plakoto": ("pin", 2, False, False, False, "reroll", "winner"),
        "backgammon": ("hit", 0, True, True, True, "use-opening-dice", "opening-roll"),
    }
    for name, options in table.items():
        rules = variant_rules(name)
        assert (rules.contact, rules.mother_points, rules.backgammons, rules.cube, rules.crawford, rules.opening,
                rules.next_game_opener) == options, name


@pytest.mark.parametrize("change, message", [
    ({"name": ""}, "name=''"), ({"name": 3}, "name=3"),
    ({"mother_points": True}, "mother_points=True"), ({"mother_points": -1}, "mother_points=-1"),
    ({"mother_points": 1.5}, "mother_points=1.5"),
])
def test_a_rule_set_has_a_non_empty_name_and_a_whole_number_of_mother_points(change, message):
    from tapa_ai.rules import RulesError, variant_rules

    with pytest.raises(RulesError, match=f"rule option {message}"):
        variant_rules("tapa").replace(**change)


@pytest.mark.parametrize("start, message", [
    (((25, 10), (24, 5)), "point 25 must be a distinct integer 1..24"),
    (((24, 10), (0, 5)), "point 0 must be a distinct integer 1..24"),
    (((24, 10), (-3, 5)), "point -3 must be"),
    ([(24, 10), (24, 5)], "point 24 must be a distinct integer"),
    (((24, 16), (23, -1)), "count -1 on point 23 must be a positive integer"),
    (((24, 15), (23, 0)), "count 0 on point 23 must be a positive integer"),
])
def test_a_start_places_positive_counts_on_distinct_points_from_1_to_24(start, message):
    from tapa_ai.rules import RulesError, variant_rules

    with pytest.raises(RulesError, match=message):
        variant_rules("tapa").replace(start=start)


def test_a_start_may_use_points_1_and_24_and_a_single_checker():
    from tapa_ai.rules import variant_rules

    for variant in ("tapa", "backgammon"):
        assert variant_rules(variant).replace(start=((24, 14), (2, 1))).start == ((24, 14), (2, 1))
        assert variant_rules(variant).replace(start=((23, 14), (1, 1))).start == ((23, 14), (1, 1))


def test_in_a_hitting_game_no_start_point_may_be_the_other_sides_start_point():
    from tapa_ai.rules import RulesError, variant_rules

    # X's 1-point is O's 24-point: with hitting, the two sides would start on one point.
    with pytest.raises(RulesError, match="point 24 overlaps the other side's point 1"):
        variant_rules("backgammon").replace(start=((24, 2), (1, 13)))
    with pytest.raises(RulesError, match="point 13 overlaps the other side's point 12"):
        variant_rules("backgammon").replace(start=((13, 5), (12, 10)))


def test_draws_exist_only_with_the_mother_rules():
    from tapa_ai.rules import variant_rules

    tapa = variant_rules("tapa")
    assert tapa.has_draws and variant_rules("plakoto").has_draws and not variant_rules("backgammon").has_draws
    assert tapa.replace(mother_points=1).has_draws and not tapa.replace(mother_points=0).has_draws


def test_rule_options_from_json_are_a_variant_with_changes_or_a_full_set():
    from tapa_ai.rules import RuleOptions, RulesError, variant_rules

    tapa = variant_rules("tapa")
    assert RuleOptions.from_dict({"variant": "tapa", "cube": False, "crawford": False}) == tapa.replace(
        cube=False, crawford=False)
    assert RuleOptions.from_dict(tapa.to_dict()) == tapa
    assert RuleOptions.from_dict(variant_rules("backgammon").to_dict()) == variant_rules("backgammon")
    with pytest.raises(RulesError, match="must be a JSON object, got list"):
        RuleOptions.from_dict([("variant", "tapa")])
    data = tapa.to_dict()
    del data["opening"]
    with pytest.raises(RulesError, match=r"missing \['opening'\]"):
        RuleOptions.from_dict(data)
    with pytest.raises(RulesError, match=r"unknown rule option\(s\) \['moter'\]"):
        RuleOptions.from_dict({**tapa.to_dict(), "moter": 3})


def test_a_start_is_kept_highest_point_first_however_it_is_given():
    from tapa_ai.rules import variant_rules

    tapa = variant_rules("tapa")
    assert tapa.replace(start={"22": 5, "23": 5, "24": 5}) == tapa
    assert tapa.replace(start=[(22, 5), (24, 5), (23, 5)]).start == ((24, 5), (23, 5), (22, 5))


def test_a_roll_gives_both_numbers_and_a_double_four_times():
    """docs/rules.md 2: the plan of a roll, the one place the callers (reference generator, move text, the terminal
    board, the differential report) ask how many numbers a roll gives."""
    from tapa_ai.rules.reference import dice_orders
    from tapa_ai.rules.rolls import ORDERED_ROLLS, ROLL_WEIGHTS, ROLLS, is_double, roll_steps

    assert roll_steps((5, 2)) == (5, 2) and roll_steps((2, 5)) == (2, 5)
    assert roll_steps((3, 3)) == (3, 3, 3, 3) and is_double((3, 3)) and not is_double((3, 4))
    assert dice_orders((5, 2)) == [(5, 2), (2, 5)] and dice_orders((2, 5)) == [(5, 2), (2, 5)]
    assert dice_orders((6, 6)) == [(6, 6, 6, 6)]
    assert ROLLS.shape == (21, 2) and abs(ROLL_WEIGHTS.sum() - 1.0) < 1e-12 and ORDERED_ROLLS.shape == (36, 2)
    # Every ordered roll is one of the distinct ones, each distinct roll weighs its share of the 36.
    counts = {}
    for a, b in ORDERED_ROLLS.tolist():
        counts[tuple(sorted((a, b)))] = counts.get(tuple(sorted((a, b))), 0) + 1
    assert {tuple(r): round(w * 36) for r, w in zip(ROLLS.tolist(), ROLL_WEIGHTS)} == counts
    from tapa_ai.rules.rolls import ROLL_INDEX

    for a, b in ORDERED_ROLLS.tolist():  # each ordered roll's row of ROLLS, either order
        assert sorted(ROLLS[ROLL_INDEX[a, b]].tolist()) == sorted((a, b))
