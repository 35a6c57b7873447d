"""What cascading doubles are worth (docs/rules.md 10.2): how many cascades a game has, how many stages and steps
each plays, and how often one decides the game.

:func:`cascade_stats` plays games between two bots with the arena's runner and watches every ply: a **cascade**
is a double rolled after the roller's plain turns (its first stage) with the stages the same side plays after it;
a game is **decided by a cascade** when the winner took the lead in the race for the last time (its pip count
below the loser's, never to fall behind again) on a stage of one of its own cascades. ``scripts/cascade_stats.py``
is the command.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..bots.basic import pip_counts
from ..movegen import PositionBatch
from ..rules import outcomes
from ..rules.options import RuleOptions
from ..rules.position import start_position
from ..rules.turns import is_cascade_roll
from .runner import DealtDice, GameRunner, Ply, Policy, deal_dice
from .stats import mean_ci

__all__ = ["CascadeStats", "cascade_stats"]


@dataclass
class CascadeStats:
    """Counts over the finished games of :func:`cascade_stats`."""

    games: int = 0
    unfinished: int = 0
    decided: int = 0
    """Games whose winner took the lead for good on a stage of its own cascade."""
    cascades: int = 0
    stages: Counter = field(default_factory=Counter)
    """Cascades by how many stages they played (a stage not played in full counts; one that was never reached
    does not)."""
    steps: int = 0
    """Steps played in cascades, all stages."""
    per_game: list = field(default_factory=list)
    """Cascades in each finished game."""
    decided_games: list = field(default_factory=list)
    """Per finished game: 1 when decided by a cascade, else 0."""

    def summary(self) -> dict:
        stages = sum(count * n for count, n in self.stages.items())
        decided, decided_ci = mean_ci(np.asarray(self.decided_games, dtype=np.float64))
        per_game, per_game_ci = mean_ci(np.asarray(self.per_game, dtype=np.float64))
        return {
            "games": self.games, "unfinished": self.unfinished,
            "decided_by_a_cascade": decided, "decided_by_a_cascade_ci": list(decided_ci),
            "cascades_per_game": per_game, "cascades_per_game_ci": list(per_game_ci),
            "stages_per_cascade": stages / max(self.cascades, 1),
            "steps_per_cascade": self.steps / max(self.cascades, 1),
            "cascades_by_stages": {str(k): v for k, v in sorted(self.stages.items())},
        }


class _Watch(GameRunner):
    """The games of :func:`cascade_stats`, with every ply's race and cascade stage kept per game."""

    def __init__(self, rules: RuleOptions, players, rng, games: int, max_plies: int, dice) -> None:
        super().__init__(players, rng, games, max_plies, dice)
        self.rules = rules
        self.stats = CascadeStats()
        self.leads: list[list[tuple[int, int, bool]]] = [[] for _ in range(games)]
        """Per slot, per ply: (mover colour, X's pips minus O's after the move, the ply was a stage of one of the
        mover's cascades)."""
        self.stages_played = np.full(games, -1, dtype=np.int64)
        """Per slot: stages played of the cascade going on, -1 when none is."""
        self.cascades_in_game = np.zeros(games, dtype=np.int64)

    def after_choice(self, ply: Ply) -> None:
        positions, chosen = ply.positions, ply.chosen
        staged = positions.stage[:, 0] > 0
        first = np.array([not s and is_cascade_roll(self.rules, int(t), d)
                          for s, t, d in zip(staged, positions.turns[:, 0].tolist(), ply.dice.tolist())], dtype=bool)
        in_cascade = first | (staged & (positions.stage[:, 2] == 0))  # a remainder is not the mover's cascade
        after = ply.afterstates.positions.take(chosen)
        pips = pip_counts(after)  # (mover, opponent)
        x_minus_o = np.where(after.turn == 0, pips[:, 0] - pips[:, 1], pips[:, 1] - pips[:, 0])
        steps = ply.afterstates.n_steps[chosen]
        goes_on = ply.afterstates.same_side[chosen] & ~ply.over & (after.stage[:, 0] > 0) & (after.stage[:, 2] == 0)
        for row, slot in enumerate(ply.games.tolist()):
            self.leads[slot].append((int(after.turn[row]), int(x_minus_o[row]), bool(in_cascade[row])))
            if first[row]:
                self.stats.cascades += 1
                self.cascades_in_game[slot] += 1
                self.stages_played[slot] = 0
            if in_cascade[row]:
                self.stages_played[slot] += 1
                self.stats.steps += int(steps[row])
                if not goes_on[row]:
                    self.stats.stages[int(self.stages_played[slot])] += 1
                    self.stages_played[slot] = -1

    def game_over(self, ply: Ply, rows: np.ndarray) -> None:
        kinds = ply.afterstates.result_kind[ply.chosen[rows]]
        for row, kind in zip(rows.tolist(), kinds.tolist()):
            slot = int(ply.games[row])
            history = self.leads[slot]
            decided = 0
            if kind != outcomes.RESULT_DRAW:
                winner = int(ply.positions.turn[row])  # the side that made the last move won
                sign = -1 if winner == 0 else 1  # the winner's lead: the loser's pips minus its own
                lead_before, last_gain = 0, None
                for index, (_, x_minus_o, _) in enumerate(history):
                    lead = sign * x_minus_o
                    if lead_before <= 0 < lead:
                        last_gain = index
                    lead_before = lead
                if last_gain is not None:
                    mover, _, stage = history[last_gain]
                    decided = int(stage and mover == winner)
            self.stats.games += 1
            self.stats.decided += decided
            self.stats.decided_games.append(decided)
            self.stats.per_game.append(int(self.cascades_in_game[slot]))
            self._clear(slot)

    def unfinished(self, rows: np.ndarray) -> None:
        self.stats.unfinished += rows.size
        for row in rows.tolist():
            self._clear(int(self.games[row]))

    def _clear(self, slot: int) -> None:
        self.leads[slot] = []
        self.cascades_in_game[slot] = 0
        self.stages_played[slot] = -1


def cascade_stats(rules: RuleOptions, policy_a: Policy, policy_b: Policy, pairs: int, seed,
                  max_plies: int = 4000) -> CascadeStats:
    """Play ``2 * pairs`` games of A against B (paired dice, each side first in one game of a pair) and count
    their cascades (module docstring)."""
    rng = np.random.default_rng(seed)
    games = 2 * pairs
    dice_table = deal_dice(rules, rng, pairs, max_plies)
    batch = PositionBatch.from_positions([start_position(rules, "X")]).take(np.zeros(games, dtype=np.int64))
    runner = _Watch(rules, (policy_a, policy_b), rng, games, max_plies, DealtDice(dice_table, np.arange(games) // 2))
    runner.start(np.arange(games), batch, np.arange(games) % 2 == 0)
    runner.run()
    return runner.stats
