"""A rotation's match flow (docs/rules.md 9 and 10.4): Tavli's and Tabla's games in turn, who opens, draws, scores, the
match end."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tapa_ai.flow import FlowError, GameState, MatchState, ScriptedDice
from tapa_ai.flow.rotation import RotationMatch
from tapa_ai.rules.rotations import ROTATIONS
from tapa_ai.notation import board
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.position import start_position

PORTES, PLAKOTO, FEVGA = (variant_rules(name) for name in ("portes", "plakoto", "fevga"))
TAVLI, TABLA = ROTATIONS["tavli"], ROTATIONS["tabla"]
O15 = "O" * 15


def at(rules, text: str, turn: str, score=(0, 0), game_number=1, length=5) -> RotationMatch:
    """A Tavli match at game ``game_number`` (whose rules must be ``rules``), from the position ``text``."""
    assert TAVLI.rules(game_number) == rules
    game = GameState.new(rules, opener=turn, position=board(rules, text, turn=turn))
    return RotationMatch(MatchState(game, length, score, game_number), TAVLI)


def finish(match: RotationMatch, dice=(6, 5)) -> RotationMatch:
    """Roll ``dice`` and play the first legal move (the game-ending one in the positions here)."""
    match = match.rolled(dice)
    return match.play(match.game.moves[0])


def replace_game(match: RotationMatch, game: GameState) -> MatchState:
    return replace(match.match, game=game)


def x_wins_a_single(rules, game_number=1, **kw) -> RotationMatch:
    return at(rules, "1:X 20:OOOOO", "X", game_number=game_number, **kw)


def o_wins_a_gammon(rules, game_number=1, **kw) -> RotationMatch:
    return at(rules, "24:O 5:" + "X" * 15, "O", game_number=game_number, **kw)


def test_games_rotate_portes_plakoto_fevga_portes():
    assert TAVLI.variants == ("portes", "plakoto", "fevga")
    assert [TAVLI.variant(n) for n in range(1, 8)] == ["portes", "plakoto", "fevga", "portes", "plakoto", "fevga",
                                                      "portes"]
    match = RotationMatch.new(7, TAVLI)
    variants = []
    for number in range(1, 6):
        assert match.game_number == number and match.game.rules == TAVLI.rules(number)
        assert match.game.position == start_position(match.game.rules, match.game.position.turn)
        variants.append(match.variant)
        # Play the game out from a won position of its rules: a single for X keeps the match going.
        won = GameState.new(match.game.rules, opener="X", position=board(match.game.rules, "1:X 20:OOOOO", turn="X"))
        match = finish(RotationMatch(replace_game(match, won), TAVLI)).start_next_game()
    assert variants == ["portes", "plakoto", "fevga", "portes", "plakoto"]




def test_first_game_is_portes_with_an_opening_roll():
    match = RotationMatch.new(5, TAVLI)
    assert match.variant == "portes" and match.game.phase == "opening"
    assert match.game.position == start_position(PORTES, "X")
    assert match.score == (0, 0) and match.length == 5


def test_no_game_of_a_tavli_match_has_a_cube():
    assert not any(TAVLI.rules(n).cube for n in (1, 2, 3))


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
    match = RotationMatch(replace_game(match.start_next_game(),
                                    GameState.new(PLAKOTO, opener="X", position=board(PLAKOTO, "1:X 20:OOOOO",
                                                                                      turn="X"))), TAVLI)
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
        RotationMatch.new(3, TAVLI).start_next_game()


def test_bad_match_length_is_one_clear_error():
    for length in (0, -1, True, "5"):
        with pytest.raises(FlowError, match="tavli match length"):
            RotationMatch.new(length, TAVLI)


# -- Tabla (docs/rules.md 10.4): backgammon, Gul Bara, Tapa, in turn, no cube ---------------------------------------
BACKGAMMON, GULBARA, TAPA = (variant_rules(name) for name in ("backgammon", "gulbara", "tapa"))


def tabla_at(text: str, turn: str, game_number: int, score=(0, 0), length=7) -> RotationMatch:
    rules = TABLA.rules(game_number)
    game = GameState.new(rules, opener=turn, position=board(rules, text, turn=turn))
    return RotationMatch(MatchState(game, length, score, game_number), TABLA)


def test_tabla_rotates_backgammon_gulbara_tapa_backgammon():
    assert TABLA.variants == ("backgammon", "gulbara", "tapa")
    assert [TABLA.variant(n) for n in range(1, 8)] == ["backgammon", "gulbara", "tapa"] * 2 + ["backgammon"]
    match = RotationMatch.new(7, TABLA)
    assert match.variant == "backgammon" and match.game.phase == "opening" and match.next_variant == "gulbara"
    for number, variant in enumerate(["backgammon", "gulbara", "tapa", "backgammon"], start=1):
        assert match.game_number == number and match.variant == variant
        assert match.game.position == start_position(match.game.rules, match.game.position.turn)
        won = GameState.new(match.game.rules, opener="X", position=board(match.game.rules, "1:X 20:OOOOO", turn="X"))
        match = finish(RotationMatch(replace_game(match, won), TABLA)).start_next_game()
        assert match.game.phase == "roll" and match.game.position.turn == "X"  # the winner opens the next


def test_tabla_games_have_no_cube_and_keep_their_other_rules():
    """Backgammon keeps its backgammons and its opening with the opening dice; Tapa its mother and backgammons."""
    assert not any(rules.cube or rules.crawford for rules in TABLA.games)
    assert TABLA.rules(1) == BACKGAMMON.replace(cube=False, crawford=False)
    assert TABLA.rules(1).backgammons and TABLA.rules(1).opening == "use-opening-dice"
    assert TABLA.rules(2) == GULBARA and GULBARA.doubles == "cascade"
    assert TABLA.rules(3) == TAPA.replace(cube=False, crawford=False)
    assert TABLA.rules(3).mother_points == 3 and TABLA.rules(3).backgammons


def test_tabla_backgammon_win_counts_three():
    # X bears off its last checker while an O checker is still in X's home board (points 1..6 as X counts them):
    # a backgammon.
    match = tabla_at("1:X 3:O 12:OOOOOOOOOOOOOO", "X", game_number=1)
    match = finish(match)
    assert match.game.result.kind == "backgammon" and match.score == (3, 0)
    assert match.results[0][0] == "backgammon"


def test_tabla_tapa_mother_win_counts_three():
    # Tapa: O's mother alone on its start point (O's 24 = X's 1); X pins it with 2/1 after leaving home.
    match = tabla_at("1:O 2:X 6:" + "X" * 14 + " 20:" + "O" * 14, "X", game_number=3)
    match = match.rolled((2, 1)).play("2/1")
    assert match.game.result.kind == "mother" and match.score == (3, 0)


def test_tabla_tapa_draw_scores_nothing_and_backgammon_follows_with_an_opening_roll():
    match = tabla_at("24:XO 1:O 3:X 10:" + "X" * 13 + " 15:" + "O" * 13, "X", game_number=3, score=(2, 1))
    match = match.rolled((2, 1)).play("3/1")
    assert match.game.result.kind == "draw" and match.score == (2, 1)
    match = match.start_next_game()
    assert match.game_number == 4 and match.variant == "backgammon" and match.game.phase == "opening"


def play_games(match: RotationMatch, games: int, seed: int) -> RotationMatch:
    """``match`` played on by random legal moves and random dice until ``games`` more games have begun (or it ends)."""
    import random

    source, chooser = random.Random(seed), random.Random(seed + 1)
    target = match.game_number + games
    while match.game_number < target and not match.is_over:
        if match.game.is_over:
            match = match.start_next_game()
        elif match.game.phase in ("opening", "roll"):
            match = match.roll(source)
        else:
            match = match.play(chooser.choice(match.game.moves))
    return match


def test_a_rotation_match_snapshot_round_trips_with_its_rotation():
    from tapa_ai.rules.rotations import parse_rotation

    for seed, rotation in enumerate((TABLA, TAVLI, parse_rotation("tapa,fevga"))):
        match = play_games(RotationMatch.new(15, rotation), 3, seed)
        assert len(match.played) == 3 and [g.rules for g in match.played] == [rotation.rules(n) for n in (1, 2, 3)]
        data = match.to_dict()
        assert data["format"] == "tapa-ai/rotation" and data["rotation"] == rotation.to_data()
        again = RotationMatch.from_dict(data)
        assert again.rotation == rotation and again.to_dict() == data and again.variant == rotation.variant(4)


def test_an_old_tavli_snapshot_reads_as_the_tavli_rotation():
    from tapa_ai.flow.snapshots import SnapshotError

    data = play_games(RotationMatch.new(15, TAVLI), 2, 5).to_dict()
    old = {**data, "format": "tapa-ai/tavli", "rotation": ["portes", "plakoto", "fevga"]}
    assert RotationMatch.from_dict(old).rotation == TAVLI
    with pytest.raises(SnapshotError, match="rotation"):
        RotationMatch.from_dict({**old, "rotation": ["portes", "fevga", "plakoto"]})


def test_a_snapshot_whose_games_are_not_its_rotations_is_one_line():
    from tapa_ai.flow.snapshots import SnapshotError

    data = RotationMatch.new(3, TABLA).to_dict()
    with pytest.raises(SnapshotError, match="game 1 of the tavli match is portes .*got backgammon"):
        RotationMatch.from_dict({**data, "rotation": "tavli"})
    with pytest.raises(SnapshotError, match="unknown variant 'chess'"):
        RotationMatch.from_dict({**data, "rotation": ["backgammon", "chess"]})
