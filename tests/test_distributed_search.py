"""Expert iteration with distributed actors: the actors label positions by search, the learner only fits them."""

import os
import signal

import numpy as np
import pytest

from tapa_ai.cli import main
from tapa_ai.config import load_config
from tapa_ai.training.actor import LABEL_STREAM, SelfPlayActor, actor_seed, numpy_state
from tapa_ai.training.distill import search_targets
from tapa_ai.training.distributed import DistributedTrainer
from tapa_ai.training.trainer import Trainer, new_run_directory, resume_checkpoint

TINY = ["selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64", "eval.every_games=100000",
        "eval.games=8", "checkpoint.every_games=40", "logging.log_every_games=20", "logging.tensorboard=false",
        "distributed.games_per_batch=4", "learning.targets=search", "learning.search_fraction=0.2",
        "learning.replay_size=5000"]


def search_config(tmp_path, *extra):
    return load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}", *extra])


@pytest.mark.parametrize("settings,expected_options", [
    ((), {"refine": (2, 0.04)}),
    (("learning.search_refine=1", "learning.search_last_ply_dice=6"), {"refine": (1, 0.04), "last_ply_dice": 6}),
])
def test_actor_made_targets_equal_search_targets_for_the_same_weights_positions_and_seed(tmp_path, settings,
                                                                                         expected_options):
    config = search_config(tmp_path, "learning.search_plies=2", "learning.search_fraction=0.1", *settings)
    net = Trainer(config, tmp_path / "run").net
    weights = numpy_state(net)
    seed = actor_seed(1, 0, 0, 0)
    actor = SelfPlayActor(config, slot=0, seed=seed)
    actor.set_weights(5, weights)
    first, second = actor.play(3, epsilon=0.1), actor.play(3, epsilon=0.1)
    # The same actor with labelling off plays the same games (labels come from generators of their own).
    player = SelfPlayActor(config, slot=0, seed=seed)
    player.labels = False
    player.set_weights(5, weights)
    for batch, number in ((first, 0), (second, 1)):
        games = player.play(3, epsilon=0.1).games
        assert [g.turns for g in games] == [g.turns for g in batch.games]
        assert all(len(game.states) == 0 for game in batch.games)  # the positions do not travel
        states = np.concatenate([game.states for game in games])
        assert batch.label_seed == [*seed, LABEL_STREAM, number] and batch.version == 5
        rng = np.random.default_rng(batch.label_seed)
        picked = states[rng.random(len(states)) < 0.1]
        assert len(picked) > 0 and batch.positions == len(picked)
        expected = search_targets(net, picked, 2, rng, bearoff=False, **expected_options)
        assert np.array_equal(batch.search_states, picked)
        assert np.array_equal(batch.search_targets, expected)
        assert 0 < batch.label_cpu_seconds <= batch.cpu_seconds


def test_search_targets_from_two_workers_are_learned_and_the_run_resumes_with_any_worker_count(tmp_path):
    config = search_config(tmp_path, "distributed.workers=2", "run.total_games=60", "learning.search_plies=1")
    trainer = DistributedTrainer(config, new_run_directory(config))
    labels = []
    trainer.on_batch = lambda batch: labels.append(len(batch.search_states))
    trainer.train(progress=False)
    assert trainer.games >= 60 and trainer.restarts == 0
    # Every label an actor sent, and nothing else, is in the buffer; the learner labelled none itself.
    assert len(trainer.replay) == trainer.labels_added == sum(labels) > 0
    assert trainer.steps > 0 and trainer.updates > 0

    run_dir, checkpoint = resume_checkpoint(trainer.run_dir)
    assert checkpoint.extra["replay"]["states"].shape[0] == len(trainer.replay)
    # Three workers, then one (the single-process trainer labels in its learner): the buffer carries over.
    assert main(["train", "--quiet", "--resume", str(run_dir), "--workers", "3", "--set", "run.total_games=90"]) == 0
    resumed = resume_checkpoint(run_dir)[1]
    assert resumed.games >= 90 and resumed.extra["replay"]["states"].shape[0] > len(trainer.replay)
    assert main(["train", "--quiet", "--resume", str(run_dir), "--workers", "1", "--set", "run.total_games=110"]) == 0
    last = resume_checkpoint(run_dir)[1]
    assert last.games >= 110 and last.steps > resumed.steps
    assert last.extra["replay"]["states"].shape[0] > resumed.extra["replay"]["states"].shape[0]


def test_an_actor_killed_while_it_searches_is_replaced_and_nothing_half_learned(tmp_path):
    # 2-ply labels: an actor spends most of its time searching, so the kill lands mid-search.
    config = search_config(tmp_path, "distributed.workers=2", "run.total_games=100000", "learning.search_plies=2")
    trainer = DistributedTrainer(config, new_run_directory(config))
    seen = []
    sent = []

    def on_batch(batch):
        seen.append((batch.slot, batch.incarnation))
        sent.append(len(batch.search_states))
        if len(seen) == 2:
            os.kill(trainer.pool.pids()[0], signal.SIGKILL)

    trainer.on_batch = on_batch
    trainer.train(progress=False, should_stop=lambda: seen.count((0, 1)) >= 1 and len(seen) >= 4)
    assert trainer.restarts == 1 and (0, 2) not in seen and (1, 1) not in seen
    # Only whole batches' labels reached the buffer: exactly what the received batches carried.
    assert len(trainer.replay) == trainer.labels_added == sum(sent)
    saved = resume_checkpoint(trainer.run_dir)[1]
    assert saved.games == trainer.games and saved.extra["replay"]["states"].shape[0] == len(trainer.replay)
