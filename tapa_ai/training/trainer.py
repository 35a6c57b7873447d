"""The training loop of ``tapa-ai train``: self-play, TD(lambda) updates, evaluation, checkpoints, logs.

A :class:`Trainer` composes the parts of a run: self-play
(:class:`~tapa_ai.training.selfplay.SelfPlay`), the learner
(:class:`~tapa_ai.training.learner.Learner`: the network, the optimizer, the learning passes), the
evaluations (:class:`~tapa_ai.training.evaluation.Evaluation`) and the checkpoints
(:mod:`~tapa_ai.training.run_state`: what a checkpoint holds of the run); its loop plays and learns, and
the :class:`~tapa_ai.training.schedule.Schedule` logs, evaluates and checkpoints on the way.

Reproducible from config and seed: one ``numpy`` generator (seeded by ``run.seed``) draws every die and
exploration choice, the network is initialised from the same seed, evaluations use their own fixed seed, and a
checkpoint stores the network, optimizer, generator state, counters and the running self-play games, so
``--resume`` continues exactly as if the run had never stopped.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from ..config import TrainConfig
from ..movegen.generate import default_threads as movegen_threads
from ..net.checkpoint import Checkpoint
from ..net.checkpoint_dir import CheckpointManager, RunLock
from ..net.model import EvaluatorNet, configure_threads
from . import run_state
from .evaluation import OPPONENTS, EvalRecord, Evaluation
from .learner import Learner, networks
from .replay import ReplayBuffer
from .runs import (TrainingError, check_device, check_same_network, new_run_directory, resume_checkpoint,
                   run_rules)
from .schedule import Schedule
from .selfplay import FinishedGame, SelfPlay
from .stopping import StopSignals, TrainingStopped, describe

__all__ = ["Trainer", "TrainingError", "TrainingStopped", "EvalRecord", "new_run_directory", "resume_checkpoint",
           "OPPONENTS"]


class Trainer:
    """One training run: build it with a config (new run) or from a checkpoint (resume)."""

    overlaps = True
    """Whether ``learning.overlap`` applies (the distributed learner's actors play one version behind anyway)."""
    actors_label = False
    """Expert iteration: True where the search labels come with the games (distributed actors make them);
    False: this trainer labels a sample of the positions it learns from itself."""

    def __init__(self, config: TrainConfig, run_dir: Path, checkpoint: Optional[Checkpoint] = None) -> None:
        if checkpoint is not None:
            # Before building anything: the network built from the config must be the checkpoint's.
            check_same_network(config, checkpoint)
        self.config = config
        self.run_dir = Path(run_dir)
        self.rules = run_rules(config)
        self.device = check_device(config.run.device)
        self.evaluation = Evaluation(config, self.rules)
        configure_threads(config.run.torch_threads)
        self.rng = np.random.default_rng(config.run.seed)
        learning = config.learning
        # learning.overlap: self-play plays with a copy of the weights, taken before each learning pass that
        # then runs in the learner thread; without it self-play plays the net itself.
        net, play_net = networks(config, self.rules, self.device, learning.overlap and self.overlaps)
        # With a learner thread (overlap), move generation leaves it a core (measured ~3% faster on two cores).
        threads = max(1, movegen_threads() - 1) if play_net is not net else None
        self.selfplay = SelfPlay(self.rules, play_net, config.selfplay.parallel_games, self.rng,
                                 config.selfplay.max_turns, expected=learning.targets == "expected",
                                 bearoff=learning.bearoff_targets, movegen_threads=threads)
        self.learner = Learner(config, self.rules, net, play_net, self.rng, self.device,
                               actors_label=self.actors_label)
        self.pending: list[FinishedGame] = []
        """Finished games not learned from yet (checkpointed)."""
        self.cpu_seconds = 0.0
        """Process CPU time (all threads) spent playing and learning, evaluations and checkpoints excluded."""
        self.wall_seconds = 0.0
        """Wall-clock time spent playing and learning, evaluations and checkpoints excluded."""
        self.manager = CheckpointManager(self.run_dir, config.checkpoint.keep_last)
        if checkpoint is not None:
            run_state.restore(self, checkpoint)

    # -- the parts' state --------------------------------------------------
    @property
    def games(self) -> int:
        return self.selfplay.stats.games

    @property
    def decisions(self) -> int:
        return self.selfplay.stats.decisions

    @property
    def net(self) -> EvaluatorNet:
        """The network learned (:attr:`Learner.net`)."""
        return self.learner.net

    @property
    def play_net(self) -> EvaluatorNet:
        """The network self-play plays with (:attr:`Learner.play_net`)."""
        return self.learner.play_net

    @property
    def steps(self) -> int:
        return self.learner.steps

    @property
    def updates(self) -> int:
        return self.learner.updates

    @property
    def labels_added(self) -> int:
        return self.learner.labels_added

    @property
    def replay(self) -> Optional[ReplayBuffer]:
        return self.learner.replay

    @property
    def evaluations(self) -> list[EvalRecord]:
        return self.evaluation.records

    @property
    def best_score(self) -> float:
        return self.evaluation.best_score

    # -- learning, evaluating, saving ----------------------------------------
    def learn(self, games: list[FinishedGame]) -> float:
        """One learning pass over ``games`` (:meth:`Learner.learn`), its weights handed to self-play; the mean
        loss."""
        loss = self.learner.learn(games, self.games)
        self.selfplay.weights_changed()
        return loss

    def join_learning(self) -> float:
        """Wait for the learning pass in flight (learning.overlap); its loss, NaN if none was."""
        return self.learner.join()

    def add_labels(self, states: np.ndarray, targets: np.ndarray) -> None:
        """Search-labelled positions into the replay buffer (:meth:`Learner.add_labels`)."""
        self.learner.add_labels(states, targets)

    def evaluate(self) -> list[EvalRecord]:
        """Duels of the current net (0-ply, greedy) against each fixed opponent, paired dice."""
        self.join_learning()
        return self.evaluation.evaluate(self.net, self.games)

    def save(self, best: bool = False) -> Path:
        """A checkpoint of the run as it stands (``step_<games>.pt`` and ``latest.pt``); the numbered file."""
        return self.manager.save(best=best, **run_state.payload(self))

    def save_best(self) -> Path:
        """The run as it stands into ``best.pt`` alone."""
        return self.manager.save_best(**run_state.payload(self))

    # -- the loop ------------------------------------------------------------
    def train(self, progress: bool = True, should_stop: Optional[Callable[[], bool]] = None) -> None:
        """Play and learn until ``run.total_games`` (or ``should_stop()``); checkpoint, evaluate and log on the way.

        Holds the run directory's :class:`RunLock` meanwhile (a second trainer there is refused). Ctrl-C or
        SIGTERM (when called in the main thread): the step in flight is finished, a checkpoint written and
        :class:`TrainingStopped` raised; a resumed run continues exactly (:mod:`.stopping`).
        """
        with RunLock(self.run_dir), StopSignals() as stop:
            self._loop(progress, should_stop, stop)

    def _stop_if_asked(self, stop: StopSignals, schedule: Schedule) -> None:
        """After the loop: if a signal stopped it short of the end, checkpoint as things are and raise."""
        if not stop.requested or self.games >= self.config.run.total_games:
            return
        schedule.bar.write(f"stopping ({describe(stop.signal)}): writing a checkpoint at {self.games} games",
                           file=sys.stderr)
        # The finished games not learned from yet go into the checkpoint (extra["pending"]): learning
        # them now would make a batch the uninterrupted run never makes.
        self.save()
        raise TrainingStopped(stop.signal, self.games, self.manager.latest_path)

    def _loop(self, progress: bool, should_stop: Optional[Callable[[], bool]], stop: StopSignals) -> None:
        config, learner = self.config, self.learner
        schedule = Schedule(self, progress)
        positions_per_update = config.learning.batch_size
        loss = float("nan")
        try:
            while self.games < config.run.total_games and not stop.requested and not (should_stop and should_stop()):
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                ply = self.selfplay.step(config.selfplay.epsilon(self.games))
                finished = ply.finished
                if learner.traces is not None:
                    learner.online_step(ply)
                online_loss = learner.take_online_loss()
                if online_loss is not None:
                    schedule.window.losses.append(online_loss)
                if finished:
                    if learner.traces is None:
                        self.pending.extend(finished)
                    schedule.finished(finished)
                if sum(len(g.states) for g in self.pending) >= positions_per_update or (
                        self.pending and self.games >= min(schedule.next_checkpoint, config.run.total_games)):
                    if learner.overlaps:
                        loss, weights = learner.start_learning(self.pending, self.games)
                        if weights is not None:
                            self.selfplay.adopt(weights)
                    else:
                        loss = self.learn(self.pending)
                    if not math.isnan(loss):
                        schedule.window.losses.append(loss)
                    self.pending = []
                if learner.in_flight and (self.games >= min(schedule.next_eval, schedule.next_checkpoint)
                                                   or stop.requested):
                    # The pass in flight counts in this window's CPU time, not in the evaluation's.
                    loss = learner.join()
                    schedule.window.losses.append(loss)
                self.cpu_seconds += time.process_time() - cpu_start
                self.wall_seconds += time.perf_counter() - wall_start
                schedule.after_step(loss)
            self._stop_if_asked(stop, schedule)
            if self.pending:
                loss = self.learn(self.pending)
                self.pending = []
            self.save()
        finally:
            try:
                learner.close()
            finally:
                schedule.close()
