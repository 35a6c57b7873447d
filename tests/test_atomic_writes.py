"""Kept distillation files and match chunks are written atomically, like checkpoints.

A write that fails half-way (the writer raises after part of the file is out)
leaves no partial file, no temporary file, and whatever was at the path before.
"""

import json
import os

import numpy as np
import pytest

from tapa_ai.arena import match
from tapa_ai.arena.duels import GameRecords
from tapa_ai.net.atomic_files import WriteError
from tapa_ai.net.checkpoint import save_checkpoint
from tapa_ai.net.encoding import ENCODING_NAME
from tapa_ai.net.model import EvaluatorNet
from tapa_ai.config import ModelConfig
from tapa_ai.rules.options import variant_rules
from tapa_ai.training import distill

REAL_SAVEZ = np.savez


def savez_failing_half_way(file, *args, **kwds):
    """Write some of the archive to ``file`` (a handle or a path), then fail as a full disk would."""
    if hasattr(file, "write"):
        file.write(b"PK\x03\x04 the first bytes of an archive")
    else:
        with open(file, "wb") as handle:
            handle.write(b"PK\x03\x04 the first bytes of an archive")
    raise OSError(28, "No space left on device")


def records(games: int, seed: int) -> GameRecords:
    rng = np.random.default_rng(seed)
    return GameRecords(points_for_a=rng.integers(-3, 4, games).astype(np.float64), a_won=rng.random(games) < 0.5,
                       kind=rng.integers(0, 3, games).astype(np.int8), turns=rng.integers(20, 80, games))


def chunk_fields(path):
    with np.load(path) as data:
        return {name: data[name].copy() for name in data.files}


# -- match chunks -------------------------------------------------------------------------------------
def test_a_match_chunk_is_fsynced_and_renamed_into_place(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    match._save_chunk(tmp_path, 3, records(8, seed=1), seconds=1.5)
    assert [p.name for p in tmp_path.iterdir()] == ["chunk_00003_4.npz"]
    assert synced, "the chunk was never fsynced"
    fields = chunk_fields(tmp_path / "chunk_00003_4.npz")
    assert np.array_equal(fields["points_for_a"], records(8, seed=1).points_for_a) and fields["seconds"] == 1.5


def test_a_failed_chunk_write_leaves_the_previous_chunk_and_no_partial_file(tmp_path, monkeypatch):
    match._save_chunk(tmp_path, 0, records(8, seed=1), seconds=2.0)
    before = (tmp_path / "chunk_00000_4.npz").read_bytes()
    monkeypatch.setattr(np, "savez", savez_failing_half_way)
    with pytest.raises(WriteError, match="chunk_00000_4.npz: No space left on device"):
        match._save_chunk(tmp_path, 0, records(8, seed=2), seconds=3.0)
    with pytest.raises(WriteError):
        match._save_chunk(tmp_path, 1, records(8, seed=3), seconds=3.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunk_00000_4.npz"]  # no chunk 1, no temporary file
    assert (tmp_path / "chunk_00000_4.npz").read_bytes() == before
    monkeypatch.setattr(np, "savez", REAL_SAVEZ)
    saved, seconds = match._load_partial(tmp_path, {"match": "x"}, [(0, 4, 1, 100), (1, 4, 1, 100)])
    assert list(saved) == [0] and seconds == 2.0  # a resumed match takes the old chunk and replays chunk 1


# -- kept distillation targets ---------------------------------------------------------------------------
def test_a_failed_target_write_leaves_no_partial_targets_and_the_kept_files_intact(tmp_path, monkeypatch):
    rules = variant_rules("tapa")
    net = EvaluatorNet(ModelConfig(layers=1, hidden=16), rules, seed=4)
    teacher = tmp_path / "teacher.pt"
    save_checkpoint(teacher, model_state=net.state_dict(), model_config=net.architecture(),
                    encoding=(ENCODING_NAME, net.encoding_version), rule_options=rules, config={}, games=10)
    out = tmp_path / "distill"
    options = dict(states=200, every=2, epochs=1, pairs=2, opponents=("random",), progress=False)
    first = distill.experiment(teacher, out, plies=(0,), **options)
    kept = {name: (out / name).read_bytes() for name in ("states.npy", "targets_0ply.npz", "report.json")}

    monkeypatch.setattr(np, "savez", savez_failing_half_way)
    with pytest.raises(WriteError, match="targets_1ply.npz: No space left on device"):
        distill.experiment(teacher, out, plies=(0, 1), **options)
    assert not (out / "targets_1ply.npz").exists()
    assert not [p.name for p in out.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]
    assert {name: (out / name).read_bytes() for name in kept} == kept

    monkeypatch.setattr(np, "savez", REAL_SAVEZ)
    again = distill.experiment(teacher, out, plies=(0, 1), **options)  # reuses the kept 0-ply targets
    assert again["students"]["0ply"]["target_cpu_seconds"] == first["students"]["0ply"]["target_cpu_seconds"]
    assert json.loads((out / "report.json").read_text()) == again
    with np.load(out / "targets_1ply.npz") as targets:
        assert len(targets["targets"]) == again["students"]["1ply"]["states"]

