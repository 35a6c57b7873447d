"""Run directories: a new one for a new run, and the checkpoint a resumed run continues from."""

from __future__ import annotations

from pathlib import Path

from ..config import TrainConfig, run_name
from ..net.checkpoint import Checkpoint, check_network, load_checkpoint
from ..net.checkpoint_dir import CheckpointManager
from ..net.encoding import ENCODING_NAME, ENCODING_VERSIONS
from ..rules.options import RULES_VERSION


class TrainingError(RuntimeError):
    """A training run that cannot start or continue; the message says why."""


def new_run_directory(config: TrainConfig) -> Path:
    """``<checkpoint.directory>/<variant>__<name>__<seed>__<time>``, created."""
    base = Path(config.checkpoint.directory) / run_name(config)
    path, suffix = base, 1
    while True:
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            # Two runs started in the same second with the same name and seed.
            suffix += 1
            path = base.with_name(f"{base.name}-{suffix}")


def resume_checkpoint(run: str | Path) -> tuple[Path, Checkpoint]:
    """The run directory and the checkpoint to resume: a run directory (its latest) or a checkpoint file."""
    path = Path(run)
    if path.is_dir():
        manager_path = CheckpointManager(path, 1).latest()
        if manager_path is None:
            raise TrainingError(f"--resume {run}: no checkpoint in this run directory yet")
        checkpoint_path, run_dir = manager_path, path
    elif path.is_file():
        checkpoint_path, run_dir = path, path.parent
    else:
        raise TrainingError(f"--resume {run}: no such run directory or checkpoint file")
    checkpoint = load_checkpoint(checkpoint_path, expect_rules_version=RULES_VERSION)
    check_network(checkpoint)
    if checkpoint.encoding[0] != ENCODING_NAME or checkpoint.encoding[1] not in ENCODING_VERSIONS:
        raise TrainingError(f"--resume {run}: {checkpoint_path} was trained on encoding {checkpoint.encoding[0]!r} "
                            f"version {checkpoint.encoding[1]}; this program computes {ENCODING_NAME!r} "
                            f"versions {list(ENCODING_VERSIONS)}")
    if "selfplay" not in checkpoint.extra or checkpoint.optimizer_state is None:
        raise TrainingError(f"--resume {run}: {checkpoint_path} holds a network only (a slim copy, e.g. a kept "
                            "generation), not the optimizer and running games a resume needs")
    return run_dir, checkpoint
