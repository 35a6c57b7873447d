"""``tapa-ai match``: two bots over many duplicate pairs of games (or matches), spread over processes.

:func:`run_match` plays single games without the cube (points per game);
:func:`run_cube_match` plays money games with the cube (``--cube``) or
matches to N points (``--match-length N --matches M``), with
:func:`tapa_ai.arena.cube_play.play_cube_pairs`.

The games are cut into chunks of ``chunk_pairs`` pairs; chunk ``i`` draws
its dice and every random choice from ``default_rng([seed, i])``, so the
result depends on the seed only, not on how many workers played it. Workers
(:mod:`tapa_ai.arena.workers`) are separate processes (``spawn``), each
building the two bots once from their spec strings; with ``ray_address`` the
chunks are Ray tasks spread over a Ray cluster instead (each Ray worker
process builds the bots once).

With ``partial=DIR`` every finished chunk of :func:`run_match` is saved at
once under ``DIR`` (``chunk_<index>_<pairs>.npz``, beside a ``match.json``
naming the bots, rules, seed and chunking), and a later call with the same
``DIR`` plays only the chunks not there: a killed long match (hours of 2-ply
games) loses at most the chunks in flight, and a longer match of the same
bots and seed reuses the games of a shorter one, whose chunks it begins
with.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from ..bots.base import BotError
from ..rules import outcomes
from ..rules.options import RuleOptions
from .cube_play import KIND_NAMES, CubeRecords, play_cube_pairs
from .duels import DuelResult, GameRecords, play_pairs
from .workers import WORKER, check_and_warm_up, play_jobs

__all__ = ["CubeMatchResult", "MatchResult", "claim_directory", "run_cube_match", "run_match"]

DEFAULT_CHUNK_PAIRS = 50


@dataclass
class MatchResult:
    """A's results against B over ``games`` games in duplicate pairs."""

    bot_a: str
    bot_b: str
    variant: str
    seed: int
    records: GameRecords
    seconds: float
    workers: int
    summary: DuelResult = field(init=False)

    def __post_init__(self) -> None:
        self.summary = self.records.summary()

    @property
    def games_per_s(self) -> float:
        return self.records.games / max(self.seconds, 1e-9)

    def to_dict(self) -> dict:
        s = self.summary
        return {
            "bot_a": self.bot_a, "bot_b": self.bot_b, "variant": self.variant, "seed": self.seed,
            "games": s.games, "pairs": s.games // 2, "ppg": s.ppg, "ppg_ci95": list(s.ppg_ci95),
            "win_rate": s.win_rate, "win_rate_ci95": list(s.win_rate_ci95),
            "kinds": {kind: s.kinds.get(kind, 0) for kind in outcomes.RESULT_KINDS if kind},
            "unfinished": s.unfinished, "mean_turns": float(self.records.turns.mean()),
            "seconds": self.seconds, "games_per_s": self.games_per_s, "workers": self.workers,
        }

    def write(self, path: str | Path, csv_path: Optional[str | Path] = None) -> None:
        """The summary as JSON at ``path`` and one CSV row per game (default: ``path`` with ``.csv``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        csv_path = Path(csv_path) if csv_path else path.with_suffix(".csv")
        with csv_path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["game", "pair", "first", "points_for_a", "a_won", "kind", "turns"])
            r = self.records
            for game in range(r.games):
                kind = outcomes.RESULT_KINDS[int(r.kind[game])] or "unfinished"
                writer.writerow([game, game // 2, "A" if game % 2 == 0 else "B", f"{r.points_for_a[game]:g}",
                                 int(r.a_won[game]), kind, int(r.turns[game])])

    def write_games(self, path: str | Path, rules: RuleOptions) -> int:
        """The recorded games (``run_match(record_games=N)``) as a ``tapa-ai/games`` file; how many."""
        from .recorded_games import arena_game, games_document, write_games

        r = self.records
        games = []
        for game, turns in enumerate(r.histories or []):
            first, second = ("A", "B") if game % 2 == 0 else ("B", "A")  # the first mover plays X
            code = int(r.kind[game])
            result = None
            if code:
                kind = outcomes.RESULT_KINDS[code]
                winner = None if kind == "draw" else ("X" if bool(r.a_won[game]) == (first == "A") else "O")
                result = {"winner": winner, "kind": kind, "points": int(abs(r.points_for_a[game]))}
            games.append(arena_game(game + 1, first, second, rules, turns, result))
        write_games(path, games_document(rules, {"A": self.bot_a, "B": self.bot_b}, games, "tapa-ai match",
                                         seed=self.seed))
        return len(games)

    def report(self) -> str:
        s = self.summary
        kinds = ", ".join(f"{kind} {n / s.games:.1%}" for kind, n in sorted(s.kinds.items()))
        return (f"{self.bot_a} vs {self.bot_b} ({self.variant}, {s.games} games in duplicate pairs, seed {self.seed})\n"
                f"  points per game for A  {s.ppg:+.3f}  95% CI [{s.ppg_ci95[0]:+.3f}, {s.ppg_ci95[1]:+.3f}]\n"
                f"  A wins                 {s.win_rate:.1%}  95% CI [{s.win_rate_ci95[0]:.1%}, "
                f"{s.win_rate_ci95[1]:.1%}]\n"
                f"  results                {kinds}" + (f", unfinished {s.unfinished}" if s.unfinished else "") +
                f"\n  speed                  {self.games_per_s:.1f} games/s ({self.seconds:.1f} s, "
                f"{self.workers} worker{'s' if self.workers > 1 else ''})")


# -- the chunks a worker plays ---------------------------------------------------------------------------
def _play_chunk(job: tuple) -> tuple[int, GameRecords]:
    index, pairs, seed, max_turns, *record = job  # a fifth number: record the moves of that many games
    return index, play_pairs(WORKER["rules"], WORKER["a"], WORKER["b"], pairs, [seed, index], max_turns,
                             record=record[0] if record else 0)


def _partial_identity(spec_a: str, spec_b: str, rules: RuleOptions, seed: int, chunk_pairs: int,
                      max_turns: int) -> dict:
    from ..bots.spec import model_file_path

    # A network's file is part of the match: a checkpoint (or exported model) replaced under the same path
    # is another bot.
    files = {}
    for spec in (spec_a, spec_b):
        path = model_file_path(spec)
        if path is not None:
            files[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    identity = {"bot_a": spec_a, "bot_b": spec_b, "rules": rules.to_dict(), "seed": seed,
                "chunk_pairs": chunk_pairs, "max_turns": max_turns, "files": files}
    return json.loads(json.dumps(identity))  # as read back from match.json (tuples become lists)


def claim_directory(directory: Path, marker: str, identity: dict, others: str, error: type[Exception]) -> None:
    """Tie a directory of kept work to ``identity`` (JSON data), written to ``directory/marker`` when new.

    A directory another run wrote (its marker differs) or whose marker is
    unreadable is refused with ``error``, naming what differs, so kept work
    is reused only by the run that made it. ``others`` names that work.
    """
    path = directory / marker
    if path.is_file():
        try:
            found = json.loads(path.read_text())
        except (OSError, ValueError) as reason:
            raise error(f"{path}: unreadable ({reason}); delete {directory} to start afresh") from None
        if found != identity:
            changed = sorted(key for key in identity if found.get(key) != identity[key])
            raise error(f"{directory} holds {others} (different {', '.join(changed)}); "
                        f"use another directory or delete it")
    else:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(identity, indent=1) + "\n")


def _load_partial(directory: Path, identity: dict, jobs: list[tuple]) -> tuple[dict[int, GameRecords], float]:
    """The saved chunks of ``jobs`` under ``directory`` (created, with its match.json, when new), and the
    seconds they took to play."""
    claim_directory(directory, "match.json", identity, "chunks of another match", BotError)
    saved = {}
    seconds = 0.0
    for index, pairs, *_ in jobs:
        path = directory / f"chunk_{index:05d}_{pairs}.npz"
        if path.is_file():
            try:
                with np.load(path) as data:
                    records = GameRecords(*(data[name] for name in ("points_for_a", "a_won", "kind", "turns")))
                    took = float(data["seconds"])
            except (OSError, ValueError, KeyError) as error:
                raise BotError(f"{path}: unreadable chunk ({error}); delete it to play it again") from None
            if records.games != 2 * pairs:
                raise BotError(f"{path}: holds {records.games} games, want {2 * pairs}; delete it to play it again")
            saved[index] = records
            seconds += took
    return saved, seconds


def _save_chunk(directory: Path, index: int, records: GameRecords, seconds: float) -> None:
    from ..net.atomic_files import atomic_write

    path = directory / f"chunk_{index:05d}_{records.games // 2}.npz"
    # Never a half-written chunk: a temporary file beside it, fsynced, renamed over it (removed on failure).
    atomic_write(path, lambda handle: np.savez(handle, points_for_a=records.points_for_a, a_won=records.a_won,
                                               kind=records.kind, turns=records.turns, seconds=np.float64(seconds)))


def run_match(spec_a: str, spec_b: str, rules: RuleOptions, games: int, seed: int = 1, workers: int = 1,
              chunk_pairs: int = DEFAULT_CHUNK_PAIRS, max_turns: int = 2000, progress: bool = True,
              desc: Optional[str] = None, ray_address: Optional[str] = None,
              partial: Optional[str | Path] = None, record_games: int = 0) -> MatchResult:
    """Play ``games`` (rounded up to whole pairs) of bot A against bot B; see the module docstring.

    ``ray_address``: play the chunks on that Ray cluster (``auto``, ``host:port``, ``local``) instead of
    ``workers`` local processes; the result is the same. ``partial``: a directory keeping every finished
    chunk, from which a repeated call resumes (module docstring); ``seconds`` then adds the wall time the
    saved chunks took when they were played. ``record_games``: keep the moves of the first that many games
    (:meth:`MatchResult.write_games`; not with ``partial``, whose saved chunks hold results only).
    """
    from tqdm import tqdm

    if games < 2:
        raise BotError(f"games={games}: play at least one pair (2 games)")
    if workers < 1:
        raise BotError(f"workers={workers}: must be at least 1")
    check_and_warm_up((spec_a, spec_b), rules)  # a bad spec fails here, not in a worker; the compile is off the clock
    if record_games and partial is not None:
        raise BotError("--record-games cannot be used with --partial (saved chunks keep results, not moves)")
    pairs = math.ceil(games / 2)
    jobs = [(i, min(chunk_pairs, pairs - start), seed, max_turns)
            for i, start in enumerate(range(0, pairs, chunk_pairs))]
    if record_games > 0:  # chunk i records its games up to the match's game record_games
        jobs = [(*job, max(0, min(2 * job[1], record_games - 2 * chunk_pairs * job[0]))) for job in jobs]
    directory = Path(partial) if partial is not None else None
    parts: dict[int, GameRecords] = {}
    earlier_seconds = 0.0
    if directory is not None:
        parts, earlier_seconds = _load_partial(
            directory, _partial_identity(spec_a, spec_b, rules, seed, chunk_pairs, max_turns), jobs)
    bar = tqdm(total=2 * pairs, unit="game", disable=not progress, desc=desc or f"{spec_a} vs {spec_b}",
               dynamic_ncols=True, initial=sum(part.games for part in parts.values()))
    last_done = [time.perf_counter()]

    def done(index: int, records: GameRecords) -> None:
        parts[index] = records
        if directory is not None:
            now = time.perf_counter()
            _save_chunk(directory, index, records, now - last_done[0])  # wall time since the last chunk ended
            last_done[0] = now
        bar.update(records.games)

    start = time.perf_counter()
    remaining = [job for job in jobs if job[0] not in parts]
    try:
        if remaining:
            workers = play_jobs(_CHUNK_PLAYERS["games"], spec_a, spec_b, rules, remaining, workers, ray_address, done)
    finally:
        bar.close()
    seconds = time.perf_counter() - start + earlier_seconds
    records = GameRecords.concatenate([parts[i] for i in range(len(jobs))])
    return MatchResult(spec_a, spec_b, rules.name, seed, records, seconds, workers)


# -- with the cube: money play and matches -------------------------------------------------------------
def _play_cube_chunk(job: tuple[int, int, int, int, int]) -> tuple[int, CubeRecords]:
    index, pairs, seed, max_turns, match_length = job
    return index, play_cube_pairs(WORKER["rules"], WORKER["a"], WORKER["b"], pairs, [seed, index],
                                  match_length, max_turns)


_CHUNK_PLAYERS = {"games": _play_chunk, "cube": _play_cube_chunk}
"""How a worker plays one chunk of each kind (:func:`tapa_ai.arena.workers.play_jobs`)."""


@dataclass
class CubeMatchResult:
    """A's results against B with the cube: money play (``match_length`` 0) or ``slots`` matches to N."""

    bot_a: str
    bot_b: str
    variant: str
    seed: int
    records: CubeRecords
    seconds: float
    workers: int
    summary: dict = field(init=False)

    def __post_init__(self) -> None:
        self.summary = self.records.summary()

    @property
    def match_length(self) -> int:
        return self.records.match_length

    def to_dict(self) -> dict:
        head = {"bot_a": self.bot_a, "bot_b": self.bot_b, "variant": self.variant, "seed": self.seed,
                "cube": True if self.match_length == 0 else None}
        head = {key: value for key, value in head.items() if value is not None}
        speed = self.records.slots if self.match_length else self.summary["games"]
        rate_name = "matches_per_s" if self.match_length else "games_per_s"
        return {**head, **self.summary, "seconds": self.seconds, rate_name: speed / max(self.seconds, 1e-9),
                "workers": self.workers}

    def write(self, path: str | Path, csv_path: Optional[str | Path] = None) -> None:
        """The summary as JSON at ``path`` and one CSV row per game (default: ``path`` with ``.csv``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        csv_path = Path(csv_path) if csv_path else path.with_suffix(".csv")
        r = self.records
        with csv_path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["slot", "pair", "seat0", "game", "points_for_a", "a_won", "kind", "cube", "doubles",
                             "crawford", "turns", "match_a_won", "match_points_a", "match_points_b"])
            for row in range(r.kind.size):
                slot = int(r.slot[row])
                writer.writerow([slot, slot // 2, "A" if slot % 2 == 0 else "B", int(r.game[row]),
                                 f"{r.points_for_a[row]:g}", int(r.a_won[row]),
                                 KIND_NAMES[int(r.kind[row])] or "unfinished", int(r.cube[row]),
                                 int(r.doubles[row]), int(r.crawford[row]), int(r.turns[row]),
                                 int(r.match_a_won[slot]), int(r.match_points[slot, 0]),
                                 int(r.match_points[slot, 1])])

    def report(self) -> str:
        s = self.summary
        kinds = ", ".join(f"{kind} {n / max(s['games'], 1):.1%}" for kind, n in sorted(s["kinds"].items()) if n)
        cube = (f"  cube                   {s['doubles']} doubles ({s['passes']} passed), mean final cube "
                f"{s['mean_cube']:.2f}, highest {s['max_cube']}")
        if self.match_length:
            lines = [f"{self.bot_a} vs {self.bot_b} ({self.variant}, {s['matches']} matches to {self.match_length} "
                     f"in duplicate pairs, seed {self.seed})",
                     f"  A wins the match       {s['match_win_rate']:.1%}  95% CI [{s['match_win_ci95'][0]:.1%}, "
                     f"{s['match_win_ci95'][1]:.1%}]",
                     f"  games                  {s['games']} ({s['mean_games_per_match']:.2f} a match, "
                     f"{s['crawford_games']} Crawford games), points per game for A {s['ppg']:+.3f}"]
            speed = f"{self.records.slots / max(self.seconds, 1e-9):.1f} matches/s"
        else:
            lines = [f"{self.bot_a} vs {self.bot_b} ({self.variant}, {s['games']} money games with the cube in "
                     f"duplicate pairs, seed {self.seed})",
                     f"  points per game for A  {s['ppg']:+.3f}  95% CI [{s['ppg_ci95'][0]:+.3f}, "
                     f"{s['ppg_ci95'][1]:+.3f}]",
                     f"  A wins                 {s['win_rate']:.1%}  95% CI [{s['win_rate_ci95'][0]:.1%}, "
                     f"{s['win_rate_ci95'][1]:.1%}]"]
            speed = f"{s['games'] / max(self.seconds, 1e-9):.1f} games/s"
        lines += [f"  results                {kinds}" + (f", unfinished {s['unfinished']}" if s["unfinished"] else ""),
                  cube, f"  speed                  {speed} ({self.seconds:.1f} s, {self.workers} worker"
                  f"{'s' if self.workers > 1 else ''})"]
        return "\n".join(lines)


def run_cube_match(spec_a: str, spec_b: str, rules: RuleOptions, count: int, seed: int = 1, workers: int = 1,
                   match_length: int = 0, chunk_pairs: int = DEFAULT_CHUNK_PAIRS, max_turns: int = 2000,
                   progress: bool = True, desc: Optional[str] = None,
                   ray_address: Optional[str] = None) -> CubeMatchResult:
    """``count`` money games with the cube (``match_length`` 0) or matches to ``match_length``, in pairs.

    Chunk ``i`` of ``chunk_pairs`` pairs draws from ``default_rng([seed, i])``,
    so the result depends on the seed only, not on ``workers`` or ``ray_address``
    (the chunks as Ray tasks on that cluster).
    """
    from tqdm import tqdm

    from ..cube.met import MAX_MATCH_LENGTH

    if count < 2:
        raise BotError(f"{'matches' if match_length else 'games'}={count}: play at least one pair (2)")
    if workers < 1:
        raise BotError(f"workers={workers}: must be at least 1")
    if not (isinstance(match_length, int) and 0 <= match_length <= MAX_MATCH_LENGTH):
        raise BotError(f"match length {match_length!r}: must be 1..{MAX_MATCH_LENGTH} (0 for money play)")
    if match_length == 0 and not rules.cube:
        raise BotError(f"the rule set {rules.name!r} has no cube (option cube is off): money play with the cube "
                       "needs one; play matches (--match-length) or single games instead")
    check_and_warm_up((spec_a, spec_b), rules)
    pairs = math.ceil(count / 2)
    jobs = [(i, min(chunk_pairs, pairs - start), seed, max_turns, match_length)
            for i, start in enumerate(range(0, pairs, chunk_pairs))]
    parts: dict[int, CubeRecords] = {}
    unit = "match" if match_length else "game"
    bar = tqdm(total=2 * pairs, unit=unit, disable=not progress, desc=desc or f"{spec_a} vs {spec_b}",
               dynamic_ncols=True)
    def done(index: int, records: CubeRecords) -> None:
        parts[index] = records
        bar.update(records.slots)

    start = time.perf_counter()
    try:
        workers = play_jobs(_CHUNK_PLAYERS["cube"], spec_a, spec_b, rules, jobs, workers, ray_address, done)
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    records = CubeRecords.concatenate([parts[i] for i in range(len(jobs))])
    return CubeMatchResult(spec_a, spec_b, rules.name, seed, records, seconds, workers)
