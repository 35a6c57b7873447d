"""Run directories: the checks before one is made, a new one for a new run, the checkpoint a resumed run continues from."""

from __future__ import annotations

from pathlib import Path

import torch

from ..config import ConfigError, TrainConfig, run_name
from ..net.checkpoint import Checkpoint, check_network, load_checkpoint
from ..net.checkpoint_dir import CheckpointManager
from ..net.encoding import ENCODING_NAME, ENCODING_VERSIONS
from ..rules.options import RULES_VERSION


class TrainingError(RuntimeError):
    """A training run that cannot start or continue; the message says why."""


DEVICE_TYPES = ("cpu", "cuda", "mps")
"""The torch device types a run may train on (``run.device``)."""


def check_device(name: str) -> torch.device:
    """The torch device ``run.device`` names, or :class:`TrainingError` if it is not one this machine has."""
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError, TypeError):
        raise TrainingError(f"run.device = {name!r}: not a torch device; use cpu, cuda or cuda:N") from None
    if device.type not in DEVICE_TYPES:
        raise TrainingError(f"run.device = {name!r}: training runs on {', '.join(DEVICE_TYPES)}, not {device.type}")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
            raise TrainingError(f"run.device = {name!r}: no CUDA GPU is available (torch {torch.__version__}, "
                                f"{build}); use run.device=cpu")
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise TrainingError(f"run.device = {name!r}: this machine has {count} CUDA device(s), "
                                f"cuda:0 to cuda:{count - 1}")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise TrainingError(f"run.device = {name!r}: no Apple GPU (MPS) is available; use run.device=cpu")
    return device


def check_before_creating(config: TrainConfig) -> None:
    """What can be checked of a new run before its directory is made: the device and the run name.

    (The sizes are bounded by the config itself, :mod:`tapa_ai.config`.)
    """
    check_device(config.run.device)
    try:
        run_name(config)
    except ConfigError as error:
        raise TrainingError(str(error)) from None


def new_run_directory(config: TrainConfig) -> Path:
    """``<checkpoint.directory>/<variant>__<name>__<seed>__<time>``, created (after :func:`check_before_creating`)."""
    check_before_creating(config)
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
        except OSError as error:
            raise TrainingError(f"cannot make the run directory {path}: {error.strerror or error}") from None


def discard_if_empty(run_dir: Path) -> bool:
    """Remove a run directory that holds nothing (a run that failed before it wrote anything); True if removed."""
    try:
        run_dir.rmdir()  # only ever removes an empty directory
    except OSError:
        return False
    return True


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
