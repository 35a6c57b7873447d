"""n-ply search: the batched expectimax equals a brute-force one written on the reference generator."""

import numpy as np
import pytest

from tapa_ai.bots.base import BotError
from tapa_ai.bots.search import NetBot, filter_candidates
from tapa_ai.rules.rolls import ROLL_WEIGHTS, ROLLS
from tapa_ai.bots.spec import SPEC_FORMS, make_bot
from tapa_ai.config import ModelConfig
from tapa_ai.net.encoding import encode_positions
from tapa_ai.net.model import EvaluatorNet, evaluate
from tapa_ai.rules.outcomes import outcome_class, outcome_points, swap_sides
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.notation.mini import board
from tapa_ai.rules import variant_rules
from tapa_ai.rules.reference import legal_moves, next_turn


def small_net(variant, seed=3, hidden=16):
    layers = 1 if isinstance(hidden, int) else len(hidden)
    return EvaluatorNet(ModelConfig(layers=layers, hidden=hidden), variant_rules(variant), seed=seed).eval()


def brute_value(net, after, plies, cache, bearoff=False):
    """Value of an afterstate (``turn`` = the side that moved) from the mover's view, by plain recursion.

    With ``bearoff``: the database's value for a bear-off afterstate at 0 plies, and at every depth for one the
    two-sided table answers exactly (a leaf); the reply still chosen by its 0-ply value (NetBot.bearoff).
    """
    from tapa_ai.bearoff.evaluate import bearoff_distributions, bearoff_mask, exact_mask

    key = (after, plies, bearoff)
    if key in cache:
        return cache[key]
    points = outcome_points(net.rules).astype(np.float64)
    next_position = PositionBatch.from_positions([next_turn(after)]) if bearoff and after.result is None else None
    if after.result is not None:
        value = np.zeros(net.num_outcomes)
        value[outcome_class(after.result, after.turn)] = 1.0
    elif bearoff and bearoff_mask(next_position)[0] and (plies == 0 or exact_mask(next_position)[0]):
        value = swap_sides(bearoff_distributions(next_position)[1][0])
    elif plies == 0:
        probabilities, _ = evaluate(net, encode_positions([next_turn(after)]))
        value = swap_sides(probabilities[0].astype(np.float64))
    else:
        value = np.zeros(net.num_outcomes)
        for roll, weight in zip(ROLLS.tolist(), ROLL_WEIGHTS):
            replies = legal_moves(next_turn(after), roll)
            static = [brute_value(net, move.position, 0, cache, bearoff) for move in replies]
            best = int(np.argmax([v @ points for v in static]))
            reply = static[best] if plies == 1 else brute_value(net, replies[best].position, plies - 1, cache,
                                                                bearoff)
            value += weight * swap_sides(reply)
    cache[key] = value
    return value


SMALL = [
    ("tapa", "6:XX 3:X 22:OO 20:O", (4, 1)),
    ("tapa", "7:X 2:X 3:O 21:O", (4, 2)),           # contact: X can pin O's checker on 3
    ("plakoto", "8:X 1:X 5:O 19:O", (2, 1)),
    ("backgammon", "6:XX 2:X 23:OO 19:O", (6, 1)),
    ("backgammon", "9:X 3:X 5:O 22:O", (5, 4)),     # contact: hits possible
]


@pytest.mark.parametrize("hidden", [16, [12, 8]])
@pytest.mark.parametrize("variant,layout,dice", SMALL)
def test_two_ply_without_filtering_equals_brute_force_expectimax(variant, layout, dice, hidden):
    net = small_net(variant, hidden=hidden)
    position = board(variant, layout, "X")
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    bot = NetBot(net, plies=2, candidates=None, margin=None, bearoff=False)  # the network alone, as brute_value
    values = bot.evaluate(afterstates)
    cache = {}
    points = outcome_points(net.rules).astype(np.float64)
    brute = [brute_value(net, after, 2, cache) for after in afterstates.positions.to_positions()]
    for row, after in enumerate(afterstates.moves_of(0)):
        np.testing.assert_allclose(values[row], brute_value(net, after.position, 2, cache), atol=2e-5)
    chosen = int(bot.choose(afterstates, np.random.default_rng(0))[0])
    assert chosen == int(np.argmax([v @ points for v in brute]))
    assert len(afterstates) > 1  # a real choice was made


@pytest.mark.parametrize("plies", [0, 1])
def test_lower_plies_match_brute_force_too(plies):
    variant, layout, dice = SMALL[1]
    net = small_net(variant, seed=5)
    position = board(variant, layout, "X")
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    values = NetBot(net, plies=plies, candidates=None, margin=None, bearoff=False).evaluate(afterstates)
    cache = {}
    for row, move in enumerate(afterstates.moves_of(0)):
        np.testing.assert_allclose(values[row], brute_value(net, move.position, plies, cache), atol=2e-5)


def test_search_takes_a_winning_move_and_values_it_exactly():
    net = small_net("backgammon")
    position = board("backgammon", "2:X 1:X 24:O", "X")
    bot = NetBot(net, plies=2)
    after = bot.choose_position(position, (2, 1))
    assert after.result is not None and after.result.winner == "X" and after.result.kind == "single"


def test_batched_choice_equals_one_position_at_a_time():
    net = small_net("tapa", seed=9)
    rng = np.random.default_rng(4)
    positions = [board("tapa", layout, "X") for _, layout, _ in SMALL[:2]] * 2
    dice = np.array([[6, 5], [4, 2], [3, 1], [2, 2]], dtype=np.int8)
    bot = NetBot(net, plies=1)
    afterstates = generate(PositionBatch.from_positions(positions), dice)
    together = bot.choose(afterstates, rng)
    for index, position in enumerate(positions):
        alone = generate(PositionBatch.from_positions([position]), dice[index:index + 1])
        row = int(bot.choose(alone, rng)[0])
        assert afterstates.position(int(together[index])) == alone.position(row)


def test_filter_keeps_the_best_few_within_the_margin():
    equities = np.array([0.5, 0.1, 0.45, 0.3, -1.0, 0.2])
    offsets = np.array([0, 4, 6])
    assert filter_candidates(equities, offsets, 2, 0.16).tolist() == [0, 2, 5]
    assert filter_candidates(equities, offsets, None, 0.1).tolist() == [0, 2, 5]
    assert filter_candidates(equities, offsets, None, None).tolist() == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("spec,fragment", [
    ("", "empty"), ("alphabeta", "unknown bot"), ("gnubg:7", "0, 1 or 2"), ("net:", "checkpoint path"),
    ("net:missing.pt", "no checkpoint file"), ("net:missing.pt@9ply", "0 to 3 plies"),
])
def test_bad_bot_spec_is_a_clear_error_listing_the_valid_forms(spec, fragment):
    with pytest.raises(BotError) as error:
        make_bot(spec, variant_rules("tapa"))
    assert fragment in str(error.value)
    if fragment not in ("no checkpoint file",):
        assert all(form in str(error.value) for form in SPEC_FORMS)


def test_net_spec_loads_a_checkpoint_with_its_plies(tmp_path):
    from tapa_ai.net.checkpoint import save_checkpoint
    from tapa_ai.config import TrainConfig

    net = small_net("plakoto")
    path = save_checkpoint(tmp_path / "n.pt", model_state=net.state_dict(), model_config=net.architecture(),
                           encoding=("tapa-td", 1), rule_options=net.rules, config=TrainConfig(), games=0)
    bot = make_bot(f"net:{path}@2ply", variant_rules("plakoto"))
    assert isinstance(bot, NetBot) and bot.plies == 2
    with pytest.raises(BotError, match="trained for rule set 'plakoto'"):
        make_bot(f"net:{path}", variant_rules("tapa"))
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(BotError, match="bad.pt"):
        make_bot(f"net:{tmp_path / 'bad.pt'}", variant_rules("plakoto"))


def test_wins_option_chooses_by_the_chance_of_winning(tmp_path):
    from tapa_ai.net.evaluator import evaluator_for

    from .test_engine_model import save_tiny_net

    path = save_tiny_net("tapa", tmp_path / "net.pt", seed=11)
    rules = variant_rules("tapa")
    by_points = make_bot(f"net:{path}", rules)
    by_wins = make_bot(f"net:{path},wins", rules)
    by_points.bearoff = by_wins.bearoff = False  # chosen by the network's values, as compared below
    assert by_wins.name.endswith(",wins")
    rng = np.random.default_rng(0)
    batch = PositionBatch.from_positions([board("tapa", layout, "X") for _, layout, _ in SMALL[:2]] * 20)
    afterstates = generate(batch, rng.integers(1, 7, size=(len(batch), 2)).astype(np.int8))
    distributions = evaluator_for(by_points.net, bearoff=False).afterstate_distributions(afterstates)
    points = outcome_points(rules).astype(np.float64)
    win_minus_loss = distributions @ np.sign(points)
    chosen_points = by_points.choose(afterstates, np.random.default_rng(1))
    chosen_wins = by_wins.choose(afterstates, np.random.default_rng(1))
    for source, (start, stop) in enumerate(zip(afterstates.offsets[:-1], afterstates.offsets[1:])):
        assert win_minus_loss[chosen_wins[source]] == pytest.approx(win_minus_loss[start:stop].max())
        assert (distributions @ points)[chosen_points[source]] == pytest.approx((distributions @ points)[start:stop].max())
    with pytest.raises(BotError, match="wins is an option of net: bots"):
        make_bot("heuristic,wins", rules)


@pytest.mark.parametrize("variant,layout,dice", SMALL[:3])
def test_refine_searches_the_best_of_the_shallower_search_at_full_depth(variant, layout, dice):
    net = small_net(variant, seed=7)
    afterstates = generate(PositionBatch.from_positions([board(variant, layout, "X")]), np.array([dice], np.int8))
    points = outcome_points(net.rules).astype(np.float64)
    cache = {}
    moves = afterstates.moves_of(0)
    one_ply = np.array([brute_value(net, move.position, 1, cache) @ points for move in moves])
    two_ply = [brute_value(net, move.position, 2, cache) for move in moves]
    # Keep one move: the best at 1 ply, valued at 2 plies.
    rows, values, equities = NetBot(net, plies=2, candidates=None, margin=None, refine=(1, 0.0),
                                    bearoff=False).ranked(afterstates)
    assert rows.tolist() == [int(np.argmax(one_ply))]
    np.testing.assert_allclose(values[0], two_ply[rows[0]], atol=2e-5)
    # A filter that keeps everything is the plain search.
    plain = NetBot(net, plies=2, candidates=None, margin=None)
    wide = NetBot(net, plies=2, candidates=None, margin=None, refine=(len(moves), 100.0))
    assert np.array_equal(plain.ranked(afterstates)[0], wide.ranked(afterstates)[0])
    np.testing.assert_allclose(plain.ranked(afterstates)[1], wide.ranked(afterstates)[1], atol=1e-12)


def test_refine_spec_option_and_its_errors(tmp_path):
    from .test_engine_model import save_tiny_net

    path = save_tiny_net("tapa", tmp_path / "net.pt", seed=2)
    rules = variant_rules("tapa")
    bot = make_bot(f"net:{path}@2ply,refine=2:0.04", rules)
    assert bot.refine == (2, 0.04) and bot.name.endswith(",refine=2:0.04")
    for option, fragment in (("refine=0:0.1", "integer >= 1"), ("refine=2:-1", "number >= 0"),
                             ("refine=two", "want refine=N:MARGIN")):
        with pytest.raises(BotError, match=fragment):
            make_bot(f"net:{path}@2ply,{option}", rules)
    with pytest.raises(BotError, match="refine= is an option of net: bots"):
        make_bot("heuristic,refine=2:0.04", rules)


# -- bear-offs valued by the database (NetBot.bearoff, tapa_ai.bearoff.evaluate) ---------------------------
def brute_value_with_bearoff(net, after, plies, cache):
    """``brute_value`` with the bear-off database where NetBot uses it."""
    return brute_value(net, after, plies, cache, bearoff=True)


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_netbot_values_bearoff_afterstates_by_the_database_exactly(variant):
    from tapa_ai.bearoff.evaluate import bearoff_distributions
    from tapa_ai.net.evaluator import evaluator_for

    from .test_bearoff import random_bearoffs

    net = small_net(variant, seed=1)
    rng = np.random.default_rng(3)
    batch = PositionBatch.from_positions(random_bearoffs(variant, 80, rng) + random_bearoffs(variant, 40, rng, most=5))
    afterstates = generate(batch, rng.integers(1, 7, size=(len(batch), 2)).astype(np.int8))
    bot = NetBot(net)
    values = bot.evaluate(afterstates)
    going_on = np.flatnonzero(~afterstates.game_over)
    over = np.flatnonzero(afterstates.game_over)
    assert going_on.size > 100 and over.size > 10
    rows, database = bearoff_distributions(afterstates.positions.take(going_on).flipped())
    assert rows.tolist() == list(range(going_on.size))  # every afterstate of a bear-off goes on as one or is over
    np.testing.assert_array_equal(values[going_on], swap_sides(database))
    np.testing.assert_array_equal(values[over], evaluator_for(net, bearoff=False).afterstate_distributions(afterstates)[over])
    np.testing.assert_array_equal(bot.ranked(afterstates)[1], values)
    # The cube's pre-roll view: the database's value of the position itself.
    np.testing.assert_array_equal(bot.pre_roll_distributions(batch), bearoff_distributions(batch)[1])
    # bearoff=False keeps the network.
    pure = NetBot(net, bearoff=False)
    np.testing.assert_array_equal(pure.evaluate(afterstates), evaluator_for(net, bearoff=False).afterstate_distributions(afterstates))
    assert not np.allclose(pure.evaluate(afterstates)[going_on], values[going_on], atol=0.05)


def test_zero_ply_plays_the_move_of_the_best_exact_chance_three_checkers_against_three():
    from tapa_ai.bearoff.database import two_sided
    from tapa_ai.bearoff.evaluate import homes
    from tapa_ai.bearoff.one_sided import rank

    from .test_bearoff import bearoff_position

    wins = two_sided()
    position = bearoff_position("backgammon", (0, 0, 1, 0, 1, 1), (0, 1, 0, 1, 1, 0))
    batch = PositionBatch.from_positions([position] * len(ROLLS))
    afterstates = generate(batch, ROLLS)
    after_homes = homes(afterstates.positions)  # the mover's view: [:, 0] X's home after its move, [:, 1] O's
    chance = np.array([1.0 if over else 1.0 - float(wins[rank(tuple(theirs)), rank(tuple(mine))])
                       for over, (mine, theirs) in zip(afterstates.game_over, after_homes)])
    choices_matter = 0
    for plies in (0, 1, 2):
        chosen = NetBot(small_net("backgammon"), plies=plies).choose(afterstates, np.random.default_rng(plies))
        for source, (start, stop) in enumerate(zip(afterstates.offsets[:-1], afterstates.offsets[1:])):
            assert chance[chosen[source]] == pytest.approx(chance[start:stop].max(), abs=1e-12), (plies, ROLLS[source])
            choices_matter += plies == 0 and chance[start:stop].max() - chance[start:stop].min() > 0.01
    assert choices_matter >= 5
    # An exact bear-off is a leaf: 1 and 2 plies value it as 0 plies do.
    zero = NetBot(small_net("backgammon")).evaluate(afterstates)
    for plies in (1, 2):
        np.testing.assert_array_equal(NetBot(small_net("backgammon"), plies=plies).evaluate(afterstates), zero)


@pytest.mark.parametrize("variant,layout,dice,plies", [
    ("backgammon", "3:X 6:X 19:OO 20:OO 21:OO 23:OO", (2, 1), 2),  # 2 against 8: one-sided, exact once O has 6
    ("tapa", "4:XX 6:X 19:OOOOO 20:OOOOO 22:OOOOO", (2, 1), 1),    # 3 against 15: gammons possible
    ("tapa", "8:X 4:X 3:O 20:O 19:O", (3, 1), 2),                  # contact: the network, bear-offs further down
    ("plakoto", "8:X 1:X 5:O 19:O", (2, 1), 2),
    ("backgammon", "9:X 3:X 5:O 22:O", (2, 1), 2),
])
def test_one_and_two_ply_search_use_the_database_at_every_ply(variant, layout, dice, plies):
    net = small_net(variant, seed=13)
    position = board(variant, layout, "X")
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    assert not afterstates.game_over.any() and len(afterstates) > 1
    bot = NetBot(net, plies=plies, candidates=None, margin=None)
    values = bot.evaluate(afterstates)
    cache = {}
    brute = [brute_value_with_bearoff(net, move.position, plies, cache) for move in afterstates.moves_of(0)]
    np.testing.assert_allclose(values, brute, atol=2e-5)
    points = outcome_points(net.rules).astype(np.float64)
    assert int(bot.choose(afterstates, np.random.default_rng(0))[0]) == int(np.argmax([v @ points for v in brute]))
    # The database changed something: the network alone values these otherwise.
    pure = NetBot(net, plies=plies, candidates=None, margin=None, bearoff=False).evaluate(afterstates)
    assert np.abs(pure - values).max() > 1e-3


def brute_pre_roll_value(net, position, plies, cache):
    """Value of ``position`` before its side to move rolls, from that side's view, by plain recursion.

    0 plies: the network's evaluation; n plies: the average over the 21 rolls of the (n-1)-ply value
    (:func:`brute_value`) of the move the side plays, chosen by its 0-ply equity.
    """
    if plies == 0:
        probabilities, _ = evaluate(net, encode_positions([position]))
        return probabilities[0].astype(np.float64)
    points = outcome_points(net.rules).astype(np.float64)
    value = np.zeros(net.num_outcomes)
    for roll, weight in zip(ROLLS.tolist(), ROLL_WEIGHTS):
        moves = legal_moves(position, roll)
        best = int(np.argmax([brute_value(net, move.position, 0, cache) @ points for move in moves]))
        value += weight * brute_value(net, moves[best].position, plies - 1, cache)
    return value


@pytest.mark.parametrize("plies", [0, 1, 2])
@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_pre_roll_distributions_equal_a_brute_force_search_before_the_roll(variant, plies):
    # The values every cube decision of an @Nply bot rests on: each side to roll, several positions in one batch.
    net = small_net(variant, seed=7)
    positions = [board(variant, layout, side) for name, layout, _ in SMALL if name == variant for side in "XO"]
    bot = NetBot(net, plies=3, bearoff=False)  # the network alone, as brute_value; plies given per call
    values = bot.pre_roll_distributions(PositionBatch.from_positions(positions), plies=plies)
    assert values.shape == (len(positions), net.num_outcomes)
    cache = {}
    for row, position in enumerate(positions):
        np.testing.assert_allclose(values[row], brute_pre_roll_value(net, position, plies, cache), atol=2e-5,
                                   err_msg=f"{variant} row {row} at {plies} plies")
    if plies:
        # The search changes the value: the test would catch a search that fell back to the static evaluation.
        static = bot.pre_roll_distributions(PositionBatch.from_positions(positions), plies=0)
        assert np.abs(values - static).max() > 1e-3
