"""Learning per CPU-minute: train with each TD method for the same CPU time, then duel the results.

Used by ``scripts/compare_td_methods.py``; the outcome is recorded in docs/training.md.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Sequence

from ..arena.duels import duel, pipcount_policy, random_policy
from ..bots.search import NetBot
from ..config import apply_overrides, load_config
from .trainer import Trainer, new_run_directory

METHODS = ("lambda-return", "online-traces")


def train_for_cpu_time(config_path: str | Path, overrides: Sequence[str], cpu_seconds: float) -> Trainer:
    """A trainer run until it has used ``cpu_seconds`` of process CPU time (all threads)."""
    with tempfile.TemporaryDirectory() as directory:
        config = load_config(config_path, [*overrides, f"checkpoint.directory={directory}",
                                           "logging.tensorboard=false", "eval.every_games=100000000",
                                           "checkpoint.every_games=100000000", "run.total_games=100000000"])
        trainer = Trainer(config, new_run_directory(config))
        start = time.process_time()
        trainer.train(progress=False, should_stop=lambda: time.process_time() - start >= cpu_seconds)
        trainer.cpu_seconds = time.process_time() - start
    return trainer


def compare_methods(config_path: str | Path, overrides: Sequence[str], cpu_seconds: float, pairs: int,
                    seed: int = 12345, method_overrides: dict[str, Sequence[str]] | None = None) -> dict:
    """Train each method for the same CPU time; duel them against the fixed bots and each other."""
    trainers = {}
    for method in METHODS:
        extra = list((method_overrides or {}).get(method, ()))
        trainers[method] = train_for_cpu_time(config_path, [*overrides, f"learning.method={method}", *extra],
                                              cpu_seconds)
    report = {"cpu_seconds": cpu_seconds, "pairs": pairs, "methods": {}}
    rules = next(iter(trainers.values())).rules
    for method, trainer in trainers.items():
        row = {"games": trainer.games, "updates": trainer.steps, "cpu_seconds_used": trainer.cpu_seconds}
        for name, bot in (("random", random_policy), ("pipcount", pipcount_policy)):
            row[name] = duel(rules, NetBot(trainer.net), bot, pairs, seed).summary()
        report["methods"][method] = row
    first, second = METHODS
    report["head_to_head"] = {
        "a": first, "b": second,
        **duel(rules, NetBot(trainers[first].net), NetBot(trainers[second].net), pairs, seed).summary(),
    }
    return report
