"""Money play with the doubling cube, and matches to N points, in duplicate pairs, all played side by side.

The games of :func:`tapa_ai.arena.duels.play_pairs` (the game runner,
:mod:`tapa_ai.arena.runner`) with the cube added: before each roll (never on
the opener's first turn when it plays the opening dice), the side to roll
that may double (cube centred or its own, below 64, not the Crawford game)
is asked :meth:`~tapa_ai.bots.base.Bot.offer_double`;
a double goes to the other side's :meth:`~tapa_ai.bots.base.Bot.accept_double`:
a take doubles the cube and gives it to the taker, a pass ends the game with
the doubler winning the cube value before the double. Every result scores its
points times the cube (mother wins and backgammons too); a draw scores nothing.

**Money play** (``match_length`` 0): slot ``2i`` is one game with A moving
first, slot ``2i + 1`` the same dice with B moving first (as ``play_pairs``;
with both cubes passive the games are exactly ``play_pairs``'s, a test
checks it). **Match play**: slot ``2i`` is a match with A in seat 0, slot
``2i + 1`` the same dice with B in seat 0. Game ``g`` of either match uses
the dice of game ``g`` of its pair, and its opener is drawn once per pair and
game (the opening roll; the previous winner where ``next_game_opener`` is
``winner``: it rolls both dice afresh, so with ``use-opening-dice`` too its
first roll, unlike the opening dice, may be a double, drawn apart per pair and
game). The score moves by :meth:`tapa_ai.rules.cube.MatchScore.after_game`'s
rules: the game after a side first reaches ``N - 1`` is the Crawford game
(no doubling); a drawn game is replayed at the same score.
``tests/test_match_vs_flow.py`` replays seeded matches of every variant game
by game through the reference flow (:class:`tapa_ai.flow.match.MatchState`).

Everything is drawn from ``np.random.default_rng(seed)``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..bots.base import Bot
from ..cube.decisions import CubeSituation
from ..cube.equity import MAX_CUBE, OWNER_CENTRED, OWNER_MOVER, OWNER_OPPONENT
from ..movegen import PositionBatch
from ..rules import outcomes
from ..rules.options import RuleOptions
from ..rules.position import start_position
from .runner import GameRunner, Ply, deal_dice, mover_points
from .stats import concatenate_slot_records, match_win_rate, mean_ci

KIND_PASS = len(outcomes.RESULT_KINDS)
"""Result code of a game ended by a passed double (after the move generator's codes 0..5)."""
KIND_NAMES = outcomes.RESULT_KINDS + ("pass",)
"""Names of the result codes; 0 (None) is an unfinished game."""

MAX_GAMES_PER_MATCH = 200
"""A match still running after this many games (draws only) is abandoned as unfinished."""

_PASSIVE = Bot()


@dataclass
class CubeRecords:
    """Per-game and per-slot records of :func:`play_cube_pairs` (slot ``2i``: A first / in seat 0)."""

    match_length: int
    # -- one entry per game played --
    slot: np.ndarray
    """(G,) slot of each game."""
    game: np.ndarray
    """(G,) game number within its slot's match, from 0."""
    points_for_a: np.ndarray
    """(G,) points A won in the game, the cube included (negative: lost)."""
    a_won: np.ndarray
    kind: np.ndarray
    """(G,) result code (:data:`KIND_NAMES`; 0 = unfinished)."""
    turns: np.ndarray
    cube: np.ndarray
    """(G,) the cube's value at the end."""
    doubles: np.ndarray
    """(G,) doubles offered in the game (taken ones, plus a passed one)."""
    crawford: np.ndarray
    """(G,) bool: the game was the Crawford game."""
    # -- one entry per slot --
    match_a_won: np.ndarray
    """(S,) bool: A won the match (money play: A won the game)."""
    match_points: np.ndarray
    """(S, 2) final points of (A, B)."""
    match_unfinished: np.ndarray
    """(S,) bool."""

    @property
    def slots(self) -> int:
        return int(self.match_a_won.shape[0])

    @staticmethod
    def concatenate(parts: "list[CubeRecords]") -> "CubeRecords":
        return concatenate_slot_records(parts)

    def summary(self) -> dict:
        """The results: points per game (money) or match wins (matches), with 95% CIs over the pairs."""
        pairs = self.slots // 2
        kinds = Counter({KIND_NAMES[code] or "unfinished": int(n)
                         for code, n in zip(*np.unique(self.kind, return_counts=True))})
        games = int(self.kind.size)
        doubles = int(self.doubles.sum())
        passes = int((self.kind == KIND_PASS).sum())
        out = {"games": games, "kinds": {name: kinds.get(name, 0) for name in KIND_NAMES[1:] if name},
               "doubles": doubles, "takes": doubles - passes, "passes": passes,
               "mean_cube": float(self.cube.mean()) if games else 0.0,
               "max_cube": int(self.cube.max()) if games else 1,
               "mean_turns": float(self.turns.mean()) if games else 0.0}
        points = self.points_for_a
        if self.match_length == 0:
            per_pair = points.reshape(pairs, 2).mean(axis=1)
            ppg, ppg_ci = mean_ci(per_pair)
            win_rate, win_ci = mean_ci(self.a_won.reshape(pairs, 2).mean(axis=1).astype(np.float64))
            out.update(ppg=ppg, ppg_ci95=list(ppg_ci), win_rate=win_rate,
                       win_rate_ci95=[max(0.0, win_ci[0]), min(1.0, win_ci[1])],
                       unfinished=int((self.kind == 0).sum()))
            return out
        rate, rate_ci = match_win_rate(self.match_a_won, self.match_unfinished)
        ppg, ppg_ci = mean_ci(np.bincount(self.slot // 2, weights=points, minlength=pairs)
                               / np.maximum(np.bincount(self.slot // 2, minlength=pairs), 1))
        out.update(match_length=self.match_length, matches=self.slots, pairs=pairs, match_win_rate=rate,
                   match_win_ci95=rate_ci,
                   mean_games_per_match=games / max(self.slots, 1),
                   crawford_games=int(self.crawford.sum()), ppg=ppg, ppg_ci95=list(ppg_ci),
                   unfinished=int(self.match_unfinished.sum()))
        return out


def _cube_bot(player) -> Bot:
    """The bot's cube decisions, or the passive cube for a plain policy function."""
    return player if hasattr(player, "offer_double") else _PASSIVE


def play_cube_pairs(rules: RuleOptions, bot_a, bot_b, pairs: int, seed, match_length: int = 0,
                    max_turns: int = 2000) -> CubeRecords:
    """Play ``2 * pairs`` money games (``match_length`` 0) or matches to ``match_length`` with the cube.

    ``bot_a``, ``bot_b``: bots (or plain policy functions, which play the
    passive cube). See the module docstring for pairing, dice and openers.
    """
    if not (isinstance(match_length, int) and match_length >= 0):
        raise ValueError(f"match_length {match_length!r}: must be an integer >= 0 (0 for money play)")
    games = _CubeGames(rules, bot_a, bot_b, pairs, np.random.default_rng(seed), match_length, max_turns)
    games.run()
    return games.records()


class _CubeGames(GameRunner):
    """The games of :func:`play_cube_pairs` on the game runner: slot ``2i`` has A first (money) or in seat 0
    (matches); the cube before each roll (:meth:`before_roll`), the score and the match's next game after each
    game (:meth:`after_step`)."""

    def __init__(self, rules: RuleOptions, bot_a, bot_b, pairs: int, rng: np.random.Generator, match_length: int,
                 max_turns: int) -> None:
        slots = 2 * pairs
        super().__init__((bot_a, bot_b), rng, slots, max_turns)
        self.rules, self.pairs, self.match_length, self.max_turns = rules, pairs, match_length, max_turns
        self.money = match_length == 0
        self.cubes = (_cube_bot(bot_a), _cube_bot(bot_b))
        self.template = PositionBatch.from_positions([start_position(rules, "X")])
        self.pair = np.arange(slots) // 2
        self.seat0_is_a = np.arange(slots) % 2 == 0
        self.dice_tables = np.zeros((0, pairs, max_turns, 2), dtype=np.int8)  # [game number, pair, turn]
        self.opener_bits: list[np.ndarray] = []
        # deal_dice makes every first roll a non-double (the opening dice); a previous winner opening the next
        # game rolls both dice afresh, doubles included: with both rules, its first roll comes from here.
        self.free_first = not self.money and rules.opening == "use-opening-dice" and rules.next_game_opener == "winner"
        self.free_first_rolls: list[np.ndarray] = []
        # Per-slot state (the turns of its game are the runner's plies).
        self.game_no = np.zeros(slots, dtype=np.int64)
        self.cube_value = np.ones(slots, dtype=np.int64)
        self.cube_owner = np.zeros(slots, dtype=np.int8)  # 0 centred, 1 A, 2 B
        self.doubles = np.zeros(slots, dtype=np.int64)
        self.points = np.zeros((slots, 2), dtype=np.int64)  # (A, B)
        self.crawford_game = np.zeros(slots, dtype=bool)
        self.post_crawford = np.zeros(slots, dtype=bool)
        self.match_unfinished = np.zeros(slots, dtype=bool)
        # The opener plays the opening dice (no double on its first turn) unless it rolls both dice afresh.
        self.opening_dice = np.full(slots, rules.opening == "use-opening-dice")
        self.kept: dict[str, list] = {name: [] for name in ("slot", "game", "points_for_a", "a_won", "kind", "turns",
                                                            "cube", "doubles", "crawford")}
        self.ended: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        """(slots, points for A, result codes) of the games ended in this step, in the order they ended."""
        self.ensure_game(0)
        a_moves = self.seat0_is_a.copy()
        if not self.money:
            a_moves = np.where(self.opener_bits[0][self.pair], self.seat0_is_a, ~self.seat0_is_a)
        self.start(np.arange(slots), self.template.take(np.zeros(slots, dtype=np.int64)), a_moves)

    def ensure_game(self, number: int) -> None:
        """Deal the dice (and openers) of every pair's games up to game ``number``, drawn when first needed."""
        added = []
        while self.dice_tables.shape[0] + len(added) <= number:
            added.append(deal_dice(self.rules, self.rng, self.pairs, self.max_turns))
            if not self.money:
                self.opener_bits.append(self.rng.random(self.pairs) < 0.5)  # True: seat 0 opens
            if self.free_first:
                self.free_first_rolls.append(self.rng.integers(1, 7, size=(self.pairs, 2)).astype(np.int8))
        if added:
            self.dice_tables = np.concatenate([self.dice_tables, np.stack(added)])

    # -- the cube, before the roll -----------------------------------------------------------------------
    def situation(self, rows: np.ndarray) -> CubeSituation:
        """The cube (and score) at ``rows`` of the batch, from the side to roll."""
        slots = self.games[rows]
        a_moves = self.mover_is_a[slots]
        mover_id = np.where(a_moves, 1, 2)
        owner = self.cube_owner[slots]
        relative = np.where(owner == 0, OWNER_CENTRED, np.where(owner == mover_id, OWNER_MOVER, OWNER_OPPONENT))
        relative = relative.astype(np.int8)
        if self.money:
            return CubeSituation(self.rules, self.cube_value[slots].copy(), relative)
        mover_points = np.where(a_moves, self.points[slots, 0], self.points[slots, 1])
        other_points = np.where(a_moves, self.points[slots, 1], self.points[slots, 0])
        return CubeSituation(self.rules, self.cube_value[slots].copy(), relative, self.match_length,
                             self.match_length - mover_points, self.match_length - other_points,
                             self.post_crawford[slots].copy(), self.crawford_game[slots].copy())

    def ask(self, rows: np.ndarray, method: str, who_is_a: np.ndarray) -> np.ndarray:
        """(len(rows),) bool answers of the bots to ``method`` on ``rows`` of the batch; ``who_is_a``: A answers."""
        answer = np.zeros(rows.size, dtype=bool)
        for is_a, bot in ((True, self.cubes[0]), (False, self.cubes[1])):
            part = np.flatnonzero(who_is_a == is_a)
            if part.size:
                answer[part] = getattr(bot, method)(self.positions.take(rows[part]), self.situation(rows[part]),
                                                    self.rng)
        return answer

    def before_roll(self) -> Optional[np.ndarray]:
        """The side to roll that may double is asked, the other side answers; returns the rows passed."""
        if not self.rules.cube:
            return None
        s = self.games
        a_moves = self.mover_is_a[s]
        mover_id = np.where(a_moves, 1, 2)
        may = ((self.cube_value[s] < MAX_CUBE) & ~self.crawford_game[s]
               & ((self.cube_owner[s] == 0) | (self.cube_owner[s] == mover_id)))
        may &= (self.plies[s] > 0) | ~self.opening_dice[s]
        may &= self.positions.stage[:, 0] == 0  # a cascade's later stage has no roll to double before
        rows = np.flatnonzero(may)
        if not rows.size:
            return None
        offered = rows[self.ask(rows, "offer_double", a_moves[rows])]
        if not offered.size:
            return None
        taken = self.ask(offered, "accept_double", ~a_moves[offered])
        self.doubles[s[offered]] += 1
        takers = s[offered[taken]]
        self.cube_value[takers] *= 2
        self.cube_owner[takers] = np.where(self.mover_is_a[takers], 2, 1)
        passed = offered[~taken]
        if passed.size:  # the doubler wins the cube's value before the double
            won = self.cube_value[s[passed]]
            self.ended.append((s[passed], np.where(a_moves[passed], won, -won), np.full(passed.size, KIND_PASS)))
        return passed

    # -- the roll and the move ------------------------------------------------------------------------------
    def dice(self) -> np.ndarray:
        slots = self.games
        for number in np.unique(self.game_no[slots]).tolist():
            self.ensure_game(int(number))
        dice = self.dice_tables[self.game_no[slots], self.pair[slots], self.plies[slots]]
        if self.free_first:
            fresh = np.flatnonzero((self.plies[slots] == 0) & ~self.opening_dice[slots])  # a previous winner opens
            for row in fresh.tolist():
                dice[row] = self.free_first_rolls[int(self.game_no[slots[row]])][self.pair[slots[row]]]
        return dice

    def game_over(self, ply: Ply, rows: np.ndarray) -> None:
        kind, points = mover_points(ply.afterstates, ply.chosen[rows])
        slots = ply.games[rows]
        value = points * self.cube_value[slots]
        self.ended.append((slots, np.where(ply.mover_is_a[rows], value, -value), kind.astype(np.int64)))

    def unfinished(self, rows: np.ndarray) -> None:
        """Abandoned: the game (money) or the match."""
        slots = self.games[rows]
        self.ended.append((slots, np.zeros(slots.size, dtype=np.int64), np.zeros(slots.size, dtype=np.int64)))
        self.match_unfinished[slots] = not self.money

    # -- games that ended -----------------------------------------------------------------------------------
    def after_step(self) -> None:
        """Record the games that ended in this step; in matches, score them and start the next games."""
        if not self.ended:
            return
        slots, a_points, kinds = (np.concatenate(parts) for parts in zip(*self.ended))
        self.ended = []
        self.keep_records(slots, a_points, kinds)
        if self.money:
            return
        following, winner_is_a, decisive = self.score(slots, a_points, kinds)
        if following.size:
            self.start_next_games(following, winner_is_a, decisive)

    def keep_records(self, slots: np.ndarray, a_points: np.ndarray, kinds: np.ndarray) -> None:
        kept = self.kept
        kept["slot"].append(slots)
        kept["game"].append(self.game_no[slots].copy())
        kept["points_for_a"].append(a_points.astype(np.float64))
        kept["a_won"].append(a_points > 0)
        kept["kind"].append(kinds.astype(np.int8))
        kept["turns"].append(self.plies[slots].copy())
        kept["cube"].append(self.cube_value[slots].copy())
        kept["doubles"].append(self.doubles[slots].copy())
        kept["crawford"].append(self.crawford_game[slots].copy())

    def score(self, slots: np.ndarray, a_points: np.ndarray, kinds: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Add the ended games' points to their matches; returns the slots whose match goes on, whether A won
        the game each just played, and whether it was decided (not a draw)."""
        finished_game = kinds > 0
        self.points[slots, 0] += np.where(a_points > 0, a_points, 0)
        self.points[slots, 1] += np.where(a_points < 0, -a_points, 0)
        match_over = (self.points[slots] >= self.match_length).any(axis=1) | ~finished_game
        too_long = self.game_no[slots] + 1 >= MAX_GAMES_PER_MATCH
        self.match_unfinished[slots[too_long & ~match_over]] = True
        go_on = finished_game & ~match_over & ~too_long
        return slots[go_on], a_points[go_on] > 0, a_points[go_on] != 0

    def start_next_games(self, following: np.ndarray, winner_is_a: np.ndarray, decisive: np.ndarray) -> None:
        """The next game of each continuing match: Crawford, a centred cube, its opener; after the games going on."""
        # Crawford: the game after the winner first reaches length - 1 (docs/rules.md 5).
        self.post_crawford[following] |= self.crawford_game[following]
        winner_points = np.where(winner_is_a, self.points[following, 0], self.points[following, 1])
        self.crawford_game[following] = ((self.rules.crawford and self.match_length >= 2)
                                         & ~self.post_crawford[following] & decisive
                                         & (winner_points == self.match_length - 1))
        self.game_no[following] += 1
        self.cube_value[following] = 1
        self.cube_owner[following] = 0
        self.doubles[following] = 0
        for number in np.unique(self.game_no[following]).tolist():
            self.ensure_game(int(number))
        seat0_opens = np.array([self.opener_bits[g][p] for g, p in zip(self.game_no[following].tolist(),
                                                                       self.pair[following].tolist())], dtype=bool)
        a_opens = np.where(seat0_opens, self.seat0_is_a[following], ~self.seat0_is_a[following])
        if self.rules.next_game_opener == "winner":
            # The winner of the previous game opens, rolling both dice (a draw: an opening roll).
            a_opens = np.where(decisive, winner_is_a, a_opens)
            self.opening_dice[following] = (self.rules.opening == "use-opening-dice") & ~decisive
        self.start(following, self.template.take(np.zeros(following.size, dtype=np.int64)), a_opens)

    # -- the records ----------------------------------------------------------------------------------------
    def records(self) -> CubeRecords:
        """Every game's record, sorted by slot and game (they were kept in the order games ended)."""
        slots = 2 * self.pairs
        arrays = {name: (np.concatenate(values) if values else np.zeros(0)) for name, values in self.kept.items()}
        order = np.lexsort((arrays["game"], arrays["slot"]))
        arrays = {name: values[order] for name, values in arrays.items()}
        if self.money:
            match_a_won = np.zeros(slots, dtype=bool)
            match_points = np.zeros((slots, 2), dtype=np.int64)
            slot_of = arrays["slot"].astype(np.int64)
            match_a_won[slot_of] = arrays["a_won"]
            a_pts = arrays["points_for_a"].astype(np.int64)
            match_points[slot_of, 0] = np.where(a_pts > 0, a_pts, 0)
            match_points[slot_of, 1] = np.where(a_pts < 0, -a_pts, 0)
        else:
            match_a_won = (self.points[:, 0] >= self.match_length) & ~self.match_unfinished
            match_points = self.points
        return CubeRecords(
            self.match_length, arrays["slot"].astype(np.int64), arrays["game"].astype(np.int64),
            arrays["points_for_a"].astype(np.float64), arrays["a_won"].astype(bool), arrays["kind"].astype(np.int8),
            arrays["turns"].astype(np.int64), arrays["cube"].astype(np.int64), arrays["doubles"].astype(np.int64),
            arrays["crawford"].astype(bool), match_a_won, match_points, self.match_unfinished,
        )


def cube_duel(rules: RuleOptions, bot_a, bot_b, pairs: int, seed, match_length: int = 0,
              max_turns: int = 2000) -> dict:
    """:func:`play_cube_pairs` and its summary."""
    return play_cube_pairs(rules, bot_a, bot_b, pairs, seed, match_length, max_turns).summary()

