"""Benchmark sets (``tapa-ai benchmark build|score``, tapa_ai/arena/benchmark*.py): a tiny set of 4 tapa positions
rolled out with 36 games a move, its file, resuming, scoring and the one-line errors."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from tapa_ai.arena.benchmark.build import build_benchmark, model_hashes
from tapa_ai.arena.benchmark.file import BenchmarkError, afterstate_key, read_set
from tapa_ai.arena.benchmark.sample import PHASES, _allocate, classify, sample_positions
from tapa_ai.arena.benchmark.score import bootstrap, losses_of, score_bots, summarise_scores
from tapa_ai.cli import main
from tapa_ai.movegen.batch import PositionBatch
from tapa_ai.movegen.generate import legal_moves_fast
from tapa_ai.notation.json_position import position_from_json
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.position import start_position

ARGS = dict(seed=3, games=36, candidates=2, references=["heuristic"], workers=1, progress=False)
CLI_ARGS = ["--seed", "3", "--games", "36", "--candidates", "2", "--reference", "heuristic", "--workers", "1",
            "--quiet"]


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory):
    """A set of 4 tapa positions built through the command line, and what the command printed."""
    path = tmp_path_factory.mktemp("bench") / "tapa.jsonl"
    capture = pytest.MonkeyPatch()
    lines = []
    capture.setattr("builtins.print", lambda *a, **k: lines.append(" ".join(map(str, a))))
    try:
        assert main(["benchmark", "build", "--variant", "tapa", "--positions", "4", "--out", str(path), *CLI_ARGS]) == 0
    finally:
        capture.undo()
    return path, lines


def _without_cost(records):
    cost = ("cpu_seconds", "candidates_cpu_seconds")
    return [{k: v for k, v in record.items() if k not in cost} for record in records]


def test_a_tiny_build_rates_the_candidates_of_every_position_and_reads_back(tiny_set):
    path, printed = tiny_set
    bench = read_set(path)
    header = bench.header
    assert header["format"] == "tapa-ai-benchmark" and header["version"] == 1 and header["variant"] == "tapa"
    assert header["settings"]["rollout"]["games"] == 36 and header["settings"]["references"] == ["heuristic"]
    assert header["models"]["net:tapa"]["sha256"] and "generation" in header["models"]["net:tapa"]["label"]
    assert header["command"].startswith("tapa-ai benchmark build --variant tapa --positions 4")
    assert sum(header["sampling"]["natural_phase_share"].values()) == pytest.approx(1.0, abs=1e-3)
    assert bench.complete and [r["index"] for r in bench.records] == [0, 1, 2, 3]
    assert "4 positions, 4 new" in printed[-1] and "CPU-s a position" in printed[-1]
    for record in bench.records:
        assert record["phase"] in PHASES and record["seed"] == 3 * 100_000 + record["index"]
        assert record["cpu_seconds"] > record["candidates_cpu_seconds"] > 0
        position = position_from_json(record["position"])
        legal = {afterstate_key(move.position): move for move in legal_moves_fast(position, record["dice"])}
        assert len(legal) >= 2  # forced rolls are skipped
        keys = [c["key"] for c in record["candidates"]]
        assert len(set(keys)) == len(keys) and set(keys) <= set(legal)
        equities = [c["equity"] for c in record["candidates"]]
        assert equities == sorted(equities, reverse=True)
        for c in record["candidates"]:
            assert c["games"] == 36 and c["ci95"][0] <= c["equity"] <= c["ci95"][1]
        assert any("net:tapa@2ply#1" in c["chosen_by"] for c in record["candidates"])
        assert any("heuristic" in c["chosen_by"] for c in record["candidates"])
        assert record["candidates"][0]["difference"] == 0.0


def test_a_stopped_build_run_again_gives_the_file_of_an_uninterrupted_build(tiny_set, tmp_path):
    path, _ = tiny_set
    out = tmp_path / "resumed.jsonl"
    first = build_benchmark("tapa", 4, out, stop_after=2, **ARGS)
    assert first.positions == 2 and len(read_set(out).records) == 2
    with open(out, "ab") as handle:  # killed while writing the third record
        handle.write(b'{"index": 2, "position": {"varia')
    with pytest.raises(BenchmarkError, match="truncated record"):
        read_set(out)
    second = build_benchmark("tapa", 4, out, **ARGS)
    assert second.resumed_from == 2 and second.new == 2
    whole, resumed = read_set(path), read_set(out)
    assert _without_cost(resumed.records) == _without_cost(whole.records)
    assert {k: v for k, v in resumed.header.items() if k != "command"} == \
        {k: v for k, v in whole.header.items() if k != "command"}
    again = build_benchmark("tapa", 4, out, **ARGS)  # nothing left to do
    assert again.new == 0 and len(read_set(out).records) == 4


def test_other_settings_on_an_existing_set_are_refused_naming_what_differs(tiny_set, capsys):
    path, _ = tiny_set
    before = path.read_bytes()
    args = [a if a != "36" else "72" for a in CLI_ARGS]
    assert main(["benchmark", "build", "--variant", "tapa", "--positions", "4", "--out", str(path), *args]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "settings.rollout.games" in error and "another --out" in error
    assert path.read_bytes() == before


def test_the_best_candidate_loses_nothing_and_another_loses_exactly_its_gap(tiny_set):
    bench = read_set(tiny_set[0])
    best = [r["candidates"][0]["key"] for r in bench.records]
    worst = [r["candidates"][-1]["key"] for r in bench.records]
    gaps = [1000 * (r["candidates"][0]["equity"] - r["candidates"][-1]["equity"]) for r in bench.records]
    losses = {"best": losses_of(bench, best), "worst": losses_of(bench, worst), "none": losses_of(bench, ["?"] * 4)}
    assert losses["best"].tolist() == [0.0] * 4
    assert losses["worst"] == pytest.approx(gaps)
    assert np.isnan(losses["none"]).all()
    result = summarise_scores(bench, {"best": best, "worst": worst, "none": ["?"] * 4, "again": best}, replicates=200)
    by_bot = {b.bot: b.stats for b in result.bots}
    assert by_bot["best"]["mean_loss_mp"] == 0.0 and by_bot["best"]["best_move_share"] == 1.0
    assert by_bot["worst"]["mean_loss_mp"] == pytest.approx(np.mean(gaps))
    assert by_bot["worst"]["blunder_share"] == pytest.approx(np.mean(np.array(gaps) > 80))
    assert by_bot["none"]["unrated_share"] == 1.0
    pair = next(p for p in result.pairs if p["a"] == "best" and p["b"] == "worst")
    assert pair["difference_mp"] == pytest.approx(-np.mean(gaps)) and pair["positions"] == 4
    # the rollout noise of the pair, from the two halves of the 36 games (18 each: the variance of the whole
    # mean is a quarter of the squared difference of the halves' differences) ...
    first, last = (r["candidates"][0] for r in bench.records), (r["candidates"][-1] for r in bench.records)
    split = [((w["halves"][0] - b["halves"][0]) - (w["halves"][1] - b["halves"][1])) ** 2 / 4
             for b, w in zip(first, last)]
    for record in bench.records:
        for c in record["candidates"]:  # the halves' mean is the equity
            assert c["equity"] == pytest.approx(sum(c["halves"]) / 2, abs=2e-6)
    assert pair["noise_sd_mp"] == pytest.approx(1000 * np.sqrt(np.mean(split)))
    assert pair["noise_share"] == pytest.approx(pair["noise_sd_mp"] ** 2 / pair["sd_mp"] ** 2)
    assert pair["noise_from_halves"] == 1.0
    # ... and, in a set whose records have no halves, from the worst move's paired CI to the best
    for record in bench.records:
        for c in record["candidates"]:
            del c["halves"]
    half = [1000 * (r["candidates"][-1]["difference_ci95"][1] - r["candidates"][-1]["difference_ci95"][0]) / 2
            for r in bench.records]
    older = next(p for p in summarise_scores(bench, {"best": best, "worst": worst}, replicates=200).pairs)
    assert older["noise_sd_mp"] == pytest.approx(np.sqrt(np.mean((np.array(half) / 1.959964) ** 2)))
    assert older["noise_from_halves"] == 0.0
    same = next(p for p in result.pairs if p["a"] == "best" and p["b"] == "again")
    assert same["noise_sd_mp"] == 0.0 and same["sd_mp"] == 0.0 and same["noise_share"] is None
    json.dumps(result.to_dict(), allow_nan=False)  # NaN written as null


def test_scoring_is_deterministic_and_a_move_the_set_lacks_is_rolled_out_once_and_kept(tiny_set, tmp_path):
    path = tmp_path / "copy.jsonl"
    shutil.copy(tiny_set[0], path)
    unrated = score_bots(path, ["random"], rollout=False, workers=1, progress=False, replicates=200)
    assert path.read_bytes() == tiny_set[0].read_bytes()  # --no-rollout leaves the file alone
    first = score_bots(path, ["random", "heuristic"], workers=1, progress=False, replicates=200)
    added = [c for r in read_set(path).records for c in r["candidates"] if c.get("added_by")]
    assert first.added == len(added) > 0 and all(c["added_by"] == ["random"] for c in added)
    assert all(c["games"] == 36 and "difference" not in c for c in added)
    second = score_bots(path, ["random", "heuristic"], workers=1, progress=False, replicates=200)
    assert second.added == 0
    strip = lambda result: [{k: v for k, v in b.stats.items() if k != "cpu_seconds_per_move"} for b in result.bots]
    assert strip(first) == strip(second) and first.pairs == second.pairs
    assert first.bots[0].stats["unrated_share"] == 0.0
    assert unrated.bots[0].stats["unrated_share"] == pytest.approx(len(added) / 4)  # one move a position
    text = first.report()
    assert "random" in text and "heuristic" in text and "paired differences" in text


def test_a_set_that_cannot_be_written_is_still_scored_with_a_note(tiny_set, tmp_path, monkeypatch, capsys):
    import tapa_ai.arena.benchmark.score as scoring

    path = tmp_path / "installed.jsonl"
    shutil.copy(tiny_set[0], path)

    def refuse(*args, **kwargs):
        raise BenchmarkError(f"cannot write {path}: Read-only file system")

    monkeypatch.setattr(scoring, "write_set", refuse)
    result = score_bots(path, ["random"], workers=1, progress=False, replicates=200)
    assert result.added > 0 and result.bots[0].stats["unrated_share"] == 0.0
    assert "rated for this run only" in capsys.readouterr().err
    assert path.read_bytes() == tiny_set[0].read_bytes()


def test_a_gzipped_set_is_scored_and_kept_gzipped_and_a_shipped_one_by_name_is_never_rewritten(tiny_set, tmp_path,
                                                                                              monkeypatch):
    import gzip

    import tapa_ai.arena.benchmark.file as files

    packed = tmp_path / "tapa.jsonl.gz"
    packed.write_bytes(gzip.compress(tiny_set[0].read_bytes()))
    assert score_bots(packed, ["random"], workers=1, progress=False, replicates=200).added > 0
    assert any(c.get("added_by") for r in read_set(packed).records for c in r["candidates"])
    shipped = tmp_path / "benchmarks"
    shipped.mkdir()
    (shipped / "tapa.jsonl.gz").write_bytes(gzip.compress(tiny_set[0].read_bytes()))
    before = (shipped / "tapa.jsonl.gz").read_bytes()
    monkeypatch.setattr(files, "sets_dir", lambda: shipped)
    monkeypatch.chdir(tmp_path)
    assert score_bots("tapa", ["random"], workers=1, progress=False, replicates=200).added > 0
    assert (shipped / "tapa.jsonl.gz").read_bytes() == before
    with pytest.raises(BenchmarkError, match="gzip the finished set"):
        build_benchmark("tapa", 4, tmp_path / "new.jsonl.gz", **ARGS)


def _position(variant, stacks: dict, turn="X", off=(0, 0)):
    points = [""] * 24
    for index, stack in stacks.items():
        points[index] = stack
    return position_from_json({"variant": variant, "points": points, "off": {"X": off[0], "O": off[1]},
                               "turn": turn})


O_START = {0: "OOOOO", 1: "OOOOO", 2: "OOOO"}


def test_phases_tell_contact_pins_mothers_races_and_bear_offs_apart():
    rules = variant_rules("tapa")
    cases = {
        "contact": start_position(rules, "X"),
        "mother": _position("tapa", {23: "X", 22: "XXXXXXX", 21: "XXXXXXX", **O_START, 3: "O"}),
        "pins": _position("tapa", {23: "XXXXX", 22: "XXXXX", 21: "XXXX", 10: "XO", **O_START}),
        "race": _position("tapa", {10: "XXXXX", 0: "XXXXXXXXXX", 13: "OOOOO", 23: "OOOOOOOOOO"}),
        "bearoff": _position("tapa", {0: "XXXXX", 5: "XXXXX", 18: "OOOO", 23: "OOOO"}, off=(5, 7)),
    }
    for turn in ("X", "O"):  # the same phase from either side's view
        positions = [p.with_changes(turn=turn) for p in cases.values()]
        codes = classify(PositionBatch.from_positions(positions), rules)
        assert [PHASES[c] for c in codes] == list(cases)
    backgammon = variant_rules("backgammon")
    assert PHASES[classify(PositionBatch.from_positions([start_position(backgammon)]), backgammon)[0]] == "contact"


def test_positions_are_drawn_to_the_mix_and_the_same_for_the_same_seed():
    rules = variant_rules("tapa")
    mix = {"contact": 0.5, "pins": 0.3, "race": 0.2}
    plan, stats = sample_positions(rules, 10, 5, "net:tapa", [("self", 1.0)], mix)
    counts = {name: sum(p["phase"] == name for p in plan) for name in PHASES}
    assert [counts[name] for name in PHASES] == _allocate(10, np.array([mix.get(n, 0) for n in PHASES])).tolist()
    assert plan == sample_positions(rules, 10, 5, "net:tapa", [("self", 1.0)], mix)[0]
    assert plan != sample_positions(rules, 10, 6, "net:tapa", [("self", 1.0)], mix)[0]
    assert stats["games"] == {"net:tapa vs itself": 64} and 0 < stats["forced_share"] < 1
    assert all(p["source"] == "net:tapa vs itself" and p["mover"] == "net:tapa" for p in plan)


def test_the_bootstrap_is_seeded_and_resamples_within_each_phase():
    values = np.array([0.0, 0.0, 10.0, 10.0, 30.0])
    strata = np.array(["a", "a", "b", "b", "c"])
    one = bootstrap(values, strata, 500, 1, {"a": 0.5, "b": 0.25, "c": 0.25})
    assert np.array_equal(one["mean"], bootstrap(values, strata, 500, 1)["mean"])
    assert (one["phases"]["a"] == 0).all() and (one["phases"]["b"] == 10).all() and (one["phases"]["c"] == 30).all()
    assert np.allclose(one["mean"], 50 / 5) and np.allclose(one["weighted"], 0.25 * 10 + 0.25 * 30)


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error and "\n" not in error and "Traceback" not in error
    return error


def test_bad_input_gets_one_clear_line_and_exit_code_2(tiny_set, tmp_path, capsys):
    path = str(tiny_set[0])
    score = ["benchmark", "score", "--workers", "1", "--quiet"]
    assert "cannot play 'tapa'" in _one_line_error(capsys, [*score, "net:plakoto", "--set", path])
    assert "unknown bot" in _one_line_error(capsys, [*score, "nosuchbot", "--set", path])
    lines = tiny_set[0].read_text().splitlines(keepends=True)
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text("".join(lines[:3]) + lines[3][:40])
    assert "line 4: truncated record" in _one_line_error(capsys, [*score, "heuristic", "--set", str(truncated)])
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join(lines[:2]) + "{not json\n" + "".join(lines[3:]))
    assert "line 3: not a benchmark record" in _one_line_error(capsys, [*score, "heuristic", "--set", str(damaged)])
    empty = tmp_path / "empty.jsonl"
    empty.write_text(lines[0])
    assert "no rated positions yet" in _one_line_error(capsys, [*score, "heuristic", "--set", str(empty)])
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"games": 10}) + "\n")
    assert "not a tapa-ai benchmark set" in _one_line_error(capsys, [*score, "heuristic", "--set", str(other)])
    assert "no such file" in _one_line_error(capsys, [*score, "heuristic", "--set", str(tmp_path / "none.jsonl")])
    build = ["benchmark", "build", "--variant", "tapa", "--positions", "2", "--out", str(tmp_path / "new.jsonl")]
    assert "phases are" in _one_line_error(capsys, [*build, "--mix", "opening=1"])
    assert "NAME=WEIGHT" in _one_line_error(capsys, [*build, "--source", "heuristic"])
    assert "unknown bot" in _one_line_error(capsys, [*build, "--reference", "nosuchbot"])


@pytest.mark.parametrize("field, value, says", [
    ("equity", 3.5, "equity 3.5 lies outside the variant's range [-3, 3]"),
    ("equity", -18.56, "equity -18.56 lies outside the variant's range [-3, 3]"),
    ("equity", float("nan"), "has no finite equity (nan)"),
    ("equity", float("inf"), "has no finite equity (inf)"),
    ("equity", "0.5", "has no finite equity ('0.5')"),
    ("ci95", [float("nan"), 0.1], "ci95 [nan, 0.1] is not two finite numbers"),
    ("ci95", [0.2, 0.1], "ci95 [0.2, 0.1] is not two finite numbers, low then high"),
    ("difference", float("nan"), "difference nan is not a number within +-6"),
    ("games", 0, "games 0 is not a positive number of games"),
])
def test_a_record_with_an_equity_out_of_range_or_not_a_number_is_refused_with_its_line(tiny_set, tmp_path, capsys,
                                                                                       field, value, says):
    lines = tiny_set[0].read_text().splitlines(keepends=True)
    record = json.loads(lines[2])
    record["candidates"][-1][field] = value
    damaged = tmp_path / "numbers.jsonl"
    damaged.write_text("".join(lines[:2]) + json.dumps(record) + "\n" + "".join(lines[3:]))
    with pytest.raises(BenchmarkError, match="line 3: candidate") as refused:
        read_set(damaged)
    assert says in str(refused.value)
    score = ["benchmark", "score", "heuristic", "--set", str(damaged), "--workers", "1", "--quiet"]
    assert says in _one_line_error(capsys, score)


def test_the_equity_range_is_the_variant_s_top_points_and_a_luck_adjusted_rollout_may_stray_a_little(tiny_set,
                                                                                                    tmp_path):
    lines = tiny_set[0].read_text().splitlines(keepends=True)
    header, record = json.loads(lines[0]), json.loads(lines[1])
    plakoto = {**header, "variant": "plakoto", "rules": variant_rules("plakoto").to_dict()}
    record["candidates"][0]["equity"] = 2.1
    path = tmp_path / "range.jsonl"
    for head, accepted in ((header, True), (plakoto, False),
                           ({**plakoto, "settings": {**header["settings"],
                                                     "rollout": {**header["settings"]["rollout"], "luck": True}}},
                            True)):
        path.write_text(json.dumps(head) + "\n" + json.dumps(record) + "\n")
        if accepted:
            assert read_set(path).records[0]["candidates"][0]["equity"] == 2.1
        else:
            with pytest.raises(BenchmarkError, match=r"line 2: candidate 0: equity 2.1 lies outside the variant's "
                                                     r"range \[-2, 2\]"):
                read_set(path)


def test_the_study_fits_points_per_game_per_millipoint_and_checks_each_duel_s_order(tmp_path, capsys):
    from tapa_ai.arena.benchmark.study import cheapest_rollouts, known_duel, study

    pair = lambda a, b, w, ci: {"a": a, "b": b, "positions": 100, "difference_mp": w, "difference_mp_ci95": ci,
                                "weighted_difference_mp": w, "weighted_difference_mp_ci95": ci}
    score = {"set": "s.jsonl", "variant": "tapa", "decisions_per_side_per_game": 40.0, "cpu_seconds_per_position": 8.0,
             "candidates_cpu_seconds_per_position": 0.2, "rollout": {"games": 1296, "rotate": 1},
             "pairs": [{**pair("random", "heuristic", 200.0, [150.0, 250.0]), "noise_share": 0.3},
                       pair("heuristic", "runner", -100.0, [-150.0, -50.0])]}
    duels = [known_duel(["heuristic", "random", "6", "5.9", "6.1"]), known_duel(["heuristic", "runner", "3", "2.9", "3.1"]),
             known_duel(["pubeval", "random", "1", "0", "2"])]
    result = study(score, duels)
    assert result["k_theory"] == 0.04 and result["k_fit"] == pytest.approx((200 * 6 + 100 * 3) / (200 ** 2 + 100 ** 2))
    assert result["scored"] == 2 and result["agree"] == 2 and not result["duels"][2]["scored"]
    first = result["duels"][0]
    assert first["benchmark_mp"] == -200.0 and first["benchmark_mp_ci95"] == [-250.0, -150.0]
    assert result["k_used"] == 0.04 and first["predicted_ppg"] == pytest.approx(0.04 * 200)  # k_theory, not the fit
    assert first["positions_for_duel_ci"] == pytest.approx(math.ceil(100 * (50 / (0.1 / 0.04)) ** 2), abs=1)
    assert first["build_cpu_hours"] == pytest.approx(first["positions_for_duel_ci"] * 8 / 3600)
    assert first["noise_share"] == 0.3
    assert first["cheapest"] == cheapest_rollouts(first["positions_for_duel_ci"], 0.3, 8.0, 0.2, 1296, 36)
    assert "cheapest" not in result["duels"][1]  # no noise share in its pair
    path = tmp_path / "score.json"
    path.write_text(json.dumps(score))
    assert main(["benchmark", "study", str(path), "--known", "heuristic", "random", "6", "5.9", "6.1"]) == 0
    assert "1 of 1 scored duels" in capsys.readouterr().out
    assert "no file" in _one_line_error(capsys, ["benchmark", "study", str(tmp_path / "none.json"),
                                                      "--known", "a", "b", "1", "0", "2"])
    assert "give duels" in _one_line_error(capsys, ["benchmark", "study", str(path)])
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    assert "not a score record" in _one_line_error(capsys, ["benchmark", "study", str(listed), "--known", "a", "b",
                                                            "1", "0", "2"])


def test_the_noise_of_a_pair_follows_from_how_its_spread_grows_with_shorter_rollouts():
    """Positions' own spread 30 mp, noise 20 mp at 1296 games: at 288 games the noise is 20 * sqrt(4.5)."""
    from tapa_ai.arena.benchmark.study import noise_between_lengths

    def score(games, sd, noise, a="heuristic", b="random"):
        return {"variant": "tapa", "rollout": {"games": games}, "positions": 1000,
                "pairs": [{"a": a, "b": b, "positions": 1000, "sd_mp": sd, "noise_sd_mp": noise,
                           "noise_share": noise ** 2 / sd ** 2, "noise_from_halves": 1.0}]}

    long = score(1296, math.hypot(30, 20), 20.0)
    short = score(288, math.hypot(30, 20 * math.sqrt(4.5)), 20 * math.sqrt(4.5), a="random", b="heuristic")
    [row] = noise_between_lengths(long, short)
    share = 400 / (900 + 400)
    assert row["implied_noise_share"] == pytest.approx(share)
    assert row["long_noise_share"] == pytest.approx(share) and row["short_noise_share_at_long"] == pytest.approx(share)
    with pytest.raises(BenchmarkError, match="more games"):
        noise_between_lengths(short, long)


def test_a_rollout_s_halves_are_whole_blocks_of_its_games():
    from tapa_ai.arena.rollout_report import half_games

    assert [half_games(g, 36) for g in (1296, 324, 288, 72, 36)] == [648, 144, 144, 36, 18]
    assert [half_games(g, 1) for g in (5, 2)] == [2, 1]


def test_the_cheapest_rollouts_are_short_where_the_noise_is_cheap_to_average_and_long_where_it_dominates():
    from tapa_ai.arena.benchmark.study import cheapest_rollouts

    # no rollout noise: the shortest rollouts give the same separation with the same positions
    assert cheapest_rollouts(1000, 0.0, 3.0, 0.1, 1296, 36) == \
        {"rollout_games": 36, "positions": 1000, "build_cpu_hours": pytest.approx(1000 * (0.1 + 2.9 / 36) / 3600)}
    # all noise: the positions needed fall with the games, and the candidates' fixed cost favours the longest
    assert cheapest_rollouts(1000, 1.0, 3.0, 0.1, 1296, 36)["rollout_games"] == 8 * 1296
    # between: the optimum of (1 - s + s G / g)(fixed + per game g), G sqrt(s / (1 - s) fixed / rollouts)
    share, cpu, fixed, games = 0.4, 3.0, 0.1, 1296
    found = cheapest_rollouts(1000, share, cpu, fixed, games, 36)
    best = games * math.sqrt(share / (1 - share) * fixed / (cpu - fixed))
    assert abs(found["rollout_games"] - best) <= 36 and found["rollout_games"] % 36 == 0
    assert found["positions"] == math.ceil(1000 * (1 - share + share * games / found["rollout_games"]))
    assert found["build_cpu_hours"] < 1000 * cpu / 3600  # cheaper than the set as built


def test_the_shipped_sets_are_whole_and_rolled_out_by_the_models_that_ship():
    """A shipped set (tapa_ai/models/benchmarks/) names its variant, is complete, and every model it was built
    with is the file that ships now: a new model must come with a rebuilt set (docs/benchmark.md)."""
    from tapa_ai.arena.benchmark.file import resolve_set, sets_dir
    from tapa_ai.bots.spec import model_file_path
    from tapa_ai.net.model_id import file_sha256

    shipped = sorted(sets_dir().glob("*.jsonl.gz"))
    # the sets docs/benchmark.md describes: one a variant, and the backgammon one rolled out again by gnubg
    assert [path.name for path in shipped] == ["backgammon-gnubg0.jsonl.gz", "backgammon.jsonl.gz",
                                               "fevga.jsonl.gz", "gulbara.jsonl.gz", "narde.jsonl.gz",
                                               "plakoto.jsonl.gz", "tapa.jsonl.gz"]
    for path in shipped:
        name = path.name.removesuffix(".jsonl.gz")
        assert resolve_set(name) == (path, True)
        found = read_set(path)
        assert found.header["variant"] == name.split("-")[0] and found.complete and not found.partial_tail
        assert [record["index"] for record in found.records] == list(range(found.planned))
        for spec, model in found.header["models"].items():
            assert not model["file"].startswith("/"), f"{name}: {spec} names a machine's own path"
            assert file_sha256(model_file_path(spec)) == model["sha256"], (
                f"{name}: {spec} is no longer the file the set was built with: rebuild the set")
        rollout = found.header["settings"]["rollout"]["bot"]
        assert rollout in found.header["models"] or rollout.startswith("gnubg:")
        origin = found.header["settings"].get("rerolled_from")
        if origin:  # a reroll of a shipped set: of the file that ships now
            assert file_sha256(sets_dir() / origin["set"]) == origin["sha256"], f"{name}: reroll it again"
        for record in found.records:
            equities = [candidate["equity"] for candidate in record["candidates"]]
            assert equities and equities == sorted(equities, reverse=True)


def test_a_set_names_its_models_without_the_machines_paths_wherever_it_is_built(tmp_path, monkeypatch):
    """A shipped model is named inside the package (``tapa_ai/models/...``) from any working directory, a file
    under the working directory relative to it; only a file elsewhere keeps the path it was given."""
    from tapa_ai.net.model_id import file_sha256
    from tapa_ai.net.shipped import MODELS_DIR

    own = tmp_path / "work" / "mine.pt"
    own.parent.mkdir()
    shutil.copy(MODELS_DIR / "generations" / "tapa-g1.pt", own)
    elsewhere = tmp_path / "elsewhere.pt"
    shutil.copy(own, elsewhere)
    monkeypatch.chdir(own.parent)
    found = model_hashes(["net:tapa", "net:plakoto-g1", f"net:{own.name}", f"net:{elsewhere}", "heuristic", "self"])
    assert set(found) == {"net:tapa", "net:plakoto-g1", f"net:{own.name}", f"net:{elsewhere}"}
    assert found["net:tapa"]["file"] == "tapa_ai/models/tapa.pt"
    assert found["net:plakoto-g1"]["file"] == "tapa_ai/models/generations/plakoto-g1.pt"
    assert found["net:tapa"]["label"].startswith("tapa_ai/models/tapa.pt (generation ")
    assert found["net:tapa"]["sha256"] == file_sha256(MODELS_DIR / "tapa.pt")
    assert found[f"net:{own.name}"]["file"] == "mine.pt"
    assert found[f"net:{elsewhere}"]["file"] == str(elsewhere)


# -- issue 50: planted bugs the tests above let through ------------------------------------------------
def _synthetic_set(losses: dict[str, list[float]], shares: dict[str, float]):
    """A set in memory whose position ``i`` of phase ``p`` has two candidates: the build's best ("best", equity 0)
    and "worse", ``losses[p][i]`` millipoints below it; the sampling games' phase shares are ``shares``."""
    from tapa_ai.arena.benchmark.file import BenchmarkSet

    records = [{"phase": phase, "candidates": [{"key": "best", "equity": 0.0, "ci95": [-0.01, 0.01]},
                                               {"key": "worse", "equity": -loss / 1000, "ci95": [-0.1, 0.1]}]}
               for phase, values in losses.items() for loss in values]
    header = {"variant": "tapa", "settings": {"positions": len(records), "rollout": {}},
              "sampling": {"natural_phase_share": shares}, "models": {}}
    return BenchmarkSet("synthetic.jsonl", header, records)


def test_the_bootstrap_interval_has_the_width_of_the_spread_of_the_losses():
    """The replicates of a stratified bootstrap spread as the mean does when each phase is drawn again: their SD
    is sqrt(sum over phases of (n_p / n)^2 var_p / n_p) (var_p of the phase's losses, ddof 0), and the 95%
    interval is about 2 x 1.96 of it wide. 4,000 replicates: the SD within about 1%, the width within 3%."""
    rng = np.random.default_rng(50)
    losses = {"contact": np.abs(rng.normal(30.0, 12.0, 60)).tolist(), "race": np.abs(rng.normal(8.0, 4.0, 30)).tolist(),
              "bearoff": rng.exponential(3.0, 10).tolist()}  # losses >= 0: the build's best is the best
    shares = {"contact": 0.5, "race": 0.3, "bearoff": 0.2}
    values = np.concatenate([np.array(v) for v in losses.values()])
    strata = np.array([phase for phase, v in losses.items() for _ in v])
    n = values.size
    se = {phase: np.std(v) / np.sqrt(len(v)) for phase, v in losses.items()}
    overall = np.sqrt(sum((len(v) / n) ** 2 * se[phase] ** 2 for phase, v in losses.items()))
    weighted = np.sqrt(sum(shares[phase] ** 2 * se[phase] ** 2 for phase in losses))
    boot = bootstrap(values, strata, 4000, 1, shares)
    assert np.std(boot["mean"]) == pytest.approx(overall, rel=0.05)
    assert np.mean(boot["mean"]) == pytest.approx(values.mean(), abs=4 * overall / np.sqrt(4000))
    for phase in losses:
        assert np.std(boot["phases"][phase]) == pytest.approx(se[phase], rel=0.05)
    assert np.std(boot["weighted"]) == pytest.approx(weighted, rel=0.05)
    # ... and so the intervals a score reports, over the same losses as a bot's
    bench = _synthetic_set(losses, shares)
    stats = summarise_scores(bench, {"worse": ["worse"] * n}, replicates=4000).bots[0].stats
    for (low, high), sd in ((stats["mean_loss_mp_ci95"], overall), (stats["weighted_loss_mp_ci95"], weighted),
                            *((stats["by_phase"][p]["mean_loss_mp_ci95"], se[p]) for p in losses)):
        assert high - low == pytest.approx(2 * 1.959964 * sd, rel=0.1)
    low, high = stats["mean_loss_mp_ci95"]
    assert stats["mean_loss_mp"] == pytest.approx(values.mean()) and low < values.mean() < high
    # each interval: the 2.5th and 97.5th percentiles of the replicates (the score's seed, 1)
    assert stats["mean_loss_mp_ci95"] == pytest.approx(np.percentile(boot["mean"], [2.5, 97.5]))
    assert stats["weighted_loss_mp_ci95"] == pytest.approx(np.percentile(boot["weighted"], [2.5, 97.5]))


def test_the_weighted_loss_weights_each_phase_s_mean_by_its_share_of_the_sampling_games():
    """Not the mean over the positions (the set over-samples rare phases): sum of share x phase mean over the
    phases the set has, divided by their shares' sum (a phase with no position drops out)."""
    losses = {"contact": [0.0, 10.0, 20.0, 30.0], "race": [100.0, 140.0], "bearoff": [5.0]}
    shares = {"contact": 0.5, "race": 0.1, "bearoff": 0.2, "mother": 0.2, "pins": 0.0}
    expected = (0.5 * 15.0 + 0.1 * 120.0 + 0.2 * 5.0) / 0.8
    bench = _synthetic_set(losses, shares)
    keys = len(bench.records)
    result = summarise_scores(bench, {"worse": ["worse"] * keys, "best": ["best"] * keys}, replicates=500)
    worse = result.bots[0].stats
    assert worse["mean_loss_mp"] == pytest.approx(305.0 / 7)
    assert worse["weighted_loss_mp"] == pytest.approx(expected)
    assert worse["weighted_loss_mp_ci95"][0] <= expected <= worse["weighted_loss_mp_ci95"][1]
    assert {p: s["mean_loss_mp"] for p, s in worse["by_phase"].items()} == pytest.approx(
        {"contact": 15.0, "race": 120.0, "bearoff": 5.0})
    assert {p: s["positions"] for p, s in worse["by_phase"].items()} == {"contact": 4, "race": 2, "bearoff": 1}
    assert result.bots[1].stats["weighted_loss_mp"] == 0.0
    pair = result.pairs[0]
    assert pair["difference_mp"] == pytest.approx(305.0 / 7)
    assert pair["weighted_difference_mp"] == pytest.approx(expected)
    # no shares (an older set): no weighted loss
    assert summarise_scores(_synthetic_set(losses, {}), {"worse": ["worse"] * keys},
                            replicates=500).bots[0].stats["weighted_loss_mp"] is None


def test_a_move_added_by_a_later_score_does_not_move_the_sets_best(tiny_set):
    """The loss is measured from the best move the build rolled out: a move a scored bot added that rolls out
    better gets a negative loss, and the build's best still loses nothing (so a bot's score does not depend on
    which bots were scored before it)."""
    bench = read_set(tiny_set[0])
    best = [r["candidates"][0]["key"] for r in bench.records]
    gap = [1000 * (r["candidates"][0]["equity"] - r["candidates"][-1]["equity"]) for r in bench.records]
    record = bench.records[1]
    better = {**record["candidates"][0], "key": "added-better", "equity": record["candidates"][0]["equity"] + 0.025,
              "added_by": ["random"]}
    worse = {**record["candidates"][-1], "key": "added-worse", "equity": record["candidates"][-1]["equity"] - 0.01,
             "added_by": ["random"]}
    record["candidates"] = [better, *record["candidates"], worse]
    assert losses_of(bench, best).tolist() == [0.0] * 4
    mixed = [best[0], "added-better", best[2], "added-worse"]
    assert losses_of(bench, mixed)[:3] == pytest.approx([0.0, -25.0, 0.0])
    assert math.isnan(losses_of(bench, mixed)[3])  # the added moves are record 1's only
    assert losses_of(bench, [best[0], "added-worse", best[2], best[3]])[1] == pytest.approx(gap[1] + 10.0)
    stats = summarise_scores(bench, {"lucky": [best[0], "added-better", *best[2:]]}, replicates=200).bots[0].stats
    assert stats["better_than_set_best"] == 1 and stats["best_move_share"] == 1.0
    assert stats["mean_loss_mp"] == pytest.approx(-25.0 / 4)


def test_a_report_shows_every_pair_of_up_to_four_bots_and_each_bot_against_the_next_of_five(tiny_set):
    from tapa_ai.arena.benchmark.score import ALL_PAIRS_UP_TO, shown_pairs

    assert ALL_PAIRS_UP_TO == 4
    for count in (1, 2, 3, 4, 5, 6):
        names = [f"bot{i}" for i in range(count)]
        pairs = [{"a": a, "b": b} for i, a in enumerate(names) for b in names[i + 1:]]
        shown = shown_pairs(pairs, names)
        if count <= 4:
            assert shown is pairs and len(shown) == count * (count - 1) // 2
        else:
            assert [(p["a"], p["b"]) for p in shown] == [(names[i], names[i + 1]) for i in range(count - 1)]
    bench = read_set(tiny_set[0])
    best = [r["candidates"][0]["key"] for r in bench.records]
    for count, lines, note in ((4, 6, False), (5, 4, True)):
        result = summarise_scores(bench, {f"bot{i}": best for i in range(count)}, replicates=200)
        assert len(result.pairs) == count * (count - 1) // 2
        text = result.report()
        assert len([line for line in text.splitlines() if line.startswith("  bot")]) == lines
        assert ("each bot against the next" in text) == note
        if note:
            assert "  bot3 - bot4 " in text and "  bot0 - bot2 " not in text


def _set_of(positions: list[tuple[str, dict[str, float]]], shares: dict | None = None, **header):
    """A set in memory: position ``i`` of phase ``positions[i][0]`` has the build's best move ("best", equity 0)
    and each move of ``positions[i][1]`` (key: its loss in millipoints)."""
    from tapa_ai.arena.benchmark.file import BenchmarkSet

    records = [{"phase": phase, "candidates": [{"key": key, "equity": -loss / 1000, "ci95": [-0.01, 0.01]}
                                               for key, loss in {"best": 0.0, **moves}.items()]}
               for phase, moves in positions]
    return BenchmarkSet("synthetic.jsonl", {"variant": "tapa", "settings": {"positions": len(records), "rollout": {}},
                                            "sampling": {"natural_phase_share": shares or {}}, "models": {},
                                            **header}, records)


def test_a_pair_is_compared_on_the_positions_both_rated_with_the_sample_sd_of_its_differences():
    """Difference, sd (ddof 1) and the positions for a CI of +-1 mp, ceil((1.96 sd)^2), over the positions where
    both bots' moves are rated; with one such position no sd (and 0 positions), with none nothing at all."""
    losses = {"a": [3.0, 5.0, 2.0, 9.0, 4.0], "b": [1.0, 0.0, 4.0, 0.5, 2.0]}
    bench = _set_of([("contact", {"a": a, "b": b, "c": a + 0.2 * (i % 2)})
                     for i, (a, b) in enumerate(zip(losses["a"], losses["b"]))])
    keys = {"A": ["a"] * 5, "B": ["b", "?", "b", "b", "?"], "C": ["c"] * 5, "two": ["?"] * 3 + ["b"] * 2,
            "one": ["?"] * 4 + ["b"], "none": ["?"] * 5}
    pairs = {(p["a"], p["b"]): p for p in summarise_scores(bench, keys, replicates=200).pairs}
    d = np.array([3.0 - 1.0, 2.0 - 4.0, 9.0 - 0.5])
    ab = pairs["A", "B"]
    assert ab["positions"] == 3 and ab["difference_mp"] == pytest.approx(d.mean())
    assert ab["sd_mp"] == pytest.approx(np.std(d, ddof=1))
    assert ab["positions_for_1mp"] == math.ceil((1.96 * np.std(d, ddof=1)) ** 2)
    ac = pairs["A", "C"]  # differences under 1 mp: still a share of noise
    assert ac["sd_mp"] == pytest.approx(np.std([0.0, -0.2, 0.0, -0.2, 0.0], ddof=1)) and 0 < ac["sd_mp"] < 1
    assert ac["noise_share"] == pytest.approx(ac["noise_sd_mp"] ** 2 / ac["sd_mp"] ** 2)
    two = pairs["A", "two"]
    assert two["positions"] == 2 and two["sd_mp"] == pytest.approx(np.std([9.0 - 0.5, 4.0 - 2.0], ddof=1))
    one = pairs["A", "one"]
    assert one["positions"] == 1 and one["difference_mp"] == pytest.approx(4.0 - 2.0)
    assert math.isnan(one["sd_mp"]) and one["positions_for_1mp"] == 0
    none = pairs["A", "none"]
    assert none["positions"] == 0 and math.isnan(none["difference_mp"]) and none["positions_for_1mp"] == 0


def test_a_blunder_loses_more_than_the_threshold_a_best_move_nothing_and_cpu_time_is_per_position():
    bench = _set_of([("race", {"edge": 80.0, "over": 80.5, "tiny": 0.5})] * 2)
    keys = {"mixed": ["edge", "over"], "small": ["tiny", "best"], "none": ["?", "?"]}
    result = summarise_scores(bench, keys, {"mixed": 8.0, "none": 3.0}, blunder_mp=80.0, replicates=200)
    stats = {b.bot: b.stats for b in result.bots}
    assert stats["mixed"]["blunder_share"] == 0.5 and stats["mixed"]["best_move_share"] == 0.0
    assert stats["small"]["blunder_share"] == 0.0 and stats["small"]["best_move_share"] == 0.5
    assert stats["mixed"]["cpu_seconds_per_move"] == 4.0 and stats["none"]["cpu_seconds_per_move"] == 1.5
    assert stats["none"]["better_than_set_best"] == 0 and stats["none"]["unrated_share"] == 1.0
    assert stats["small"]["cpu_seconds_per_move"] == 0.0  # no CPU time given
    assert summarise_scores(bench, keys, replicates=200).bots[0].stats["cpu_seconds_per_move"] == 0.0


def test_the_report_shows_the_weighted_loss_and_each_phase_in_the_phases_order():
    positions = [("race", {"m": 100.0}), ("contact", {"m": 10.0}), ("bearoff", {"m": 4.0}), ("contact", {"m": 20.0})]
    sampling = {"natural_phase_share": {"contact": 0.5, "race": 0.3, "bearoff": 0.2},
                "decisions_per_game": {"heuristic vs itself": 50}}
    bench = _set_of(positions, sampling=sampling, settings={"positions": 4, "rollout": {}, "player": "heuristic"})
    result = summarise_scores(bench, {"m": ["m"] * 4}, replicates=200)
    lines = result.report().splitlines()
    head = next(line for line in lines if line.startswith("bot "))
    assert head.split()[5:8] == ["contact", "race", "bearoff"]
    row = next(line for line in lines if line.startswith("m "))
    assert row.split()[4:8] == [f"{0.5 * 15 + 0.3 * 100 + 0.2 * 4:.1f}", "15.0", "100.0", "4.0"]
    assert result.to_dict()["decisions_per_side_per_game"] == 25.0
    older = summarise_scores(_set_of(positions), {"m": ["m"] * 4}, replicates=200)  # no phase shares
    row = next(line for line in older.report().splitlines() if line.startswith("m "))
    assert row.split()[4:7] == ["15.0", "100.0", "4.0"] and older.to_dict()["decisions_per_side_per_game"] is None
    assert older.added == 0 and not older.unrated_kept  # the defaults: nothing rolled out, nothing left unrated
    assert "new moves" not in older.report() and "unrated moves" not in older.report()


def test_scoring_says_what_it_rolled_out_and_left_unrated_and_keeps_the_candidates_best_first(tiny_set, tmp_path,
                                                                                               monkeypatch, capsys):
    import time

    import tapa_ai.arena.benchmark.score as scoring

    path = tmp_path / "copy.jsonl"
    shutil.copy(tiny_set[0], path)
    with pytest.raises(BenchmarkError, match="at least 100"):
        score_bots(path, ["random"], rollout=False, workers=1, progress=False, replicates=99)
    cpu = time.process_time()
    unrated = score_bots(path, ["random"], rollout=False, workers=1, progress=False, replicates=100)
    cpu = time.process_time() - cpu  # the bot chose in this process (one worker): its time is part of this
    assert 0 < unrated.bots[0].stats["cpu_seconds_per_move"] * 4 <= cpu
    assert unrated.added == 0 and unrated.unrated_kept and "unrated moves (--no-rollout)" in unrated.report()
    rated = score_bots(path, ["random"], workers=1, progress=False, replicates=100)
    assert rated.added > 0 and not rated.unrated_kept and "unrated moves" not in rated.report()
    for record in [*rated.bench.records, *read_set(path).records]:
        equities = [c["equity"] for c in record["candidates"]]
        assert equities == sorted(equities, reverse=True)
    # a set that cannot be written: said once, however often the scoring would have saved it
    installed = tmp_path / "installed.jsonl"
    shutil.copy(tiny_set[0], installed)

    def refuse(*args, **kwargs):
        raise BenchmarkError(f"cannot write {installed}: Read-only file system")

    monkeypatch.setattr(scoring, "write_set", refuse)
    monkeypatch.setattr(scoring, "SAVE_EVERY_S", 0.0)
    capsys.readouterr()
    score_bots(installed, ["random"], workers=1, progress=False, replicates=100)
    assert capsys.readouterr().err.count("rated for this run only") == 1


def test_the_candidates_cost_is_the_records_mean_else_timed_on_a_sample(tiny_set):
    import time

    from tapa_ai.arena.benchmark.score import candidates_cost

    bench = read_set(tiny_set[0])
    rules = variant_rules("tapa")
    carried = [r["candidates_cpu_seconds"] for r in bench.records]
    assert candidates_cost(bench, rules) == {"seconds": pytest.approx(np.mean(carried)),
                                             "from": "the records (4 positions)"}
    del bench.records[2]["candidates_cpu_seconds"]  # a set from before the records carried it, in part
    cpu = time.process_time()
    timed = candidates_cost(bench, rules, sample=3)
    cpu = time.process_time() - cpu  # timed in this process: 3 positions' time, and a warm-up, are part of it
    assert timed["from"] == "timed here on 3 positions" and 0 < 3 * timed["seconds"] <= cpu


def test_a_partial_set_is_scored_on_the_positions_it_has_and_not_rewritten(tiny_set, tmp_path):
    path = tmp_path / "partial.jsonl"
    lines = tiny_set[0].read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))  # the build stopped before its last position
    before = path.read_bytes()
    result = score_bots(path, ["random"], workers=1, progress=False, replicates=100)
    assert not result.bench.complete and len(result.bench.records) == 3 and result.added > 0
    assert result.bots[0].stats["positions"] == 3 and result.bots[0].stats["unrated_share"] == 0.0
    assert path.read_bytes() == before  # its new moves served this run only
    with pytest.raises(BenchmarkError, match="partial build"):
        score_bots(path, ["random"], workers=1, progress=False, replicates=100, every=2)


def _record(**changes) -> dict:
    """A well-formed record of two candidates (``check_record`` checks its numbers, it does not play its moves),
    with ``changes`` made to its second candidate (``...``: the key taken out)."""
    best = {"move": "24/21 24/23", "key": "a", "equity": 0.1, "ci95": [0.0, 0.2], "difference": 0.0,
            "difference_ci95": [0.0, 0.0], "games": 36, "halves": [0.05, 0.15]}
    other = {**best, "move": "13/10 13/12", "key": "b", "equity": -0.1, "difference": -0.2,
             "difference_ci95": [-0.3, -0.1]}
    for key, value in changes.items():
        if value is ...:
            del other[key]
        else:
            other[key] = value
    return {"index": 0, "position": {}, "dice": [3, 1], "phase": "contact", "source": "self", "seed": 300_000,
            "candidates": [best, other]}


def test_a_record_s_numbers_may_reach_the_edges_of_their_ranges_and_no_further():
    """Equities within +-3 (the default limit: backgammon's and tapa's top points), differences within twice
    that, both edges included; intervals low then high (the halves of a rollout in any order); at least one game;
    dice 1 to 6. Past any edge, the record is refused with a BenchmarkError naming it."""
    from tapa_ai.arena.benchmark.file import check_record

    for equity in (3.0, -3.0):  # a move that wins (or loses) a backgammon in every game
        assert check_record(_record(equity=equity, ci95=[equity, equity]), "here", 0)
    for difference in (6.0, -6.0):
        assert check_record(_record(difference=difference), "here", 0)
    for accepted in (dict(games=1), dict(difference=..., difference_ci95=...), dict(difference_ci95=None),
                     dict(difference=None), dict(halves=[0.15, 0.05]), dict(halves=...)):
        assert check_record(_record(**accepted), "here", 0)
    for dice in ([1, 6], [6, 1], [1, 1], [6, 6]):
        assert check_record({**_record(), "dice": dice}, "here", 0)
    refused = [
        (dict(equity=3.5), "equity 3.5 lies outside the variant's range [-3, 3]"),
        (dict(difference=6.5), "difference 6.5 is not a number within +-6"),
        (dict(difference=-6.01), "difference -6.01 is not a number within +-6"),
        (dict(difference_ci95=[-0.1, -0.3]), "difference_ci95 [-0.1, -0.3] is not two finite numbers, low then high"),
        (dict(ci95=None), "ci95 None is not two finite numbers, low then high"),
        (dict(halves=[float("nan"), 0.1]), "halves [nan, 0.1] is not two finite numbers"),
        (dict(halves=[0.1]), "halves [0.1] is not two finite numbers"),
        (dict(games=True), "games True is not a positive number of games"),
        (dict(games=...), "candidate 1 lacks one of move, key, equity, ci95, games"),
    ]
    for changes, says in refused:
        with pytest.raises(BenchmarkError, match="^here: candidate 1") as error:
            check_record(_record(**changes), "here", 0)
        assert says in str(error.value)
    for dice in ([0, 3], [3, 7], [3], [3.0, 1]):
        with pytest.raises(BenchmarkError, match=r"^here: dice .* are not two numbers 1 to 6"):
            check_record({**_record(), "dice": dice}, "here", 0)
    with pytest.raises(BenchmarkError, match="^here: record has no candidate moves"):
        check_record({**_record(), "candidates": []}, "here", 0)


def test_a_header_without_a_valid_version_or_number_of_positions_and_a_damaged_last_line_are_refused(tiny_set,
                                                                                                     tmp_path):
    from tapa_ai.arena.benchmark.file import equity_limit

    lines = tiny_set[0].read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    path = tmp_path / "header.jsonl"
    for head, says in (({**header, "version": 0}, "header has no valid format version (0)"),
                       ({**header, "settings": {**header["settings"], "positions": "4"}},
                        "header settings lack the number of positions")):
        path.write_text(json.dumps(head) + "\n" + "".join(lines[1:]))
        with pytest.raises(BenchmarkError, match="header") as error:
            read_set(path)
        assert says in str(error.value)
    # a last line that is whole (it ends in a newline) but not JSON is damage, not a build stopped while writing it
    path.write_text("".join(lines[:-1]) + "{not json\n")
    with pytest.raises(BenchmarkError, match="line 5: not a benchmark record"):
        read_set(path, allow_partial_tail=True)
    plakoto = {**header, "rules": variant_rules("plakoto").to_dict()}
    luck = {**plakoto, "settings": {**header["settings"], "rollout": {**header["settings"]["rollout"], "luck": True}}}
    assert (equity_limit(header), equity_limit(plakoto), equity_limit(luck)) == (3.0, 2.0, 2.25)


def test_the_settings_that_differ_include_those_one_side_lacks():
    from tapa_ai.arena.benchmark.file import differences

    found = {"rules": {"cube": True}, "settings": {"games": 36, "rollout": {"luck": False}}, "seed": 3}
    wanted = {"rules": {"cube": True}, "settings": {"games": 36, "luck": True}, "models": {"net:tapa": "ab"}}
    assert differences(found, wanted) == ["models", "seed", "settings.luck", "settings.rollout"]
    assert differences(found, found) == []


def test_a_written_set_gets_a_plain_file_s_permissions_and_an_append_closes_only_its_own_file(tmp_path, monkeypatch):
    import os

    import tapa_ai.arena.benchmark.file as file

    path = tmp_path / "perms.jsonl"
    file.write_set(path, {"format": file.FORMAT}, [])
    umask = os.umask(0o022)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask
    opened = []

    def tracked(*args, **kwargs):
        opened.append(open(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(file, "open", tracked, raising=False)
    file.append_record(path, {"index": 0})
    assert len(opened) == 1 and opened[0].closed
    with open(path, "ab") as handle:
        file.append_record(path, {"index": 1}, handle)
        assert not handle.closed and len(opened) == 1
    assert path.read_text().splitlines()[1:] == ['{"index":0}', '{"index":1}']


def test_a_set_is_a_file_before_a_shipped_set_of_that_name_and_a_missing_one_lists_the_shipped_sets(tmp_path,
                                                                                                    monkeypatch):
    from pathlib import Path

    from tapa_ai.arena.benchmark.file import resolve_set, shipped_sets

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tapa").write_text("")
    assert resolve_set("tapa") == (Path("tapa"), False)
    assert resolve_set("nosuchset") == (Path("nosuchset"), False)
    with pytest.raises(BenchmarkError, match="no such file") as error:
        read_set("nosuchset")
    assert str(error.value).endswith(f"name a shipped set: {', '.join(shipped_sets())})") and shipped_sets()


def test_the_summary_says_a_partial_build_from_one_in_every_other_position(tiny_set):
    from tapa_ai.arena.benchmark.file import summary_line

    bench = read_set(tiny_set[0])
    assert ": tapa, 4 positions (" in summary_line(bench)
    phases = {}
    for record in bench.records[:3]:
        phases[record["phase"]] = phases.get(record["phase"], 0) + 1
    del bench.records[3]
    line = summary_line(bench, "2 new moves rolled out")
    assert "3 of 4 positions (a partial build) (" + ", ".join(f"{p} {n}" for p, n in phases.items()) + ")" in line
    assert line.endswith("seed 3; 2 new moves rolled out")
    bench.keep_every(2)
    assert "2 of 4 positions (one in 2)" in summary_line(bench)


def test_running_game_positions_fall_into_contact_race_and_bear_off_phases():
    """Fevga/narde: the start is contact; every checker of both on its own points 1-12 is a race; all home a
    bear-off; the default mix has no pins or mother phase."""
    from tapa_ai.arena.benchmark.sample import BEAROFF, CONTACT, DEFAULT_MIX, RACE, classify
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.notation import board
    from tapa_ai.rules import start_position, variant_rules

    for variant in ("fevga", "narde"):
        rules = variant_rules(variant)
        # X on its 10 and 3; O on its 12 and 2 (X's 24 and 14): past each other, a race; O on its 13 (X's 1): not.
        positions = [start_position(variant), board(variant, "10:XXXXXXX 3:XXXXXXXX 24:OOOOOOO 14:OOOOOOOO"),
                     board(variant, "10:XXXXXXX 3:XXXXXXXX 1:OOOOOOO 14:OOOOOOOO"), board(variant, "3:XX 14:OO")]
        assert classify(PositionBatch.from_positions(positions), rules).tolist() == [CONTACT, RACE, CONTACT, BEAROFF]
        assert set(DEFAULT_MIX[rules.contact]) == {"contact", "race", "bearoff"}
