"""One batched game runner: many games stepped side by side, one ply at a time, a player per side.

Every batch game loop of the arena is this runner with its own hooks: duels
(:mod:`tapa_ai.arena.duels`), money and match play with the cube
(:mod:`tapa_ai.arena.cube_play`), rollouts (:mod:`tapa_ai.arena.rollout`) and
the benchmark's sampling games (:mod:`tapa_ai.arena.benchmark.sample`).
Self-play (:mod:`tapa_ai.training.selfplay`) shares its step functions.

A **ply** of :class:`GameRunner` (:meth:`GameRunner.step`), for the running
games in batch order:

1. :meth:`~GameRunner.before_roll`: games may end before the roll (a passed
   double, a rollout stopped at a bear-off or truncated);
2. :meth:`~GameRunner.dice`: the dice of each game (a dealt table, the
   rollout's rotated rolls, ...);
3. every legal afterstate is generated in one call, and each side's player
   chooses the rows of the games it moves in (:func:`choose_by_mover`: A's
   games first, then B's, on the runner's ``rng``), or one player all rows;
4. :meth:`~GameRunner.after_choice` sees the :class:`Ply` (recording, luck,
   sampling); :meth:`~GameRunner.game_over` the games whose move ended them;
5. the others go on from the chosen afterstates, turned to the next mover;
   a game that has now played ``max_plies`` plies is
   :meth:`~GameRunner.unfinished` and leaves the batch;
6. :meth:`~GameRunner.after_step`: new games may :meth:`~GameRunner.start`
   (the next game of a match), after the games going on.

Games are numbered by *slot* (``0..size-1``): the runner keeps per slot the
plies played and whether A moves, and a slot can start a new game once its
game ended. Everything a loop draws comes from the generators it gives, in
the order above, so a loop ported onto the runner plays the very same games.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union

import numpy as np

from ..movegen.batch import PositionBatch, concatenate
from ..movegen.generate import Afterstates, generate
from ..rules import outcomes
from ..rules.options import RuleOptions

Policy = Callable[[Afterstates, np.random.Generator], np.ndarray]
"""(afterstates, rng) -> (B,) chosen afterstate rows, one per source position."""


# -- step functions --------------------------------------------------------------------------------------
def reroll_opening_doubles(dice: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> None:
    """Draw the rolls ``dice[rows]`` that are doubles afresh, in place, until none is: an opening roll of two
    different dice (``use-opening-dice``). Each round draws the doubles left, in row order."""
    rows = rows[dice[rows, 0] == dice[rows, 1]]
    while rows.size:
        dice[rows] = rng.integers(1, 7, size=(rows.size, 2))
        rows = rows[dice[rows, 0] == dice[rows, 1]]


def deal_dice(rules: RuleOptions, rng: np.random.Generator, pairs: int, max_turns: int) -> np.ndarray:
    """(pairs, max_turns, 2) int8 dice of every pair and turn; a first roll with opening dice is no double."""
    dice_table = rng.integers(1, 7, size=(pairs, max_turns, 2)).astype(np.int8)
    if rules.opening == "use-opening-dice":
        reroll_opening_doubles(dice_table[:, 0], np.arange(pairs), rng)
    return dice_table


def choose_by_mover(afterstates: Afterstates, mover_is_a: np.ndarray, policy_a: Policy, policy_b: Policy,
                    rng: np.random.Generator) -> np.ndarray:
    """(B,) chosen rows of ``afterstates``: A's policy chooses for the positions A moves in (``mover_is_a``,
    (B,) bool), then B's for the others, each seeing only its own positions; their rows mapped back."""
    chosen = np.empty(len(mover_is_a), dtype=np.int64)
    for mask, policy in ((mover_is_a, policy_a), (~mover_is_a, policy_b)):
        index = np.flatnonzero(mask)
        if index.size:
            part = afterstates.of_sources(index)
            # Rows of the part -> rows of the whole batch.
            chosen[index] = afterstates.offsets[index] + (policy(part, rng) - part.offsets[:-1])
    return chosen


def mover_points(afterstates: Afterstates, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(result kind codes, int64 points won by the side that moved: 0 for a draw) of game-ending ``rows``."""
    kind = afterstates.result_kind[rows]
    return kind, afterstates.result_points[rows].astype(np.int64) * (kind != outcomes.RESULT_DRAW)


def next_positions(afterstates: Afterstates, chosen: np.ndarray) -> PositionBatch:
    """The positions after the ``chosen`` rows, seen from the side that decides next (the other side before its
    roll, or inside a cascade the mover itself, docs/rules.md 10.2)."""
    return afterstates.next_positions(chosen)


# -- the runner ------------------------------------------------------------------------------------------
@dataclass
class Ply:
    """One ply of the running games, as the hooks see it (R: games that rolled)."""

    games: np.ndarray
    """(R,) slots, in batch order."""
    positions: PositionBatch
    """(R,) positions before the roll, the mover's view."""
    dice: np.ndarray
    """(R, 2) the rolls (a position inside a cascade: its stage's ``[k, k]``)."""
    afterstates: Afterstates
    chosen: np.ndarray
    """(R,) int64 rows of ``afterstates`` played."""
    mover_is_a: np.ndarray
    """(R,) bool: A moved (with one player for both sides: the side that was to move first moved)."""
    over: np.ndarray
    """(R,) bool: the move ended the game."""


class GameRunner:
    """A batch of games stepped one ply at a time; see the module docstring. Subclasses override the hooks.

    ``players``: ``(policy_a, policy_b)``, each choosing for the games its side moves in, or one policy for
    every game (called once on the whole batch). ``rng``: the players' random choices. ``size``: slots.
    ``max_plies``: a game still going after this many plies is unfinished. ``dice``: the dice source,
    ``runner -> (R, 2)`` rolls of the running games (e.g. :class:`DealtDice`), unless :meth:`dice` is overridden.
    """

    def __init__(self, players: Union[Policy, tuple[Policy, Policy]], rng: np.random.Generator, size: int,
                 max_plies: int, dice: Optional[Callable[["GameRunner"], np.ndarray]] = None) -> None:
        self.players = players
        self.rng = rng
        self.max_plies = max_plies
        self.dice_source = dice
        self.games = np.zeros(0, dtype=np.int64)
        """(R,) slots of the running games, in batch order."""
        self.positions: Optional[PositionBatch] = None
        """(R,) the running games' positions before their roll, mover's view."""
        self.plies = np.zeros(size, dtype=np.int64)
        """(size,) plies played in each slot's game."""
        self.mover_is_a = np.zeros(size, dtype=bool)
        """(size,) A is to move in each slot's game."""
        self.ply = 0
        """Steps played so far."""

    # -- the loop ------------------------------------------------------------------------------------------
    def start(self, games: np.ndarray, positions: PositionBatch, a_moves: np.ndarray) -> None:
        """Start new games in ``games`` (slots) from ``positions`` (A moving first where ``a_moves``), after
        the running games in batch order."""
        self.plies[games] = 0
        self.mover_is_a[games] = a_moves
        if self.positions is None or not self.games.size:
            self.positions, self.games = positions, np.asarray(games, dtype=np.int64)
        else:
            self.positions = concatenate([self.positions, positions])
            self.games = np.concatenate([self.games, games])

    def run(self) -> None:
        """Step until no game is running."""
        while self.games.size:
            self.step()

    def step(self) -> None:
        """One ply of every running game (the module docstring's steps)."""
        stop = self.before_roll()
        if stop is not None and len(stop):
            self._drop(stop)
        if self.games.size:
            dice = self.dice()
            afterstates = generate(self.positions, dice)
            games = self.games
            mover_is_a = self.mover_is_a[games]
            chosen = self.choose(afterstates, mover_is_a)
            over = afterstates.game_over[chosen]
            self.plies[games] += 1
            # The dice each position was played with: a cascade's later stage plays its own [k, k], not the roll.
            ply = Ply(games, self.positions, afterstates.dice, afterstates, chosen, mover_is_a, over)
            self.after_choice(ply)
            ended = np.flatnonzero(over)
            if ended.size:
                self.game_over(ply, ended)
            keep = np.flatnonzero(~over)
            self.positions = next_positions(afterstates, chosen[keep])
            self.games = games[keep]
            # The other side moves next, but inside a cascade the same one (docs/rules.md 10.2).
            same = afterstates.same_side[chosen[keep]]
            self.mover_is_a[self.games] = np.where(same, self.mover_is_a[self.games], ~self.mover_is_a[self.games])
            stuck = np.flatnonzero(self.plies[self.games] >= self.max_plies)
            if stuck.size:
                self.unfinished(stuck)
                self._drop(stuck)
        self.after_step()
        self.ply += 1

    def choose(self, afterstates: Afterstates, mover_is_a: np.ndarray) -> np.ndarray:
        """(R,) int64 rows chosen by the players (:func:`choose_by_mover`, or the one player on all rows)."""
        if isinstance(self.players, tuple):
            return choose_by_mover(afterstates, mover_is_a, *self.players, self.rng)
        return np.asarray(self.players(afterstates, self.rng), dtype=np.int64)

    def _drop(self, rows: np.ndarray) -> None:
        """Take ``rows`` of the batch out of the running games (the others keep their order)."""
        keep = np.ones(self.games.size, dtype=bool)
        keep[rows] = False
        self.positions = self.positions.take(np.flatnonzero(keep))
        self.games = self.games[keep]

    # -- hooks -----------------------------------------------------------------------------------------------
    def before_roll(self) -> Optional[np.ndarray]:
        """Rows of the batch whose game ends before the roll (the hook records how); None: none."""
        return None

    def dice(self) -> np.ndarray:
        """(R, 2) the roll of every running game (by default the ``dice`` source's)."""
        return self.dice_source(self)

    def after_choice(self, ply: Ply) -> None:
        """Sees every ply once the moves are chosen (before the games that ended leave)."""

    def game_over(self, ply: Ply, rows: np.ndarray) -> None:
        """The games at ``rows`` of ``ply`` ended with their move (``ply.chosen[rows]`` hold the results)."""

    def unfinished(self, rows: np.ndarray) -> None:
        """The games at ``rows`` of the batch played ``max_plies`` plies without ending: they leave now
        (:attr:`positions` hold where they stand, :attr:`mover_is_a` who is to roll)."""

    def after_step(self) -> None:
        """The end of a ply: :meth:`start` new games here."""


class DealtDice:
    """Dice from a dealt table (:func:`deal_dice`): game ``g`` at its ply ``t`` rolls ``table[row_of[g], t]``."""

    def __init__(self, table: np.ndarray, row_of: np.ndarray) -> None:
        self.table, self.row_of = table, row_of

    def __call__(self, runner: GameRunner) -> np.ndarray:
        games = runner.games
        return self.table[self.row_of[games], runner.plies[games]]
