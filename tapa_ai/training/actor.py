"""The self-play actor of distributed training, shared by both transports (processes and Ray).

An actor owns a :class:`~tapa_ai.training.selfplay.SelfPlay` batch of
parallel games, its own numpy generator and a copy of the network. The
learner gives it weights (:meth:`SelfPlayActor.set_weights`, with the
version number they were published under) and asks it for batches
(:meth:`SelfPlayActor.play`): it plays until that many games have finished
and returns them as an :class:`ActorBatch` stamped with the weights version
that played them. Its running games stay in its memory; when the actor dies
they die with it and are never learned from.

Given its seed and the weights it is sent, an actor is deterministic: the
dice and every exploration choice come from its generator only.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import numpy as np

from .selfplay import FinishedGame

ACTOR_STREAM = 0xAC7
"""Tag in an actor's seed that keeps its stream apart from the learner's (``run.seed``) and evaluations."""
LABEL_STREAM = 0x5EA
"""Tag of an actor's labelling generators (``learning.targets = "search"``): batch ``n`` of an actor seeded
``s`` is labelled by ``default_rng([*s, LABEL_STREAM, n])`` (:attr:`ActorBatch.label_seed`)."""


def actor_seed(run_seed: int, start_games: int, slot: int, incarnation: int) -> list[int]:
    """The seed of actor ``slot`` (its ``incarnation``-th start) in a run started or resumed at ``start_games``.

    A replaced actor (incarnation + 1) and a resumed run (another
    ``start_games``) get fresh dice, and the same run started twice gets the
    same ones.
    """
    return [int(run_seed), ACTOR_STREAM, int(start_games), int(slot), int(incarnation)]


def limit_threads(threads: int) -> None:
    """Let this process use ``threads`` threads for move generation, evaluation and torch (call before playing)."""
    os.environ["TAPA_MOVEGEN_THREADS"] = str(threads)
    os.environ["TAPA_EVAL_THREADS"] = str(threads)
    import numba
    import torch

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    torch.set_num_threads(threads)


@dataclass
class ActorBatch:
    """Finished games of one actor, played with one weights version."""

    slot: int
    """Which actor (0 .. workers - 1); a replacement takes the slot of the actor it replaces."""
    incarnation: int
    """How many times this slot's actor was started before this one (0 for the first)."""
    version: int
    """Weights version that played every ply of this batch (earlier turns of a game may be older)."""
    games: list[FinishedGame]
    """The finished games, in the order they ended."""
    decisions: int
    """Moves chosen while playing this batch (all running games, finished or not)."""
    abandoned: int
    """Games dropped for reaching ``selfplay.max_turns`` while playing this batch."""
    cpu_seconds: float
    """Process CPU time of the actor spent on this batch."""
    wall_seconds: float
    """Wall-clock time spent on this batch."""
    epsilon: float
    """Exploration rate the batch was played with."""
    search_states: Optional[np.ndarray] = None
    """Expert iteration (``learning.targets = "search"``): (L, 52) int8 positions this actor labelled by its
    search with the weights of :attr:`version`; None when the learner learns from the games themselves."""
    search_targets: Optional[np.ndarray] = None
    """(L, K) float32 search targets of :attr:`search_states` (:func:`~tapa_ai.training.distill.label_positions`)."""
    label_seed: Optional[list[int]] = None
    """The seed of the generator that chose and labelled :attr:`search_states` (a check can make them again)."""
    label_cpu_seconds: float = 0.0
    """Of :attr:`cpu_seconds`, the CPU time spent labelling."""
    positions: int = field(init=False)
    """Positions the learner will learn from: the finished games' turns, or the labelled positions."""

    def __post_init__(self) -> None:
        if self.search_states is not None:
            self.positions = len(self.search_states)
        else:
            self.positions = sum(len(game.states) for game in self.games)


class SelfPlayActor:
    """Parallel self-play games with the weights the learner last sent; see the module docstring."""

    def __init__(self, config: Any, slot: int, seed: list[int], incarnation: int = 0) -> None:
        from ..config import TrainConfig, config_from_dict
        from ..net.model import EvaluatorNet
        from .runs import run_rules
        from .selfplay import SelfPlay

        if not isinstance(config, TrainConfig):
            config = config_from_dict(config, source="actor config")
        self.config = config
        self.slot = slot
        self.incarnation = incarnation
        self.seed = [int(part) for part in seed]
        self.rules = run_rules(config)
        self.rng = np.random.default_rng(seed)
        self.labels = config.learning.targets == "search"
        """Expert iteration: label a sample of each batch's positions here, with this actor's weights."""
        self.batches = 0
        """Batches played so far (numbers the labelling generators)."""
        # The initial weights are never used: play() refuses to start before set_weights().
        self.net = EvaluatorNet(config.model, self.rules, seed=config.run.seed)
        self.net.eval()
        self.selfplay = SelfPlay(self.rules, self.net, config.selfplay.parallel_games, self.rng,
                                 config.selfplay.max_turns, expected=config.learning.targets == "expected",
                                 bearoff=config.learning.bearoff_targets)
        self.version = -1

    def set_weights(self, version: int, state: Mapping[str, Any]) -> None:
        """Play with these weights (a state_dict of arrays or tensors) from the next batch on."""
        import torch

        self.net.load_state_dict({name: torch.as_tensor(np.asarray(value)) for name, value in state.items()})
        self.version = int(version)

    def play(self, games: int, epsilon: float) -> ActorBatch:
        """Play every running game on until ``games`` games have finished (a few more may finish in the last ply).

        Expert iteration (``learning.targets = "search"``): then a ``search_fraction`` sample of the finished
        games' positions is labelled by this actor's n-ply search
        (:func:`~tapa_ai.training.distill.label_positions`, the single-process trainer's function) and sent
        instead of the games' positions, which the learner does not need (the games go with their counts
        only: kind and turns).
        """
        if self.version < 0:
            raise RuntimeError("SelfPlayActor.play: no weights yet (call set_weights first)")
        stats = self.selfplay.stats
        decisions, abandoned = stats.decisions, stats.abandoned
        cpu, wall = time.process_time(), time.perf_counter()
        finished: list[FinishedGame] = []
        while len(finished) < games:
            finished += self.selfplay.play_ply(epsilon)
        labels: dict = {}
        if self.labels:
            from .distill import label_positions

            label_cpu = time.process_time()
            seed = [*self.seed, LABEL_STREAM, self.batches]
            states, targets = label_positions(self.net, np.concatenate([game.states for game in finished]),
                                              self.config.learning, np.random.default_rng(seed))
            labels = dict(search_states=states, search_targets=targets, label_seed=seed,
                          label_cpu_seconds=time.process_time() - label_cpu)
            finished = [game.counts_only() for game in finished]
        self.batches += 1
        return ActorBatch(self.slot, self.incarnation, self.version, finished, stats.decisions - decisions,
                          stats.abandoned - abandoned, time.process_time() - cpu, time.perf_counter() - wall,
                          float(epsilon), **labels)


def numpy_state(net) -> dict[str, np.ndarray]:
    """The network's ``state_dict`` as numpy arrays (copies), the form weights are published in."""
    return {name: tensor.detach().cpu().numpy().copy() for name, tensor in net.state_dict().items()}


def play_batch(actor: SelfPlayActor, weights: Optional[tuple[int, Mapping[str, Any]]], games: int,
               epsilon: float) -> ActorBatch:
    """Take new weights if given (``(version, state)``), then play a batch: one request of either transport."""
    if weights is not None:
        actor.set_weights(*weights)
    return actor.play(games, epsilon)
