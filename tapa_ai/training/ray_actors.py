"""The Ray transport of distributed training: self-play actors as Ray actors, weights through the object store.

Each actor is a ``@ray.remote`` wrapper around the shared
:class:`~tapa_ai.training.actor.SelfPlayActor`. The learner keeps one
``play`` call in flight per actor; when a batch comes back it sends the next
call at once (before learning from the batch), with a reference to the
newest published weights if that actor has not had them yet
(``ray.put`` once per publication; Ray ships the object to each node once).
A call that fails because its actor died (``ray.exceptions.RayActorError``,
e.g. after ``ray.kill``, a crash or a lost node) drops that actor's
unfinished games and starts a replacement in its slot.
"""

from __future__ import annotations

import os
import time
from typing import Any, Optional

from ..config import TrainConfig, config_to_dict
from ..ray_cluster import connect, disconnect, require_ray
from .actor import ActorBatch, SelfPlayActor, actor_seed, limit_threads, play_batch
from .actor_pool import ActorFailed, failures_allowed, report_replacement
from .trainer import TrainingError


class RaySelfPlayActor:
    """The body of a Ray actor (made remote by :class:`RayActors`): one :class:`SelfPlayActor`."""

    def __init__(self, config: dict, slot: int, seed: list[int], incarnation: int, threads: int) -> None:
        limit_threads(threads)
        self.actor = SelfPlayActor(config, slot, seed, incarnation)

    def play(self, version: int, state: Optional[dict], epsilon: float, games: int) -> ActorBatch:
        return play_batch(self.actor, None if state is None else (version, state), games, epsilon)

    def pid(self) -> int:
        return os.getpid()


class RayActors:
    """``workers`` self-play actors on the Ray cluster at ``address``; see the module docstring."""

    def __init__(self, config: TrainConfig, workers: int, start_games: int, address: str) -> None:
        self.ray = require_ray()
        self.config = config
        self.config_dict = config_to_dict(config)
        self.workers = workers
        self.start_games = start_games
        self.connected = connect(address, num_cpus=workers * config.distributed.actor_threads)
        threads = config.distributed.actor_threads
        self.remote_class = self.ray.remote(num_cpus=threads, max_restarts=0)(RaySelfPlayActor)
        self.handles: list[Any] = [None] * workers
        self.incarnations = [0] * workers
        self.sent_version = [-1] * workers
        self.in_flight: dict[Any, tuple[int, float]] = {}
        """Pending ``play`` call -> (slot, time sent)."""
        self.weights: Optional[tuple[int, Any, float]] = None
        self.restarts = 0
        self.failures_in_a_row = 0
        self.failures_allowed = failures_allowed(workers)
        self.stopping = False
        """Set when the learner stops: an actor lost from then on is not replaced."""

    # -- life cycle ------------------------------------------------------------------------------
    def start(self, weights) -> None:
        self.publish(weights)
        for slot in range(self.workers):
            self._launch(slot)

    def _launch(self, slot: int) -> None:
        incarnation = self.incarnations[slot]
        seed = actor_seed(self.config.run.seed, self.start_games, slot, incarnation)
        self.handles[slot] = self.remote_class.remote(
            self.config_dict, slot, seed, incarnation, self.config.distributed.actor_threads)
        self.sent_version[slot] = -1
        self._submit(slot)

    def _submit(self, slot: int) -> None:
        version, reference, epsilon = self.weights
        state = reference if self.sent_version[slot] != version else None
        call = self.handles[slot].play.remote(version, state, epsilon, self.config.distributed.games_per_batch)
        self.sent_version[slot] = version
        self.in_flight[call] = (slot, time.monotonic())

    def _replace(self, slot: int, why: str) -> None:
        try:
            self.ray.kill(self.handles[slot])
        except Exception:  # noqa: BLE001 - already gone
            pass
        if self.stopping:
            self.handles[slot] = None  # the run is ending: no replacement
            return
        self.restarts += 1
        self.failures_in_a_row += 1
        if self.failures_in_a_row > self.failures_allowed:
            raise TrainingError(f"self-play actors keep dying ({self.failures_in_a_row} in a row; the last: "
                                f"actor {slot}, {why}); giving up")
        report_replacement(slot, why, self.failures_in_a_row, self.workers)
        self.incarnations[slot] += 1
        self._launch(slot)

    def close(self) -> None:
        for handle in self.handles:
            if handle is not None:
                try:
                    self.ray.kill(handle)
                except Exception:  # noqa: BLE001 - already gone
                    pass
        self.handles = [None] * self.workers
        self.in_flight.clear()
        disconnect(self.connected)

    def pids(self) -> list[Optional[int]]:
        """Process ids of the actors, by slot (asks each actor)."""
        return [self.ray.get(handle.pid.remote()) if handle is not None else None for handle in self.handles]

    # -- traffic ---------------------------------------------------------------------------------
    def publish(self, weights) -> None:
        version, state, epsilon = weights
        self.weights = (version, self.ray.put(state), epsilon)

    def receive(self, timeout: float) -> list[ActorBatch]:
        ray = self.ray
        calls = list(self.in_flight)
        if not calls:  # only while stopping: every lost actor was left unreplaced
            return []
        ready, rest = ray.wait(calls, num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        batches = []
        for call in ready:
            slot, _ = self.in_flight.pop(call)
            try:
                batch = ray.get(call)
            except ray.exceptions.RayActorError as error:
                self._replace(slot, f"Ray reported {type(error).__name__}")
                continue
            except ray.exceptions.RayTaskError as error:
                raise ActorFailed(f"self-play actor {slot} failed:\n{error}") from None
            self.failures_in_a_row = 0
            self._submit(slot)  # before the learner spends time on this batch
            batches.append(batch)
        now = time.monotonic()
        for call, (slot, since) in list(self.in_flight.items()):
            if now - since > self.config.distributed.actor_timeout:
                del self.in_flight[call]
                self._replace(slot, f"no batch for {self.config.distributed.actor_timeout:g} s (hung: killed)")
        return batches
