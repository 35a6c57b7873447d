"""The arena's vectorized match play (``play_cube_pairs``) against the reference match flow, game by game.

``tapa_ai.arena.cube_play`` re-implements the match rules in array form: the opener of each game, when the
cube may be turned, takes and passes, the score, the Crawford game, the end of the match. Here every match it
plays is replayed through :class:`tapa_ai.flow.match.MatchState` (the reference flow on the reference move
generator and :mod:`tapa_ai.rules.cube`), with the same dice (rebuilt from the seed: the bots below draw
nothing from the generator, so the arena's draws are its dice alone) and the same deterministic decisions.
Compared for every game: result kind, points, cube, doubles, Crawford flag, turns; for every match: the
final score and the winner; and every cube question the arena asked, with its situation (cube, owner, both
away scores, Crawford flags), against the questions the reference flow allows.
"""

import zlib
from collections import Counter

import numpy as np
import pytest

from tapa_ai.arena.cube_play import KIND_NAMES, play_cube_pairs
from tapa_ai.arena.runner import deal_dice
from tapa_ai.bots.base import Bot
from tapa_ai.bots.basic import pip_counts
from tapa_ai.cube.decisions import CubeSituation
from tapa_ai.cube.equity import OWNER_CENTRED, OWNER_MOVER, OWNER_OPPONENT
from tapa_ai.flow.match import MatchState
from tapa_ai.movegen import PositionBatch
from tapa_ai.movegen.choice import segment_argmax
from tapa_ai.rules import variant_rules
from tapa_ai.rules.position import other

MAX_TURNS = 600


def keys(batch: PositionBatch) -> list[bytes]:
    """A colour-free key per position: the mover-relative arrays."""
    return [batch.board[row].tobytes() + batch.pinned[row].tobytes() + batch.off[row].tobytes()
            + batch.bar[row].tobytes() for row in range(len(batch))]


def situation_rows(situation: CubeSituation) -> list[tuple]:
    rows = []
    for row in range(len(situation)):
        fields = [int(situation.value[row]), int(situation.owner[row])]
        if situation.length:
            fields += [int(situation.away[row]), int(situation.opponent_away[row]),
                       bool(situation.crawford_done[row]), bool(situation.crawford_game[row])]
        rows.append(tuple(fields))
    return rows


class HashBot(Bot):
    """Deterministic everywhere, from the position and the situation alone (never the rng).

    Moves (``lead``): the best pip lead, ties broken by a hash of the afterstate; ``random``: the hash alone
    (backgammon games between pip-lead players are hitting wars that rarely end). Cube: doubles on about ``double``
    percent of the questions and takes about ``take`` percent, by hashes of the position and the situation.
    Every question asked is logged as (question, position key, situation).
    """

    def __init__(self, salt: int, style: str, double: int = 20, take: int = 75):
        self.salt, self.style, self.double, self.take = salt, style, double, take
        self.log: list[tuple] = []

    def scores(self, batch: PositionBatch) -> np.ndarray:
        """(N,) the afterstates' scores; every one distinct (the hash)."""
        ties = np.array([zlib.crc32(key, self.salt) for key in keys(batch)]) / 2.0 ** 33
        if self.style == "random":
            return ties
        pips = pip_counts(batch)
        return (pips[:, 1] - pips[:, 0]) + ties

    def choose(self, afterstates, rng):
        return segment_argmax(self.scores(afterstates.positions), afterstates.offsets)

    def _answers(self, question: str, positions, situation, percent: int) -> np.ndarray:
        answers = []
        for key, fields in zip(keys(positions), situation_rows(situation)):
            self.log.append((question, key, fields))
            answers.append(zlib.crc32(key + repr((question, fields)).encode(), self.salt) % 100 < percent)
        return np.array(answers, dtype=bool)

    def offer_double(self, positions, situation, rng):
        return self._answers("offer", positions, situation, self.double)

    def accept_double(self, positions, situation, rng):
        return self._answers("accept", positions, situation, self.take)


def reference_situation(match: MatchState) -> CubeSituation:
    """The CubeSituation of the side to roll, from the reference match state."""
    game = match.game
    mover = game.position.turn
    owner = (OWNER_CENTRED if game.cube_owner is None else
             OWNER_MOVER if game.cube_owner == mover else OWNER_OPPONENT)
    value, owner = np.array([game.cube_value], dtype=np.int64), np.array([owner], dtype=np.int8)
    if not match.length:
        return CubeSituation(match.rules, value, owner)
    return CubeSituation(match.rules, value, owner, match.length,
                         np.array([match.length - match.score_of(mover)]),
                         np.array([match.length - match.score_of(other(mover))]),
                         np.array([match.post_crawford]), np.array([game.crawford]))


def choose_move(bot: HashBot, game) -> object:
    """The reference move the bot's choice on the reference moves is."""
    moves = list(game.moves)
    return moves[int(np.argmax(bot.scores(PositionBatch.from_positions([move.position for move in moves]))))]


def replay_match(rules, length, seat_bots, dice_of_game, seat0_opens, winner_first_roll):
    """One match through the reference flow; returns (match, per-game rows like the arena's records).

    Seat 0 is X. ``dice_of_game(g)``: the (MAX_TURNS, 2) dice of game g; ``seat0_opens(g)``: the opening roll;
    ``winner_first_roll(g)``: the first roll of a previous winner opening game g, or None to take the table's.
    """
    bots = {"X": seat_bots[0], "O": seat_bots[1]}
    match = MatchState.new(rules, length)
    games = []
    while True:
        number = match.game_number - 1
        match_point = length >= 2 and length - 1 in match.score  # a side needs one point as this game starts
        dice, turn, turns, doubles = dice_of_game(number), 0, 0, 0
        winner_opens = match.game.phase == "roll"  # no opening roll: the previous winner opens
        if winner_opens and winner_first_roll(number) is not None:
            dice = np.concatenate([winner_first_roll(number)[None], dice[1:]])
        while not match.game.is_over:
            game = match.game
            if game.phase == "opening":
                opener_x = seat0_opens(number)
                if rules.opening == "use-opening-dice":
                    high, low = int(dice[0].max()), int(dice[0].min())
                    turn = 1  # the opener plays the opening dice: the arena's first turn
                else:
                    high, low = 2, 1  # the roll only decides the opener, who rolls both dice afresh
                match = match.rolled((high, low) if opener_x else (low, high))
            elif game.phase == "roll":
                if game.may_double:
                    batch, situation = PositionBatch.from_positions([game.position]), reference_situation(match)
                    mover = game.position.turn
                    if bots[mover].offer_double(batch, situation, None)[0]:
                        doubles += 1
                        match = match.double()
                        taken = bots[other(mover)].accept_double(batch, situation, None)[0]
                        match = match.take() if taken else match.drop()
                        continue
                match = match.rolled(tuple(int(d) for d in dice[turn]))
                turn += 1
            elif game.phase == "move":
                match = match.play(choose_move(bots[game.position.turn], game))
                turns += 1
                assert turns < MAX_TURNS
        game = match.game
        kind = "pass" if game.dropped else game.result.kind
        points = game.points_won if game.winner is not None else 0
        games.append({"kind": kind, "points_x": points if game.winner == "X" else -points, "cube": game.cube_value,
                      "doubles": doubles, "crawford": game.crawford, "turns": turns,
                      "match_point": match_point,
                      "winner_opened_with_a_double": winner_opens and dice[0, 0] == dice[0, 1]})
        if match.is_over:
            return match, games
        match = match.start_next_game()


def rebuild_dice(rules, seed, pairs, games):
    """The arena's draws for games 0..games-1 (dice tables, who opens, a winner's first roll), in its order."""
    rng = np.random.default_rng(seed)
    tables, openers, winner_rolls = [], [], []
    for _ in range(games):
        tables.append(deal_dice(rules, rng, pairs, MAX_TURNS))
        openers.append(rng.random(pairs) < 0.5)
        if rules.opening == "use-opening-dice" and rules.next_game_opener == "winner":
            winner_rolls.append(rng.integers(1, 7, size=(pairs, 2)).astype(np.int8))
    return tables, openers, winner_rolls


CONFIGS = [  # (name, rules, match lengths, pairs per length, move style)
    ("tapa", variant_rules("tapa"), (1, 7), 2, "lead"),
    ("tapa-no-crawford", variant_rules("tapa").replace(crawford=False), (3,), 3, "lead"),
    ("backgammon", variant_rules("backgammon"), (2, 5, 9), 3, "random"),
    ("backgammon-no-crawford", variant_rules("backgammon").replace(crawford=False), (3,), 3, "random"),
    ("plakoto", variant_rules("plakoto"), (3,), 2, "lead"),  # no cube; the winner opens the next game
    ("plakoto-cube-crawford", variant_rules("plakoto").replace(cube=True, crawford=True), (3, 5), 3, "lead"),
    # Opening dice for the first game, then the winner opens, rolling both dice (doubles too).
    ("tapa-winner-opens", variant_rules("tapa").replace(next_game_opener="winner"), (5,), 3, "lead"),
]


@pytest.mark.parametrize("name,rules,lengths,pairs,style", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_arena_matches_replay_game_by_game_through_the_reference_match_flow(name, rules, lengths, pairs, style):
    checked = Counter()
    for length in lengths:
        seed = [17, length]
        a, b = HashBot(1, style, double=4, take=80), HashBot(2, style, double=8, take=60)
        records = play_cube_pairs(rules, a, b, pairs, seed=seed, match_length=length, max_turns=MAX_TURNS)
        assert not records.match_unfinished.any()
        arena_asks = Counter(a.log + b.log)
        a.log.clear(), b.log.clear()
        most_games = int(records.game.max()) + 1
        tables, openers, winner_rolls = rebuild_dice(rules, seed, pairs, most_games + 1)
        for slot in range(records.slots):
            pair, a_seat0 = slot // 2, slot % 2 == 0
            seat_bots = (a, b) if a_seat0 else (b, a)
            # The arena's opener bit says seat 0 opens, and seat 0 is X in the replay.
            match, games = replay_match(rules, length, seat_bots, lambda g: tables[g][pair],
                                        lambda g: bool(openers[g][pair]),
                                        lambda g: winner_rolls[g][pair] if winner_rolls else None)
            rows = np.flatnonzero(records.slot == slot)
            assert len(rows) == len(games), (name, length, slot)
            sign = 1 if a_seat0 else -1  # points for A = points for X when A sits in seat 0
            for game, row in zip(games, rows):
                where = (name, length, slot, int(records.game[row]))
                assert KIND_NAMES[records.kind[row]] == game["kind"], where
                assert records.points_for_a[row] == sign * game["points_x"], where
                assert records.cube[row] == game["cube"], where
                assert records.doubles[row] == game["doubles"], where
                assert bool(records.crawford[row]) == game["crawford"], where
                assert records.turns[row] == game["turns"], where
                checked["crawford games"] += game["crawford"]
                checked["passes"] += game["kind"] == "pass"
                checked["cube above 2"] += game["cube"] > 2
                checked["draws"] += game["kind"] == "draw"
                checked["games at match point"] += game["match_point"]
                checked["winner opened with a double"] += game["winner_opened_with_a_double"]
            final = match.score if a_seat0 else match.score[::-1]
            assert tuple(records.match_points[slot]) == final, (name, length, slot)
            assert bool(records.match_a_won[slot]) == (match.winner == ("X" if a_seat0 else "O"))
            checked["games"] += len(games)
            checked["matches"] += 1
        # The cube questions: the arena asked exactly those the reference flow allows, in the same situations.
        assert Counter(a.log + b.log) == arena_asks, (name, length)
        checked["cube questions"] += sum(arena_asks.values())
    assert checked["matches"] == 2 * pairs * len(lengths)
    assert checked["games"] > checked["matches"]  # some matches went on past one game
    if rules.cube:
        assert checked["cube questions"] > 0 and checked["passes"] > 0 and checked["cube above 2"] > 0
    # Games where a side needed one point: Crawford (and post-Crawford) games, or their absence, were checked.
    assert checked["games at match point"] > 0
    if rules.crawford:
        assert checked["crawford games"] > 0
    if rules.opening == "use-opening-dice" and rules.next_game_opener == "winner":
        assert checked["winner opened with a double"] > 0  # not the opening dice, which are never a double
