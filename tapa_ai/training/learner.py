"""The learner of a training run: the network, its optimizer and the learning passes.

A :class:`Learner` owns the network and what changes it: the optimizer, the
minibatch passes over finished self-play games (their lambda-returns, or with
``learning.targets = "search"`` the search-labelled positions of the replay
buffer), the online traces of ``learning.method = "online-traces"``, and the
counters of steps and updates. With ``learning.overlap`` a pass runs in a
thread of its own while self-play plays on with a copy of the weights taken
before it (:attr:`Learner.play_net`).

It knows nothing of self-play: the trainer hands it the games (and, for online
traces, each ply) self-play produced and the run's game count, and hands the
weights a pass ends with back to self-play.

Reproducible: everything that draws from the run's generator (the replay
draws, the minibatch order, the search labels' sample) happens in the calling
thread, so a run does not depend on how the learner thread and self-play
interleave.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Optional

import numpy as np
import torch

from ..config import TrainConfig
from ..net.evaluator import kernel_available
from ..net.fast_eval import FastEvaluator, fast_encode
from ..net.fast_kernel import race_flags
from ..net.model import EvaluatorNet, soft_cross_entropy
from ..rules.options import RuleOptions
from .distill import label_positions
from .replay import ReplayBuffer
from .selfplay import FinishedGame, state_width, unpack_states
from .traces import OnlineTraces

__all__ = ["Learner", "networks"]


def networks(config: TrainConfig, rules: RuleOptions, device: torch.device,
             overlap: bool) -> tuple[EvaluatorNet, EvaluatorNet]:
    """The network a run learns (initialised from ``run.seed``) and the one self-play plays with.

    ``overlap`` (``learning.overlap`` where the trainer honours it): a second network holding a copy of the
    weights, taken before each learning pass; else the learned network itself.
    """
    net = EvaluatorNet(config.model, rules, seed=config.run.seed).to(device)
    if not overlap:
        return net, net
    play_net = EvaluatorNet(config.model, rules, seed=config.run.seed).to(device)
    play_net.load_state_dict(net.state_dict())
    return net, play_net


class Learner:
    """The network, the optimizer and the learning passes of one run; see the module docstring.

    ``net`` and ``play_net`` come from :func:`networks`; ``selfplay`` plays with ``play_net`` (its evaluator is
    kept current here; the game count sets the learning rate); ``rng`` is the run's generator.
    ``actors_label``: the search labels of expert iteration come with the games (distributed actors make
    them); False: this learner labels a sample of the positions it learns from itself.
    """

    def __init__(self, config: TrainConfig, rules: RuleOptions, net: EvaluatorNet, play_net: EvaluatorNet,
                 rng: np.random.Generator, device: torch.device, actors_label: bool = False) -> None:
        self.config = config
        self.rules = rules
        self.net = net
        self.play_net = play_net
        """The weights self-play plays with: :attr:`net` itself, or with ``learning.overlap`` a copy of it taken
        before the pass in flight."""
        self.rng = rng
        self.device = device
        self.actors_label = actors_label
        learning = config.learning
        if learning.optimizer == "adam":
            # foreach: the update as a few multi-tensor ops instead of a loop of small ones per tensor
            # (~20% cheaper a step at 309 x 128 on one thread). Not fused=True: that kernel's rounding
            # depends on where the tensors lie in memory, so a resumed run would drift from an
            # uninterrupted one (tests/test_training.py).
            self.optimizer = torch.optim.Adam(net.parameters(), lr=learning.learning_rate,
                                              weight_decay=learning.weight_decay, foreach=True)
        else:
            self.optimizer = torch.optim.SGD(net.parameters(), lr=learning.learning_rate,
                                             weight_decay=learning.weight_decay)
        self._executor: Optional[ThreadPoolExecutor] = None
        self._in_flight: Optional[Future] = None
        self._next_evaluator: Optional[FastEvaluator] = None
        """Self-play's evaluator of the weights the pass in flight ends with (built by the learner thread)."""
        # Expert iteration (learning.targets = "search"): search-labelled positions and the gradient
        # samples owed to them (a fraction carried from one learning pass to the next).
        self.replay = (ReplayBuffer(learning.replay_size, state_width(net.rules), net.num_outcomes)
                       if learning.targets == "search" else None)
        self.replay_credit = 0.0
        self.labels_added = 0
        """Search labels added to the replay buffer over the run's life (made here or by actors; checkpointed)."""
        self.updates = 0
        """Learning passes over the run's life, whichever trainers made them (checkpointed as ``learner_updates``):
        distributed training's weights version."""
        self.steps = 0
        """Gradient steps over the run's life (minibatches, or plies of online traces)."""
        self.traces: Optional[OnlineTraces] = None
        self.online_losses: list[float] = []
        """Online traces: the losses of the plies since :meth:`take_online_loss`."""
        if learning.method == "online-traces":
            self.traces = OnlineTraces(net, config.selfplay.parallel_games, learning.lambda_,
                                       learning.learning_rate, learning.grad_clip)

    @property
    def overlaps(self) -> bool:
        """Whether passes run beside self-play (``learning.overlap``): self-play plays a copy of the weights."""
        return self.play_net is not self.net

    @property
    def in_flight(self) -> bool:
        """Whether a pass runs in the learner thread now."""
        return self._in_flight is not None

    # -- learning passes -------------------------------------------------
    def learn(self, games: list[FinishedGame], games_played: int) -> float:
        """One pass of minibatch gradient steps over the positions of ``games`` (``games_played``: the run's games
        so far, the learning rate's clock); returns the mean loss. The weights changed: the caller hands them to
        self-play (:meth:`SelfPlay.weights_changed <tapa_ai.training.selfplay.SelfPlay.weights_changed>`)."""
        self.join()
        self.updates += 1
        prepared = self._prepare_pass(games, games_played)
        return float("nan") if prepared is None else self._run_pass(*prepared, threads=None)

    def start_learning(self, games: list[FinishedGame], games_played: int) -> tuple[float, Optional[FastEvaluator]]:
        """learning.overlap: finish the pass in flight, copy its weights into :attr:`play_net`, start a pass over
        ``games``.

        Returns the loss of the pass finished here (NaN if none) and the fast evaluator of the weights it ended with
        (None: none built), which the caller hands to self-play (:meth:`SelfPlay.adopt
        <tapa_ai.training.selfplay.SelfPlay.adopt>`). Everything that draws from the run's generator (the replay
        draws, the minibatch order) happens here, in the calling thread, so the run does not depend on how the two
        threads interleave; the learner thread only runs the gradient steps.
        """
        loss = self.join()
        self.updates += 1
        with torch.no_grad():
            for mine, theirs in zip(self.play_net.state_dict().values(), self.net.state_dict().values()):
                mine.copy_(theirs)
        adopt, self._next_evaluator = self._next_evaluator, None
        prepared = self._prepare_pass(games, games_played)
        if prepared is not None:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="learner")
            # One thread for the pass's own encoding: the calling thread's self-play has the others.
            self._in_flight = self._executor.submit(self._thread_pass, prepared)
        return loss, adopt

    def _thread_pass(self, prepared: tuple) -> float:
        """A pass in the learner thread; then self-play's next evaluator, built from the weights it ends with."""
        loss = self._run_pass(*prepared, threads=1)
        self._next_evaluator = FastEvaluator.from_net(self.net) if kernel_available(self.net) else None
        return loss

    def join(self) -> float:
        """Wait for the learning pass in flight (learning.overlap) and return its loss; NaN if none was."""
        if self._in_flight is None:
            return float("nan")
        in_flight, self._in_flight = self._in_flight, None
        return in_flight.result()

    def close(self) -> None:
        """Wait for the pass in flight, then end the learner thread (a later pass starts a new one)."""
        try:
            self.join()
        finally:
            if self._executor is not None:
                self._executor.shutdown()
                self._executor = None

    def _prepare_pass(self, games: list[FinishedGame], games_played: int):
        """What a pass over ``games`` draws from the run's generator and sets: (positions, targets, minibatches);
        None if it has nothing to learn. ``targets`` is the games themselves where their lambda-returns are the
        targets (computed in :meth:`_run_pass`, off the calling thread when learning overlaps)."""
        if not games and not self.actors_label:
            return None
        rate = self.config.learning.rate(games_played)
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        targets = games
        if self.replay is not None:
            if not self.actors_label:
                self.label(np.concatenate([game.states for game in games]))
            states, targets = self.draw_replay()
            if len(states) == 0:
                return None
        else:
            states = np.concatenate([game.states for game in games])
        positions = unpack_states(states, self.rules)
        return positions, targets, self.minibatches(positions)

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

    def minibatches(self, positions) -> list[tuple[torch.Tensor, Optional[str]]]:
        """The rows of each learning step, in a random order: (row indices, network part or None).

        With one network: consecutive slices of one permutation. With a race network every minibatch holds
        one phase only (the contact rows and the race rows each permuted and sliced, the steps then shuffled):
        the two networks share no weights, so each step trains one of them without splitting its rows.
        """
        batch_size = self.config.learning.batch_size
        if self.net.race_layers is None:
            order = torch.from_numpy(self.rng.permutation(len(positions))).to(self.device)
            return [(order[start:start + batch_size], None) for start in range(0, len(positions), batch_size)]
        race = race_flags(positions.board, positions.pinned, positions.bar, positions.parallel_rows())
        steps = []
        for part, rows in (("layers", np.flatnonzero(~race)), ("race_layers", np.flatnonzero(race))):
            rows = torch.from_numpy(rows[self.rng.permutation(len(rows))]).to(self.device)
            steps += [(rows[start:start + batch_size], part) for start in range(0, len(rows), batch_size)]
        return [steps[i] for i in self.rng.permutation(len(steps))]

    # -- expert iteration: search labels and the replay buffer --------------
    def label(self, states: np.ndarray) -> None:
        """Label a ``search_fraction`` sample of ``states`` by the current net's search and add them to the buffer."""
        self.add_labels(*label_positions(self.net, states, self.config.learning, self.rng))

    def add_labels(self, states: np.ndarray, targets: np.ndarray) -> None:
        """Search-labelled positions (made here or by an actor) into the replay buffer; the draws they earn."""
        if len(states):
            self.replay.add(states, targets)
            self.labels_added += len(states)
        self.replay_credit += len(states) * self.config.learning.replay_ratio

    def draw_replay(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows the labels added so far have earned (``replay_ratio`` per label), drawn from the whole buffer."""
        draws = int(self.replay_credit)
        self.replay_credit -= draws
        if draws == 0 or len(self.replay) == 0:
            return np.zeros((0, state_width(self.rules)), dtype=np.int8), np.zeros((0, self.net.num_outcomes), dtype=np.float32)
        return self.replay.sample(draws, self.rng)

    # -- online traces ------------------------------------------------------
    def online_step(self, ply) -> None:
        """``learning.method = "online-traces"``: one TD(lambda) update on a ply of self-play (its
        :class:`~tapa_ai.training.selfplay.PlyResult`: the positions before the moves, the values chosen, the games
        that began; see :mod:`.traces`)."""
        self.traces.learning_rate = self.config.learning.rate(ply.games_before)
        self.online_losses.append(self.traces.step(fast_encode(ply.positions, self.net.encoding_version),
                                                   ply.next_values, ply.new_game, ply.same_mover))
        self.steps += 1

    def take_online_loss(self) -> Optional[float]:
        """Online traces: the mean loss of the plies since the last call (then forgotten); None if there were none."""
        if not self.online_losses:
            return None
        loss = float(np.mean(self.online_losses))
        self.online_losses = []
        return loss
