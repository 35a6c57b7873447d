"""JSON positions, move text and the mini-language: round trips and bad input."""

import json

import pytest

from tapa_ai.notation import board, find_move, format_move, parse_move_text, position_from_json, position_to_json
from tapa_ai.notation.move_text import MoveTextError, Segment
from tapa_ai.rules import PositionError, RulesError, legal_moves, start_position, variant_rules


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_start_position_json_round_trip(variant):
    position = start_position(variant, turn="O")
    data = json.loads(json.dumps(position_to_json(position)))
    assert position_from_json(data) == position
    assert ("bar" in data) == (variant == "backgammon")


def test_tapa_start_position_json_is_the_rules_example():
    data = position_to_json(start_position("tapa"))
    assert data == {
        "variant": "tapa",
        "points": ["OOOOO"] * 3 + [""] * 18 + ["XXXXX"] * 3,
        "off": {"X": 0, "O": 0},
        "turn": "X",
    }


def test_custom_rules_travel_in_the_json_position():
    rules = variant_rules("tapa").replace(mother_points=2, cube=False, crawford=False)
    position = start_position(rules)
    data = position_to_json(position)
    assert data["rules"] == {"mother_points": 2, "cube": False, "crawford": False}
    assert position_from_json(data) == position


def _start_json(**changes):
    data = position_to_json(start_position("tapa"))
    data.update(changes)
    return data


@pytest.mark.parametrize("changes,message", [
    ({"points": ["X"] * 23}, "list of 24"),
    ({"points": ["OOOOO", "OOXOO"] + ["OOOOO"] + [""] * 18 + ["XXXXX"] * 3}, "points[1]"),
    ({"turn": "Y"}, "turn"),
    ({"variant": "chess"}, "unknown variant"),
    ({"off": {"X": 1, "O": 0}}, "16 checkers"),
    ({"off": {"X": -1, "O": 0}}, "off.X"),
    ({"off": {"X": "1", "O": 0}}, "off.X"),
    ({"bar": {"X": 1, "O": 0}}, "no bar"),
    ({"colour": "red"}, "unknown key"),
    ({"rules": {"mother_pints": 2}}, "unknown rule option"),
    ({"result": {"winner": "Z", "kind": "single", "points": 1}}, "winner"),
    ({"points": [3] + [""] * 23}, "points[0]"),
])
def test_bad_json_positions_say_what_is_wrong(changes, message):
    with pytest.raises(PositionError) as error:
        position_from_json(_start_json(**changes))
    assert message in str(error.value)


def test_json_reader_rejects_non_objects_and_bad_text():
    for bad in ([], 3, "not json", '{"variant": "tapa"'):
        with pytest.raises(PositionError):
            position_from_json(bad)
    with pytest.raises(PositionError, match="missing key 'points'"):
        position_from_json({"variant": "tapa", "turn": "X"})


def test_backgammon_position_may_not_hold_pins():
    with pytest.raises(PositionError, match="no pins"):
        board("backgammon", "5:XO")


def test_pin_on_the_pinners_own_24_point_is_impossible():
    # X's 1-point is O's 24-point: O can never land there, so "XO" there cannot happen.
    with pytest.raises(PositionError, match="own 24-point"):
        board("tapa", "1:XO")


def test_wrong_checker_counts_are_rejected():
    with pytest.raises(PositionError, match="16"):
        position_from_json(_start_json(points=["OOOOO"] * 3 + ["X"] + [""] * 17 + ["XXXXX"] * 3))


# ---------------------------------------------------------------- move text

def test_move_text_reads_plain_steps_bar_and_off():
    assert parse_move_text("24/21 23/22") == [Segment(24, 21), Segment(23, 22)]
    assert parse_move_text("bar/22 6/off") == [Segment(25, 22), Segment(6, 0)]
    assert parse_move_text("") == []


def test_move_text_reads_the_usual_shorthands():
    assert parse_move_text("24/18/13") == [Segment(24, 18), Segment(18, 13)]
    assert parse_move_text("13/11(2)") == [Segment(13, 11), Segment(13, 11)]
    assert parse_move_text("13/7*, 8/7") == [Segment(13, 7, hit=True), Segment(8, 7)]


@pytest.mark.parametrize("text", ["24-21", "25/20", "off/3", "3/5", "13/11(5)", "24/", "bar/off/3", "x/y", "7/7",
                                  "1/2 3/4 5/6 7/8 9/10"])
def test_bad_move_text_is_refused_with_a_reason(text):
    with pytest.raises(MoveTextError):
        parse_move_text(text)


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_every_legal_move_text_finds_its_own_move(variant):
    position = start_position(variant)
    for dice in [(6, 5), (3, 1), (4, 4), (2, 1)]:
        for move in legal_moves(position, dice):
            assert find_move(position, dice, format_move(move)).position == move.position


def test_one_checker_over_both_dice_may_be_written_as_one_jump():
    position = start_position("backgammon")
    assert find_move(position, (6, 5), "24/13").position == find_move(position, (6, 5), "24/18 18/13").position
    assert find_move(position, (6, 5), "24/18/13").position == find_move(position, (6, 5), "24/18 18/13").position


def test_repeat_count_plays_doubles():
    position = start_position("backgammon")
    assert find_move(position, (3, 3), "8/5(2) 6/3(2)").position == find_move(
        position, (3, 3), "8/5 8/5 6/3 6/3").position


def test_steps_may_be_written_in_another_order():
    position = board("backgammon", "bar:X 13:X 24:OO")
    assert find_move(position, (6, 1), "13/12 bar/19").position == find_move(position, (6, 1), "bar/19 13/12").position


def test_illegal_move_text_lists_the_legal_moves():
    position = start_position("plakoto")
    with pytest.raises(MoveTextError, match="legal moves: '24/18 24/19', '24/18 18/13'"):
        find_move(position, (6, 5), "24/20 24/19")


def test_pass_is_an_empty_move_only_when_nothing_can_be_played():
    blocked = board("tapa", "20:X 17:OO 15:OO")
    assert find_move(blocked, (5, 3), "").steps == ()
    with pytest.raises(MoveTextError, match="pass"):
        find_move(start_position("tapa"), (5, 3), "")


def test_move_text_of_a_partial_play_is_refused_when_more_dice_can_be_played():
    with pytest.raises(MoveTextError, match="not a legal move"):
        find_move(start_position("tapa"), (5, 3), "24/19")


def test_mini_language_rejects_bad_tokens():
    with pytest.raises(PositionError):
        board("tapa", "25:X")
    with pytest.raises(PositionError):
        board("tapa", "3:" + "X" * 16)
    with pytest.raises(RulesError):
        board("ludo", "3:X")
