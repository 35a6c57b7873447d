"""A set's candidates rolled out again by another rollout bot (``tapa-ai benchmark reroll``).

A set rates moves by the rollouts of one bot (the shipped net at 0-ply by default): where that bot
misplays, its rollouts lean the same way, and a bot that plays like it is not punished. Rolling the
**same** candidates out again with another bot (``gnubg:0`` for backgammon, a deeper search, longer
games) shows how far each verdict depends on the rollout bot: score the same bots on both sets, the
first with ``score --every K`` when the reroll took every K-th position (docs/benchmark.md, *Where it
leans*).

A reroll keeps every position's position, dice, phase, source and seed (so the rollouts play the same
dice streams as the set's did) and its candidate moves with who chose or added them, and replaces
their equities, CIs and differences to the best. It is a set like any other (``settings.rerolled_from``
names the set it came from, its file's sha256, ``every`` and the old rollout settings; ``from_index``
in each record the position's index there): resumable the same way, refused on a set made otherwise.

:func:`compare_rollouts` (``tapa-ai benchmark score BOT ... --set REROLL --against SET``) scores the bots on
the reroll and rates the **same** choices on the set it came from (moves that set lacks rolled out with its
own settings, for this run only), and per pair of bots how far the new rollouts move their paired
difference, with a bootstrap CI over the positions (the same positions, so what moves it is the
rollouts alone).
"""

from __future__ import annotations

import copy
import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from ...bots.base import BotError
from ...movegen.batch import PositionBatch
from ...movegen.generate import generate
from ...net.model_id import file_sha256
from ...notation.json_position import position_from_json, position_to_json
from .build import BuildResult, existing_set, model_hashes, run_in_order
from .file import (BenchmarkError, afterstate_key, candidate_map, check_integers, read_set, resolve_set,
                             set_rules, write_set)
from .score import DEFAULT_BLUNDER_MP, DEFAULT_BOOTSTRAP, ScoreResult, _json_safe, _percentile_ci, \
    _rate_extras, bootstrap, score_bots, shown_pairs, summarise_scores

ROLLOUT_OPTIONS = ("games", "rotate", "luck", "truncate", "bearoff")
PROVENANCE = ("chosen_by", "added_by")
"""The candidate fields a reroll carries over unchanged (beside the move and its key)."""


def _moves(record: dict, moves: list[tuple[str, str]], where: str) -> list[tuple[str, dict]]:
    """(move text, position after it as JSON) of each (move text, afterstate key) of ``moves``, found again by
    its key among the moves of ``record``'s roll; BenchmarkError if one is not a move of that roll."""
    position = position_from_json(record["position"])
    afterstates = generate(PositionBatch.from_positions([position]), np.array([record["dice"]], dtype=np.int8))
    rows = {afterstate_key(afterstates.position(row)): row for row in range(len(afterstates))}
    found = []
    for text, key in moves:
        if key not in rows:
            raise BenchmarkError(f"{where}: candidate {text!r} is not a move of the roll "
                                 f"{record['dice'][0]}-{record['dice'][1]} there (a damaged set)")
        found.append((text, position_to_json(afterstates.position(rows[key]))))
    return found


def _candidates(record: dict) -> list[tuple[str, str]]:
    return [(candidate["move"], candidate["key"]) for candidate in record["candidates"]]


def reroll_command(source: str, out, bot: str, every: int, options: dict) -> str:
    words = ["tapa-ai", "benchmark", "reroll", "--set", str(source), "--bot", bot, "--out", str(out)]
    if every != 1:
        words += ["--every", str(every)]
    for name in ("evaluator", "games", "rotate", "truncate"):
        if options.get(name) is not None:
            words += [f"--{name}", str(options[name])]
    words += [f"--{flag}" for flag in ("luck", "bearoff") if options.get(flag)]
    return shlex.join(words)


def reroll_benchmark(source: str | Path, out: str | Path, bot: str, *, evaluator: Optional[str] = None,
                     every: int = 1, games: Optional[int] = None, rotate: Optional[int] = None,
                     luck: Optional[bool] = None, truncate: Optional[int] = None, bearoff: Optional[bool] = None,
                     workers: int = 1, ray_address: Optional[str] = None, progress: bool = True,
                     stop_after: Optional[int] = None) -> BuildResult:
    """Roll out the candidates of every ``every``-th position of the set ``source`` (a file or a shipped
    set's name) again with ``bot`` into the set ``out``, or go on with a stopped reroll. Rollout settings
    left None are the source set's. ``stop_after``: stop once that many positions are in ``out`` (a test's
    stand-in for a killed run)."""
    from ... import __version__
    from ..rollout import RolloutError, RolloutSettings, SpecPlayer

    check_integers(("every", every, 1), ("workers", workers, 1))
    path, _ = resolve_set(source)
    bench = read_set(path)
    if not bench.complete:
        raise BenchmarkError(f"{bench.path}: {len(bench.records)} of {bench.planned} positions rated: finish its "
                             f"build ({bench.header.get('command') or 'tapa-ai benchmark build'}) before a reroll")
    rules = set_rules(bench)
    old = bench.header["settings"].get("rollout") or {}
    given = {"games": games, "rotate": rotate, "luck": luck, "truncate": truncate, "bearoff": bearoff}
    chosen = {name: old.get(name) if given[name] is None else given[name] for name in ROLLOUT_OPTIONS}
    try:
        checker = SpecPlayer(rules, bot, evaluator, RolloutSettings(
            games=chosen["games"] or 1296, truncate=chosen["truncate"] or 0, bearoff=bool(chosen["bearoff"]),
            rotate=1 if chosen["rotate"] is None else chosen["rotate"], luck=bool(chosen["luck"])), 1, progress=False)
    except (BotError, RolloutError) as error:
        raise BenchmarkError(f"{error} (the set {bench.path} is {rules.name})") from None
    settings = checker.settings
    rollout = {"bot": bot, "evaluator": checker.evaluator_name, "games": settings.total_games,
               "rotate": settings.rotate, "luck": settings.luck, "truncate": settings.truncate,
               "bearoff": settings.bearoff}
    selected = bench.records[::every]
    header = copy.deepcopy(bench.header)
    header["settings"]["positions"] = len(selected)
    header["settings"]["rollout"] = rollout
    header["settings"]["rerolled_from"] = {"set": path.name, "sha256": file_sha256(path), "every": every,
                                           "positions": len(bench.records), "rollout": old}
    header["models"].update(model_hashes([spec for spec in (bot, checker.evaluator_name) if spec]))
    header["command"] = reroll_command(source, out, bot, every, {"evaluator": evaluator, **given})
    header["tapa_ai"] = __version__
    out = Path(out)
    existing = existing_set(out, header)
    done_count = 0
    if existing is None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_set(out, header, [])
    else:
        done_count = len(existing.records)
        if existing.partial_tail:
            write_set(out, existing.header, existing.records)  # the partial line of a stopped run goes
    limit = len(selected) if stop_after is None else min(len(selected), stop_after)
    task = {"kind": "reroll", "evaluator": checker.evaluator_name, "rollout": rollout}
    jobs = [(i, {"position": record["position"], "dice": record["dice"],
                 "moves": _moves(record, _candidates(record), f"{bench.path} position {record['index']}")},
             record["seed"], task) for i, record in enumerate(selected[done_count:limit], start=done_count)]

    def make_record(i: int, part: dict) -> dict:
        record = {key: value for key, value in selected[i].items() if key not in ("candidates", "cpu_seconds")}
        old_candidates = {c["move"]: c for c in selected[i]["candidates"]}
        for candidate in part["candidates"]:
            candidate.update({k: old_candidates[candidate["move"]][k] for k in PROVENANCE
                              if k in old_candidates[candidate["move"]]})
        # the candidates are the set's: what finding them cost stays the set's figure
        part.pop("candidates_cpu_seconds", None)
        return {**record, "index": i, "from_index": selected[i]["index"], **part}

    return run_in_order(out, jobs, make_record, bot, checker.evaluator_name, rules, len(selected), done_count,
                        workers, ray_address, progress)


# -- the same choices on both sets ---------------------------------------------------------------------------
@dataclass
class RolloutComparison:
    """Bots scored on a reroll (``new``) and their same choices on the set it was rerolled from (``old``);
    ``leans``: per pair, the paired difference on each and how far the new rollouts move it."""

    new: ScoreResult
    old: ScoreResult
    leans: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = self.new.to_dict()
        old = self.old.to_dict()
        data["against"] = {key: old[key] for key in ("set", "positions", "every", "rollout", "bots", "pairs")}
        data["leans"] = self.leans
        return _json_safe(data)

    def report(self) -> str:
        old = self.old.bench.header["settings"].get("rollout", {})
        width = max(len(b.bot) for b in self.new.bots)
        lines = [self.new.report(), "",
                 f"the same moves rated by {self.old.bench.path}'s rollouts ({old.get('bot')}, {old.get('games')} "
                 f"games a move), mp a move:", f"  {'bot':<{width}}  {'there':>6}  {'here':>6}"]
        for before, now in zip(self.old.bots, self.new.bots):
            there, here = before.stats["mean_loss_mp"], now.stats["mean_loss_mp"]
            lines.append(f"  {now.bot:<{width}}  {there:>6.1f}  {here:>6.1f}")
        shown = shown_pairs(self.leans, [b.bot for b in self.new.bots])
        if shown:
            lines += ["", "paired differences A minus B there and here, and how far these rollouts move them "
                      "(here minus there, 95% CI):"]
            pair_width = max(len(f"{p['a']} - {p['b']}") for p in shown)
            for p in shown:
                ci = p["moved_mp_ci95"]
                lines.append(f"  {p['a'] + ' - ' + p['b']:<{pair_width}}  {p['there_mp']:+.1f}  {p['here_mp']:+.1f}"
                             f"  moved {p['moved_mp']:+.1f} [{ci[0]:+.1f}, {ci[1]:+.1f}]")
        return "\n".join(lines)


def compare_rollouts(path: str | Path, against: str | Path, specs, *, blunder_mp: float = DEFAULT_BLUNDER_MP,
                     replicates: int = DEFAULT_BOOTSTRAP, seed: int = 1, workers: int = 1,
                     ray_address: Optional[str] = None, progress: bool = True) -> RolloutComparison:
    """Score ``specs`` on the reroll ``path``, rate the same choices on ``against`` (the set it was rerolled
    from: its sha256 must be the one the reroll names) and compare pair by pair; see the module docstring."""
    from ..rollout import RolloutError

    new = score_bots(path, specs, blunder_mp=blunder_mp, replicates=replicates, seed=seed, workers=workers,
                     ray_address=ray_address, progress=progress)
    bench = new.bench
    origin = bench.header["settings"].get("rerolled_from")
    if not origin:
        raise BenchmarkError(f"--against: {bench.path} is not a reroll (its header has no settings.rerolled_from)")
    source_path, _ = resolve_set(against)
    source = read_set(source_path)
    found = file_sha256(source_path)
    if found != origin["sha256"]:
        raise BenchmarkError(f"--against {against}: not the set {bench.path} was rerolled from (sha256 {found[:12]}, "
                             f"the reroll names {origin['sha256'][:12]})")
    source.keep_every(origin["every"])
    if len(source.records) < len(bench.records) or any(
            (a["position"], a["dice"]) != (b["position"], b["dice"]) for a, b in zip(source.records, bench.records)):
        raise BenchmarkError(f"--against {against}: its positions are not those of {bench.path}")
    source.records = source.records[:len(bench.records)]
    keys = {score.bot: score.keys for score in new.bots}
    extras: dict[int, dict] = {}
    for spec, chosen in keys.items():
        for i, key in enumerate(chosen):
            if key not in candidate_map(source.records[i]):
                move = candidate_map(bench.records[i])[key]["move"]
                extras.setdefault(i, {}).setdefault(key, [move, None, set()])[2].add(spec)
    for i, moves in extras.items():  # the moves' positions after, found again among the roll's moves
        found = _moves(bench.records[i], [(text, key) for key, (text, _, _) in moves.items()],
                       f"{bench.path} position {i}")
        for entry, (_, after) in zip(moves.values(), found):
            entry[1] = after
    try:
        if extras:
            _rate_extras(source, set_rules(source), extras, workers, ray_address, progress, keep=False)
    except (BotError, RolloutError) as error:
        raise BenchmarkError(str(error)) from None
    old = summarise_scores(source, keys, {s.bot: s.cpu_seconds for s in new.bots}, blunder_mp=blunder_mp,
                           replicates=replicates, seed=seed, added=sum(len(m) for m in extras.values()))
    phases = np.array([record["phase"] for record in bench.records])
    weights = bench.header.get("sampling", {}).get("natural_phase_share") or {}
    here_losses = {score.bot: score.losses for score in new.bots}
    there_losses = {score.bot: score.losses for score in old.bots}
    leans = []
    for pair in new.pairs:
        here = here_losses[pair["a"]] - here_losses[pair["b"]]
        there = there_losses[pair["a"]] - there_losses[pair["b"]]
        both = np.isfinite(here) & np.isfinite(there)
        moved = here[both] - there[both]
        lean = {"a": pair["a"], "b": pair["b"], "positions": int(both.sum()), "here_mp": math.nan,
                "there_mp": math.nan, "moved_mp": math.nan, "moved_mp_ci95": [math.nan, math.nan]}
        if moved.size:
            boot = bootstrap(moved, phases[both], replicates, seed, weights)
            lean.update(here_mp=float(here[both].mean()), there_mp=float(there[both].mean()),
                        moved_mp=float(moved.mean()), moved_mp_ci95=_percentile_ci(boot["mean"]))
        leans.append(lean)
    return RolloutComparison(new, old, leans)
