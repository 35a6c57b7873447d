"""Widening a checkpoint to a later encoding version (tapa_ai/net/widen.py, scripts/widen_encoding.py)."""

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
from tapa_ai.net.widen import widen_checkpoint
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
    import shutil

    copy = tmp_path / run.name
    shutil.copytree(run, copy)
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
    import shutil

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
