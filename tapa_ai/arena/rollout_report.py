"""A rollout's settings, and what its games come to: per start (a position, or a candidate move) probabilities, equity and 95% CIs.

:func:`summarise` turns :func:`tapa_ai.arena.rollout.play_rollout`'s arrays into :class:`RolloutStats`
(luck-adjusted or not, ranked with paired differences for a move analysis); :class:`RolloutResult` is what
``tapa-ai rollout`` and the engine's ``rollout`` command report.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence

import numpy as np

from ..errors import TapaError
from ..rules.outcomes import outcome_names, outcome_points
from ..rules.options import RuleOptions

DEFAULT_GAMES = 1296
BLOCK = 36
"""Games per rotation block: the 36 ordered rolls."""
MAX_ROTATE = 2


class RolloutError(TapaError, ValueError):
    """A rollout that cannot run as asked (bad settings, position, move or bot); the message says why."""


@dataclass(frozen=True)
class RolloutSettings:
    """How games are played and counted; see the module docstring."""

    games: int = DEFAULT_GAMES
    """Games per candidate (rounded up to whole blocks of 36 when rotating)."""
    truncate: int = 0
    """Stop each game after this many plies and take the evaluator's value (0: play to the end)."""
    bearoff: bool = False
    """Stop each game at the first bear-off position and take the database's value."""
    rotate: int = 1
    """Leading rolls balanced over every 36 games (0, 1 or 2)."""
    luck: bool = False
    """Luck-adjusted results (needs an evaluator). Off by default: at 0 plies it costs 10-20 times the games'
    time and narrows the CI by less than that many more games would (docs/rollout.md)."""
    seed: int = 1

    def check(self) -> "RolloutSettings":
        for name in ("games", "truncate", "rotate", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise RolloutError(f"{name}={value!r}: must be an integer")
        if self.games < 2:
            raise RolloutError(f"games={self.games}: roll out at least 2 games")
        if self.truncate < 0:
            raise RolloutError(f"truncate={self.truncate}: plies to play before the evaluator's value, 0 = none")
        if not 0 <= self.rotate <= MAX_ROTATE:
            raise RolloutError(f"rotate={self.rotate}: balance the first 0, 1 or 2 rolls")
        if self.seed < 0:
            raise RolloutError(f"seed={self.seed}: must be >= 0")
        if not isinstance(self.bearoff, bool) or not isinstance(self.luck, bool):
            raise RolloutError("bearoff and luck are true or false")
        return self

    @property
    def block(self) -> int:
        """Games per independent block of the CI: 36 when rotating, else 1."""
        return BLOCK if self.rotate else 1

    @property
    def total_games(self) -> int:
        return int(math.ceil(self.games / self.block) * self.block)


MIN_BLOCKS = 8
"""Fewer blocks than this: the CI is taken over single games (wider, never too narrow: the rotation only removes
variance) instead of over the block means, whose spread fewer blocks cannot estimate."""


def _mean_ci(values: np.ndarray, block: int) -> tuple[float, float]:
    """Mean of per-game ``values`` and the half-width of its 95% CI over blocks of ``block`` games."""
    if values.size // block < MIN_BLOCKS:
        block = 1
    means = values.reshape(-1, block).mean(axis=1)
    if means.size < 2:
        return float(values.mean()), math.inf
    return float(means.mean()), 1.96 * float(means.std(ddof=1)) / math.sqrt(means.size)


@dataclass
class RolloutStats:
    """What the games of one start (a position, or a candidate move) came to, from the root's view."""

    probabilities: dict[str, float]
    equity: float
    equity_ci95: tuple[float, float]
    games: int
    mean_plies: float
    move: Optional[str] = None
    difference: float = 0.0
    """Equity minus the best candidate's (0 for the best), from the same games."""
    difference_ci95: tuple[float, float] = (0.0, 0.0)
    raw_equity_ci95: Optional[tuple[float, float]] = None
    """The CI without the luck adjustment (same games), when luck was adjusted."""
    halves: Optional[tuple[float, float]] = None
    """The equity over the first :func:`half_games` games and over the rest: two independent estimates on the
    same dice as every other start's, whose differences give the rollout noise of any pair of starts."""

    def to_dict(self) -> dict:
        data = {"probabilities": self.probabilities, "equity": self.equity, "equity_ci95": list(self.equity_ci95),
                "games": self.games, "mean_plies": self.mean_plies}
        if self.move is not None:
            data.update(move=self.move, difference=self.difference, difference_ci95=list(self.difference_ci95))
        if self.raw_equity_ci95 is not None:
            data["unadjusted_equity_ci95"] = list(self.raw_equity_ci95)
        return data


@dataclass
class RolloutResult:
    """A position's rollout (one entry in ``stats``) or a move analysis (one per candidate, best first)."""

    variant: str
    bot: str
    evaluator: Optional[str]
    settings: RolloutSettings
    stats: list[RolloutStats]
    seconds: float
    workers: int
    dice: Optional[tuple[int, int]] = None
    position: dict = field(default_factory=dict)

    @property
    def games_per_s(self) -> float:
        return sum(s.games for s in self.stats) / max(self.seconds, 1e-9)

    def to_dict(self) -> dict:
        settings = asdict(self.settings)
        settings["games"] = self.settings.total_games
        common = {"variant": self.variant, "bot": self.bot, "evaluator": self.evaluator, "settings": settings,
                  "seconds": self.seconds, "games_per_s": self.games_per_s, "workers": self.workers,
                  "position": self.position}
        if self.dice is None:
            return {**self.stats[0].to_dict(), **common}
        return {"dice": list(self.dice), "moves": [s.to_dict() for s in self.stats], **common}

    def report(self) -> str:
        s = self.settings
        how = [f"{s.total_games} games a {'move' if self.dice else 'position'}", f"bot {self.bot}", f"seed {s.seed}"]
        if s.rotate:
            how.append(f"first {s.rotate} roll{'s' if s.rotate > 1 else ''} rotated")
        if s.luck and self.evaluator:
            how.append(f"luck-adjusted by {self.evaluator}")
        if s.truncate:
            how.append(f"truncated after {s.truncate} plies")
        if s.bearoff:
            how.append("stopped at the bear-off database")
        lines = [f"rollout ({self.variant}; {', '.join(how)})"]
        if self.dice is None:
            stats = self.stats[0]
            lines.append(f"  equity   {stats.equity:+.4f}  95% CI [{stats.equity_ci95[0]:+.4f}, "
                         f"{stats.equity_ci95[1]:+.4f}]")
            lines.append("  " + "  ".join(f"{name} {p:.4f}" for name, p in stats.probabilities.items()))
        else:
            lines.append(f"  dice {self.dice[0]}-{self.dice[1]}")
            width = max(len(s.move or "") for s in self.stats)
            for rank, stats in enumerate(self.stats, 1):
                diff = ("" if rank == 1 else f"  {stats.difference:+.4f} [{stats.difference_ci95[0]:+.4f}, "
                        f"{stats.difference_ci95[1]:+.4f}]")
                lines.append(f"  {rank:2d}. {stats.move:<{width}}  {stats.equity:+.4f} "
                             f"[{stats.equity_ci95[0]:+.4f}, {stats.equity_ci95[1]:+.4f}]{diff}")
        lines.append(f"  {self.seconds:.1f} s, {self.games_per_s:.0f} games/s, {self.workers} "
                     f"worker{'s' if self.workers > 1 else ''}")
        return "\n".join(lines)


def half_games(games: int, block: int) -> int:
    """The games of a rollout's first half: whole blocks, half of them (rounded down), or half the games when
    there are fewer than two blocks."""
    return (games // block // 2) * block if games >= 2 * block else games // 2


def summarise(rules: RuleOptions, outcomes: np.ndarray, luck: np.ndarray, plies: np.ndarray,
              settings: RolloutSettings, adjusted: bool, moves: Optional[Sequence[str]] = None
              ) -> list[RolloutStats]:
    """Per-start :class:`RolloutStats` from :func:`play_rollout`'s arrays; with ``moves``, ranked best first."""
    points = outcome_points(rules).astype(np.float64)
    names = outcome_names(rules)
    results = outcomes - luck if adjusted else outcomes
    equities = results @ points  # (C, G)
    raw = outcomes @ points
    block = settings.block
    cut = half_games(outcomes.shape[1], block)
    stats = []
    for c in range(outcomes.shape[0]):
        mean, half = _mean_ci(equities[c], block)
        raw_ci = None
        if adjusted:
            raw_mean, raw_half = _mean_ci(raw[c], block)
            raw_ci = (raw_mean - raw_half, raw_mean + raw_half)
        probabilities = dict(zip(names, (float(p) for p in results[c].mean(axis=0))))
        stats.append(RolloutStats(probabilities, mean, (mean - half, mean + half), int(outcomes.shape[1]),
                                  float(plies[c].mean()), move=None if moves is None else moves[c],
                                  raw_equity_ci95=raw_ci,
                                  halves=(float(equities[c, :cut].mean()), float(equities[c, cut:].mean()))
                                  if 0 < cut < outcomes.shape[1] else None))
    if moves is not None:
        best = int(np.argmax([s.equity for s in stats]))
        for c, entry in enumerate(stats):
            difference, half = _mean_ci(equities[c] - equities[best], block) if c != best else (0.0, 0.0)
            entry.difference = difference
            entry.difference_ci95 = (difference - half, difference + half)
        stats.sort(key=lambda s: -s.equity)
    return stats
