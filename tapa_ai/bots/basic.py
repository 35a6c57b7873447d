"""Fixed reference opponents that choose among afterstates: ``random`` and ``pipcount``.

Both work on :class:`~tapa_ai.movegen.generate.Afterstates` in batch form:
for every source position they return the index of the chosen afterstate row.
"""

from __future__ import annotations

import numpy as np

from ..movegen.batch import PositionBatch
from ..movegen.choice import choose_random, segment_argmax
from ..movegen.generate import Afterstates
from .base import Bot, ScoringBot

_POINT_NUMBERS = np.arange(1, 25, dtype=np.int32)
_PARALLEL_NUMBERS = (_POINT_NUMBERS + 11) % 24 + 1
"""The opponent's own point at each of the mover's points 1..24 in the running games (p + 12, or p - 12)."""


def pip_counts(batch: PositionBatch) -> np.ndarray:
    """(B, 2) pips still to travel for (mover, opponent); the bar counts 25, pinned checkers count."""
    board = batch.board.astype(np.int32)
    pinned = batch.pinned.astype(np.int32)
    mover = np.clip(board, 0, None) + (pinned == 1)
    opponent = np.clip(-board, 0, None) + (pinned == -1)
    mover_pips = mover @ _POINT_NUMBERS + 25 * batch.bar[:, 0].astype(np.int32)
    # The mover's point p is the opponent's point 25 - p (p +- 12 in the running games).
    opponent_pips = opponent @ (25 - _POINT_NUMBERS) + 25 * batch.bar[:, 1].astype(np.int32)
    parallel = batch.parallel_rows()
    if parallel.any():
        opponent_pips[parallel] = opponent[parallel] @ _PARALLEL_NUMBERS
    return np.stack([mover_pips, opponent_pips], axis=1)


def pipcount_scores(afterstates: Afterstates) -> np.ndarray:
    """(N,) the pip lead of the side that moved; a won game scores above any race."""
    pips = pip_counts(afterstates.positions)
    scores = (pips[:, 1] - pips[:, 0]).astype(np.float64)
    won = afterstates.game_over & (afterstates.winner == afterstates.positions.turn)
    scores[won] = 1000.0 + afterstates.result_points[won]
    return scores


def choose_pipcount(afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
    """The afterstate with the best pip lead per position (wins first; ties at random): (B,) rows."""
    return segment_argmax(pipcount_scores(afterstates), afterstates.offsets, rng)


class RandomBot(Bot):
    """``random``: a uniformly random legal move (every distinct resulting position equally likely)."""

    name = "random"

    def choose(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        return choose_random(afterstates, rng)


class RunnerBot(ScoringBot):
    """``runner``: the pip-count racer: the move with the best pip lead (a win first), ties at random."""

    name = "runner"

    def scores(self, afterstates: Afterstates) -> np.ndarray:
        return pipcount_scores(afterstates)

    def choose(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        return choose_pipcount(afterstates, rng)
