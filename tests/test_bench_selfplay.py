"""Smoke test of scripts/bench_selfplay.py: a tiny budget, and the JSON line it promises."""

import json
import runpy

from tapa_ai.config import load_config
from tapa_ai.training.throughput import gnubg_available


def test_bench_selfplay_last_line_is_one_json_object_per_variant_and_gnubg(capsys):
    script = runpy.run_path("scripts/bench_selfplay.py", run_name="bench_selfplay")
    assert script["main"](["--seconds", "0.4", "--warmup", "0.2", "--variants", "backgammon", "plakoto",
                           "--parallel-games", "8", "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(lines[-1])
    expected = {"backgammon", "plakoto"} | ({"gnubg"} if gnubg_available() else set())
    assert set(summary) == expected
    for name, entry in summary.items():
        assert entry["decisions_per_s"] > 0 and entry["games_per_s"] >= 0
        if name == "gnubg":
            assert set(entry) == {"decisions_per_s", "games_per_s"}
        else:
            # The network of the variant's training config, the one its shipped model is trained with.
            ratio = {"ratio_to_gnubg"} if gnubg_available() else set()
            assert set(entry) == {"decisions_per_s", "games_per_s", "network", "parallel_games"} | ratio
            if ratio:
                assert entry["ratio_to_gnubg"] == round(entry["decisions_per_s"] / summary["gnubg"]["decisions_per_s"], 3)
            assert entry["network"] == load_config(f"configs/{name}.toml").model.describe()
            assert entry["parallel_games"] == 8
    if not gnubg_available():
        assert "gnubg-nn not installed" in "\n".join(lines)


def test_rounds_report_the_medians_of_back_to_back_rounds(capsys):
    script = runpy.run_path("scripts/bench_selfplay.py", run_name="bench_selfplay")
    assert script["main"](["--seconds", "0.3", "--warmup", "0.1", "--variants", "tapa", "--parallel-games", "8",
                           "--rounds", "3", "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    rates = [float(line.split("decisions/s")[0].split()[-1].replace(",", "")) for line in lines
             if line.startswith("tapa ")]
    assert len(rates) == 3 and sum(line.startswith("round ") for line in lines) == 3
    summary = json.loads(lines[-1])
    assert abs(summary["tapa"]["decisions_per_s"] - sorted(rates)[1]) <= 1.0  # the printed rates are rounded
    assert summary["tapa"]["network"] == load_config("configs/tapa.toml").model.describe()
    if gnubg_available():
        assert any(line.startswith("median over 3 rounds: tapa") for line in lines)


def test_init_starts_from_a_checkpoints_network_of_the_same_architecture():
    import pytest
    import torch

    from tapa_ai.net.checkpoint import load_network
    from tapa_ai.net.model import EvaluatorNet
    from tapa_ai.rules.options import variant_rules
    from tapa_ai.training.throughput import load_weights

    shipped = load_network("checkpoints/tapa.pt")
    net = EvaluatorNet(load_config("configs/tapa.toml").model, variant_rules("tapa"), seed=3)
    assert not torch.equal(net.layers[0].weight, shipped.layers[0].weight)
    load_weights(net, "checkpoints/tapa.pt")
    for name, value in shipped.state_dict().items():
        assert torch.equal(net.state_dict()[name], value), name
    # Another architecture or another variant is refused, naming both networks.
    other = EvaluatorNet(load_config("configs/tapa-1x128.toml").model, variant_rules("tapa"), seed=3)
    with pytest.raises(ValueError, match="is not the benchmarked one"):
        load_weights(other, "checkpoints/tapa.pt")
    with pytest.raises(ValueError, match="plakoto"):
        load_weights(EvaluatorNet(shipped.config, variant_rules("plakoto"), seed=3), "checkpoints/tapa.pt")


def test_init_of_another_architecture_is_one_line_and_exit_2():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "scripts/bench_selfplay.py", "--variants", "tapa", "--seconds", "0.1",
                           "--config", "configs/tapa-1x128.toml", "--init", "shipped"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "is not the benchmarked one" in done.stderr


def test_timed_window_opens_after_the_warmup_and_closes_after_its_seconds(monkeypatch):
    from tapa_ai.training import throughput

    clock = {"now": 100.0}
    monkeypatch.setattr(throughput.time, "perf_counter", lambda: clock["now"])
    state = {"started": False, "count": 0}
    window = throughput.TimedWindow(10.0, 2.0, lambda: state["started"], lambda: (state["count"],))
    answers = []
    for step in range(20):  # one second a call; work starts arriving at t=103
        state["started"] = clock["now"] >= 103
        state["count"] = step
        answers.append((clock["now"], window.open, window.should_stop()))
        clock["now"] += 1.0
    stops = [now for now, _, stop in answers if stop]
    assert window.first == 103 and window.begin == (105.0, 5) and window.end == (115.0, 15)
    assert stops == [115.0 + k for k in range(5)] and not window.open
    assert [now for now, is_open, _ in answers if is_open] == [106.0 + k for k in range(10)]


def test_search_throughput_counts_the_targets_of_the_window():
    """scripts/bench_distributed.py search's measure, single process, a tiny window: targets the learner added."""
    from tapa_ai.training.search_bench import search_throughput

    result = search_throughput("checkpoints/tapa.pt", seconds=1.0, workers=0, warmup=0.2,
                               overrides=["selfplay.parallel_games=8", "learning.search_fraction=0.5"])
    assert result.targets > 0 and result.seconds >= 1.0
    assert abs(result.targets_per_s - result.targets / result.seconds) < 1e-9
    assert result.transport == "single process" and result.learner_cpu_ms_per_target > 0
