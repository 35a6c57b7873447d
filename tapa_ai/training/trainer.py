"""The training loop of ``tapa-ai train``: self-play, TD(lambda) updates, evaluation, checkpoints, logs.

Reproducible from config and seed: one ``numpy`` generator (seeded by ``run.seed``) draws every die and
exploration choice, the network is initialised from the same seed, evaluations use their own fixed seed, and a
checkpoint stores the network, optimizer, generator state, counters and the running self-play games, so
``--resume`` continues exactly as if the run had never stopped.
"""

from __future__ import annotations

import math
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import torch

from ..arena.duels import duel, pipcount_policy, random_policy
from ..bots.search import NetBot
from ..config import TrainConfig
from ..net.checkpoint import Checkpoint
from ..net.checkpoint_dir import CheckpointManager, RunLock
from ..net.encoding import ENCODING_NAME
from ..net.evaluator import kernel_available
from ..net.fast_eval import FastEvaluator, fast_encode
from ..net.fast_kernel import race_flags
from ..net.model import EvaluatorNet, configure_threads, soft_cross_entropy
from ..movegen.generate import default_threads as movegen_threads
from ..rules.options import variant_rules
from .distill import label_positions
from .replay import ReplayBuffer
from .schedule import Schedule as _Schedule
from .runs import TrainingError, check_device, check_same_network, new_run_directory, resume_checkpoint
from .stopping import StopSignals, TrainingStopped, describe
from .selfplay import STATE_WIDTH, FinishedGame, SelfPlay, unpack_states
from .traces import OnlineTraces

__all__ = ["Trainer", "TrainingError", "TrainingStopped", "EvalRecord", "new_run_directory", "resume_checkpoint",
           "OPPONENTS"]

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
        self.rules = variant_rules(config.run.variant)
        self.device = check_device(config.run.device)
        self.opponents = self._opponents(config.eval.opponents)
        configure_threads(config.run.torch_threads)
        self.rng = np.random.default_rng(config.run.seed)
        self.net = EvaluatorNet(config.model, self.rules, seed=config.run.seed).to(self.device)
        learning = config.learning
        # learning.overlap: self-play plays with a copy of the weights, taken before each learning pass that
        # then runs in the learner thread (self._learning); without it self-play plays the net itself.
        self.play_net = self.net
        if learning.overlap and self.overlaps:
            self.play_net = EvaluatorNet(config.model, self.rules, seed=config.run.seed).to(self.device)
            self.play_net.load_state_dict(self.net.state_dict())
        self._learner: Optional[ThreadPoolExecutor] = None
        self._learning: Optional[Future] = None
        self._next_evaluator: Optional[FastEvaluator] = None
        """Self-play's evaluator of the weights the pass in flight ends with (built by the learner thread)."""
        if learning.optimizer == "adam":
            # foreach: the update as a few multi-tensor ops instead of a loop of small ones per tensor
            # (~20% cheaper a step at 309 x 128 on one thread). Not fused=True: that kernel's rounding
            # depends on where the tensors lie in memory, so a resumed run would drift from an
            # uninterrupted one (tests/test_training.py).
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=learning.learning_rate,
                                              weight_decay=learning.weight_decay, foreach=True)
        else:
            self.optimizer = torch.optim.SGD(self.net.parameters(), lr=learning.learning_rate,
                                             weight_decay=learning.weight_decay)
        self.selfplay = SelfPlay(self.rules, self.play_net, config.selfplay.parallel_games, self.rng,
                                 config.selfplay.max_turns, expected=learning.targets == "expected",
                                 bearoff=learning.bearoff_targets)
        if self.play_net is not self.net:
            # The learner thread holds a core: move generation leaves it (measured ~3% faster on two cores).
            self.selfplay.movegen_threads = max(1, movegen_threads() - 1)
        self.pending: list[FinishedGame] = []
        # Expert iteration (learning.targets = "search"): search-labelled positions and the gradient
        # samples owed to them (a fraction carried from one learning pass to the next).
        self.replay = (ReplayBuffer(learning.replay_size, STATE_WIDTH, self.net.num_outcomes)
                       if learning.targets == "search" else None)
        self.replay_credit = 0.0
        self.labels_added = 0
        """Search labels added to the replay buffer over the run's life (made here or by actors; checkpointed)."""
        self.updates = 0
        """Learning passes over the run's life, whichever trainers made them (checkpointed as ``learner_updates``):
        distributed training's weights version."""
        self.traces: Optional[OnlineTraces] = None
        if learning.method == "online-traces":
            self.traces = OnlineTraces(self.net, config.selfplay.parallel_games, learning.lambda_,
                                       learning.learning_rate, learning.grad_clip)
            self.selfplay.on_ply = self._online_step
        self.steps = 0
        self.cpu_seconds = 0.0
        """Process CPU time (all threads) spent playing and learning, evaluations and checkpoints excluded."""
        self.wall_seconds = 0.0
        """Wall-clock time spent playing and learning, evaluations and checkpoints excluded."""
        self.online_losses: list[float] = []
        self.best_score = -math.inf
        self.evaluations: list[EvalRecord] = []
        self.manager = CheckpointManager(self.run_dir, config.checkpoint.keep_last)
        if checkpoint is not None:
            self._restore(checkpoint)

    # -- counters --------------------------------------------------------
    @property
    def games(self) -> int:
        return self.selfplay.stats.games

    @property
    def decisions(self) -> int:
        return self.selfplay.stats.decisions

    # -- learning --------------------------------------------------------
    def learn(self, games: list[FinishedGame]) -> float:
        """One pass of minibatch gradient steps over the positions of ``games``; returns the mean loss."""
        self.join_learning()
        self.updates += 1
        prepared = self._prepare_pass(games)
        loss = float("nan") if prepared is None else self._run_pass(*prepared, threads=None)
        # Self-play evaluates with a numpy copy of the weights: copy them now (~25 us).
        self.selfplay.evaluator.refresh()
        return loss

    def _start_learning(self, games: list[FinishedGame]) -> float:
        """learning.overlap: finish the pass in flight, give self-play its weights, start a pass over ``games``.

        Returns the loss of the pass finished here (NaN if none). Everything that draws from ``self.rng`` (the
        replay draws, the minibatch order) happens here, in the calling thread, so the run does not depend on
        how the two threads interleave; the learner thread only runs the gradient steps.
        """
        loss = self.join_learning()
        self.updates += 1
        with torch.no_grad():
            for mine, theirs in zip(self.play_net.state_dict().values(), self.net.state_dict().values()):
                mine.copy_(theirs)
        if self._next_evaluator is not None:
            self.selfplay.evaluator.model.adopt(self._next_evaluator)
            self._next_evaluator = None
        prepared = self._prepare_pass(games)
        if prepared is not None:
            if self._learner is None:
                self._learner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="learner")
            # One thread for the pass's own encoding: the calling thread's self-play has the others.
            self._learning = self._learner.submit(self._learner_pass, prepared)
        return loss

    def _learner_pass(self, prepared: tuple) -> float:
        """A pass in the learner thread; then self-play's next evaluator, built from the weights it ends with."""
        loss = self._run_pass(*prepared, threads=1)
        self._next_evaluator = FastEvaluator.from_net(self.net) if kernel_available(self.net) else None
        return loss

    def join_learning(self) -> float:
        """Wait for the learning pass in flight (learning.overlap) and return its loss; NaN if none was."""
        if self._learning is None:
            return float("nan")
        learning, self._learning = self._learning, None
        return learning.result()

    def _prepare_pass(self, games: list[FinishedGame]):
        """What a pass over ``games`` draws from ``self.rng`` and sets: (positions, targets, minibatches); None if
        it has nothing to learn. ``targets`` is the games themselves where their lambda-returns are the targets
        (computed in :meth:`_run_pass`, off the calling thread when learning overlaps)."""
        if not games and not self.actors_label:
            return None
        rate = self.config.learning.rate(self.games)
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        targets = games
        if self.replay is not None:
            if not self.actors_label:
                self._label(np.concatenate([game.states for game in games]))
            states, targets = self._draw_replay()
            if len(states) == 0:
                return None
        else:
            states = np.concatenate([game.states for game in games])
        positions = unpack_states(states, self.rules)
        return positions, targets, self._minibatches(positions)

    def _run_pass(self, positions, targets, minibatches: list, threads: Optional[int]) -> float:
        """The gradient steps of a prepared pass; returns the mean loss. ``threads``: of the encoding."""
        if isinstance(targets, list):
            targets = np.concatenate([game.targets(self.config.learning.lambda_) for game in targets])
        # The evaluator's kernel writes the features (bit-equal to encode, ~6x faster at version 2).
        features = torch.from_numpy(fast_encode(positions, self.net.encoding_version, threads=threads))
        features = features.to(self.device)
        targets = torch.from_numpy(targets.astype(np.float32)).to(self.device)
        losses = []
        for index, part in minibatches:
            logits = self.net(features[index]) if part is None else self.net.part_logits(features[index], part)
            loss = soft_cross_entropy(logits, targets[index])
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if self.config.learning.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.config.learning.grad_clip)
            self.optimizer.step()
            self.steps += 1
            losses.append(float(loss.detach()))
        return float(np.mean(losses))

    def _minibatches(self, positions) -> list[tuple[torch.Tensor, Optional[str]]]:
        """The rows of each learning step, in a random order: (row indices, network part or None).

        With one network: consecutive slices of one permutation. With a race network every minibatch holds
        one phase only (the contact rows and the race rows each permuted and sliced, the steps then shuffled):
        the two networks share no weights, so each step trains one of them without splitting its rows.
        """
        batch_size = self.config.learning.batch_size
        if self.net.race_layers is None:
            order = torch.from_numpy(self.rng.permutation(len(positions))).to(self.device)
            return [(order[start:start + batch_size], None) for start in range(0, len(positions), batch_size)]
        race = race_flags(positions.board, positions.pinned, positions.bar)
        steps = []
        for part, rows in (("layers", np.flatnonzero(~race)), ("race_layers", np.flatnonzero(race))):
            rows = torch.from_numpy(rows[self.rng.permutation(len(rows))]).to(self.device)
            steps += [(rows[start:start + batch_size], part) for start in range(0, len(rows), batch_size)]
        return [steps[i] for i in self.rng.permutation(len(steps))]

    def _label(self, states: np.ndarray) -> None:
        """Label a ``search_fraction`` sample of ``states`` by the current net's search and add them to the buffer."""
        self.add_labels(*label_positions(self.net, states, self.config.learning, self.rng))

    def add_labels(self, states: np.ndarray, targets: np.ndarray) -> None:
        """Search-labelled positions (made here or by an actor) into the replay buffer; the draws they earn."""
        if len(states):
            self.replay.add(states, targets)
            self.labels_added += len(states)
        self.replay_credit += len(states) * self.config.learning.replay_ratio

    def _draw_replay(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows the labels added so far have earned (``replay_ratio`` per label), drawn from the whole buffer."""
        draws = int(self.replay_credit)
        self.replay_credit -= draws
        if draws == 0 or len(self.replay) == 0:
            return np.zeros((0, STATE_WIDTH), dtype=np.int8), np.zeros((0, self.net.num_outcomes), dtype=np.float32)
        return self.replay.sample(draws, self.rng)

    def _online_step(self, batch, next_values: np.ndarray, new_game: np.ndarray) -> None:
        """``learning.method = "online-traces"``: one TD(lambda) update per ply (see :mod:`traces`)."""
        self.traces.learning_rate = self.config.learning.rate(self.games)
        self.online_losses.append(self.traces.step(fast_encode(batch, self.net.encoding_version), next_values,
                                                   new_game))
        self.steps += 1

    # -- evaluation -------------------------------------------------------
    def _opponents(self, specs: list[str]) -> dict[str, Callable]:
        from ..bots.base import BotError
        from ..bots.spec import make_bot

        opponents = {}
        for spec in specs:
            if spec in OPPONENTS:
                opponents[spec] = OPPONENTS[spec]
                continue
            try:
                opponents[spec] = make_bot(spec, self.rules)
            except BotError as error:
                raise TrainingError(f"eval.opponents: {spec!r}: {error}") from None
        return opponents

    def evaluate(self) -> list[EvalRecord]:
        """Duels of the current net (0-ply, greedy) against each fixed opponent, paired dice."""
        self.join_learning()
        records = []
        self.net.eval()
        for name in self.config.eval.opponents:
            result = duel(self.rules, NetBot(self.net), self.opponents[name], max(1, self.config.eval.games // 2),
                          seed=self.config.run.seed + EVAL_SEED_OFFSET)
            records.append(EvalRecord(self.games, name, result.games, result.ppg, result.ppg_ci95, result.win_rate))
        self.net.train()
        self.evaluations.extend(records)
        return records

    # -- checkpoints -----------------------------------------------------
    def _payload(self) -> dict:
        self.join_learning()
        return dict(
            model_state={k: v.detach().cpu() for k, v in self.net.state_dict().items()},
            model_config=self.net.architecture(),
            encoding=(ENCODING_NAME, self.net.encoding_version),
            rule_options=self.rules,
            config=self.config,
            games=self.games,
            steps=self.steps,
            decisions=self.decisions,
            optimizer_state=self.optimizer.state_dict(),
            save_torch_rng=False,
            numpy_generator=self.rng,
            extra={
                "selfplay": self.selfplay.state_dict(),
                "pending": [game.to_plain() for game in self.pending],
                "replay": None if self.replay is None else {**self.replay.state_dict(), "credit": self.replay_credit,
                                                           "labels": self.labels_added},
                # learning.overlap: the weights self-play plays with (one learning pass behind the net).
                "play_weights": None if self.play_net is self.net else {
                    k: v.detach().cpu() for k, v in self.play_net.state_dict().items()},
                "best_score": self.best_score if math.isfinite(self.best_score) else None,
                "best_opponents": list(self.config.eval.opponents),
                "cpu_seconds": self.cpu_seconds,
                "learner_updates": self.updates,
                "wall_seconds": self.wall_seconds,
                "evaluations": [
                    {"games_trained": r.games_trained, "opponent": r.opponent, "games": r.games, "ppg": r.ppg,
                     "ppg_ci95": list(r.ppg_ci95), "win_rate": r.win_rate} for r in self.evaluations
                ],
            },
        )

    def save(self, best: bool = False) -> Path:
        return self.manager.save(best=best, **self._payload())

    def _restore(self, checkpoint: Checkpoint) -> None:
        try:
            self.net.load_state_dict(checkpoint.model_state)
            if checkpoint.optimizer_state is not None:
                self._check_optimizer_state(checkpoint.optimizer_state)
                self.optimizer.load_state_dict(checkpoint.optimizer_state)
                # The stored state carries the old hyperparameters; the config (with any
                # --set override given on resume) decides the learning rate from here on.
                for group in self.optimizer.param_groups:
                    group["lr"] = self.config.learning.learning_rate
                    group["weight_decay"] = self.config.learning.weight_decay
                    if isinstance(self.optimizer, torch.optim.Adam):  # older checkpoints stored foreach=None
                        group["foreach"] = True
            checkpoint.restore_rng(numpy_generator=self.rng)
            self.selfplay.load_state_dict(checkpoint.extra["selfplay"])
            self.pending = [FinishedGame.from_plain(game) for game in checkpoint.extra.get("pending", [])]
            if self.play_net is not self.net:
                # A run that overlapped before plays on with the weights it played with; one that starts
                # overlapping here plays with the net's.
                self.play_net.load_state_dict(checkpoint.extra.get("play_weights") or checkpoint.model_state)
            if self.replay is not None:
                replay = checkpoint.extra.get("replay")
                if replay is None:
                    # A run switched to expert iteration on resume (e.g. a TD-trained net fine-tuned by
                    # search targets): it starts with an empty buffer, as a new run does.
                    print(f"{checkpoint.path}: trained without search targets; expert iteration "
                          "starts here with an empty replay buffer", file=sys.stderr)
                else:
                    self.replay.load_state_dict(replay)
                    self.replay_credit = float(replay["credit"])
                    self.labels_added = int(replay.get("labels", 0))  # files before the count: from here
        except (KeyError, RuntimeError, ValueError) as error:
            raise TrainingError(f"{checkpoint.path}: cannot resume from this checkpoint: {error}") from None
        self.steps = checkpoint.steps
        self.updates = int(checkpoint.extra.get("learner_updates", 0))
        self.cpu_seconds = float(checkpoint.extra.get("cpu_seconds", 0.0))
        self.wall_seconds = float(checkpoint.extra.get("wall_seconds", 0.0))
        best = checkpoint.extra.get("best_score")
        # A best score measured against other opponents (eval.opponents changed on resume) says nothing.
        records = checkpoint.extra.get("evaluations", [])
        last = max((r["games_trained"] for r in records), default=None)
        # Files from before "best_opponents" was stored: the opponents of their last evaluation.
        best_opponents = checkpoint.extra.get(
            "best_opponents", [r["opponent"] for r in records if r["games_trained"] == last])
        same_opponents = list(best_opponents) == list(self.config.eval.opponents)
        self.best_score = -math.inf if best is None or not same_opponents else float(best)
        self.evaluations = [
            EvalRecord(r["games_trained"], r["opponent"], r["games"], r["ppg"], tuple(r["ppg_ci95"]), r["win_rate"])
            for r in checkpoint.extra.get("evaluations", [])
        ]

    def _check_optimizer_state(self, state: dict) -> None:
        """Raise ValueError unless each stored moment fits its parameter and is finite (torch checks neither)."""
        parameters = [parameter for group in self.optimizer.param_groups for parameter in group["params"]]
        for index, entry in (state.get("state") or {}).items():
            for key, value in (entry.items() if isinstance(entry, dict) else ()):
                if not isinstance(value, torch.Tensor) or value.dim() == 0:
                    continue  # the step count
                if not isinstance(index, int) or not 0 <= index < len(parameters) \
                        or value.shape != parameters[index].shape:
                    raise ValueError(f"optimizer state {index}.{key} does not fit the network")
                if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                    raise ValueError(f"optimizer state {index}.{key} holds non-finite numbers (NaN or infinity)")

    # -- the loop ------------------------------------------------------------
    def train(self, progress: bool = True, should_stop: Optional[Callable[[], bool]] = None) -> None:
        """Play and learn until ``run.total_games`` (or ``should_stop()``); checkpoint, evaluate and log on the way.

        Holds the run directory's :class:`RunLock` meanwhile (a second trainer there is refused). Ctrl-C or
        SIGTERM (when called in the main thread): the step in flight is finished, a checkpoint written and
        :class:`TrainingStopped` raised; a resumed run continues exactly (:mod:`.stopping`).
        """
        with RunLock(self.run_dir), StopSignals() as stop:
            self._loop(progress, should_stop, stop)

    def _stop_if_asked(self, stop: StopSignals, schedule: "_Schedule") -> None:
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
        config = self.config
        schedule = _Schedule(self, progress)
        positions_per_update = config.learning.batch_size
        loss = float("nan")
        try:
            while self.games < config.run.total_games and not stop.requested and not (should_stop and should_stop()):
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                finished = self.selfplay.play_ply(config.selfplay.epsilon(self.games))
                if self.online_losses:
                    schedule.window.losses.append(float(np.mean(self.online_losses)))
                    self.online_losses = []
                if finished:
                    if self.traces is None:
                        self.pending.extend(finished)
                    schedule.finished(finished)
                if sum(len(g.states) for g in self.pending) >= positions_per_update or (
                        self.pending and self.games >= min(schedule.next_checkpoint, config.run.total_games)):
                    if self.play_net is self.net:
                        loss = self.learn(self.pending)
                    else:
                        loss = self._start_learning(self.pending)
                    if not math.isnan(loss):
                        schedule.window.losses.append(loss)
                    self.pending = []
                if self._learning is not None and (self.games >= min(schedule.next_eval, schedule.next_checkpoint)
                                                   or stop.requested):
                    # The pass in flight counts in this window's CPU time, not in the evaluation's.
                    loss = self.join_learning()
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
                self.join_learning()
            finally:
                if self._learner is not None:
                    self._learner.shutdown()
                    self._learner = None
                schedule.close()

    def _evaluate_and_report(self, writer, bar) -> None:
        records = self.evaluate()
        score = float(np.mean([r.ppg for r in records]))
        if writer:
            for record in records:
                prefix = f"eval/{record.opponent}"
                writer.add_scalar(f"{prefix}/ppg", record.ppg, self.games)
                writer.add_scalar(f"{prefix}/win_rate", record.win_rate, self.games)
                writer.add_scalar(f"{prefix}/ppg_ci95_low", record.ppg_ci95[0], self.games)
                writer.add_scalar(f"{prefix}/ppg_ci95_high", record.ppg_ci95[1], self.games)
        bar.write(f"[{self.games} games] " + ", ".join(
            f"vs {r.opponent}: ppg {r.ppg:+.3f} [{r.ppg_ci95[0]:+.3f}, {r.ppg_ci95[1]:+.3f}] "
            f"win {r.win_rate:.1%} ({r.games} games)" for r in records))
        if score > self.best_score:
            self.best_score = score
            self.manager.save_best(**self._payload())

