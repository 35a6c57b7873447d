"""Money play with the doubling cube, and matches to N points, in duplicate pairs, all played side by side.

The loop of :func:`tapa_ai.arena.duels.play_pairs` with the cube added:
before each roll (never on the opener's first turn when it plays the opening
dice), the side to roll that may double (cube centred or its own, below 64,
not the Crawford game) is asked :meth:`~tapa_ai.bots.base.Bot.offer_double`;
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

import numpy as np

from ..bots.base import Bot
from ..bots.cube import CubeSituation
from ..cube.equity import MAX_CUBE, OWNER_CENTRED, OWNER_MOVER, OWNER_OPPONENT
from ..movegen import PositionBatch, generate
from ..rules import outcomes
from ..movegen.batch import concatenate
from ..rules.options import RuleOptions
from ..rules.position import start_position
from .runner import deal_dice
from .stats import mean_ci

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
        offset, slots = 0, []
        for part in parts:
            slots.append(part.slot + offset)
            offset += part.slots
        names = ("game", "points_for_a", "a_won", "kind", "turns", "cube", "doubles", "crawford",
                 "match_a_won", "match_points", "match_unfinished")
        values = {name: np.concatenate([getattr(part, name) for part in parts]) for name in names}
        return CubeRecords(parts[0].match_length, np.concatenate(slots), **values)

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
        # An unfinished match counts as half a win to each side.
        score = np.where(self.match_unfinished, 0.5, self.match_a_won.astype(np.float64))
        rate, ci = mean_ci(score.reshape(pairs, 2).mean(axis=1))
        ppg, ppg_ci = mean_ci(np.bincount(self.slot // 2, weights=points, minlength=pairs)
                               / np.maximum(np.bincount(self.slot // 2, minlength=pairs), 1))
        out.update(match_length=self.match_length, matches=self.slots, pairs=pairs, match_win_rate=rate,
                   match_win_ci95=[max(0.0, ci[0]), min(1.0, ci[1])],
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
    rng = np.random.default_rng(seed)
    slots = 2 * pairs
    money = match_length == 0
    players = (bot_a, bot_b)
    cubes = (_cube_bot(bot_a), _cube_bot(bot_b))
    template = PositionBatch.from_positions([start_position(rules, "X")])
    pair = np.arange(slots) // 2
    seat0_is_a = np.arange(slots) % 2 == 0

    dice_tables = np.zeros((0, pairs, max_turns, 2), dtype=np.int8)  # [game number, pair, turn]
    opener_bits: list[np.ndarray] = []
    # deal_dice makes every first roll a non-double (the opening dice); a previous winner opening the next
    # game rolls both dice afresh, doubles included: with both rules, its first roll comes from here.
    free_first = not money and rules.opening == "use-opening-dice" and rules.next_game_opener == "winner"
    free_first_rolls: list[np.ndarray] = []

    def ensure_game(number: int) -> None:
        nonlocal dice_tables
        added = []
        while dice_tables.shape[0] + len(added) <= number:
            added.append(deal_dice(rules, rng, pairs, max_turns))
            if not money:
                opener_bits.append(rng.random(pairs) < 0.5)  # True: seat 0 opens
            if free_first:
                free_first_rolls.append(rng.integers(1, 7, size=(pairs, 2)).astype(np.int8))
        if added:
            dice_tables = np.concatenate([dice_tables, np.stack(added)])

    # Per-slot state.
    game_no = np.zeros(slots, dtype=np.int64)
    turn_no = np.zeros(slots, dtype=np.int64)
    a_moves = seat0_is_a.copy()
    cube_value = np.ones(slots, dtype=np.int64)
    cube_owner = np.zeros(slots, dtype=np.int8)  # 0 centred, 1 A, 2 B
    doubles = np.zeros(slots, dtype=np.int64)
    points = np.zeros((slots, 2), dtype=np.int64)  # (A, B)
    crawford_game = np.zeros(slots, dtype=bool)
    post_crawford = np.zeros(slots, dtype=bool)
    match_unfinished = np.zeros(slots, dtype=bool)
    # The opener plays the opening dice (no double on its first turn) unless it rolls both dice afresh.
    opening_dice = np.full(slots, rules.opening == "use-opening-dice")
    records: dict[str, list] = {name: [] for name in ("slot", "game", "points_for_a", "a_won", "kind", "turns",
                                                       "cube", "doubles", "crawford")}

    ensure_game(0)
    if not money:
        a_moves = np.where(opener_bits[0][pair], seat0_is_a, ~seat0_is_a)
    running = np.arange(slots)
    batch = template.take(np.zeros(slots, dtype=np.int64))

    def record(ended: np.ndarray, a_points: np.ndarray, kinds: np.ndarray) -> None:
        records["slot"].append(ended)
        records["game"].append(game_no[ended].copy())
        records["points_for_a"].append(a_points.astype(np.float64))
        records["a_won"].append(a_points > 0)
        records["kind"].append(kinds.astype(np.int8))
        records["turns"].append(turn_no[ended].copy())
        records["cube"].append(cube_value[ended].copy())
        records["doubles"].append(doubles[ended].copy())
        records["crawford"].append(crawford_game[ended].copy())

    def situation(rows: np.ndarray) -> CubeSituation:
        slots_here = running[rows]
        mover_id = np.where(a_moves[slots_here], 1, 2)
        owner = cube_owner[slots_here]
        relative = np.where(owner == 0, OWNER_CENTRED, np.where(owner == mover_id, OWNER_MOVER, OWNER_OPPONENT))
        relative = relative.astype(np.int8)
        if money:
            return CubeSituation(rules, cube_value[slots_here].copy(), relative)
        mover_points = np.where(a_moves[slots_here], points[slots_here, 0], points[slots_here, 1])
        other_points = np.where(a_moves[slots_here], points[slots_here, 1], points[slots_here, 0])
        return CubeSituation(rules, cube_value[slots_here].copy(), relative, match_length,
                             match_length - mover_points, match_length - other_points,
                             post_crawford[slots_here].copy(), crawford_game[slots_here].copy())

    def ask(rows: np.ndarray, method: str, who_is_a: np.ndarray) -> np.ndarray:
        """(len(rows),) bool answers of the bots to ``method`` on ``rows`` of the batch; ``who_is_a``: A answers."""
        answer = np.zeros(rows.size, dtype=bool)
        for is_a, bot in ((True, cubes[0]), (False, cubes[1])):
            part = np.flatnonzero(who_is_a == is_a)
            if part.size:
                answer[part] = getattr(bot, method)(batch.take(rows[part]), situation(rows[part]), rng)
        return answer

    while running.size:
        ended_rows: list[np.ndarray] = []  # rows of the batch whose game ended this step
        ended_a_points: list[np.ndarray] = []
        ended_kind: list[np.ndarray] = []
        # -- the cube, before the roll --
        if rules.cube:
            s = running
            mover_id = np.where(a_moves[s], 1, 2)
            may = ((cube_value[s] < MAX_CUBE) & ~crawford_game[s]
                   & ((cube_owner[s] == 0) | (cube_owner[s] == mover_id)))
            may &= (turn_no[s] > 0) | ~opening_dice[s]
            rows = np.flatnonzero(may)
            if rows.size:
                offered = rows[ask(rows, "offer_double", a_moves[s[rows]])]
                if offered.size:
                    taken = ask(offered, "accept_double", ~a_moves[s[offered]])
                    doubles[s[offered]] += 1
                    takers = offered[taken]
                    cube_value[s[takers]] *= 2
                    cube_owner[s[takers]] = np.where(a_moves[s[takers]], 2, 1)
                    passed = offered[~taken]
                    if passed.size:
                        won = cube_value[s[passed]]
                        ended_rows.append(passed)
                        ended_a_points.append(np.where(a_moves[s[passed]], won, -won))
                        ended_kind.append(np.full(passed.size, KIND_PASS))
        passed_rows = np.concatenate(ended_rows) if ended_rows else np.zeros(0, dtype=np.int64)
        playing = np.setdiff1d(np.arange(running.size), passed_rows)
        # -- the roll and the move --
        continuing = np.zeros(0, dtype=np.int64)
        next_positions = None
        if playing.size:
            sp = running[playing]
            for number in np.unique(game_no[sp]).tolist():
                ensure_game(int(number))
            dice = dice_tables[game_no[sp], pair[sp], turn_no[sp]]
            if free_first:
                fresh = np.flatnonzero((turn_no[sp] == 0) & ~opening_dice[sp])  # a previous winner opens
                for row in fresh.tolist():
                    dice[row] = free_first_rolls[int(game_no[sp[row]])][pair[sp[row]]]
            sub = batch.take(playing)
            afterstates = generate(sub, dice)
            chosen = np.empty(playing.size, dtype=np.int64)
            mask_a = a_moves[sp]
            for mask, player in ((mask_a, players[0]), (~mask_a, players[1])):
                index = np.flatnonzero(mask)
                if index.size:
                    part = afterstates.of_sources(index)
                    chosen[index] = afterstates.offsets[index] + (player(part, rng) - part.offsets[:-1])
            turn_no[sp] += 1
            over = afterstates.game_over[chosen]
            ended = np.flatnonzero(over)
            if ended.size:
                rows_ = chosen[ended]
                decided = afterstates.result_kind[rows_] != outcomes.RESULT_DRAW
                value = afterstates.result_points[rows_].astype(np.int64) * cube_value[sp[ended]] * decided
                ended_rows.append(playing[ended])
                ended_a_points.append(np.where(a_moves[sp[ended]], value, -value))
                ended_kind.append(afterstates.result_kind[rows_].astype(np.int64))
            keep = np.flatnonzero(~over)
            stuck = keep[turn_no[sp[keep]] >= max_turns]
            if stuck.size:  # unfinished: the game (money) or the match is abandoned
                ended_rows.append(playing[stuck])
                ended_a_points.append(np.zeros(stuck.size, dtype=np.int64))
                ended_kind.append(np.zeros(stuck.size, dtype=np.int64))
                match_unfinished[sp[stuck]] = not money
                keep = keep[turn_no[sp[keep]] < max_turns]
            continuing = playing[keep]
            next_positions = afterstates.positions.take(chosen[keep]).flipped()
            a_moves[sp[keep]] = ~a_moves[sp[keep]]
        # -- games that ended --
        new_games = np.zeros(0, dtype=np.int64)
        if ended_rows:
            rows_all = np.concatenate(ended_rows)
            a_points = np.concatenate(ended_a_points)
            kinds = np.concatenate(ended_kind)
            slots_ended = running[rows_all]
            record(slots_ended, a_points, kinds)
            if not money:
                finished_game = kinds > 0
                gained_a = np.where(a_points > 0, a_points, 0)
                gained_b = np.where(a_points < 0, -a_points, 0)
                points[slots_ended, 0] += gained_a
                points[slots_ended, 1] += gained_b
                match_over = (points[slots_ended] >= match_length).any(axis=1) | ~finished_game
                too_long = game_no[slots_ended] + 1 >= MAX_GAMES_PER_MATCH
                match_unfinished[slots_ended[too_long & ~match_over]] = True
                go_on = finished_game & ~match_over & ~too_long
                following = slots_ended[go_on]
                winner_is_a = a_points[go_on] > 0
                decisive = a_points[go_on] != 0
                # Crawford: the game after the winner first reaches length - 1 (RULES.md 5).
                was_crawford = crawford_game[following].copy()
                post_crawford[following] |= was_crawford
                winner_points = np.where(winner_is_a, points[following, 0], points[following, 1])
                crawford_game[following] = (rules.crawford and match_length >= 2) & ~post_crawford[following] \
                    & decisive & (winner_points == match_length - 1)
                # The next game of each continuing match.
                game_no[following] += 1
                turn_no[following] = 0
                cube_value[following] = 1
                cube_owner[following] = 0
                doubles[following] = 0
                for number in np.unique(game_no[following]).tolist():
                    ensure_game(int(number))
                seat0_opens = np.array([opener_bits[g][p] for g, p in zip(game_no[following].tolist(),
                                                                          pair[following].tolist())], dtype=bool)
                a_opens = np.where(seat0_opens, seat0_is_a[following], ~seat0_is_a[following])
                if rules.next_game_opener == "winner":
                    # The winner of the previous game opens, rolling both dice (a draw: an opening roll).
                    a_opens = np.where(decisive, winner_is_a, a_opens)
                    opening_dice[following] = (rules.opening == "use-opening-dice") & ~decisive
                a_moves[following] = a_opens
                new_games = following
        # -- the next step's batch: games going on, then new games --
        parts, order = [], []
        if next_positions is not None and continuing.size:
            parts.append(next_positions)
            order.append(running[continuing])
        if new_games.size:
            parts.append(template.take(np.zeros(new_games.size, dtype=np.int64)))
            order.append(new_games)
        if not parts:
            break
        batch = parts[0] if len(parts) == 1 else concatenate(parts)
        running = np.concatenate(order)

    arrays = {name: (np.concatenate(values) if values else np.zeros(0)) for name, values in records.items()}
    # The records come out in the order games ended; sort them by slot and game.
    order = np.lexsort((arrays["game"], arrays["slot"]))
    arrays = {name: values[order] for name, values in arrays.items()}
    if money:
        match_a_won = np.zeros(slots, dtype=bool)
        match_points = np.zeros((slots, 2), dtype=np.int64)
        slot_of = arrays["slot"].astype(np.int64)
        match_a_won[slot_of] = arrays["a_won"]
        a_pts = arrays["points_for_a"].astype(np.int64)
        match_points[slot_of, 0] = np.where(a_pts > 0, a_pts, 0)
        match_points[slot_of, 1] = np.where(a_pts < 0, -a_pts, 0)
    else:
        match_a_won = (points[:, 0] >= match_length) & ~match_unfinished
        match_points = points
    return CubeRecords(
        match_length, arrays["slot"].astype(np.int64), arrays["game"].astype(np.int64),
        arrays["points_for_a"].astype(np.float64), arrays["a_won"].astype(bool), arrays["kind"].astype(np.int8),
        arrays["turns"].astype(np.int64), arrays["cube"].astype(np.int64), arrays["doubles"].astype(np.int64),
        arrays["crawford"].astype(bool), match_a_won, match_points, match_unfinished,
    )


def cube_duel(rules: RuleOptions, bot_a, bot_b, pairs: int, seed, match_length: int = 0,
              max_turns: int = 2000) -> dict:
    """:func:`play_cube_pairs` and its summary."""
    return play_cube_pairs(rules, bot_a, bot_b, pairs, seed, match_length, max_turns).summary()

