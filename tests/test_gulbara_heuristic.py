"""The ``heuristic`` in Gul Bara (docs/rules.md 10): cascading doubles, a stage not played in full loses the rest.

The duels are the arena's (:func:`tapa_ai.arena.duels.play_pairs`), whose runner keeps each side's policy on
its own decisions inside a cascade (``Afterstates.same_side``; tests/test_turn_plans.py checks the runner).

The measurement of docs (win rates with 95% CIs over thousands of games) is a command, not a test::

    python -m tests.test_gulbara_heuristic --pairs 1000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pytest

from tapa_ai.arena.duels import play_pairs, random_policy
from tapa_ai.bots.basic import RunnerBot
from tapa_ai.bots.heuristic import HeuristicBot
from tapa_ai.bots.playable import cascade_pips, expected_pips, step_capacity
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.movegen.random_positions import mixed_positions, random_dice
from tapa_ai.rules.options import FEVGA, GULBARA, NARDE
from tapa_ai.rules.position import start_position


def _pending_stage_batch(count: int, seed: int) -> PositionBatch:
    """Mid-game Gul Bara positions whose mover is inside a cascade: a pending stage of 4 steps of 1..5."""
    rng = np.random.default_rng(seed)
    batch = mixed_positions(GULBARA, count, rng)
    batch.turns[:] = GULBARA.plain_double_turns
    batch.stage[:, 0] = rng.integers(1, 6, size=len(batch))
    batch.stage[:, 1] = 4
    batch.stage[:, 2] = 0
    return batch


def test_step_capacity_counts_chains_of_open_points():
    # One checker on point 10; the opponent holds point 4.
    checkers = np.zeros((1, 24), dtype=np.int16)
    checkers[0, 9] = 1
    open_ = np.ones((1, 24), dtype=bool)
    open_[0, 3] = False
    capacity = step_capacity(checkers, open_, np.array([False]))
    assert capacity[0, 1] == 4  # 10/9/8/7/6
    assert capacity[0, 2] == 2  # 10/8/6, then 6/4 is closed
    assert capacity[0, 3] == 1  # 10/7, then 7/4 is closed
    assert capacity[0, 4] == 2  # 10/6/2, then no bearing off from the 2-point with a 4 (the 10 was higher)
    assert capacity[0, 5] == 2  # 10/5 brings it home, then 5/off
    assert capacity[0, 6] == 0  # 10/4 is closed
    # All home: a step past the 1-point bears off; three checkers on point 2 play three 6s.
    home = np.zeros((1, 24), dtype=np.int16)
    home[0, 1] = 3
    assert step_capacity(home, np.ones((1, 24), dtype=bool), np.array([True]))[0, 6] == 3


def test_cascade_pips_stop_at_the_first_stage_not_played_in_full():
    capacity = np.full((2, 7), 4, dtype=np.int16)
    capacity[1, 5] = 2
    first = np.array([3, 3])
    played = cascade_pips(capacity, first, np.array([4, 4]))
    assert played.tolist() == [4 * (3 + 4 + 5 + 6), 4 * 3 + 4 * 4 + 2 * 5]
    # A plain double plays its four steps only; a cascading one the whole cascade.
    plain, cascading = expected_pips(capacity[:1].repeat(2, axis=0), np.array([False, True]))
    assert cascading - plain == pytest.approx(sum(cascade_pips(capacity[:1], np.array([d]), np.array([4]))[0] - 4 * d
                                                  for d in range(1, 7)) / 36)


def test_leaves_the_next_stage_playable_in_full_when_it_can():
    # Inside a cascade, where some play of the stage leaves the next stage playable in full (checked with the
    # move generator), the heuristic's choice does so too.
    batch = _pending_stage_batch(400, seed=3)
    afterstates = generate(batch, None)
    bot = HeuristicBot(GULBARA)
    chosen = bot.choose(afterstates, np.random.default_rng(0))
    rows = np.flatnonzero(afterstates.same_side & ~afterstates.game_over)
    following = generate(afterstates.next_positions(rows), None)
    longest = np.maximum.reduceat(following.n_steps, following.offsets[:-1].astype(np.intp))
    ended = np.maximum.reduceat(following.game_over, following.offsets[:-1].astype(np.intp))
    full = np.zeros(len(afterstates), dtype=bool)
    full[rows] = (longest >= afterstates.positions.stage[rows, 1]) | ended
    full |= afterstates.game_over
    some_full = np.maximum.reduceat(full, afterstates.offsets[:-1].astype(np.intp))
    some_not = ~np.minimum.reduceat(full, afterstates.offsets[:-1].astype(np.intp))
    choice_matters = some_full & some_not
    assert choice_matters.sum() >= 20
    assert full[chosen][choice_matters].mean() >= 0.95, full[chosen][choice_matters].mean()


def test_fevga_and_narde_scores_do_not_depend_on_the_gul_bara_weights():
    changed = dict(gb_pip=0.5, gb_race_pip=0.5, gb_stage=1.0, gb_mobility=1.0, gb_block=1.0, gb_blockade=9.0)
    for rules in (FEVGA, NARDE):
        rng = np.random.default_rng(5)
        batch = mixed_positions(rules, 200, rng)
        afterstates = generate(batch, random_dice(len(batch), rng))
        bot = HeuristicBot(rules)
        assert np.array_equal(bot.scores(afterstates), bot.with_weights(**changed).scores(afterstates))
    # ... while Gul Bara's do.
    batch = _pending_stage_batch(100, seed=4)
    afterstates = generate(batch, None)
    bot = HeuristicBot(GULBARA)
    assert not np.array_equal(bot.scores(afterstates), bot.with_weights(**changed).scores(afterstates))


def test_returns_a_legal_row_for_rolls_and_pending_stages():
    rng = np.random.default_rng(6)
    rolled = mixed_positions(GULBARA, 200, rng)
    rolled.turns[:] = rng.integers(0, GULBARA.plain_double_turns + 1, size=rolled.turns.shape)
    for batch, dice in ((rolled, random_dice(len(rolled), rng)), (_pending_stage_batch(200, seed=7), None)):
        afterstates = generate(batch, dice)
        bot = HeuristicBot(GULBARA)
        scores = bot.scores(afterstates)
        assert np.isfinite(scores).all()
        rows = bot.choose(afterstates, rng)
        assert ((rows >= afterstates.offsets[:-1]) & (rows < afterstates.offsets[1:])).all()


def test_beats_random_clearly():
    records = play_pairs(GULBARA, HeuristicBot(GULBARA), random_policy, pairs=150, seed=19)
    result = records.summary()
    assert result.unfinished == 0
    assert result.win_rate_ci95[0] > 0.65, result.summary()
    assert result.ppg_ci95[0] > 0.6, result.summary()


def _measure(pairs: int, seed: int) -> None:
    """Win rates (95% CIs over the duplicate pairs) of the heuristic against ``random`` and ``runner``."""
    bot = HeuristicBot(GULBARA)
    for name, opponent in (("random", random_policy), ("runner", RunnerBot())):
        started = time.time()
        result = play_pairs(GULBARA, bot, opponent, pairs=pairs, seed=seed).summary()
        print(f"heuristic vs {name}: {result.games} games, win rate {result.win_rate:.3f} "
              f"[{result.win_rate_ci95[0]:.3f}, {result.win_rate_ci95[1]:.3f}], points/game {result.ppg:.3f} "
              f"[{result.ppg_ci95[0]:.3f}, {result.ppg_ci95[1]:.3f}], kinds {dict(result.kinds)}, "
              f"unfinished {result.unfinished} ({time.time() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The heuristic's Gul Bara win rates against random and runner.")
    parser.add_argument("--pairs", type=int, default=1000, help="duplicate pairs per opponent (2 games each)")
    parser.add_argument("--seed", type=int, default=2026)
    arguments = parser.parse_args()
    _measure(arguments.pairs, arguments.seed)
