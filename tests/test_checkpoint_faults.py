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

    play_ply = SelfPlay.play_ply
    calls = []

    def interrupted(self, epsilon):
        calls.append(epsilon)
        if len(calls) == ply:
            os.kill(os.getpid(), signal.SIGTERM)
        return play_ply(self, epsilon)

    monkeypatch.setattr(SelfPlay, "play_ply", interrupted)


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
        notice, error = error.split("\n", 1)
        assert notice.startswith("stopping (SIGTERM): writing a checkpoint at ")
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
