"""Rerolling a benchmark set (``tapa-ai benchmark reroll``, tapa_ai/arena/benchmark/reroll.py) and scoring part of
a set (``score --every``): a tiny set of 4 tapa positions rolled out with 36 games a move, rolled out again."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tapa_ai.arena.benchmark.build import build_benchmark
from tapa_ai.arena.benchmark.file import BenchmarkError, read_set
from tapa_ai.arena.benchmark.reroll import reroll_benchmark
from tapa_ai.arena.benchmark.score import losses_of, score_bots
from tapa_ai.cli import main
from tapa_ai.net.model_id import file_sha256

BUILD = dict(seed=3, games=36, candidates=2, references=["heuristic"], workers=1, progress=False)
COST = ("cpu_seconds", "candidates_cpu_seconds")


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory):
    path = tmp_path_factory.mktemp("reroll") / "tapa.jsonl"
    build_benchmark("tapa", 4, path, **BUILD)
    return path


def _candidates(record: dict) -> list[dict]:
    return sorted(({k: v for k, v in c.items()} for c in record["candidates"]), key=lambda c: c["key"])


def test_a_reroll_with_the_sets_own_rollout_settings_reproduces_its_rollouts(tiny_set, tmp_path):
    out = tmp_path / "same.jsonl"
    result = reroll_benchmark(tiny_set, out, "net:tapa", progress=False)
    assert result.positions == 4 and result.new == 4
    source, again = read_set(tiny_set), read_set(out)
    for old, new in zip(source.records, again.records):
        assert new["from_index"] == old["index"] and new["seed"] == old["seed"]
        assert _candidates(new) == _candidates(old)  # equities, CIs, halves, differences and who chose them


def test_a_reroll_by_another_bot_keeps_the_positions_and_candidates_and_rates_them_anew(tiny_set, tmp_path):
    out = tmp_path / "heuristic.jsonl"
    reroll_benchmark(tiny_set, out, "heuristic", every=2, games=72, progress=False)
    source, again = read_set(tiny_set), read_set(out)
    settings = again.header["settings"]
    assert again.complete and settings["positions"] == 2 and [r["index"] for r in again.records] == [0, 1]
    assert settings["rollout"]["bot"] == "heuristic" and settings["rollout"]["games"] == 72
    assert settings["rollout"]["evaluator"] is None
    assert settings["rerolled_from"] == {"set": "tapa.jsonl", "sha256": file_sha256(tiny_set), "every": 2,
                                         "positions": 4, "rollout": source.header["settings"]["rollout"]}
    assert again.header["sampling"] == source.header["sampling"]
    assert again.header["command"] == f"tapa-ai benchmark reroll --set {tiny_set} --bot heuristic --out {out} " \
        "--every 2 --games 72"
    changed = 0
    for new, old in zip(again.records, source.records[::2]):
        assert new["from_index"] == old["index"]
        assert {k: new[k] for k in ("position", "dice", "phase", "source", "seed", "candidates_cpu_seconds")} == \
            {k: old[k] for k in ("position", "dice", "phase", "source", "seed", "candidates_cpu_seconds")}
        by_key = {c["key"]: c for c in old["candidates"]}
        assert sorted(by_key) == sorted(c["key"] for c in new["candidates"])
        equities = [c["equity"] for c in new["candidates"]]
        assert equities == sorted(equities, reverse=True) and new["candidates"][0]["difference"] == 0.0
        for c in new["candidates"]:
            assert c["games"] == 72 and c["move"] == by_key[c["key"]]["move"]
            assert c["chosen_by"] == by_key[c["key"]]["chosen_by"]
            changed += c["equity"] != by_key[c["key"]]["equity"]
    assert changed  # another bot plays other games


def test_a_stopped_reroll_run_again_gives_the_file_of_an_uninterrupted_one(tiny_set, tmp_path):
    whole, stopped = tmp_path / "whole.jsonl", tmp_path / "stopped.jsonl"
    reroll_benchmark(tiny_set, whole, "heuristic", progress=False)
    first = reroll_benchmark(tiny_set, stopped, "heuristic", progress=False, stop_after=1)
    assert first.positions == 1
    with open(stopped, "ab") as handle:  # killed while writing the second record
        handle.write(b'{"index": 1, "posit')
    second = reroll_benchmark(tiny_set, stopped, "heuristic", progress=False)
    assert second.resumed_from == 1 and second.new == 3
    strip = lambda records: [{k: v for k, v in r.items() if k not in COST} for r in records]  # noqa: E731
    assert strip(read_set(stopped).records) == strip(read_set(whole).records)
    assert reroll_benchmark(tiny_set, stopped, "heuristic", progress=False).new == 0


def test_score_every_k_scores_the_positions_a_reroll_of_every_k_took(tiny_set):
    bench = read_set(tiny_set)
    result = score_bots(tiny_set, ["heuristic"], every=2, workers=1, progress=False, replicates=200)
    data = result.to_dict()
    assert data["positions"] == 2 and data["planned"] == 4 and data["every"] == 2
    assert "2 of 4 positions (one in 2)" in result.report()
    keys = [next(c["key"] for c in r["candidates"] if "heuristic" in c.get("chosen_by", [])) for r in bench.records]
    want = losses_of(bench, keys)[::2]
    assert data["bots"][0]["mean_loss_mp"] == pytest.approx(want.mean())
    assert read_set(tiny_set).records == bench.records  # part of a set is never written back


@pytest.mark.parametrize("args, message", [
    (["--bot", "nosuchbot"], "nosuchbot"),
    (["--bot", "heuristic", "--every", "0"], "--every 0: must be an integer >= 1"),
    (["--bot", "net:plakoto"], "tapa"),
])
def test_a_bad_reroll_is_one_line(tiny_set, tmp_path, capsys, args, message):
    out = tmp_path / "bad.jsonl"
    assert main(["benchmark", "reroll", "--set", str(tiny_set), "--out", str(out), "--quiet", *args]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and message in error and error.startswith("tapa-ai benchmark reroll: ")
    assert not out.exists()


def test_a_reroll_of_a_partial_or_damaged_set_or_onto_another_reroll_is_refused(tiny_set, tmp_path):
    partial = tmp_path / "partial.jsonl"
    build_benchmark("tapa", 4, partial, stop_after=2, **BUILD)
    with pytest.raises(BenchmarkError, match="2 of 4 positions rated: finish its build"):
        reroll_benchmark(partial, tmp_path / "out.jsonl", "heuristic", progress=False)
    lines = tiny_set.read_text().splitlines()
    record = json.loads(lines[2])
    record["candidates"][0]["key"] = record["candidates"][0]["key"].replace("|X", "|O").replace("|0,0|", "|0,1|")
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join([*lines[:2], json.dumps(record), *lines[3:]]) + "\n")
    with pytest.raises(BenchmarkError, match=r"position 1: candidate .* is not a move of the roll"):
        reroll_benchmark(damaged, tmp_path / "out2.jsonl", "heuristic", progress=False)
    out = tmp_path / "out3.jsonl"
    reroll_benchmark(tiny_set, out, "heuristic", progress=False, stop_after=1)
    with pytest.raises(BenchmarkError, match="settings.rollout.games"):
        reroll_benchmark(tiny_set, out, "heuristic", games=72, progress=False)


def test_against_rates_the_same_moves_on_both_sets_and_says_how_far_the_rollouts_move_each_pair(tiny_set, tmp_path):
    from tapa_ai.arena.benchmark.reroll import compare_rollouts

    out = tmp_path / "heuristic.jsonl"
    reroll_benchmark(tiny_set, out, "heuristic", every=2, progress=False)
    before = tiny_set.read_bytes()
    # random plays moves neither set has: rolled out on each set with its own rollouts (the source not rewritten)
    result = compare_rollouts(out, tiny_set, ["net:tapa", "random"], replicates=200, progress=False)
    assert tiny_set.read_bytes() == before
    source, again = read_set(tiny_set), read_set(out)
    keys = {score.bot: score.keys for score in result.new.bots}
    for score, old in zip(result.new.bots, result.old.bots):
        assert old.keys == score.keys and old.bot == score.bot
        assert list(score.losses) == pytest.approx(list(losses_of(again, keys[score.bot])))
    subset = read_set(tiny_set)
    subset.records = subset.records[::2]
    for old in result.old.bots:
        assert np.isfinite(old.losses).all()  # every move rated there too
        kept = losses_of(subset, keys[old.bot])  # the moves the set had, as it had them
        assert old.losses[np.isfinite(kept)] == pytest.approx(kept[np.isfinite(kept)])
    assert not np.isfinite(losses_of(subset, keys["random"])).all()  # random did play a move the set lacked
    (lean,) = result.leans
    here = result.new.bots[0].losses - result.new.bots[1].losses
    there = result.old.bots[0].losses - result.old.bots[1].losses
    assert lean["positions"] == 2 and lean["here_mp"] == pytest.approx(here.mean())
    assert lean["there_mp"] == pytest.approx(there.mean())
    assert lean["moved_mp"] == pytest.approx(here.mean() - there.mean())
    assert lean["moved_mp_ci95"][0] <= lean["moved_mp"] <= lean["moved_mp_ci95"][1]
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["against"]["every"] == 2 and data["against"]["rollout"]["bot"] == "net:tapa"
    assert "how far these rollouts move them" in result.report()
    assert len(source.records) == 4


def test_against_a_set_the_reroll_did_not_come_from_is_one_line(tiny_set, tmp_path, capsys):
    out = tmp_path / "heuristic.jsonl"
    reroll_benchmark(tiny_set, out, "heuristic", every=2, progress=False)
    other = tmp_path / "other.jsonl"
    build_benchmark("tapa", 2, other, **BUILD)
    for against, message in ((other, "not the set"), ("tapa", "not the set")):
        assert main(["benchmark", "score", "heuristic", "--set", str(out), "--against", str(against), "--quiet"]) == 2
        error = capsys.readouterr().err.strip()
        assert "\n" not in error and message in error
    assert main(["benchmark", "score", "heuristic", "--set", str(tiny_set), "--against", str(other), "--quiet"]) == 2
    assert "is not a reroll" in capsys.readouterr().err
    assert main(["benchmark", "score", "heuristic", "--set", str(out), "--against", str(tiny_set), "--every", "2",
                 "--quiet"]) == 2
    assert "without --every" in capsys.readouterr().err
