"""Rollouts (tapa_ai.arena.rollout, ``tapa-ai rollout``): statistics, variance reduction, exact references."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from tapa_ai.arena import rollout as ro
from tapa_ai.arena.rollout import RolloutError, RolloutSettings, rollout_moves, rollout_position
from tapa_ai.bots.base import Bot
from tapa_ai.bots.spec import make_bot
from tapa_ai.cli import main
from tapa_ai.net.evaluator import evaluator_for
from tapa_ai.movegen.batch import PositionBatch
from tapa_ai.movegen.random_positions import playout_positions
from tapa_ai.rules.outcomes import outcome_points
from tapa_ai.notation.json_position import position_from_json, position_to_json
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.position import start_position
from tests.requires import require

TAPA = "net:checkpoints/tapa.pt"
BACKGAMMON = "net:checkpoints/backgammon.pt"


def _race(variant: str, x_home, o_home, turn="X"):
    """A position with X's checkers ``x_home`` on its 1..6-points and O's on its own, the rest borne off."""
    points = [""] * 24
    for k, n in enumerate(x_home):
        points[k] = "X" * n
    for k, n in enumerate(o_home):
        points[23 - k] = "O" * n
    data = {"variant": variant, "points": points, "off": {"X": 15 - sum(x_home), "O": 15 - sum(o_home)},
            "turn": turn}
    return position_from_json(data)


def test_settings_are_checked_with_clear_errors():
    for settings, words in [(RolloutSettings(games=1), "at least 2"), (RolloutSettings(rotate=3), "0, 1 or 2"),
                            (RolloutSettings(truncate=-1), "plies"), (RolloutSettings(games=2.5), "integer")]:
        with pytest.raises(RolloutError, match=words):
            settings.check()
    position = start_position(variant_rules("tapa"), "X")
    with pytest.raises(RolloutError, match="evaluator"):
        rollout_position(position, "heuristic", RolloutSettings(games=36, truncate=4), progress=False)
    with pytest.raises(RolloutError, match="luck adjustment needs a network"):
        rollout_position(position, "heuristic", RolloutSettings(games=36, luck=True), progress=False)
    with pytest.raises(RolloutError, match="not a legal move"):
        rollout_moves(position, (6, 5), TAPA, RolloutSettings(games=36), moves=["13/7 13/8"], progress=False)
    with pytest.raises(RolloutError, match="the same move"):
        rollout_moves(position, (6, 5), TAPA, RolloutSettings(games=36), moves=["24/18 24/19", "24/19 24/18"],
                      progress=False)


def test_rotation_gives_every_roll_once_per_block_of_36():
    rng = np.random.default_rng(5)
    dice = ro._dice(rng, 36 * 3, 0, rotate=1)
    for block in dice.reshape(3, 36, 2):
        assert sorted(map(tuple, block.tolist())) == sorted(map(tuple, ro.ORDERED_ROLLS.tolist()))
    assert not np.array_equal(dice[:36], dice[36:72])  # a fresh order per block
    later = ro._dice(rng, 36, 1, rotate=1)  # past the rotated plies: plain random dice
    assert later.shape == (36, 2) and later.min() >= 1 and later.max() <= 6
    assert RolloutSettings(games=40).total_games == 72 and RolloutSettings(games=40, rotate=0).total_games == 40


def test_luck_has_zero_mean_over_the_rolls():
    """The luck of every roll, weighted by its chance, sums to 0: the adjustment cannot bias the mean."""
    bot = make_bot(TAPA)
    positions = playout_positions("tapa", 12, np.random.default_rng(3))
    points = outcome_points(bot.net.rules).astype(np.float64)
    total = np.zeros((len(positions), len(points)))
    for (a, b), weight in zip(ro.ROLLS.tolist(), ro.ROLL_WEIGHTS):
        dice = np.tile(np.array([a, b], dtype=np.int8), (len(positions), 1))
        total += weight * ro.roll_luck(bot.evaluator.model, positions, dice, points)
    assert np.abs(total).max() < 1e-9
    # and it is not trivially zero: the rolls differ
    dice = np.tile(np.array([6, 6], dtype=np.int8), (len(positions), 1))
    assert np.abs(ro.roll_luck(bot.evaluator.model, positions, dice, points) @ points).max() > 0.01


def test_truncated_after_one_ply_with_all_36_rolls_is_the_one_ply_value():
    """36 games, each first roll once, cut after one ply: exactly the net's 1-ply value of the position."""
    bot = make_bot(TAPA)
    position = position_from_json(position_to_json(playout_positions("tapa", 1, np.random.default_rng(8))
                                                   .position(0)))
    result = rollout_position(position, TAPA, RolloutSettings(games=36, truncate=1, luck=False), progress=False)
    expected = bot.pre_roll_distributions(PositionBatch.from_positions([position]), plies=1)[0]
    points = outcome_points(bot.net.rules).astype(np.float64)
    assert result.stats[0].equity == pytest.approx(float(expected @ points), abs=1e-6)
    assert list(result.stats[0].probabilities.values()) == pytest.approx(expected.tolist(), abs=1e-6)


class FirstMove(Bot):
    """Always the first legal move: a bot whose games depend on the dice only."""

    def choose(self, afterstates, rng):
        return afterstates.offsets[:-1].copy()


def test_paired_dice_same_start_same_games():
    """Game g of every start sees the same dice: two copies of one start play the same games."""
    net = make_bot(BACKGAMMON).net
    start = PositionBatch.from_positions([start_position(variant_rules("backgammon"), "X")] * 2)
    settings = RolloutSettings(games=72, luck=True).check()
    outcomes, luck, plies = ro.play_rollout(net.rules, FirstMove(), evaluator_for(net), start, True, 72, settings, [4, 0])
    assert np.array_equal(outcomes[0], outcomes[1]) and np.array_equal(plies[0], plies[1])
    assert np.abs(luck).sum() > 0 and np.allclose(outcomes.sum(axis=2), 1.0)
    other_seed, _, _ = ro.play_rollout(net.rules, FirstMove(), evaluator_for(net), start, True, 72, settings, [5, 0])
    assert not np.array_equal(other_seed[0], outcomes[0])


def test_result_does_not_depend_on_workers_and_luck_narrows_the_ci():
    position = start_position(variant_rules("backgammon"), "X")
    settings = RolloutSettings(games=288, seed=3, luck=True)
    one = rollout_position(position, BACKGAMMON, settings, workers=1, progress=False)
    two = rollout_position(position, BACKGAMMON, settings, workers=2, progress=False)
    assert one.to_dict()["equity"] == two.to_dict()["equity"]
    assert one.stats[0].probabilities == two.stats[0].probabilities
    stats = one.stats[0]
    adjusted = stats.equity_ci95[1] - stats.equity_ci95[0]
    raw = stats.raw_equity_ci95[1] - stats.raw_equity_ci95[0]
    assert adjusted < 0.6 * raw  # the luck adjustment removes most of the dice's noise
    assert stats.games == 288 and sum(stats.probabilities.values()) == pytest.approx(1.0, abs=1e-6)


def test_move_analysis_ranks_candidates_on_the_same_dice():
    position = start_position(variant_rules("backgammon"), "X")
    result = rollout_moves(position, (3, 1), BACKGAMMON, RolloutSettings(games=144, luck=True), candidates=3,
                           progress=False)
    data = result.to_dict()
    assert data["dice"] == [3, 1] and len(data["moves"]) == 3
    equities = [move["equity"] for move in data["moves"]]
    assert equities == sorted(equities, reverse=True)
    best = data["moves"][0]
    assert best["difference"] == 0.0 and best["move"] == "8/5 6/5"  # the known best 31 opening
    for move in data["moves"][1:]:
        assert move["difference"] == pytest.approx(move["equity"] - best["equity"], abs=1e-9)
        low, high = move["difference_ci95"]
        assert low < move["difference"] < high
    assert set(data) >= {"moves", "seconds", "settings", "bot", "position"}


def test_a_move_that_ends_the_game_is_its_exact_result():
    position = _race("backgammon", [1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2])
    result = rollout_moves(position, (1, 2), BACKGAMMON, RolloutSettings(games=36), progress=False)
    [move] = result.stats
    assert move.move == "1/off" and move.equity == 1.0 and move.equity_ci95 == (1.0, 1.0)


def test_rollout_converges_to_the_exact_bear_off_value():
    """3 against 3 checkers: the two-sided database's exact probability, within the rollout's CI."""
    from tapa_ai.bearoff.database import two_sided
    from tapa_ai.bearoff.one_sided import rank

    x_home, o_home = [1, 1, 0, 1, 0, 0], [0, 1, 0, 0, 2, 0]
    table = two_sided(quiet=True)
    exact = float(table[rank(x_home), rank(o_home)])  # P(the side to move wins)
    position = _race("plakoto", x_home, o_home)
    result = rollout_position(position, "net:checkpoints/plakoto.pt", RolloutSettings(games=1296, seed=2),
                              progress=False)
    stats = result.stats[0]
    low, high = stats.equity_ci95
    assert low <= 2 * exact - 1 <= high, (stats.equity, 2 * exact - 1)
    assert high - low < 0.06


def _gnubg_board(position):
    """[player not on roll, player on roll], each on its own points 1..24 then its bar (an independent copy)."""
    mover, other = position.turn, "O" if position.turn == "X" else "X"
    board = [[0] * 25, [0] * 25]
    for index, stack in enumerate(position.points):
        for side, row in ((mover, 1), (other, 0)):
            count = stack.count(side)
            if count:
                point = index + 1 if side == "X" else 24 - index
                board[row][point - 1] += count
    board[1][24] = position.bar[0 if mover == "X" else 1]
    board[0][24] = position.bar[1 if mover == "X" else 0]
    return board


def _dice_stream(rng: np.random.Generator, games: int):
    """``dice(ply)``: the (games, 2) rolls of one ply, drawn from ``rng`` one ply after another (kept)."""
    rolls: list[np.ndarray] = []

    def dice(ply: int) -> np.ndarray:
        while len(rolls) <= ply:
            rolls.append(rng.integers(1, 7, size=(games, 2)))
        return rolls[ply]

    return dice


def _gnubg_replay(gnubg, board, dice) -> np.ndarray:
    """Points for the side to roll of ``board`` in each game: gnubg 0-ply moving both sides to the end, game
    ``g``'s roll at ply ``p`` being ``dice(p)[g]``."""
    results = []
    for game in range(len(dice(0))):
        current = [list(board[0]), list(board[1])]
        root_to_move = True
        for ply in itertools.count():
            d1, d2 = (int(d) for d in dice(ply)[game])
            _, key = gnubg.bestmove(current, d1, d2, n=0, b=1)
            after = gnubg.boardfromkey(key)  # [mover, opponent]: the opponent rolls next
            mover, loser = list(after[0]), list(after[1])
            if sum(mover) == 0:
                points = 1
                if sum(loser) == 15:
                    points = 3 if sum(loser[18:25]) > 0 else 2
                results.append(points if root_to_move else -points)
                break
            current = [mover, loser]
            root_to_move = not root_to_move
    return np.array(results, dtype=np.float64)


def test_gnubg_rollout_plays_the_games_of_gnubg_itself_on_the_same_dice():
    """``--bot gnubg:0`` rollouts against gnubg-nn's own best_move playing both sides on the same dice (the
    rollout's documented stream: chunk 0 of seed ``s`` draws from ``default_rng([s, 0, 0])``, one (games, 2)
    roll per ply for every game, running or not, when no roll is rotated): the same games, so the same equity,
    on 10 varied positions."""
    gnubg = require("gnubg_nn")
    rng = np.random.default_rng(20261202)
    positions = [batch.position(k) for style in ("uniform", "contact")
                 for batch in [playout_positions("backgammon", 5, rng, style, games=16)] for k in range(5)]
    games = 36
    for k, position in enumerate(positions):
        ours = rollout_position(position, "gnubg:0", RolloutSettings(games=games, seed=k, rotate=0), progress=False)
        theirs = _gnubg_replay(gnubg, _gnubg_board(position), _dice_stream(np.random.default_rng([k, 0, 0]), games))
        assert ours.stats[0].games == games == len(theirs)
        assert ours.stats[0].equity == pytest.approx(theirs.mean(), abs=1e-9), (k, position)


def test_cli_rollout_json_and_errors(capsys):
    position = json.dumps(position_to_json(_race("tapa", [2, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0])))
    assert main(["rollout", "--position", position, "--games", "72", "--seed", "2", "--json", "--quiet",
                 "--workers", "1", "--bot", TAPA, "--luck"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"equity", "equity_ci95", "probabilities", "games", "seconds"} <= set(data)
    assert data["games"] == 72 and data["settings"]["luck"] is True
    assert main(["rollout", "--position", position, "--move", "6/1", "--quiet"]) == 2
    assert "--move needs --dice" in capsys.readouterr().err
    assert main(["rollout", "--position", "{not json", "--quiet"]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["rollout", "--position", "4HPwATDgc/ABMA", "--games", "1", "--quiet"]) == 2
    assert "at least 2" in capsys.readouterr().err


def test_engine_rollout_plays_the_games_of_tapa_ai_rollout():
    from tapa_ai.engine.protocol import Engine

    engine = Engine(bot=TAPA, max_rollout_games=200)
    position = _race("tapa", [2, 1, 0, 1, 0, 0], [0, 0, 1, 1, 1, 0])
    answer = engine.handle({"cmd": "rollout", "position": position_to_json(position), "games": 72, "seed": 4})
    direct = rollout_position(position, TAPA, RolloutSettings(games=72, seed=4), progress=False)
    assert answer["equity"] == pytest.approx(direct.stats[0].equity, abs=1e-9)
    assert answer["equity_ci95"] == pytest.approx(list(direct.stats[0].equity_ci95), abs=1e-9)
    start = position_to_json(start_position(variant_rules("tapa"), "X"))
    moves = engine.handle({"cmd": "rollout", "position": start, "dice": [6, 5], "candidates": 2, "games": 36})
    assert [m["difference"] for m in moves["moves"]][0] == 0.0 and len(moves["moves"]) == 2
    for bad, words in [({"games": 300}, "at most 200"), ({"plies": 2}, "plies: must be an integer 0..1, got 2"), ({"games": "9"}, "integer"),
                       ({"moves": ["24/18 24/19"]}, "need dice"), ({"speed": 1}, "unknown key")]:
        _, reply = engine.respond({"cmd": "rollout", "position": start, **bad})
        assert words in reply["error"], reply
    _, reply = Engine().respond({"cmd": "rollout", "position": start})
    assert "needs a model" in reply["error"]


def test_a_game_past_the_ply_limit_is_valued_by_the_evaluator(monkeypatch):
    """Games still running at MAX_PLIES: the evaluator's value there; without an evaluator a clear error."""
    net = make_bot(TAPA).net
    start = PositionBatch.from_positions([start_position(variant_rules("tapa"), "X")])
    monkeypatch.setattr(ro, "MAX_PLIES", 3)
    settings = RolloutSettings(games=36, luck=False).check()
    outcomes, _, plies = ro.play_rollout(net.rules, FirstMove(), evaluator_for(net), start, True, 36, settings, [1, 0])
    assert (plies == 3).all() and np.allclose(outcomes.sum(axis=2), 1.0)
    assert ((outcomes > 0) & (outcomes < 1)).any()  # net values, not game results
    with pytest.raises(RolloutError, match="more than 3 plies"):
        ro.play_rollout(net.rules, FirstMove(), None, start, True, 36, settings, [1, 0])


def test_a_stage_moves_rollout_goes_on_with_the_movers_next_stage():
    """Gul Bara (docs/rules.md 10.2): a move of a cascade's stage is followed by the mover's next stage, with no
    roll, so its rollout goes on from there, the root to move. X, with 12 checkers on its 4, 5 and 6 points and 3
    off, plays the 4s of a cascade: bearing four off leaves the 5s and the 6s to bear off the other eight, a win
    by a gammon in every game, two plies on; moving 6/2 four times leaves four checkers for O's roll."""
    points = [""] * 24
    points[3], points[4], points[5], points[12] = "XXXX", "XXXX", "XXXX", "O" * 15
    position = position_from_json({"variant": "gulbara", "points": points, "off": {"X": 3, "O": 0}, "turn": "X",
                                   "turns": {"X": 3, "O": 3}, "cascade": {"number": 4, "steps": 4}})
    result = rollout_moves(position, (4, 4), "net:gulbara", RolloutSettings(games=36, seed=2),
                           moves=["4/off 4/off 4/off 4/off", "6/2 6/2 6/2 6/2"], progress=False)
    first, second = result.stats
    assert first.move == "4/off 4/off 4/off 4/off"
    assert first.equity == 2.0 and first.mean_plies == 2.0 and first.probabilities["win_gammon"] == 1.0
    assert second.mean_plies > 2.0 and second.equity < 2.0
