"""A rotation's matches (docs/rules.md 9, 10.4: Tavli, Tabla or any rotation) between two players in duplicate pairs:
``tapa-ai match A B --tavli N``, ``--tabla N``, ``--rotation GAMES --length N``.

Slot ``2i`` is a match with A in seat 0, slot ``2i + 1`` the same dice with
B in seat 0. The matches are played game by game, all slots side by side on
the game runner (:mod:`tapa_ai.arena.runner`): game ``g`` (from 0) of every
match still going is game ``g % len(rotation)`` of the rotation (a drawn game also
moves the rotation on, so every match's game ``g`` is of the same variant),
played by each side's bot for that variant. Per game and pair the dice are
dealt once (:func:`~tapa_ai.arena.runner.deal_dice`) and an opening roll is
drawn (True: seat 0 opens); the first game, and a game after a draw, opens by
that roll, any other by the previous game's winner. In a game whose rules play
the opening dice (backgammon's and Tapa's ``use-opening-dice``) the opener
after an opening roll plays the dealt first roll (never a double), and a
winner opening instead rolls both dice afresh (a fresh roll per pair, doubles
included). Points are each game's own
rules' (:mod:`tapa_ai.flow.rotation`); no cube. Each side's bot chooses its moves
at the match's score (:meth:`~tapa_ai.bots.base.Bot.choose_at_score` with a
:class:`~tapa_ai.cube.rotation_met.RotationScore` of the rotation's match equity table):
a network bot by match-winning chances, unless ``,money_play``; a plain
policy function as always. A game still going after
``max_turns`` turns leaves its match unfinished (half a win to each side).
``tests/test_tavli_vs_flow.py`` replays seeded matches game by game through the reference
flow (:class:`tapa_ai.flow.rotation.RotationMatch`).

Everything is drawn from ``np.random.default_rng(seed)``.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from ..bots.base import BotError
from ..cube.rotation_met import RotationScore, check_match_length, rotation_met
from ..rules.rotations import Rotation
from ..movegen import PositionBatch
from ..rules import outcomes
from ..rules.position import start_position
from .runner import DealtDice, GameRunner, Ply, choose_by_mover, deal_dice, mover_points
from .stats import concatenate_slot_records, match_win_rate
from .workers import WORKER, play_jobs, warm_up

__all__ = ["RotationRecords", "RotationMatchResult", "play_rotation_pairs", "run_rotation_match"]

MAX_GAMES_PER_MATCH = 200
"""A match still running after this many games is abandoned as unfinished."""
DEFAULT_CHUNK_PAIRS = 25


@dataclass
class RotationRecords:
    """Per-game and per-slot records of :func:`play_rotation_pairs` (slot ``2i``: A in seat 0)."""

    rotation: Rotation
    match_length: int
    # -- one entry per game played --
    slot: np.ndarray
    """(G,) slot of each game."""
    game: np.ndarray
    """(G,) game number within its match, from 0 (its variant: ``rotation.variant(game + 1)``)."""
    points_for_a: np.ndarray
    """(G,) points A won in the game (negative: lost; 0: draw or unfinished)."""
    a_won: np.ndarray
    kind: np.ndarray
    """(G,) result code of ``outcomes.RESULT_KINDS`` (0 = unfinished)."""
    turns: np.ndarray
    a_opened: np.ndarray
    """(G,) bool: A moved first."""
    # -- one entry per slot --
    match_a_won: np.ndarray
    match_points: np.ndarray
    """(S, 2) final points of (A, B)."""
    match_unfinished: np.ndarray

    @property
    def slots(self) -> int:
        return int(self.match_a_won.shape[0])

    def variants(self) -> list[str]:
        """The variant of each game."""
        return [self.rotation.variant(int(g) + 1) for g in self.game]

    @staticmethod
    def concatenate(parts: "list[RotationRecords]") -> "RotationRecords":
        return concatenate_slot_records(parts)

    def summary(self) -> dict:
        """Match wins with a 95% CI over the pairs, points, and the games' results per variant."""
        pairs = self.slots // 2
        rate, rate_ci = match_win_rate(self.match_a_won, self.match_unfinished)
        games = int(self.kind.size)
        per_variant = {}
        variants = np.asarray(self.variants(), dtype=object)
        for variant in self.rotation.distinct:
            mask = variants == variant
            kinds = Counter(outcomes.RESULT_KINDS[int(code)] or "unfinished" for code in self.kind[mask])
            per_variant[variant] = {"games": int(mask.sum()), "a_wins": int(self.a_won[mask].sum()),
                                    "points_for_a": float(self.points_for_a[mask].sum()), "kinds": dict(kinds)}
        return {"match_length": self.match_length, "matches": self.slots, "pairs": pairs, "match_win_rate": rate,
                "match_win_ci95": rate_ci, "games": games,
                "mean_games_per_match": games / max(self.slots, 1),
                "points_a": int(self.match_points[:, 0].sum()), "points_b": int(self.match_points[:, 1].sum()),
                "draws": int((self.kind == outcomes.RESULT_DRAW).sum()), "variants": per_variant,
                "unfinished": int(self.match_unfinished.sum())}


def play_rotation_pairs(players_a: dict, players_b: dict, pairs: int, seed, match_length: int, rotation: Rotation,
                        max_turns: int = 2000) -> RotationRecords:
    """Play ``2 * pairs`` matches of ``rotation`` to ``match_length`` (module docstring).

    ``players_a``, ``players_b``: variant -> policy (a bot, or a function ``(afterstates, rng) -> rows``).
    """
    if isinstance(match_length, bool) or not isinstance(match_length, int) or match_length < 1:
        raise ValueError(f"match_length {match_length!r}: must be an integer >= 1")
    rng = np.random.default_rng(seed)
    slots = 2 * pairs
    pair = np.arange(slots) // 2
    seat0_is_a = np.arange(slots) % 2 == 0
    points = np.zeros((slots, 2), dtype=np.int64)  # (A, B)
    last_winner_is_a = np.zeros(slots, dtype=np.int8)  # 1 A won the last game, -1 B, 0 none (first game, a draw)
    playing = np.ones(slots, dtype=bool)
    unfinished = np.zeros(slots, dtype=bool)
    kept: dict[str, list] = {name: [] for name in ("slot", "game", "points_for_a", "a_won", "kind", "turns",
                                                    "a_opened")}
    number = 0
    while playing.any():
        if number >= MAX_GAMES_PER_MATCH:
            unfinished |= playing
            break
        rules = rotation.rules(number + 1)
        variant = rules.name
        dice_table = deal_dice(rules, rng, pairs, max_turns)
        seat0_opens = rng.random(pairs) < 0.5  # the opening roll, drawn for every pair and game
        by_roll = np.where(seat0_opens[pair], seat0_is_a, ~seat0_is_a)
        winner_opens = last_winner_is_a != 0
        a_opens = np.where(winner_opens, last_winner_is_a == 1, by_roll)
        slot_dice = dice_table[pair]  # (slots, turns, 2): the two matches of a pair may open differently
        if rules.opening == "use-opening-dice":
            # deal_dice's first roll is the opening dice (never a double), which the opener plays after an opening
            # roll; the previous game's winner opening rolls both dice afresh, doubles included.
            fresh = rng.integers(1, 7, size=(pairs, 2)).astype(np.int8)
            slot_dice[winner_opens, 0] = fresh[pair[winner_opens]]
        games = np.flatnonzero(playing)
        runner = _RotationGame((players_a[variant], players_b[variant]), rng, slots, max_turns,
                               DealtDice(slot_dice, np.arange(slots)), match_length - points, number,
                               rotation_met(rotation))
        template = PositionBatch.from_positions([start_position(rules, "X")])
        runner.start(games, template.take(np.zeros(games.size, dtype=np.int64)), a_opens[games])
        runner.run()
        a_won = runner.a_won[games]
        won = runner.points[games]
        kind = runner.kind[games]
        points[games, 0] += np.where(a_won, won, 0)
        points[games, 1] += np.where(~a_won, won, 0)
        decided = (kind != 0) & (kind != outcomes.RESULT_DRAW)
        last_winner_is_a[games] = np.where(decided, np.where(a_won, 1, -1), 0)
        stuck = games[kind == 0]
        unfinished[stuck] = True
        for name, value in (("slot", games), ("game", np.full(games.size, number)),
                            ("points_for_a", np.where(a_won, won, -won).astype(np.float64)), ("a_won", a_won),
                            ("kind", kind), ("turns", runner.plies[games].copy()), ("a_opened", a_opens[games])):
            kept[name].append(value)
        playing &= ~unfinished & (points.max(axis=1) < match_length)
        number += 1
    values = {name: (np.concatenate(parts) if parts else np.zeros(0)) for name, parts in kept.items()}
    order = np.lexsort((values["game"], values["slot"]))  # by slot, then game
    values = {name: value[order] for name, value in values.items()}
    match_a_won = ~unfinished & (points[:, 0] >= match_length)
    return RotationRecords(rotation, match_length, values["slot"].astype(np.int64), values["game"].astype(np.int64),
                        values["points_for_a"], values["a_won"].astype(bool), values["kind"].astype(np.int8),
                        values["turns"].astype(np.int64), values["a_opened"].astype(bool), match_a_won, points,
                        unfinished)


class _RotationGame(GameRunner):
    """One game (``number``, from 0) of every match still going, played at each match's score (``away``:
    (S, 2) what A and B still need): who won, how, and the points."""

    def __init__(self, players, rng, slots: int, max_turns: int, dice: DealtDice, away: np.ndarray,
                 number: int, table) -> None:
        super().__init__(players, rng, slots, max_turns, dice)
        self.away = away.copy()
        self.number = number
        self.table = table
        self.points = np.zeros(slots, dtype=np.int64)
        self.a_won = np.zeros(slots, dtype=bool)
        self.kind = np.zeros(slots, dtype=np.int8)

    def choose(self, afterstates, mover_is_a: np.ndarray) -> np.ndarray:
        away = self.away[self.games]
        mover = np.where(mover_is_a, away[:, 0], away[:, 1])
        other = np.where(mover_is_a, away[:, 1], away[:, 0])
        score = RotationScore(self.table, mover, other, self.number)
        players = tuple(_at_score(player, score.take(np.flatnonzero(mask)))
                        for player, mask in zip(self.players, (mover_is_a, ~mover_is_a)))
        return choose_by_mover(afterstates, mover_is_a, *players, self.rng)

    def game_over(self, ply: Ply, rows: np.ndarray) -> None:
        games = ply.games[rows]
        kind, points = mover_points(ply.afterstates, ply.chosen[rows])
        self.kind[games] = kind
        self.points[games] = points
        self.a_won[games] = ply.mover_is_a[rows] & (kind != outcomes.RESULT_DRAW)


def _at_score(player, score: RotationScore):
    """``player`` as a policy choosing at ``score`` (its :meth:`~tapa_ai.bots.base.Bot.choose_at_score`; a plain
    policy function as it is)."""
    at_score = getattr(player, "choose_at_score", None)
    if at_score is None:
        return player
    return lambda afterstates, rng: at_score(afterstates, rng, score)


# -- over processes ----------------------------------------------------------------------------------
def _play_rotation_chunk(job: tuple) -> tuple[int, RotationRecords]:
    index, pairs, seed, max_turns, match_length = job
    return index, play_rotation_pairs(WORKER["a"].players, WORKER["b"].players, pairs, [seed, index], match_length,
                                      WORKER["rules"], max_turns)


@dataclass
class RotationMatchResult:
    """A's results against B over ``records.slots`` matches of ``records.rotation`` to ``records.match_length``."""

    bot_a: str
    bot_b: str
    seed: int
    records: RotationRecords
    seconds: float
    workers: int
    summary: dict = field(init=False)

    def __post_init__(self) -> None:
        self.summary = self.records.summary()

    def to_dict(self) -> dict:
        rotation = self.records.rotation
        return {"bot_a": self.bot_a, "bot_b": self.bot_b, "rotation": rotation.to_data(),
                "rotation_games": list(rotation.variants),
                "seed": self.seed, **self.summary, "seconds": self.seconds,
                "matches_per_s": self.records.slots / max(self.seconds, 1e-9), "workers": self.workers}

    def write(self, path: str | Path, csv_path: Optional[str | Path] = None) -> None:
        """The summary as JSON at ``path`` and one CSV row per game, its variant and result (default: ``path``
        with ``.csv``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        csv_path = Path(csv_path) if csv_path else path.with_suffix(".csv")
        r = self.records
        with csv_path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["slot", "pair", "seat0", "game", "variant", "first", "points_for_a", "a_won", "kind",
                             "turns", "match_a_won", "match_points_a", "match_points_b"])
            for row, variant in enumerate(r.variants()):
                slot = int(r.slot[row])
                writer.writerow([slot, slot // 2, "A" if slot % 2 == 0 else "B", int(r.game[row]), variant,
                                 "A" if r.a_opened[row] else "B", f"{r.points_for_a[row]:g}", int(r.a_won[row]),
                                 outcomes.RESULT_KINDS[int(r.kind[row])] or "unfinished", int(r.turns[row]),
                                 int(r.match_a_won[slot]), int(r.match_points[slot, 0]),
                                 int(r.match_points[slot, 1])])

    def report(self) -> str:
        s = self.summary
        rotation = self.records.rotation
        lines = [f"{self.bot_a} vs {self.bot_b} ({rotation.name.capitalize()}: {', '.join(rotation.variants)} in turn; "
                 f"{s['matches']} matches to {s['match_length']} in duplicate pairs, seed {self.seed})",
                 f"  A wins the match       {s['match_win_rate']:.1%}  95% CI [{s['match_win_ci95'][0]:.1%}, "
                 f"{s['match_win_ci95'][1]:.1%}]",
                 f"  points                 A {s['points_a']}, B {s['points_b']} over {s['games']} games "
                 f"({s['mean_games_per_match']:.2f} a match, {s['draws']} drawn)"]
        for variant, part in s["variants"].items():
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(part["kinds"].items()))
            lines.append(f"  {variant:<22} {part['games']} games, A won {part['a_wins']}, points for A "
                         f"{part['points_for_a']:+g} ({kinds or 'none'})")
        if s["unfinished"]:
            lines.append(f"  unfinished matches     {s['unfinished']}")
        lines.append(f"  speed                  {s['matches'] / max(self.seconds, 1e-9):.2f} matches/s "
                     f"({self.seconds:.1f} s, {self.workers} worker{'s' if self.workers > 1 else ''})")
        return "\n".join(lines)


def check_and_warm_up(specs, rotation: Rotation) -> None:
    """Build each player of ``specs`` for ``rotation`` (a bad spec fails here, with its message) and warm up its
    bots."""
    from ..bots.rotation import make_rotation_player

    for spec in dict.fromkeys(specs):
        player = make_rotation_player(spec, rotation)
        try:
            for variant, bot in player.players.items():
                warm_up(bot, rotation.rules_of(variant))
        finally:
            player.close()


def run_rotation_match(spec_a: str, spec_b: str, rotation: Rotation, match_length: int, count: int, seed: int = 1,
                       workers: int = 1, chunk_pairs: int = DEFAULT_CHUNK_PAIRS, max_turns: int = 2000,
                       progress: bool = True, ray_address: Optional[str] = None) -> RotationMatchResult:
    """``count`` matches of ``rotation`` to ``match_length`` (rounded up to whole pairs) of A against B.

    Chunk ``i`` of ``chunk_pairs`` pairs draws from ``default_rng([seed, i])``, so the result depends on the seed
    only, not on ``workers`` or ``ray_address``.
    """
    from tqdm import tqdm

    if count < 2:
        raise BotError(f"matches={count}: play at least one pair (2)")
    if workers < 1:
        raise BotError(f"workers={workers}: must be at least 1")
    check_match_length(match_length, f"{rotation.name} match length {match_length!r}", BotError)
    check_and_warm_up((spec_a, spec_b), rotation)
    pairs = math.ceil(count / 2)
    jobs = [(i, min(chunk_pairs, pairs - start), seed, max_turns, match_length)
            for i, start in enumerate(range(0, pairs, chunk_pairs))]
    parts: dict[int, RotationRecords] = {}
    bar = tqdm(total=2 * pairs, unit="match", disable=not progress, desc=f"{spec_a} vs {spec_b}",
               dynamic_ncols=True)

    def done(index: int, records: RotationRecords) -> None:
        parts[index] = records
        bar.update(records.slots)

    start = time.perf_counter()
    try:
        workers = play_jobs(_play_rotation_chunk, spec_a, spec_b, rotation, jobs, workers, ray_address, done)
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    records = RotationRecords.concatenate([parts[i] for i in range(len(jobs))])
    return RotationMatchResult(spec_a, spec_b, seed, records, seconds, workers)
