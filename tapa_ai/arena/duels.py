"""Paired-dice duels between two policies, all games of a batch played side by side (the game runner,
:mod:`tapa_ai.arena.runner`).

Games come in pairs with the same dice, one with A moving first, one with B
moving first, so luck cancels out between the two (duplicate play). Points
per game for A come with a 95% confidence interval computed over the pairs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..bots.basic import choose_pipcount
from ..movegen import PositionBatch
from ..movegen.choice import choose_random
from ..rules import outcomes
from ..rules.options import RuleOptions
from ..rules.position import start_position
from .runner import DealtDice, GameRunner, Ply, Policy, deal_dice, mover_points
from .stats import mean_ci

__all__ = ["DuelResult", "GameRecords", "Policy", "duel", "pipcount_policy", "play_pairs",
           "random_policy"]


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
        ppg, ppg_ci = mean_ci(per_pair_points)
        win_rate, win_ci = mean_ci(per_pair_wins)
        win_ci = (max(0.0, win_ci[0]), min(1.0, win_ci[1]))  # a rate's interval stays within [0, 1]
        kinds = Counter({outcomes.RESULT_KINDS[code]: int(n)
                         for code, n in zip(*np.unique(self.kind[self.kind > 0], return_counts=True))})
        return DuelResult(self.games, ppg, ppg_ci, win_rate, win_ci, kinds, int((self.kind == 0).sum()))


def play_pairs(rules: RuleOptions, policy_a: Policy, policy_b: Policy, pairs: int, seed,
               max_turns: int = 2000, starts: Optional[PositionBatch] = None, record: int = 0) -> GameRecords:
    """Play ``2 * pairs`` games of A against B with paired dice, all side by side; per-game records.

    Game ``2i`` has A moving first, game ``2i + 1`` has B moving first, and
    both see the same dice at every turn (:func:`~tapa_ai.arena.runner.deal_dice`). Everything is
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
    runner = _Duel(policy_a, policy_b, rng, games, max_turns, DealtDice(dice_table, np.arange(games) // 2), record)
    runner.start(np.arange(games), batch, np.arange(games) % 2 == 0)
    runner.run()
    return GameRecords(runner.points_for_a, runner.a_won, runner.kind, runner.plies, runner.histories)


class _Duel(GameRunner):
    """The games of :func:`play_pairs`: each game's result for A, and the moves of the recorded games."""

    def __init__(self, policy_a: Policy, policy_b: Policy, rng, games: int, max_turns: int, dice: DealtDice,
                 record: int) -> None:
        super().__init__((policy_a, policy_b), rng, games, max_turns, dice)
        self.points_for_a = np.zeros(games)
        self.a_won = np.zeros(games, dtype=bool)
        self.kind = np.zeros(games, dtype=np.int8)
        self.histories = [[] for _ in range(min(record, games))] if record > 0 else None

    def after_choice(self, ply: Ply) -> None:
        """Append this turn's (side, dice, move text) to the histories of the recorded games still running."""
        if self.histories is None:
            return
        for k in np.flatnonzero(ply.games < len(self.histories)).tolist():
            self.histories[int(ply.games[k])].append(
                (int(ply.positions.turn[k]), (int(ply.dice[k, 0]), int(ply.dice[k, 1])),
                 ply.afterstates.move_text(int(ply.chosen[k]))))

    def game_over(self, ply: Ply, rows: np.ndarray) -> None:
        games = ply.games[rows]
        kind, points = mover_points(ply.afterstates, ply.chosen[rows])
        self.kind[games] = kind
        mover_is_a = ply.mover_is_a[rows]
        points = points.astype(np.float64)
        self.points_for_a[games] = np.where(mover_is_a, points, -points)
        self.a_won[games] = mover_is_a & (kind != outcomes.RESULT_DRAW)


def duel(rules: RuleOptions, policy_a: Policy, policy_b: Policy, pairs: int, seed: int,
         max_turns: int = 2000) -> DuelResult:
    """Play ``2 * pairs`` games of A against B with paired dice (:func:`play_pairs`); returns A's results."""
    return play_pairs(rules, policy_a, policy_b, pairs, seed, max_turns).summary()
