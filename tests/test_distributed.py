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
