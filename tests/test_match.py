"""tapa-ai match: duplicate pairs, seeds, worker independence, the confidence interval, output files."""

import json
import math

import numpy as np
import pytest

from tapa_ai.arena.duels import play_pairs
from tapa_ai.arena.runner import deal_dice
from tapa_ai.arena.stats import mean_ci
from tapa_ai.arena.match import run_match
from tapa_ai.bots.base import BotError
from tapa_ai.cli import main
from tapa_ai.rules import variant_rules


def first_move(afterstates, rng):
    return afterstates.offsets[:-1].copy()


@pytest.mark.parametrize("variant", ["tapa", "backgammon"])
def test_duplicate_pairs_share_their_dice(variant):
    # Equal deterministic players: each pair is one game played twice with the roles swapped.
    # Only the same dice at every turn can make the two games mirror images.
    records = play_pairs(variant_rules(variant), first_move, first_move, pairs=30, seed=7)
    assert np.array_equal(records.points_for_a[0::2], -records.points_for_a[1::2])
    assert np.array_equal(records.turns[0::2], records.turns[1::2])
    assert np.array_equal(records.kind[0::2], records.kind[1::2])
    assert records.turns.std() > 0  # different pairs got different dice


def test_opening_dice_are_never_doubles_where_the_rules_say_so():
    dice = deal_dice(variant_rules("tapa"), np.random.default_rng(1), 500, 3)
    assert (dice[:, 0, 0] != dice[:, 0, 1]).all() and (dice[:, 1, 0] == dice[:, 1, 1]).any()


def test_confidence_interval_on_known_data():
    mean, (low, high) = mean_ci(np.array([1.0, 2.0, 3.0, 4.0]))
    half = 1.96 * math.sqrt(5 / 3) / 2  # sample std of 1..4 is sqrt(5/3)
    assert mean == 2.5 and low == pytest.approx(2.5 - half) and high == pytest.approx(2.5 + half)
    assert mean_ci(np.array([3.0]))[1] == (-math.inf, math.inf)


def test_same_seed_same_result_whatever_the_number_of_workers():
    rules = variant_rules("plakoto")
    one = run_match("heuristic", "runner", rules, 120, seed=4, workers=1, chunk_pairs=20, progress=False)
    again = run_match("heuristic", "runner", rules, 120, seed=4, workers=1, chunk_pairs=20, progress=False)
    two = run_match("heuristic", "runner", rules, 120, seed=4, workers=2, chunk_pairs=20, progress=False)
    other = run_match("heuristic", "runner", rules, 120, seed=5, workers=1, chunk_pairs=20, progress=False)
    for result in (again, two):
        assert np.array_equal(result.records.points_for_a, one.records.points_for_a)
        assert np.array_equal(result.records.turns, one.records.turns)
    assert not np.array_equal(other.records.turns, one.records.turns)
    assert one.summary.ppg_ci95[0] > 0  # the heuristic bot beats the racer


def test_match_command_writes_the_record(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["match", "runner", "random", "--variant", "backgammon", "--games", "41", "--seed", "2",
                 "--workers", "1", "--quiet", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    record = json.loads(out.read_text())
    assert printed == record
    assert record["games"] == 42  # rounded up to whole pairs
    low, high = record["ppg_ci95"]
    assert low < record["ppg"] < high and 0 <= record["win_rate"] <= 1
    assert sum(record["kinds"].values()) + record["unfinished"] == 42
    rows = (tmp_path / "r.csv").read_text().splitlines()
    assert rows[0].startswith("game,pair,first,points_for_a") and len(rows) == 43
    assert sum(float(row.split(",")[3]) for row in rows[1:]) / 42 == pytest.approx(record["ppg"])


def test_bad_bot_in_a_match_is_a_clear_error(capsys):
    assert main(["match", "runner", "gnubg:0", "--variant", "tapa", "--games", "2", "--quiet"]) == 2
    assert "plays only backgammon" in capsys.readouterr().err
    with pytest.raises(BotError, match="Valid forms"):
        run_match("runner", "strong", variant_rules("tapa"), 2, progress=False)


def test_partial_chunks_resume_a_killed_match_and_extend_a_shorter_one(tmp_path, monkeypatch):
    import tapa_ai.arena.match as match

    rules = variant_rules("tapa")
    fresh = run_match("random", "runner", rules, 16, seed=5, chunk_pairs=2, progress=False)  # 4 chunks
    partial = tmp_path / "chunks"
    # A match killed during its third chunk: the two finished chunks are on disk.
    real_play = match._play_chunk
    calls = []

    def killed_after_two(job):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(job[0])
        return real_play(job)

    monkeypatch.setitem(match._CHUNK_PLAYERS, "games", killed_after_two)
    with pytest.raises(KeyboardInterrupt):
        run_match("random", "runner", rules, 12, seed=5, chunk_pairs=2, progress=False, partial=partial)
    assert sorted(p.name for p in partial.glob("chunk_*")) == ["chunk_00000_2.npz", "chunk_00001_2.npz"]
    earlier = sum(float(np.load(p)["seconds"]) for p in partial.glob("chunk_*"))
    assert earlier > 0
    # Resumed with more games: plays only the missing chunks, and the result is the fresh 16-game match.
    played = []

    def counting(job):
        played.append(job[0])
        return real_play(job)

    monkeypatch.setitem(match._CHUNK_PLAYERS, "games", counting)
    resumed = run_match("random", "runner", rules, 16, seed=5, chunk_pairs=2, progress=False, partial=partial)
    assert played == [2, 3]
    assert resumed.seconds > earlier  # the wall time of the saved chunks counts too
    for name in ("points_for_a", "a_won", "kind", "turns"):
        assert np.array_equal(getattr(resumed.records, name), getattr(fresh.records, name))
    # The same directory for another match is refused, naming what differs.
    with pytest.raises(BotError, match=r"holds chunks of another match \(different seed\)"):
        run_match("random", "runner", rules, 12, seed=6, chunk_pairs=2, progress=False, partial=partial)


def test_partial_chunks_belong_to_the_network_files(tmp_path):
    from .test_engine_model import save_tiny_net

    rules = variant_rules("tapa")
    path = save_tiny_net("tapa", tmp_path / "net.pt", seed=1, hidden=4)
    run_match(f"net:{path}", "runner", rules, 4, seed=1, chunk_pairs=2, progress=False, partial=tmp_path / "c")
    save_tiny_net("tapa", path, seed=2, hidden=4)  # another net under the same path
    with pytest.raises(BotError, match=r"different files"):
        run_match(f"net:{path}", "runner", rules, 4, seed=1, chunk_pairs=2, progress=False, partial=tmp_path / "c")
