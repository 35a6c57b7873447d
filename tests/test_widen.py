"""Widening a checkpoint to a later encoding version (tapa_ai/net/widen.py, scripts/widen_encoding.py)."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

from tapa_ai.net.checkpoint import CheckpointError, load_checkpoint, load_network
from tapa_ai.net.encoding import encode
from tapa_ai.net.fast_eval import FastEvaluator
from tapa_ai.net.model import evaluate
from tapa_ai.movegen.random_positions import mixed_positions
from tapa_ai.net.widen import grow_checkpoint, widen_checkpoint
from tapa_ai.rules.options import variant_rules
from tapa_ai.training.trainer import Trainer, new_run_directory, resume_checkpoint
from tests.test_training import tiny_config


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny backgammon run on encoding version 1, two hidden layers (its latest.pt has Adam moments)."""
    config = tiny_config(tmp_path_factory.mktemp("widen"), "run.variant=backgammon", "run.total_games=12",
                         "model.layers=2", "model.hidden=[16,8]")
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    return trainer.run_dir


def _copy_of(run_dir, tmp_path):
    """A copy of a run directory under ``tmp_path`` (the module's runs are shared by its tests)."""
    copy = tmp_path / run_dir.name
    shutil.copytree(run_dir, copy)
    return copy


@pytest.mark.parametrize("version", [2, 3])
def test_a_widened_network_computes_what_it_did(run, tmp_path, version):
    target = widen_checkpoint(run / "latest.pt", version, tmp_path / "wide.pt")
    narrow, wide = load_network(run / "latest.pt"), load_network(target)
    assert narrow.encoding_version == 1 and wide.encoding_version == version
    assert load_checkpoint(target).encoding == ("tapa-td", version)
    batch = mixed_positions(variant_rules("backgammon"), 200, np.random.default_rng(4))
    probabilities, equities = evaluate(narrow, encode(batch, version=1))
    wide_probabilities, wide_equities = evaluate(wide, encode(batch, version=version))
    assert np.abs(probabilities - wide_probabilities).max() < 1e-6
    # The fast kernel adds the new columns' zero weights: the very same floats.
    assert np.array_equal(FastEvaluator.from_net(narrow).evaluate(batch)[1],
                          FastEvaluator.from_net(wide).evaluate(batch)[1])
    # The new inputs' weights are zero, the old ones untouched.
    first, old = wide.layers[0].weight.detach(), narrow.layers[0].weight.detach()
    assert torch.equal(first[:, :259], old) and not first[:, 259:].any()


def test_a_run_resumes_from_a_widened_checkpoint_and_learns_the_new_inputs(run, tmp_path):
    copy = _copy_of(run, tmp_path)
    widen_checkpoint(copy / "latest.pt", 2, copy / "latest.pt")
    run_dir, checkpoint = resume_checkpoint(copy)
    state = checkpoint.optimizer_state["state"][0]
    assert state["exp_avg"].shape == (16, 309) and not state["exp_avg"][:, 259:].any()
    config = checkpoint.train_config()
    assert config.model.encoding_version == 2
    config.run.total_games = 24
    trainer = Trainer(config, run_dir, checkpoint)
    trainer.train(progress=False)
    assert trainer.games >= 24 and trainer.net.encoding_version == 2
    # Learning reached the exposure columns (they were all zero).
    assert trainer.net.layers[0].weight.detach()[:, 259:].abs().sum() > 0
    assert load_checkpoint(copy / "latest.pt").encoding == ("tapa-td", 2)


def test_widening_to_the_same_or_an_earlier_version_is_refused(run, tmp_path):
    wide = widen_checkpoint(run / "latest.pt", 2, tmp_path / "wide.pt")
    with pytest.raises(CheckpointError, match="already on encoding version 2"):
        widen_checkpoint(wide, 2, tmp_path / "again.pt")
    with pytest.raises(CheckpointError, match="known versions"):
        widen_checkpoint(run / "latest.pt", 7, tmp_path / "bad.pt")
    assert not (tmp_path / "again.pt").exists() and not (tmp_path / "bad.pt").exists()


def test_the_script_widens_in_place_and_keeps_the_original(run, tmp_path):
    path = tmp_path / "latest.pt"
    shutil.copy(run / "latest.pt", path)
    done = subprocess.run([sys.executable, "scripts/widen_encoding.py", str(path), "--version", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert load_checkpoint(path).encoding == ("tapa-td", 2)
    assert load_checkpoint(tmp_path / "latest.v1.pt").encoding == ("tapa-td", 1)
    again = subprocess.run([sys.executable, "scripts/widen_encoding.py", str(path), "--version", "2"],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "widen_encoding:" in again.stderr


# ---- wider hidden layers (grow_payload, scripts/grow_network.py) ----

@pytest.fixture(scope="module")
def race_run(tmp_path_factory):
    """A tiny backgammon run with a race network, overlapped learning (self-play's weights in the checkpoint)."""
    config = tiny_config(tmp_path_factory.mktemp("grow"), "run.variant=backgammon", "run.total_games=12",
                         "model.layers=2", "model.hidden=[16,8]", "model.race_network=true",
                         "learning.overlap=true")
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    return trainer.run_dir


def test_a_grown_network_computes_what_it_did(run, tmp_path):
    target = grow_checkpoint(run / "latest.pt", [24, 8], tmp_path / "grown.pt")
    small, grown = load_network(run / "latest.pt"), load_network(target)
    assert small.config.widths == (16, 8) and grown.config.widths == (24, 8)
    batch = mixed_positions(variant_rules("backgammon"), 200, np.random.default_rng(4))
    features = encode(batch, version=1)
    assert np.abs(evaluate(small, features)[0] - evaluate(grown, features)[0]).max() < 1e-6
    # The fast kernel adds the new units' zero outgoing weights: the very same floats.
    assert np.array_equal(FastEvaluator.from_net(small).evaluate(batch)[1],
                          FastEvaluator.from_net(grown).evaluate(batch)[1])
    first, second = grown.layers[0].weight.detach(), grown.layers[2].weight.detach()
    assert torch.equal(first[:16], small.layers[0].weight.detach())
    # New units have drawn (nonzero) incoming weights; nothing flows from them into old units yet.
    assert first[16:].abs().min() > 0 and not second[:, 16:].any()
    # The same seed grows the same network; another seed draws other new weights.
    again = load_network(grow_checkpoint(run / "latest.pt", [24, 8], tmp_path / "again.pt"))
    other = load_network(grow_checkpoint(run / "latest.pt", [24, 8], tmp_path / "other.pt", seed=2))
    assert torch.equal(again.layers[0].weight, grown.layers[0].weight)
    assert not torch.equal(other.layers[0].weight[16:], grown.layers[0].weight[16:])


def test_every_part_and_self_plays_copy_grow_and_the_run_learns_on(race_run, tmp_path):
    copy = _copy_of(race_run, tmp_path)
    grow_checkpoint(copy / "latest.pt", [20, 12], copy / "latest.pt", seed=5)
    run_dir, checkpoint = resume_checkpoint(copy)
    net = load_network(copy / "latest.pt")
    assert net.parts == ("layers", "race_layers")
    for part in net.parts:
        layers = net.linear_layers(part)
        assert [layer.out_features for layer in layers[:-1]] == [20, 12]
        assert not layers[-1].weight.detach()[:, 8:].any()  # the outputs ignore the new units
    assert checkpoint.extra["play_weights"]["race_layers.2.weight"].shape == (12, 20)
    moments = checkpoint.optimizer_state["state"][2]  # layers.2.weight: (12, 20), old block (8, 16)
    assert moments["exp_avg"].shape == (12, 20) and not moments["exp_avg"][8:].any()
    assert moments["exp_avg"][:8, :16].abs().sum() > 0
    config = checkpoint.train_config()
    assert config.model.widths == (20, 12)
    config.run.total_games = 24
    trainer = Trainer(config, run_dir, checkpoint)
    trainer.train(progress=False)
    assert trainer.games >= 24
    # Learning reached the weights out of the new units (they were all zero).
    assert trainer.net.layers[4].weight.detach()[:, 8:].abs().sum() > 0


# ---- deeper networks: identity layers before the outputs (grow_payload, scripts/grow_network.py) ----

@pytest.mark.parametrize("hidden", [[16, 8, 8], [16, 8, 8, 8], [20, 8, 12]])
def test_a_deepened_network_computes_what_it_did(run, tmp_path, hidden):
    target = grow_checkpoint(run / "latest.pt", hidden, tmp_path / "deeper.pt")
    small, deeper = load_network(run / "latest.pt"), load_network(target)
    assert deeper.config.widths == tuple(hidden) and deeper.config.activation == "relu"
    batch = mixed_positions(variant_rules("backgammon"), 200, np.random.default_rng(5))
    features = encode(batch, version=1)
    assert np.abs(evaluate(small, features)[0] - evaluate(deeper, features)[0]).max() < 1e-6
    # The new layers pass the old last layer's values on unchanged: the same floats in the fast kernel.
    assert np.array_equal(FastEvaluator.from_net(small).evaluate(batch)[1],
                          FastEvaluator.from_net(deeper).evaluate(batch)[1])
    layers = deeper.linear_layers()
    assert len(layers) == len(hidden) + 1
    assert torch.equal(layers[-1].weight.detach()[:, :8], small.linear_layers()[-1].weight.detach())
    if hidden == [16, 8, 8]:
        assert torch.equal(layers[2].weight.detach(), torch.eye(8)) and not layers[2].bias.detach().any()


def test_every_part_deepens_and_the_run_learns_on(race_run, tmp_path):
    copy = _copy_of(race_run, tmp_path)
    before = load_checkpoint(copy / "latest.pt")
    grow_checkpoint(copy / "latest.pt", [16, 8, 8], copy / "latest.pt")
    run_dir, checkpoint = resume_checkpoint(copy)
    net = load_network(copy / "latest.pt")
    for part in net.parts:
        assert [layer.out_features for layer in net.linear_layers(part)] == [16, 8, 8, net.num_outcomes]
    assert torch.equal(checkpoint.extra["play_weights"]["race_layers.4.weight"], torch.eye(8))
    assert torch.equal(checkpoint.extra["play_weights"]["race_layers.6.weight"],
                       before.extra["play_weights"]["race_layers.4.weight"])
    # Adam's state follows its parameters to their new places; the new layers have none yet.
    old_states, states = before.optimizer_state["state"], checkpoint.optimizer_state["state"]
    keys = list(checkpoint.model_state)
    assert len(checkpoint.optimizer_state["param_groups"][0]["params"]) == len(keys) == 16
    assert torch.equal(states[keys.index("layers.6.weight")]["exp_avg"], old_states[4]["exp_avg"])
    assert keys.index("layers.4.weight") not in states
    config = checkpoint.train_config()
    assert config.model.widths == (16, 8, 8)
    config.run.total_games = 24
    trainer = Trainer(config, run_dir, checkpoint)
    trainer.train(progress=False)
    assert trainer.games >= 24
    # Learning moved the new layer off the identity.
    assert not torch.equal(trainer.net.layers[4].weight.detach(), torch.eye(8))


def test_deepening_refuses_a_network_whose_activation_would_change_it(tmp_path_factory, tmp_path):
    config = tiny_config(tmp_path_factory.mktemp("tanh"), "run.variant=backgammon", "run.total_games=4",
                         "model.layers=1", "model.hidden=8", "model.activation=tanh")
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    with pytest.raises(CheckpointError, match="only ReLU"):
        grow_checkpoint(trainer.run_dir / "latest.pt", [8, 8], tmp_path / "bad.pt")
    assert not (tmp_path / "bad.pt").exists()
    # Widening a tanh network changes nothing it computes: still allowed.
    assert load_network(grow_checkpoint(trainer.run_dir / "latest.pt", [12], tmp_path / "wide.pt")).config.widths == (12,)


@pytest.mark.parametrize("hidden, message", [([16], "has 2 hidden layers"), ([16, 8], "one of them wider"),
                                             ([8, 16], "only widens"), ([16, 10**6], "at most"),
                                             ([16, 8, 4], "new layers at least 8"), ([16, 8, 8.5], "whole numbers")])
def test_growing_refuses_widths_that_do_not_widen_or_deepen(run, tmp_path, hidden, message):
    with pytest.raises(CheckpointError, match=message):
        grow_checkpoint(run / "latest.pt", hidden, tmp_path / "bad.pt")
    assert not (tmp_path / "bad.pt").exists()


def test_the_grow_script_grows_in_place_and_keeps_the_original(run, tmp_path):
    path = tmp_path / "latest.pt"
    shutil.copy(run / "latest.pt", path)
    command = [sys.executable, "scripts/grow_network.py", str(path), "--hidden", "32", "8"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert load_network(path).config.widths == (32, 8)
    assert load_network(tmp_path / "latest.16-8.pt").config.widths == (16, 8)
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "grow_network:" in again.stderr


def test_an_overlapped_run_with_a_race_network_resumes_from_a_widened_checkpoint(race_run, tmp_path):
    copy = _copy_of(race_run, tmp_path)
    widen_checkpoint(copy / "latest.pt", 2, copy / "latest.pt")
    run_dir, checkpoint = resume_checkpoint(copy)
    # Self-play's copy of the weights widens with the net (resuming would otherwise fail on its shape).
    assert checkpoint.extra["play_weights"]["race_layers.0.weight"].shape == (16, 309)
    assert not checkpoint.extra["play_weights"]["layers.0.weight"][:, 259:].any()
    config = checkpoint.train_config()
    config.run.total_games = 24
    trainer = Trainer(config, run_dir, checkpoint)
    trainer.train(progress=False)
    assert trainer.games >= 24 and trainer.net.encoding_version == 2
