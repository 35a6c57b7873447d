"""A training run's evaluations: duels of the network against the ``eval.opponents``, their report, the best score.

Every evaluation plays the same deals (dice from ``run.seed + EVAL_SEED_OFFSET``), the network greedy at 0-ply
against each opponent in duplicate pairs. The mean points per game over the opponents is the run's score; a
score above the best so far makes the network the run's ``best.pt``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ..arena.duels import duel, pipcount_policy, random_policy
from ..bots.search import NetBot
from ..config import TrainConfig
from ..net.model import EvaluatorNet
from ..rules.options import RuleOptions
from .runs import TrainingError

__all__ = ["OPPONENTS", "EVAL_SEED_OFFSET", "EvalRecord", "Evaluation", "make_opponents"]

OPPONENTS = {"random": random_policy, "pipcount": pipcount_policy}
"""The built-in evaluation opponents; ``eval.opponents`` also takes any bot spec (``heuristic``, ``net:PATH``...)."""
EVAL_SEED_OFFSET = 1_000_003
"""Evaluations draw their dice from ``run.seed + EVAL_SEED_OFFSET``: the same deals at every evaluation."""


@dataclass
class EvalRecord:
    games_trained: int
    opponent: str
    games: int
    ppg: float
    ppg_ci95: tuple[float, float]
    win_rate: float

    def to_plain(self) -> dict:
        """As a checkpoint stores it."""
        return {"games_trained": self.games_trained, "opponent": self.opponent, "games": self.games,
                "ppg": self.ppg, "ppg_ci95": list(self.ppg_ci95), "win_rate": self.win_rate}

    @classmethod
    def from_plain(cls, data: dict) -> "EvalRecord":
        return cls(data["games_trained"], data["opponent"], data["games"], data["ppg"], tuple(data["ppg_ci95"]),
                   data["win_rate"])


def make_opponents(specs: list[str], rules: RuleOptions) -> dict[str, Callable]:
    """The opponent of each spec: a built-in (:data:`OPPONENTS`) or a bot spec; :class:`TrainingError` if bad."""
    from ..bots.base import BotError
    from ..bots.spec import make_bot

    opponents = {}
    for spec in specs:
        if spec in OPPONENTS:
            opponents[spec] = OPPONENTS[spec]
            continue
        try:
            opponents[spec] = make_bot(spec, rules)
        except BotError as error:
            raise TrainingError(f"eval.opponents: {spec!r}: {error}") from None
    return opponents


class Evaluation:
    """The evaluations of one run: the opponents, the records so far and the best score."""

    def __init__(self, config: TrainConfig, rules: RuleOptions) -> None:
        self.config = config
        self.rules = rules
        self.opponents = make_opponents(config.eval.opponents, rules)
        self.records: list[EvalRecord] = []
        """Every evaluation of the run, oldest first (checkpointed)."""
        self.best_score = -math.inf
        """The best score (mean points per game over ``eval.opponents``) so far; -inf before the first."""

    def evaluate(self, net: EvaluatorNet, games_trained: int) -> list[EvalRecord]:
        """Duels of ``net`` (0-ply, greedy) against each opponent, paired dice; the records (kept too)."""
        records = []
        net.eval()
        for name in self.config.eval.opponents:
            result = duel(self.rules, NetBot(net), self.opponents[name], max(1, self.config.eval.games // 2),
                          seed=self.config.run.seed + EVAL_SEED_OFFSET)
            records.append(EvalRecord(games_trained, name, result.games, result.ppg, result.ppg_ci95,
                                      result.win_rate))
        net.train()
        self.records.extend(records)
        return records

    def report(self, records: list[EvalRecord], games: int, writer: Optional[Any], bar: Any) -> bool:
        """Log ``records`` (TensorBoard ``writer`` if any, a line on the progress ``bar``); whether their score is
        a new best (then it is the best score)."""
        if writer:
            for record in records:
                prefix = f"eval/{record.opponent}"
                writer.add_scalar(f"{prefix}/ppg", record.ppg, games)
                writer.add_scalar(f"{prefix}/win_rate", record.win_rate, games)
                writer.add_scalar(f"{prefix}/ppg_ci95_low", record.ppg_ci95[0], games)
                writer.add_scalar(f"{prefix}/ppg_ci95_high", record.ppg_ci95[1], games)
        bar.write(f"[{games} games] " + ", ".join(
            f"vs {r.opponent}: ppg {r.ppg:+.3f} [{r.ppg_ci95[0]:+.3f}, {r.ppg_ci95[1]:+.3f}] "
            f"win {r.win_rate:.1%} ({r.games} games)" for r in records))
        score = float(np.mean([r.ppg for r in records]))
        if score > self.best_score:
            self.best_score = score
            return True
        return False
