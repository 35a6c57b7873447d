"""Benchmark sets: positions with a roll whose candidate moves are rated by rollouts (``tapa-ai benchmark build``).

As GNU Backgammon's benchmark sets, a set judges a player by the equity it loses per move against
rollouts, instead of by thousands of games (:mod:`tapa_ai.arena.benchmark.score` scores bots on it;
docs/benchmark.md). Building one:

1. **Positions** (:mod:`tapa_ai.arena.benchmark.sample`): drawn from seeded games of a strong ``player``
   (the shipped net at 0-ply) against ``sources`` (itself, weaker bots, an older generation), stratified by
   phase (contact, pins, mother, race, bear-off) to a target ``mix``, forced rolls skipped, in a random
   order; the same for the same arguments.
2. **Candidates** of each position: the ``candidates`` best moves of the ``ranker``'s search (the shipped
   net at 2-ply, with its move filter) and every move a ``reference`` bot chooses (0- and 1-ply of the
   shipped net, its kept generations, ``heuristic``; ``pubeval`` and gnubg for backgammon when
   ``gnubg-nn`` is installed), distinct by the position after the move.
3. **Rollouts**: every candidate rolled out on the same dice by the rollout ``bot``
   (:func:`tapa_ai.arena.rollout.moves_rollout`: rotation of the first roll, optional luck adjustment,
   truncation and bear-off stop), seeded per position (``seed * 100000 + index``), so a move rolled out
   later (by ``score``) sees the same dice as the candidates did. Cubeless equity of the mover, its 95% CI,
   the difference to the best and its CI from the paired games.

One job per position runs in a worker process (``workers``, or Ray tasks); each finished position is
appended to the file at once, in order, so a stopped build run again with the same arguments goes on
where it stopped (:mod:`tapa_ai.arena.benchmark.file`); different settings are refused with what
differs. Each record carries the CPU-seconds its job took, and of them those its candidates took (the part
of a position's cost that does not grow with the rollouts' games).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ...bots.base import BotError
from ...movegen.batch import PositionBatch
from ...movegen.generate import generate
from ...notation.json_position import position_from_json
from ...net.shipped import model_variant
from ...rules.options import RuleOptions, variant_rules
from .file import (FORMAT, VERSION, BenchmarkError, BenchmarkSet, afterstate_key, append_record,
                             check_integers, differences, read_set, write_set)
from .sample import DEFAULT_MIX, PHASES, default_references, default_sources, sample_positions

SEED_STRIDE = 100_000
"""Position ``i`` of a set with seed ``s`` is rolled out with seed ``s * SEED_STRIDE + i``."""

# -- one position's work, in a worker -----------------------------------------------------------------
_BOTS: dict = {}


def _bot(spec: str, rules: RuleOptions):
    key = (spec, rules)
    if key not in _BOTS:
        from ...bots.spec import make_bot

        _BOTS[key] = make_bot(spec, rules)
    return _BOTS[key]


def close_bots() -> None:
    """Close the ranker and reference bots this process built (an engine: bot holds a process)."""
    for bot in _BOTS.values():
        bot.close()
    _BOTS.clear()


def candidate_moves(position, dice, rules: RuleOptions, ranker: str, count: int, references: Sequence[str],
                    seed: int) -> list[tuple[str, object, list[str]]]:
    """(move text, position after it, who chose it) of the candidates: the ranker's best ``count`` and every
    reference bot's choice, distinct by the position after the move, the ranker's first."""
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    chosen: dict[int, list[str]] = {}
    rows, _, equities = _bot(ranker, rules).ranked(afterstates)
    for rank, row in enumerate(rows[np.argsort(-equities, kind="stable")][:count].tolist()):
        chosen.setdefault(int(row), []).append(f"{ranker}#{rank + 1}")
    rng = np.random.default_rng([seed, 2])
    for spec in references:
        chosen.setdefault(int(_bot(spec, rules).choose(afterstates, rng)[0]), []).append(spec)
    return [(afterstates.move_text(row), afterstates.position(row), who) for row, who in chosen.items()]


def rollout_candidates(position, dice, moves: list[tuple[str, object]], rules: RuleOptions, bot, evaluator,
                       evaluator_name: Optional[str], rollout: dict, seed: int) -> dict[str, dict]:
    """Each (move text, position after it) of ``moves`` rolled out on the same dice: the fields of its
    candidate entry, by move text."""
    from ..rollout import LocalPlayer, RolloutSettings, moves_rollout

    settings = RolloutSettings(games=rollout["games"], truncate=rollout["truncate"], bearoff=rollout["bearoff"],
                               rotate=rollout["rotate"], luck=rollout["luck"], seed=seed)
    player = LocalPlayer(rules, bot, evaluator, settings, evaluator_name=evaluator_name)
    result = moves_rollout(player, position, tuple(dice), moves)
    return {s.move: {"equity": round(s.equity, 6), "ci95": [round(x, 6) for x in s.equity_ci95],
                     "difference": round(s.difference, 6), "difference_ci95": [round(x, 6) for x in s.difference_ci95],
                     "games": s.games, "mean_plies": round(s.mean_plies, 2),
                     **({"halves": [round(x, 6) for x in s.halves]} if s.halves else {})} for s in result.stats}


def position_job(job: tuple) -> tuple[int, dict]:
    """One position of a build (``kind`` build: its candidates and their rollouts), or the moves a scored bot
    played that the set lacked (``kind`` extra), or a set's candidates rolled out again (``kind`` reroll,
    :mod:`tapa_ai.arena.benchmark.reroll`), in an arena worker (its bot ``a`` the rollout bot, ``b``
    the evaluator)."""
    from ..workers import WORKER

    index, entry, seed, task = job
    start = time.process_time()
    rules = WORKER["rules"]
    position = position_from_json(entry["position"])
    dice = tuple(entry["dice"])
    candidates_cpu = None
    if task["kind"] == "build":
        moves = candidate_moves(position, dice, rules, task["ranker"], task["candidates"], task["references"], seed)
        candidates_cpu = round(time.process_time() - start, 3)
    else:  # extra, or reroll (a set's own candidates: their differences to the best stay)
        moves = [(text, position_from_json(after), None) for text, after in entry["moves"]]
    evaluator = WORKER["b"].evaluator if task["evaluator"] is not None else None
    rated = rollout_candidates(position, dice, [(text, after) for text, after, _ in moves], rules, WORKER["a"],
                               evaluator, task["evaluator"], task["rollout"], seed)
    candidates = []
    for text, after, who in moves:
        candidate = {"move": text, "key": afterstate_key(after), **rated[text]}
        if who is not None:
            candidate["chosen_by"] = who
        elif task["kind"] == "extra":
            del candidate["difference"], candidate["difference_ci95"]  # paired with other extras only
        candidates.append(candidate)
    candidates.sort(key=lambda c: -c["equity"])
    part = {"candidates": candidates, "cpu_seconds": round(time.process_time() - start, 3)}
    if candidates_cpu is not None:  # the share of a position's cost that does not grow with the rollouts' games
        part["candidates_cpu_seconds"] = candidates_cpu
    return index, part


# -- the build ----------------------------------------------------------------------------------------------
def model_hashes(specs: Sequence[str]) -> dict[str, dict]:
    """{spec: {file, sha256, label}} of every spec naming a model file (net:, onnx:)."""
    from ...bots.spec import model_file_path
    from ...net.model_id import file_sha256, model_label

    models = {}
    for spec in specs:
        path = model_file_path(spec) if spec not in ("self", "none") else None
        if path is not None and path.is_file():
            shown = _shown_path(path)
            models[spec] = {"file": str(shown), "sha256": file_sha256(path),
                            "label": model_label(path, name=str(shown))}
    return models


def _shown_path(path: Path) -> Path:
    """How a set's header names a model file, naming no home directory: a shipped model or kept generation
    as ``tapa_ai/models/...`` wherever the set is built, another file relative to the working directory when
    it is under it, else as given."""
    from ...net.shipped import MODELS_DIR

    resolved, cwd = path.resolve(), Path.cwd().resolve()
    if resolved.is_relative_to(MODELS_DIR):
        return resolved.relative_to(MODELS_DIR.parent.parent)
    if resolved.is_relative_to(cwd):
        return resolved.relative_to(cwd)
    return path


@dataclass
class BuildResult:
    path: Path
    positions: int
    new: int
    cpu_seconds_new: float
    seconds: float
    resumed_from: int

    def report(self) -> str:
        per = f", {self.cpu_seconds_new / self.new:.1f} CPU-s a position" if self.new else ""
        resumed = f" (resumed at {self.resumed_from})" if self.resumed_from else ""
        return (f"wrote {self.path}: {self.positions} positions, {self.new} new{resumed}{per}; "
                f"{self.seconds:.1f} s")


def build_command(variant: str, positions: int, out, **options) -> str:
    """The ``tapa-ai benchmark build`` command line of these arguments (every setting spelled out but the
    workers), for the header and the docs."""
    import shlex

    words = ["tapa-ai", "benchmark", "build", "--variant", variant, "--positions", str(positions), "--out", str(out)]
    for name in ("seed", "games", "candidates", "player", "ranker", "bot", "evaluator", "rotate", "truncate"):
        if options.get(name) is not None:
            words += [f"--{name}", str(options[name])]
    words += [word for spec, weight in options.get("sources") or [] for word in ("--source", f"{spec}={weight}")]
    words += [word for phase, share in (options.get("mix") or {}).items() for word in ("--mix", f"{phase}={share}")]
    words += [word for spec in options.get("references") or ["none"] for word in ("--reference", spec)]
    words += [f"--{flag}" for flag in ("luck", "bearoff") if options.get(flag)]
    return shlex.join(words)


def build_benchmark(variant: str, positions: int, out: str | Path, *, seed: int = 1, games: int = 1296,
                    candidates: int = 5, player: Optional[str] = None, sources: Optional[list] = None,
                    mix: Optional[dict] = None, ranker: Optional[str] = None, references: Optional[list] = None,
                    bot: Optional[str] = None, evaluator: Optional[str] = None, rotate: int = 1, luck: bool = False,
                    truncate: int = 0, bearoff: bool = False, workers: int = 1, ray_address: Optional[str] = None,
                    progress: bool = True, command: Optional[str] = None, stop_after: Optional[int] = None
                    ) -> BuildResult:
    """Build (or go on building) the set ``out``; see the module docstring. ``stop_after``: stop once that
    many positions are in the file (a test's stand-in for a killed build)."""
    from ... import __version__
    from ..rollout import RolloutError, RolloutSettings, SpecPlayer

    try:
        rules = variant_rules(variant)
    except ValueError as error:
        raise BenchmarkError(str(error)) from None
    check_integers(("positions", positions, 1), ("candidates", candidates, 1), ("seed", seed, 0),
                   ("workers", workers, 1))
    if positions >= SEED_STRIDE:
        raise BenchmarkError(f"--positions {positions}: at most {SEED_STRIDE - 1}")
    model = model_variant(variant)  # the shipped model that plays it (portes: backgammon's)
    player = player or f"net:{model}"
    bot = bot or f"net:{model}"
    ranker = ranker or f"net:{model}@2ply"
    sources = list(sources) if sources else default_sources(variant)
    references = default_references(variant) if references is None else \
        [spec for spec in references if spec != "none"]
    mix = dict(mix) if mix else dict(DEFAULT_MIX[rules.contact])
    unknown = sorted(set(mix) - set(PHASES))
    if unknown or not any(mix.get(name, 0) > 0 for name in PHASES):
        raise BenchmarkError(f"--mix: phases are {', '.join(PHASES)} (unknown: {', '.join(unknown) or 'none'})")
    try:
        checker = SpecPlayer(rules, bot, evaluator, RolloutSettings(games=games, truncate=truncate, bearoff=bearoff,
                                                                    rotate=rotate, luck=luck, seed=seed), 1,
                             progress=False)
        from ...bots.search import NetBot
        from ...bots.spec import make_bot

        for spec in [player, ranker, *references, *(s for s, _ in sources if s != "self")]:
            built = make_bot(spec, rules)
            built.close()
            if spec == ranker and not isinstance(built, NetBot):
                raise BenchmarkError(f"--ranker {spec!r}: candidates are ranked by a net: spec")
    except (BotError, RolloutError) as error:
        raise BenchmarkError(str(error)) from None
    rollout = {"bot": bot, "evaluator": checker.evaluator_name, "games": checker.settings.total_games,
               "rotate": rotate, "luck": luck, "truncate": truncate, "bearoff": bearoff}
    settings = {"positions": positions, "seed": seed, "player": player,
                "sources": [[spec, weight] for spec, weight in sources],
                "mix": {name: mix[name] for name in PHASES if name in mix}, "candidates": candidates,
                "ranker": ranker, "references": references, "rollout": rollout}
    specs = [player, *(s for s, _ in sources), ranker, *references, bot, *([checker.evaluator_name] if
                                                                          checker.evaluator_name else [])]
    models = model_hashes(list(dict.fromkeys(specs)))
    if command is None:
        command = build_command(variant, positions, out, seed=seed, games=games, candidates=candidates,
                                player=player, sources=sources, mix=mix, ranker=ranker, references=references, bot=bot,
                                evaluator=evaluator, rotate=rotate, luck=luck, truncate=truncate, bearoff=bearoff)
    header = {"format": FORMAT, "version": VERSION, "variant": rules.name, "rules": rules.to_dict(),
              "settings": settings, "models": models, "command": command, "tapa_ai": __version__}
    out = Path(out)
    existing = existing_set(out, header)
    plan, sampling = sample_positions(rules, positions, seed, player, sources, mix, progress)
    header["sampling"] = sampling
    records: list[dict] = []
    if existing is not None:
        if existing.header.get("sampling") != json.loads(json.dumps(sampling)):
            raise BenchmarkError(f"{out}: the sampling games now come out otherwise than when it was begun "
                                 f"(another tapa-ai?): start a new set")
        records = existing.records
        for record in records:
            want = plan[record["index"]]
            if any(record[key] != want[key] for key in ("position", "dice", "phase", "source")):
                raise BenchmarkError(f"{out}: position {record['index']} is not the one drawn now: start a new set")
        header = existing.header
        if existing.partial_tail:
            write_set(out, header, records)  # the partial line of a stopped build goes
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_set(out, header, [])
    done_count = len(records)
    limit = positions if stop_after is None else min(positions, stop_after)
    task = {"kind": "build", "ranker": ranker, "candidates": candidates, "references": references,
            "evaluator": checker.evaluator_name, "rollout": rollout}
    jobs = [(i, plan[i], seed * SEED_STRIDE + i, task) for i in range(done_count, limit)]
    return run_in_order(out, jobs, lambda i, part: {"index": i, **plan[i], "seed": seed * SEED_STRIDE + i, **part},
                        bot, checker.evaluator_name, rules, positions, done_count, workers, ray_address, progress)


def existing_set(out: Path, header: dict) -> Optional[BenchmarkSet]:
    """The set begun at ``out`` with the rules, settings and model files of ``header`` (None if there is no
    file yet); BenchmarkError if ``out`` is not a plain JSON lines path or holds a set made otherwise."""
    if out.suffix == ".gz":
        raise BenchmarkError(f"--out {out}: a set is written as plain JSON lines (FILE.jsonl); gzip the finished set")
    if not out.exists():
        return None
    existing = read_set(out, allow_partial_tail=True)

    def identity(found: dict) -> dict:
        return json.loads(json.dumps({"rules": found["rules"], "settings": found["settings"],
                                      "models": {k: v.get("sha256") for k, v in found["models"].items()}}))

    changed = differences(identity(existing.header), identity(header))
    if changed:
        raise BenchmarkError(f"{out} holds a benchmark set built with other settings (different "
                             f"{', '.join(changed)}): give another --out, or delete it to start afresh")
    return existing


def run_in_order(out: Path, jobs: list[tuple], make_record, bot: str, evaluator: Optional[str], rules: RuleOptions,
                 positions: int, done_count: int, workers: int, ray_address: Optional[str], progress: bool
                 ) -> BuildResult:
    """Run the :func:`position_job` ``jobs`` (rollout bot ``bot``, ``evaluator``) and append
    ``make_record(index, part)`` of each to ``out`` in index order, from ``done_count`` on, as they finish."""
    from tqdm import tqdm

    from ..workers import play_jobs
    from ..rollout import RolloutError

    pending: dict[int, dict] = {}
    state = {"next": done_count, "cpu": 0.0}
    bar = tqdm(total=positions, initial=done_count, unit="position", desc="rolling out", disable=not progress,
               dynamic_ncols=True)
    start = time.perf_counter()
    handle = open(out, "ab")

    def done(index: int, result: dict) -> None:
        pending[index] = result
        while state["next"] in pending:
            i = state["next"]
            part = pending.pop(i)
            append_record(out, make_record(i, part), handle)
            state["cpu"] += part["cpu_seconds"]
            state["next"] += 1
            bar.update(1)

    try:
        if jobs:
            play_jobs(position_job, bot, evaluator or bot, rules, jobs, workers, ray_address, done)
    except (BotError, RolloutError) as error:
        raise BenchmarkError(str(error)) from None
    finally:
        handle.close()
        bar.close()
        close_bots()
    new = state["next"] - done_count
    return BuildResult(out, state["next"], new, state["cpu"], time.perf_counter() - start, done_count)

