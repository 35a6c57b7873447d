"""Checkpoint faults found by fault injection (issue 49): a resume that would change what a network was
trained for, a disk that fills in the middle of a checkpoint write, and checkpoint fields that one command
refused and another accepted. Each is one line on stderr and exit code 2, and no work is lost."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tapa_ai.cli import main
from tapa_ai.net.checkpoint import load_checkpoint
from tapa_ai.net.checkpoint_dir import LOCK_NAME

SHIPPED = Path(__file__).resolve().parent.parent / "tapa_ai" / "models"


def hashes(directory: Path) -> dict[str, str]:
    """Every file of a run directory but its lock file (whose pid a resume rewrites), by SHA-256."""
    return {entry.name: hashlib.sha256(entry.read_bytes()).hexdigest()
            for entry in sorted(directory.iterdir()) if entry.name != LOCK_NAME}


def one_line(text: str) -> str:
    """The one line of ``text``, apart from the notice of a first run that compiles the numba kernels."""
    text = "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith("tapa-ai: compiling the numba kernels once"))
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text.strip()


# --- item 2: a resume keeps the variant (and the encoding) its network was trained for ---------------


def shipped_run(tmp_path: Path, variant: str) -> tuple[Path, int]:
    """A run directory holding a shipped model as latest.pt and its one numbered checkpoint; (dir, games)."""
    run = tmp_path / f"{variant}-run"
    run.mkdir()
    shutil.copyfile(SHIPPED / f"{variant}.pt", run / "latest.pt")
    games = load_checkpoint(run / "latest.pt").games
    shutil.copyfile(run / "latest.pt", run / f"step_{games}.pt")
    return run, games


@pytest.mark.parametrize("trained, setting, message", [
    ("plakoto", "run.variant=tapa", "the checkpoint was trained for plakoto; a resume cannot change run.variant to "
                                    "tapa"),
    ("tapa", "run.variant=backgammon", "the checkpoint was trained for tapa; a resume cannot change run.variant to "
                                       "backgammon"),
    ("tapa", "model.encoding_version=3", "model.encoding_version 2 -> 3"),
])
def test_a_resume_cannot_change_the_variant_or_encoding_and_leaves_the_run_as_it_was(
        tmp_path, capsys, trained, setting, message):
    run, games = shipped_run(tmp_path, trained)
    before = hashes(run)
    # Were it accepted, nothing would be left to play (total_games reached) and keep_last=1 would prune the
    # only numbered checkpoint of the trained variant.
    code = main(["train", "--quiet", "--resume", str(run), "--set", setting, "--set", f"run.total_games={games}",
                 "--set", "checkpoint.keep_last=1", "--set", "eval.games=2", "--set", "logging.tensorboard=false"])
    error = one_line(capsys.readouterr().err)
    assert code == 2
    assert message in error and str(run / "latest.pt") in error
    assert hashes(run) == before


# --- item 3: a disk that fills in the middle of a checkpoint write --------------------------------------

TINY = ["run.total_games=24", "selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64",
        "eval.every_games=12", "eval.games=8", "checkpoint.every_games=12", "logging.log_every_games=6",
        "logging.tensorboard=false"]


class FillingDisk:
    """A file whose disk fills after ``room`` bytes: the rest of a write is refused with ENOSPC, as a full disk
    refuses it (torch's zip writer, handed such a file, turns the OSError into a RuntimeError)."""

    def __init__(self, handle, room: int) -> None:
        self._handle = handle
        self._room = room

    def write(self, data) -> int:
        import errno
        import os

        data = memoryview(data).cast("B")
        if len(data) > self._room:
            self._handle.write(data[:self._room])
            self._room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room -= len(data)
        return self._handle.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return self._handle.__exit__(*exc_info)

    def __getattr__(self, name):
        return getattr(self._handle, name)


def fill_the_disk_at(monkeypatch, write: int, name: str = "latest.pt", room: int = 4096) -> None:
    """The ``write``-th checkpoint write to a file called ``name`` (1: the first) finds only ``room`` bytes free."""
    import os

    import tapa_ai.net.atomic_files as atomic_files

    real_fdopen = os.fdopen
    seen = []

    def fdopen(descriptor, *args, **kwargs):
        handle = real_fdopen(descriptor, *args, **kwargs)
        target = os.readlink(f"/proc/self/fd/{descriptor}")
        if Path(target).name.startswith(atomic_files.TEMP_PREFIX + name + "."):
            seen.append(target)
            if len(seen) == write:
                return FillingDisk(handle, room)
        return handle

    monkeypatch.setattr(atomic_files.os, "fdopen", fdopen)


def sigterm_at_ply(monkeypatch, ply: int) -> None:
    """SIGTERM to this process at the ``ply``-th ply of self-play: the training loop stops and checkpoints."""
    import os
    import signal

    from tapa_ai.training.selfplay import SelfPlay

    step = SelfPlay.step
    calls = []

    def interrupted(self, epsilon):
        calls.append(epsilon)
        if len(calls) == ply:
            os.kill(os.getpid(), signal.SIGTERM)
        return step(self, epsilon)

    monkeypatch.setattr(SelfPlay, "step", interrupted)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds the file being written through /proc")
@pytest.mark.parametrize("stopped", [False, True], ids=["periodic-checkpoint", "checkpoint-after-sigterm"])
def test_a_disk_full_in_the_middle_of_a_checkpoint_is_one_line_exit_2_and_keeps_the_last_checkpoint(
        tmp_path, capsys, monkeypatch, stopped):
    fill_the_disk_at(monkeypatch, write=2)  # latest.pt at 12 games is written; the next one is not
    if stopped:
        sigterm_at_ply(monkeypatch, 150)  # after the checkpoint at 12 games: the stopping checkpoint fills the disk
    settings = [*TINY, f"checkpoint.directory={tmp_path}"]
    code = main(["train", "--quiet", *sum((["--set", setting] for setting in settings), [])])
    error = capsys.readouterr().err
    if stopped:  # the loop says it is writing the stopping checkpoint, then the one line of the failure
        notice = "stopping (SIGTERM): writing a checkpoint at "
        assert error.count(notice) == 1
        error = "".join(line for line in error.splitlines(keepends=True) if not line.startswith(notice))
    error = one_line(error)
    run = next(tmp_path.glob("tapa__*"))
    assert code == 2
    assert error.startswith(f"tapa-ai train: cannot write {run / 'latest.pt'}: No space left on device; ")
    assert "the checkpoints written before are untouched" in error and f"tapa-ai train --resume {run}" in error
    assert load_checkpoint(run / "latest.pt").games == 12 and load_checkpoint(run / "step_12.pt").games == 12
    assert sorted(entry.name for entry in run.iterdir() if entry.name.endswith(".pt")) == [
        "best.pt", "latest.pt", "step_12.pt"]
    assert [entry.name for entry in run.iterdir() if entry.name not in (LOCK_NAME, "best.pt", "latest.pt",
                                                                          "step_12.pt")] == []  # no partial file


def test_a_resume_on_a_read_only_file_system_names_the_run_to_resume(tmp_path, capsys, monkeypatch):
    import errno
    import os

    import tapa_ai.net.checkpoint_dir as checkpoint_dir

    run, games = shipped_run(tmp_path, "tapa")
    before = hashes(run)
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):  # the first write of a resume: its lock file
        if Path(path).name == LOCK_NAME and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(checkpoint_dir.os, "open", read_only)
    code = main(["train", "--quiet", "--resume", str(run), "--set", f"run.total_games={games + 1}"])
    error = one_line(capsys.readouterr().err)
    assert code == 2
    assert f"cannot write {run / LOCK_NAME}: Read-only file system" in error
    assert error.endswith(f"tapa-ai train --resume {run} once it can be written (disk space, permissions)")
    assert hashes(run) == before


# --- item 7: one validation of a checkpoint's fields, the same for every command that reads one -----------


@pytest.fixture(scope="module")
def search_run(tmp_path_factory):
    """latest.pt of a tiny expert-iteration run (12 games): every field a resume uses, its replay buffer full."""
    from tapa_ai.config import load_config
    from tapa_ai.training.trainer import Trainer, new_run_directory

    config = load_config("configs/quick.toml", [
        *TINY, f"checkpoint.directory={tmp_path_factory.mktemp('runs')}", "run.total_games=12",
        "learning.targets=search", "learning.search_plies=0", "learning.search_fraction=1.0",
        "learning.replay_size=200"])
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    return trainer.run_dir / "latest.pt"


def changed(change):
    def write(source: Path, target: Path) -> None:
        import torch

        data = torch.load(source, weights_only=True)
        change(data)
        torch.save(data, target)
    return write


def truncated(source: Path, target: Path) -> None:
    data = source.read_bytes()
    target.write_bytes(data[:len(data) // 2])


def not_torch(source: Path, target: Path) -> None:
    target.write_text("[run]\nvariant = 'tapa'\n")


CORRUPTIONS = {
    "negative-games": (changed(lambda data: data["counters"].update(games=-5)),
                       "counters.games should be an integer >= 0, got -5"),
    "huge-replay-position": (changed(lambda data: data["extra"]["replay"].update(next=10 ** 12)),
                             "extra.replay.next should be an integer from 0 to 199, got 1000000000000"),
    "replay-rows-beyond-capacity": (changed(lambda data: data["extra"]["replay"].update(capacity=100)),
                                    "extra.replay.states should be at most 100 rows (its capacity), got 200"),
    "wrong-type": (changed(lambda data: data["counters"].update(steps="many")),
                   "counters.steps should be an integer, got str"),
    "wrong-config-type": (changed(lambda data: data["config"]["run"].update(seed="one")),
                          'run.seed = "one": expected an integer'),
    "rng-state-shape": (changed(lambda data: data["rng"]["numpy"]["state"].update(state=[1, 2])),
                        "rng.numpy should be the state of a numpy PCG64 generator"),
    "counter-disagrees-with-self-play": (changed(lambda data: data["extra"]["selfplay"]["stats"].update(games=7)),
                                         "extra.selfplay.stats.games should be counters.games (12), got 7"),
    "win-rate-out-of-range": (changed(lambda data: data["extra"]["evaluations"][0].update(win_rate=7)),
                              "extra.evaluations[0].win_rate should be a number from 0 to 1, got 7"),
    "missing-key": (changed(lambda data: data.pop("rng")), "is damaged: missing key(s) rng"),
    "truncated": (truncated, "not a torch zip archive (corrupt, truncated, or another kind of file)"),
    "not-a-torch-file": (not_torch, "not a torch zip archive (corrupt, truncated, or another kind of file)"),
}


def record_file(path: Path) -> Path:
    """A few random moves of a tapa game as a tapa-ai/games record, for ``tapa-ai analyse``."""
    import json
    import random

    from tapa_ai.arena.recorded_games import games_document
    from tapa_ai.flow import GameState

    rng = random.Random(1)
    state = GameState.new("tapa")
    while sum(event.action == "move" for event in state.history) < 4:
        state = state.roll(rng) if state.phase in ("opening", "roll") else state.play(rng.choice(state.moves))
    game = {"number": 1, "players": {"X": "X", "O": "O"}, "match_length": 0, "score": {"X": 0, "O": 0},
            "history": [event.to_dict() for event in state.history], "result": None}
    path.write_text(json.dumps(games_document(state.rules, {}, [game], "a test")))
    return path


READERS = {
    "match": lambda checkpoint, tmp_path: ["match", f"net:{checkpoint}", "random", "--games", "2", "--workers", "1",
                                           "--quiet"],
    "train-resume": lambda checkpoint, tmp_path: ["train", "--quiet", "--resume", str(checkpoint.parent),
                                                  "--set", "eval.games=2"],
    "export": lambda checkpoint, tmp_path: ["export", str(checkpoint), "--format", "npz", "--out",
                                            str(tmp_path / "model.npz")],
    "engine": lambda checkpoint, tmp_path: ["engine", "--bot", f"net:{checkpoint}"],
    "analyse": lambda checkpoint, tmp_path: ["analyse", str(record_file(tmp_path / "game.json")), "--bot",
                                             f"net:{checkpoint}", "--quiet"],
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_every_reader_refuses_a_damaged_checkpoint_with_the_same_line(
        search_run, tmp_path, capsys, monkeypatch, corruption, reader):
    import io
    import sys

    from tapa_ai.net.checkpoint import CheckpointError

    corrupt, fragment = CORRUPTIONS[corruption]
    run = tmp_path / "run"
    run.mkdir()
    checkpoint = run / "latest.pt"
    corrupt(search_run, checkpoint)
    before = hashes(run)
    with pytest.raises(CheckpointError) as refused:
        load_checkpoint(checkpoint)
    line = str(refused.value)
    assert "\n" not in line and fragment in line and str(checkpoint) in line

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))  # the engine's requests: none
    code = main(READERS[reader](checkpoint, tmp_path))
    error = one_line(capsys.readouterr().err)
    assert code == 2 and line in error
    assert hashes(run) == before and not (tmp_path / "model.npz").exists()


@pytest.mark.parametrize("rules", ["plakoto", "backgammon"])
def test_a_network_built_for_other_rules_than_its_checkpoint_says_is_refused(search_run, tmp_path, rules):
    from tapa_ai.net.checkpoint import CheckpointError, load_network
    from tapa_ai.rules.options import variant_rules

    path = tmp_path / "latest.pt"
    changed(lambda data: data.update(rule_options=variant_rules(rules).to_dict()))(search_run, path)
    with pytest.raises(CheckpointError) as refused:
        load_network(path)
    assert str(refused.value) == (f"{path} is damaged: its network was built for the tapa rules, its rule_options "
                                  f"are {rules}'s")
