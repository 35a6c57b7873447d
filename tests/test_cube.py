"""The doubling cube: who may double when, caps, Crawford, scoring times the cube, and cube decisions.

Decisions are checked on probabilities whose right answer follows by hand
(Janowski's formulas, last-roll races whose winning chances are counted
over the 36 rolls with the reference move generator), not on a network.
"""

import random

import numpy as np
import pytest

from tapa_ai.cube.decisions import CubeSituation, cube_equities
from tapa_ai.cube.equity import (OWNER_CENTRED, OWNER_MOVER, OWNER_OPPONENT, janowski_live, money_live_by_levels,
                                 outcome_split, top_points)
from tapa_ai.flow import GameState, play_match
from tapa_ai.rules.outcomes import outcome_points
from tapa_ai.rules.outcomes import top_points as model_top_points
from tapa_ai.notation.mini import board
from tapa_ai.rules import GameResult, variant_rules
from tapa_ai.rules.cube import CUBE_VALUES, Cube, CubeError, MatchScore, double_refusal
from tapa_ai.rules.reference import legal_moves

TAPA, BACKGAMMON, PLAKOTO = (variant_rules(v) for v in ("tapa", "backgammon", "plakoto"))


# -- the cube --------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [0, 3, 6, 128, -2, 2.0, True, "2"])
def test_cube_value_must_be_a_power_of_two_up_to_64(value):
    with pytest.raises(CubeError, match="power of 2 from 1 to 64"):
        Cube(value, "X")


def test_centred_cube_is_one_and_nobody_owns_it():
    assert Cube().centred and Cube().value == 1
    with pytest.raises(CubeError, match="centred"):
        Cube(1, "X")
    with pytest.raises(CubeError, match="no owner"):
        Cube(4, None)
    with pytest.raises(CubeError, match="'X', 'O' or null"):
        Cube(2, "Z")


def test_either_side_may_double_a_centred_cube():
    assert Cube().may_double("X") and Cube().may_double("O")


def test_only_the_owner_may_redouble():
    cube = Cube(2, "O")
    assert cube.may_double("O")
    assert cube.double_refusal("X") == "not your cube: O owns it at 2"


def test_take_doubles_the_cube_and_the_taker_owns_it():
    assert Cube().taken_by("O") == Cube(2, "O")
    assert Cube(2, "O").taken_by("X") == Cube(4, "X")
    with pytest.raises(CubeError, match="not your cube"):
        Cube(2, "O").taken_by("O")  # X doubling a cube O owns


def test_nobody_may_double_a_cube_at_64():
    assert Cube(64, "X").double_refusal("X") == "the cube is at 64, its highest value"
    cube = Cube()
    for taker in ["O", "X", "O", "X", "O", "X"]:
        cube = cube.taken_by(taker)
    assert cube == Cube(64, "X") and CUBE_VALUES[-1] == 64
    with pytest.raises(CubeError, match="highest value"):
        cube.taken_by("O")


@pytest.mark.parametrize("kind,points", [("single", 1), ("gammon", 2), ("backgammon", 3), ("mother", 3),
                                         ("mother", 2)])
@pytest.mark.parametrize("value", CUBE_VALUES)
def test_every_kind_of_win_is_multiplied_by_the_cube(kind, points, value):
    cube = Cube(value, None if value == 1 else "O")
    assert cube.points(GameResult("X", kind, points)) == points * value


@pytest.mark.parametrize("value", CUBE_VALUES)
def test_a_draw_scores_nothing_whatever_the_cube(value):
    assert Cube(value, None if value == 1 else "X").points(GameResult(None, "draw", 0)) == 0


def test_the_game_flow_scores_the_result_times_the_cube():
    # A tapa mother win (3 points) on a cube of 4: 12 points.
    position = board("tapa", "3:X 20:XX 1:O 13:OOOO")
    game = GameState(position, "roll", cube_value=2, cube_owner="X").double().take().rolled((2, 1))
    game = game.play("3/1")
    assert game.result.kind == "mother" and game.cube_value == 4 and game.points_won == 12
    assert Cube(game.cube_value, game.cube_owner).points(game.result) == game.points_won


def test_a_passed_double_scores_the_cube_before_the_double():
    game = GameState(board("backgammon", "6:X 24:O"), "roll", cube_value=4, cube_owner="X").double().drop()
    assert game.winner == "X" and game.points_won == 4 and game.result.kind == "single"


def test_no_doubling_in_a_rule_set_without_the_cube():
    assert "no cube" in double_refusal(PLAKOTO, Cube(), "X")
    assert double_refusal(TAPA, Cube(), "X") is None


# -- the match score and Crawford ---------------------------------------------------------------------
def test_the_game_after_first_reaching_length_minus_one_is_the_crawford_game():
    score = MatchScore(7, (4, 2)).after_game("X", 2, TAPA)
    assert score.score == (6, 2) and score.crawford and score.double_refusal() == "no doubling in the Crawford game"
    after = score.after_game("O", 1, TAPA)
    assert not after.crawford and after.post_crawford and after.double_refusal() is None


def test_the_crawford_game_happens_only_once():
    score = MatchScore(5, (4, 0), crawford=True).after_game("O", 1, BACKGAMMON)
    score = score.after_game("O", 2, BACKGAMMON)  # O reaches 3 = length - 2: nothing
    score = score.after_game("O", 1, BACKGAMMON)  # O reaches 4 = length - 1 after Crawford: no second one
    assert score.score == (4, 4) and not score.crawford and score.post_crawford


def test_a_drawn_crawford_game_still_was_the_crawford_game():
    score = MatchScore(7, (6, 3), crawford=True).after_game(None, 0, TAPA)
    assert score.score == (6, 3) and not score.crawford and score.post_crawford


def test_no_crawford_game_without_the_crawford_rule():
    rules = TAPA.replace(crawford=False)
    assert not MatchScore(7, (5, 0)).after_game("X", 1, rules).crawford


def test_a_gammon_jumping_past_length_minus_one_brings_no_crawford_game():
    assert not MatchScore(7, (4, 0)).after_game("X", 4, TAPA).crawford  # 8: the match is over
    assert MatchScore(7, (4, 0)).after_game("X", 4, TAPA).winner == "X"


def test_match_score_refuses_impossible_states():
    with pytest.raises(CubeError, match="nobody is at 6"):
        MatchScore(7, (3, 5), crawford=True)
    with pytest.raises(CubeError, match="both sides are at 6"):
        MatchScore(7, (6, 6), crawford=True)
    with pytest.raises(CubeError, match="both sides have reached"):
        MatchScore(3, (3, 4))
    with pytest.raises(CubeError, match="money play"):
        MatchScore(0, (1, 0))


@pytest.mark.parametrize("data,fragment", [
    ({"length": 7, "score": {"X": 7, "O": 5}}, "score.X: 7 has reached the match length 7"),
    ({"length": 7, "score": {"X": 3, "O": 9}}, "score.O: 9 has reached"),
    ({"length": 7, "score": {"X": 3, "O": 5}, "crawford": True}, "nobody is at 6"),
    ({"length": 0, "score": {"X": 0, "O": 0}}, "length: must be an integer >= 1"),
    ({"length": 7, "score": {"X": -1, "O": 0}}, "score.X: must be an integer >= 0"),
    ({"length": 7, "score": {"X": 1}}, "score: must be an object"),
    ({"length": 7, "score": {"X": 1, "O": 0}, "crawford": "no"}, "crawford: must be true or false"),
    ({"length": 7, "turn": "X"}, "unknown key(s) ['turn']"),
])
def test_bad_match_requests_say_what_is_wrong(data, fragment):
    with pytest.raises(CubeError, match="match") as error:
        MatchScore.from_request(data, TAPA)
    assert fragment in str(error.value)


def test_a_side_at_length_minus_one_after_the_crawford_game_is_post_crawford():
    assert MatchScore.from_request({"length": 7, "score": {"X": 6, "O": 2}}, TAPA).post_crawford
    assert MatchScore.from_request({"length": 7, "score": {"X": 6, "O": 2}, "crawford": True}, TAPA).crawford
    assert not MatchScore.from_request({"length": 7, "score": {"X": 5, "O": 2}}, TAPA).post_crawford
    with pytest.raises(CubeError, match="no Crawford rule"):
        MatchScore.from_request({"length": 7, "score": {"X": 6, "O": 2}, "crawford": True},
                                TAPA.replace(crawford=False))


class RandomCube:
    """A cube policy doubling and passing at random (seeded), to exercise every cube path."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def offer_double(self, game, match):
        return self.rng.random() < 0.3

    def accept_double(self, game, match):
        return self.rng.random() < 0.7


@pytest.mark.parametrize("variant,seed", [("tapa", 1), ("tapa", 2), ("backgammon", 3), ("backgammon", 4)])
def test_match_score_agrees_with_the_game_flow_over_whole_matches(variant, seed):
    rules = variant_rules(variant)
    rng = random.Random(seed)
    match = play_match(rules, 7, lambda position, dice, moves: rng.choice(moves), rng, RandomCube(seed))
    assert match.is_over
    score = MatchScore(7)
    for record in match.results:
        assert record.crawford == score.crawford, record
        score = score.after_game(record.winner, record.points, rules)
    assert score.score == match.score and score.winner == match.winner


# -- decisions: Janowski, money play --------------------------------------------------------------
def distribution(win_single=0.0, win_gammon=0.0, win_top=0.0, lose_single=0.0, lose_gammon=0.0, lose_top=0.0,
                 draw=None):
    values = [win_single, win_gammon, win_top, lose_single, lose_gammon, lose_top]
    if draw is not None:
        values.append(draw)
    return np.array([values])


def money(probabilities, rules=BACKGAMMON, value=1, owner=OWNER_CENTRED, cube_life=0.68):
    return cube_equities(probabilities, CubeSituation.money_play(rules, value, owner), cube_life)


def test_top_points_agree_with_the_model():
    for rules in (TAPA, BACKGAMMON, PLAKOTO):
        assert top_points(rules) == model_top_points(rules)
        win, lose, draw, points = outcome_split(np.eye(len(outcome_points(rules)))[:1], rules)
        assert points.tolist() == [1, 2, top_points(rules)] and win[0, 0] == 1


@pytest.mark.parametrize("p,double,take", [(0.5, False, True), (0.6, True, True), (0.75, True, True),
                                           (0.76, True, False), (0.4, False, True)])
def test_dead_cube_last_roll_doubles_above_half_and_takes_up_to_three_quarters(p, double, take):
    equities = money(distribution(win_single=p, lose_single=1 - p), cube_life=0.0)
    assert equities.no_double[0] == pytest.approx(2 * p - 1)
    assert equities.double_take[0] == pytest.approx(2 * (2 * p - 1)) and equities.double_pass[0] == 1
    assert bool(equities.double[0]) == double and bool(equities.take[0]) == take


@pytest.mark.parametrize("p,take", [(0.79, True), (0.8, True), (0.81, False)])
def test_live_cube_take_point_is_twenty_percent_without_gammons(p, take):
    # Janowski's live take point (L - 1/2) / (W + L + 1/2) = 0.2 with W = L = 1.
    equities = money(distribution(win_single=p, lose_single=1 - p), cube_life=1.0)
    assert bool(equities.take[0]) == take
    if p == 0.8:
        assert equities.double_take[0] == pytest.approx(equities.double_pass[0])


def test_janowski_live_cube_points_by_hand():
    w, l = np.array([1.4]), np.array([1.2])
    take_point, cash_point = (1.2 - 0.5) / (1.4 + 1.2 + 0.5), (1.2 + 1) / (1.4 + 1.2 + 0.5)
    for owner, at, value in [(OWNER_CENTRED, take_point, -1.0), (OWNER_CENTRED, cash_point, 1.0),
                             (OWNER_MOVER, cash_point, 1.0), (OWNER_OPPONENT, take_point, -1.0),
                             (OWNER_CENTRED, 0.0, -1.2), (OWNER_MOVER, 1.0, 1.4)]:
        assert janowski_live(np.array([at]), w, l, np.array([owner]))[0] == pytest.approx(value)


def test_too_good_to_double_when_gammons_beat_the_cash():
    equities = money(distribution(win_gammon=0.9, lose_single=0.1), cube_life=0.0)
    assert equities.no_double[0] == pytest.approx(0.9 * 2 - 0.1)
    assert equities.too_good[0] and not equities.double[0] and not equities.take[0]
    assert equities.equity[0] == pytest.approx(1.7)


def test_a_sure_single_win_is_doubled_out():
    equities = money(distribution(win_single=1.0))
    assert equities.double[0] and not equities.take[0] and equities.equity[0] == 1.0


def test_the_owner_cannot_be_doubled_and_the_cube_at_64_cannot_turn():
    equities = money(distribution(win_single=0.7, lose_single=0.3), value=64, owner=OWNER_MOVER)
    assert not equities.may_double[0] and not equities.double[0]
    assert equities.equity[0] == equities.no_double[0]


def test_money_equities_scale_with_the_cube():
    probabilities = distribution(win_single=0.5, win_gammon=0.1, lose_single=0.35, lose_gammon=0.05)
    one, four = money(probabilities, value=1, owner=OWNER_MOVER), money(probabilities, value=4, owner=OWNER_MOVER)
    for name in ("no_double", "double_take", "double_pass"):
        assert getattr(four, name)[0] == pytest.approx(4 * getattr(one, name)[0])


def test_a_draw_scales_the_game_but_not_the_cash():
    # Tapa has draws (both mothers pinned): nobody scores, whatever the cube.
    base = money(distribution(win_single=0.8, lose_single=0.2, draw=0.0), TAPA, cube_life=0.0)
    drawn = money(distribution(win_single=0.72, lose_single=0.18, draw=0.1), TAPA, cube_life=0.0)
    assert drawn.no_double[0] == pytest.approx(0.9 * base.no_double[0])
    assert drawn.double_take[0] == pytest.approx(0.9 * base.double_take[0])
    assert drawn.double_pass[0] == base.double_pass[0] == 1.0


def test_the_level_recursion_is_janowskis_live_cube():
    rng = np.random.default_rng(0)
    probabilities = rng.dirichlet(np.ones(6), size=300)
    win, lose, draw, points = outcome_split(probabilities, BACKGAMMON)
    from tapa_ai.cube.equity import average_values as _average_values

    p, w, l, _ = _average_values(win, lose, points)
    for owner in (OWNER_CENTRED, OWNER_MOVER, OWNER_OPPONENT):
        closed = janowski_live(p, w, l, np.full(300, owner))
        recursion = money_live_by_levels(win, lose, draw, points, owner, levels=30)
        assert np.abs(closed - recursion).max() < 1e-6


def last_roll_chance(position):
    """The chance that the side to roll bears off its last checkers now (all 36 rolls, reference moves)."""
    wins = 0
    for first in range(1, 7):
        for second in range(1, 7):
            moves = legal_moves(position, (first, second))
            wins += any(move.position.result is not None for move in moves)
    return wins / 36


@pytest.mark.parametrize("layout,chance,double,take", [
    ("6:X 24:O", 27 / 36, True, True),    # 1-1, 2-1, 3-1, 4-1, 3-2 miss: a double and the last take
    ("5:X 24:O", 31 / 36, True, False),   # 1-1, 2-1, 3-1 miss: double, pass
    ("4:X 24:O", 34 / 36, True, False),   # only 2-1 misses
])
def test_last_roll_races_have_their_known_cube_actions(layout, chance, double, take):
    # O bears off next turn for sure: the cube is dead after this roll.
    position = board("backgammon", layout)
    assert last_roll_chance(position) == pytest.approx(chance)
    equities = money(distribution(win_single=chance, lose_single=1 - chance), cube_life=0.0)
    assert bool(equities.double[0]) == double and bool(equities.take[0]) == take


# -- decisions: match play ---------------------------------------------------------------------------
def match_situation(rules, away, opponent_away, value=1, owner=OWNER_CENTRED, post_crawford=False,
                    crawford_game=False):
    return CubeSituation(rules, np.array([value]), np.array([owner], dtype=np.int8), 7, np.array([away]),
                         np.array([opponent_away]), np.array([post_crawford]), np.array([crawford_game]))


@pytest.mark.parametrize("p,take", [(0.3, True), (0.5, True), (0.6, False)])
def test_post_crawford_trailer_doubles_at_once_and_the_leader_takes_below_half(p, take):
    # Trailer 2-away, leader 1-away: any win on a cube of 2 wins the match (DT = p), a pass is DMP (DP = 1/2).
    situation = match_situation(BACKGAMMON, 2, 1, post_crawford=True)
    equities = cube_equities(distribution(win_single=0.8 * p, win_gammon=0.2 * p, lose_single=1 - p), situation)
    assert equities.units == "mwc"
    assert equities.double_take[0] == pytest.approx(p) and equities.double_pass[0] == pytest.approx(0.5)
    assert equities.double[0]  # also at p > 1/2: the leader's pass still beats playing on for the trailer
    assert bool(equities.take[0]) == take


def test_nobody_doubles_in_the_crawford_game():
    situation = match_situation(TAPA, 3, 1, crawford_game=True)
    equities = cube_equities(distribution(win_single=0.9, lose_single=0.1), situation)
    assert not equities.may_double[0] and not equities.double[0]


def test_a_leader_whose_single_win_takes_the_match_gains_nothing_by_doubling():
    # 1-away post-Crawford: a single win already wins the match; the cube is dead for the leader.
    situation = match_situation(BACKGAMMON, 1, 4, post_crawford=True)
    equities = cube_equities(distribution(win_single=0.7, lose_single=0.3), situation)
    assert not equities.double[0]
    assert equities.double_pass[0] == 1.0


def test_match_decisions_are_symmetric_in_the_sides():
    # The doubler's chance in a position and the receiver's in the mirrored one add up to one.
    probabilities = distribution(win_single=0.55, win_gammon=0.15, lose_single=0.25, lose_gammon=0.05)
    mirrored = probabilities[:, [3, 4, 5, 0, 1, 2]]
    for away, opponent_away in [(7, 7), (3, 5), (5, 3), (2, 4)]:
        one = cube_equities(probabilities, match_situation(BACKGAMMON, away, opponent_away, 1, OWNER_CENTRED),
                            cube_life=0.0)
        two = cube_equities(mirrored, match_situation(BACKGAMMON, opponent_away, away, 1, OWNER_CENTRED),
                            cube_life=0.0)
        assert one.no_double[0] + two.no_double[0] == pytest.approx(1.0)


def test_money_decisions_of_a_net_bot_come_from_its_evaluation():
    from tapa_ai.bots.search import NetBot
    from tapa_ai.config import ModelConfig
    from tapa_ai.net.model import EvaluatorNet
    from tapa_ai.movegen import PositionBatch

    net = EvaluatorNet(ModelConfig(layers=1, hidden=8), BACKGAMMON, seed=1).eval()
    bot = NetBot(net)
    positions = PositionBatch.from_positions([board("backgammon", layout) for layout in
                                              ("6:X 24:O", "6:XX 1:X 24:O 19:OO", "13:XXXXX 12:OOOOO")])
    situation = CubeSituation.money_play(BACKGAMMON, np.ones(3, dtype=np.int64), np.zeros(3, dtype=np.int8))
    equities = bot.cube_equities(positions, situation)
    expected = cube_equities(bot.pre_roll_distributions(positions), situation, bot.cube_life)
    assert np.array_equal(bot.offer_double(positions, situation, None), expected.double)
    assert np.array_equal(bot.accept_double(positions, situation, None), expected.take)
    assert np.allclose(equities.no_double, expected.no_double)
    bot.cube = False
    assert not bot.offer_double(positions, situation, None).any() and bot.accept_double(positions, situation,
                                                                                          None).all()


def test_bots_without_an_evaluator_play_the_passive_cube():
    from tapa_ai.bots.spec import make_bot
    from tapa_ai.movegen import PositionBatch

    positions = PositionBatch.from_positions([board("backgammon", "6:X 24:O")])
    situation = CubeSituation.money_play(BACKGAMMON, 1, OWNER_CENTRED)
    for spec in ("random", "runner", "heuristic", "pubeval"):
        bot = make_bot(spec, BACKGAMMON)
        assert not bot.offer_double(positions, situation, None)[0] and bot.accept_double(positions, situation,
                                                                                           None)[0]





def test_a_bots_cube_plays_whole_matches_through_the_game_flow():
    from tapa_ai.cube.decisions import BotCubePolicy

    rules = BACKGAMMON
    rng = random.Random(5)
    policy = BotCubePolicy({"X": FixedCubeBot(double=True, take=True), "O": FixedCubeBot(double=False, take=False)})
    match = play_match(rules, 5, lambda position, dice, moves: rng.choice(moves), rng, policy)
    assert match.is_over
    # X doubles at its first chance and O passes: every game but the Crawford game is X's by a pass,
    # and only the Crawford game is played out.
    assert match.winner == "X" and match.score[0] >= 5
    for record in match.results:
        assert record.dropped != record.crawford
        assert record.crawford or (record.winner == "X" and record.points == 1)


class FixedCubeBot:
    """Answers every cube question the same way."""

    def __init__(self, double, take):
        self.double, self.take = double, take

    def offer_double(self, positions, situation, rng):
        assert len(positions) == 1 and len(situation) == 1
        return np.array([self.double])

    def accept_double(self, positions, situation, rng):
        return np.array([self.take])


def test_a_side_cannot_double_a_cube_the_other_side_owns():
    probabilities = distribution(win_single=0.9, lose_single=0.1)
    assert not money(probabilities, value=2, owner=OWNER_OPPONENT).may_double[0]
    equities = cube_equities(probabilities, match_situation(BACKGAMMON, 5, 5, 2, OWNER_OPPONENT))
    assert not equities.may_double[0] and not equities.double[0]


# -- found by mutation testing ---------------------------------------------------------------------
# Each test below fails on a mutant of tapa_ai/rules/cube.py that the rest of
# this file let through (docs/mutation-testing.md).

def test_a_cube_from_json_is_an_object_with_a_value_and_an_optional_owner():
    assert Cube.from_dict({"value": 1}) == Cube()
    assert Cube.from_dict({"value": 4, "owner": "O"}) == Cube(4, "O")
    with pytest.raises(CubeError, match=r"cube: must be an object .* got list"):
        Cube.from_dict([1, None])
    with pytest.raises(CubeError, match=r"unknown key\(s\) \['side'\]"):
        Cube.from_dict({"value": 2, "owner": "X", "side": "X"})
    with pytest.raises(CubeError, match="missing 'value'"):
        Cube.from_dict({"owner": None})
    with pytest.raises(CubeError, match="game.cube: cube value 3"):
        Cube.from_dict({"value": 3, "owner": "X"}, where="game.cube")


def test_a_side_that_reaches_exactly_the_length_wins_the_match():
    score = MatchScore(7, (5, 3)).after_game("X", 2, TAPA)
    assert score.score == (7, 3) and score.winner == "X" and score.is_over
    assert score.double_refusal() == "the match is over"
    assert MatchScore(7, (5, 6)).winner is None


def test_the_default_score_is_money_play_with_no_score():
    assert MatchScore() == MatchScore(0, (0, 0), False, False) == MatchScore.from_request(None)
    assert MatchScore().money and not MatchScore(1).money and not MatchScore(7).money
    assert MatchScore().after_game("O", 8, TAPA) == MatchScore()


@pytest.mark.parametrize("length", [-1, 2.0, True, None])
def test_a_match_length_is_an_integer_from_zero(length):
    with pytest.raises(CubeError, match="match length"):
        MatchScore(length)


@pytest.mark.parametrize("score", [(1, 2, 3), (1,), (-1, 0), (0, -2), (1.0, 0), (True, 0)])
def test_a_match_score_is_two_integers_from_zero(score):
    with pytest.raises(CubeError, match="must be two integers >= 0"):
        MatchScore(7, score)


@pytest.mark.parametrize("flags", [{"crawford": 1}, {"post_crawford": 0}, {"crawford": False, "post_crawford": "no"}])
def test_the_crawford_flags_are_true_or_false(flags):
    with pytest.raises(CubeError, match="must be true or false"):
        MatchScore(7, (6, 0), **flags)


def test_points_away_from_the_length():
    match = MatchScore(7, (3, 5))
    assert (match.away("X"), match.away("O")) == (4, 2)
    assert MatchScore(7, (7, 5)).away("X") == 0
    assert (MatchScore().away("X"), MatchScore().away("O")) == (0, 0)


def test_a_crawford_state_is_refused_by_a_rule_set_without_the_crawford_rule():
    no_crawford = TAPA.replace(crawford=False)
    for match in (MatchScore(7, (6, 0), crawford=True), MatchScore(7, (6, 0), post_crawford=True)):
        match.check_rules(TAPA)
        with pytest.raises(CubeError, match="game.crawford: the rule set .* has no Crawford rule"):
            match.check_rules(no_crawford, where="game")
    MatchScore(7, (5, 0)).check_rules(no_crawford)


@pytest.mark.parametrize("winner, points", [("X", -1), ("X", 1.0), ("X", True), (None, 1), ("Z", 1)])
def test_a_game_scores_a_whole_number_of_points_and_a_draw_scores_none(winner, points):
    with pytest.raises(CubeError, match="must be"):
        MatchScore(7, (1, 2)).after_game(winner, points, TAPA)


def test_a_two_point_match_has_a_crawford_game_after_the_first_point():
    score = MatchScore(2).after_game("O", 1, TAPA)
    assert score.score == (0, 1) and score.crawford
    assert MatchScore.from_request({"length": 2, "score": {"X": 1, "O": 0}}, TAPA).post_crawford
    # In a one-point match every side is at length - 1 from the start: there is no Crawford game.
    assert not MatchScore.from_request({"length": 1}, TAPA).post_crawford


def test_a_match_request_may_be_one_point_long_and_leave_out_the_score():
    assert MatchScore.from_request({"length": 1}, TAPA) == MatchScore(1, (0, 0))
    assert MatchScore.from_request({"length": 7}, TAPA) == MatchScore(7, (0, 0))


def test_a_match_request_without_a_rule_set_assumes_the_crawford_rule():
    assert MatchScore.from_request({"length": 7, "score": {"X": 2, "O": 6}}).post_crawford
    assert MatchScore.from_request({"length": 7, "score": {"X": 2, "O": 6}, "crawford": True}).crawford
