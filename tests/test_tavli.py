"""The Tavli match flow (docs/rules.md section 9): the rotation, who opens, draws, scores, the match end."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tapa_ai.flow import FlowError, GameState, MatchState, ScriptedDice
from tapa_ai.flow.tavli import TAVLI_ROTATION, TavliMatch, tavli_rules, tavli_variant
from tapa_ai.notation import board
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.position import start_position

PORTES, PLAKOTO, FEVGA = (variant_rules(name) for name in ("portes", "plakoto", "fevga"))
O15 = "O" * 15


def at(rules, text: str, turn: str, score=(0, 0), game_number=1, length=5) -> TavliMatch:
    """A Tavli match at game ``game_number`` (whose rules must be ``rules``), from the position ``text``."""
    assert tavli_rules(game_number) == rules
    game = GameState.new(rules, opener=turn, position=board(rules, text, turn=turn))
    return TavliMatch(MatchState(game, length, score, game_number))


def finish(match: TavliMatch, dice=(6, 5)) -> TavliMatch:
    """Roll ``dice`` and play the first legal move (the game-ending one in the positions here)."""
    match = match.rolled(dice)
    return match.play(match.game.moves[0])


def replace_game(match: TavliMatch, game: GameState) -> MatchState:
    return replace(match.match, game=game)


def x_wins_a_single(rules, game_number=1, **kw) -> TavliMatch:
    return at(rules, "1:X 20:OOOOO", "X", game_number=game_number, **kw)


def o_wins_a_gammon(rules, game_number=1, **kw) -> TavliMatch:
    return at(rules, "24:O 5:" + "X" * 15, "O", game_number=game_number, **kw)


def test_games_rotate_portes_plakoto_fevga_portes():
    assert TAVLI_ROTATION == ("portes", "plakoto", "fevga")
    assert [tavli_variant(n) for n in range(1, 8)] == ["portes", "plakoto", "fevga", "portes", "plakoto", "fevga",
                                                      "portes"]
    match = TavliMatch.new(7)
    variants = []
    for number in range(1, 6):
        assert match.game_number == number and match.game.rules == tavli_rules(number)
        assert match.game.position == start_position(match.game.rules, match.game.position.turn)
        variants.append(match.variant)
        # Play the game out from a won position of its rules: a single for X keeps the match going.
        won = GameState.new(match.game.rules, opener="X", position=board(match.game.rules, "1:X 20:OOOOO", turn="X"))
        match = finish(TavliMatch(replace_game(match, won))).start_next_game()
    assert variants == ["portes", "plakoto", "fevga", "portes", "plakoto"]




def test_first_game_is_portes_with_an_opening_roll():
    match = TavliMatch.new(5)
    assert match.variant == "portes" and match.game.phase == "opening"
    assert match.game.position == start_position(PORTES, "X")
    assert match.score == (0, 0) and match.length == 5


def test_no_game_of_a_tavli_match_has_a_cube():
    assert not any(tavli_rules(n).cube for n in (1, 2, 3))


def test_winner_of_a_game_opens_the_next_rolling_both_dice():
    match = finish(o_wins_a_gammon(PORTES))
    assert match.game.winner == "O"
    match = match.start_next_game()
    assert match.variant == "plakoto" and match.game.phase == "roll"
    assert match.game.position == start_position(PLAKOTO, "O")
    match = match.roll(ScriptedDice([3, 3]))  # the opener's first roll may be a double
    assert match.game.dice == (3, 3) and match.game.position.turn == "O"


def test_draw_scores_nothing_moves_the_rotation_on_and_opens_with_an_opening_roll():
    # Plakoto: O pins X's mother while O's mother is still home; X pins it with 3/1: both mothers pinned.
    match = at(PLAKOTO, "24:XO 1:O 3:X 10:" + "X" * 13 + " 15:" + "O" * 13, "X", score=(2, 1), game_number=2)
    match = match.rolled((2, 1)).play("3/1")
    assert match.game.result.kind == "draw"
    assert match.score == (2, 1)
    assert [(variant, record.winner, record.points) for variant, record in match.results] == [("plakoto", None, 0)]
    match = match.start_next_game()
    assert match.game_number == 3 and match.variant == "fevga"
    assert match.game.phase == "opening"


def test_each_game_scores_its_own_rules_points():
    assert finish(x_wins_a_single(PORTES)).score == (1, 0)
    assert finish(o_wins_a_gammon(PORTES)).score == (0, 2)
    # Portes: a backgammon (a checker left in the winner's home) counts as a gammon, 2.
    backgammon = finish(at(PORTES, "1:X 3:O 20:" + "O" * 14, "X"))
    assert backgammon.game.result.kind == "gammon" and backgammon.score == (2, 0)
    assert finish(o_wins_a_gammon(PLAKOTO, game_number=2)).score == (0, 2)
    assert finish(at(FEVGA, "1:X 20:" + O15, "X", game_number=3)).score == (2, 0)
    assert finish(x_wins_a_single(FEVGA, game_number=3)).score == (1, 0)


def test_plakoto_mother_win_counts_two():
    # Tapa's mother pin, in Plakoto: O's mother alone on its start point, X pins it with 2/1 having left home.
    match = at(PLAKOTO, "1:O 2:X 6:" + "X" * 14 + " 20:" + "O" * 14, "X", game_number=2)
    match = match.rolled((2, 1)).play("2/1")
    assert match.game.result.kind == "mother"
    assert match.score == (2, 0)


def test_scores_add_over_the_games_and_records_name_each_variant():
    match = finish(o_wins_a_gammon(PORTES))  # O 2
    match = TavliMatch(replace_game(match.start_next_game(),
                                    GameState.new(PLAKOTO, opener="X", position=board(PLAKOTO, "1:X 20:OOOOO",
                                                                                      turn="X"))))
    match = finish(match)  # X 1
    assert match.score == (1, 2)
    assert [(variant, record.number, record.winner, record.kind, record.points)
            for variant, record in match.results] == [("portes", 1, "O", "gammon", 2), ("plakoto", 2, "X", "single", 1)]


def test_match_ends_when_a_side_reaches_the_length():
    match = finish(at(FEVGA, "1:X 20:" + O15, "X", game_number=3, score=(3, 1), length=5))
    assert match.score == (5, 1) and match.is_over and match.winner == "X"
    with pytest.raises(FlowError, match="the match is over"):
        match.start_next_game()


def test_a_game_one_point_short_does_not_end_the_match():
    match = finish(x_wins_a_single(PORTES, game_number=4, score=(3, 4), length=5))
    assert match.score == (4, 4) and not match.is_over
    assert match.start_next_game().variant == "plakoto"


def test_next_game_before_the_game_ends_is_refused():
    with pytest.raises(FlowError, match="still being played"):
        TavliMatch.new(3).start_next_game()


def test_bad_match_length_is_one_clear_error():
    for length in (0, -1, True, "5"):
        with pytest.raises(FlowError, match="Tavli match length"):
            TavliMatch.new(length)
