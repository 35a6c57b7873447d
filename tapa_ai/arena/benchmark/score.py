"""Scoring bots on a benchmark set: the equity they lose per move against rollouts (``tapa-ai benchmark score``).

Each bot chooses a move in every position of the set (batches of :data:`CHOOSE_CHUNK` positions, in worker
processes, its random choices seeded ``[seed, chunk]``). Its **loss** in a position is the best equity among
the moves rolled out when the set was built minus the equity of the move it chose, in **millipoints**
(1/1000 of a point of cubeless equity, the mover's). A chosen move the set lacks is rolled out on the spot
with the set's rollout settings and the position's seed (so on the same dice as the set's candidates) and
kept in the file (``added_by`` names who played it; a partial set, or a shipped one, is not rewritten: its
new moves are rated for this run only); with ``rollout=False`` it is left **unrated** instead and counted apart. A move added
this way that rolls out better than the set's best gets a negative loss: the best stays the build's, so a
bot's score does not depend on which bots were scored before.

Per bot: the mean loss with a 95% bootstrap CI (positions resampled within their phase, as the set was
drawn: stratified), the mean per phase, the mean weighted by how often each phase came up in the sampling
games (``weighted``), the share of **blunders** (a loss above ``blunder_mp``), of moves as good as the set's
best, and of unrated moves. Per pair of bots: the difference of their losses over the positions both have
rated, with its bootstrap CI (the best's own noise cancels), and how many positions give a CI of +-1 mp,
and the part of the differences' spread that is the rollouts' noise (``noise_sd_mp``, ``noise_share``): in a
position where the two chose different moves, the variance of their equities' difference, estimated from
the two halves of the rollout games where the set's records carry them (``halves``: the difference on each
half, on the same dice; unbiased), else from the two moves' CIs to the set's best added as if independent
(they share the best's dice, so this leans high); zero where they chose the same move.
``noise_from_halves`` is the share of those positions estimated from halves. What is left is the spread of
the positions themselves, which no rollout length removes (:mod:`tapa_ai.arena.benchmark.study` trades the
two against the cost).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ...bots.base import BotError
from ...movegen.batch import PositionBatch
from ...movegen.generate import generate
from ...notation.json_position import position_from_json, position_to_json
from ...rules.options import RuleOptions
from .file import (BenchmarkError, BenchmarkSet, afterstate_key, best_equity, candidate_map, check_integers,
                             read_set, resolve_set, set_rules, summary_line, write_set)

CHOOSE_CHUNK = 8
"""Positions per batch a bot chooses in (and per seeded chunk of its random choices)."""
DEFAULT_BLUNDER_MP = 80.0
DEFAULT_BOOTSTRAP = 2000
ALL_PAIRS_UP_TO = 4
"""The table shows every pair of up to this many bots, else each bot against the next."""
SAVE_EVERY_S = 30.0
"""Moves rolled out while scoring are written to the file at most this often (and at the end)."""


def _choose_job(job: tuple) -> tuple[int, dict]:
    """A chunk of positions chosen by the worker's bot ``a``: (key, move text, position after) of each."""
    from ..workers import WORKER

    index, entries, seed = job
    start = time.process_time()
    positions = [position_from_json(entry["position"]) for entry in entries]
    dice = np.array([entry["dice"] for entry in entries], dtype=np.int8)
    afterstates = generate(PositionBatch.from_positions(positions), dice)
    rows = WORKER["a"].choose(afterstates, np.random.default_rng([seed, index]))
    picks = []
    for row in np.asarray(rows, dtype=np.int64).tolist():
        after = afterstates.position(row)
        picks.append((afterstate_key(after), afterstates.move_text(row), position_to_json(after)))
    return index, {"picks": picks, "cpu_seconds": time.process_time() - start}


def _choices(bench: BenchmarkSet, rules: RuleOptions, spec: str, seed: int, workers: int,
             ray_address: Optional[str], progress: bool) -> tuple[list[tuple], float]:
    """(key, move text, position after) the bot ``spec`` plays in every position, and its CPU-seconds."""
    from tqdm import tqdm

    from ..workers import play_jobs

    records = bench.records
    jobs = [(i, [{"position": r["position"], "dice": r["dice"]} for r in records[start:start + CHOOSE_CHUNK]], seed)
            for i, start in enumerate(range(0, len(records), CHOOSE_CHUNK))]
    parts: dict[int, dict] = {}
    bar = tqdm(total=len(records), unit="position", desc=spec, disable=not progress, dynamic_ncols=True)

    def done(index: int, part: dict) -> None:
        parts[index] = part
        bar.update(len(part["picks"]))

    try:
        play_jobs(_choose_job, spec, "random", rules, jobs, workers, ray_address, done)
    finally:
        bar.close()
    picks = [pick for i in range(len(jobs)) for pick in parts[i]["picks"]]
    return picks, sum(part["cpu_seconds"] for part in parts.values())


def _rate_extras(bench: BenchmarkSet, rules: RuleOptions, extras: dict[int, dict], workers: int,
                 ray_address: Optional[str], progress: bool, keep: bool) -> None:
    """Roll out the moves of ``extras`` ({position: {key: [text, after, bots]}}) and add them to the records,
    and with ``keep`` to the file."""
    from tqdm import tqdm

    from .build import model_hashes, position_job
    from ..workers import play_jobs

    header = bench.header
    rollout = header["settings"]["rollout"]
    specs = [rollout["bot"], *([rollout["evaluator"]] if rollout.get("evaluator") else [])]
    now = model_hashes(specs)
    for spec in specs:
        then = header["models"].get(spec, {}).get("sha256")
        if now.get(spec, {}).get("sha256") != then:
            raise BenchmarkError(f"{bench.path}: {sum(len(e) for e in extras.values())} chosen moves are not in the "
                                 f"set, and its rollout bot {spec} is not the file it was built with (sha256 "
                                 f"{str(then)[:12]}, now {str(now.get(spec, {}).get('sha256'))[:12]}): give "
                                 f"--no-rollout to report them unrated")
    task = {"kind": "extra", "evaluator": rollout.get("evaluator"), "rollout": rollout}
    jobs = [(i, {"position": bench.records[i]["position"], "dice": bench.records[i]["dice"],
                 "moves": [(text, after) for text, after, _ in moves.values()]}, bench.records[i]["seed"], task)
            for i, moves in sorted(extras.items())]
    bar = tqdm(total=len(jobs), unit="position", desc="rating new moves", disable=not progress, dynamic_ncols=True)
    last = [time.perf_counter()]
    keep = [keep]

    def save() -> None:
        try:
            write_set(bench.path, header, bench.records)
        except BenchmarkError as error:  # a read-only set (installed): the new moves serve this run only
            print(f"tapa-ai benchmark: the new moves are rated for this run only: {error}", file=sys.stderr)
            keep[0] = False
        last[0] = time.perf_counter()

    def done(index: int, part: dict) -> None:
        record = bench.records[index]
        for candidate in part["candidates"]:
            candidate["added_by"] = sorted(extras[index][candidate["key"]][2])
            record["candidates"].append(candidate)
        record["candidates"].sort(key=lambda c: -c["equity"])
        bar.update(1)
        if keep[0] and time.perf_counter() - last[0] > SAVE_EVERY_S:
            save()

    try:
        play_jobs(position_job, rollout["bot"], rollout.get("evaluator") or rollout["bot"], rules, jobs, workers,
                   ray_address, done)
    finally:
        bar.close()
        if keep[0]:
            save()


# -- statistics ----------------------------------------------------------------------------------------
def _percentile_ci(replicates: np.ndarray) -> list[float]:
    if replicates.size == 0 or not np.isfinite(replicates).all():
        return [math.nan, math.nan]
    low, high = np.percentile(replicates, [2.5, 97.5])
    return [float(low), float(high)]


def bootstrap(values: np.ndarray, strata: np.ndarray, replicates: int, seed: int,
              weights: Optional[dict] = None) -> dict:
    """Stratified bootstrap of the mean of ``values``: (B,) replicate means overall, per stratum, and
    weighted by ``weights`` (stratum -> share) over the strata present."""
    rng = np.random.default_rng(seed)
    total = np.zeros(replicates)
    per: dict[str, np.ndarray] = {}
    for name in sorted(set(strata.tolist())):
        members = values[strata == name]
        draws = members[rng.integers(0, members.size, size=(replicates, members.size))].sum(axis=1)
        total += draws
        per[name] = draws / members.size
    result = {"mean": total / max(values.size, 1), "phases": per}
    if weights:
        present = {name: weights.get(name, 0.0) for name in per if weights.get(name, 0.0) > 0}
        norm = sum(present.values())
        result["weighted"] = sum(share * per[name] for name, share in present.items()) / norm if norm else None
    return result


@dataclass
class BotScore:
    bot: str
    losses: np.ndarray
    """(N,) millipoints lost per position of the set (NaN: unrated)."""
    cpu_seconds: float
    keys: Optional[list] = None
    """The afterstate key of the move chosen in each position (None: not known, no noise is estimated)."""
    noise: Optional[np.ndarray] = None
    """(N,) the rollout variance (mp squared) of each chosen move's difference to the set's best."""
    halves: Optional[np.ndarray] = None
    """(N, 3) the chosen move's equity on each half of its rollout games and the factor that turns the squared
    difference of two halves into the variance of the whole mean (NaN where the set has no halves)."""
    stats: dict = field(default_factory=dict)


@dataclass
class ScoreResult:
    bench: BenchmarkSet
    bots: list[BotScore]
    blunder_mp: float
    pairs: list[dict]
    added: int
    unrated_kept: bool
    candidates_cpu: Optional[dict] = None
    """{seconds, from}: the CPU-seconds a position's candidates took (the build's cost that the rollouts'
    length does not change), and whether from the records or timed on a sample of them."""

    def to_dict(self) -> dict:
        """The result as JSON data (NaN, where nothing is rated, as null)."""
        header = self.bench.header
        return _json_safe({"set": str(self.bench.path), "variant": header["variant"], "positions": len(self.bench.records),
                "planned": self.bench.planned, "every": self.bench.every, "rollout": header["settings"].get("rollout"),
                "models": {k: v.get("label") for k, v in header["models"].items()}, "blunder_mp": self.blunder_mp,
                "cpu_seconds_per_position": float(np.mean([r.get("cpu_seconds", 0.0) for r in self.bench.records])),
                "decisions_per_side_per_game": _decisions_per_side(header),
                "candidates_cpu_seconds_per_position": (self.candidates_cpu or {}).get("seconds"),
                "candidates_cpu_seconds_from": (self.candidates_cpu or {}).get("from"),
                "moves_added": self.added, "bots": [{"bot": b.bot, **b.stats} for b in self.bots],
                "pairs": self.pairs})

    def report(self) -> str:
        phases = sorted({p for b in self.bots for p in b.stats["by_phase"]},
                        key=lambda p: ("contact", "pins", "mother", "race", "bearoff").index(p)
                        if p in ("contact", "pins", "mother", "race", "bearoff") else 9)
        lines = [summary_line(self.bench, f"{self.added} new moves rolled out" if self.added else None),
                 "loss in millipoints a move (1/1000 point of cubeless equity), 95% bootstrap CI; phases: mean",
                 ""]
        width = max(len(b.bot) for b in self.bots)
        head = f"{'bot':<{width}}  {'loss [95% CI]':<22} {'weighted':>8}  " + "".join(f"{p:>8}" for p in phases) + \
            f"  {'blunders':>8} {'best':>6} {'unrated':>7} {'CPU-s/move':>10}"
        lines += [head, "-" * len(head)]
        for b in self.bots:
            s = b.stats
            ci = s["mean_loss_mp_ci95"]
            loss = f"{s['mean_loss_mp']:.1f} [{ci[0]:.1f}, {ci[1]:.1f}]"
            weighted = "" if s["weighted_loss_mp"] is None else f"{s['weighted_loss_mp']:.1f}"
            cells = "".join(f"{s['by_phase'][p]['mean_loss_mp']:>8.1f}" if p in s["by_phase"] else f"{'-':>8}"
                            for p in phases)
            lines.append(f"{b.bot:<{width}}  {loss:<22} {weighted:>8}  {cells}  {s['blunder_share']:>8.1%} "
                         f"{s['best_move_share']:>6.1%} {s['unrated_share']:>7.1%} {s['cpu_seconds_per_move']:>10.4f}")
        shown = shown_pairs(self.pairs, [b.bot for b in self.bots])
        if shown:
            which = "" if shown is self.pairs else ", each bot against the next (every pair in --json)"
            lines += ["", f"paired differences, A minus B (mp a move, 95% CI; positions for a CI of +-1 mp; the "
                      f"share of their spread that is rollout noise){which}:"]
            pair_width = max(len(f"{p['a']} - {p['b']}") for p in shown)
            for p in shown:
                ci = p["difference_mp_ci95"]
                noise = "" if p.get("noise_share") is None else f"  noise {p['noise_share']:.0%}"
                lines.append(f"  {p['a'] + ' - ' + p['b']:<{pair_width}}  {p['difference_mp']:+.1f} "
                             f"[{ci[0]:+.1f}, {ci[1]:+.1f}]  {p['positions_for_1mp']:,}{noise}")
        if self.unrated_kept:
            lines.append("\nunrated moves (--no-rollout) are left out of each bot's numbers")
        return "\n".join(lines)


def shown_pairs(pairs: list[dict], names: list[str]) -> list[dict]:
    """The pairs a report shows: every one of up to :data:`ALL_PAIRS_UP_TO` bots, else each bot against the
    next named (all of them stay in the JSON). ``pairs`` itself when it shows them all."""
    if len(names) <= ALL_PAIRS_UP_TO:
        return pairs
    return [p for p in pairs if names.index(p["b"]) == names.index(p["a"]) + 1]


def _decisions_per_side(header: dict) -> Optional[float]:
    """Decisions (not forced) a side makes in a game of the player against itself, from the sampling games."""
    sampling = header.get("sampling", {})
    player = header["settings"].get("player")
    per_game = sampling.get("decisions_per_game", {}).get(f"{player} vs itself")
    return None if per_game is None else per_game / 2


def _json_safe(data):
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {key: _json_safe(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_json_safe(value) for value in data]
    return data


def _bot_stats(losses: np.ndarray, phases: np.ndarray, weights: dict, blunder_mp: float, replicates: int,
               seed: int, cpu_seconds: float) -> dict:
    rated = np.isfinite(losses)
    values, strata = losses[rated], phases[rated]
    stats = {"positions": int(losses.size), "rated": int(rated.sum()), "unrated_share": float(1 - rated.mean())}
    if not values.size:  # every move unrated (--no-rollout)
        nan = math.nan
        return {**stats, "mean_loss_mp": nan, "mean_loss_mp_ci95": [nan, nan], "weighted_loss_mp": None,
                "weighted_loss_mp_ci95": None, "by_phase": {}, "blunder_share": nan, "best_move_share": nan,
                "better_than_set_best": 0, "cpu_seconds_per_move": cpu_seconds / losses.size}
    boot = bootstrap(values, strata, replicates, seed, weights)
    stats.update(mean_loss_mp=float(values.mean()), mean_loss_mp_ci95=_percentile_ci(boot["mean"]),
                 weighted_loss_mp=None, weighted_loss_mp_ci95=None)
    if boot.get("weighted") is not None:
        stats["weighted_loss_mp"] = _weighted_mean(values, strata, weights)
        stats["weighted_loss_mp_ci95"] = _percentile_ci(boot["weighted"])
    stats["by_phase"] = {p: {"positions": int((strata == p).sum()), "mean_loss_mp": float(values[strata == p].mean()),
                             "mean_loss_mp_ci95": _percentile_ci(boot["phases"][p])} for p in boot["phases"]}
    stats.update(blunder_share=float((values > blunder_mp).mean()), best_move_share=float((values <= 0).mean()),
                 better_than_set_best=int((values < 0).sum()), cpu_seconds_per_move=cpu_seconds / losses.size)
    return stats


def _weighted_mean(values: np.ndarray, strata: np.ndarray, weights: dict) -> Optional[float]:
    present = {p: w for p, w in weights.items() if w > 0 and (strata == p).any()}
    norm = sum(present.values())
    return float(sum(w * values[strata == p].mean() for p, w in present.items()) / norm) if norm else None


def _pair(a: BotScore, b: BotScore, phases: np.ndarray, weights: dict, replicates: int, seed: int) -> dict:
    both = np.isfinite(a.losses) & np.isfinite(b.losses)
    d = a.losses[both] - b.losses[both]
    nan = math.nan
    pair = {"a": a.bot, "b": b.bot, "positions": int(d.size), "difference_mp": nan, "difference_mp_ci95": [nan, nan],
            "weighted_difference_mp": None, "weighted_difference_mp_ci95": None, "sd_mp": nan, "positions_for_1mp": 0,
            "noise_sd_mp": None, "noise_share": None, "noise_from_halves": None}
    if not d.size:
        return pair
    boot = bootstrap(d, phases[both], replicates, seed, weights)
    sd = float(d.std(ddof=1)) if d.size > 1 else nan
    pair.update(difference_mp=float(d.mean()), difference_mp_ci95=_percentile_ci(boot["mean"]), sd_mp=sd,
                positions_for_1mp=int(math.ceil((1.96 * sd) ** 2)) if math.isfinite(sd) else 0)
    if a.keys is not None and b.keys is not None:
        rows = np.flatnonzero(both)
        differ = np.array([a.keys[i] != b.keys[i] for i in rows], dtype=bool)
        ha, hb = a.halves[rows], b.halves[rows]
        split = 1e6 * ((hb[:, 0] - ha[:, 0]) - (hb[:, 1] - ha[:, 1])) ** 2 * ha[:, 2]
        have = np.isfinite(split)
        noise = float(np.where(differ, np.where(have, split, a.noise[rows] + b.noise[rows]), 0.0).mean())
        pair.update(noise_sd_mp=math.sqrt(noise), noise_share=noise / sd ** 2 if sd > 0 else None,
                    noise_from_halves=float(have[differ].mean()) if differ.any() else None)
    if boot.get("weighted") is not None:
        pair.update(weighted_difference_mp=_weighted_mean(d, phases[both], weights),
                    weighted_difference_mp_ci95=_percentile_ci(boot["weighted"]))
    return pair


def score_bots(path: str | Path, specs: Sequence[str], *, blunder_mp: float = DEFAULT_BLUNDER_MP,
               rollout: bool = True, replicates: int = DEFAULT_BOOTSTRAP, seed: int = 1, workers: int = 1,
               ray_address: Optional[str] = None, progress: bool = True, every: int = 1) -> ScoreResult:
    """Score every bot of ``specs`` on the set at ``path`` (on every ``every``-th position of it: the
    positions a ``benchmark reroll --every`` of it took); see the module docstring."""
    from ...bots.spec import make_bot
    from ..rollout import RolloutError

    if not specs:
        raise BenchmarkError("name at least one bot to score")
    check_integers(("workers", workers, 1), ("every", every, 1))
    if not replicates >= 100:
        raise BenchmarkError(f"--bootstrap {replicates}: at least 100 resamples")
    path, shipped = resolve_set(path)
    bench = read_set(path)
    if not bench.records:
        raise BenchmarkError(f"{bench.path}: no rated positions yet (0 of {bench.planned}): run its build command "
                             f"({bench.header.get('command') or 'tapa-ai benchmark build'}) first")
    if every > 1:  # part of the set: moves rolled out for it serve this run (the file is not rewritten)
        if not bench.complete:
            raise BenchmarkError(f"--every {every}: {bench.path} is a partial build ({len(bench.records)} of "
                                 f"{bench.planned} positions); score every position of it, or finish it first")
        bench.keep_every(every)
    rules = set_rules(bench)
    for spec in specs:
        try:
            make_bot(spec, rules).close()
        except BotError as error:
            raise BenchmarkError(f"{error} (the set {bench.path} is {rules.name})") from None
    picks: dict[str, list] = {}
    cpu: dict[str, float] = {}
    extras: dict[int, dict] = {}
    try:
        for spec in dict.fromkeys(specs):
            picks[spec], cpu[spec] = _choices(bench, rules, spec, seed, workers, ray_address, progress)
            for index, (key, text, after) in enumerate(picks[spec]):
                if key not in candidate_map(bench.records[index]):
                    extras.setdefault(index, {}).setdefault(key, [text, after, set()])[2].add(spec)
        added = sum(len(moves) for moves in extras.values())
        if extras and rollout:
            # a set still being built, or a shipped one, is not rewritten: the new moves serve this run
            _rate_extras(bench, rules, extras, workers, ray_address, progress, bench.complete and not shipped)
    except (BotError, RolloutError) as error:
        raise BenchmarkError(str(error)) from None
    keys = {spec: [key for key, _, _ in picks[spec]] for spec in dict.fromkeys(specs)}
    result = summarise_scores(bench, keys, cpu, blunder_mp=blunder_mp, replicates=replicates, seed=seed,
                              added=added if rollout else 0, unrated_kept=bool(extras) and not rollout)
    result.candidates_cpu = candidates_cost(bench, rules)
    return result


def chosen_candidates(bench: BenchmarkSet, keys: Sequence[str]) -> list[Optional[dict]]:
    """The candidate entry of the move after which position ``i`` is ``keys[i]`` (None where the set lacks it)."""
    return [candidate_map(record).get(key) for record, key in zip(bench.records, keys)]


def losses_of(bench: BenchmarkSet, keys: Sequence[str]) -> np.ndarray:
    """(N,) millipoints lost by playing the move after which the position is ``keys[i]`` in position ``i``:
    the best equity of the build's candidates minus the move's (NaN where the set lacks the move)."""
    return _losses(bench, chosen_candidates(bench, keys))


def _losses(bench: BenchmarkSet, chosen: list[Optional[dict]]) -> np.ndarray:
    losses = np.full(len(bench.records), np.nan)
    for index, candidate in enumerate(chosen):
        if candidate is not None:
            losses[index] = 1000.0 * (best_equity(bench.records[index]) - candidate["equity"])
    return losses


def _rollout_noise(chosen: list[Optional[dict]]) -> np.ndarray:
    """(N,) the rollout variance in mp squared of each chosen move's difference to the set's best, from its
    paired 95% CI (a move added by ``score`` has none: its own CI's), NaN where the set lacks the move."""
    noise = np.full(len(chosen), np.nan)
    for index, candidate in enumerate(chosen):
        if candidate is not None:
            low, high = candidate.get("difference_ci95") or candidate["ci95"]
            noise[index] = (1000.0 * (high - low) / (2 * 1.959964)) ** 2
    return noise


def _rollout_halves(bench: BenchmarkSet, chosen: list[Optional[dict]]) -> np.ndarray:
    """(N, 3) each chosen move's equity on each half of its rollout games (the record's ``halves``) and
    ``n1 n2 / n**2``, which turns the squared difference of two halves into the variance of the mean; NaN
    where the set lacks the move or its record has no halves."""
    from ..rollout_report import BLOCK, half_games

    block = BLOCK if bench.header["settings"]["rollout"].get("rotate") else 1
    halves = np.full((len(chosen), 3), np.nan)
    for index, candidate in enumerate(chosen):
        if candidate is not None and candidate.get("halves"):
            games = int(candidate["games"])
            first = half_games(games, block)
            halves[index] = (*candidate["halves"], first * (games - first) / games ** 2)
    return halves


def candidates_cost(bench: BenchmarkSet, rules: RuleOptions, sample: int = 50) -> Optional[dict]:
    """The CPU-seconds a position's candidates take to choose (:func:`tapa_ai.arena.benchmark.candidate_moves`):
    the mean the records carry, else timed here on up to ``sample`` of the set's positions (a set built
    before the records carried it). None when the set's ranker or references cannot be made here."""
    from .build import candidate_moves, close_bots

    carried = [r["candidates_cpu_seconds"] for r in bench.records if "candidates_cpu_seconds" in r]
    if carried and len(carried) == len(bench.records):
        return {"seconds": float(np.mean(carried)), "from": f"the records ({len(carried)} positions)"}
    settings = bench.header["settings"]
    chosen = np.random.default_rng(0).permutation(len(bench.records))[:sample]
    try:
        def choose(record: dict) -> None:
            candidate_moves(position_from_json(record["position"]), tuple(record["dice"]), rules,
                            settings["ranker"], settings["candidates"], settings["references"], record["seed"])

        choose(bench.records[int(chosen[0])])  # the bots built and warmed up, outside the timing
        start = time.process_time()
        for index in chosen.tolist():
            choose(bench.records[index])
        seconds = (time.process_time() - start) / len(chosen)
    except (BotError, KeyError, ValueError):
        return None
    finally:
        close_bots()
    return {"seconds": seconds, "from": f"timed here on {len(chosen)} positions"}


def summarise_scores(bench: BenchmarkSet, keys: dict[str, Sequence[str]], cpu: Optional[dict] = None, *,
                     blunder_mp: float = DEFAULT_BLUNDER_MP, replicates: int = DEFAULT_BOOTSTRAP, seed: int = 1,
                     added: int = 0, unrated_kept: bool = False) -> ScoreResult:
    """The statistics of each bot's losses and of each pair of bots, from the afterstate key of the move each
    bot (by name) chose in each position."""
    phases = np.array([record["phase"] for record in bench.records])
    weights = bench.header.get("sampling", {}).get("natural_phase_share") or {}
    scores = []
    for name, chosen in keys.items():
        seconds = (cpu or {}).get(name, 0.0)
        candidates = chosen_candidates(bench, chosen)
        score = BotScore(name, _losses(bench, candidates), seconds, list(chosen), _rollout_noise(candidates),
                         _rollout_halves(bench, candidates))
        score.stats = _bot_stats(score.losses, phases, weights, blunder_mp, replicates, seed, seconds)
        scores.append(score)
    pairs = [_pair(a, b, phases, weights, replicates, seed) for i, a in enumerate(scores) for b in scores[i + 1:]]
    return ScoreResult(bench, scores, blunder_mp, pairs, added, unrated_kept)
