"""3-ply search (and 3-ply pre-roll values) against the brute-force search of test_search on the reference rules.

The brute force (:func:`tests.test_search.brute_value`) is a plain recursion over the reference move generator:
every one of the 21 rolls with its chance, the reply chosen by its 0-ply equity, only that reply searched deeper.
The positions are small (2 to 5 checkers a side, contact included) so that 3 plies stay cheap: a few seconds each.
"""

import numpy as np
import pytest

from tapa_ai.bots.search import NetBot
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.rules.outcomes import outcome_points
from tapa_ai.notation.mini import board

from .test_search import SMALL, brute_pre_roll_value, brute_value, small_net

THREE_PLY = [
    ("tapa", "6:XX 3:X 22:OO 20:O", (4, 1)),
    ("plakoto", "8:X 1:X 5:O 19:O", (2, 1)),         # contact: pins possible
    ("plakoto", "10:X 3:X 15:O 22:O", (3, 1)),
    ("backgammon", "6:XX 2:X 23:OO 19:O", (6, 1)),
    ("backgammon", "9:X 3:X 5:O 22:O", (5, 4)),      # contact: hits possible
    ("backgammon", "8:X 5:X 17:O 20:O", (2, 1)),
]


@pytest.mark.parametrize("variant,layout,dice", THREE_PLY)
def test_three_ply_without_filtering_equals_brute_force(variant, layout, dice):
    net = small_net(variant, seed=7)
    afterstates = generate(PositionBatch.from_positions([board(variant, layout, "X")]), np.array([dice], np.int8))
    assert len(afterstates) > 1 and not afterstates.game_over.any()  # a real choice, every game goes on
    bot = NetBot(net, plies=3, candidates=None, margin=None, bearoff=False)  # the network alone, as brute_value
    values = bot.evaluate(afterstates)
    cache = {}
    brute = np.array([brute_value(net, move.position, 3, cache) for move in afterstates.moves_of(0)])
    np.testing.assert_allclose(values, brute, atol=2e-5)
    points = outcome_points(net.rules).astype(np.float64)
    equities = brute @ points
    assert np.sort(equities)[-1] - np.sort(equities)[-2] > 1e-4  # one best move, so the choice is checked
    assert int(bot.choose(afterstates, np.random.default_rng(0))[0]) == int(np.argmax(equities))
    # The third ply changes the values: a search stopping at 2 plies would fail above.
    two_ply = np.array([brute_value(net, move.position, 2, cache) for move in afterstates.moves_of(0)])
    assert np.abs(brute - two_ply).max() > 1e-3


@pytest.mark.parametrize("variant,layout,dice", [
    ("backgammon", "3:X 6:X 19:OO 20:OO 21:OO 23:OO", (2, 1)),  # 2 against 8: exact leaves once O has 6 left
    ("tapa", "8:X 4:X 3:O 20:O 19:O", (3, 1)),                  # contact: the network, bear-offs further down
])
def test_three_ply_search_uses_the_database_at_every_ply(variant, layout, dice):
    net = small_net(variant, seed=13)
    afterstates = generate(PositionBatch.from_positions([board(variant, layout, "X")]), np.array([dice], np.int8))
    assert len(afterstates) > 1 and not afterstates.game_over.any()
    values = NetBot(net, plies=3, candidates=None, margin=None).evaluate(afterstates)
    cache = {}
    brute = [brute_value(net, move.position, 3, cache, bearoff=True) for move in afterstates.moves_of(0)]
    np.testing.assert_allclose(values, brute, atol=2e-5)
    pure = NetBot(net, plies=3, candidates=None, margin=None, bearoff=False).evaluate(afterstates)
    assert np.abs(pure - values).max() > 1e-3  # the database changed something


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_pre_roll_distributions_at_three_plies_equal_brute_force(variant):
    # test_search checks 0, 1 and 2 plies; the cube decisions of an @3ply bot rest on these.
    net = small_net(variant, seed=7)
    layout = next(layout for name, layout, _ in SMALL if name == variant)
    positions = [board(variant, layout, side) for side in "XO"]  # each side to roll, in one batch
    batch = PositionBatch.from_positions(positions)
    bot = NetBot(net, plies=3, bearoff=False)
    values = bot.pre_roll_distributions(batch)  # the bot's own plies: 3
    cache = {}
    for row, position in enumerate(positions):
        np.testing.assert_allclose(values[row], brute_pre_roll_value(net, position, 3, cache), atol=2e-5,
                                   err_msg=f"{variant} row {row}")
    assert np.abs(values - bot.pre_roll_distributions(batch, plies=2)).max() > 1e-3
