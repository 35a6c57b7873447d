"""Calibrating the levels of play on a benchmark set (``scripts/calibrate_levels.py``, docs/levels.md).

The four weaker levels are the shipped net at 0 ply with noise; ``expert`` is
the net at 0 ply without noise, ``world-class`` at 2 plies. A noisy level's
noise is set so that it loses a target amount of equity per move **more than
the plain 0-ply net** (:data:`EXTRA_MP`), on the positions of the variant's
benchmark set:

1. every legal move of every position of the set is valued once by the net
   at 0 ply (what the level ranks by) and by a **judge**, the same net at
   ``judge_plies`` (default 1): :class:`DecisionTable`;
2. for a noise ``sigma`` and a noise seed, the level's move in each position
   is the best by 0-ply value plus ``sigma`` times the deterministic draw of
   its afterstate (:mod:`tapa_ai.bots.noise`, exactly as the bot plays with
   ``,noise_seed=``); its **extra loss** is the judge's value of the plain
   net's move minus the judge's value of the level's, averaged over the
   positions and :data:`CALIBRATION_SEEDS` seeds;
3. the extra loss grows with ``sigma``; bisection finds the ``sigma`` of each
   target.

The judge values every legal move, which rollouts cannot afford: it stands
in for them while the noise is searched. Each level's error on the set's
rollouts is measured afterwards (``tapa-ai benchmark score``, the moves the
set lacks rolled out), and that is the number docs/levels.md reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ..bots.levels import LEVEL_NAMES
from ..bots.noise import afterstate_keys, deterministic_draws
from ..bots.spec import make_bot
from ..movegen.batch import PositionBatch
from ..movegen.generate import generate
from ..notation.json_position import position_from_json
from .benchmark.file import read_set, resolve_set, set_rules

EXTRA_MP = {"beginner": 80.0, "casual": 40.0, "intermediate": 20.0, "advanced": 8.0}
"""Millipoints per move each noisy level loses more than the plain 0-ply net, by the judge."""
FIXED = {"expert": (0, 0.0), "world-class": (2, 0.0)}
"""The levels without noise: (plies, noise)."""
CALIBRATION_SEEDS = tuple(range(1, 17))
"""The noise seeds the extra loss is averaged over."""


@dataclass
class DecisionTable:
    """Every legal move of the set's positions: the 0-ply values, the judge's, and the afterstates' noise keys."""

    offsets: np.ndarray
    """(P + 1,) rows of position ``p`` are ``offsets[p]:offsets[p + 1]``."""
    values: np.ndarray
    """(N,) the net's 0-ply equity of each move."""
    judge: np.ndarray
    """(N,) the judge's equity of each move."""
    keys: np.ndarray
    """(N,) uint32 the afterstates' noise keys."""
    plain_rows: np.ndarray
    """(P,) the plain 0-ply net's move in each position (ties: the first)."""

    @property
    def positions(self) -> int:
        return int(self.offsets.size - 1)


def decision_table(set_name: str | Path, spec: Optional[str] = None, judge_plies: int = 1,
                   limit: Optional[int] = None) -> DecisionTable:
    """The :class:`DecisionTable` of a benchmark set (a shipped name or a file), valued by ``spec`` (default the
    set's variant's shipped net) and its judge at ``judge_plies``; ``limit``: the first positions only."""
    path, _ = resolve_set(set_name)
    bench = read_set(path)
    rules = set_rules(bench)
    records = bench.records[:limit] if limit else bench.records
    bot = make_bot(spec or f"net:{rules.name}", rules)
    judge = make_bot((spec or f"net:{rules.name}") + f"@{judge_plies}ply", rules)
    batch = PositionBatch.from_positions([position_from_json(record["position"]) for record in records])
    dice = np.array([record["dice"] for record in records], dtype=np.int8)
    afterstates = generate(batch, dice)
    _, _, values = bot.ranked(afterstates)
    judged = judge.evaluate(afterstates, plies=judge_plies) @ judge.points
    offsets = afterstates.offsets
    plain = np.array([start + int(np.argmax(values[start:stop]))
                      for start, stop in zip(offsets[:-1].tolist(), offsets[1:].tolist())], dtype=np.int64)
    return DecisionTable(offsets, values, judged, afterstate_keys(afterstates.positions), plain)


def choices(table: DecisionTable, noise: float, seed: int) -> np.ndarray:
    """(P,) the rows a 0-ply level with ``noise`` and a noise seed plays (the first of equal values)."""
    scored = table.values + noise * deterministic_draws(table.keys, seed) if noise else table.values
    return np.array([start + int(np.argmax(scored[start:stop]))
                     for start, stop in zip(table.offsets[:-1].tolist(), table.offsets[1:].tolist())],
                    dtype=np.int64)


def extra_loss_mp(table: DecisionTable, noise: float, seeds: Sequence[int] = CALIBRATION_SEEDS) -> float:
    """Millipoints per move the level with ``noise`` loses more than the plain 0-ply net, by the judge."""
    plain = table.judge[table.plain_rows]
    losses = [float((plain - table.judge[choices(table, noise, seed)]).mean()) for seed in seeds]
    return 1000.0 * float(np.mean(losses))


def calibrate_noise(table: DecisionTable, target_mp: float, seeds: Sequence[int] = CALIBRATION_SEEDS,
                    high: float = 2.0, tolerance_mp: float = 0.25, steps: int = 40) -> tuple[float, float]:
    """(noise, its extra loss in mp): the noise whose extra loss is ``target_mp`` within ``tolerance_mp`` (by
    bisection in [0, ``high``]); ValueError when even ``high`` does not reach it."""
    if extra_loss_mp(table, high, seeds) < target_mp:
        raise ValueError(f"noise {high} loses less than {target_mp} mp per move: no level can be that weak")
    low, top = 0.0, high
    middle, loss = high, extra_loss_mp(table, high, seeds)
    for _ in range(steps):
        middle = 0.5 * (low + top)
        loss = extra_loss_mp(table, middle, seeds)
        if abs(loss - target_mp) <= tolerance_mp:
            break
        low, top = (middle, top) if loss < target_mp else (low, middle)
    return round(middle, 5), loss


def calibrate_levels(table: DecisionTable, extra_mp: Optional[dict[str, float]] = None,
                     seeds: Sequence[int] = CALIBRATION_SEEDS) -> dict[str, dict]:
    """Every level of :data:`~tapa_ai.bots.levels.LEVEL_NAMES`, in order: plies, noise and, for the noisy ones,
    the target and the extra loss reached by the judge."""
    extra_mp = EXTRA_MP if extra_mp is None else extra_mp
    levels: dict[str, dict] = {}
    for name in LEVEL_NAMES:
        if name in FIXED:
            plies, noise = FIXED[name]
            levels[name] = {"plies": plies, "noise": noise}
        else:
            noise, loss = calibrate_noise(table, extra_mp[name], seeds)
            levels[name] = {"plies": 0, "noise": noise, "target_extra_mp": extra_mp[name],
                            "judge_extra_mp": round(loss, 2)}
    return levels
