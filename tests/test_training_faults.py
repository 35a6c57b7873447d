"""Faults of distributed training found by a fault-injection probe (issue 49): an actor killed while it copies
the weights, what a replacement says, the learner's update counter across trainers, a double Ctrl-C's message."""

import os
import random
import re
import signal
import threading
import time
from multiprocessing import get_context

import numpy as np
import pytest

from tapa_ai.training.distributed import ProcessActors, SharedWeights
from tests.test_distributed import tiny_config

# Big enough that a reader spends most of its time copying (a kill lands inside the copy), small enough to be quick.
LAYOUT = [("big", (1_000_000,)), ("small", (3, 4))]


def publication(version: int):
    """Weights whose every entry is ``version``, and epsilon ``version / 1000``: a torn copy shows."""
    state = {name: np.full(shape, float(version), dtype=np.float32) for name, shape in LAYOUT}
    return version, state, version / 1000


def torn(weights) -> bool:
    version, state, epsilon = weights
    return epsilon != version / 1000 or any(
        array.shape != shape or not np.all(array == version) for (name, shape), array in zip(LAYOUT, state.values()))


def read_forever(weights: SharedWeights, reading) -> None:
    """An actor that does nothing but copy the weights, until it is killed."""
    weights.read()
    reading.set()
    while True:
        weights.read()


def read_and_check(weights: SharedWeights, reads: int, sender) -> None:
    """Copy the weights ``reads`` times; send (torn copies, versions seen)."""
    copies = [weights.read() for _ in range(reads)]
    sender.send((sum(torn(copy) for copy in copies), sorted({copy[0] for copy in copies})))


def publish_within(weights: SharedWeights, version: int, seconds: float) -> bool:
    """Whether the learner's publish of ``version`` returns within ``seconds`` (it runs in a daemon thread)."""
    done = threading.Event()

    def publish():
        weights.write(publication(version))
        done.set()

    threading.Thread(target=publish, daemon=True).start()
    return done.wait(seconds)


def test_an_actor_killed_while_copying_the_weights_cannot_hold_the_learner():
    context = get_context("spawn")
    weights = SharedWeights(context, LAYOUT)
    weights.write(publication(0))
    chance = random.Random(49)
    for version in range(1, 6):
        reading = context.Event()
        actor = context.Process(target=read_forever, args=(weights, reading), daemon=True)
        actor.start()
        try:
            assert reading.wait(60), "the reader did not start"
            time.sleep(chance.uniform(0.02, 0.2))  # somewhere in its loop of copies: mostly inside one
            os.kill(actor.pid, signal.SIGKILL)
            actor.join(10)
        finally:
            if actor.is_alive():
                actor.kill()
        assert actor.exitcode == -signal.SIGKILL
        assert publish_within(weights, version, 10), f"publish hung after kill {version}"
    copy = weights.read()
    assert copy[0] == 5 and not torn(copy)


def test_actors_never_take_a_torn_copy_while_the_learner_publishes():
    context = get_context("spawn")
    weights = SharedWeights(context, LAYOUT)
    weights.write(publication(0))
    receivers, actors = [], []
    for _ in range(2):
        receiver, sender = context.Pipe(duplex=False)
        actor = context.Process(target=read_and_check, args=(weights, 60, sender), daemon=True)
        actor.start()
        receivers.append(receiver)
        actors.append(actor)
    version = 0
    try:
        while any(actor.is_alive() for actor in actors) and version < 100_000:
            version += 1
            weights.write(publication(version))
            time.sleep(0.002)  # a learner publishes between learning passes, not back to back
        results = [receiver.recv() for receiver in receivers if receiver.poll(60)]
    finally:
        for actor in actors:
            actor.join(10)
            if actor.is_alive():
                actor.kill()
    assert len(results) == 2
    for torn_copies, versions in results:
        assert torn_copies == 0
        assert len(versions) > 1  # the copies really were taken while publications came


# -- what a replacement says -----------------------------------------------------------------------------------
def test_a_replaced_actor_process_is_reported_in_one_line(tmp_path, capsys):
    pool = ProcessActors(tiny_config(tmp_path, "distributed.workers=1"), 1, 0, [("weights", (2,))])
    try:
        pool._launch(0)  # nothing published: it waits for weights
        os.kill(pool.pids()[0], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while pool.restarts == 0 and time.monotonic() < deadline:
            pool.receive(0.25)
        assert pool.restarts == 1 and pool.incarnations == [1] and pool.slots[0].process.is_alive()
    finally:
        pool.close()
    lines = [line for line in capsys.readouterr().err.splitlines() if "actor" in line]
    assert len(lines) == 1, lines
    assert re.fullmatch(r"self-play actor 0 lost: .*\(killed by SIGKILL\); replaced \(1 of 4 replacements in a row "
                        r"allowed\)", lines[0]), lines


# -- the learner's update counter across trainers ------------------------------------------------------------
def test_the_learner_update_counter_continues_across_single_process_and_distributed_segments(tmp_path):
    from tapa_ai.config import apply_overrides
    from tapa_ai.net.checkpoint import load_checkpoint
    from tapa_ai.training.distributed import DistributedTrainer
    from tapa_ai.training.trainer import Trainer, new_run_directory, resume_checkpoint

    def updates_in_checkpoint(run_dir) -> int:
        return load_checkpoint(run_dir / "latest.pt").extra.get("learner_updates", 0)

    config = tiny_config(tmp_path, "run.total_games=48", "checkpoint.every_games=1000")
    single = Trainer(config, new_run_directory(config))
    single.train(progress=False)
    run_dir = single.run_dir
    first = updates_in_checkpoint(run_dir)
    assert first > 0  # the single-process segment's learning passes count

    checkpoint = resume_checkpoint(run_dir)[1]
    learner = DistributedTrainer(apply_overrides(checkpoint.train_config(), ["run.total_games=96"]), run_dir,
                                 checkpoint, workers=1)
    assert learner.updates == first  # continues, not from 0
    learner.train(progress=False)
    second = updates_in_checkpoint(run_dir)
    assert second == learner.updates > first

    checkpoint = resume_checkpoint(run_dir)[1]
    again = Trainer(apply_overrides(checkpoint.train_config(), ["run.total_games=144"]), run_dir, checkpoint)
    again.train(progress=False)
    assert updates_in_checkpoint(run_dir) > second  # and on through the next single-process segment


# -- a double Ctrl-C says what was written -------------------------------------------------------------------
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_second_ctrl_c_says_truly_whether_the_stopping_checkpoint_was_written(tmp_path, capsys, monkeypatch,
                                                                                 when):
    from tapa_ai.net.checkpoint import load_checkpoint
    from tapa_ai.net.checkpoint_dir import CheckpointManager
    from tapa_ai.training.cli_train import train_command
    from tapa_ai.training.selfplay import SelfPlay

    plies, stopping = [], []
    step, save = SelfPlay.step, CheckpointManager.save

    def play_then_ctrl_c(self, epsilon):
        plies.append(epsilon)
        if len(plies) == 150:  # past the first checkpoints
            stopping.append(True)
            os.kill(os.getpid(), signal.SIGINT)  # the first Ctrl-C: finish the step, checkpoint, stop
        return step(self, epsilon)

    def save_with_a_second_ctrl_c(self, **payload):
        if stopping and when == "before":
            os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, before the stopping checkpoint is written
        path = save(self, **payload)
        if stopping and when == "after":
            os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, once it is written (the learner still stopping)
        return path

    monkeypatch.setattr(SelfPlay, "step", play_then_ctrl_c)
    monkeypatch.setattr(CheckpointManager, "save", save_with_a_second_ctrl_c)
    settings = ["run.total_games=100000", "selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64",
                "eval.every_games=100000", "checkpoint.every_games=12", "logging.tensorboard=false",
                f"checkpoint.directory={tmp_path}"]
    assert train_command(config_file="configs/quick.toml", resume=None, overrides=settings, progress=False) == 130
    error = capsys.readouterr().err
    run_dir = next(path for path in tmp_path.iterdir() if path.is_dir())
    latest = load_checkpoint(run_dir / "latest.pt")
    said = [line for line in error.splitlines() if line.startswith("tapa-ai train:")]
    assert len(said) == 1 and "Traceback" not in error, error
    assert f"{latest.games} games" in said[0] and said[0].endswith(f"continue with: tapa-ai train --resume {run_dir}")
    if when == "after":
        assert "without" not in said[0] and "stopping checkpoint" in said[0] and "written" in said[0], said
    else:
        assert "without the stopping checkpoint" in said[0], said


def test_a_running_game_with_an_encoding_before_version_4_is_refused_before_a_run_is_made(tmp_path):
    from tapa_ai.training.cli_train import train_command
    from tapa_ai.training.runs import TrainingError

    settings = [f"checkpoint.directory={tmp_path}", "run.total_games=10", "model.encoding_version=3"]
    with pytest.raises(TrainingError, match="encoding version 3 cannot encode 'narde'.*needs version 4"):
        train_command(config_file="configs/narde.toml", resume=None, overrides=settings, progress=False)
    assert list(tmp_path.iterdir()) == []
