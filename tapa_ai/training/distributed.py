"""Distributed training: self-play actors in other processes (or Ray actors), one learner.

The layout (docs/training.md, "Distributed training"):

- **actors** (:class:`~tapa_ai.training.actor.SelfPlayActor`) each play a
  batch of ``selfplay.parallel_games`` games side by side with the latest
  weights they have, and send every ``distributed.games_per_batch`` finished
  games to the learner, stamped with the version of the weights that played
  them;
- the **learner** (:class:`DistributedTrainer`, this process) learns from
  the batches as they come, exactly as the single-process trainer learns
  (:meth:`Trainer.learn`), counts its updates (one per batch of positions
  learned: the weights version), publishes the weights every
  ``distributed.publish_every`` updates, evaluates, logs and checkpoints.

Two transports carry the same actor code: :class:`ProcessActors` (spawned
processes on this machine; weights in shared memory, one pipe per actor for
its batches) and :class:`~tapa_ai.training.ray_actors.RayActors` (Ray
actors; weights through the object store). An actor that dies or hangs is
replaced by a new one (a new seed) in its slot; the games it was playing and
any batch it had not completely sent are dropped, never learned from.

Staleness of a batch: the learner's updates since the weights that played it
(``learner version - actor version``), logged as ``charts/staleness``.
Batches staler than ``distributed.max_staleness`` (when not 0) are dropped.
"""

from __future__ import annotations

import contextlib
import math
import pickle
import signal
import struct
import threading
import time
import traceback
import zlib
from collections import deque
from dataclasses import dataclass
from multiprocessing import connection as mp_connection
from multiprocessing import get_context
from typing import Any, Callable, Optional

import numpy as np

from ..config import TrainConfig, config_to_dict
from ..net.checkpoint import Checkpoint
from .actor import ActorBatch, SelfPlayActor, actor_seed, limit_threads, numpy_state
from .actor_pool import ActorFailed, ActorPool, Weights, exit_status, failures_allowed, report_replacement
from .stopping import StopSignals
from .schedule import Schedule
from .trainer import Trainer, TrainingError

RECEIVE_TIMEOUT = 0.25
"""Seconds the learner waits for a batch before looking at its schedule (stop requests) again."""
READ_TIMEOUT = 60.0
"""Seconds an actor tries to copy the published weights whole before it gives up (a learner dead mid-write)."""
HISTORY = 100_000
"""Losses and staleness values a learner keeps (the latest; TensorBoard has the whole run)."""


@dataclass
class _ActorError:
    """Sent by a process actor instead of a batch when its code raised."""

    slot: int
    traceback: str


# ---------------------------------------------------------------------------------------------------
# Multiprocessing transport


class SharedWeights:
    """The latest published weights in shared memory: a version, epsilon and the flat float32 state_dict.

    The learner writes (:meth:`write`) and the actor processes read
    (:meth:`read`) without any lock, so that an actor killed in the middle of
    a copy holds nothing the learner could wait for (a shared lock would stay
    taken after such a kill, and the learner's next publication would block
    for good). A sequence counter (a *seqlock*) tells a reader whether its
    copy is whole: the one writer makes the counter odd, writes, and makes it
    even again; a reader copies only at an even count and keeps the copy only
    if the count is the same after it, else copies again. A CRC-32 of the
    weights, version and epsilon, written with them, is checked too: Python
    has no memory fences, and on a weakly ordered CPU (ARM) a reader could
    see the counter and the weights out of order; a torn copy fails the check
    (x86's ordered stores and loads make the counter alone enough there). An
    actor reads only when the version changed, at the start of a batch.
    """

    def __init__(self, context: Any, layout: list[tuple[str, tuple[int, ...]]]) -> None:
        self.layout = layout
        self.size = sum(math.prod(shape) for _, shape in layout)
        self.buffer = context.RawArray("f", self.size)
        self.header = context.RawArray("d", 3)  # version (-1: nothing published yet), epsilon, CRC-32
        self.sequence = context.RawArray("q", 1)  # odd while the learner writes
        self.header[0] = -1.0
        self.header[2] = float(_checksum(np.zeros(self.size, dtype=np.float32), -1.0, 0.0))

    def write(self, weights: Weights) -> None:
        """Publish ``weights``; only one process (the learner) ever writes."""
        version, state, epsilon = weights
        flat = np.concatenate([np.asarray(state[name], dtype=np.float32).ravel() for name, _ in self.layout])
        version, epsilon = float(version), float(epsilon)
        checksum = float(_checksum(flat, version, epsilon))
        self.sequence[0] += 1  # odd: a copy taken from now on is not whole
        np.frombuffer(self.buffer, dtype=np.float32)[:] = flat
        self.header[0], self.header[1], self.header[2] = version, epsilon, checksum
        self.sequence[0] += 1  # even again: whole

    def version(self) -> int:
        """The version published last (one aligned 8-byte word: never torn); whether to :meth:`read` again."""
        return int(self.header[0])

    def read(self, timeout: float = READ_TIMEOUT) -> Weights:
        """A whole copy of the latest publication; copies again while the learner writes (microseconds).

        ``TimeoutError`` after ``timeout`` seconds without a whole copy: only a learner that died in the
        middle of a write leaves the counter odd for good.
        """
        deadline = time.monotonic() + timeout
        while True:
            before = int(self.sequence[0])
            if before % 2 == 0:
                flat = np.frombuffer(self.buffer, dtype=np.float32).copy()
                version, epsilon, checksum = self.header[0], self.header[1], self.header[2]
                if int(self.sequence[0]) == before and _checksum(flat, version, epsilon) == checksum:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"no whole copy of the published weights in {timeout:g} s")
            time.sleep(0.0005)
        state, offset = {}, 0
        for name, shape in self.layout:
            count = math.prod(shape)
            state[name] = flat[offset:offset + count].reshape(shape)
            offset += count
        return int(version), state, float(epsilon)


def _checksum(flat: np.ndarray, version: float, epsilon: float) -> int:
    """CRC-32 of a publication: the flat weights, then the version and epsilon."""
    return zlib.crc32(struct.pack("<dd", version, epsilon), zlib.crc32(flat))


@contextlib.contextmanager
def _sigint_ignored():
    """SIGINT ignored while a child process starts (main thread only), so the child begins with it ignored.

    Python leaves a SIGINT disposition it inherits as ignored in place, so a Ctrl-C that reaches the process
    group while an actor is still importing its modules (seconds, more with a cold numba cache) is ignored
    there too; the actor's own ``signal.signal(SIGINT, SIG_IGN)`` covers the rest of its life.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _process_actor_main(config: dict, slot: int, incarnation: int, seed: list[int], games_per_batch: int,
                        threads: int, weights: SharedWeights, sender: Any, stop: Any) -> None:
    """The body of an actor process: play batches with the newest weights and send them, until stopped."""
    # Ctrl-C in a terminal reaches the whole process group: the learner alone decides (it checkpoints,
    # then stops us through ``stop`` and our pipe).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    limit_threads(threads)
    try:
        actor = SelfPlayActor(config, slot, seed, incarnation)
        epsilon = 0.0
        while not stop.is_set():
            if weights.version() != actor.version:
                version, state, epsilon = weights.read()
                if version < 0:  # nothing published yet
                    time.sleep(0.05)
                    continue
                actor.set_weights(version, state)
            # Blocks while the learner is a batch behind: the pipe is the back-pressure.
            sender.send(actor.play(games_per_batch, epsilon))
    except (BrokenPipeError, ConnectionResetError, EOFError, KeyboardInterrupt):
        return  # the learner closed our pipe (it stopped or gave up on us)
    except BaseException:  # noqa: BLE001 - report any error to the learner, then die
        try:
            sender.send(_ActorError(slot, traceback.format_exc()))
        except OSError:
            pass
        raise SystemExit(1) from None


@dataclass
class _ProcessSlot:
    process: Any
    receiver: Any
    last_batch: float


class ProcessActors:
    """``workers`` actor processes (``spawn``) on this machine; see the module docstring."""

    def __init__(self, config: TrainConfig, workers: int, start_games: int,
                 layout: list[tuple[str, tuple[int, ...]]]) -> None:
        self.config = config
        self.config_dict = config_to_dict(config)
        self.workers = workers
        self.start_games = start_games
        self.context = get_context("spawn")
        self.weights = SharedWeights(self.context, layout)
        self.stop = self.context.Event()
        self.slots: list[Optional[_ProcessSlot]] = [None] * workers
        self.incarnations = [0] * workers
        self.restarts = 0
        self.failures_in_a_row = 0
        self.stopping = False
        """Set when the learner stops: an actor lost from then on is not replaced."""

    # -- life cycle ------------------------------------------------------------------------------
    def start(self, weights: Weights) -> None:
        self.publish(weights)
        for slot in range(self.workers):
            self._launch(slot)

    def _launch(self, slot: int) -> None:
        distributed = self.config.distributed
        receiver, sender = self.context.Pipe(duplex=False)
        incarnation = self.incarnations[slot]
        seed = actor_seed(self.config.run.seed, self.start_games, slot, incarnation)
        process = self.context.Process(
            target=_process_actor_main, name=f"tapa-ai-actor-{slot}.{incarnation}", daemon=True,
            args=(self.config_dict, slot, incarnation, seed, distributed.games_per_batch, distributed.actor_threads,
                  self.weights, sender, self.stop))
        with _sigint_ignored():  # inherited: a Ctrl-C while the child still imports cannot kill it
            process.start()
        sender.close()  # the child holds the only write end: its death reads as end of file here
        self.slots[slot] = _ProcessSlot(process, receiver, time.monotonic())

    def _replace(self, slot: int, why: str, died: bool = True) -> None:
        """Drop slot ``slot``'s actor (and whatever it had not sent) and start a new one in its place.

        ``died``: the actor ended by itself (its exit status is added to ``why``); else it hung and is killed.
        """
        old = self.slots[slot]
        self.slots[slot] = None
        if old is not None:
            old.receiver.close()
            if died:
                old.process.join(timeout=5)  # dead already (its pipe or sentinel said so): its exit code
            if old.process.is_alive():
                old.process.kill()
            old.process.join(timeout=5)
            if died:
                why = f"{why} ({exit_status(old.process.exitcode)})"
        if self.stopping:
            return  # e.g. killed by the same SIGTERM as the learner: the run is ending anyway
        self.restarts += 1
        self.failures_in_a_row += 1
        if self.failures_in_a_row > failures_allowed(self.workers):
            raise TrainingError(f"self-play actors keep dying ({self.failures_in_a_row} in a row; the last: "
                                f"actor {slot}, {why}); giving up")
        report_replacement(slot, why, self.failures_in_a_row, self.workers)
        self.incarnations[slot] += 1
        self._launch(slot)

    def close(self) -> None:
        self.stop.set()
        for slot in self.slots:
            if slot is not None:
                slot.receiver.close()  # an actor blocked in send() gets a broken pipe and exits
        for slot in self.slots:
            if slot is not None:
                slot.process.join(timeout=5)
                if slot.process.is_alive():
                    slot.process.kill()
                    slot.process.join(timeout=5)
        self.slots = [None] * self.workers

    def pids(self) -> list[Optional[int]]:
        """Process ids of the running actors, by slot."""
        return [slot.process.pid if slot else None for slot in self.slots]

    # -- traffic ---------------------------------------------------------------------------------
    def publish(self, weights: Weights) -> None:
        self.weights.write(weights)

    def receive(self, timeout: float) -> list[ActorBatch]:
        live = [(index, slot) for index, slot in enumerate(self.slots) if slot is not None]
        waitables = [slot.receiver for _, slot in live] + [slot.process.sentinel for _, slot in live]
        ready = set(mp_connection.wait(waitables, timeout))
        batches: list[ActorBatch] = []
        now = time.monotonic()
        for index, slot in live:
            if slot.receiver in ready:
                try:
                    message = slot.receiver.recv()
                except (EOFError, OSError, pickle.UnpicklingError) as error:
                    self._replace(index, f"its pipe closed ({type(error).__name__})")
                    continue
                if isinstance(message, _ActorError):
                    raise ActorFailed(f"self-play actor {index} failed:\n{message.traceback}")
                slot.last_batch = now
                self.failures_in_a_row = 0
                batches.append(message)
            elif slot.process.sentinel in ready:
                self._replace(index, "it exited")
            elif now - slot.last_batch > self.config.distributed.actor_timeout:
                self._replace(index, f"no batch for {self.config.distributed.actor_timeout:g} s (hung: killed)",
                              died=False)
        return batches


# ---------------------------------------------------------------------------------------------------
# The learner


class DistributedTrainer(Trainer):
    """The learner of actor–learner training; a :class:`Trainer` whose games come from actors.

    ``workers``: actors (default ``distributed.workers``); ``ray_address``:
    run them as Ray actors on that cluster (``auto``, ``host:port``, or
    ``local`` for a new local Ray instance) instead of local processes.
    Checkpoints are the single-process trainer's (network, optimizer,
    counters, ``learner_updates`` among them, the learner's generator); the
    actors' running games are not saved, so a resumed run starts fresh games,
    and any worker count (or the single-process trainer) can resume it.
    """

    overlaps = False  # learning.overlap: the actors play with published weights, behind the learner anyway

    def __init__(self, config: TrainConfig, run_dir, checkpoint: Optional[Checkpoint] = None,
                 workers: Optional[int] = None, ray_address: Optional[str] = None) -> None:
        if config.learning.method != "lambda-return":
            raise TrainingError(f"learning.method = {config.learning.method!r} learns inside self-play, every ply; "
                                "distributed training needs 'lambda-return' (or train with one worker)")
        self.actors_label = config.learning.targets == "search"
        """Expert iteration: the actors label positions by search and send them; the learner only fits them."""
        super().__init__(config, run_dir, checkpoint)
        self.workers = int(workers or config.distributed.workers)
        if self.workers < 1:
            raise TrainingError(f"workers={self.workers}: must be at least 1")
        self.ray_address = ray_address
        self.pool: Optional[ActorPool] = None
        self.dropped_stale_games = 0
        self.restarts = 0
        self.losses: deque[tuple[int, float]] = deque(maxlen=HISTORY)
        """(games, mean loss) of the last updates of this session."""
        self.staleness_seen: deque[int] = deque(maxlen=HISTORY)
        """Staleness of the last batches learned from in this session (tests, measurements)."""
        self.on_batch: Optional[Callable[[ActorBatch], None]] = None
        """Called with every batch received (tests and benchmarks)."""

    # -- the loop ----------------------------------------------------------------------------------
    def _weights(self) -> Weights:
        return self.updates, numpy_state(self.net), self.config.selfplay.epsilon(self.games)

    def _make_pool(self) -> ActorPool:
        if self.ray_address:
            from .ray_actors import RayActors

            return RayActors(self.config, self.workers, self.games, self.ray_address)
        layout = [(name, tuple(tensor.shape)) for name, tensor in self.net.state_dict().items()]
        return ProcessActors(self.config, self.workers, self.games, layout)

    def _take(self, batch: ActorBatch, schedule: Schedule) -> None:
        """Count a received batch's games as played and queue them for learning (or drop it if too stale)."""
        staleness = self.updates - batch.version
        limit = self.config.distributed.max_staleness
        if limit and staleness > limit:
            self.dropped_stale_games += len(batch.games)
            return
        stats = self.selfplay.stats  # the learner's SelfPlay plays nothing; it keeps the run's counters
        stats.games += len(batch.games)
        stats.decisions += batch.decisions
        stats.abandoned += batch.abandoned
        for game in batch.games:
            stats.turns_of_finished += game.turns
            stats.kinds[game.kind] += 1
        if self.actors_label:
            if batch.search_states is None:
                raise TrainingError(f"actor {batch.slot} sent games without search labels to a learner of "
                                    "learning.targets = 'search'")
            self.add_labels(batch.search_states, batch.search_targets)
        else:
            self.pending.extend(batch.games)
        self.staleness_seen.append(staleness)
        schedule.window.staleness.append((staleness, len(batch.games)))
        schedule.finished(batch.games)

    def _loop(self, progress: bool, should_stop: Optional[Callable[[], bool]], stop: StopSignals) -> None:
        """Start the actors, learn from their batches until ``run.total_games`` (or ``should_stop()``), stop them.

        Ctrl-C or SIGTERM: no actor is replaced from then on, the learner finishes its step and checkpoints
        (:meth:`Trainer.train`), and the actors are stopped.
        """
        config = self.config
        schedule = Schedule(self, progress)
        loss = float("nan")
        pool = None
        stop.on_request.append(self._stopping)
        try:
            pool = self.pool = self._make_pool()
            pool.start(self._weights())
            while self.games < config.run.total_games and not stop.requested and not (should_stop and should_stop()):
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                batches = pool.receive(RECEIVE_TIMEOUT)
                for batch in batches:
                    if self.on_batch is not None:
                        self.on_batch(batch)
                    self._take(batch, schedule)
                waiting = self._waiting()
                if waiting >= config.learning.batch_size or (
                        waiting and self.games >= min(schedule.next_checkpoint, config.run.total_games)):
                    loss = self.learn(self.pending)
                    schedule.window.losses.append(loss)
                    self.losses.append((self.games, loss))
                    self.pending = []
                    if self.updates % config.distributed.publish_every == 0:  # learn() counted the update
                        pool.publish(self._weights())
                self.restarts = pool.restarts
                # CPU time of the run: the learner's and the actors' (as they reported it per batch).
                self.cpu_seconds += time.process_time() - cpu_start + sum(b.cpu_seconds for b in batches)
                self.wall_seconds += time.perf_counter() - wall_start
                scalars = {"charts/actor_restarts": pool.restarts,
                           "charts/dropped_stale_games": self.dropped_stale_games,
                           "charts/learner_updates": self.updates}
                if self.actors_label:
                    scalars["charts/search_labels"] = self.labels_added
                schedule.after_step(loss, scalars)
            self._stop_if_asked(stop, schedule)
            if self._waiting():
                loss = self.learn(self.pending)
                self.pending = []
            self.save()
        finally:
            if pool is not None:
                pool.close()
            self.pool = None
            schedule.close()

    def _waiting(self) -> int:
        """Positions owed a learning pass: the received games' turns, or (expert iteration) the replay draws
        that the actors' labels have earned."""
        if self.actors_label:
            return int(self.learner.replay_credit)
        return sum(len(game.states) for game in self.pending)

    def _stopping(self) -> None:
        """A stop was requested (in the signal handler): actors that die from now on are not replaced."""
        if self.pool is not None:
            self.pool.stopping = True


def make_trainer(config: TrainConfig, run_dir, checkpoint: Optional[Checkpoint] = None,
                 ray_address: Optional[str] = None) -> Trainer:
    """The single-process :class:`Trainer` for one worker without Ray, else a :class:`DistributedTrainer`."""
    if config.distributed.workers == 1 and not ray_address:
        return Trainer(config, run_dir, checkpoint)
    return DistributedTrainer(config, run_dir, checkpoint, ray_address=ray_address)
