"""Game and match flow (docs/rules.md section 5): opening, turns, cube, Crawford, matches, snapshots."""

from __future__ import annotations

import copy
import json
import random

import pytest

from tapa_ai.flow import (
    FlowError,
    GameState,
    MatchState,
    NeverDouble,
    ScriptedDice,
    SnapshotError,
    play_game,
    play_match,
)
from tapa_ai.notation import board, format_move
from tapa_ai.rules.options import BACKGAMMON, PLAKOTO, TAPA, RulesError
from tapa_ai.rules.position import start_position

X15, O15 = "X" * 15, "O" * 15


# --------------------------------------------------------------------------
# Positions
# --------------------------------------------------------------------------

def x_bears_off_last_checker(rules):
    """X has one checker left on its 1-point; O has borne off 10: any roll wins X a single."""
    return board(rules, "1:X 20:OOOOO", turn="X")


def o_bears_off_last_checker(rules):
    """O has one checker left on its 1-point; X has borne off 10: any roll wins O a single."""
    return board(rules, "24:O 5:XXXXX", turn="O")


def x_pins_o_mother_with_2_1():
    """Tapa: O's mother alone on O's 24-point, X can pin it with 2/1 and has left its own 24-point."""
    return board(TAPA, "1:O 2:X 6:" + "X" * 14 + " 20:" + "O" * 14, turn="X")


def x_makes_both_mothers_pinned_with_3_1():
    """Plakoto: O pins X's mother while O's mother is still home; X pins it with 3/1: a draw."""
    return board(PLAKOTO, "24:XO 1:O 3:X 10:" + "X" * 13 + " 15:" + "O" * 13, turn="X")


def x_is_blocked():
    """Plakoto: all 15 X on its 24-point, O holds X's points 18-23: X can never move."""
    return board(PLAKOTO, "24:" + X15 + " 18:OO 19:OO 20:OO 21:OO 22:OO 23:OOOOO", turn="X")


def win_current_game(match: MatchState, dice=(6, 5)) -> MatchState:
    """Roll ``dice`` and play the first legal move (the game-ending one in the positions above)."""
    match = match.rolled(dice)
    return match.play(match.game.moves[0])


def first_move(position, dice, moves):
    return moves[0]


# --------------------------------------------------------------------------
# Opening
# --------------------------------------------------------------------------

def test_opening_equal_dice_roll_again():
    dice = ScriptedDice([3, 3, 2, 2, 5, 1])
    game = GameState.new(TAPA).roll(dice)
    assert dice.remaining == 0
    assert [event.dice for event in game.history] == [(3, 3), (2, 2), (5, 1)]
    assert game.phase == "move" and game.position.turn == "X" and game.dice == (5, 1)


def test_opening_higher_die_plays_the_opening_dice():
    game = GameState.new(TAPA).roll(ScriptedDice([2, 6]))
    assert game.phase == "move"
    assert game.position.turn == "O"
    assert game.dice == (6, 2)
    assert game.position == start_position(TAPA, "O")


def test_opening_dice_given_from_outside_stay_in_opening_when_equal():
    game = GameState.new(BACKGAMMON).rolled((4, 4))
    assert game.phase == "opening"
    game = game.rolled((1, 3))
    assert game.phase == "move" and game.position.turn == "O" and game.dice == (3, 1)


def test_plakoto_opening_rerolls_both_dice():
    dice = ScriptedDice([4, 2, 6, 5])
    game = GameState.new(PLAKOTO).roll(dice)
    assert game.phase == "roll" and game.position.turn == "X" and game.dice is None
    game = game.roll(dice)
    assert game.phase == "move" and game.dice == (6, 5)
    assert dice.remaining == 0


def test_tapa_every_game_starts_with_an_opening_roll():
    match = MatchState(GameState.new(TAPA, opener="X", position=x_bears_off_last_checker(TAPA)), length=5)
    match = win_current_game(match).start_next_game()
    assert match.game.phase == "opening"
    assert match.game_number == 2


def test_winner_opens_next_game_in_plakoto():
    match = MatchState(GameState.new(PLAKOTO, opener="O", position=o_bears_off_last_checker(PLAKOTO)), length=5)
    match = win_current_game(match)
    assert match.game.winner == "O"
    match = match.start_next_game()
    assert match.game.phase == "roll"
    assert match.game.position == start_position(PLAKOTO, "O")
    assert match.game.history == ()
    match = match.roll(ScriptedDice([3, 1]))
    assert match.game.dice == (3, 1) and match.game.position.turn == "O"


def test_draw_is_followed_by_a_fresh_opening_roll():
    game = GameState.new(PLAKOTO, opener="X", position=x_makes_both_mothers_pinned_with_3_1())
    match = MatchState(game, length=5).rolled((2, 1)).play("3/1")
    assert match.game.result.kind == "draw"
    match = match.start_next_game()
    assert match.game.phase == "opening"


# --------------------------------------------------------------------------
# Turns
# --------------------------------------------------------------------------

def test_turn_passes_to_the_other_side_after_a_move():
    game = GameState.new(TAPA).rolled((3, 1))
    game = game.play("24/21 23/22")
    assert game.phase == "roll" and game.position.turn == "O" and game.dice is None
    assert game.history[-1].move == "24/21 23/22" and game.history[-1].side == "X"


def test_blocked_side_plays_the_empty_pass():
    game = GameState.new(PLAKOTO, opener="X", position=x_is_blocked()).rolled((6, 5))
    assert len(game.moves) == 1 and game.moves[0].steps == ()
    with pytest.raises(FlowError, match="legal moves: ''"):
        game.play("24/18")
    game = game.play("")
    assert game.phase == "roll" and game.position.turn == "O"
    assert game.history[-1].move == ""


def test_game_ends_with_the_result_of_the_afterstate():
    game = GameState.new(TAPA, opener="X", position=x_bears_off_last_checker(TAPA)).rolled((6, 5))
    game = game.play("1/off")
    assert game.is_over and game.result == game.position.result
    assert (game.winner, game.result.kind, game.points_won) == ("X", "single", 1)


def test_actions_return_new_states():
    game = GameState.new(TAPA)
    rolled = game.rolled((3, 1))
    assert game.phase == "opening" and rolled.phase == "move"


def test_moving_before_rolling_is_refused():
    with pytest.raises(FlowError, match="before rolling"):
        GameState.new(TAPA, opener="X").play("24/21 23/22")
    with pytest.raises(FlowError, match="before rolling"):
        GameState.new(TAPA).play("24/21 23/22")


def test_rolling_twice_is_refused():
    game = GameState.new(TAPA, opener="X").rolled((3, 1))
    with pytest.raises(FlowError, match="must move"):
        game.rolled((4, 2))


def test_illegal_move_text_lists_the_legal_moves():
    game = GameState.new(TAPA).rolled((3, 1))
    with pytest.raises(FlowError, match="not a legal move.*legal moves: .*'24/21 23/22'"):
        game.play("24/18")


def test_move_from_another_position_is_refused():
    game = GameState.new(TAPA).rolled((3, 1))
    other_game = GameState.new(TAPA).rolled((6, 5))
    with pytest.raises(FlowError, match="not a legal move"):
        game.play(other_game.moves[0])


def test_wrong_side_cannot_act():
    game = GameState.new(TAPA).rolled((3, 1))
    with pytest.raises(FlowError, match="O cannot move: it is X's turn"):
        game.play("24/21 23/22", side="O")
    assert game.play("24/21 23/22", side="X").position.turn == "O"


def test_actions_after_the_game_is_over_are_refused():
    game = GameState.new(TAPA, opener="X", position=x_bears_off_last_checker(TAPA)).rolled((6, 5)).play("1/off")
    for action in (lambda: game.roll(random.Random(0)), lambda: game.play(""), game.double, game.take, game.drop):
        with pytest.raises(FlowError, match="the game is over"):
            action()


def test_dice_source_must_give_dice():
    with pytest.raises(FlowError, match="a die must be an integer 1..6"):
        GameState.new(TAPA).roll(lambda: 7)
    with pytest.raises(FlowError, match="ran out"):
        GameState.new(TAPA).roll(ScriptedDice([2, 2]))


# --------------------------------------------------------------------------
# Cube
# --------------------------------------------------------------------------

def tapa_turn(cube_value=1, cube_owner=None, turn="X", crawford=False) -> GameState:
    return GameState(start_position(TAPA, turn), "roll", cube_value=cube_value, cube_owner=cube_owner,
                     crawford=crawford)


def test_double_take_gives_the_cube_to_the_taker():
    game = tapa_turn().double()
    assert game.phase == "double" and game.side_to_act == "O" and game.offered_value == 2
    game = game.take()
    assert (game.cube_value, game.cube_owner) == (2, "O")
    assert game.phase == "roll" and game.position.turn == "X"
    assert [(e.action, e.side, e.cube) for e in game.history] == [("double", "X", 2), ("take", "O", 2)]


def test_only_cube_owner_may_redouble():
    game = tapa_turn().double().take()
    with pytest.raises(FlowError, match="not your cube: O owns it at 2"):
        game.double()
    game = game.rolled((3, 1)).play("24/21 23/22")
    assert game.position.turn == "O" and game.may_double
    game = game.double().take()
    assert (game.cube_value, game.cube_owner) == (4, "X")


def test_nobody_owns_the_centred_cube():
    assert tapa_turn(turn="X").may_double and tapa_turn(turn="O").may_double
    assert GameState.new(TAPA).cube_owner is None


def test_pass_loses_current_cube_value():
    game = tapa_turn(cube_value=2, cube_owner="O", turn="O").double().drop()
    assert game.is_over and game.dropped
    assert (game.winner, game.points_won, game.cube_value) == ("O", 2, 2)
    match = MatchState(tapa_turn(cube_value=2, cube_owner="O", turn="O"), length=7).double().drop()
    assert match.score == (0, 2)
    assert match.results[-1].dropped and match.results[-1].points == 2


def test_cube_caps_at_64():
    game = tapa_turn(cube_value=32, cube_owner="X").double().take()
    assert game.cube_value == 64
    game = game.rolled((3, 1)).play("24/21 23/22")
    assert game.cube_owner == "O" and game.position.turn == "O"
    assert game.double_refusal() == "the cube is at 64, its highest value"
    with pytest.raises(FlowError, match="cube is at 64"):
        game.double()


def test_cube_multiplies_mother_win():
    game = GameState(x_pins_o_mother_with_2_1(), "roll", cube_value=4, cube_owner="O")
    game = game.rolled((1, 3)).play("2/1")
    assert game.result.kind == "mother" and game.result.points == 3
    assert game.points_won == 12


def test_cube_multiplies_gammon():
    game = GameState(board(TAPA, "1:X 20:" + O15, turn="X"), "roll", cube_value=2, cube_owner="X")
    game = game.rolled((6, 5)).play("1/off")
    assert game.result.kind == "gammon" and game.points_won == 4


def test_no_double_when_cube_option_off():
    game = GameState.new(PLAKOTO, opener="X")
    assert "no cube (option cube is off)" in game.double_refusal()
    with pytest.raises(FlowError, match="option cube is off"):
        game.double()


def test_no_double_after_rolling():
    with pytest.raises(FlowError, match="after rolling"):
        tapa_turn().rolled((3, 1)).double()


def test_no_double_before_the_opening_roll_nor_with_the_opening_dice():
    with pytest.raises(FlowError, match="before the opening roll"):
        GameState.new(TAPA).double()
    with pytest.raises(FlowError, match="after rolling"):
        GameState.new(TAPA).rolled((5, 2)).double()


def test_reroll_opener_may_double_before_its_first_roll():
    rules = TAPA.replace(opening="reroll")
    game = GameState.new(rules).rolled((5, 2))
    assert game.phase == "roll" and game.may_double
    assert game.double().side_to_act == "O"


def test_only_the_side_to_move_may_double():
    with pytest.raises(FlowError, match="O may not double: only the side to move"):
        tapa_turn(turn="X").double(side="O")


def test_taking_when_no_double_was_offered_is_refused():
    with pytest.raises(FlowError, match="no double has been offered"):
        tapa_turn().take()
    with pytest.raises(FlowError, match="no double has been offered"):
        tapa_turn().drop()


def test_double_on_offer_blocks_rolling_and_doubling_again():
    game = tapa_turn().double()
    with pytest.raises(FlowError, match="O must take or drop"):
        game.roll(random.Random(0))
    with pytest.raises(FlowError, match="already on offer"):
        game.double()
    with pytest.raises(FlowError, match="X cannot take"):
        game.take(side="X")


# --------------------------------------------------------------------------
# Match and Crawford
# --------------------------------------------------------------------------

def test_match_ends_when_a_side_reaches_length():
    match = MatchState(GameState.new(TAPA, opener="X", position=x_bears_off_last_checker(TAPA)), 3, score=(2, 0))
    match = win_current_game(match)
    assert match.score == (3, 0) and match.winner == "X" and match.is_over
    with pytest.raises(FlowError, match="the match is over, X won 3-0"):
        match.start_next_game()
    with pytest.raises(FlowError, match="the match is over"):
        match.roll(random.Random(0))


def test_next_game_needs_the_current_game_over():
    with pytest.raises(FlowError, match="still being played"):
        MatchState.new(TAPA, 5).start_next_game()
    match = win_current_game(MatchState(GameState.new(TAPA, opener="X", position=x_bears_off_last_checker(TAPA)), 5))
    with pytest.raises(FlowError, match="game 1 is over.*start_next_game"):
        match.roll(random.Random(0))


def test_draw_scores_nothing():
    game = GameState.new(PLAKOTO, opener="X", position=x_makes_both_mothers_pinned_with_3_1())
    match = MatchState(game, length=5, score=(1, 2), game_number=3)
    match = match.rolled((2, 1)).play("3/1")
    assert match.game.points_won == 0 and match.game.winner is None
    assert match.score == (1, 2) and not match.is_over
    assert match.results[-1].kind == "draw" and match.results[-1].points == 0
    assert match.start_next_game().game_number == 4


def test_money_play_has_no_end():
    match = MatchState(GameState.new(TAPA, opener="X", position=x_bears_off_last_checker(TAPA)), 0, score=(50, 0))
    match = win_current_game(match)
    assert match.score == (51, 0) and match.winner is None
    assert match.start_next_game().game_number == 2


def crawford_setup(score, winner="X", crawford=False, post_crawford=False) -> MatchState:
    position = x_bears_off_last_checker(TAPA) if winner == "X" else o_bears_off_last_checker(TAPA)
    game = GameState.new(TAPA, opener=winner, position=position, crawford=crawford)
    return MatchState(game, length=5, score=score, post_crawford=post_crawford)


def opening_and_first_move(match: MatchState) -> MatchState:
    """Opening roll won by X, who plays; O is then to double or roll."""
    match = match.roll(ScriptedDice([5, 2]))
    return match.play(match.game.moves[0])


def test_no_double_in_crawford_game():
    match = win_current_game(crawford_setup((3, 0)))
    assert match.score == (4, 0)
    match = match.start_next_game()
    assert match.crawford_game and not match.post_crawford
    match = opening_and_first_move(match)
    assert match.game.phase == "roll" and match.game.position.turn == "O"
    assert not match.game.may_double
    with pytest.raises(FlowError, match="no doubling in the Crawford game"):
        match.double()


def test_doubling_allowed_after_crawford_game():
    match = win_current_game(crawford_setup((4, 0), winner="O", crawford=True))
    assert match.results[-1].crawford
    match = match.start_next_game()
    assert match.post_crawford and not match.crawford_game
    match = opening_and_first_move(match)
    assert match.game.may_double
    assert match.double().game.phase == "double"


def test_crawford_game_happens_only_once():
    match = win_current_game(crawford_setup((4, 2), winner="O", post_crawford=True))
    assert match.score == (4, 3)
    assert not match.start_next_game().crawford_game
    match = win_current_game(crawford_setup((4, 3), winner="O", post_crawford=True))
    assert match.score == (4, 4)
    match = match.start_next_game()
    assert not match.crawford_game and match.post_crawford


def test_crawford_game_follows_a_gammon_that_reaches_length_minus_one():
    game = GameState.new(TAPA, opener="X", position=board(TAPA, "1:X 20:" + O15, turn="X"))
    match = win_current_game(MatchState(game, length=5, score=(2, 0)))
    assert match.score == (4, 0) and match.start_next_game().crawford_game


def test_no_crawford_game_before_length_minus_one():
    match = win_current_game(crawford_setup((2, 0)))
    assert match.score == (3, 0) and not match.start_next_game().crawford_game


def test_no_crawford_when_option_off():
    rules = TAPA.replace(crawford=False)
    game = GameState.new(rules, opener="X", position=x_bears_off_last_checker(rules))
    match = win_current_game(MatchState(game, length=5, score=(3, 0))).start_next_game()
    assert not match.crawford_game
    match = opening_and_first_move(match)
    assert match.game.may_double


def test_drawn_crawford_game_still_counts_as_the_crawford_game():
    rules = PLAKOTO.replace(cube=True, crawford=True)
    position = x_makes_both_mothers_pinned_with_3_1().with_changes(rules=rules)
    game = GameState.new(rules, opener="X", position=position, crawford=True)
    match = MatchState(game, length=5, score=(4, 0)).rolled((2, 1)).play("3/1")
    match = match.start_next_game()
    assert match.post_crawford and not match.crawford_game


# --------------------------------------------------------------------------
# Snapshots
# --------------------------------------------------------------------------

def round_trip_game(game: GameState) -> GameState:
    return GameState.from_dict(json.loads(json.dumps(game.to_dict())))


def sample_games() -> list[GameState]:
    opening = GameState.new(TAPA)
    tie = opening.rolled((2, 2))
    moving = tie.rolled((3, 1))
    rolling = moving.play("24/21 23/22")
    doubled = rolling.double()
    taken = doubled.take()
    dropped = doubled.drop()
    mother = GameState(x_pins_o_mother_with_2_1(), "roll", cube_value=4, cube_owner="O").rolled((1, 3)).play("2/1")
    custom = GameState.new(TAPA.replace(mother_points=2, opening="reroll")).rolled((1, 6))
    bg = GameState.new(BACKGAMMON).rolled((6, 1))
    return [opening, tie, moving, rolling, doubled, taken, dropped, mother, custom, bg, bg.play(bg.moves[0])]


@pytest.mark.parametrize("index", range(11))
def test_game_snapshot_round_trips_through_json(index):
    game = sample_games()[index]
    assert round_trip_game(game) == game


def test_loaded_game_plays_on_like_the_original():
    game = GameState.new(TAPA).rolled((3, 1)).play("24/21 23/22").double().take()
    loaded = round_trip_game(game)
    finished = play_game(game, first_move, random.Random(7))
    finished_loaded = play_game(loaded, first_move, random.Random(7))
    assert finished_loaded == finished


def test_match_snapshot_round_trips_through_json():
    match = play_match(TAPA, 5, first_move, random.Random(3), AlwaysDouble(), max_games=2)
    for state in (MatchState.new(TAPA, 7), match, match.start_next_game() if not match.is_over else match,
                  crawford_setup((4, 0), winner="O", crawford=True)):
        assert MatchState.from_dict(json.loads(json.dumps(state.to_dict()))) == state


def test_snapshot_format_is_compact_and_named():
    data = GameState.new(TAPA).rolled((5, 2)).to_dict()
    assert data["format"] == "tapa-ai/game" and data["phase"] == "move" and data["dice"] == [5, 2]
    assert data["cube"] == {"value": 1, "owner": None}
    assert data["history"] == [{"action": "opening", "dice": [5, 2]}]
    assert data["position"]["variant"] == "tapa"


def base_game_snapshot() -> dict:
    game = GameState.new(TAPA).rolled((3, 1)).play("24/21 23/22").double().take().rolled((6, 5))
    return game.to_dict()


def _set(path, value):
    def mutate(data):
        *parents, last = path
        for key in parents:
            data = data[key]
        data[last] = value
    return mutate


def _delete(path):
    def mutate(data):
        *parents, last = path
        for key in parents:
            data = data[key]
        del data[last]
    return mutate


BAD_GAME_SNAPSHOTS = {
    "unknown key": (_set(["colour"], "red"), r"game: unknown key\(s\) \['colour'\]"),
    "missing key": (_delete(["phase"]), r"game: missing key\(s\) \['phase'\]"),
    "wrong format": (_set(["format"], "tapa-ai/match"), "game.format: expected 'tapa-ai/game'"),
    "newer version": (_set(["version"], 99), "game.version: this code reads version 1"),
    "bad phase": (_set(["phase"], "thinking"), "game.phase: 'thinking' must be one of"),
    "dice out of phase": (_set(["phase"], "roll"), "dice are set exactly in phase 'move'"),
    "bad dice": (_set(["dice"], [0, 7]), r"game.dice: dice must be two integers 1..6"),
    "cube value": (_set(["cube", "value"], 3), "game.cube.value: must be one of"),
    "cube owner": (_set(["cube", "owner"], "Z"), "game.cube.owner: must be 'X', 'O' or null"),
    "owner of centred cube": (_set(["cube", "value"], 1), "owner exactly when its value is above 1"),
    "bad stack": (_set(["position", "points", 3], "XOX"), r"game.position: points\[3\] = 'XOX'"),
    "crawford not bool": (_set(["crawford"], "yes"), "game.crawford: must be true or false"),
    "crawford with cube turned": (_set(["crawford"], True), "no doubling in the Crawford game"),
    "result while playing": (_set(["result"], {"winner": "X", "kind": "single", "points": 1}),
                             "the result is set exactly in phase 'over'"),
    "history not a list": (_set(["history"], "24/21"), "game.history: must be a list"),
    "bad event action": (_set(["history", 0, "action"], "resign"), r"game.history\[0\].action: 'resign'"),
    "move without text": (_delete(["history", 1, "move"]), r"game.history\[1\].move: must be move text"),
    "empty object": (lambda data: data.clear(), r"game: missing key"),
}


@pytest.mark.parametrize("case", sorted(BAD_GAME_SNAPSHOTS))
def test_bad_game_snapshot_is_refused_with_where(case):
    mutate, message = BAD_GAME_SNAPSHOTS[case]
    data = copy.deepcopy(base_game_snapshot())
    mutate(data)
    with pytest.raises(SnapshotError, match=message):
        GameState.from_dict(data)


def test_cube_in_a_variant_without_cube_is_refused():
    data = GameState.new(PLAKOTO).to_dict()
    data["cube"] = {"value": 2, "owner": "X"}
    with pytest.raises(SnapshotError, match="option cube is off"):
        GameState.from_dict(data)


def test_snapshot_errors_are_rules_errors():
    with pytest.raises(RulesError):
        GameState.from_dict([1, 2])
    with pytest.raises(SnapshotError, match="must be a JSON object, got list"):
        MatchState.from_dict([1, 2])


BAD_MATCH_SNAPSHOTS = {
    "negative length": (_set(["length"], -1), "match.length: must be an integer >= 0"),
    "negative score": (_set(["score", "O"], -2), "match.score.O: must be an integer >= 0"),
    "score side": (_set(["score"], {"X": 1}), r"match.score: missing key\(s\) \['O'\]"),
    "game number": (_set(["game_number"], 0), "match.game_number: must be an integer >= 1"),
    "both reached length": (_set(["score"], {"X": 5, "O": 5}), "both sides have reached the match length"),
    "over while playing": (_set(["score"], {"X": 5, "O": 0}), "the match is over but its current game"),
    "crawford flags": (_set(["crawford_game"], True), "disagrees with match.game.crawford"),
    "crawford and post": (lambda d: (d.__setitem__("post_crawford", True), d["game"].__setitem__("crawford", True),
                                     d.__setitem__("crawford_game", True)), "both the Crawford game and post"),
    "bad record": (_set(["results"], [{"number": 1, "winner": None, "kind": "single", "cube": 1, "points": 0}]),
                   r"match.results\[0\]: result: a draw has winner null"),
    "bad game inside": (_set(["game", "phase"], "nap"), "match.game.phase: 'nap'"),
}


@pytest.mark.parametrize("case", sorted(BAD_MATCH_SNAPSHOTS))
def test_bad_match_snapshot_is_refused_with_where(case):
    mutate, message = BAD_MATCH_SNAPSHOTS[case]
    data = MatchState.new(TAPA, 5).to_dict()
    mutate(data)
    with pytest.raises(SnapshotError, match=message):
        MatchState.from_dict(data)


# --------------------------------------------------------------------------
# Drivers
# --------------------------------------------------------------------------

class AlwaysDouble:
    """Doubles whenever allowed and always takes: exercises the cube as much as possible."""

    def offer_double(self, game, match):
        return True

    def accept_double(self, game, match):
        return True


class DoubleAndDrop(AlwaysDouble):
    def accept_double(self, game, match):
        return False


def random_mover(rng):
    return lambda position, dice, moves: rng.choice(moves)


@pytest.mark.parametrize("rules", [TAPA, PLAKOTO, BACKGAMMON], ids=lambda r: r.name)
def test_play_game_is_reproducible_from_seeds(rules):
    first = play_game(rules, random_mover(random.Random(1)), random.Random(2))
    second = play_game(rules, random_mover(random.Random(1)), random.Random(2))
    assert first.is_over and first == second
    assert first.history[0].action == "opening"


def test_play_game_never_doubles_by_default():
    game = play_game(TAPA, random_mover(random.Random(4)), random.Random(5))
    assert game.cube_value == 1 and all(event.action in ("opening", "move") for event in game.history)


def test_play_game_asks_the_cube_policy():
    game = play_game(TAPA, random_mover(random.Random(4)), random.Random(5), AlwaysDouble())
    assert game.cube_value == 64
    assert game.points_won == game.result.points * 64
    dropped = play_game(TAPA, random_mover(random.Random(4)), random.Random(5), DoubleAndDrop())
    assert dropped.dropped and dropped.points_won == 1
    # The opener played the opening dice, so the first double comes on the second turn.
    assert [event.action for event in dropped.history] == ["opening", "move", "double", "drop"]


def test_play_game_asks_only_when_there_is_a_choice():
    asked = []

    def choose(position, dice, moves):
        asked.append(len(moves))
        return moves[0]

    game = play_game(GameState.new(PLAKOTO, opener="X", position=x_is_blocked()), choose, random.Random(0))
    assert game.is_over
    assert game.history[0].move == "" and game.history[0].side == "X"
    assert asked and min(asked) > 1


@pytest.mark.parametrize("rules", [TAPA, PLAKOTO, BACKGAMMON], ids=lambda r: r.name)
def test_play_match_reaches_the_length_and_scores_every_game(rules):
    policy = AlwaysDouble() if rules.cube else NeverDouble()
    match = play_match(rules, 5, random_mover(random.Random(8)), random.Random(9), policy)
    assert match.is_over and max(match.score) >= 5
    totals = {"X": 0, "O": 0}
    for record in match.results:
        if record.winner:
            totals[record.winner] += record.points
    assert (totals["X"], totals["O"]) == match.score
    assert match.game_number == len(match.results)


def test_play_match_keeps_the_crawford_rule():
    length = 9
    seen_crawford = seen_post_crawford_double = False
    for seed in (0, 2):
        match = play_match(TAPA, length, random_mover(random.Random(seed)), random.Random(100 + seed),
                           NotTooHighDouble())
        score = {"X": 0, "O": 0}
        crawford_games = [record.number for record in match.results if record.crawford]
        expected = None
        for record in match.results:
            if record.crawford:
                assert record.cube == 1 and not record.dropped
            elif crawford_games and record.number > crawford_games[0] and record.cube > 1:
                seen_post_crawford_double = True
            if record.winner:
                before = score[record.winner]
                score[record.winner] += record.points
                if expected is None and before < length - 1 == score[record.winner]:
                    expected = record.number + 1
        assert crawford_games == ([expected] if expected else [])
        seen_crawford |= bool(crawford_games)
    assert seen_crawford and seen_post_crawford_double


class NotTooHighDouble(AlwaysDouble):
    """Doubles only to 2 so that matches go through several games."""

    def offer_double(self, game, match):
        return game.cube_value == 1


def test_money_play_needs_a_game_limit():
    with pytest.raises(FlowError, match="give max_games"):
        play_match(TAPA, 0, first_move, random.Random(0))
    match = play_match(TAPA, None, random_mover(random.Random(1)), random.Random(2), max_games=3)
    assert len(match.results) == 3 and match.winner is None


def test_choose_move_may_answer_with_move_text():
    def choose(position, dice, moves):
        return format_move(moves[-1])

    game = play_game(BACKGAMMON, choose, random.Random(11))
    assert game.is_over
