"""Learning curves: train for CPU-time marks, snapshot the net at each, then duel the snapshots.

Used by ``scripts/learning_curve.py``; results are recorded in docs/training.md.
The clock is :attr:`Trainer.cpu_seconds`: process CPU time (all threads)
spent playing and learning, evaluations and checkpoint writes excluded. It
does not depend on what else runs on the machine, unlike wall-clock time.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Optional, Sequence

from ..arena.duels import duel
from ..bots.search import NetBot
from ..bots.spec import make_bot
from ..config import apply_overrides, load_config
from ..net.checkpoint import load_network
from .trainer import Trainer, new_run_directory, resume_checkpoint
from .distributed import make_trainer

OPPONENTS = ("random", "pipcount", "heuristic")
"""Bot specs every snapshot plays (``pipcount`` is the ``runner`` bot)."""
CURVE_SEED = 20261130
"""Dice of every evaluation duel: the same deals for every snapshot."""


def snapshot_path(run_dir: Path, minutes: float) -> Path:
    return Path(run_dir) / f"curve_{minutes:g}min.pt"


def train_to_marks(config_path: Optional[str], overrides: Sequence[str], marks_minutes: Sequence[float],
                   resume: Optional[str] = None, progress: bool = True) -> tuple[Path, list[dict]]:
    """Train until each CPU-minute mark and copy the checkpoint there to ``curve_<m>min.pt``.

    A new run (``config_path``) or a continued one (``resume``, a run directory);
    marks already snapshotted are skipped, so a killed run is resumed by running
    again with ``resume``. Returns the run directory and one row per mark.
    """
    # Periodic evaluation is left to the caller: it would only cost time here.
    run_overrides = [*overrides, "run.total_games=1000000000"]
    if resume:
        run_dir, checkpoint = resume_checkpoint(resume)
        trainer = make_trainer(apply_overrides(checkpoint.train_config(), run_overrides), run_dir, checkpoint)
    else:
        config = load_config(config_path, run_overrides)
        run_dir = new_run_directory(config)
        trainer = make_trainer(config, run_dir)
    rows = []
    for minutes in sorted(marks_minutes):
        target = snapshot_path(run_dir, minutes)
        if not target.exists():
            if trainer.cpu_seconds >= minutes * 60:
                raise RuntimeError(f"{run_dir} is already past {minutes} CPU-minutes without a snapshot there")
            trainer.train(progress=progress, should_stop=lambda: trainer.cpu_seconds >= minutes * 60)
            # train() ends with a checkpoint of exactly this state.
            shutil.copyfile(trainer.manager.latest_path, target)
        rows.append({"minutes": minutes, "checkpoint": str(target)})
    return run_dir, rows


def train_to_games(config_path: str, overrides: Sequence[str], marks_games: Sequence[int], workers: int = 1,
                   ray_address: Optional[str] = None, progress: bool = True) -> tuple[Trainer, list[dict]]:
    """One run to the last of ``marks_games``, keeping the first checkpoint at or past each mark.

    ``workers`` > 1 or ``ray_address``: the distributed trainer (actors +
    learner). Checkpoints come every ``gcd(marks)`` games and are all kept, so
    the snapshots of runs that learn at different speeds compare at (about)
    equal games; their rows say the exact count. Returns the trainer and one
    row per mark.
    """
    import math

    from ..net.checkpoint_dir import CheckpointManager

    marks = sorted(int(mark) for mark in marks_games)
    every = math.gcd(*marks)
    config = load_config(config_path, [*overrides, f"run.total_games={marks[-1]}", f"checkpoint.every_games={every}",
                                       f"checkpoint.keep_last={marks[-1] // every + 2}",
                                       "eval.every_games=1000000000", f"distributed.workers={workers}"])
    trainer = make_trainer(config, new_run_directory(config), ray_address=ray_address)
    trainer.train(progress=progress)
    steps = CheckpointManager(trainer.run_dir, 1).steps()
    rows = []
    for mark in marks:
        games, path = next((games, path) for games, path in steps if games >= mark)
        rows.append({"mark": mark, "checkpoint": str(path)})
    return trainer, rows


def evaluate_snapshots(rows: list[dict], pairs: int, seed: int = CURVE_SEED, progress: bool = True,
                       opponents: Sequence[str] = OPPONENTS) -> list[dict]:
    """Duel every snapshot (0-ply, greedy) against the fixed bots, ``2 * pairs`` games each, paired dice."""
    from tqdm import tqdm

    from ..net.checkpoint import load_checkpoint

    for row in tqdm(rows, desc="evaluate snapshots", disable=not progress):
        net = load_network(row["checkpoint"])
        checkpoint = load_checkpoint(row["checkpoint"])
        row["games_trained"] = checkpoint.games
        row["cpu_seconds"] = checkpoint.extra.get("cpu_seconds")
        row["wall_seconds"] = checkpoint.extra.get("wall_seconds")
        for name in opponents:
            row[name] = duel(net.rules, NetBot(net), make_bot(name, net.rules), pairs, seed).summary()
    return rows


def plot_curves(curves: dict[str, list[dict]], path: Path) -> Path:
    """One PNG: points per game (95% CI bars) and win rate against CPU-minutes, per variant and bot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for variant, rows in curves.items():
        for name, style in (("random", "-o"), ("pipcount", "--s"), ("heuristic", ":^")):
            have = [row for row in rows if name in row]
            if not have:
                continue
            minutes = [row["minutes"] for row in have]
            ppg = [row[name]["ppg"] for row in have]
            errors = [[p - row[name]["ppg_ci95"][0] for p, row in zip(ppg, have)],
                      [row[name]["ppg_ci95"][1] - p for p, row in zip(ppg, have)]]
            axes[0].errorbar(minutes, ppg, yerr=errors, fmt=style, capsize=3, label=f"{variant} vs {name}")
            axes[1].plot(minutes, [100 * row[name]["win_rate"] for row in have], style,
                         label=f"{variant} vs {name}")
    axes[0].set(xlabel="training CPU-minutes", ylabel="points per game (95% CI)", title="Points per game")
    axes[1].set(xlabel="training CPU-minutes", ylabel="games won (%)", title="Win rate")
    for axis in axes:
        axis.axhline(0 if axis is axes[0] else 50, color="grey", linewidth=0.8)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_report(variant: str, rows: list[dict], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{variant}.json"
    path.write_text(json.dumps({"variant": variant, "seed": CURVE_SEED, "rows": rows}, indent=1) + "\n")
    return path
