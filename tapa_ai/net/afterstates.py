"""Choosing afterstates with a network: the 0-ply greedy policy shared by self-play and evaluation."""

from __future__ import annotations

import numpy as np
import torch

from ..movegen.generate import Afterstates
from .encoding import encode
from .fast_eval import fast_evaluator_for
from .model import EvaluatorNet
from ..rules.outcomes import outcome_classes, swap_sides


def afterstate_distributions(net: EvaluatorNet, afterstates: Afterstates) -> np.ndarray:
    """(N, K) outcome probabilities of every afterstate, from the view of the side that moved.

    A finished game is its exact outcome (one-hot); any other afterstate is
    the net's evaluation of the position with the opponent to roll, read from
    the mover's side. Computed by the sparse numba kernel of
    :mod:`tapa_ai.net.fast_eval` (about 7x faster), kept in step with the net's
    weights; :func:`afterstate_distributions_torch` is the reference, used
    when the kernel cannot evaluate the net (or ``TAPA_FAST_EVAL=0``).
    """
    evaluator = fast_evaluator_for(net)
    if evaluator is None:
        return afterstate_distributions_torch(net, afterstates)
    return evaluator.afterstate_distributions(afterstates)[0]


def afterstate_distributions_torch(net: EvaluatorNet, afterstates: Afterstates) -> np.ndarray:
    """:func:`afterstate_distributions` computed by ``encode`` and the torch network (the reference)."""
    features = encode(afterstates.positions.flipped(), version=net.encoding_version)
    with torch.inference_mode():
        logits = net(torch.from_numpy(features).to(net.points.device))
        opponent_view = torch.softmax(logits, dim=-1).cpu().numpy()
    return with_finished_outcomes(swap_sides(opponent_view), afterstates)


def with_finished_outcomes(distributions: np.ndarray, afterstates: Afterstates) -> np.ndarray:
    """``distributions`` (N, K, the mover's view) with every afterstate that ended the game set to its exact
    outcome (one-hot; the mover is the side that can win by its own move), in place; returned."""
    over = np.flatnonzero(afterstates.game_over)
    if over.size:
        classes = outcome_classes(afterstates.result_kind[over], np.ones(over.size, dtype=bool))
        distributions[over] = 0.0
        distributions[over, classes] = 1.0
    return distributions
