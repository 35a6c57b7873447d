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
