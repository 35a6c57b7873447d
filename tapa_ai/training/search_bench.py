"""Expert iteration's throughput: search targets per second, made in the learner or by actors (``scripts/bench_distributed.py search``).

:func:`search_throughput` runs the real trainers (the single-process one, which labels in its learner, or the
learner with actors that label before they send) from a checkpoint for a fixed wall-clock time and counts
the targets as the learner adds them; :func:`search_learner_capacity` times what one learner core does per
batch of actor-made labels, alone: what sets how many actor cores one learner serves.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from .throughput import TimedWindow, bench_config, load_weights

SEARCH_BENCH_OVERRIDES = ("learning.targets=search", "learning.search_plies=2", "learning.lr_schedule=constant",
                          "learning.learning_rate=0.0001")
"""The search-target benchmarks' learning settings (the rest: the variant's training config and checkpoint)."""


@dataclass
class SearchThroughput:
    """Search targets (expert iteration's labels) learned per second, and where the CPU time went."""

    workers: int
    """Actors; 0: the single-process trainer (it labels in its learner)."""
    transport: str
    targets_per_s: float
    games_per_s: float
    seconds: float
    targets: int
    games: int
    actor_cpu_ms_per_target: float
    """CPU time of the actors (self-play and labelling) per target, summed over the actors."""
    label_cpu_ms_per_target: float
    """Of that, the labelling (the n-ply search)."""
    learner_cpu_ms_per_target: float
    """CPU time of the learner process per target (receiving, the replay buffer, gradient steps, publishing)."""
    learner_busy_share: float
    """The learner process's CPU time over the wall-clock time (1 - its idle share)."""
    mean_staleness: float

    def to_json(self) -> dict:
        return {key: (round(value, 4) if isinstance(value, float) else value)
                for key, value in self.__dict__.items()}


def search_throughput(checkpoint: str | Path, seconds: float, workers: int, warmup: float = 5.0,
                      overrides: Sequence[str] = (), ray_address: Optional[str] = None) -> SearchThroughput:
    """Expert iteration from ``checkpoint`` (its variant's training config, :data:`SEARCH_BENCH_OVERRIDES`).

    ``workers`` 0: the single-process trainer, which labels in its learner; else the learner with that
    many actors (processes, or Ray actors at ``ray_address``) that label before they send. The window opens
    ``warmup`` seconds after the first labels arrive and counts targets as the learner adds them.
    """
    import numpy as np

    from ..net.checkpoint import load_network
    from .distributed import DistributedTrainer
    from .trainer import Trainer, new_run_directory

    variant = load_network(checkpoint).rules.name
    with tempfile.TemporaryDirectory(prefix="bench-search-") as directory:
        config = bench_config(variant, None, directory, [*SEARCH_BENCH_OVERRIDES, *overrides])
        if workers == 0:
            trainer = Trainer(config, new_run_directory(config))
        else:
            trainer = DistributedTrainer(config, new_run_directory(config), workers=workers,
                                         ray_address=ray_address)
        load_weights(trainer.net, checkpoint)
        trainer.play_net.load_state_dict(trainer.net.state_dict())  # the evaluators follow the weights
        window = TimedWindow(seconds, warmup, lambda: trainer.labels_added > 0,
                             lambda: (trainer.labels_added, trainer.games, time.process_time(), trainer.cpu_seconds))
        actor = {"cpu": 0.0, "label": 0.0}
        lags: list[int] = []

        def on_batch(batch) -> None:
            if window.open:
                actor["cpu"] += batch.cpu_seconds
                actor["label"] += batch.label_cpu_seconds
                lags.append(trainer.updates - batch.version)

        if workers:
            trainer.on_batch = on_batch
        trainer.train(progress=False, should_stop=window.should_stop)
        begin, end = window.begin, window.end
    elapsed = end[0] - begin[0]
    targets, games = end[1] - begin[1], end[2] - begin[2]
    per_target = max(targets, 1)
    learner_cpu = end[3] - begin[3]
    if workers == 0:  # one process does everything: its CPU time is the "actor's" too
        actor["cpu"] = actor["label"] = learner_cpu
    return SearchThroughput(
        workers=workers, transport="ray" if ray_address else ("processes" if workers else "single process"),
        targets_per_s=targets / elapsed, games_per_s=games / elapsed, seconds=elapsed, targets=targets, games=games,
        actor_cpu_ms_per_target=actor["cpu"] / per_target * 1e3,
        label_cpu_ms_per_target=actor["label"] / per_target * 1e3,
        learner_cpu_ms_per_target=learner_cpu / per_target * 1e3, learner_busy_share=learner_cpu / elapsed,
        mean_staleness=float(np.mean(lags)) if lags else 0.0)


def search_learner_capacity(checkpoint: str | Path, seconds: float, labels_per_update: int = 64,
                            overrides: Sequence[str] = ()) -> dict:
    """Search targets per second that one learner core absorbs when actors make them (what it does per batch).

    For ``seconds``: unpickle an :class:`~tapa_ai.training.actor.ActorBatch` of ``labels_per_update`` labels
    (32 games' counts with them, as an actor sends), add them to the replay buffer, take the gradient steps
    of the draws they earn (``replay_ratio`` per label) and copy the weights out for publication.
    """
    import pickle

    import numpy as np

    from ..net.checkpoint import load_network
    from .actor import ActorBatch, numpy_state
    from .distill import collect_states
    from .trainer import Trainer, new_run_directory

    net = load_network(checkpoint)
    with tempfile.TemporaryDirectory(prefix="bench-search-learner-") as directory:
        config = bench_config(net.rules.name, None, directory, [*SEARCH_BENCH_OVERRIDES, *overrides])
        trainer = Trainer(config, new_run_directory(config))
        load_weights(trainer.net, checkpoint)
        trainer.learner.actors_label = True
        rng = np.random.default_rng(1)
        states = collect_states(trainer.net, 4 * labels_per_update, rng)
        targets = rng.dirichlet(np.ones(trainer.net.num_outcomes), len(states)).astype(np.float32)
        games = []
        while len(games) < 32:
            games += [game.counts_only() for game in trainer.selfplay.play_ply(0.0)]
        messages = [pickle.dumps(ActorBatch(0, 0, 0, games[:32], 3000, 0, 1.0, 1.0, 0.0,
                                            search_states=states[i::4][:labels_per_update],
                                            search_targets=targets[i::4][:labels_per_update]))
                    for i in range(4)]
        trainer.add_labels(states, targets)  # a buffer to draw from
        trainer.learner.replay_credit = 0.0
        steps_before = trainer.steps
        updates = labels = 0
        begin, cpu = time.perf_counter(), time.process_time()
        while time.perf_counter() - begin < seconds:
            batch = pickle.loads(messages[updates % len(messages)])
            trainer.add_labels(batch.search_states, batch.search_targets)
            trainer.learn([])
            numpy_state(trainer.net)
            updates += 1
            labels += len(batch.search_states)
        elapsed = time.perf_counter() - begin
        cpu = time.process_time() - cpu
    return {"targets_per_s": labels / elapsed, "updates_per_s": updates / elapsed,
            "minibatch_steps_per_s": (trainer.steps - steps_before) / elapsed,
            "cpu_ms_per_target": cpu / max(labels, 1) * 1e3, "labels_per_update": labels_per_update,
            "replay_ratio": config.learning.replay_ratio, "batch_size": config.learning.batch_size,
            "network": config.model.describe(), "message_bytes": len(messages[0])}
