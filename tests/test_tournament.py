"""Round robins: the Bradley–Terry fit recovers known ratings, the bootstrap and tables are sane, runs repeat."""

import itertools
import json
import math

import numpy as np
import pytest

from tapa_ai.arena.duels import GameRecords
from tapa_ai.arena.match import MatchResult
from tapa_ai.arena.tournament import (TournamentResult, bradley_terry, expected_score, game_scores,
                                      run_tournament)
from tapa_ai.bots.base import BotError
from tapa_ai.rules import outcomes
from tapa_ai.rules import variant_rules
from tests.requires import require


def expected_wins(true_elo, games_per_pairing):
    """wins[i, j]: the expected score of i against j over ``games_per_pairing`` games."""
    true_elo = np.asarray(true_elo, dtype=float)
    n = true_elo.size
    wins = np.zeros((n, n))
    for i, j in itertools.permutations(range(n), 2):
        wins[i, j] = games_per_pairing * expected_score(true_elo[i], true_elo[j])
    return wins


# -- the Bradley–Terry fit ------------------------------------------------------------------------
@pytest.mark.parametrize("true_elo", [[-200.0, 0.0, 200.0], [-350.0, -40.0, 90.0, 300.0], [0.0, 700.0]])
def test_bradley_terry_recovers_known_ratings_from_expected_wins(true_elo):
    elo = bradley_terry(expected_wins(true_elo, 100_000))
    truth = np.array(true_elo) - np.mean(true_elo)  # the fit is anchored at mean 0
    np.testing.assert_allclose(elo, truth, atol=1.0)
    assert abs(elo.mean()) < 1e-9


def test_bradley_terry_without_prior_is_exact_on_expected_wins():
    elo = bradley_terry(expected_wins([-200.0, 0.0, 200.0], 100), prior_games=0.0)
    np.testing.assert_allclose(elo, [-200.0, 0.0, 200.0], atol=1e-6)


def test_bradley_terry_recovers_ratings_from_sampled_games():
    rng = np.random.default_rng(7)
    true_elo = np.array([-150.0, 0.0, 50.0, 100.0])
    wins = np.zeros((4, 4))
    for i, j in itertools.combinations(range(4), 2):
        wins[i, j] = rng.binomial(20_000, expected_score(true_elo[i], true_elo[j]))
        wins[j, i] = 20_000 - wins[i, j]
    np.testing.assert_allclose(bradley_terry(wins), true_elo - true_elo.mean(), atol=8.0)


def test_equal_bots_rate_zero():
    np.testing.assert_allclose(bradley_terry(np.array([[0.0, 37.5], [37.5, 0.0]])), [0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(bradley_terry(np.full((3, 3), 12.0)), [0.0, 0.0, 0.0], atol=1e-9)


def test_bradley_terry_is_symmetric_under_relabelling_and_reversal():
    wins = np.array([[0.0, 30.0, 45.0], [10.0, 0.0, 25.5], [5.0, 14.5, 0.0]])
    elo = bradley_terry(wins)
    assert elo[0] > elo[1] > elo[2]
    # Reversing every result mirrors the ratings.
    np.testing.assert_allclose(bradley_terry(wins.T), -elo, atol=1e-8)
    # Relabelling the bots relabels the ratings.
    perm = np.array([2, 0, 1])
    np.testing.assert_allclose(bradley_terry(wins[np.ix_(perm, perm)]), elo[perm], atol=1e-8)
    # The diagonal means nothing.
    np.testing.assert_allclose(bradley_terry(wins + 99 * np.eye(3)), elo, atol=1e-12)


def test_a_clean_sweep_stays_finite_thanks_to_the_prior():
    elo = bradley_terry(np.array([[0.0, 10.0], [0.0, 0.0]]))
    # One virtual drawn game: 10.5 to 0.5, odds 21:1.
    expected = 400.0 * math.log10(21.0) / 2.0
    np.testing.assert_allclose(elo, [expected, -expected], atol=1e-6)
    # A transitive sweep of three bots too, in the right order.
    elo = bradley_terry(np.array([[0.0, 50.0, 50.0], [0.0, 0.0, 50.0], [0.0, 0.0, 0.0]]))
    assert np.all(np.isfinite(elo)) and elo[0] > elo[1] > elo[2]
    with pytest.raises(ValueError, match="infinite"):
        bradley_terry(np.array([[0.0, 10.0], [0.0, 0.0]]), prior_games=0.0)


def test_bradley_terry_rejects_bad_input():
    with pytest.raises(ValueError, match="square"):
        bradley_terry(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        bradley_terry(np.array([[0.0, -1.0], [1.0, 0.0]]))


# -- ratings from (synthetic) match records -------------------------------------------------------
def synthetic_records(rng, pairs, p_a_wins, p_draw=0.0):
    """Paired games where A wins with ``p_a_wins``, draws with ``p_draw``; winners score 1 or 2 points."""
    games = 2 * pairs
    u = rng.random(games)
    a_won = u < p_a_wins
    draw = (u >= p_a_wins) & (u < p_a_wins + p_draw)
    size = rng.integers(1, 3, games).astype(np.float64)
    points = np.where(a_won, size, np.where(draw, 0.0, -size))
    kind = np.where(draw, outcomes.RESULT_DRAW, np.where(size == 2, 2, 1)).astype(np.int8)
    return GameRecords(points, a_won, kind, np.full(games, 50))


def synthetic_tournament(true_elo, pairs, seed=3, bootstrap=300, p_draw=0.0):
    rng = np.random.default_rng(seed)
    specs = [f"bot{i}" for i in range(len(true_elo))]
    matches = []
    for i, j in itertools.combinations(range(len(specs)), 2):
        p = expected_score(true_elo[i], true_elo[j])
        records = synthetic_records(rng, pairs, p * (1 - p_draw), p_draw)
        matches.append(MatchResult(specs[i], specs[j], "tapa", 0, records, 1.0, 1))
    return TournamentResult(specs, "tapa", seed, matches, bootstrap=bootstrap)


def test_game_scores_count_wins_losses_and_draws():
    records = GameRecords(np.array([2.0, -1.0, 0.0, 0.0]), np.array([True, False, False, False]),
                          np.array([2, 1, outcomes.RESULT_DRAW, 0], dtype=np.int8), np.ones(4))
    np.testing.assert_array_equal(game_scores(records), [1.0, 0.0, 0.5, 0.5])


def test_ratings_from_matches_rank_the_bots_and_the_bootstrap_ci_contains_the_estimate():
    true_elo = [-150.0, 0.0, 150.0]
    result = synthetic_tournament(true_elo, pairs=400)
    assert [row["bot"] for row in result.ratings] == ["bot2", "bot1", "bot0"]
    assert [row["rank"] for row in result.ratings] == [1, 2, 3]
    assert abs(result.elo.mean()) < 1e-9
    np.testing.assert_allclose(result.elo, true_elo, atol=60.0)
    for row in result.ratings:
        lo, hi = row["elo_ci95"]
        assert lo < row["elo"] < hi
        assert 10.0 < hi - lo < 200.0
        assert row["games"] == 1600 and row["wins"] + row["draws"] + row["losses"] == 1600
    # Fewer games: wider intervals.
    small = synthetic_tournament(true_elo, pairs=25)
    assert np.all(np.diff(small.elo_ci95, axis=1) > np.diff(result.elo_ci95, axis=1))


def test_bootstrap_is_deterministic_given_the_seed():
    first = synthetic_tournament([0.0, 100.0], pairs=30, seed=5)
    second = synthetic_tournament([0.0, 100.0], pairs=30, seed=5)
    np.testing.assert_array_equal(first.elo_ci95, second.elo_ci95)


def test_draws_count_half_and_per_bot_points_add_up():
    result = synthetic_tournament([0.0, 0.0, 0.0], pairs=100, p_draw=0.5)
    for row in result.ratings:
        assert row["draws"] > 0
    # Every game's points go to one bot and away from the other.
    assert sum(row["ppg"] * row["games"] for row in result.ratings) == pytest.approx(0.0, abs=1e-9)
    wins = sum(row["wins"] for row in result.ratings)
    losses = sum(row["losses"] for row in result.ratings)
    assert wins == losses
    for i, j in itertools.permutations(range(3), 2):
        there, back = result.head_to_head(i, j), result.head_to_head(j, i)
        assert there["ppg"] == pytest.approx(-back["ppg"])
        assert there["ppg_ci95"] == pytest.approx([-back["ppg_ci95"][1], -back["ppg_ci95"][0]])


def test_result_rejects_matches_that_are_not_the_pairings():
    result = synthetic_tournament([0.0, 50.0, 100.0], pairs=10, bootstrap=0)
    with pytest.raises(ValueError, match="pairings"):
        TournamentResult(result.specs, "tapa", 1, result.matches[:2], bootstrap=0)
    with pytest.raises(ValueError, match="not pairing"):
        TournamentResult(result.specs, "tapa", 1, result.matches[::-1], bootstrap=0)


# -- a real round robin ---------------------------------------------------------------------------
BOTS = ["random", "runner", "heuristic"]


@pytest.fixture(scope="module")
def tournament():
    return run_tournament(BOTS, variant_rules("tapa"), games=20, seed=2, workers=1, progress=False, bootstrap=200)


def test_real_round_robin_puts_the_heuristic_on_top(tournament):
    assert len(tournament.matches) == 3
    assert [(m.bot_a, m.bot_b) for m in tournament.matches] == [("random", "runner"), ("random", "heuristic"),
                                                                 ("runner", "heuristic")]
    assert [m.seed for m in tournament.matches] == [2000, 2001, 2002]
    assert all(m.records.games == 20 for m in tournament.matches)
    assert tournament.ratings[0]["bot"] == "heuristic"
    assert tournament.ratings[0]["ppg"] > 0
    assert all(row["games"] == 40 for row in tournament.ratings)


def test_same_seed_gives_the_same_tournament(tournament):
    again = run_tournament(BOTS, variant_rules("tapa"), games=20, seed=2, workers=1, progress=False,
                           bootstrap=200)
    first, second = tournament.to_dict(), again.to_dict()
    for data in (first, second):
        data.pop("seconds")
        for pairing in data["pairings"]:
            pairing.pop("seconds"), pairing.pop("games_per_s")
    assert first == second


def test_to_dict_is_json_with_every_pairing(tournament):
    data = json.loads(json.dumps(tournament.to_dict(), allow_nan=False))
    assert data["variant"] == "tapa" and data["seed"] == 2 and data["games_per_pairing"] == 20
    assert {row["bot"] for row in data["ratings"]} == set(BOTS)
    assert len(data["pairings"]) == 3
    for pairing in data["pairings"]:
        assert {"bot_a", "bot_b", "ppg", "ppg_ci95", "win_rate", "games"} <= set(pairing)
    for row in data["ratings"]:
        assert {"bot", "elo", "elo_ci95", "games", "wins", "draws", "ppg"} <= set(row)


def test_markdown_has_the_ranked_table_cross_table_and_the_settings(tournament):
    text = tournament.markdown()
    for bot in BOTS:
        assert f"| {bot} |" in text and f"| **{bot}** |" in text
    assert text.index("| 1 | heuristic |") < text.index("### Points per game")
    assert "mean rating is 0" in text and "virtual drawn game" in text
    assert "20 games per pairing (10 duplicate pairs" in text and "seed 2" in text and "variant tapa" in text


def test_write_produces_json_markdown_and_a_png(tournament, tmp_path):
    require("matplotlib")  # the ladder chart
    paths = tournament.write(tmp_path / "out")
    assert json.loads(paths["json"].read_text())["bots"] == BOTS
    assert "heuristic" in paths["md"].read_text()
    png = (tmp_path / "out" / "tournament.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000


@pytest.mark.parametrize("specs, message", [
    (["heuristic"], "at least 2 bots"),
    ([], "at least 2 bots"),
    (["random", "runner", "random"], "more than once"),
    (["random", "no-such-bot"], "unknown bot"),
])
def test_bad_bot_lists_are_rejected_before_playing(specs, message):
    with pytest.raises(BotError, match=message):
        run_tournament(specs, variant_rules("tapa"), games=2, progress=False)


def test_tournament_command_prints_the_ladder_and_writes_files(tmp_path, capsys):
    from tapa_ai.cli import main

    assert main(["tournament", "random", "runner", "heuristic", "--variant", "backgammon", "--games", "10",
                 "--workers", "1", "--quiet", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.index("heuristic") < out.index("| random") and "seed 1, variant backgammon" in out
    assert {p.name for p in tmp_path.iterdir()} == {"tournament.json", "tournament.md", "tournament.png"}
    assert main(["tournament", "random", "--variant", "tapa", "--games", "10", "--quiet"]) == 2
    assert "at least 2 bots" in capsys.readouterr().err
