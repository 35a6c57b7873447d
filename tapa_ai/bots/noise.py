"""Noise on a network bot's move values: how a level of play is made weaker on purpose (docs/levels.md).

As in GNU Backgammon's levels, each candidate move's value gets a random
amount added before the bot takes the best: ``sigma`` times a draw of mean 0
and variance 1, in points of equity (at a match score, in the match-winning
chance of a point there: half the difference between a single win and a
single loss). Two kinds of draw:

- **random** (``seed`` None): from the bot's generator, so the same position
  may get another move next time;
- **deterministic** (``seed`` an integer): a function of the seed and of the
  position after the move alone, so a level plays the same move whenever it
  meets the same position with the same roll (a replay, an analysis), and an
  app can reproduce its choices exactly with the exported model
  (docs/frontends.md; the JavaScript there computes the same numbers).

The deterministic draw, for one afterstate seen from the side that moved
(:class:`~tapa_ai.movegen.batch.PositionBatch`'s mover-relative arrays):

1. ``key`` = FNV-1a 32-bit over 52 bytes: ``board[0..23]``, ``pinned[0..23]``,
   ``off[0], off[1]``, ``bar[0], bar[1]``, each int8 as its two's-complement
   byte (``n & 0xFF``): offset basis 2166136261, prime 16777619, modulo 2**32;
2. ``state = key XOR (seed * 2654435761 mod 2**32)``;
3. four draws of mulberry32 from ``state`` (each: ``state += 0x6D2B79F5``;
   ``t = imul(state ^ state >>> 15, state | 1)``; ``t ^= t + imul(t ^ t >>> 7, t | 61)``;
   ``u = (t ^ t >>> 14) / 2**32``, all 32-bit unsigned arithmetic);
4. the draw is ``(u1 + u2 + u3 + u4 - 2) * sqrt(3)``: mean 0, variance 1
   (the Irwin-Hall sum of four uniforms, near normal, bounded by
   ``2 * sqrt(3)``), exact in float64 in any language.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..movegen.batch import PositionBatch

FNV_OFFSET = np.uint32(2166136261)
FNV_PRIME = np.uint32(16777619)
SEED_MIX = 2654435761
KEY_BYTES = 52
"""Bytes hashed per afterstate: board (24), pinned (24), off (2), bar (2)."""
MAX_NOISE = 2.0
"""The largest noise accepted, in points (GNU Backgammon's beginner level uses 0.06)."""


def afterstate_bytes(positions: PositionBatch) -> np.ndarray:
    """(N, 52) uint8 the bytes each afterstate's key hashes (module docstring, step 1)."""
    return np.concatenate([positions.board, positions.pinned, positions.off, positions.bar],
                          axis=1).astype(np.int8).view(np.uint8)


def afterstate_keys(positions: PositionBatch) -> np.ndarray:
    """(N,) uint32 FNV-1a keys of the positions (mover-relative afterstates)."""
    data = afterstate_bytes(positions).astype(np.uint32)
    keys = np.full(len(positions), FNV_OFFSET, dtype=np.uint32)
    for column in range(data.shape[1]):
        keys = (keys ^ data[:, column]) * FNV_PRIME
    return keys


def _mulberry32(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One draw for each state: (the next states, uniforms in [0, 1))."""
    state = state + np.uint32(0x6D2B79F5)
    t = (state ^ (state >> np.uint32(15))) * (state | np.uint32(1))
    t = t ^ (t + (t ^ (t >> np.uint32(7))) * (t | np.uint32(61)))
    return state, (t ^ (t >> np.uint32(14))).astype(np.float64) / 4294967296.0


def deterministic_draws(keys: np.ndarray, seed: int) -> np.ndarray:
    """(N,) float64 draws of mean 0 and variance 1, each a function of its key and ``seed`` (module docstring)."""
    state = np.asarray(keys, dtype=np.uint32) ^ np.uint32((int(seed) * SEED_MIX) % 2**32)
    total = np.zeros(state.shape, dtype=np.float64)
    for _ in range(4):
        state, uniform = _mulberry32(state)
        total += uniform
    return (total - 2.0) * math.sqrt(3.0)


def noise_draws(positions: PositionBatch, seed: Optional[int], rng: np.random.Generator) -> np.ndarray:
    """(N,) draws of mean 0 and variance 1 for the afterstates ``positions``: deterministic with a ``seed``,
    else from ``rng``."""
    if seed is None:
        return rng.standard_normal(len(positions))
    return deterministic_draws(afterstate_keys(positions), seed)


def check_noise(value) -> float:
    """``value`` as a noise (points, 0 to :data:`MAX_NOISE`); ValueError naming the range otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= MAX_NOISE:
        raise ValueError(f"noise {value!r}: want a number of points from 0 to {MAX_NOISE}")
    return float(value)


def check_noise_seed(value) -> int:
    """``value`` as a noise seed (an integer 0 to 2**32 - 1); ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2**32:
        raise ValueError(f"noise seed {value!r}: want an integer from 0 to 4294967295")
    return int(value)
