"""``tapa-ai train``: start or resume a run, and end it with one clear line whatever happens.

What the command promises (docs/training.md, "Interrupting, resuming and locking"):

- bad input (a config, an override, a checkpoint, a busy run directory) is
  one line on stderr and exit code 2, checked before a run directory is made
  (a :class:`~tapa_ai.errors.TapaError`, printed by :func:`tapa_ai.cli.main`);
- Ctrl-C or SIGTERM while training: a checkpoint and the resume command,
  exit code 130 or 143 (:mod:`.stopping`); before training started: nothing
  to save, no empty run directory left;
- a checkpoint that cannot be written (disk full): one line naming the file,
  exit code 2, the checkpoints written before untouched;
- the run directory is locked while the command uses it
  (:class:`~tapa_ai.net.checkpoint_dir.RunLock`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from ..config import apply_overrides, load_config, resolve_config_path
from ..net.atomic_files import WriteError
from ..net.checkpoint import CheckpointError, load_checkpoint
from ..net.checkpoint_dir import RunLock
from .distributed import make_trainer
from .runs import (TrainingError, check_encoding_fits_rules, discard_if_empty, new_run_directory, resume_checkpoint,
                   run_directory_of)
from .stopping import Terminated, TrainingStopped, terminate_raises
from .trainer import Trainer


DEFAULT_TRAIN_CONFIG = "configs/quick.toml"


def add_parser(subparsers) -> None:
    """The ``train`` command on ``subparsers`` (``tapa-ai``'s)."""
    train = subparsers.add_parser("train", help="train an evaluator by self-play (the command run when none is "
                                  "given; default config: configs/quick.toml)")
    train.add_argument("--config", help=f"TOML config file (default {DEFAULT_TRAIN_CONFIG})")
    train.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                       help="override a config value, e.g. --set model.hidden=128 (repeatable)")
    train.add_argument("--resume", metavar="RUN", help="continue a run: its directory or a checkpoint file")
    train.add_argument("--workers", type=int, default=None, metavar="N",
                       help="self-play actor processes beside the learner (= --set distributed.workers=N; "
                       "1, the default, is the single-process trainer)")
    train.add_argument("--ray-address", metavar="ADDRESS", help="run the actors on a Ray cluster: auto, host:port, "
                       "or local (a new instance on this machine); needs pip install 'tapa-ai[ray]'")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    overrides = [*args.set, *([f"distributed.workers={args.workers}"] if args.workers is not None else [])]
    return train_command(config_file=args.config, resume=args.resume, overrides=overrides,
                         ray_address=args.ray_address, progress=not args.quiet)


def train_command(*, config_file: Optional[str], resume: Optional[str], overrides: Sequence[str] = (),
                  ray_address: Optional[str] = None, progress: bool = True,
                  default_config: str = DEFAULT_TRAIN_CONFIG) -> int:
    """Train a new run from ``config_file`` (else ``default_config``) or resume ``resume``; the exit code of a
    finished run or a stop (128 + the signal). Bad input raises a :class:`~tapa_ai.errors.TapaError` (the run
    directory it made removed, its lock released): ``tapa-ai`` prints it as one line, exit code 2."""
    def say(line: str) -> None:
        print(f"tapa-ai train: {line}", file=sys.stderr)

    run_dir, lock, new_run, trainer, started = None, None, False, None, False
    # Until the training loop takes them over (it checkpoints on either), Ctrl-C and SIGTERM end the
    # command at once: there is nothing to save yet.
    with terminate_raises():
        try:
            if resume:
                if config_file:
                    raise TrainingError("--resume continues a run with its own stored config; drop --config "
                                        "(use --set to change e.g. run.total_games)")
                if run_directory_of(resume).is_dir():
                    # Before reading anything: another trainer may be writing this directory.
                    lock = RunLock(run_directory_of(resume)).acquire()
                run_dir, checkpoint = resume_checkpoint(resume, report=say)
                config = apply_overrides(checkpoint.train_config(), overrides)
                print(f"resuming {run_dir} at {checkpoint.games} games")
                trainer = make_trainer(config, run_dir, checkpoint, ray_address=ray_address)
            else:
                config_path = resolve_config_path(config_file or default_config)
                config = load_config(config_path, overrides)
                check_encoding_fits_rules(config)
                run_dir = new_run_directory(config)  # checks the device and the name first
                new_run = True
                lock = RunLock(run_dir).acquire()
                print(f"run directory {run_dir} (config {config_path}); TensorBoard: tensorboard --logdir "
                      f"{config.checkpoint.directory}")
                trainer = make_trainer(config, run_dir, ray_address=ray_address)
            started = True
            trainer.train(progress=progress)
        except TrainingStopped as stopped:
            say(f"{stopped}; continue with: tapa-ai train --resume {run_dir}")
            return stopped.exit_code
        except WriteError as error:
            run = run_directory_of(resume) if run_dir is None and resume else run_dir  # None: its lock was not written
            raise TrainingError(f"{error}; the checkpoints written before are untouched: continue from the last one "
                                f"with tapa-ai train --resume {run} once it can be written (disk space, "
                                f"permissions)") from None
        except (KeyboardInterrupt, Terminated) as error:
            code = 143 if isinstance(error, Terminated) else 130
            how = "terminated (SIGTERM)" if code == 143 else "interrupted"
            if run_dir is None or not any(run_dir.glob("*.pt")):
                say(f"{how}: nothing was saved yet")
            elif started:  # the second Ctrl-C, while the loop was stopping (its checkpoint, the actors)
                say(f"{how} again: {_what_stands(run_dir, trainer)}: continue with: tapa-ai train --resume {run_dir}")
            else:
                say(f"{how} before training resumed: the run is as it was; continue with: "
                    f"tapa-ai train --resume {run_dir}")
            return code
        finally:
            if new_run and run_dir is not None and (trainer is None or trainer.games == 0):
                discard_if_empty(run_dir)  # nothing was written: leave no empty run directory behind
            if lock is not None:
                lock.release()
    print(f"done: {trainer.games} games, {trainer.steps} updates; checkpoints in {run_dir}")
    for record in trainer.evaluations[-len(config.eval.opponents):]:
        print(f"  vs {record.opponent}: {record.ppg:+.3f} points/game "
              f"[{record.ppg_ci95[0]:+.3f}, {record.ppg_ci95[1]:+.3f}], win {record.win_rate:.1%} "
              f"({record.games} games at {record.games_trained} games trained)")
    model = trainer.manager.latest_path
    print(f"next: measure it:  tapa-ai match net:{model} heuristic --games 1000\n"
          f"      play it:     tapa-ai play --bot net:{model}\n"
          f"      export it:   tapa-ai export {model} --format onnx --out {trainer.rules.name}.onnx\n"
          f"      train on:    tapa-ai train --resume {run_dir} --set run.total_games=N")
    return 0


def _what_stands(run_dir, trainer: Trainer) -> str:
    """After a second Ctrl-C: whether the stopping checkpoint was written, read from ``latest.pt``, not assumed.

    The second Ctrl-C can come before the stopping checkpoint is written or after (while the learner stops
    its actors or closes its logs); ``latest.pt`` holding the trainer's game count is the run as it stopped.
    """
    latest = run_dir / "latest.pt"
    try:
        games = load_checkpoint(latest).games
    except CheckpointError:
        return "quit before the stopping checkpoint was written; --resume takes the newest good checkpoint"
    if games == trainer.games:
        return f"the stopping checkpoint had been written ({latest}, {games} games)"
    return f"quit without the stopping checkpoint; the last one written stands ({latest}, {games} games)"
