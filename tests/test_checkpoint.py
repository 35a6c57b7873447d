"""Checkpoints: round trips with RNG states, safe loading, clear errors, atomic writes, keep-last pruning."""

from __future__ import annotations

import os
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
import torch

import tapa_ai.net.checkpoint as checkpoint_module
from tapa_ai.net.checkpoint_dir import CheckpointManager
from tapa_ai.net.checkpoint import (
    FORMAT_VERSION,
    Checkpoint,
    CheckpointError,
    load_checkpoint,
    make_payload,
    save_checkpoint,
    write_payload,
)
from tapa_ai.config import TrainConfig, apply_overrides
from tapa_ai.rules.options import RULES_VERSION, variant_rules

ENCODING = ("test-encoding", 3)
MODEL_CONFIG = {"inputs": 6, "layers": 1, "hidden": 5, "activation": "tanh", "outputs": 2}


def make_model(seed: int = 0) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    return model, optimizer


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, generator: torch.Generator) -> None:
    inputs = torch.randn(8, 6, generator=generator)
    loss = model(inputs).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def payload(model=None, optimizer=None, games: int = 10, **changes):
    if model is None:
        model, optimizer = make_model()
    arguments = dict(
        model_state=model.state_dict(),
        model_config=MODEL_CONFIG,
        encoding=ENCODING,
        rule_options=variant_rules("tapa"),
        config=TrainConfig(),
        games=games,
        steps=games * 2,
        decisions=games * 50,
        optimizer_state=None if optimizer is None else optimizer.state_dict(),
    )
    arguments.update(changes)
    return arguments


def save(path: Path, **changes) -> Path:
    return save_checkpoint(path, **payload(**changes))


def checkpoint_error(call, *args, **kwargs) -> str:
    with pytest.raises(CheckpointError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


# --- round trips ---------------------------------------------------------------


def test_round_trip_keeps_model_optimizer_counters_and_description(tmp_path):
    model, optimizer = make_model()
    generator = torch.Generator().manual_seed(1)
    train_step(model, optimizer, generator)
    config = apply_overrides(TrainConfig(), ["run.name=round-trip", "model.hidden=5"])
    path = save_checkpoint(
        tmp_path / "a.pt", **payload(model, optimizer, games=123, config=config, extra={"best_win_rate": 0.75})
    )

    loaded = load_checkpoint(path, expect_encoding=ENCODING, expect_rules_version=RULES_VERSION)

    assert isinstance(loaded, Checkpoint)
    assert (loaded.games, loaded.steps, loaded.decisions) == (123, 246, 6150)
    assert loaded.model_config == MODEL_CONFIG
    assert loaded.encoding == ENCODING
    assert loaded.rules_version == RULES_VERSION
    assert loaded.rules() == variant_rules("tapa")
    assert loaded.train_config() == config
    assert loaded.extra == {"best_win_rate": 0.75}
    assert loaded.format_version == FORMAT_VERSION
    assert loaded.path == path
    for name, tensor in model.state_dict().items():
        assert torch.equal(loaded.model_state[name], tensor)

    # Training on from the checkpoint matches training on without stopping.
    resumed, resumed_optimizer = make_model(seed=99)
    resumed.load_state_dict(loaded.model_state)
    resumed_optimizer.load_state_dict(loaded.optimizer_state)
    train_step(model, optimizer, torch.Generator().manual_seed(2))
    train_step(resumed, resumed_optimizer, torch.Generator().manual_seed(2))
    for original, copy in zip(model.parameters(), resumed.parameters()):
        assert torch.equal(original, copy)


def test_checkpoint_file_loads_with_torch_weights_only(tmp_path):
    path = save(tmp_path / "a.pt", numpy_generator=np.random.default_rng(1), python_random=random.Random(1))
    data = torch.load(path, weights_only=True)
    assert data["format"] == "tapa-ai-checkpoint"
    assert data["format_version"] == FORMAT_VERSION
    assert data["encoding"] == {"name": "test-encoding", "version": 3}
    assert data["rules_version"] == RULES_VERSION
    assert data["rule_options"] == variant_rules("tapa").to_dict()
    assert data["counters"] == {"games": 10, "steps": 20, "decisions": 500}


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_restored_generators_continue_with_identical_numbers(tmp_path, bit_generator):
    torch_generator = torch.Generator().manual_seed(5)
    numpy_generator = np.random.Generator(bit_generator(5))
    python_random = random.Random(5)
    for _ in range(3):  # move every generator away from its seed state
        torch.rand(7, generator=torch_generator), numpy_generator.random(7), python_random.random()
    python_random.gauss(0, 1)  # leaves a cached second normal in the state

    path = save(tmp_path / "rng.pt", torch_generator=torch_generator, numpy_generator=numpy_generator,
                python_random=python_random)
    expected = (torch.rand(5, generator=torch_generator), numpy_generator.random(5),
                [python_random.gauss(0, 1) for _ in range(3)])

    fresh_torch = torch.Generator().manual_seed(0)
    fresh_numpy = np.random.Generator(bit_generator(0))
    fresh_python = random.Random(0)
    load_checkpoint(path).restore_rng(torch_generator=fresh_torch, numpy_generator=fresh_numpy,
                                      python_random=fresh_python)
    assert torch.equal(torch.rand(5, generator=fresh_torch), expected[0])
    assert np.array_equal(fresh_numpy.random(5), expected[1])
    assert [fresh_python.gauss(0, 1) for _ in range(3)] == expected[2]


def test_global_torch_generator_is_saved_and_restored_by_default(tmp_path):
    torch.manual_seed(11)
    torch.rand(3)
    path = save(tmp_path / "global.pt")
    expected = torch.rand(4)
    torch.manual_seed(0)
    load_checkpoint(path).restore_rng()
    assert torch.equal(torch.rand(4), expected)


def test_restore_rng_leaves_generators_that_were_not_saved_alone(tmp_path):
    path = save(tmp_path / "a.pt", save_torch_rng=False)
    numpy_generator = np.random.default_rng(3)
    expected = np.random.default_rng(3).random(3)
    load_checkpoint(path).restore_rng(numpy_generator=numpy_generator)
    assert np.array_equal(numpy_generator.random(3), expected)


# --- refusing what cannot be stored safely -----------------------------------------


def test_values_that_are_not_plain_data_are_refused_before_writing(tmp_path):
    path = tmp_path / "a.pt"
    message = checkpoint_error(save, path, extra={"where": Path("/tmp")})
    assert "checkpoint['extra']['where']" in message
    assert "cannot be stored safely" in message
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"encoding": "tapa"}, "want a (name, version) pair"),
        ({"encoding": ("tapa", "1")}, "want a (name: str, version: int) pair"),
        ({"games": -1}, "games=-1: must be an integer >= 0"),
        ({"decisions": 1.5}, "decisions=1.5: must be an integer >= 0"),
    ],
)
def test_bad_arguments_are_refused(tmp_path, changes, expected):
    assert expected in checkpoint_error(save, tmp_path / "a.pt", **changes)


# --- loading what is not a good checkpoint --------------------------------------------


def test_missing_file_is_a_clear_error(tmp_path):
    message = checkpoint_error(load_checkpoint, tmp_path / "nothing.pt")
    assert "no checkpoint at" in message and "does not exist" in message
    assert "not a regular file" in checkpoint_error(load_checkpoint, tmp_path)


def test_random_bytes_are_not_a_checkpoint(tmp_path):
    path = tmp_path / "noise.pt"
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    message = checkpoint_error(load_checkpoint, path)
    assert f"{path} is not a tapa-ai checkpoint" in message


@pytest.mark.parametrize("keep", [0.0, 0.3, 0.9])
def test_truncated_checkpoint_is_not_a_checkpoint(tmp_path, keep):
    path = save(tmp_path / "a.pt")
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    assert "is not a tapa-ai checkpoint" in checkpoint_error(load_checkpoint, path)


def test_damaged_bytes_inside_the_archive_are_detected(tmp_path):
    model = torch.nn.Linear(200, 200)
    path = save(tmp_path / "a.pt", model=model)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2  # inside the weight tensor's record
    data[middle: middle + 64] = bytes(64)
    path.write_bytes(bytes(data))
    message = checkpoint_error(load_checkpoint, path)
    assert f"{path} is damaged: archive member" in message and "fails its checksum" in message


class RunsCodeWhenUnpickled:
    """A pickle payload that creates a marker file if anything ever unpickles it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_checkpoint_with_code_in_it_is_refused_without_running_the_code(tmp_path):
    marker = tmp_path / "code-ran"
    path = tmp_path / "evil.pt"
    data = make_payload(**payload())
    data["extra"] = {"surprise": RunsCodeWhenUnpickled(marker)}
    torch.save(data, path)  # what a malicious writer would do; save_checkpoint refuses it
    assert not marker.exists()

    message = checkpoint_error(load_checkpoint, path)
    assert "is not a safe tapa-ai checkpoint" in message
    assert "open" in message  # names the refused global
    assert not marker.exists()


def test_raw_pickle_with_code_in_it_is_refused_without_running_the_code(tmp_path):
    marker = tmp_path / "code-ran"
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"format": "tapa-ai-checkpoint", "x": RunsCodeWhenUnpickled(marker)}, protocol=2))
    assert "is not a tapa-ai checkpoint" in checkpoint_error(load_checkpoint, path)
    assert not marker.exists()


def test_torch_file_without_the_format_marker_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save(torch.nn.Linear(2, 2).state_dict(), path)
    assert "no format marker 'tapa-ai-checkpoint'" in checkpoint_error(load_checkpoint, path)


def test_other_format_version_is_refused(tmp_path):
    data = make_payload(**payload())
    data["format_version"] = FORMAT_VERSION + 1
    path = write_payload(tmp_path / "future.pt", data)
    message = checkpoint_error(load_checkpoint, path)
    assert f"format version {FORMAT_VERSION + 1}" in message
    assert f"reads format version {FORMAT_VERSION}" in message


def test_missing_keys_are_named(tmp_path):
    data = make_payload(**payload())
    del data["rng"], data["counters"]
    path = write_payload(tmp_path / "partial.pt", data)
    assert "missing key(s) counters, rng" in checkpoint_error(load_checkpoint, path)


def test_wrongly_typed_entry_is_named(tmp_path):
    data = make_payload(**payload())
    data["counters"]["games"] = "many"
    path = write_payload(tmp_path / "bad.pt", data)
    assert "counters.games should be an integer, got str" in checkpoint_error(load_checkpoint, path)


def test_encoding_mismatch_names_both_encodings(tmp_path):
    path = save(tmp_path / "a.pt")
    message = checkpoint_error(load_checkpoint, path, expect_encoding=("test-encoding", 4))
    assert "encoding 'test-encoding' version 3" in message
    assert "'test-encoding' version 4" in message
    assert "'other'" in checkpoint_error(load_checkpoint, path, expect_encoding=("other", 3))


def test_rules_version_mismatch_names_both_versions(tmp_path):
    path = save(tmp_path / "a.pt")
    message = checkpoint_error(load_checkpoint, path, expect_rules_version=RULES_VERSION + 1)
    assert f"rules version {RULES_VERSION}," in message
    assert f"rules version {RULES_VERSION + 1}" in message


def test_stored_config_is_checked_when_read(tmp_path):
    path = save(tmp_path / "a.pt", config={"model": {"width": 3}})
    message = checkpoint_error(load_checkpoint, path)  # by every reader, not only one that trains
    assert "unknown key 'width' in section [model]" in message


# --- atomic writes --------------------------------------------------------------


def failing_save(obj, handle):
    handle.write(b"PK\x03\x04 half a checkpoint")
    raise OSError("disk full")


def test_failed_write_keeps_the_old_file_and_leaves_no_partial_file(tmp_path, monkeypatch):
    path = save(tmp_path / "a.pt", games=1)
    before = path.read_bytes()
    monkeypatch.setattr(checkpoint_module.torch, "save", failing_save)

    with pytest.raises(OSError, match="disk full"):
        save(path, games=2)

    assert path.read_bytes() == before
    assert load_checkpoint(path).games == 1
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["a.pt"]


def test_failed_first_write_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint_module.torch, "save", failing_save)
    with pytest.raises(OSError):
        save(tmp_path / "runs" / "a.pt")
    assert list((tmp_path / "runs").iterdir()) == []


def test_interrupted_write_leaves_no_partial_file(tmp_path, monkeypatch):
    def interrupted_save(obj, handle):
        handle.write(b"PK\x03\x04")
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_module.torch, "save", interrupted_save)
    with pytest.raises(KeyboardInterrupt):
        save(tmp_path / "a.pt")
    assert list(tmp_path.iterdir()) == []


# --- the checkpoint directory of a run ----------------------------------------------


def test_manager_keeps_the_last_k_plus_latest_and_best(tmp_path):
    manager = CheckpointManager(tmp_path / "ckpt", keep_last=2)
    for games in (100, 200, 300, 400, 500):
        manager.save(best=games == 200, **payload(games=games))

    assert [games for games, _ in manager.steps()] == [400, 500]
    names = sorted(entry.name for entry in manager.directory.iterdir())
    assert names == ["best.pt", "latest.pt", "step_400.pt", "step_500.pt"]
    assert load_checkpoint(manager.best_path).games == 200
    assert load_checkpoint(manager.latest_path).games == 500
    assert manager.latest() == manager.latest_path
    assert manager.load_latest(expect_encoding=ENCODING).games == 500


def test_manager_orders_numbered_checkpoints_by_games_not_by_name(tmp_path):
    manager = CheckpointManager(tmp_path, keep_last=3)
    for games in (9, 10, 100, 11):
        manager.save(**payload(games=games))
    assert [games for games, _ in manager.steps()] == [10, 11, 100]


def test_manager_falls_back_to_the_newest_numbered_checkpoint(tmp_path):
    manager = CheckpointManager(tmp_path, keep_last=3)
    assert manager.latest() is None and manager.load_latest() is None
    manager.save(**payload(games=5))
    manager.save(**payload(games=15))
    manager.latest_path.unlink()
    assert manager.latest() == manager.step_path(15)


def test_manager_save_best_and_mark_best(tmp_path):
    manager = CheckpointManager(tmp_path, keep_last=1)
    manager.save_best(**payload(games=7))
    assert load_checkpoint(manager.best_path).games == 7
    step = manager.save(**payload(games=8))
    manager.mark_best(step)
    assert load_checkpoint(manager.best_path).games == 8


def test_manager_removes_temporaries_left_by_a_killed_writer(tmp_path):
    stale = tmp_path / ".tapa-ai-checkpoint-latest.pt.abc123.tmp"
    stale.write_bytes(b"half")
    other = tmp_path / "notes.tmp"
    other.write_bytes(b"mine")
    CheckpointManager(tmp_path, keep_last=1)
    assert not stale.exists()
    assert other.exists()


@pytest.mark.parametrize("keep_last", [0, -1, True, 1.5])
def test_manager_needs_a_positive_keep_last(tmp_path, keep_last):
    assert "keep_last" in checkpoint_error(CheckpointManager, tmp_path, keep_last)


def test_checkpoint_writes_leave_no_temporary_files(tmp_path):
    manager = CheckpointManager(tmp_path, keep_last=2)
    for games in range(1, 5):
        manager.save(**payload(games=games))
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]
