"""Paired-dice duels between two policies, all games of a batch played side by side.

Games come in pairs with the same dice, one with A moving first, one with B
moving first, so luck cancels out between the two (duplicate play). Points
per game for A come with a 95% confidence interval computed over the pairs.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..bots.basic import choose_pipcount
from ..movegen import PositionBatch, generate
from ..movegen.choice import choose_random
from ..rules import outcomes
from ..rules.options import RuleOptions
from ..rules.position import start_position

Policy = Callable[[object, np.random.Generator], np.ndarray]
"""(afterstates, rng) -> (B,) chosen afterstate rows, one per source position."""


def random_policy(afterstates, rng):
    return choose_random(afterstates, rng)


def pipcount_policy(afterstates, rng):
    return choose_pipcount(afterstates, rng)


@dataclass
class DuelResult:
    """What A scored against B."""

    games: int
    ppg: float
    """A's mean points per game."""
    ppg_ci95: tuple[float, float]
    win_rate: float
    """A's wins / games (draws are not wins)."""
    win_rate_ci95: tuple[float, float]
    kinds: Counter = field(default_factory=Counter)
    """How the games ended (single, gammon, backgammon, mother, draw)."""
    unfinished: int = 0

    def summary(self) -> dict:
        return {"games": self.games, "ppg": self.ppg, "ppg_ci95": list(self.ppg_ci95), "win_rate": self.win_rate,
                "win_rate_ci95": list(self.win_rate_ci95), "kinds": dict(self.kinds), "unfinished": self.unfinished}


def _mean_ci(per_pair: np.ndarray) -> tuple[float, tuple[float, float]]:
    mean = float(per_pair.mean())
    if per_pair.size < 2:
        return mean, (-math.inf, math.inf)
    half = 1.96 * float(per_pair.std(ddof=1)) / math.sqrt(per_pair.size)
    return mean, (mean - half, mean + half)


@dataclass
class GameRecords:
    """Per-game outcomes of paired games: game ``2i`` has A moving first, ``2i + 1`` B; arrays of length games."""

    points_for_a: np.ndarray
    """(G,) float: points A won (negative: lost; 0: draw or unfinished)."""
    a_won: np.ndarray
    """(G,) bool."""
    kind: np.ndarray
    """(G,) int8 result code of ``tapa_ai.movegen.outcomes.RESULT_KINDS`` (0 = unfinished)."""
    turns: np.ndarray
    """(G,) int: turns played."""
    histories: Optional[list] = None
    """The moves of the first games, when recorded (``play_pairs(record=N)``): per game a list of
    (side code 0 = X / 1 = O, dice, move text), X moving first."""

    @property
    def games(self) -> int:
        return int(self.points_for_a.shape[0])

    @staticmethod
    def concatenate(parts: "list[GameRecords]") -> "GameRecords":
        joined = GameRecords(*(np.concatenate([getattr(part, name) for part in parts])
                               for name in ("points_for_a", "a_won", "kind", "turns")))
        if any(part.histories is not None for part in parts):  # each part records a prefix of its games
            joined.histories = [history for part in parts for history in part.histories or []]
        return joined

    def summary(self) -> DuelResult:
        """Points per game with a 95% CI over the duplicate pairs, win rate, result kinds."""
        pairs = self.games // 2
        per_pair_points = self.points_for_a.reshape(pairs, 2).mean(axis=1)
        per_pair_wins = self.a_won.reshape(pairs, 2).mean(axis=1).astype(np.float64)
        ppg, ppg_ci = _mean_ci(per_pair_points)
        win_rate, win_ci = _mean_ci(per_pair_wins)
        win_ci = (max(0.0, win_ci[0]), min(1.0, win_ci[1]))  # a rate's interval stays within [0, 1]
        kinds = Counter({outcomes.RESULT_KINDS[code]: int(n)
                         for code, n in zip(*np.unique(self.kind[self.kind > 0], return_counts=True))})
        return DuelResult(self.games, ppg, ppg_ci, win_rate, win_ci, kinds, int((self.kind == 0).sum()))


def deal_dice(rules: RuleOptions, rng: np.random.Generator, pairs: int, max_turns: int) -> np.ndarray:
    """(pairs, max_turns, 2) int8 dice of every pair and turn; a first roll with opening dice is no double."""
    dice_table = rng.integers(1, 7, size=(pairs, max_turns, 2)).astype(np.int8)
    if rules.opening == "use-opening-dice":
        first = dice_table[:, 0]
        while True:
            doubles = first[:, 0] == first[:, 1]
            if not doubles.any():
                break
            first[doubles] = rng.integers(1, 7, size=(int(doubles.sum()), 2))
    return dice_table


def play_pairs(rules: RuleOptions, policy_a: Policy, policy_b: Policy, pairs: int, seed,
               max_turns: int = 2000, starts: Optional[PositionBatch] = None, record: int = 0) -> GameRecords:
    """Play ``2 * pairs`` games of A against B with paired dice, all side by side; per-game records.

    Game ``2i`` has A moving first, game ``2i + 1`` has B moving first, and
    both see the same dice at every turn (:func:`deal_dice`). Everything is
    drawn from ``np.random.default_rng(seed)`` (``seed`` an int or a list of ints).
    Both games of pair ``i`` start from ``starts[i]`` when given (``pairs``
    positions, the side to move first as the position says; no opening-roll
    rule then), else from the variant's starting position. ``record``: keep the moves of the first
    ``record`` games (:attr:`GameRecords.histories`; the same games are played either way).
    """
    rng = np.random.default_rng(seed)
    games = 2 * pairs
    if starts is None:
        dice_table = deal_dice(rules, rng, pairs, max_turns)
        batch = PositionBatch.from_positions([start_position(rules, "X")]).take(np.zeros(games, dtype=np.int64))
    else:
        if len(starts) != pairs:
            raise ValueError(f"starts: {len(starts)} positions for {pairs} pairs")
        dice_table = deal_dice(rules.replace(opening="reroll"), rng, pairs, max_turns)
        batch = starts.take(np.repeat(np.arange(pairs), 2))
    pair = np.arange(games) // 2
    a_moves = (np.arange(games) % 2 == 0)  # whose turn it is, per running game
    points_for_a = np.zeros(games)
    a_won = np.zeros(games, dtype=bool)
    kind = np.zeros(games, dtype=np.int8)
    turns = np.zeros(games, dtype=np.int64)
    running = np.arange(games)
    histories = [[] for _ in range(min(record, games))] if record > 0 else None
    turn = 0
    while running.size and turn < max_turns:
        dice = dice_table[pair[running], turn]
        afterstates = generate(batch, dice)
        chosen = np.empty(running.size, dtype=np.int64)
        mask_a = a_moves[running]
        for mask, policy in ((mask_a, policy_a), (~mask_a, policy_b)):
            index = np.flatnonzero(mask)
            if index.size:
                part = afterstates.of_sources(index)
                # Rows of the subset -> rows of the whole batch.
                chosen[index] = afterstates.offsets[index] + (policy(part, rng) - part.offsets[:-1])
        if histories is not None:
            _record_turn(histories, running, batch, dice, afterstates, chosen)
        turns[running] += 1
        over = afterstates.game_over[chosen]
        ended = np.flatnonzero(over)
        if ended.size:
            rows, games_ended = chosen[ended], running[ended]
            kind[games_ended] = afterstates.result_kind[rows]
            mover_is_a = a_moves[games_ended]
            decided = afterstates.result_kind[rows] != outcomes.RESULT_DRAW
            points = afterstates.result_points[rows].astype(np.float64) * decided
            points_for_a[games_ended] = np.where(mover_is_a, points, -points)
            a_won[games_ended] = mover_is_a & decided
        keep = np.flatnonzero(~over)
        batch = afterstates.positions.take(chosen[keep]).flipped()
        running = running[keep]
        a_moves[running] = ~a_moves[running]
        turn += 1
    return GameRecords(points_for_a, a_won, kind, turns, histories)


def _record_turn(histories: list, running: np.ndarray, batch: PositionBatch, dice: np.ndarray, afterstates,
                 chosen: np.ndarray) -> None:
    """Append this turn's (side, dice, move text) to the histories of the recorded games still running."""
    for k in np.flatnonzero(running < len(histories)).tolist():
        histories[int(running[k])].append((int(batch.turn[k]), (int(dice[k, 0]), int(dice[k, 1])),
                                           afterstates.move_text(int(chosen[k]))))


def duel(rules: RuleOptions, policy_a: Policy, policy_b: Policy, pairs: int, seed: int,
         max_turns: int = 2000) -> DuelResult:
    """Play ``2 * pairs`` games of A against B with paired dice (:func:`play_pairs`); returns A's results."""
    return play_pairs(rules, policy_a, policy_b, pairs, seed, max_turns).summary()
