"""The arena with the cube: money play and matches to N points in duplicate pairs."""

import json
from pathlib import Path

import numpy as np
import pytest

from tapa_ai.arena.cube_play import KIND_PASS, play_cube_pairs
from tapa_ai.arena.duels import play_pairs
from tapa_ai.arena.match import run_cube_match
from tapa_ai.bots.base import Bot, BotError
from tapa_ai.bots.spec import make_bot
from tapa_ai.cli import main
from tapa_ai.rules import variant_rules


def first_move(afterstates, rng):
    return afterstates.offsets[:-1].copy()


class FirstMoveBot(Bot):
    """Plays the first legal move; its cube: double whenever it may, take or pass by a fixed rule."""

    def __init__(self, double=False, take=True):
        self.double, self.take_all = double, take

    def choose(self, afterstates, rng):
        return first_move(afterstates, rng)

    def offer_double(self, positions, situation, rng):
        return np.full(len(positions), self.double)

    def accept_double(self, positions, situation, rng):
        return np.full(len(positions), self.take_all)


@pytest.mark.parametrize("variant", ["tapa", "backgammon"])
def test_money_play_with_passive_cubes_is_exactly_the_cubeless_duel(variant):
    rules = variant_rules(variant)
    a, b = make_bot("heuristic", rules), make_bot("runner", rules)
    plain = play_pairs(rules, a, b, 20, seed=[5, 0])
    cubed = play_cube_pairs(rules, a, b, 20, seed=[5, 0])
    assert np.array_equal(plain.points_for_a, cubed.points_for_a)
    assert np.array_equal(plain.turns, cubed.turns) and np.array_equal(plain.kind, cubed.kind)
    assert (cubed.cube == 1).all() and cubed.doubles.sum() == 0


def test_a_passed_double_ends_the_game_for_the_cube_value():
    rules = variant_rules("backgammon")
    records = play_cube_pairs(rules, FirstMoveBot(double=True), FirstMoveBot(take=False), 10, seed=1)
    # A doubles at its first turn after the opening (B passes): A wins 1 point every game.
    assert (records.kind == KIND_PASS).all() and (records.points_for_a == 1).all()
    assert (records.doubles == 1).all() and (records.cube == 1).all()


def test_takes_double_the_cube_and_redoubles_stop_at_64():
    rules = variant_rules("backgammon")
    records = play_cube_pairs(rules, FirstMoveBot(double=True), FirstMoveBot(double=True), 10, seed=2)
    assert (records.cube == 64).all()  # both double at every turn they may, both take
    assert (records.doubles == 6).all()
    assert set(np.abs(records.points_for_a).tolist()) <= {64.0, 128.0, 192.0}


@pytest.mark.parametrize("variant", ["tapa", "backgammon", "plakoto"])
def test_every_match_ends_with_one_side_at_the_length(variant):
    rules = variant_rules(variant)
    records = play_cube_pairs(rules, make_bot("heuristic", rules), make_bot("runner", rules), 8, seed=3,
                              match_length=5)
    assert not records.match_unfinished.any()
    reached = records.match_points >= 5
    assert (reached.sum(axis=1) == 1).all()
    assert np.array_equal(records.match_a_won, reached[:, 0])
    for slot in range(records.slots):
        games = records.slot == slot
        won = records.points_for_a[games]
        assert won[won > 0].sum() == records.match_points[slot, 0]
        assert -won[won < 0].sum() == records.match_points[slot, 1]
        assert np.array_equal(records.game[games], np.arange(games.sum()))
        # At most one Crawford game, and nobody doubles in it.
        assert records.crawford[games].sum() <= (1 if rules.crawford else 0)
    assert (records.doubles[records.crawford] == 0).all() and (records.cube[records.crawford] == 1).all()


def test_the_crawford_game_follows_the_first_game_reaching_length_minus_one():
    rules = variant_rules("tapa")
    records = play_cube_pairs(rules, make_bot("heuristic", rules), make_bot("heuristic", rules), 10, seed=4,
                              match_length=5)
    assert records.crawford.any()
    for slot in range(records.slots):
        games = np.flatnonzero(records.slot == slot)
        a = b = 0
        crawford_seen = False
        for game in games:
            expected = (not crawford_seen) and (a == 4 or b == 4)
            assert records.crawford[game] == expected
            crawford_seen |= expected
            points = records.points_for_a[game]
            a, b = a + max(points, 0), b + max(-points, 0)


def test_duplicate_matches_mirror_each_other_with_equal_players():
    # Same dice and opener, seats swapped: equal deterministic players play the same match twice.
    rules = variant_rules("backgammon")
    bot = FirstMoveBot(double=True)
    records = play_cube_pairs(rules, bot, bot, 12, seed=6, match_length=7)
    wins = records.match_a_won.reshape(-1, 2)
    assert (wins.sum(axis=1) == 1).all()
    summary = records.summary()
    assert summary["match_win_rate"] == 0.5 and summary["match_win_ci95"] == [0.5, 0.5]


def test_same_seed_same_matches_whatever_the_number_of_workers():
    rules = variant_rules("tapa")
    one = run_cube_match("heuristic", "runner", rules, 24, seed=4, workers=1, match_length=3, chunk_pairs=4,
                         progress=False)
    two = run_cube_match("heuristic", "runner", rules, 24, seed=4, workers=2, match_length=3, chunk_pairs=4,
                         progress=False)
    assert np.array_equal(one.records.match_points, two.records.match_points)
    assert np.array_equal(one.records.points_for_a, two.records.points_for_a)
    assert one.summary["match_win_rate"] > 0.5  # the heuristic bot beats the racer
    low, high = one.summary["match_win_ci95"]
    assert 0 <= low <= one.summary["match_win_rate"] <= high <= 1


def test_match_command_reports_match_wins_with_a_confidence_interval(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["match", "runner", "random", "--variant", "backgammon", "--match-length", "3", "--matches", "21",
                 "--seed", "2", "--workers", "1", "--quiet", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    record = json.loads(out.read_text())
    assert printed == record
    assert record["matches"] == 22 and record["pairs"] == 11 and record["match_length"] == 3
    low, high = record["match_win_ci95"]
    assert low <= record["match_win_rate"] <= high
    assert record["games"] >= 22 and record["mean_games_per_match"] == record["games"] / 22
    rows = (tmp_path / "m.csv").read_text().splitlines()
    assert rows[0].startswith("slot,pair,seat0,game,points_for_a") and len(rows) == record["games"] + 1


def test_money_play_with_the_cube_from_the_command_line(capsys):
    assert main(["match", "runner", "heuristic", "--variant", "tapa", "--cube", "--games", "10", "--workers", "1",
                 "--quiet", "--json"]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["cube"] is True and record["games"] == 10 and "ppg_ci95" in record and record["doubles"] == 0


@pytest.mark.parametrize("argv,fragment", [
    (["--matches", "10"], "--matches needs --match-length"),
    (["--match-length", "3", "--cube"], "give one or the other"),
    (["--match-length", "30"], "must be 1..25"),
    (["--cube", "--variant", "plakoto"], "has no cube"),
])
def test_bad_match_options_are_clear_errors(argv, fragment, capsys):
    assert main(["match", "runner", "random", "--quiet", "--workers", "1", *argv]) == 2
    assert fragment in capsys.readouterr().err


SHIPPED_BACKGAMMON = Path(__file__).resolve().parent.parent / "checkpoints" / "backgammon.pt"


@pytest.mark.skipif(not SHIPPED_BACKGAMMON.is_file(), reason="shipped checkpoint absent")
def test_a_net_with_the_cube_beats_itself_playing_the_passive_cube():
    rules = variant_rules("backgammon")
    cubed = make_bot(f"net:{SHIPPED_BACKGAMMON}", rules)
    passive = make_bot(f"net:{SHIPPED_BACKGAMMON},nocube", rules)
    records = play_cube_pairs(rules, cubed, passive, 40, seed=8)
    summary = records.summary()
    # Same checker play on both sides: the points A wins over B come from the cube alone.
    assert summary["doubles"] > 0 and summary["ppg_ci95"][0] > 0


def test_bad_cube_options_in_a_spec_are_refused():
    with pytest.raises(BotError, match="unknown option"):
        make_bot("runner,double", variant_rules("tapa"))
    with pytest.raises(BotError, match="cube_life= is an option of net: bots"):
        make_bot("runner,cube_life=0.5", variant_rules("tapa"))
