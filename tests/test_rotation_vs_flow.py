"""The arena's Tavli and Tabla matches (``play_rotation_pairs``) against the reference flow of a rotation's match,
game by game.

Every match the arena plays is replayed through :class:`tapa_ai.flow.rotation.RotationMatch` (the reference flow on
the reference move generator) with the same dice (rebuilt from the seed: the bots below draw nothing from the
generator, so the arena's draws are its dice and opening rolls alone) and the same deterministic moves
(``HashBot`` of tests/test_match_vs_flow.py). Compared for every game: its variant, who opened, result kind,
points, turns; for every match: the final score and the winner. ``ScoreHashBot`` chooses by the score it
is told (``choose_at_score``), so the replay also checks that every mover is told its own score and the game.
"""

import zlib
from collections import Counter

import numpy as np
import pytest

from tapa_ai.arena.runner import deal_dice
from tapa_ai.arena.rotation import play_rotation_pairs
from tapa_ai.flow.rotation import RotationMatch
from tapa_ai.rules.rotations import ROTATIONS
from tapa_ai.movegen import PositionBatch
from tapa_ai.movegen.choice import segment_argmax
from tapa_ai.rules import outcomes

from .test_match_vs_flow import HashBot, choose_move, keys


class ScoreHashBot(HashBot):
    """A hash of each afterstate and of the score the bot is told (what the mover and the other side need, the
    game of the rotation) chooses: a mover told another score would play other moves."""

    def __init__(self, salt: int):
        super().__init__(salt, "random")

    def hashes(self, batch: PositionBatch, away, opponent_away, game) -> np.ndarray:
        return np.array([zlib.crc32(key + repr((int(a), int(b), int(g))).encode(), self.salt)
                         for key, a, b, g in zip(keys(batch), away, opponent_away, game)], dtype=np.float64)

    def choose_at_score(self, afterstates, rng, score):
        source = afterstates.source
        return segment_argmax(self.hashes(afterstates.positions, score.away[source], score.opponent_away[source],
                                          score.game[source]), afterstates.offsets)


def choose_reference_move(bot, match: RotationMatch):
    """The reference move ``bot`` chooses in ``match``'s game, at the match's score for a ScoreHashBot."""
    game = match.game
    if not isinstance(bot, ScoreHashBot):
        return choose_move(bot, game)
    moves = list(game.moves)
    side = game.position.turn
    mover, other = (0, 1) if side == "X" else (1, 0)
    count = len(moves)
    hashes = bot.hashes(PositionBatch.from_positions([move.position for move in moves]),
                        [match.length - match.score[mover]] * count, [match.length - match.score[other]] * count,
                        [match.game_number - 1] * count)
    return moves[int(np.argmax(hashes))]

MAX_TURNS = 600


def rebuild_dice(seed, pairs: int, games: int, rotation):
    """The arena's draws for games 0..games-1: per game the (pairs, MAX_TURNS, 2) dice, the opening bits and, in
    a game played with the opening dice, a winner's fresh first roll (None otherwise)."""
    rng = np.random.default_rng(seed)
    tables, openers, fresh = [], [], []
    for number in range(games):
        rules = rotation.rules(number + 1)
        tables.append(deal_dice(rules, rng, pairs, MAX_TURNS))
        openers.append(rng.random(pairs) < 0.5)
        fresh.append(rng.integers(1, 7, size=(pairs, 2)).astype(np.int8) if rules.opening == "use-opening-dice"
                     else None)
    return tables, openers, fresh


def replay_match(length: int, seat_players, dice_of_game, seat0_opens, rotation, winner_roll):
    """One match of ``rotation`` through the reference flow, seat 0 as X; (match, per-game rows)."""
    players = {"X": seat_players[0], "O": seat_players[1]}
    match = RotationMatch.new(length, rotation)
    games = []
    while True:
        number = match.game_number - 1
        dice, turns = dice_of_game(number), 0
        opener = None
        opening_dice = match.rules.opening == "use-opening-dice"
        winner_double = False
        if opening_dice and match.game.phase == "roll":  # the previous winner opens, rolling both dice afresh
            dice = np.concatenate([winner_roll(number)[None], dice[1:]])
            winner_double = bool(dice[0, 0] == dice[0, 1])
        while not match.game.is_over:
            game = match.game
            if game.phase == "opening":
                if opening_dice:  # the opener plays the opening dice: the arena's first roll, never a double
                    high, low = int(dice[0].max()), int(dice[0].min())
                    opener = "X" if seat0_opens(number) else "O"
                else:  # the roll only decides the opener, who rolls both dice afresh
                    high, low = 2, 1
                match = match.rolled((high, low) if seat0_opens(number) else (low, high))  # the higher die opens
            elif game.phase == "roll":
                opener = opener or game.position.turn
                # The arena deals a roll per decision (ply), a cascade's stages included (they play their own
                # numbers, docs/rules.md 10.2): the roll of the decision after ``turns`` decisions.
                match = match.rolled(tuple(int(d) for d in dice[turns]))
            else:
                match = match.play(choose_reference_move(players[game.position.turn][match.variant], match))
                turns += 1
            assert turns < MAX_TURNS, "a replayed game ran past the turn limit"
        result = match.game.result
        points_x = 0 if result.winner is None else (1 if result.winner == "X" else -1) * match.game.points_won
        games.append({"variant": match.variant, "opener": opener, "kind": result.kind, "points_x": points_x,
                      "turns": turns, "winner_double": winner_double,
                      "cascade": any(event.action == before.action == "move" and event.side == before.side
                                     for before, event in zip(match.game.history, match.game.history[1:]))})
        if match.is_over:
            return match, games
        match = match.start_next_game()


PLAYERS = {
    # Portes and backgammon between pip-lead players are hitting wars that rarely end: there the hash alone
    # chooses; by the score: the first and last games (the middle one by the pip lead keeps games short).
    "tavli": ({"portes": HashBot(1, "random"), "plakoto": HashBot(1, "lead"), "fevga": HashBot(1, "lead")},
              {"portes": HashBot(2, "random"), "plakoto": HashBot(2, "lead"), "fevga": HashBot(2, "lead")},
              {"portes": (3, 5), "fevga": (4, None)}),
    "tabla": ({"backgammon": HashBot(1, "random"), "gulbara": HashBot(1, "lead"), "tapa": HashBot(1, "lead")},
              {"backgammon": HashBot(2, "random"), "gulbara": HashBot(2, "lead"), "tapa": HashBot(2, "lead")},
              {"backgammon": (3, 5), "tapa": (4, None)}),
}


@pytest.mark.parametrize("name", ["tavli", "tabla"])
@pytest.mark.parametrize("by_score", [False, True])
def test_arena_rotation_matches_replay_game_by_game_through_the_reference_flow(name, by_score):
    rotation = ROTATIONS[name]
    a, b, scored = (dict(part) for part in PLAYERS[name])
    if by_score:
        for variant, (salt_a, salt_b) in scored.items():
            a[variant] = ScoreHashBot(salt_a)
            if salt_b is not None:
                b[variant] = ScoreHashBot(salt_b)
    checked = Counter()
    for length, pairs in ((3, 4), (5, 3)):
        seed = [23, length]
        records = play_rotation_pairs(a, b, pairs, seed, length, rotation, max_turns=MAX_TURNS)
        assert not records.match_unfinished.any()
        tables, openers, fresh = rebuild_dice(seed, pairs, int(records.game.max()) + 1, rotation)
        for slot in range(records.slots):
            pair, a_seat0 = slot // 2, slot % 2 == 0
            seat_players = (a, b) if a_seat0 else (b, a)
            match, games = replay_match(length, seat_players, lambda g: tables[g][pair],
                                        lambda g: bool(openers[g][pair]), rotation, lambda g: fresh[g][pair])
            rows = np.flatnonzero(records.slot == slot)
            assert len(rows) == len(games), (length, slot)
            sign = 1 if a_seat0 else -1
            a_side = "X" if a_seat0 else "O"
            for game, row, variant in zip(games, rows, [records.variants()[r] for r in rows]):
                where = (length, slot, int(records.game[row]))
                assert variant == game["variant"], where
                assert bool(records.a_opened[row]) == (game["opener"] == a_side), where
                assert (outcomes.RESULT_KINDS[records.kind[row]] or "unfinished") == game["kind"], where
                assert records.points_for_a[row] == sign * game["points_x"], where
                assert records.turns[row] == game["turns"], where
                checked[variant] += 1
                checked[game["kind"]] += 1
                checked["winner opened with a double"] += game["winner_double"]
                checked["a cascade"] += game["cascade"]
            final = match.score if a_seat0 else match.score[::-1]
            assert tuple(records.match_points[slot]) == final, (length, slot)
            assert bool(records.match_a_won[slot]) == (match.winner == a_side)
            checked["matches"] += 1
    # The replay covered every game of the rotation and more than one kind of result.
    assert all(checked[variant] for variant in rotation.variants), checked
    assert checked["single"] and checked["gammon"], checked
    if name == "tabla":  # Gul Bara's cascades, and a winner opening backgammon or Tapa with a double, were replayed
        assert checked["a cascade"] and checked["winner opened with a double"], checked
