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
            assert set(entry) == {"decisions_per_s", "games_per_s", "network", "parallel_games"}
            assert entry["network"] == load_config(f"configs/{name}.toml").model.describe()
            assert entry["parallel_games"] == 8
    if not gnubg_available():
        assert "gnubg-nn not installed" in "\n".join(lines)
