"""Self-play throughput with learning, and GNU Backgammon's 0-ply self-play beside it (``scripts/bench_selfplay.py``).

:func:`selfplay_throughput` runs the real :class:`~tapa_ai.training.trainer.Trainer`
(self-play, lambda-return learning, weight refreshes; evaluation and
checkpoints pushed out of the window) for a fixed wall-clock time and counts
decisions (moves chosen, one per game per ply) and finished games.
:func:`gnubg_throughput` is the anchor: ``gnubg_nn.bestmove`` at 0-ply
playing itself, one process per requested core.
:func:`distributed_throughput` runs the actor–learner layout the same way
and :func:`learner_capacity` the learner alone (``scripts/bench_distributed.py``).
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Callable, Optional, Sequence

CONFIGS_DIR = Path(__file__).resolve().parents[2] / "configs"
"""Where the shipped models' training configs are: ``configs/<variant>.toml``."""
BENCH_OVERRIDES = (
    "run.torch_threads=1", "run.total_games=1000000000",
    "eval.every_games=1000000000", "checkpoint.every_games=1000000000", "logging.tensorboard=false",
    "logging.log_every_games=1000000000",
)
"""Fixed for the benchmark: no evaluation, checkpoint or log inside the timed window (the network, encoding,
learning method and parallel games are the config's own).

One torch thread: the learning steps are small, and with two, torch's OpenMP
workers spin between steps on the core the evaluation threads need (5x
slower self-play here; ``OMP_WAIT_POLICY=PASSIVE`` also avoids it). The
evaluation and the move generator still use both cores.
"""


DISTRIBUTED_BENCH_CONFIG = CONFIGS_DIR / "quick.toml"
DISTRIBUTED_BENCH_MODEL = ("model.hidden=128", "model.layers=1")
"""The actor–learner benchmarks' base (``scripts/bench_distributed.py``): the quick config with a 259 x 128
network, as their recorded measurements in docs/training.md were made."""
DEFAULT_PARALLEL_GAMES = 256
"""Parallel games per actor of the actor–learner benchmarks."""


def training_config_path(variant: str) -> Path:
    """``configs/<variant>.toml``: the config the shipped ``checkpoints/<variant>.pt`` is trained with."""
    return CONFIGS_DIR / f"{variant}.toml"


@dataclass
class Throughput:
    decisions_per_s: float
    games_per_s: float
    seconds: float
    decisions: int
    games: int
    cpu_seconds: float = 0.0
    """Process CPU time (all threads) in the window, where measured."""
    network: str = ""
    """The network measured (``ModelConfig.describe``), where there is one."""
    parallel_games: int = 0
    """Parallel self-play games, where there are any."""

    def to_json(self) -> dict:
        data = {"decisions_per_s": round(self.decisions_per_s, 1), "games_per_s": round(self.games_per_s, 2)}
        if self.network:
            data.update(network=self.network, parallel_games=self.parallel_games)
        return data


def bench_config(variant: str, parallel_games: Optional[int], directory: str, overrides: Sequence[str] = (),
                 config_path: Optional[str | Path] = None):
    """The benchmark's config: ``config_path`` (default :func:`training_config_path`) with :data:`BENCH_OVERRIDES`."""
    from ..config import load_config

    games = [] if parallel_games is None else [f"selfplay.parallel_games={parallel_games}"]
    return load_config(config_path or training_config_path(variant),
                       [*BENCH_OVERRIDES, f"run.variant={variant}", *games, f"checkpoint.directory={directory}",
                        *overrides])


def selfplay_throughput(variant: str, seconds: float, parallel_games: Optional[int] = None,
                        warmup: float = 2.0, overrides: Sequence[str] = (), profile: Optional[str] = None,
                        config_path: Optional[str | Path] = None, init: Optional[str | Path] = None) -> Throughput:
    """Self-play with learning on ``variant`` for ``seconds`` after ``warmup`` seconds; decisions/s and games/s.

    The run is the variant's training config (``configs/<variant>.toml``, or ``config_path``) with
    :data:`BENCH_OVERRIDES`; ``parallel_games`` None keeps the config's.
    ``profile``: a path to write a ``cProfile`` of the timed window to (pstats format).
    ``init``: a checkpoint whose network (of the config's architecture) the run starts from instead of
    random weights. A trained ReLU network leaves most units at zero, which the evaluator skips, so
    training spends nearly all its time at the speed measured from trained weights.
    """
    from .trainer import Trainer, new_run_directory

    with tempfile.TemporaryDirectory(prefix="bench-selfplay-") as directory:
        config = bench_config(variant, parallel_games, directory, overrides, config_path)
        trainer = Trainer(config, new_run_directory(config))
        if init is not None:
            load_weights(trainer.net, init)
            trainer.play_net.load_state_dict(trainer.net.state_dict())  # learning.overlap: self-play's copy
        deadline = time.perf_counter() + warmup
        trainer.train(progress=False, should_stop=lambda: time.perf_counter() >= deadline)
        start_decisions, start_games, cpu_start = trainer.decisions, trainer.games, trainer.cpu_seconds
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
        cpu = trainer.cpu_seconds - cpu_start
    return Throughput(decisions / elapsed, games / elapsed, elapsed, decisions, games, cpu,
                      config.model.describe(), config.selfplay.parallel_games)


def load_weights(net, path: str | Path) -> None:
    """Copy the network of checkpoint ``path`` into ``net``; ValueError if the two architectures differ."""
    import torch

    from ..net.checkpoint import load_network

    source = load_network(path)
    shapes = {name: tuple(value.shape) for name, value in source.state_dict().items()}
    wanted = {name: tuple(value.shape) for name, value in net.state_dict().items()}
    if (shapes != wanted or source.encoding_version != net.encoding_version
            or source.config.activation != net.config.activation or source.rules.name != net.rules.name):
        def shape(network) -> str:
            return f"{network.rules.name}, {network.config.describe()}, encoding version {network.encoding_version}"

        raise ValueError(f"{path}: its network ({shape(source)}) is not the benchmarked one ({shape(net)}); "
                         "give the config that built it (--config, or --set model.KEY=VALUE)")
    with torch.no_grad():
        net.load_state_dict(source.state_dict())


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
def evaluator_costs(variant: str, seconds: float = 1.5, positions: int = 768, hidden: int | Sequence[int] = 128,
                    seed: int = 0, encoding_version: int = 1,
                    init: Optional[str | Path] = None) -> dict[str, float]:
    """Nanoseconds per afterstate: ``encode`` + torch (1 thread) against the fast kernel on 1 and 2 threads.

    ``hidden``: one width or a list of widths; with two or more hidden layers also the ``fused`` kernel
    (every layer row by row) beside the default batched matrix products.

    The afterstates of ``positions`` mixed random positions (playouts and end
    games) with random dice; each path is timed for ``seconds``. ``init``: time this checkpoint's
    network instead (``hidden`` and ``encoding_version`` are then its own): trained ReLU units are
    mostly zero, which the fused kernel skips, so a trained net evaluates faster than a random one.
    """
    import numpy as np
    import torch

    from ..config import ModelConfig
    from ..net.fast_eval import FastEvaluator
    from ..net.model import EvaluatorNet
    from ..movegen import generate
    from ..movegen.random_positions import mixed_positions, random_dice
    from ..rules.options import variant_rules
    from ..net.evaluator import TorchEvaluator

    rules = variant_rules(variant)
    rng = np.random.default_rng(seed)
    batch = mixed_positions(rules, positions, rng)
    afterstates = generate(batch, random_dice(len(batch), rng))
    if init is not None:
        from ..net.checkpoint import load_network

        net = load_network(init)
        if net.rules.name != rules.name:
            raise ValueError(f"{init}: a {net.rules.name} network, not {variant}")
        widths = [linear.out_features for linear in net.linear_layers()[:-1]]
    else:
        widths = [hidden] if isinstance(hidden, int) else list(hidden)
        net = EvaluatorNet(ModelConfig(layers=len(widths), hidden=widths, encoding_version=encoding_version),
                           rules, seed=seed)
    evaluator = FastEvaluator.from_net(net)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        paths = {
            "torch_1_thread": lambda: TorchEvaluator(net).afterstate_distributions(afterstates, np.float32),
            "fast_1_thread": lambda: evaluator.afterstate_distributions(afterstates, threads=1),
            "fast_2_threads": lambda: evaluator.afterstate_distributions(afterstates, threads=2),
        }
        if len(widths) >= 2:
            # The other way to run the hidden-to-hidden layers (FastEvaluator's default is fused).
            batched = FastEvaluator.from_net(net, dense="batched")
            paths["batched_1_thread"] = lambda: batched.afterstate_distributions(afterstates, threads=1)
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


# -- distributed training: actors + learner ------------------------------------------------------------
class TimedWindow:
    """The timed window of an actor–learner benchmark, its ``should_stop`` for ``Trainer.train``.

    The window opens ``warmup`` seconds after ``started()`` first holds (the actors' start-up is not
    counted) and closes ``seconds`` after it opened; :attr:`begin` and :attr:`end` are
    ``(perf_counter time, *snapshot())`` taken at the two moments.
    """

    def __init__(self, seconds: float, warmup: float, started: Callable[[], bool], snapshot: Callable[[], tuple]):
        self.seconds, self.warmup = seconds, warmup
        self.started, self.snapshot = started, snapshot
        self.first: Optional[float] = None
        self.begin: Optional[tuple] = None
        self.end: Optional[tuple] = None

    @property
    def open(self) -> bool:
        """Between the two snapshots: what arrives now is counted."""
        return self.begin is not None and self.end is None

    def _mark(self, now: float) -> tuple:
        return (now, *self.snapshot())

    def should_stop(self) -> bool:
        if self.end is not None:  # closed: stays closed, its snapshots kept
            return True
        now = time.perf_counter()
        if self.first is None:
            if self.started():
                self.first = now
        elif self.begin is None:
            if now >= self.first + self.warmup:
                self.begin = self._mark(now)
        elif now >= self.begin[0] + self.seconds:
            self.end = self._mark(now)
            return True
        return False


@dataclass
class DistributedThroughput:
    """Learned games per second of actor–learner training, and where the CPU time went (per game)."""

    workers: int
    transport: str
    decisions_per_s: float
    games_per_s: float
    seconds: float
    games: int
    decisions: int
    positions_per_game: float
    actor_cpu_ms_per_game: float
    """Actor CPU time per game learned (self-play only), summed over the actors."""
    learner_cpu_ms_per_game: float
    """CPU time of the learner process per game learned (receiving, learning, publishing)."""
    updates_per_s: float
    mean_staleness: float
    max_staleness: int

    def to_json(self) -> dict:
        return {key: (round(value, 3) if isinstance(value, float) else value)
                for key, value in self.__dict__.items()}


def distributed_throughput(variant: str, seconds: float, workers: int, parallel_games: int = DEFAULT_PARALLEL_GAMES,
                           warmup: float = 2.0, overrides: Sequence[str] = (), ray_address: Optional[str] = None
                           ) -> DistributedThroughput:
    """The learner with ``workers`` actors (processes, or Ray actors at ``ray_address``) for ``seconds``.

    Config: :data:`DISTRIBUTED_BENCH_CONFIG` (each actor plays
    ``parallel_games`` games); the window opens ``warmup`` seconds after the
    first batch arrives (the actors' start-up is not counted) and counts
    games and decisions as the learner takes them.
    """
    import numpy as np

    from .distributed import DistributedTrainer
    from .trainer import new_run_directory

    with tempfile.TemporaryDirectory(prefix="bench-distributed-") as directory:
        config = bench_config(variant, parallel_games, directory, [*DISTRIBUTED_BENCH_MODEL, *overrides],
                              DISTRIBUTED_BENCH_CONFIG)
        trainer = DistributedTrainer(config, new_run_directory(config), workers=workers, ray_address=ray_address)
        window = TimedWindow(seconds, warmup, lambda: trainer.games > 0,
                             lambda: (trainer.games, trainer.decisions, time.process_time(), trainer.updates))
        actor = {"cpu": 0.0}
        lags: list[int] = []

        def on_batch(batch) -> None:
            if window.open:
                actor["cpu"] += batch.cpu_seconds
                lags.append(trainer.updates - batch.version)

        trainer.on_batch = on_batch
        trainer.train(progress=False, should_stop=window.should_stop)
        begin, end = window.begin, window.end
        elapsed = end[0] - begin[0]
        games, decisions = end[1] - begin[1], end[2] - begin[2]
        lags = np.array(lags or [0])
    per_game = max(games, 1)
    return DistributedThroughput(
        workers=workers, transport="ray" if ray_address else "processes",
        decisions_per_s=decisions / elapsed, games_per_s=games / elapsed, seconds=elapsed, games=games,
        decisions=decisions, positions_per_game=trainer.selfplay.stats.turns_of_finished / max(trainer.games, 1),
        actor_cpu_ms_per_game=actor["cpu"] / per_game * 1e3,
        learner_cpu_ms_per_game=(end[3] - begin[3]) / per_game * 1e3,
        updates_per_s=(end[4] - begin[4]) / elapsed, mean_staleness=float(lags.mean()), max_staleness=int(lags.max()))


def learner_capacity(variant: str, seconds: float, games_per_update: int = 32, record_games: int = 512,
                     parallel_games: int = DEFAULT_PARALLEL_GAMES, overrides: Sequence[str] = ()) -> dict:
    """How many games per second the learner alone can learn from (``Trainer.learn``, plus the publication).

    Plays ``record_games`` self-play games first (the current config's
    exploration), then for ``seconds`` learns them again and again in updates
    of ``games_per_update`` games, each followed by what a distributed
    learner does after an update (copying the weights out for publication).
    """
    from .actor import numpy_state
    from .trainer import Trainer, new_run_directory

    with tempfile.TemporaryDirectory(prefix="bench-learner-") as directory:
        config = bench_config(variant, parallel_games, directory, [*DISTRIBUTED_BENCH_MODEL, *overrides],
                              DISTRIBUTED_BENCH_CONFIG)
        trainer = Trainer(config, new_run_directory(config))
        games: list = []
        while len(games) < record_games:
            games += trainer.selfplay.play_ply(config.selfplay.epsilon(0))
        steps_before = trainer.steps
        updates = positions = learned = 0
        begin, cpu = time.perf_counter(), time.process_time()
        while time.perf_counter() - begin < seconds:
            start = (updates * games_per_update) % (len(games) - games_per_update)
            chunk = games[start:start + games_per_update]
            trainer.learn(chunk)
            numpy_state(trainer.net)
            updates += 1
            learned += len(chunk)
            positions += sum(len(game.states) for game in chunk)
        elapsed = time.perf_counter() - begin
        cpu = time.process_time() - cpu
    return {"updates_per_s": updates / elapsed, "games_per_s": learned / elapsed,
            "positions_per_s": positions / elapsed, "minibatch_steps_per_s": (trainer.steps - steps_before) / elapsed,
            "positions_per_game": positions / max(learned, 1), "cpu_ms_per_game": cpu / max(learned, 1) * 1e3,
            "games_per_update": games_per_update, "batch_size": config.learning.batch_size}
