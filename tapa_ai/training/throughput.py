"""Self-play throughput with learning, and GNU Backgammon's 0-ply self-play beside it (``scripts/bench_selfplay.py``).

:func:`selfplay_throughput` runs the real :class:`~tapa_ai.training.trainer.Trainer`
(self-play, lambda-return learning, weight refreshes; evaluation and
checkpoints pushed out of the window) for a fixed wall-clock time and counts
decisions (moves chosen, one per game per ply) and finished games.
:func:`gnubg_throughput` is the anchor: ``gnubg_nn.bestmove`` at 0-ply
playing itself, one process per requested core.
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Optional, Sequence

BENCH_CONFIG = "configs/quick.toml"
"""The config the benchmark starts from (then :data:`BENCH_OVERRIDES` and the caller's)."""
BENCH_OVERRIDES = (
    "model.hidden=128", "model.layers=1", "run.torch_threads=1", "run.total_games=1000000000",
    "eval.every_games=1000000000", "checkpoint.every_games=1000000000", "logging.tensorboard=false",
    "logging.log_every_games=1000000000",
)
"""Fixed for the benchmark: a 259 x 128 network, no evaluation, checkpoint or log inside the timed window.

One torch thread: the learning steps are small, and with two, torch's OpenMP
workers spin between steps on the core the evaluation threads need (5x
slower self-play here; ``OMP_WAIT_POLICY=PASSIVE`` also avoids it). The
evaluation and the move generator still use both cores.
"""
DEFAULT_PARALLEL_GAMES = 256
"""Parallel self-play games of the benchmark (see docs/training.md, "Speed", for the sweep)."""


@dataclass
class Throughput:
    decisions_per_s: float
    games_per_s: float
    seconds: float
    decisions: int
    games: int

    def to_json(self) -> dict:
        return {"decisions_per_s": round(self.decisions_per_s, 1), "games_per_s": round(self.games_per_s, 2)}


def bench_config(variant: str, parallel_games: int, directory: str, overrides: Sequence[str] = ()):
    from ..config import load_config

    return load_config(BENCH_CONFIG, [*BENCH_OVERRIDES, f"run.variant={variant}",
                                      f"selfplay.parallel_games={parallel_games}",
                                      f"checkpoint.directory={directory}", *overrides])


def selfplay_throughput(variant: str, seconds: float, parallel_games: int = DEFAULT_PARALLEL_GAMES,
                        warmup: float = 2.0, overrides: Sequence[str] = (), profile: Optional[str] = None
                        ) -> Throughput:
    """Self-play with learning on ``variant`` for ``seconds`` after ``warmup`` seconds; decisions/s and games/s.

    ``profile``: a path to write a ``cProfile`` of the timed window to (pstats format).
    """
    from .trainer import Trainer, new_run_directory

    with tempfile.TemporaryDirectory(prefix="bench-selfplay-") as directory:
        config = bench_config(variant, parallel_games, directory, overrides)
        trainer = Trainer(config, new_run_directory(config))
        deadline = time.perf_counter() + warmup
        trainer.train(progress=False, should_stop=lambda: time.perf_counter() >= deadline)
        start_decisions, start_games = trainer.decisions, trainer.games
        stopped = []

        def should_stop() -> bool:
            now = time.perf_counter()
            if now >= end:
                stopped.append(now)
                return True
            return False

        profiler = None
        if profile:
            import cProfile

            profiler = cProfile.Profile()
        begin = time.perf_counter()
        end = begin + seconds
        if profiler:
            profiler.enable()
        trainer.train(progress=False, should_stop=should_stop)
        if profiler:
            profiler.disable()
            profiler.dump_stats(profile)
        elapsed = stopped[0] - begin
        # Counted up to the moment the stop was seen (the final learn and checkpoint come after).
        decisions, games = trainer.decisions - start_decisions, trainer.games - start_games
    return Throughput(decisions / elapsed, games / elapsed, elapsed, decisions, games)


# -- GNU Backgammon ---------------------------------------------------------------------------------
def _gnubg_start() -> list[list[int]]:
    half = [0] * 25  # points 1..24 of the side, then its bar
    half[5], half[7], half[12], half[23] = 5, 3, 5, 2
    return [list(half), list(half)]


def _gnubg_worker(arguments: tuple[float, int]) -> tuple[int, int, float]:
    """One process: 0-ply gnubg self-play for ``seconds``; (decisions, finished games, elapsed)."""
    import gnubg_nn

    seconds, seed = arguments
    rng = random.Random(seed)
    decisions = games = 0
    begin = time.perf_counter()
    end = begin + seconds
    board = _gnubg_start()
    while True:
        die1, die2 = rng.randint(1, 6), rng.randint(1, 6)
        move, key = gnubg_nn.bestmove(board, die1, die2, b=1)
        decisions += 1
        if move:
            mover, other = gnubg_nn.boardfromkey(key)  # already seen from the next side to move
            board = [list(mover), list(other)]
        else:
            board = [board[1], board[0]]
        if sum(board[0]) == 0 or sum(board[1]) == 0:
            games += 1
            board = _gnubg_start()
            if time.perf_counter() >= end:
                break
        elif decisions % 256 == 0 and time.perf_counter() >= end:
            break
    return decisions, games, time.perf_counter() - begin


def gnubg_available() -> bool:
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        return False
    return True


def gnubg_throughput(seconds: float, processes: int = 1, seed: int = 1) -> Optional[Throughput]:
    """GNU Backgammon's neural net at 0-ply playing itself (``gnubg_nn.bestmove``); None if not installed.

    ``processes`` independent games loops run side by side (the C engine is
    single-threaded); the rates add up.
    """
    if not gnubg_available():
        return None
    jobs = [(seconds, seed + index) for index in range(processes)]
    if processes == 1:
        results = [_gnubg_worker(jobs[0])]
    else:
        with get_context("spawn").Pool(processes) as pool:
            results = pool.map(_gnubg_worker, jobs)
    decisions = sum(r[0] for r in results)
    games = sum(r[1] for r in results)
    elapsed = max(r[2] for r in results)
    return Throughput(sum(r[0] / r[2] for r in results), sum(r[1] / r[2] for r in results), elapsed, decisions,
                      games)


# -- the evaluator alone ------------------------------------------------------------------------------
def evaluator_costs(variant: str, seconds: float = 1.5, positions: int = 768, hidden: int = 128,
                    seed: int = 0) -> dict[str, float]:
    """Nanoseconds per afterstate: ``encode`` + torch (1 thread) against the fast kernel on 1 and 2 threads.

    The afterstates of ``positions`` mixed random positions (playouts and end
    games) with random dice; each path is timed for ``seconds``.
    """
    import numpy as np
    import torch

    from ..config import ModelConfig
    from ..fast_eval import FastEvaluator
    from ..model import EvaluatorNet
    from ..movegen import generate
    from ..movegen.random_positions import mixed_positions, random_dice
    from ..rules.options import variant_rules
    from .policy import afterstate_distributions_torch

    rules = variant_rules(variant)
    rng = np.random.default_rng(seed)
    batch = mixed_positions(rules, positions, rng)
    afterstates = generate(batch, random_dice(len(batch), rng))
    net = EvaluatorNet(ModelConfig(layers=1, hidden=hidden), rules, seed=seed)
    evaluator = FastEvaluator.from_net(net)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        paths = {
            "torch_1_thread": lambda: afterstate_distributions_torch(net, afterstates),
            "fast_1_thread": lambda: evaluator.afterstate_distributions(afterstates, threads=1),
            "fast_2_threads": lambda: evaluator.afterstate_distributions(afterstates, threads=2),
        }
        costs = {"afterstates": float(len(afterstates))}
        for name, run in paths.items():
            run()
            begin, calls = time.perf_counter(), 0
            while time.perf_counter() - begin < seconds:
                run()
                calls += 1
            costs[name] = (time.perf_counter() - begin) / calls / len(afterstates) * 1e9
    finally:
        torch.set_num_threads(threads)
    return costs
