"""Noise on a network bot's move values (tapa_ai/bots/noise.py): the deterministic draw as its docstring
specifies it (checked against a plain transcription with Python integers), its distribution, and the bot
playing with it (``net:...,noise=X[,noise_seed=N]``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tapa_ai.bots.noise import afterstate_bytes, afterstate_keys, deterministic_draws
from tapa_ai.bots.spec import make_bot
from tapa_ai.rules import variant_rules
from tests.test_rotation_met import random_afterstates


def plain_fnv1a(data: bytes) -> int:
    h = 2166136261
    for byte in data:
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def plain_mulberry32(state: int) -> tuple[int, float]:
    """The JavaScript original, with Python integers (imul: the low 32 bits of the product)."""
    state = (state + 0x6D2B79F5) & 0xFFFFFFFF
    t = ((state ^ (state >> 15)) * (state | 1)) & 0xFFFFFFFF
    t = (t ^ ((t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF)) & 0xFFFFFFFF
    return state, ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296.0


def plain_draw(key: int, seed: int) -> float:
    state = key ^ ((seed * 2654435761) % 2**32)
    total = 0.0
    for _ in range(4):
        state, uniform = plain_mulberry32(state)
        total += uniform
    return (total - 2.0) * math.sqrt(3.0)


def mover_bytes(position) -> list[int]:
    """The 52 bytes of a position as the mover sees it (tapa_ai/movegen/batch.py's layout), from its absolute
    stacks: for each of the mover's points 1-24 the signed count of the checkers on top (+ the mover's) and the
    pinned checker under them (+1 the mover's, -1 the opponent's), then (mover, opponent) borne off and on the bar;
    each value as its int8 two's-complement byte."""
    mover = position.turn
    sides = ("X", "O") if mover == "X" else ("O", "X")

    def absolute(point: int) -> int:  # the index in position.points of the mover's point
        if mover == "X":
            return point - 1
        if position.rules.parallel:
            return point + 11 if point <= 12 else point - 13
        return 24 - point

    tops, pins = [], []
    for point in range(1, 25):
        stack = position.points[absolute(point)]
        top = stack[-1:] or None
        count = len(stack) - (1 if stack and stack[0] != top else 0)
        tops.append(0 if top is None else count if top == mover else -count)
        pins.append(0 if not stack or stack[0] == top else 1 if stack[0] == mover else -1)
    index = {"X": 0, "O": 1}
    counts = [position.off[index[side]] for side in sides] + [position.bar[index[side]] for side in sides]
    return [value & 0xFF for value in tops + pins + counts]


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon", "fevga"])
def test_deterministic_noise_is_the_documented_hash_and_generator(variant):
    afterstates = random_afterstates(variant, 40, 1)
    data = afterstate_bytes(afterstates.positions)
    keys = afterstate_keys(afterstates.positions)
    assert data.shape == (len(afterstates), 52)
    assert [plain_fnv1a(bytes(row)) for row in data] == keys.tolist()
    # The bytes are the mover-relative arrays, each int8 as its two's-complement byte: worked out here from each
    # afterstate's Position (its absolute stacks), every row.
    from tapa_ai.movegen import concatenate
    from tapa_ai.movegen.random_positions import endgame_positions

    ends = endgame_positions(variant, 40, np.random.default_rng(2))  # checkers borne off
    for positions in (afterstates.positions, afterstates.positions.flipped(), ends, ends.flipped()):
        rows = afterstate_bytes(positions)
        assert [list(rows[row]) for row in range(len(positions))] == [
            mover_bytes(positions.position(row)) for row in range(len(positions))]
    movers = concatenate([afterstates.positions, afterstates.positions.flipped(), ends])
    assert {movers.position(row).turn for row in range(len(movers))} == {"X", "O"} and (movers.off != 0).any()
    for seed in (0, 1, 4294967295):
        draws = deterministic_draws(keys, seed)
        assert draws.tolist() == [plain_draw(int(k), seed) for k in keys]


def test_deterministic_draws_have_mean_zero_variance_one_and_change_with_the_seed():
    keys = np.arange(200_000, dtype=np.uint32) * np.uint32(2654435761)
    draws = deterministic_draws(keys, 3)
    assert abs(draws.mean()) < 0.01 and abs(draws.var() - 1.0) < 0.01
    assert np.abs(draws).max() <= 2 * math.sqrt(3)
    assert np.corrcoef(draws, deterministic_draws(keys, 4))[0, 1] < 0.01


def test_a_noise_seed_plays_the_same_move_in_the_same_position_and_no_noise_is_the_plain_bot():
    rules = variant_rules("tapa")
    afterstates = random_afterstates("tapa", 200, 2)
    plain = make_bot("net:tapa", rules)
    seeded = make_bot("net:tapa,noise=0.3,noise_seed=9", rules)
    zero = make_bot("net:tapa,noise=0", rules)
    first = seeded.choose(afterstates, np.random.default_rng(1))
    assert np.array_equal(first, seeded.choose(afterstates, np.random.default_rng(2)))
    reordered = afterstates.of_sources(np.arange(len(afterstates.offsets) - 1)[::-1].copy())
    # The same positions in another batch order: the same moves (the noise is the afterstates', not the rows').
    back = seeded.choose(reordered, np.random.default_rng(3))
    moves = [afterstates.move_text(int(r)) for r in first]
    assert [reordered.move_text(int(r)) for r in back] == moves[::-1]
    assert np.array_equal(zero.choose(afterstates, np.random.default_rng(1)),
                          plain.choose(afterstates, np.random.default_rng(1)))
    assert (first != plain.choose(afterstates, np.random.default_rng(1))).any()
    other_seed = make_bot("net:tapa,noise=0.3,noise_seed=10", rules)
    assert (other_seed.choose(afterstates, np.random.default_rng(1)) != first).any()
    unseeded = make_bot("net:tapa,noise=0.3", rules)
    assert (unseeded.choose(afterstates, np.random.default_rng(1))
            != unseeded.choose(afterstates, np.random.default_rng(2))).any()


def test_more_noise_loses_more_equity():
    rules = variant_rules("plakoto")
    afterstates = random_afterstates("plakoto", 300, 4)
    judge = make_bot("net:plakoto", rules)
    _, _, equities = judge.ranked(afterstates)
    best = np.maximum.reduceat(equities, afterstates.offsets[:-1])
    losses = []
    for noise in (0.0, 0.02, 0.1, 0.4):
        bot = make_bot(f"net:plakoto,noise={noise},noise_seed=1", rules)
        losses.append(float((best - equities[bot.choose(afterstates, np.random.default_rng(0))]).mean()))
    assert losses[0] == 0.0 and losses == sorted(losses) and losses[-1] > 5 * losses[1] > 0


def test_at_a_score_the_noise_is_in_the_match_winning_chance_of_a_point():
    rules = variant_rules("fevga")
    bot = make_bot("net:fevga,noise=0.5,noise_seed=3", rules)
    afterstates = random_afterstates("fevga", 20, 5)
    rows = np.arange(len(afterstates))
    values = np.tile(np.array([0.8, 0.9, 0.9, 0.4, 0.2, 0.2]), (len(afterstates.offsets) - 1, 1))
    noise = bot.move_noise(afterstates, rows, np.random.default_rng(0), values)
    plain = bot.move_noise(afterstates, rows, np.random.default_rng(0))
    assert np.allclose(noise, 0.5 * (0.8 - 0.4) * plain)
