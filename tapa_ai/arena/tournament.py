"""Round-robin tournaments: every pair of bots plays a match, then Bradley–Terry Elo ratings.

:func:`run_tournament` plays one :func:`~tapa_ai.arena.match.run_match` per
pairing of distinct bots (pairing ``k`` of ``itertools.combinations`` gets the
seed ``seed * 1000 + k``, so the whole tournament depends on ``seed`` only)
and rates the bots:

* **Elo** — the Bradley–Terry maximum-likelihood fit (:func:`bradley_terry`)
  of all game results: a win counts 1 for the winner, a draw (and a game cut
  off unfinished at ``max_turns``) 1/2 to each side. Gammons and other
  multi-point results count as one win here; points are in the ``ppg``
  columns. Ratings are on the Elo scale, ``400 * log10(strength)``, so a
  400-point gap means 10:1 odds, and are **anchored so that the mean rating
  is 0**. A weak prior, **one virtual drawn game per pairing**, keeps the
  fit finite when a bot wins every game of a pairing (it pulls such a gap in
  a little, negligibly for long matches).
* **95% confidence intervals** — a bootstrap: each replicate resamples, with
  replacement, the duplicate pairs of games of every pairing separately
  (the two games of a pair, same dice and opposite seats, stay together),
  refits, and the intervals are the 2.5 / 97.5 percentiles of the refitted
  ratings. Replicates are drawn from a generator seeded from ``seed``.
* **ppg** — a bot's mean points per game over all its games, and in the
  cross table the row bot's points per game against the column bot with the
  match's 95% CI over duplicate pairs.

:class:`TournamentResult` writes ``tournament.json``, ``tournament.md``
(ranked table and cross table) and ``tournament.png`` (a ladder chart of the
ratings with their intervals; needs ``matplotlib``).
"""

from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ..bots.base import BotError
from ..rules.options import RuleOptions
from .duels import GameRecords
from .match import DEFAULT_CHUNK_PAIRS, MatchResult, run_match

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of Bradley–Terry strength (``400 * log10``)."""

DEFAULT_BOOTSTRAP = 1000
_BOOTSTRAP_STREAM = 0xB007  # second word of the bootstrap generator's seed, so it differs from the games'


# -- Bradley–Terry ------------------------------------------------------------------------------
def bradley_terry(wins: np.ndarray, prior_games: float = 1.0, tol: float = 1e-10,
                  max_iter: int = 200) -> np.ndarray:
    """Bradley–Terry maximum-likelihood ratings on the Elo scale, mean 0.

    ``wins[i, j]`` is what bot ``i`` scored against bot ``j``: its wins plus
    half its draws (the diagonal is ignored). The model gives ``i`` the
    chance ``1 / (1 + 10 ** ((elo[j] - elo[i]) / 400))`` to beat ``j``.
    ``prior_games`` virtual drawn games are added to every pair of distinct
    bots (``prior_games / 2`` to each side), which keeps the estimate finite
    when a bot won or lost every game against someone; with
    ``prior_games=0`` the plain MLE is returned, and a :class:`ValueError`
    raised where it does not exist (some group of bots never scored against
    the rest).

    Fitted by Newton's method on the log-likelihood, with step halving; the
    likelihood is concave, so it converges from 0 in a few iterations.
    Returns an (n,) float array; the mean is 0.
    """
    w = np.array(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise ValueError("wins must be finite and non-negative")
    if prior_games < 0:
        raise ValueError(f"prior_games={prior_games}: must be non-negative")
    n = w.shape[0]
    np.fill_diagonal(w, 0.0)
    if n < 2:
        return np.zeros(n)
    off = ~np.eye(n, dtype=bool)
    w[off] += prior_games / 2.0
    if prior_games == 0 and not _strongly_connected(w > 0):
        raise ValueError("the Bradley–Terry MLE is infinite: some bots never scored against the others "
                         "(use prior_games > 0)")
    games = w + w.T
    score = w.sum(axis=1)
    theta = np.zeros(n)

    def loglik(t: np.ndarray) -> float:
        diff = t[:, None] - t[None, :]
        return float(-(w * np.logaddexp(0.0, -diff)).sum())

    current = loglik(theta)
    ones = np.ones((n, n)) / n
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j]: i beats j
        grad = score - (games * p).sum(axis=1)
        if np.abs(grad).max() <= tol * max(1.0, score.sum()):
            break
        curvature = games * p * p.T
        hessian = np.diag(curvature.sum(axis=1)) - curvature  # minus the Hessian: PSD, null space = ones
        step = np.linalg.solve(hessian + ones, grad)  # ones keeps it invertible; the step sums to 0
        scale = 1.0
        while True:
            trial = theta + scale * step
            value = loglik(trial)
            if value >= current - 1e-12 * abs(current) or scale < 1e-8:
                break
            scale /= 2.0
        theta, current = trial, value
        if np.abs(scale * step).max() < 1e-13:
            break
    theta -= theta.mean()
    return theta * ELO_PER_NAT


def _strongly_connected(edges: np.ndarray) -> bool:
    """Whether every node reaches every other along ``edges[i, j]`` (i scored against j)."""
    n = edges.shape[0]

    def reach(adjacency: np.ndarray) -> bool:
        seen = np.zeros(n, dtype=bool)
        seen[0] = True
        frontier = seen.copy()
        while frontier.any():
            new = adjacency[frontier].any(axis=0) & ~seen
            seen |= new
            frontier = new
        return bool(seen.all())

    return reach(edges) and reach(edges.T)


def expected_score(elo_a: float, elo_b: float) -> float:
    """The chance that a bot rated ``elo_a`` beats one rated ``elo_b`` under the model."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


# -- scoring the games --------------------------------------------------------------------------
def game_scores(records: GameRecords) -> np.ndarray:
    """(G,) what A scored per game: 1 win, 0 loss, 1/2 draw (or unfinished)."""
    score = np.full(records.games, 0.5)
    score[records.points_for_a < 0] = 0.0
    score[records.a_won | (records.points_for_a > 0)] = 1.0
    return score


def _pair_scores(records: GameRecords) -> np.ndarray:
    """(pairs,) A's score summed over the two games of each duplicate pair (0 to 2)."""
    return game_scores(records).reshape(-1, 2).sum(axis=1)


def _json_ready(value):
    """Non-finite floats -> None (JSON has no infinity), numpy scalars -> Python, recursively."""
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


# -- results ------------------------------------------------------------------------------------
@dataclass
class TournamentResult:
    """A round robin's matches and the ratings computed from them (see the module docstring)."""

    specs: list[str]
    variant: str
    seed: int
    matches: list[MatchResult]
    """One per pairing, in ``itertools.combinations(range(len(specs)), 2)`` order; A = the earlier spec."""
    bootstrap: int = DEFAULT_BOOTSTRAP
    prior_games: float = 1.0
    seconds: float = 0.0
    pairings: list[tuple[int, int]] = field(init=False)
    """``(i, j)`` of each match, ``i < j`` (``specs[i]`` played as A)."""
    ratings: list[dict] = field(init=False)
    """Ranked, best first: rank, bot, elo, elo_ci95 [lo, hi], games, wins, draws, losses, win_rate, ppg."""
    elo: np.ndarray = field(init=False)
    """(n,) Elo of ``specs[i]`` (mean 0)."""
    elo_ci95: np.ndarray = field(init=False)
    """(n, 2) bootstrap 95% interval of each rating (NaN without bootstrap replicates)."""

    def __post_init__(self) -> None:
        n = len(self.specs)
        pairings = list(itertools.combinations(range(n), 2))
        if len(self.matches) != len(pairings):
            raise ValueError(f"{n} bots make {len(pairings)} pairings, got {len(self.matches)} matches")
        for (i, j), match in zip(pairings, self.matches):
            if (match.bot_a, match.bot_b) != (self.specs[i], self.specs[j]):
                raise ValueError(f"match {match.bot_a} vs {match.bot_b} is not pairing "
                                 f"{self.specs[i]} vs {self.specs[j]}")
        self.pairings = pairings
        pair_scores = [_pair_scores(match.records) for match in self.matches]
        self.elo = bradley_terry(self._wins(pair_scores), self.prior_games)
        self.elo_ci95 = self._bootstrap(pair_scores)
        self.ratings = self._ratings()

    # -- computation
    def _wins(self, pair_scores: Sequence[np.ndarray]) -> np.ndarray:
        n = len(self.specs)
        wins = np.zeros((n, n))
        for (i, j), scores in zip(self.pairings, pair_scores):
            wins[i, j] += scores.sum()
            wins[j, i] += 2.0 * scores.size - scores.sum()
        return wins

    def _bootstrap(self, pair_scores: Sequence[np.ndarray]) -> np.ndarray:
        n = len(self.specs)
        if self.bootstrap < 1:
            return np.full((n, 2), np.nan)
        rng = np.random.default_rng([self.seed, _BOOTSTRAP_STREAM])
        # (replicates, pairings): A's total score in each resampled pairing, all drawn up front.
        totals = np.stack([scores[rng.integers(0, scores.size, size=(self.bootstrap, scores.size))].sum(axis=1)
                           for scores in pair_scores], axis=1)
        played = np.array([2.0 * scores.size for scores in pair_scores])
        rows, cols = np.array(self.pairings).T
        samples = np.empty((self.bootstrap, n))
        wins = np.zeros((n, n))
        for b in range(self.bootstrap):
            wins[rows, cols] = totals[b]
            wins[cols, rows] = played - totals[b]
            samples[b] = bradley_terry(wins, self.prior_games)
        return np.percentile(samples, [2.5, 97.5], axis=0).T

    def _per_bot(self) -> list[dict]:
        stats = [{"games": 0, "wins": 0, "draws": 0, "losses": 0, "points": 0.0} for _ in self.specs]
        for (i, j), match in zip(self.pairings, self.matches):
            score = game_scores(match.records)
            points = match.records.points_for_a
            for bot, sign, won, lost in ((i, 1.0, score == 1.0, score == 0.0), (j, -1.0, score == 0.0, score == 1.0)):
                entry = stats[bot]
                entry["games"] += int(score.size)
                entry["wins"] += int(won.sum())
                entry["losses"] += int(lost.sum())
                entry["draws"] += int((score == 0.5).sum())
                entry["points"] += float(sign * points.sum())
        return stats

    def _ratings(self) -> list[dict]:
        stats = self._per_bot()
        rows = []
        for index in self.order:
            entry = stats[index]
            games = max(entry["games"], 1)
            rows.append({
                "bot": self.specs[index], "elo": float(self.elo[index]),
                "elo_ci95": [float(x) for x in self.elo_ci95[index]], "games": entry["games"],
                "wins": entry["wins"], "draws": entry["draws"], "losses": entry["losses"],
                "win_rate": entry["wins"] / games, "ppg": entry["points"] / games,
            })
        for rank, row in enumerate(rows, 1):
            row["rank"] = rank
        return rows

    # -- queries
    @property
    def order(self) -> list[int]:
        """Bot indices, best rating first (ties: the order of ``specs``)."""
        return sorted(range(len(self.specs)), key=lambda i: (-self.elo[i], i))

    @property
    def games_per_pairing(self) -> int:
        return self.matches[0].records.games

    def head_to_head(self, row: int, col: int) -> dict:
        """``specs[row]``'s results against ``specs[col]``: games, ppg, ppg_ci95, win_rate (row's wins)."""
        if row == col:
            raise ValueError("a bot plays no match against itself")
        k = self.pairings.index((min(row, col), max(row, col)))
        s = self.matches[k].summary
        if row < col:
            return {"games": s.games, "ppg": s.ppg, "ppg_ci95": list(s.ppg_ci95), "win_rate": s.win_rate}
        records = self.matches[k].records
        return {"games": s.games, "ppg": -s.ppg, "ppg_ci95": [-s.ppg_ci95[1], -s.ppg_ci95[0]],
                "win_rate": float((game_scores(records) == 0.0).mean())}

    # -- output
    def to_dict(self) -> dict:
        pairings = []
        for (i, j), match in zip(self.pairings, self.matches):
            entry = match.to_dict()
            entry.update(a_score=float(game_scores(match.records).mean()),
                         b_win_rate=self.head_to_head(j, i)["win_rate"])
            pairings.append(entry)
        return _json_ready({
            "variant": self.variant, "seed": self.seed, "bots": list(self.specs),
            "games_per_pairing": self.games_per_pairing, "pairs_per_pairing": self.games_per_pairing // 2,
            "rating": {"model": "Bradley-Terry maximum likelihood over game results (draw = half a win each)",
                       "scale": "Elo, 400*log10(strength); mean rating anchored at 0",
                       "prior": f"{self.prior_games:g} virtual drawn game(s) per pairing",
                       "ci95": f"percentile bootstrap, {self.bootstrap} replicates resampling duplicate "
                               "pairs within each pairing"},
            "bootstrap": self.bootstrap, "prior_games": self.prior_games, "seconds": self.seconds,
            "ratings": self.ratings, "pairings": pairings,
        })

    def markdown(self) -> str:
        def signed(x: float, digits: int) -> str:
            return "n/a" if not math.isfinite(x) else f"{x:+.{digits}f}"

        lines = [f"## Round robin: {len(self.specs)} bots, {self.variant}", "",
                 "| rank | bot | Elo (95% CI) | games | win % | ppg |", "|---:|---|---|---:|---:|---:|"]
        for row in self.ratings:
            lo, hi = row["elo_ci95"]
            ci = f" [{signed(lo, 0)}, {signed(hi, 0)}]" if math.isfinite(lo) else ""
            lines.append(f"| {row['rank']} | {_md(row['bot'])} | {signed(row['elo'], 0)}{ci} | {row['games']} | "
                         f"{row['win_rate']:.1%} | {signed(row['ppg'], 3)} |")
        prior = f"{self.prior_games:g} virtual drawn game{'s' if self.prior_games != 1 else ''} per pairing"
        lines += ["", f"Elo: Bradley–Terry maximum likelihood over game results (a draw counts half a win to "
                      f"each side), on the Elo scale (400·log10) and anchored so that the **mean rating is 0**; "
                      f"{prior} as a weak prior keeps a clean sweep finite. 95% CI: percentile bootstrap over "
                      f"{self.bootstrap} replicates resampling the duplicate pairs within each pairing. "
                      f"ppg: a bot's mean points per game over all its games.", ""]
        order = self.order
        lines += ["### Points per game, row bot against column bot (95% CI over duplicate pairs)", "",
                  "| | " + " | ".join(_md(self.specs[j]) for j in order) + " |",
                  "|---|" + "---|" * len(order)]
        for i in order:
            cells = []
            for j in order:
                if i == j:
                    cells.append("—")
                    continue
                h = self.head_to_head(i, j)
                lo, hi = h["ppg_ci95"]
                cells.append(f"{signed(h['ppg'], 2)} [{signed(lo, 2)}, {signed(hi, 2)}]")
            lines.append(f"| **{_md(self.specs[i])}** | " + " | ".join(cells) + " |")
        games = self.games_per_pairing
        lines += ["", f"{games} games per pairing ({games // 2} duplicate pairs: same dice, each bot moving first "
                      f"once), seed {self.seed}, variant {self.variant}.", ""]
        return "\n".join(lines)

    def plot(self, path: str | Path) -> Path:
        """A PNG ladder chart: each bot's Elo with its 95% CI as a horizontal error bar, best on top."""
        try:  # a bare Figure renders with Agg: no display, and pyplot's global backend is left alone
            from matplotlib.figure import Figure
        except ImportError:
            raise BotError("plotting a tournament needs matplotlib: pip install matplotlib "
                           "(the 'plot' extra); tournament.json and tournament.md need nothing") from None
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = self.ratings[::-1]  # matplotlib's y grows upwards: best last = on top
        y = np.arange(len(rows))
        elo = np.array([row["elo"] for row in rows])
        ci = np.array([row["elo_ci95"] for row in rows], dtype=np.float64)
        figure = Figure(figsize=(7.0, 1.2 + 0.5 * len(rows)))
        axes = figure.add_subplot()
        if np.isfinite(ci).all():
            xerr = np.stack([elo - ci[:, 0], ci[:, 1] - elo])
            axes.errorbar(elo, y, xerr=np.maximum(xerr, 0.0), fmt="o", color="tab:blue", ecolor="tab:gray",
                          capsize=4)
        else:
            axes.plot(elo, y, "o", color="tab:blue")
        axes.axvline(0.0, color="black", linewidth=0.8, linestyle=":")
        axes.set_yticks(y, [row["bot"] for row in rows])
        axes.set_ylim(-0.6, len(rows) - 0.4)
        axes.set_xlabel("Elo (Bradley–Terry, mean 0), 95% bootstrap CI")
        axes.set_title(f"{self.variant}: {self.games_per_pairing} games per pairing, seed {self.seed}")
        axes.grid(axis="x", alpha=0.3)
        figure.tight_layout()
        figure.savefig(path, format="png", dpi=120)
        return path

    def write(self, directory: str | Path) -> dict[str, Path]:
        """``tournament.json``, ``tournament.md`` and ``tournament.png`` in ``directory`` (the chart last:
        without matplotlib the first two are written before the error)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = {"json": directory / "tournament.json", "md": directory / "tournament.md",
                 "png": directory / "tournament.png"}
        paths["json"].write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        paths["md"].write_text(self.markdown())
        self.plot(paths["png"])
        return paths


# -- running ------------------------------------------------------------------------------------
def run_tournament(specs: Sequence[str], rules: RuleOptions, games: int, seed: int = 1, workers: int = 1,
                   progress: bool = True, bootstrap: int = DEFAULT_BOOTSTRAP, prior_games: float = 1.0,
                   chunk_pairs: int = DEFAULT_CHUNK_PAIRS, max_turns: int = 2000,
                   ray_address: Optional[str] = None) -> TournamentResult:
    """A round robin of ``specs`` at ``rules``: every pair of distinct bots plays ``games`` games.

    Pairing ``k`` (in ``itertools.combinations`` order, the earlier spec as
    A) is played by :func:`~tapa_ai.arena.match.run_match` with the seed
    ``seed * 1000 + k``; ``workers`` processes (or the Ray cluster at
    ``ray_address``) play each match. Raises
    :class:`BotError` for fewer than two bots, a repeated spec, or a spec
    that does not build (checked before any game is played).
    """
    from ..bots.spec import make_bot

    specs = [spec.strip() if isinstance(spec, str) else spec for spec in specs]
    if len(specs) < 2:
        raise BotError(f"a tournament needs at least 2 bots, got {len(specs)}: {specs}")
    repeated = sorted({spec for spec in specs if specs.count(spec) > 1})
    if repeated:
        raise BotError(f"bot spec{'s' if len(repeated) > 1 else ''} {', '.join(map(repr, repeated))} "
                       "listed more than once; give each bot once")
    if bootstrap < 0:
        raise BotError(f"bootstrap={bootstrap}: must be 0 or more")
    for spec in specs:  # every spec fails here, before hours of games, not at its first match
        make_bot(spec, rules).close()
    pairings = list(itertools.combinations(range(len(specs)), 2))
    matches = []
    start = time.perf_counter()
    for k, (i, j) in enumerate(pairings):
        matches.append(run_match(specs[i], specs[j], rules, games, seed=seed * 1000 + k, workers=workers,
                                 chunk_pairs=chunk_pairs, max_turns=max_turns, progress=progress,
                                 desc=f"[{k + 1}/{len(pairings)}] {specs[i]} vs {specs[j]}",
                                 ray_address=ray_address))
    return TournamentResult(specs, rules.name, seed, matches, bootstrap=bootstrap, prior_games=prior_games,
                            seconds=time.perf_counter() - start)
