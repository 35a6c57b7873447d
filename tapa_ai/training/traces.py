"""Classic online TD(lambda) with eligibility traces, batched over the parallel self-play games.

The alternative to the forward-view lambda-returns of :mod:`selfplay`
(``learning.method = "online-traces"``), kept for the comparison in
docs/training.md. After every ply, for each game ``g`` with position
``x_t`` (mover's view) and the value ``V_{t+1}`` of the afterstate it chose
(from the same view; the exact outcome when the game ended):

    delta_t = V_{t+1} - p(x_t)                       (K,) one TD error per outcome class
    e_t     = lambda * swap(e_{t-1}) + d p(x_t) / d theta   (K, params) the eligibility traces
    theta  += learning_rate * mean_g sum_k delta_t[k] * e_t[k]

``swap`` reorders the trace's classes because consecutive turns belong to
opposite sides (a win for one mover is a loss for the next); inside a
cascade (docs/rules.md 10.2) consecutive decisions are the same side's and
the trace is carried as it is. The
per-game Jacobians come from ``torch.func`` (``vmap`` over ``jacrev``).
Traces are held in memory only: a resumed run starts them from zero.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.func import functional_call, jacrev, vmap

from ..net.model import EvaluatorNet
from ..rules.outcomes import DRAW, LOSE_GAMMON, LOSE_SINGLE, LOSE_TOP, WIN_GAMMON, WIN_SINGLE, WIN_TOP


class OnlineTraces:
    """Eligibility traces of ``games`` parallel games for the parameters of ``net``."""

    def __init__(self, net: EvaluatorNet, games: int, lambda_: float, learning_rate: float,
                 grad_clip: float = 0.0) -> None:
        self.net = net
        self.lambda_ = lambda_
        self.learning_rate = learning_rate
        self.grad_clip = grad_clip
        classes = int(net.points.shape[0])
        swap = [LOSE_SINGLE, LOSE_GAMMON, LOSE_TOP, WIN_SINGLE, WIN_GAMMON, WIN_TOP, DRAW][:classes]
        self.swap = torch.tensor(swap)
        self.traces = {name: torch.zeros(games, classes, *param.shape)
                       for name, param in net.named_parameters()}

        def probabilities(params, features):
            return torch.softmax(functional_call(net, params, (features.unsqueeze(0),)), dim=-1)[0]

        self._jacobian = vmap(jacrev(probabilities), in_dims=(None, 0))

    def step(self, features: np.ndarray, next_values: np.ndarray, new_game: np.ndarray,
             same_mover: np.ndarray | None = None) -> float:
        """One TD(lambda) update from one ply of every game; returns the mean squared TD error.

        features: (G, F) positions before the roll, mover's view; next_values:
        (G, K) value of the chosen afterstate from the same view; new_game: (G,)
        bool, the game's first turn (its traces start afresh); same_mover: (G,)
        bool or None, this ply's mover also made the game's last decision (a
        cascade's stages): its trace is carried without swapping the classes.
        """
        x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))
        params = {name: param.detach() for name, param in self.net.named_parameters()}
        jacobians = self._jacobian(params, x)  # name -> (G, K, *shape)
        with torch.no_grad():
            probabilities = torch.softmax(self.net(x), dim=-1)
            delta = torch.from_numpy(np.asarray(next_values, dtype=np.float32)) - probabilities  # (G, K)
            keep = torch.from_numpy(~np.asarray(new_game, dtype=bool)).float()
            same = None if same_mover is None or not np.any(same_mover) else torch.from_numpy(
                np.asarray(same_mover, dtype=bool))
            updates = {}
            for name, trace in self.traces.items():
                shape = (-1, 1) + (1,) * (trace.dim() - 2)
                carried = trace[:, self.swap]
                if same is not None:
                    carried[same] = trace[same]
                trace.copy_(self.lambda_ * keep.view(shape) * carried + jacobians[name])
                updates[name] = torch.einsum("gk,gk...->...", delta, trace) / x.shape[0]
            if self.grad_clip > 0:
                norm = torch.sqrt(sum((u * u).sum() for u in updates.values()))
                if norm > self.grad_clip:
                    updates = {name: u * (self.grad_clip / norm) for name, u in updates.items()}
            for name, param in self.net.named_parameters():
                param.add_(updates[name], alpha=self.learning_rate)
        return float((delta * delta).sum(dim=1).mean())
