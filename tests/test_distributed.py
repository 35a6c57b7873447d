"""Distributed training (actors + learner) over processes and Ray, and arena matches over Ray."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from tapa_ai.cli import main
from tapa_ai.config import load_config
from tapa_ai.training.actor import SelfPlayActor, actor_seed, numpy_state
from tapa_ai.training.distributed import DistributedTrainer, SharedWeights, make_trainer
from tapa_ai.training.trainer import Trainer, new_run_directory, resume_checkpoint
from tests.requires import require

TINY = ["selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64", "eval.every_games=100000",
        "eval.games=8", "checkpoint.every_games=150", "logging.log_every_games=50", "logging.tensorboard=false",
        "distributed.games_per_batch=8"]


def tiny_config(tmp_path, *extra):
    return load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}", *extra])


def first_and_last_losses(trainer, count=4):
    losses = [loss for _, loss in trainer.losses]
    assert len(losses) >= 2 * count, losses
    return float(np.mean(losses[:count])), float(np.mean(losses[-count:]))


# -- the actor, in this process -------------------------------------------------------------------------
def test_actor_dice_are_determined_by_its_seed_given_the_same_weights(tmp_path):
    config = tiny_config(tmp_path)
    weights = numpy_state(Trainer(config, tmp_path / "run").net)
    batches = []
    for seed in (actor_seed(1, 0, 0, 0), actor_seed(1, 0, 0, 0), actor_seed(1, 0, 1, 0)):
        actor = SelfPlayActor(config, slot=0, seed=seed)
        actor.set_weights(3, weights)
        batches.append(actor.play(6, epsilon=0.1))
    same, again, other = batches
    assert same.version == 3 and len(same.games) >= 6 and same.decisions > 0
    assert [g.turns for g in same.games] == [g.turns for g in again.games]
    assert all(np.array_equal(a.states, b.states) for a, b in zip(same.games, again.games))
    assert [g.turns for g in same.games] != [g.turns for g in other.games]


def test_actor_refuses_to_play_before_it_has_weights(tmp_path):
    actor = SelfPlayActor(tiny_config(tmp_path), slot=0, seed=[0])
    with pytest.raises(RuntimeError, match="no weights"):
        actor.play(1, 0.0)


def test_shared_weights_publish_a_versioned_state_dict(tmp_path):
    from multiprocessing import get_context

    net = Trainer(tiny_config(tmp_path), tmp_path / "run").net
    state = numpy_state(net)
    shared = SharedWeights(get_context("spawn"), [(name, value.shape) for name, value in state.items()])
    assert shared.version() == -1
    shared.write((7, state, 0.25))
    version, copy, epsilon = shared.read()
    assert (version, epsilon) == (7, 0.25) and all(np.array_equal(copy[name], state[name]) for name in state)


def test_one_worker_without_ray_is_the_single_process_trainer(tmp_path):
    config = tiny_config(tmp_path)
    assert type(make_trainer(config, tmp_path / "a")) is Trainer
    assert isinstance(make_trainer(tiny_config(tmp_path, "distributed.workers=2"), tmp_path / "b"),
                      DistributedTrainer)


def test_learner_counts_batches_and_drops_those_staler_than_max_staleness(tmp_path):
    from tapa_ai.training.schedule import Schedule

    config = tiny_config(tmp_path, "distributed.workers=2", "distributed.max_staleness=2")
    trainer = DistributedTrainer(config, tmp_path / "run")
    actor = SelfPlayActor(config, slot=0, seed=[4])
    actor.set_weights(0, numpy_state(trainer.net))
    batch = actor.play(3, 0.0)
    schedule = Schedule(trainer, progress=False)
    trainer.learner.updates = 5
    batch.version = 2  # staleness 3: dropped
    trainer._take(batch, schedule)
    assert trainer.games == 0 and trainer.dropped_stale_games == len(batch.games) and not trainer.pending
    batch.version = 3  # staleness 2: learned
    trainer._take(batch, schedule)
    assert trainer.games == len(batch.games) and trainer.decisions == batch.decisions
    assert list(trainer.staleness_seen) == [2] and len(trainer.pending) == len(batch.games)
    schedule.close()


# -- actor processes ----------------------------------------------------------------------------------
def test_two_workers_learn_then_resume_with_any_worker_count(tmp_path, capsys):
    config = tiny_config(tmp_path, "distributed.workers=2", "run.total_games=300")
    trainer = DistributedTrainer(config, new_run_directory(config))
    trainer.train(progress=False)
    assert trainer.games >= 300 and trainer.restarts == 0
    first, last = first_and_last_losses(trainer)
    assert last < first - 0.05, (first, last)  # the loss falls (about 1.94 -> 1.78)
    assert max(trainer.staleness_seen) >= 1  # the actors really played with older weights at times

    run_dir, checkpoint = resume_checkpoint(trainer.run_dir)
    assert checkpoint.games == trainer.games and checkpoint.extra["learner_updates"] == trainer.updates
    # Through the command line, with three workers this time; then one (the single-process trainer).
    assert main(["train", "--quiet", "--resume", str(run_dir), "--workers", "3", "--set",
                 "run.total_games=400"]) == 0
    resumed = resume_checkpoint(run_dir)[1]
    assert resumed.games >= 400 and resumed.extra["learner_updates"] > trainer.updates
    assert resumed.steps > trainer.steps
    assert any(not torch.equal(resumed.model_state[name], checkpoint.model_state[name])
               for name in checkpoint.model_state)
    assert main(["train", "--quiet", "--resume", str(run_dir), "--workers", "1", "--set",
                 "run.total_games=430"]) == 0
    assert resume_checkpoint(run_dir)[1].games >= 430
    assert "done: " in capsys.readouterr().out


def test_a_killed_actor_is_replaced_and_training_goes_on(tmp_path):
    config = tiny_config(tmp_path, "distributed.workers=2", "run.total_games=20000")
    trainer = DistributedTrainer(config, new_run_directory(config))
    seen = []

    def on_batch(batch):
        seen.append((batch.slot, batch.incarnation))
        if len(seen) == 3:
            os.kill(trainer.pool.pids()[0], signal.SIGKILL)

    def replacement_has_played() -> bool:
        # The survivor alone could finish a short run before a new process is up; run until the
        # replacement in slot 0 has sent two batches (and at least 250 games are learned).
        return seen.count((0, 1)) >= 2 and trainer.games >= 250

    trainer.on_batch = on_batch
    trainer.train(progress=False, should_stop=replacement_has_played)
    assert trainer.restarts == 1 and 250 <= trainer.games < 20000
    assert (0, 2) not in seen and (1, 1) not in seen  # one replacement, in the killed actor's slot
    assert resume_checkpoint(trainer.run_dir)[1].games == trainer.games  # the learner checkpointed as usual
    first, last = first_and_last_losses(trainer)
    assert last < first


def test_distributed_training_refuses_online_traces(tmp_path):
    from tapa_ai.training.trainer import TrainingError

    config = tiny_config(tmp_path, "distributed.workers=2", "learning.method=online-traces")
    with pytest.raises(TrainingError, match="lambda-return"):
        DistributedTrainer(config, tmp_path / "run")


# -- Ray ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def local_ray():
    ray = require("ray")
    from tapa_ai.ray_cluster import LOCAL, RayUnavailable, connect, disconnect

    try:
        connected = connect(LOCAL, num_cpus=2)
    except RayUnavailable:
        # On a loaded machine Ray's raylet can give up waiting for its dashboard agent
        # (ray-project/ray#65983); a second start usually works.
        ray.shutdown()
        connected = connect(LOCAL, num_cpus=2)
    yield ray
    disconnect(connected)


def test_ray_actors_learn_and_a_killed_actor_is_replaced(tmp_path, local_ray, capsys):
    config = tiny_config(tmp_path, "distributed.workers=2", "run.total_games=20000")
    trainer = DistributedTrainer(config, new_run_directory(config), ray_address="auto")
    seen = []

    def on_batch(batch):
        seen.append((batch.slot, batch.incarnation))
        if len(seen) == 3:
            local_ray.kill(trainer.pool.handles[1])

    trainer.on_batch = on_batch
    trainer.train(progress=False, should_stop=lambda: seen.count((1, 1)) >= 2 and trainer.games >= 250)
    assert trainer.restarts == 1 and 250 <= trainer.games < 20000 and (0, 1) not in seen
    said = [line for line in capsys.readouterr().err.splitlines() if "actor" in line]
    assert len(said) == 1 and said[0].startswith("self-play actor 1 lost: Ray reported ") and said[0].endswith(
        "; replaced (1 of 6 replacements in a row allowed)"), said
    first, last = first_and_last_losses(trainer)
    assert last < first - 0.03, (first, last)
    assert local_ray.is_initialized()  # a cluster we did not start stays up


def test_ray_match_equals_the_local_match(local_ray):
    from tapa_ai.arena.match import run_match
    from tapa_ai.rules.options import variant_rules

    rules = variant_rules("tapa")
    local = run_match("heuristic", "random", rules, games=40, seed=3, workers=1, chunk_pairs=5, progress=False)
    spread = run_match("heuristic", "random", rules, games=40, seed=3, chunk_pairs=5, progress=False,
                       ray_address="auto")
    assert spread.workers > 1
    for name in ("points_for_a", "a_won", "kind", "turns"):
        assert np.array_equal(getattr(local.records, name), getattr(spread.records, name)), name


def test_sigterm_to_a_ray_learner_writes_the_stopping_checkpoint_and_prints_how_to_resume(tmp_path, local_ray):
    """``ray.init`` installs Ray's own SIGTERM handlers (a Python one and a C++ one that dumps "SIGTERM received"
    and exits 1); the trainer's, installed before it connects, must be the ones in force after it."""
    from tapa_ai.net.checkpoint import load_checkpoint

    address = local_ray.get_runtime_context().gcs_address  # the test's cluster, reached as --ray-address HOST:PORT
    command = [sys.executable, "-c", "import sys; from tapa_ai.cli import main; sys.exit(main())", "train", "--quiet",
               "--workers", "2", "--ray-address", address]
    for setting in [*TINY, "run.total_games=100000", f"checkpoint.directory={tmp_path}"]:
        command += ["--set", setting]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not list(tmp_path.glob("*/step_*.pt")):  # connected to Ray and training, past a checkpoint
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        out, error = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    run_dir = next(path for path in tmp_path.iterdir() if path.is_dir())
    assert process.returncode == 143, error
    assert "SIGTERM received" not in error and "Traceback" not in error, error
    assert f"continue with: tapa-ai train --resume {run_dir}" in error
    stopped = load_checkpoint(run_dir / "latest.pt")
    assert f"stopped by SIGTERM at {stopped.games} games" in error


# -- found by mutation testing: tapa_ai/training/distributed.py ------------------------------------------
# In-process tests of the parts the process and Ray tests above reach only through whole runs: the shared
# weights' seqlock, the actor process's body, the process pool's bookkeeping (with stand-in processes), and
# the learner's intake and loop (with an in-process stand-in for the pool).
def two_part_weights():
    from multiprocessing import get_context

    return SharedWeights(get_context("spawn"), [("a", (2, 3)), ("b", (4,))])


def test_shared_weights_before_any_publication_read_as_version_minus_one_zeros_and_epsilon_zero():
    shared = two_part_weights()
    assert shared.version() == -1
    version, state, epsilon = shared.read(timeout=0.5)  # the initial checksum matches: no TimeoutError
    assert (version, epsilon) == (-1, 0.0) and list(state) == ["a", "b"]
    assert state["a"].shape == (2, 3) and state["b"].shape == (4,)
    assert not state["a"].any() and not state["b"].any()


def test_shared_weights_each_write_leaves_the_sequence_even_and_two_higher_and_a_reader_gets_the_newest():
    shared = two_part_weights()
    first = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.full(4, 0.5, dtype=np.float32)}
    second = {"a": -np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.arange(10, 14, dtype=np.float32)}
    shared.write((7, first, 0.25))
    assert shared.sequence[0] == 2 and shared.version() == 7
    shared.write((8, second, 0.125))
    assert shared.sequence[0] == 4 and shared.version() == 8
    version, state, epsilon = shared.read(timeout=0.5)
    assert (version, epsilon) == (8, 0.125)
    assert all(np.array_equal(state[name], second[name]) for name in second)  # each part from its own place


def test_shared_weights_read_waits_out_a_write_in_progress_and_gives_up_on_one_that_never_ends():
    import threading

    shared = two_part_weights()
    state = {"a": np.ones((2, 3), dtype=np.float32), "b": np.ones(4, dtype=np.float32)}
    shared.write((3, state, 0.5))
    shared.sequence[0] += 1  # a learner in the middle of a write: odd
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="no whole copy"):
        shared.read(timeout=0.2)
    assert 0.2 <= time.monotonic() - start < 1.0  # retried about every 0.5 ms until the deadline, no longer
    finish = threading.Timer(0.1, lambda: shared.sequence.__setitem__(0, shared.sequence[0] + 1))
    finish.start()  # the write ends: the reader, still retrying, gets the whole copy
    try:
        assert shared.read(timeout=5)[0] == 3
    finally:
        finish.join()
    shared.header[2] += 1.0  # an even count but a torn copy (the checksum does not match): never kept
    with pytest.raises(TimeoutError):
        shared.read(timeout=0.05)


def test_sigint_is_ignored_while_an_actor_process_starts_from_the_main_thread_and_left_alone_from_another():
    import threading

    from tapa_ai.training.distributed import _sigint_ignored

    before = signal.getsignal(signal.SIGINT)
    assert before is not signal.SIG_IGN
    with _sigint_ignored():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) is before
    seen = []

    def in_a_thread():  # signal.signal() may be called from the main thread only
        with _sigint_ignored():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join()
    assert seen == [before]


class StopAfter:
    """An actor process's stop event: set by :class:`Sender` after its batches, or after ``seconds`` anyway."""

    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds
        self.set_now = False

    def is_set(self):
        return self.set_now or time.monotonic() > self.deadline


class Sender:
    """An actor process's pipe: keeps what is sent; raises ``error`` at the first send if given."""

    def __init__(self, stop, sends=2, error=None):
        self.stop, self.sends, self.error, self.sent = stop, sends, error, []

    def send(self, message):
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        self.sent.append(message)
        if len(self.sent) >= self.sends:
            self.stop.set_now = True


def run_actor_main(config, weights, sender, stop, monkeypatch):
    """``_process_actor_main`` in this process; the signal disposition and thread counts it sets are put back."""
    from tapa_ai.config import config_to_dict
    from tapa_ai.training.distributed import _process_actor_main

    for name in ("TAPA_MOVEGEN_THREADS", "TAPA_EVAL_THREADS"):
        monkeypatch.setenv(name, os.environ.get(name, "1"))
    import numba

    sigint, threads, numba_threads = signal.getsignal(signal.SIGINT), torch.get_num_threads(), numba.get_num_threads()
    try:
        _process_actor_main(config_to_dict(config), 1, 2, [9], 2, 1, weights, sender, stop)
    finally:
        signal.signal(signal.SIGINT, sigint)
        torch.set_num_threads(threads)
        numba.set_num_threads(numba_threads)


def test_an_actor_process_plays_with_the_first_publication_version_0_and_sends_batches_until_stopped(
        tmp_path, monkeypatch):
    from multiprocessing import get_context

    config = tiny_config(tmp_path, "selfplay.parallel_games=2")
    state = numpy_state(Trainer(config, tmp_path / "run").net)
    weights = SharedWeights(get_context("spawn"), [(name, value.shape) for name, value in state.items()])
    weights.write((0, state, 0.125))  # the learner publishes version 0 before it starts any actor
    stop = StopAfter(20)
    sender = Sender(stop, sends=2)
    run_actor_main(config, weights, sender, stop, monkeypatch)  # returns once stopped
    assert len(sender.sent) == 2
    assert [(b.slot, b.incarnation, b.version, b.epsilon) for b in sender.sent] == [(1, 2, 0, 0.125)] * 2
    assert all(len(b.games) >= 2 for b in sender.sent)


def test_an_actor_process_reports_its_error_to_the_learner_and_exits_1_but_leaves_quietly_on_a_closed_pipe(
        tmp_path, monkeypatch):
    from multiprocessing import get_context

    from tapa_ai.training.distributed import _ActorError

    config = tiny_config(tmp_path, "selfplay.parallel_games=2")
    state = numpy_state(Trainer(config, tmp_path / "run").net)
    weights = SharedWeights(get_context("spawn"), [(name, value.shape) for name, value in state.items()])
    weights.write((4, state, 0.0))
    stop = StopAfter(20)
    sender = Sender(stop, sends=1, error=ValueError("cannot send this"))
    with pytest.raises(SystemExit) as exited:
        run_actor_main(config, weights, sender, stop, monkeypatch)
    assert exited.value.code == 1
    [report] = sender.sent
    assert isinstance(report, _ActorError) and report.slot == 1 and "ValueError: cannot send this" in report.traceback
    stop = StopAfter(20)
    closed = Sender(stop, error=BrokenPipeError())
    run_actor_main(config, weights, closed, stop, monkeypatch)  # the learner closed the pipe: no report, no error
    assert closed.sent == []


class StandInProcess:
    """A process of an actor slot, as ProcessActors handles it: alive or dead, joins and kills recorded."""

    def __init__(self, alive=False, exitcode=None, sentinel=None, pid=0):
        self.alive, self.exitcode, self.sentinel, self.pid = alive, exitcode, sentinel, pid
        self.calls = []

    def join(self, timeout=None):
        self.calls.append("join")

    def is_alive(self):
        return self.alive

    def kill(self):
        self.calls.append("kill")
        self.alive, self.exitcode = False, -signal.SIGKILL


class StandInPipe:
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


def process_actors(tmp_path, workers, *extra):
    """ProcessActors whose ``_launch`` only records (slot, incarnation): no process is started."""
    from tapa_ai.training.distributed import ProcessActors

    actors = ProcessActors(tiny_config(tmp_path, f"distributed.workers={workers}", *extra), workers, 0, [("w", (3,))])
    actors.launched = []
    actors._launch = lambda slot: actors.launched.append((slot, actors.incarnations[slot]))
    return actors


def test_process_actors_start_with_empty_slots_and_no_losses(tmp_path):
    actors = process_actors(tmp_path, 3)
    assert actors.slots == [None, None, None] and actors.incarnations == [0, 0, 0]
    assert (actors.restarts, actors.failures_in_a_row, actors.stopping) == (0, 0, False)
    assert actors.pids() == [None, None, None]


def test_a_lost_actor_is_replaced_in_its_slot_as_the_next_incarnation_until_too_many_are_lost_in_a_row(
        tmp_path, capsys):
    from tapa_ai.training.distributed import _ProcessSlot
    from tapa_ai.training.trainer import TrainingError

    actors = process_actors(tmp_path, 2)
    dead, pipe = StandInProcess(exitcode=-signal.SIGKILL), StandInPipe()
    actors.slots[0] = _ProcessSlot(dead, pipe, 0.0)
    actors._replace(0, "it exited")  # died=True by default: its exit status is said
    assert pipe.closed and dead.calls == ["join", "join"]  # joined for its exit code, not killed
    assert actors.slots[0] is None and actors.launched == [(0, 1)] and actors.incarnations == [1, 0]
    assert (actors.restarts, actors.failures_in_a_row) == (1, 1)
    assert capsys.readouterr().err.strip() == ("self-play actor 0 lost: it exited (killed by SIGKILL); replaced "
                                               "(1 of 6 replacements in a row allowed)")
    hung, pipe = StandInProcess(alive=True), StandInPipe()
    actors.slots[1] = _ProcessSlot(hung, pipe, 0.0)
    actors._replace(1, "no batch for 600 s (hung: killed)", died=False)
    assert pipe.closed and hung.calls == ["kill", "join"] and actors.launched[-1] == (1, 1)
    assert capsys.readouterr().err.strip() == ("self-play actor 1 lost: no batch for 600 s (hung: killed); "
                                               "replaced (2 of 6 replacements in a row allowed)")
    for _ in range(4):  # an empty slot (its start failed) is replaced too: 6 in a row are allowed with 2 workers
        actors._replace(0, "it exited")
    assert (actors.restarts, actors.failures_in_a_row, actors.incarnations) == (6, 6, [5, 1])
    with pytest.raises(TrainingError, match=r"keep dying \(7 in a row; the last: actor 0, it exited\)"):
        actors._replace(0, "it exited")
    assert actors.launched[-1] == (0, 5)  # the 7th is not replaced


def test_an_actor_lost_while_the_learner_stops_is_not_replaced(tmp_path):
    from tapa_ai.training.distributed import _ProcessSlot

    actors = process_actors(tmp_path, 2)
    actors.stopping = True
    actors.slots[1] = _ProcessSlot(StandInProcess(exitcode=-signal.SIGTERM), StandInPipe(), 0.0)
    actors._replace(1, "it exited")
    assert actors.slots == [None, None] and actors.launched == [] and (actors.restarts, actors.failures_in_a_row) == (0, 0)


def test_receive_takes_sent_batches_and_replaces_actors_that_exited_closed_their_pipe_or_hung(tmp_path, capsys):
    from tapa_ai.training.distributed import _ProcessSlot

    actors = process_actors(tmp_path, 5, "distributed.actor_timeout=30")
    pipes = [actors.context.Pipe(duplex=False) for _ in range(5)]  # (receiver, sender) of each slot
    sentinels = [actors.context.Pipe(duplex=False) for _ in range(5)]  # readable: the process ended
    now = time.monotonic()
    processes = [StandInProcess(sentinel=sentinels[slot][0], pid=100 + slot, alive=slot not in (1, 2)) for slot in range(5)]
    for slot in range(5):
        actors.slots[slot] = _ProcessSlot(processes[slot], pipes[slot][0], now - 100 if slot == 3 else now - 1)
    pipes[0][1].send("a batch")  # slot 0 sent a batch
    sentinels[1][1].close()  # slot 1 exited
    pipes[2][1].close()  # slot 2's pipe closed (it died while sending)
    # slot 3 sent nothing for 100 s (hung); slot 4 sent nothing for 1 s: left alone
    actors.failures_in_a_row = 3
    assert actors.receive(0.5) == ["a batch"]
    assert actors.slots[0].last_batch >= now
    assert actors.launched == [(1, 1), (2, 1), (3, 1)] and actors.slots[4] is not None
    assert (actors.restarts, actors.failures_in_a_row) == (3, 3)  # reset by slot 0's batch, then three losses
    assert processes[3].calls == ["kill", "join"] and "kill" not in processes[1].calls + processes[2].calls
    said = capsys.readouterr().err
    assert "actor 1 lost: it exited (exit code unknown)" in said and "actor 2 lost: its pipe closed (EOFError) (" in said
    assert "actor 3 lost: no batch for 30 s (hung: killed); replaced" in said and "actor 4" not in said
    assert actors.pids() == [100, None, None, None, 104]


def test_receive_stops_training_with_the_traceback_of_an_actor_whose_code_raised(tmp_path):
    from tapa_ai.training.actor_pool import ActorFailed
    from tapa_ai.training.distributed import _ActorError, _ProcessSlot

    actors = process_actors(tmp_path, 1)
    receiver, sender = actors.context.Pipe(duplex=False)
    actors.slots[0] = _ProcessSlot(StandInProcess(sentinel=actors.context.Pipe(duplex=False)[0]), receiver,
                                   time.monotonic())
    sender.send(_ActorError(0, "Traceback: ValueError: bad"))
    with pytest.raises(ActorFailed, match="self-play actor 0 failed:\nTraceback: ValueError: bad"):
        actors.receive(0.5)
    assert actors.launched == []


def test_closing_process_actors_stops_them_closes_their_pipes_and_kills_those_still_alive(tmp_path):
    from tapa_ai.training.distributed import _ProcessSlot

    actors = process_actors(tmp_path, 3)
    ended, hung = StandInProcess(), StandInProcess(alive=True)
    pipes = [StandInPipe(), StandInPipe()]
    actors.slots = [_ProcessSlot(ended, pipes[0], 0.0), None, _ProcessSlot(hung, pipes[1], 0.0)]
    actors.close()
    assert actors.stop.is_set() and all(pipe.closed for pipe in pipes)
    assert ended.calls == ["join"] and hung.calls == ["join", "kill", "join"]
    assert actors.slots == [None, None, None]


def test_the_learner_takes_its_worker_count_from_the_argument_else_the_config_and_needs_one(tmp_path):
    from tapa_ai.training.trainer import TrainingError

    config = tiny_config(tmp_path, "distributed.workers=2")
    assert DistributedTrainer(config, tmp_path / "a", workers=3).workers == 3
    assert DistributedTrainer(config, tmp_path / "b").workers == 2
    one = DistributedTrainer(config, tmp_path / "c", workers=1)  # one actor process is allowed
    assert one.workers == 1 and (one.dropped_stale_games, one.restarts) == (0, 0) and not one.actors_label
    with pytest.raises(TrainingError, match="workers=-1: must be at least 1"):
        DistributedTrainer(config, tmp_path / "d", workers=-1)
    # learning.overlap does not apply: the learner has no copy of the weights to play with
    overlapping = DistributedTrainer(tiny_config(tmp_path, "distributed.workers=2", "learning.overlap=true"),
                                     tmp_path / "e")
    assert overlapping.play_net is overlapping.net


def test_one_worker_with_ray_is_the_distributed_learner(tmp_path):
    assert isinstance(make_trainer(tiny_config(tmp_path), tmp_path / "a", ray_address="auto"), DistributedTrainer)


def test_the_learner_counts_a_batch_s_abandoned_games_turns_and_results_and_keeps_any_staleness_without_a_limit(
        tmp_path):
    from collections import Counter

    from tapa_ai.training.schedule import Schedule

    config = tiny_config(tmp_path, "distributed.workers=2")  # max_staleness = 0: no limit
    trainer = DistributedTrainer(config, tmp_path / "run")
    actor = SelfPlayActor(config, slot=0, seed=[4])
    actor.set_weights(0, numpy_state(trainer.net))
    batch = actor.play(3, 0.0)
    batch.abandoned = 2
    trainer.learner.updates = 40
    schedule = Schedule(trainer, progress=False)
    try:
        trainer._take(batch, schedule)
        trainer._take(batch, schedule)
    finally:
        schedule.close()
    stats = trainer.selfplay.stats
    assert trainer.dropped_stale_games == 0 and list(trainer.staleness_seen) == [40, 40]
    assert stats.games == 2 * len(batch.games) and stats.abandoned == 4
    assert stats.turns_of_finished == 2 * sum(game.turns for game in batch.games)
    assert stats.kinds == Counter(2 * [game.kind for game in batch.games])
    assert schedule.window.staleness == [(40, len(batch.games))] * 2


def test_a_learner_of_search_targets_refuses_a_batch_without_labels(tmp_path):
    from tapa_ai.training.schedule import Schedule
    from tapa_ai.training.trainer import TrainingError

    config = tiny_config(tmp_path, "distributed.workers=2")
    trainer = DistributedTrainer(tiny_config(tmp_path, "distributed.workers=2", "learning.targets=search"),
                                 tmp_path / "run")
    actor = SelfPlayActor(config, slot=1, seed=[4])  # an actor of a run that learns from the games
    actor.set_weights(0, numpy_state(trainer.net))
    schedule = Schedule(trainer, progress=False)
    try:
        with pytest.raises(TrainingError, match="actor 1 sent games without search labels"):
            trainer._take(actor.play(2, 0.0), schedule)
    finally:
        schedule.close()


def test_a_stop_request_marks_the_learner_s_pool_as_stopping(tmp_path):
    trainer = DistributedTrainer(tiny_config(tmp_path, "distributed.workers=2"), tmp_path / "run")
    trainer._stopping()  # no pool yet: nothing to do

    class Pool:
        stopping = False

    trainer.pool = Pool()
    trainer._stopping()
    assert trainer.pool.stopping is True


class InProcessActors:
    """An actor pool whose one actor plays in this process; each batch reports ``cpu`` seconds of actor CPU."""

    def __init__(self, config, cpu=1000.0):
        self.actor = SelfPlayActor(config, slot=0, seed=[5])
        self.games_per_batch = config.distributed.games_per_batch
        self.cpu, self.published, self.restarts, self.stopping, self.closed = cpu, [], 0, False, False

    def start(self, weights):
        self.publish(weights)

    def publish(self, weights):
        version, state, self.epsilon = weights
        self.published.append(version)
        self.actor.set_weights(version, state)

    def receive(self, timeout):
        batch = self.actor.play(self.games_per_batch, self.epsilon)
        batch.cpu_seconds = self.cpu
        self.restarts = 1  # as if an actor had been replaced
        return [batch]

    def close(self):
        self.closed = True


def train_in_process(tmp_path, *extra, should_stop=None):
    config = tiny_config(tmp_path, "distributed.workers=2", "run.total_games=48", *extra)
    trainer = DistributedTrainer(config, new_run_directory(config))
    pool = InProcessActors(config)
    trainer._make_pool = lambda: pool
    received = []
    trainer.on_batch = lambda batch: received.append(batch.version)
    cpu, wall = time.process_time(), time.perf_counter()
    trainer.train(progress=False, should_stop=should_stop and (lambda: should_stop(trainer)))
    return trainer, pool, received, time.process_time() - cpu, time.perf_counter() - wall


def test_the_learner_learns_each_full_batch_publishes_every_publish_every_updates_and_counts_cpu_and_time(tmp_path):
    # 8 games a batch (hundreds of positions) against learning.batch_size = 64: a learning pass after each batch.
    trainer, pool, received, cpu, wall = train_in_process(tmp_path, "distributed.publish_every=2")
    assert trainer.games == 48 and trainer.updates == 6 and len(trainer.losses) == 6
    assert pool.published == [0, 2, 4, 6] and received == [0, 0, 2, 2, 4, 4]
    assert list(trainer.staleness_seen) == [0, 1, 0, 1, 0, 1]
    assert pool.closed and trainer.pool is None and trainer.restarts == 1
    # The actors' CPU as they reported it, plus the learner's own, counted once (within what train() took).
    assert 6 * 1000.0 < trainer.cpu_seconds <= 6 * 1000.0 + cpu
    assert 0 < trainer.wall_seconds <= wall
    assert resume_checkpoint(trainer.run_dir)[1].games == 48


def test_the_learner_learns_short_batches_at_each_checkpoint_and_stops_when_asked(tmp_path):
    # learning.batch_size far above a batch's positions: the learner learns at each checkpoint (16 games) only.
    trainer, pool, received, _, _ = train_in_process(tmp_path, "learning.batch_size=100000",
                                                     "checkpoint.every_games=16")
    assert trainer.games == 48 and trainer.updates == 3 and len(trainer.losses) == 3
    assert pool.published == [0, 1, 2, 3] and received == [0, 0, 1, 1, 2, 2]
    stopped, _, received, _, _ = train_in_process(tmp_path, should_stop=lambda trainer: trainer.games >= 8)
    assert stopped.games == 8 and received == [0] and stopped.updates == 1


def test_process_actors_publish_then_start_each_slot_s_actor_as_a_daemon_with_its_seed_and_sigint_ignored(tmp_path):
    from tapa_ai.training.distributed import ProcessActors, _process_actor_main

    config = tiny_config(tmp_path, "distributed.workers=2", "distributed.actor_threads=3")
    actors = ProcessActors(config, 2, 40, [("w", (3,))])
    started = []

    class Context:  # stands in for the spawn context: records the pipes and processes asked for
        def Pipe(self, duplex=True):
            ends = (StandInPipe(), StandInPipe())
            ends[0].duplex = duplex
            return ends

        def Process(self, **arguments):
            class Process:
                sentinel, pid = None, 1000 + len(started)

                def start(self):
                    started.append((arguments, signal.getsignal(signal.SIGINT), actors.weights.version()))

            return Process()

    actors.context = Context()
    actors.incarnations[1] = 2
    actors.start((5, {"w": np.ones(3, dtype=np.float32)}, 0.5))
    assert len(started) == 2
    for slot, (arguments, sigint, published) in enumerate(started):
        incarnation = (0, 2)[slot]
        assert arguments["target"] is _process_actor_main and arguments["daemon"] is True
        assert arguments["name"] == f"tapa-ai-actor-{slot}.{incarnation}"
        assert arguments["args"][:6] == (actors.config_dict, slot, incarnation, actor_seed(1, 40, slot, incarnation),
                                         8, 3)
        assert arguments["args"][6] is actors.weights and arguments["args"][8] is actors.stop
        assert arguments["args"][7].closed  # the child holds the only write end
        assert sigint is signal.SIG_IGN and published == 5  # started after the first publication
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    assert all(not slot.receiver.duplex and not slot.receiver.closed for slot in actors.slots)
    assert actors.pids() == [1000, 1001]


def test_the_learner_learns_as_soon_as_batch_size_positions_wait_and_not_before(tmp_path):
    config = tiny_config(tmp_path, "distributed.workers=2")
    first = InProcessActors(config)  # the same actor as train_in_process's: its first batch, counted
    first.publish(DistributedTrainer(config, tmp_path / "run")._weights())
    positions = first.receive(0.25)[0].positions
    assert positions > 64
    for batch_size, learned_after_the_first_batch in ((positions, True), (positions + 1, False)):
        trainer, _, _, _, _ = train_in_process(tmp_path, "run.total_games=16", f"learning.batch_size={batch_size}")
        # the second batch ends the run (16 games), and is learned with whatever waits
        assert trainer.games == 16 and [games for games, _ in trainer.losses] == [8, 16][
            0 if learned_after_the_first_batch else 1:]
