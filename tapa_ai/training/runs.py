"""Run directories: the checks before one is made, a new one for a new run, the checkpoint a resumed run continues
from and what a resume may not change."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Optional

import torch

from ..config import ConfigError, TrainConfig, run_name
from ..errors import TapaError
from ..net.checkpoint import Checkpoint, CheckpointError, check_network, load_checkpoint
from ..net.checkpoint_dir import LOCK_NAME, CheckpointManager
from ..net.encoding import ENCODING_NAME, ENCODING_VERSIONS
from ..net.model import EvaluatorNet
from ..rules.options import RULES_VERSION, RuleOptions, RulesError, variant_rules


class TrainingError(TapaError, RuntimeError):
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
    """Remove a run directory that holds nothing but its lock file (a run that ended before it wrote anything).

    True if removed. Call it while holding the lock (or when no run can be there).
    """
    try:
        if [entry.name for entry in run_dir.iterdir()] == [LOCK_NAME]:
            (run_dir / LOCK_NAME).unlink()
        run_dir.rmdir()  # only ever removes an empty directory
    except OSError:
        return False
    return True


def run_directory_of(run: str | Path) -> Path:
    """The run directory that ``--resume RUN`` continues: RUN itself, or the directory of a checkpoint file."""
    path = Path(run)
    return path.parent if path.is_file() else path


def resume_checkpoint(run: str | Path, report: Optional[Callable[[str], None]] = None) -> tuple[Path, Checkpoint]:
    """The run directory and the checkpoint to resume: a run directory (its newest good one) or a checkpoint file.

    In a run directory, ``latest.pt`` is tried first, then ``step_<games>.pt``
    newest first: a checkpoint that cannot be used (damaged, non-finite
    weights, a network only...) is skipped and ``report`` (default: print to
    stderr) is given one line saying which was skipped and why, and which one
    the run resumes from.
    """
    path = Path(run)
    if path.is_dir():
        candidates = CheckpointManager(path, 1).newest_first()
        if not candidates:
            raise TrainingError(f"--resume {run}: no checkpoint in this run directory yet")
        run_dir = path
    elif path.is_file():
        candidates, run_dir = [path], path.parent
    else:
        raise TrainingError(f"--resume {run}: no such run directory or checkpoint file")
    failures: list[Exception] = []
    for candidate in candidates:
        try:
            checkpoint = _resumable(run, candidate)
        except (CheckpointError, TrainingError) as error:
            failures.append(error)
            continue
        if failures:
            more = f" ({len(failures) - 1} more skipped)" if len(failures) > 1 else ""
            (report or _print_to_stderr)(f"{failures[0]}{more}; resuming from {candidate}, the newest good checkpoint "
                                         f"({checkpoint.games} games)")
        return run_dir, checkpoint
    if len(failures) == 1:
        raise failures[0]
    raise TrainingError(f"--resume {run}: none of its {len(failures)} checkpoints can be used; the newest: "
                        f"{failures[0]}")


def _print_to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _resumable(run: str | Path, checkpoint_path: Path) -> Checkpoint:
    """The checkpoint at ``checkpoint_path`` if a run can resume from it; else CheckpointError or TrainingError."""
    checkpoint = load_checkpoint(checkpoint_path, expect_rules_version=RULES_VERSION)
    check_network(checkpoint)
    if checkpoint.encoding[0] != ENCODING_NAME or checkpoint.encoding[1] not in ENCODING_VERSIONS:
        raise TrainingError(f"--resume {run}: {checkpoint_path} was trained on encoding {checkpoint.encoding[0]!r} "
                            f"version {checkpoint.encoding[1]}; this program computes {ENCODING_NAME!r} "
                            f"versions {list(ENCODING_VERSIONS)}")
    if "selfplay" not in checkpoint.extra or checkpoint.optimizer_state is None:
        raise TrainingError(f"--resume {run}: {checkpoint_path} holds a network only (a slim copy, e.g. a kept "
                            "generation), not the optimizer and running games a resume needs")
    return checkpoint


def run_rules(config: TrainConfig) -> RuleOptions:
    """The rule set a run trains on: ``run.variant``'s preset with the options of ``run.rules`` changed (a custom
    rule set, docs/training.md); :class:`TrainingError`, one line, for an unknown option or value."""
    rules = variant_rules(config.run.variant)
    if not config.run.rules:
        return rules
    try:
        return rules.replace(**config.run.rules)
    except (RulesError, TypeError) as error:
        raise TrainingError(f"run.rules: {error}") from None


def check_same_network(config: TrainConfig, checkpoint: Checkpoint) -> None:
    """A resumed run keeps its network and what it was trained for: ``run.variant`` and ``run.rules`` must make the
    checkpoint's rule set and ``config.model`` its architecture (the input encoding's version included);
    :class:`TrainingError` if not. The trainer checks it before anything is built, written or pruned."""
    trained, wanted = checkpoint.rules(), run_rules(config)
    if wanted.name != trained.name:
        raise TrainingError(f"{checkpoint.path}: the checkpoint was trained for {trained.name}; a resume cannot change "
                            f"run.variant to {config.run.variant} (start a new run with --config to train "
                            f"{config.run.variant})")
    if wanted != trained:
        mine, theirs = trained.to_dict(), wanted.to_dict()
        changed = ", ".join(f"{key} {mine[key]!r} -> {theirs[key]!r}" for key in mine if mine[key] != theirs[key])
        raise TrainingError(f"{checkpoint.path}: the checkpoint was trained for {trained.name} with other rule "
                            f"options; a resume cannot change run.rules ({changed}; start a new run with --config "
                            "to train them)")
    try:
        stored = EvaluatorNet.architecture_config(checkpoint.model_config).to_dict()
    except (KeyError, TypeError, ValueError) as error:
        raise TrainingError(f"{checkpoint.path}: cannot resume from this checkpoint: {error}") from None
    wanted = config.model.to_dict()
    changed = [f"model.{key} {stored.get(key)!r} -> {value!r}" for key, value in wanted.items()
               if stored.get(key) != value]
    if changed:
        raise TrainingError(f"{checkpoint.path}: a resumed run keeps its network; these options differ from the "
                            f"checkpoint's: {', '.join(changed)} (start a new run with --config to change them)")


def check_encoding_fits_rules(config) -> None:
    """A :class:`TrainingError` unless ``model.encoding_version`` can encode ``run.variant``'s positions (the
    running games need version 4), before a run directory is made."""
    from ..net.encoding import check_rules_version

    try:
        check_rules_version(run_rules(config), config.model.encoding_version)
    except ValueError as error:
        raise TrainingError(f"model.encoding_version={config.model.encoding_version}: {error} "
                            "(--set model.encoding_version=4)") from None
