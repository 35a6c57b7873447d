"""The periodic work of a training loop: the progress bar, TensorBoard scalars, evaluations, checkpoints."""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any, Optional

import numpy as np

from ..config import config_to_toml
from .selfplay import FinishedGame


class Schedule:
    """The periodic work of a training loop: the progress bar, TensorBoard scalars, evaluations, checkpoints.

    Shared by the single-process loop (:meth:`Trainer.train`) and the
    learner of distributed training: the loop reports finished games with
    :meth:`finished` and calls :meth:`after_step` after each step.
    """

    def __init__(self, trainer: Any, progress: bool) -> None:
        from tqdm import tqdm

        self.trainer = trainer
        config = trainer.config
        self.writer = None
        if config.logging.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(trainer.run_dir))
            if trainer.games == 0:
                self.writer.add_text("config", "```toml\n" + config_to_toml(config) + "\n```", 0)
        self.next_log = _next_multiple(trainer.games, config.logging.log_every_games)
        self.next_eval = _next_multiple(trainer.games, config.eval.every_games)
        self.next_checkpoint = _next_multiple(trainer.games, config.checkpoint.every_games)
        _compile_kernels(trainer)  # before the clock starts: the first window's games/s is the run's, not numba's
        self.window = _Window(trainer.games, trainer.decisions)
        self.bar = tqdm(total=config.run.total_games, initial=min(trainer.games, config.run.total_games),
                        unit="game", disable=not progress, desc=f"train {trainer.rules.name}", dynamic_ncols=True)

    def finished(self, games: list[FinishedGame]) -> None:
        self.window.add(games)
        self.bar.update(min(len(games), self.trainer.config.run.total_games - self.bar.n))

    def after_step(self, loss: float, scalars: Optional[dict[str, float]] = None) -> None:
        """Log, evaluate and checkpoint when their turn has come; ``scalars`` are logged with the window."""
        trainer, config = self.trainer, self.trainer.config
        if trainer.games >= self.next_log:
            stats = self.window.flush(trainer.games, trainer.decisions)
            self.bar.set_postfix(loss=f"{loss:.4f}", games_s=f"{stats['games_per_s']:.1f}")
            if self.writer:
                _log_window(self.writer, stats, trainer.games, config.selfplay.epsilon(trainer.games))
                self.writer.add_scalar("charts/cpu_minutes", trainer.cpu_seconds / 60, trainer.games)
                self.writer.add_scalar("charts/learning_rate", config.learning.rate(trainer.games), trainer.games)
                for name, value in (scalars or {}).items():
                    self.writer.add_scalar(name, value, trainer.games)
            self.next_log = _next_multiple(trainer.games, config.logging.log_every_games)
        if trainer.games >= self.next_eval:
            records = trainer.evaluate()
            if trainer.evaluation.report(records, trainer.games, self.writer, self.bar):
                trainer.save_best()  # a new best score: best.pt
            self.next_eval = _next_multiple(trainer.games, config.eval.every_games)
        if trainer.games >= self.next_checkpoint:
            trainer.save()
            self.next_checkpoint = _next_multiple(trainer.games, config.checkpoint.every_games)

    def close(self) -> None:
        self.bar.close()
        if self.writer:
            self.writer.close()


def _compile_kernels(trainer: Any) -> None:
    """Compile (or load from numba's cache) the move generator's and self-play evaluator's kernels on one position,
    so that no window times them (a distributed learner's actors compile in their own processes)."""
    selfplay = getattr(trainer, "selfplay", None)
    if selfplay is None:
        return
    from ..movegen import PositionBatch, generate
    from ..rules.position import start_position

    afterstates = generate(PositionBatch.from_positions([start_position(trainer.rules, "X")]),
                           np.array([[3, 1]], dtype=np.int8))
    selfplay.evaluator.afterstate_distributions(afterstates)


def _next_multiple(value: int, every: int) -> int:
    return (value // every + 1) * every


class _Window:
    """Throughput and game statistics between two log points."""

    def __init__(self, games: int, decisions: int) -> None:
        self.start_time = time.perf_counter()
        self.start_games, self.start_decisions = games, decisions
        self.kinds: Counter = Counter()
        self.turns = 0
        self.count = 0
        self.losses: list[float] = []
        self.staleness: list[tuple[int, int]] = []
        """(staleness, games) of each batch the learner took (distributed training only)."""

    def add(self, finished: list[FinishedGame]) -> None:
        for game in finished:
            self.kinds[game.kind] += 1
            self.turns += game.turns
            self.count += 1

    def flush(self, games: int, decisions: int) -> dict:
        elapsed = max(time.perf_counter() - self.start_time, 1e-9)
        stats = {
            "games_per_s": (games - self.start_games) / elapsed,
            "decisions_per_s": (decisions - self.start_decisions) / elapsed,
            "game_length": self.turns / max(self.count, 1),
            "kinds": {kind: n / max(self.count, 1) for kind, n in self.kinds.items()},
            "loss": float(np.mean(self.losses)) if self.losses else float("nan"),
        }
        if self.staleness:
            lags = np.array(self.staleness, dtype=np.float64)
            stats["staleness"] = float(np.average(lags[:, 0], weights=np.maximum(lags[:, 1], 1)))
            stats["staleness_max"] = float(lags[:, 0].max())
        self.__init__(games, decisions)
        return stats


def _log_window(writer, stats: dict, games: int, epsilon: float) -> None:
    if math.isfinite(stats["loss"]):
        writer.add_scalar("losses/td_cross_entropy", stats["loss"], games)
    writer.add_scalar("charts/games_per_s", stats["games_per_s"], games)
    writer.add_scalar("charts/decisions_per_s", stats["decisions_per_s"], games)
    writer.add_scalar("charts/SPS", stats["decisions_per_s"], games)
    writer.add_scalar("charts/game_length_turns", stats["game_length"], games)
    writer.add_scalar("charts/epsilon", epsilon, games)
    for kind in ("single", "gammon", "backgammon", "mother", "draw"):
        writer.add_scalar(f"charts/result_{kind}", stats["kinds"].get(kind, 0.0), games)
    if "staleness" in stats:
        # Learner updates between the weights that played a game's batch and the learner's at learning time.
        writer.add_scalar("charts/staleness", stats["staleness"], games)
        writer.add_scalar("charts/staleness_max", stats["staleness_max"], games)
