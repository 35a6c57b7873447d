"""One-sided bear-off database: exact small cases, ranks, and GNU Backgammon's database on every position."""

import numpy as np
import pytest

from tapa_ai.bearoff.one_sided import MAX_TURNS, POSITIONS, build_tables, rank, unrank


@pytest.fixture(scope="module")
def tables():
    return build_tables()


def test_ranks_number_the_54264_arrangements_once():
    assert POSITIONS == 54_264
    seen = {rank(unrank(index)) for index in range(0, POSITIONS, 7)}
    assert seen == set(range(0, POSITIONS, 7))
    assert unrank(rank((1, 0, 4, 1, 3, 0))) == (1, 0, 4, 1, 3, 0)
    with pytest.raises(ValueError, match="at most 15"):
        rank((5, 5, 5, 1, 0, 0))
    with pytest.raises(ValueError, match="6 counts"):
        rank((1, 2, 3))


def test_exact_small_bear_offs(tables):
    turns, first_off = tables
    assert turns[rank((0,) * 6), 0] == 1.0 and first_off[rank((0,) * 6), 0] == 1.0
    # One checker on the 6-point: it fails only on the 9 rolls whose pips (a double counted four times) total under 6.
    six = turns[rank((0, 0, 0, 0, 0, 1))]
    assert six[1] == pytest.approx(27 / 36) and six[2] == pytest.approx(9 / 36)
    # Two checkers on the 6-point: only 3-3, 4-4, 5-5 and 6-6 clear both in one turn.
    assert turns[rank((0, 0, 0, 0, 0, 2)), 1] == pytest.approx(4 / 36)
    # Two checkers on the low points always come off in one turn; their first checker too.
    assert turns[rank((1, 1, 0, 0, 0, 0)), 1] == pytest.approx(1.0)
    # The first checker off from the 5- and 6-points: at least every roll with a 5 or a 6 (20 of 36) does it at once.
    assert first_off[rank((0, 0, 0, 0, 1, 1)), 1] >= 20 / 36
    assert np.allclose(turns.sum(axis=1), 1.0) and np.allclose(first_off.sum(axis=1), 1.0)
    assert turns.shape == (POSITIONS, MAX_TURNS) and turns[:, -1].max() == 0.0


def test_one_sided_distributions_equal_gnubgs_database(tables):
    gnubg = pytest.importorskip("gnubg_nn")
    turns, _ = tables
    points = np.arange(MAX_TURNS)
    worst_mean = 0.0
    differ = []
    for index in range(1, POSITIONS):
        position = unrank(index)
        reference = np.zeros(MAX_TURNS)
        stored = gnubg.bearoff_probabilities(position)
        reference[1:1 + len(stored)] = stored
        worst_mean = max(worst_mean, abs(points @ turns[index] - points @ reference))
        gap = np.abs(turns[index] - reference).max()
        if gap > 1e-4:
            differ.append(gap)
    # gnubg stores its probabilities rounded (16-bit fractions), so where two plays' expected turns lie
    # within ~3e-5 of each other its build can choose the other one: the means agree everywhere, the
    # distributions everywhere but at those near-ties (220 of 54,263 positions, by at most 0.003 here).
    assert worst_mean < 5e-4  # its rounding alone moves a mean by up to ~2e-4
    assert len(differ) < 300 and max(differ) < 0.005
