"""One test per rule of docs/rules.md 10.2-10.3 (Gul Bara's cascading doubles), asserting exact move sets or states.

Gul Bara is a running game (8.1: O's own point ``q`` is X's ``q + 12`` for ``q <= 12``, ``q - 12`` above), so
positions are written in the mini-language by X's point number, as in ``tests/test_running_rules.py``. The preset
is ``tapa_ai.rules.options.GULBARA`` (not yet a registered variant); its option variants come from
``GULBARA.replace(...)``. Each afterstate is checked as (board, off, result) plus the next decision it carries
(``next``, ``turns``, ``cascade``).
"""

from __future__ import annotations

import pytest

from tapa_ai.notation import board, format_move, position_from_json, position_to_json
from tapa_ai.rules import legal_moves, next_turn, start_position
from tapa_ai.rules import options as options_module
from tapa_ai.rules.options import GULBARA, RulesError
from tapa_ai.rules.position import GameResult, Position, PositionError, validate_position
from tapa_ai.rules.turns import Cascade
from tests.helpers import play_literally

OPPONENT = GULBARA.replace(cascade_remainder="opponent")


def X(n):
    return "X" * n


def O(n):
    return "O" * n


def gul(layout: str, turn: str = "X", turns=(0, 0), cascade=None, rules=GULBARA) -> Position:
    position = board(rules, layout, turn).with_changes(turns=tuple(turns), cascade=cascade)
    validate_position(position)
    return position


def state(position: Position) -> tuple:
    return (position.points, position.off, position.result)


def decision(position: Position) -> tuple:
    return (position.next, position.turns, position.cascade)


def stage(position: Position, dice=None) -> dict:
    """{(board, off, result): (next, turns, cascade)} of every legal move."""
    moves = legal_moves(position, dice)
    out = {state(m.position): decision(m.position) for m in moves}
    assert len(out) == len(moves), "an afterstate listed twice"
    assert all(m.position.turn == position.turn for m in moves), "an afterstate's turn is not the mover"
    return out


def assert_stage(position: Position, dice, expected: dict) -> dict:
    """The legal moves are exactly the move texts of ``expected`` (by resulting board), each with its decision
    (``expected`` maps text -> (next, turns, cascade))."""
    wanted = {state(play_literally(position, text)): (text, nxt) for text, nxt in expected.items()}
    assert len(wanted) == len(expected), "expected move texts reach the same board twice"
    got = stage(position, dice)
    missing = [text for key, (text, _) in wanted.items() if key not in got]
    extra = [key for key in got if key not in wanted]
    assert not missing and not extra, f"dice {dice}: missing {missing}, unexpected {extra}"
    for key, (text, nxt) in wanted.items():
        assert got[key] == nxt, f"{text!r}: next decision {got[key]}, expected {nxt}"
    return got


def play(position: Position, dice, text: str) -> Position:
    """Play the legal move ``text`` (by its resulting board) and hand over with ``next_turn``."""
    target = state(play_literally(position, text))
    for move in legal_moves(position, dice):
        if state(move.position) == target:
            return move.position
    raise AssertionError(f"{text!r} is not legal for dice {dice}: legal {[format_move(m) for m in legal_moves(position, dice)]}")


START = "24:" + X(15) + " 12:" + O(15)  # X's 24-point, and O's own 24-point (X's 12)

# From the start, four 4s: X's 12-point is O's head, so a checker goes at most 24/20/16.
START_FOURS = ["24/20 24/20 24/20 24/20", "24/20 24/20 24/20 20/16", "24/20 20/16 24/20 20/16"]


# ------------------------------------------------------------------ 10.2 plain doubles in the first turns

def test_a_double_is_plain_in_each_sides_first_three_turns():
    # X's first turn (the opening turn counts): four 4s, then O rolls; X's count goes to 1.
    assert_stage(gul(START), (4, 4), {text: ("O", (1, 0), None) for text in START_FOURS})
    # X's third turn (two begun): still plain.
    assert_stage(gul(START, turns=(2, 0)), (4, 4), {text: ("O", (3, 0), None) for text in START_FOURS})


def test_the_plain_turns_are_counted_for_each_side_separately():
    # O has begun three turns, X two: X's double is still plain, O's cascades.
    x_moves = stage(gul(START, turns=(2, 3)), (4, 4))
    assert set(x_moves.values()) == {("O", (3, 3), None)}
    o_moves = stage(gul(START, turn="O", turns=(2, 3)), (4, 4))
    assert set(o_moves.values()) == {("O", (2, 3), Cascade(5, 4, False))}


def test_the_opening_turn_is_one_of_the_plain_turns_and_each_roll_counts_one():
    position = gul(START)
    history = []
    # X opens; the sides alternate. X's 2-2 in its 2nd and 3rd turns is plain; in its 4th it cascades.
    for dice in [(3, 1), (2, 1), (2, 2), (2, 1), (2, 2), (2, 1), (2, 2)]:
        after = legal_moves(position, dice)[0].position
        history.append(decision(after))
        position = next_turn(after)
    assert history == [
        ("O", (1, 0), None),
        ("X", (1, 1), None),
        ("O", (2, 1), None),
        ("X", (2, 2), None),
        ("O", (3, 2), None),
        ("X", (3, 3), None),
        ("X", (3, 3), Cascade(3, 4, False)),  # X's fourth turn: 2-2 cascades
    ]


def test_turn_counts_stop_at_plain_double_turns():
    moves = stage(gul(START, turns=(3, 3)), (2, 1))
    assert set(moves.values()) == {("O", (3, 3), None)}


def test_with_no_plain_turns_the_first_double_cascades():
    rules = GULBARA.replace(plain_double_turns=0)
    moves = stage(gul(START, rules=rules), (4, 4))
    assert len(moves) == 3 and set(moves.values()) == {("X", (0, 0), Cascade(5, 4, False))}


# ------------------------------------------------------------------ 10.2 the cascade's stages

def test_a_cascading_double_plays_stages_d_to_6_in_order():
    position = gul(START, turns=(3, 1))
    first = assert_stage(position, (4, 4), {text: ("X", (3, 1), Cascade(5, 4, False)) for text in START_FOURS})
    assert len(first) == 3
    # 24/20(4), then the stage of 5s: 24/19 or 20/15 for each step (19 -> 14, 15 -> 10 open too).
    after = next_turn(play(position, (4, 4), "24/20 24/20 24/20 24/20"))
    assert (after.turn, after.cascade) == ("X", Cascade(5, 4, False))
    fives = stage(after)
    assert fives and set(fives.values()) == {("X", (3, 1), Cascade(6, 4, False))}
    assert stage(after, (5, 5)) == fives  # a protocol may name the stage [5, 5]
    after = next_turn(play(after, None, "24/19 24/19 24/19 24/19"))
    sixes = stage(after)
    assert sixes and set(sixes.values()) == {("O", (3, 1), None)}  # stage 6 ends the turn; O rolls
    after = next_turn(play(after, None, "24/18 24/18 24/18 24/18"))
    assert (after.turn, after.cascade, after.turns) == ("O", None, (3, 1))


def test_one_one_cascades_to_twenty_four_steps():
    position = gul(START, turns=(3, 0))
    dice = (1, 1)
    numbers = []
    for expected_number in range(1, 7):
        moves = legal_moves(position, dice)
        move = moves[0]
        assert len(move.steps) == 4
        numbers.extend(step.die for step in move.steps)
        after = move.position
        if expected_number < 6:
            assert decision(after) == ("X", (3, 0), Cascade(expected_number + 1, 4, False))
        else:
            assert decision(after) == ("O", (3, 0), None)
        position, dice = next_turn(after), None
    assert numbers == [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4 + [6] * 4  # 24 steps, 84 pips


def test_six_six_cascades_to_a_single_stage():
    # 24/18 four times (18/12 is O's head); then the turn passes: there is no stage after 6.
    assert_stage(gul(START, turns=(3, 0)), (6, 6), {"24/18 24/18 24/18 24/18": ("O", (3, 0), None)})


def test_the_maximum_use_rule_applies_inside_a_stage():
    # Pending stage of 5s: 24/19 is closed (O on its 7 = X's 19), 14/9 is open, 9/4 closed (O's 16 = X's 4).
    # One step is the most: 14/9 is the only move.
    position = gul("24:" + X(14) + " 14:X 19:" + O(14) + " 4:O", turns=(3, 1), cascade=Cascade(5, 4))
    assert_stage(position, None, {"14/9": ("O", (3, 1), None)})
    # ... and with three 3s left to play of a stage, every move plays all three (not one, not two).
    position = gul("24:" + X(13) + " 14:XX 19:" + O(14) + " 4:O", turns=(3, 1), cascade=Cascade(3, 3))
    moves = legal_moves(position)
    assert moves and all(len(m.steps) == 3 for m in moves)


def test_later_stages_do_not_limit_the_choice_in_the_present_one():
    # Stage of 5s: 24/19 four times leaves no 6 to play (19/13 and 24/18 are closed by O), yet it is legal
    # beside the moves that keep a 6 playable (docs/rules.md 10.2 Decision: stage by stage).
    layout = "24:" + X(15) + " 13:" + O(2) + " 18:" + O(2) + " 12:" + O(11)
    position = gul(layout, turns=(3, 0), cascade=Cascade(5, 4))
    fives = stage(position)
    blocked = state(play_literally(position, "24/19 24/19 24/19 24/19"))
    assert blocked in fives and fives[blocked] == ("X", (3, 0), Cascade(6, 4, False))
    assert_stage(next_turn(play(position, None, "24/19 24/19 24/19 24/19")), None, {"": ("O", (3, 0), None)})


# ------------------------------------------------------------------ 10.2 a stage not played in full

BLOCKED_FIVES = "24:" + X(14) + " 14:X 19:" + O(14) + " 4:O"  # X can play one 5 (14/9), no more


def test_a_stage_not_played_in_full_with_remainder_lost_passes_the_turn():
    # X's fourth turn, 5-5: one step of the first stage; the other three and the stage of 6s are lost.
    assert_stage(gul(BLOCKED_FIVES, turns=(3, 1)), (5, 5), {"14/9": ("O", (3, 1), None)})
    # the same in a later stage of the cascade
    assert_stage(gul(BLOCKED_FIVES, turns=(3, 1), cascade=Cascade(5, 4)), None, {"14/9": ("O", (3, 1), None)})


def test_a_stage_not_played_at_all_with_remainder_lost_passes_the_turn():
    position = gul("24:" + X(15) + " 19:" + O(15), turns=(3, 0))
    assert_stage(position, (5, 5), {"": ("O", (3, 0), None)})


def test_with_remainder_opponent_the_opponent_plays_the_steps_left_then_the_later_stages_then_rolls():
    position = gul(BLOCKED_FIVES, turns=(3, 1), rules=OPPONENT)
    # X plays one 5 of four: O gets the three left, as a remainder.
    assert_stage(position, (5, 5), {"14/9": ("O", (3, 1), Cascade(5, 3, True))})
    position = next_turn(play(position, (5, 5), "14/9"))
    assert (position.turn, position.cascade) == ("O", Cascade(5, 3, True))
    # O's three 5s: its checker on its 16 (X's 4) runs 0-3 steps, the rest are 7/2 (X's 19 -> X's 14, now
    # empty). Played in full, so O goes on with X's stage of 6s, still a remainder.
    then = ("O", (3, 1), Cascade(6, 4, True))
    assert_stage(position, None, {
        "7/2 7/2 7/2": then,
        "16/11 7/2 7/2": then,
        "16/11 11/6 7/2": then,
        "16/11 11/6 6/1": then,
    })
    position = next_turn(play(position, None, "16/11 11/6 6/1"))
    # O's four 6s (7/1, the last of the cascade): then O rolls for its own turn (next is O again, no cascade).
    assert_stage(position, (6, 6), {"7/1 7/1 7/1 7/1": ("O", (3, 1), None)})
    position = next_turn(play(position, None, "7/1 7/1 7/1 7/1"))
    assert (position.turn, position.cascade, position.next) == ("O", None, None)
    # O's own roll: its second turn (a remainder stage is not a turn), so its double is plain.
    moves = stage(position, (2, 2))
    assert moves and set(moves.values()) == {("X", (3, 2), None)}


def test_a_remainder_stage_not_played_in_full_loses_the_rest_and_its_player_rolls():
    # O has three 5s of X's cascade to play; only one can be (its 16 -> 11; 11 -> 6 is closed by X on its 18,
    # O's 7 -> 2 by X on its 14).
    layout = "24:" + X(12) + " 14:XX 18:X 19:" + O(14) + " 4:O"
    position = gul(layout, turn="O", turns=(3, 1), cascade=Cascade(5, 3, True), rules=OPPONENT)
    assert_stage(position, None, {"16/11": ("O", (3, 1), None)})
    # none at all can be played: a pass, and O rolls next
    layout = "24:" + X(12) + " 14:XX 23:X 19:" + O(14) + " 4:O"
    position = gul(layout, turn="O", turns=(3, 1), cascade=Cascade(5, 3, True), rules=OPPONENT)
    assert_stage(position, None, {"": ("O", (3, 1), None)})


def test_the_remainders_player_then_rolls_its_own_turn_which_counts():
    # O has begun two turns. The remainder stage leaves its count at 2; its roll after it makes 3 and is
    # still plain (its third turn); the next roll cascades.
    layout = "24:" + X(14) + " 14:X 19:" + O(14) + " 4:O"
    position = gul(layout, turn="O", turns=(3, 2), cascade=Cascade(6, 2, True), rules=OPPONENT)
    moves = stage(position)
    assert moves and set(moves.values()) == {("O", (3, 2), None)}
    position = next_turn(legal_moves(position)[0].position)
    assert (position.turn, position.turns, position.cascade) == ("O", (3, 2), None)
    moves = stage(position, (1, 1))
    assert moves and set(moves.values()) == {("X", (3, 3), None)}
    # ... and at 3 begun turns O's double cascades
    position = position.with_changes(turns=(3, 3))
    moves = stage(position, (1, 1))
    assert moves and set(moves.values()) == {("O", (3, 3), Cascade(2, 4, False))}


def test_a_stage_played_in_full_with_number_6_under_remainder_opponent_passes_the_turn():
    # Nothing is left over: O rolls as after any turn, no remainder.
    position = gul(START, turns=(3, 0), cascade=Cascade(6, 4), rules=OPPONENT)
    assert_stage(position, None, {"24/18 24/18 24/18 24/18": ("O", (3, 0), None)})


def test_a_stage_of_6_not_played_in_full_hands_its_steps_left_to_the_opponent():
    # X can play one 6 (14/8; 24/18 closed, 8/2 closed): O gets three 6s and then rolls (no later stage).
    layout = "24:" + X(14) + " 14:X 18:" + O(14) + " 2:O"
    position = gul(layout, turns=(3, 0), cascade=Cascade(6, 4), rules=OPPONENT)
    assert_stage(position, None, {"14/8": ("O", (3, 0), Cascade(6, 3, True))})


# ------------------------------------------------------------------ 10.2 bear-off and the end of the game

def test_a_cascade_continues_into_the_bear_off():
    layout = "6:" + X(4) + " 12:" + O(15)  # 11 of X's checkers off
    position = gul(layout, turns=(3, 0))
    nxt = ("X", (3, 0), Cascade(4, 4, False))
    assert_stage(position, (3, 3), {
        "6/3 6/3 6/3 6/3": nxt,
        "6/3 6/3 6/3 3/off": nxt,
        "6/3 3/off 6/3 3/off": nxt,
    })
    # Then the 4s: 6/2 twice, and only then 2/off (a larger die bears off from the highest point only).
    position = next_turn(play(position, (3, 3), "6/3 3/off 6/3 3/off"))
    got = assert_stage(position, None, {"6/2 6/2 2/off 2/off": (None, (3, 0), None)})
    assert list(got)[0][2] == GameResult("X", "gammon", 2)


def test_a_game_ending_step_ends_the_cascade_at_once():
    # Two 4s of a stage of four end the game (3/off from the highest point, then 1/off): the two 4s left and
    # the stages of 5 and 6 are dropped; there is no next decision.
    layout = "3:X 1:X 12:" + O(14)  # 13 of X's checkers off, one of O's
    position = gul(layout, turns=(3, 0), cascade=Cascade(4, 4))
    got = assert_stage(position, None, {"3/off 1/off": (None, (3, 0), None)})
    assert list(got)[0][2] == GameResult("X", "single", 1)
    # the same from a roll that starts a cascade: the roll is still counted
    position = gul(layout, turns=(2, 0), rules=GULBARA.replace(plain_double_turns=2))
    got = assert_stage(position, (4, 4), {"3/off 1/off": (None, (2, 0), None)})
    # ... and in the opponent's remainder (the game is over, nothing is rolled)
    layout = "24:" + X(15) + " 15:O"  # O's last checker on its 3-point
    position = gul(layout, turn="O", turns=(3, 1), cascade=Cascade(5, 2, True), rules=OPPONENT)
    got = assert_stage(position, None, {"3/off": (None, (3, 1), None)})
    assert list(got)[0][2] == GameResult("O", "gammon", 2)


def test_next_turn_hands_the_decision_to_next():
    position = gul(START, turns=(3, 0))
    after = legal_moves(position, (4, 4))[0].position
    assert after.turn == "X" and after.next == "X"
    following = next_turn(after)
    assert (following.turn, following.next, following.cascade) == ("X", None, Cascade(5, 4, False))


# ------------------------------------------------------------------ 10.3 dice for a pending stage

def test_a_pending_stage_takes_no_dice_or_its_own_double():
    position = gul(BLOCKED_FIVES, turns=(3, 1), cascade=Cascade(5, 4))
    assert stage(position, None) == stage(position, (5, 5)) == stage(position, [5, 5])


@pytest.mark.parametrize("dice", [(4, 4), (6, 6), (5, 4), [1, 2]])
def test_wrong_dice_for_a_pending_stage_are_refused(dice):
    position = gul(BLOCKED_FIVES, turns=(3, 1), cascade=Cascade(5, 4))
    with pytest.raises(RulesError) as error:
        legal_moves(position, dice)
    message = str(error.value)
    assert "cascade" in message and "[5, 5]" in message and str(list(dice)) in message


def test_a_side_to_roll_needs_dice():
    with pytest.raises(RulesError, match="dice"):
        legal_moves(gul(START), None)


# ------------------------------------------------------------------ 10.3 JSON

@pytest.fixture
def gulbara_named(monkeypatch):
    """``gulbara`` as a variant name for JSON (registered here for the test if the registry lacks it)."""
    if "gulbara" not in options_module.VARIANTS:
        monkeypatch.setitem(options_module.VARIANTS, "gulbara", GULBARA)
    return options_module.variant_rules("gulbara")


def test_json_round_trip_of_turns_cascade_and_next(gulbara_named):
    rules = gulbara_named
    position = gul(START, turns=(3, 2), cascade=Cascade(5, 3), rules=rules)
    data = position_to_json(position)
    assert data["turns"] == {"X": 3, "O": 2}
    assert data["cascade"] == {"number": 5, "steps": 3, "remainder": False}
    assert "next" not in data
    assert position_from_json(data) == position
    # an afterstate carries next
    after = legal_moves(position.with_changes(cascade=Cascade(5, 4)))[0].position
    data = position_to_json(after)
    assert data["next"] == "X" and data["cascade"] == {"number": 6, "steps": 4, "remainder": False}
    assert position_from_json(data) == after
    # a remainder, under an option variant (written as the preset plus its changed rules)
    remainder = gul(START, turn="O", turns=(3, 1), cascade=Cascade(2, 1, True),
                    rules=rules.replace(cascade_remainder="opponent"))
    data = position_to_json(remainder)
    assert data["rules"] == {"cascade_remainder": "opponent"}
    assert data["cascade"] == {"number": 2, "steps": 1, "remainder": True}
    assert position_from_json(data) == remainder


def test_json_leaves_out_the_defaults(gulbara_named):
    data = position_to_json(gul(START, rules=gulbara_named))
    assert not {"turns", "cascade", "next"} & set(data)
    data["cascade"] = {"number": 4}  # steps 4 and remainder false by default
    data["turns"] = {"X": 3}
    assert position_from_json(data).cascade == Cascade(4, 4, False)
    assert position_from_json(data).turns == (3, 0)


@pytest.mark.parametrize("cascade,key", [
    ({"number": 7, "steps": 4, "remainder": False}, "number"),
    ({"number": 0}, "number"),
    ({"number": 4, "steps": 0, "remainder": False}, "steps"),
    ({"number": 4, "steps": 5}, "steps"),
    ({"number": 4, "steps": 4, "remainder": False, "colour": "X"}, "colour"),
    ({"number": 4, "steps": 4, "remainder": "no"}, "remainder"),
    ({"steps": 4}, "number"),
    ([4, 4], "cascade"),
])
def test_json_refuses_a_malformed_cascade_naming_the_key(gulbara_named, cascade, key):
    data = position_to_json(gul(START, turns=(3, 0), rules=gulbara_named))
    data["cascade"] = cascade
    with pytest.raises(PositionError) as error:
        position_from_json(data)
    assert "cascade" in str(error.value) and key in str(error.value)


@pytest.mark.parametrize("change,key", [
    ({"turns": {"X": 4}}, "turns"),
    ({"turns": {"Z": 1}}, "turns"),
    ({"next": "Y"}, "next"),
    ({"cascade": {"number": 4, "remainder": True}}, "remainder"),  # remainder under cascade_remainder lost
])
def test_json_refuses_bad_turn_state(gulbara_named, change, key):
    data = position_to_json(gul(START, turns=(3, 0), rules=gulbara_named))
    data.update(change)
    with pytest.raises(PositionError) as error:
        position_from_json(data)
    assert key in str(error.value)


def test_a_pending_cascade_of_ones_own_needs_the_plain_turns_played():
    with pytest.raises(PositionError, match="cascade"):
        validate_position(start_position(GULBARA).with_changes(turns=(1, 0), cascade=Cascade(4, 4)))


@pytest.mark.parametrize("variant", ["fevga", "narde", "tapa", "backgammon"])
@pytest.mark.parametrize("change", [
    {"turns": {"X": 1, "O": 0}},
    {"cascade": {"number": 4, "steps": 4, "remainder": False}},
    {"next": "O"},
])
def test_a_plain_variant_refuses_turns_cascade_and_next(variant, change):
    data = position_to_json(start_position(variant))
    data.update(change)
    with pytest.raises(PositionError, match="plain"):
        position_from_json(data)


def test_a_plain_variant_position_object_refuses_a_cascade():
    for changes in ({"turns": (1, 0)}, {"cascade": Cascade(4)}, {"next": "X"}):
        with pytest.raises(PositionError):
            validate_position(start_position("fevga").with_changes(**changes))
