"""The match equity table of a rotation (tapa_ai/cube/rotation_met.py: Tavli, Tabla, any list of games) and checker
play by the score (``choose_at_score``).

The table is checked by hand at small scores (a draw's next game included), against the match flow itself
(tapa_ai/flow/rotation.py played out with each game's result rates: ``flow_equities``), for Tavli, Tabla and rotations
of one, two and four games, against the plain cubeless table of tapa_ai/cube/met.py where the
opener and the rotation cannot matter, and for its symmetry; the score-aware bot against the ``wins`` bot at
double match point (where only winning counts) and against money play where the values are affine in the points.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tapa_ai.bots.search import NetBot
from tapa_ai.bots.spec import make_bot
from tapa_ai.bots.rotation import make_rotation_player
from tapa_ai.cube.met import ResultRates, build_met
from tapa_ai.cube.rotation_met import (OPENING_ROLL, OPENS, RECEIVES, RotationScore, build_rotation_met, rotation_met,
                                       rotation_rates)
from tapa_ai.rules.rotations import ROTATIONS, parse_rotation
from tapa_ai.movegen import PositionBatch
from tapa_ai.movegen.generate import generate
from tapa_ai.rules import variant_rules
from tapa_ai.rules.outcomes import outcome_points

# Portes, Plakoto (draws, mother wins of 2), Fevga: made-up rates with clear differences.
RATES = (ResultRates(0.70, 0.28, 0.02, 2, 0.0, first_mover=0.56),
         ResultRates(0.55, 0.38, 0.07, 2, 0.02, first_mover=0.53),
         ResultRates(0.80, 0.20, 0.00, 3, 0.0, first_mover=0.60))


@pytest.fixture(scope="module")
def table():
    return build_rotation_met(RATES, max_away=9)


def test_tavli_table_one_away_each_is_the_next_game_by_its_first_mover_rate(table):
    for g, rates in enumerate(RATES):
        d, f = rates.draw, rates.first_mover
        after_draw = 0.5  # 1-away each, an opening roll: a coin toss by symmetry, whatever the next game
        assert table.equity(1, 1, g, OPENS) == pytest.approx((1 - d) * f + d * after_draw)
        assert table.equity(1, 1, g, RECEIVES) == pytest.approx((1 - d) * (1 - f) + d * after_draw)
        assert table.equity(1, 1, g, OPENING_ROLL) == pytest.approx(0.5)


def test_tavli_table_a_draw_moves_the_rotation_on_by_hand(table):
    # Plakoto next (draws 2%), the side needing 2 against 1 opens. A win of 2 points (gammon or mother win)
    # ends the match; a single leaves 1-1 with the side opening Fevga (no draws: its first-mover rate); a loss
    # ends it; a draw leaves 2-1 before Fevga with an opening roll (docs/rules.md, the Tavli match), worth
    # half of (Fevga's gammon share + its single share times Portes opened at 1-1): the first mover's chance
    # and the second's sum to one.
    plakoto, fevga, portes = RATES[1], RATES[2], RATES[0]
    assert (plakoto.single, plakoto.draw, plakoto.first_mover) == (0.55, 0.02, 0.53)
    fevga_after_draw = 0.5 * (0.20 + 0.80 * 0.56)  # fevga.gammon + fevga.single * portes.first_mover
    assert fevga_after_draw == pytest.approx(0.5 * (fevga.gammon + fevga.single * portes.first_mover))
    expected = 0.98 * 0.53 * (0.45 + 0.55 * 0.60) + 0.02 * fevga_after_draw
    assert table.equity(2, 1, 1, OPENS) == pytest.approx(expected, abs=1e-12)
    expected_receiving = 0.98 * 0.47 * (0.45 + 0.55 * 0.60) + 0.02 * fevga_after_draw
    assert table.equity(2, 1, 1, RECEIVES) == pytest.approx(expected_receiving, abs=1e-12)


def test_tavli_table_two_away_against_one_away_by_hand(table):
    # Fevga next (no draws), the side needing 2 opens: a gammon wins at once; a single leaves 1-1 with the side
    # opening Portes; a loss ends the match.
    f, s, gammon = RATES[2].first_mover, RATES[2].single, RATES[2].gammon
    portes_opened = RATES[0].first_mover  # 1-away each, Portes next, the side opens (Portes has no draws)
    assert table.equity(2, 1, 2, OPENS) == pytest.approx(f * (gammon + s * portes_opened))
    assert table.equity(2, 1, 2, RECEIVES) == pytest.approx((1 - f) * (gammon + s * portes_opened))


# -- the match flow as the oracle -----------------------------------------------------------------------------
def flow_equities(rates, length: int, rotation=ROTATIONS["tavli"], max_draws: int = 12) -> dict:
    """X's chance to win a match of ``rotation`` to ``length`` from each score (x, o) before game ``number`` opened by
    ``opener`` ("X", "O" or None for an opening roll), computed by playing the match flow itself
    (tapa_ai/flow/rotation.py: the scoring, the variant of the next game, who opens it, the match end), every game
    ended with each result its variant's ``rates`` give (a variant's rates by its name). A run of more than
    ``max_draws`` draws in a row counts 1/2 (its chance is far below the tolerance)."""
    from tapa_ai.flow.game import GameState
    from tapa_ai.flow.match import MatchState
    from tapa_ai.flow.rotation import RotationMatch
    from tapa_ai.rules.position import GameResult

    memo: dict = {}

    def ended(tavli: RotationMatch, result: GameResult) -> RotationMatch:
        over = GameState(tavli.game.position.with_changes(result=result), "over", result=result)
        return tavli.with_match(tavli.match._act("move", lambda game: over))

    def after(tavli: RotationMatch, draws: int) -> float:
        if tavli.is_over:
            return 1.0 if tavli.winner == "X" else 0.0
        return value(tavli.start_next_game(), draws)

    def value(tavli: RotationMatch, draws: int) -> float:
        game = tavli.game
        opener = game.position.turn if game.phase == "roll" else None
        key = (tavli.score, tavli.game_number % len(rotation), opener, draws)
        if key in memo:
            return memo[key]
        if draws > max_draws:
            return 0.5
        if opener is None:  # an opening roll: either side moves first, evenly
            result = 0.5 * sum(value(tavli.with_match(replace(tavli.match, game=GameState.new(game.rules, opener=side))),
                                     draws) for side in "XO")
        else:
            r = rates[tavli.variant]
            second = "O" if opener == "X" else "X"
            result = r.draw * after(ended(tavli, GameResult(None, "draw", 0)), draws + 1)
            for winner, share in ((opener, r.first_mover), (second, 1 - r.first_mover)):
                for kind, points, part in (("single", 1, r.single), ("gammon", 2, r.gammon),
                                           ("backgammon", r.top_points, r.top)):
                    if part:
                        result += (1 - r.draw) * share * part * after(
                            ended(tavli, GameResult(winner, kind, points)), 0)
        memo[key] = result
        return result

    def start(x: int, o: int, number: int, opener) -> float:
        game = GameState.new(rotation.rules(number), opener=opener)
        return value(RotationMatch(MatchState(game, length, (x, o), number), rotation), 0)

    return {(x, o, number, opener): start(x, o, number, opener) for x in range(length) for o in range(length)
            for number in range(1, len(rotation) + 1) for opener in ("X", "O", None)}


def assert_table_is_the_flow(table, rates_by_variant, length, rotation=ROTATIONS["tavli"]):
    oracle = flow_equities(rates_by_variant, length, rotation)
    openers = {"X": OPENS, "O": RECEIVES, None: OPENING_ROLL}
    for (x, o, number, opener), expected in oracle.items():
        got = table.equity(length - x, length - o, number - 1, openers[opener])
        assert got == pytest.approx(expected, abs=1e-9), (x, o, number, opener)


def test_tavli_table_is_the_match_flow_played_out(table):
    assert_table_is_the_flow(table, dict(zip(ROTATIONS["tavli"].variants, RATES)), 6)


def test_tavli_table_with_draws_in_every_game_is_the_match_flow_played_out():
    # Large, different draw rates in each game, so that the game after a draw weighs heavily at every score.
    rates = (ResultRates(0.70, 0.28, 0.02, 2, 0.15, first_mover=0.56),
             ResultRates(0.55, 0.38, 0.07, 2, 0.30, first_mover=0.53),
             ResultRates(0.90, 0.10, 0.00, 3, 0.05, first_mover=0.65))
    assert_table_is_the_flow(build_rotation_met(rates, max_away=5), dict(zip(ROTATIONS["tavli"].variants, rates)), 5)


def test_tavli_table_is_symmetric(table):
    for a in range(1, 10):
        for b in range(1, 10):
            for g in range(3):
                assert table.equity(a, b, g, OPENS) == pytest.approx(1 - table.equity(b, a, g, RECEIVES), abs=1e-12)
                assert table.equity(a, b, g, OPENING_ROLL) == pytest.approx(
                    1 - table.equity(b, a, g, OPENING_ROLL), abs=1e-12)


def test_tavli_table_equals_the_plain_cubeless_table_when_neither_the_game_nor_the_opener_matters():
    rates = ResultRates(0.6, 0.3, 0.1, 2, first_mover=0.5)
    tavli = build_rotation_met((rates,) * 3, max_away=8)
    plain = build_met(rates, max_away=8, cube=False, crawford=False)
    for o in (OPENS, RECEIVES, OPENING_ROLL):
        for g in range(3):
            assert np.allclose(tavli.table[o, g, 1:, 1:], plain.pre_crawford(), atol=1e-12)


def test_tavli_table_needing_fewer_points_is_better(table):
    for o in range(3):
        for g in range(3):
            inner = table.table[o, g, 1:, 1:]
            assert (np.diff(inner, axis=0) < 0).all() and (np.diff(inner, axis=1) > 0).all()


def test_tavli_table_opening_is_worth_something(table):
    assert all(table.equity(3, 3, g, OPENS) > table.equity(3, 3, g, RECEIVES) for g in range(3))


def test_a_bad_tavli_table_request_is_one_clear_error(table):
    with pytest.raises(ValueError, match="at least one game"):
        build_rotation_met(())
    with pytest.raises(ValueError, match="2 variant names for 3 games"):
        build_rotation_met(RATES, variants=("portes", "plakoto"))
    with pytest.raises(ValueError, match="max_away"):
        build_rotation_met(RATES, max_away=0)
    with pytest.raises(ValueError, match="up to 9 away"):
        table.lookup(10, 1, 0, OPENS)


def test_class_values_read_the_table_at_the_score_the_game_would_leave(table):
    points = outcome_points(variant_rules("plakoto"))  # 1 2 2 -1 -2 -2 0 (draw)
    values = table.class_values(points, [3], [2], 1)[0]  # plakoto (rotation index 1); fevga next
    assert values[0] == pytest.approx(table.equity(2, 2, 2, OPENS))
    assert values[1] == values[2] == pytest.approx(table.equity(1, 2, 2, OPENS))
    assert values[3] == pytest.approx(table.equity(3, 1, 2, RECEIVES))
    assert values[4] == values[5] == 0.0  # a gammon loss at 2-away ends the match
    assert values[6] == pytest.approx(table.equity(3, 2, 2, OPENING_ROLL))
    score = RotationScore(table, [3, 1], [2, 1], 1)
    assert np.array_equal(score.take([0]).class_values(points), values[None, :])


def test_the_shipped_tavli_table_is_built_from_the_measured_rates_of_the_rotation():
    from tapa_ai.cube.met import VARIANT_RATES

    shipped = rotation_met("tavli")
    assert shipped.rates == rotation_rates(ROTATIONS["tavli"]) == (VARIANT_RATES["portes"], VARIANT_RATES["plakoto"],
                                              VARIANT_RATES["fevga"])  # Portes, Plakoto, Fevga, in turn
    assert_table_is_the_flow(shipped, {variant: VARIANT_RATES[variant] for variant in ("portes", "plakoto", "fevga")}, 5)
    assert [r.top_points for r in shipped.rates][:2] == [2, 2]  # a backgammon counts 2 in Portes
    assert all(0.45 < r.first_mover < 0.7 for r in shipped.rates)
    assert shipped.max_away >= 7


# -- checker play by the score ------------------------------------------------------------------------------
def test_tabla_table_is_the_match_flow_played_out():
    # Backgammon (backgammons of 3), Gul Bara (no draws), Tapa (mother wins and backgammons of 3, draws).
    tabla = ROTATIONS["tabla"]
    rates = (ResultRates(0.68, 0.27, 0.05, 3, 0.0, first_mover=0.51),
             ResultRates(0.62, 0.38, 0.00, 3, 0.0, first_mover=0.535),
             ResultRates(0.75, 0.17, 0.08, 3, 0.04, first_mover=0.49))
    built = build_rotation_met(rates, max_away=5, variants=tabla.variants)
    assert_table_is_the_flow(built, dict(zip(tabla.variants, rates)), 5, tabla)


@pytest.mark.parametrize("games", ["tapa", "tapa,fevga", "plakoto,narde,gulbara,backgammon"])
def test_any_rotations_table_is_its_match_flow_played_out(games):
    rotation = parse_rotation(games)
    made_up = [ResultRates(0.7 - 0.05 * i, 0.25, 0.05 + 0.05 * i, 3 if i % 2 else 2, 0.03 * (i % 2),
                           first_mover=0.5 + 0.03 * i) for i in range(len(rotation))]
    built = build_rotation_met(made_up, max_away=4, variants=rotation.variants)
    assert built.games == len(rotation)
    assert_table_is_the_flow(built, dict(zip(rotation.variants, made_up)), 4, rotation)


def test_the_shipped_tabla_table_is_built_from_the_measured_rates_with_each_games_points():
    from tapa_ai.cube.met import VARIANT_RATES

    tabla = rotation_met("tabla")
    assert tabla.variants == ("backgammon", "gulbara", "tapa")
    assert tabla.rates == (VARIANT_RATES["backgammon"], VARIANT_RATES["gulbara"], VARIANT_RATES["tapa"])
    assert [r.top_points for r in tabla.rates] == [3, 3, 3]  # backgammons; Gul Bara has none; Tapa's mother, 3
    assert rotation_met(ROTATIONS["tabla"]) is tabla  # built once
    assert_table_is_the_flow(tabla, {v: VARIANT_RATES[v] for v in tabla.variants}, 4, ROTATIONS["tabla"])


def random_afterstates(variant: str, count: int, seed: int):
    """Afterstates of positions from a few random plies into games of ``variant``."""
    from tapa_ai.rules.position import start_position

    rules = variant_rules(variant)
    rng = np.random.default_rng(seed)
    batch = PositionBatch.from_positions([start_position(rules, "X")] * count)
    for _ in range(int(rng.integers(6, 30))):
        afterstates = generate(batch, rng.integers(1, 7, size=(len(batch), 2)).astype(np.int8))
        rows = afterstates.offsets[:-1] + (rng.random(len(batch)) * np.diff(afterstates.offsets)).astype(np.int64)
        rows = rows[~afterstates.game_over[rows]]
        batch = afterstates.positions.take(rows).flipped()
    return generate(batch, rng.integers(1, 7, size=(len(batch), 2)).astype(np.int8))


@pytest.mark.parametrize("variant,spec", [("plakoto", "net:plakoto"), ("fevga", "net:fevga")])
def test_at_double_match_point_the_score_aware_bot_plays_for_wins(table, variant, spec):
    rules = variant_rules(variant)
    bot, wins = make_bot(spec, rules), make_bot(spec + ",wins", rules)
    afterstates = random_afterstates(variant, 300, 5)
    score = RotationScore(table, np.ones(len(afterstates.offsets) - 1), 1, ROTATIONS["tavli"].variants.index(variant))
    rng = np.random.default_rng(0)
    at_score = bot.choose_at_score(afterstates, rng, score)
    _, _, win_equities = wins.ranked(afterstates)
    # The same value as the wins bot's choice (a draw is worth 1/2 at DMP, nothing to P(win) - P(loss): both 0
    # relative to a win and a loss); rows may differ only where the two are tied.
    assert np.allclose(win_equities[at_score], win_equities[wins.choose(afterstates, rng)], atol=1e-9)
    money = bot.choose(afterstates, rng)
    assert (money != at_score).any(), "the money bot plays for gammons somewhere; at DMP it should not"


def test_values_affine_in_the_points_choose_as_money_play():
    rules = variant_rules("fevga")
    bot = make_bot("net:fevga", rules)
    afterstates = random_afterstates("fevga", 200, 6)

    class Affine:
        def class_values(self, points):
            return np.tile(0.5 + 0.1 * np.asarray(points), (len(afterstates.offsets) - 1, 1))

    rng = np.random.default_rng(1)
    assert np.array_equal(bot.choose_at_score(afterstates, rng, Affine()), bot.choose(afterstates, rng))


def test_money_play_option_ignores_the_score(table):
    bot = make_bot("net:fevga,money_play", variant_rules("fevga"))
    assert isinstance(bot, NetBot) and not bot.score_play
    afterstates = random_afterstates("fevga", 100, 7)
    score = RotationScore(table, np.ones(len(afterstates.offsets) - 1), 1, 2)
    assert np.array_equal(bot.choose_at_score(afterstates, np.random.default_rng(2), score),
                          bot.choose(afterstates, np.random.default_rng(2)))
    for name, rotation in ROTATIONS.items():
        player = make_rotation_player(f"net:{name},money_play", rotation)
        assert all(not b.score_play for b in player.players.values())
        assert all(b.score_play for b in make_rotation_player(f"net:{name}", rotation).players.values())
    with pytest.raises(Exception, match="money_play is an option of net: bots"):
        make_bot("heuristic,money_play", variant_rules("fevga"))
