"""Paired-dice duels: pairing cancels luck exactly for equal players; results and intervals are sane."""

import pytest

from tapa_ai.arena import duel, pipcount_policy, random_policy
from tapa_ai.rules import variant_rules


def first_move(afterstates, rng):
    return afterstates.offsets[:-1].copy()


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_identical_deterministic_players_score_exactly_zero_with_paired_dice(variant):
    # Both games of a pair see the same dice with the roles swapped, so equal
    # deterministic players play the same game twice from opposite sides.
    result = duel(variant_rules(variant), first_move, first_move, pairs=20, seed=3)
    assert result.games == 40 and result.unfinished == 0
    assert result.ppg == 0.0 and result.ppg_ci95 == (0.0, 0.0)
    assert sum(result.kinds.values()) == 40


def test_pipcount_beats_random_at_backgammon_with_a_confidence_interval():
    result = duel(variant_rules("backgammon"), pipcount_policy, random_policy, pairs=100, seed=1)
    assert result.ppg_ci95[0] > 0.5 and result.win_rate > 0.8
    low, high = result.ppg_ci95
    assert low < result.ppg < high


def test_duel_is_reproducible_from_its_seed():
    rules = variant_rules("tapa")
    first = duel(rules, pipcount_policy, random_policy, pairs=20, seed=5)
    second = duel(rules, pipcount_policy, random_policy, pairs=20, seed=5)
    assert first.summary() == second.summary()
