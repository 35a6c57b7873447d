"""TensorBoard logs: a short training run writes events TensorBoard reads back, with the names docs/training.md lists.

Every other training test turns TensorBoard off; this one turns it on for a
tiny ``configs/quick.toml`` run and reads the event file with TensorBoard's
own ``EventAccumulator``.
"""

import re
from pathlib import Path

import pytest

from tapa_ai.config import load_config
from tapa_ai.training.trainer import Trainer, new_run_directory
from tests.requires import require

ROOT = Path(__file__).resolve().parent.parent
TINY = ["run.total_games=24", "selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64",
        "eval.every_games=12", "eval.games=8", "checkpoint.every_games=12", "logging.log_every_games=6",
        "logging.tensorboard=true"]
OPPONENTS = ("random", "pipcount")  # the eval opponents of configs/quick.toml
RESULT_KINDS = ("single", "gammon", "backgammon", "mother", "draw")
DISTRIBUTED_ONLY = {"charts/staleness", "charts/staleness_max", "charts/learner_updates", "charts/actor_restarts",
                    "charts/dropped_stale_games"}


def documented_scalar_names() -> set[str]:
    """The scalar names of the "Logs" section of docs/training.md, with ``<bot>`` and ``<kind>`` filled in."""
    text = (ROOT / "docs" / "training.md").read_text()
    section = text.split("\n## Logs\n", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for name in re.findall(r"`((?:losses|charts|eval)/[^`]+)`", section):
        if "|" in name:  # eval/<bot>/ppg_ci95_low|high
            stem, last = name.rsplit("_", 1)
            names.update(f"{stem}_{part}" for part in last.split("|"))
        else:
            names.add(name)
    expanded: set[str] = set()
    for name in names:
        if "<bot>" in name:
            expanded.update(name.replace("<bot>", bot) for bot in OPPONENTS)
        elif "<kind>" in name:
            expanded.update(name.replace("<kind>", kind) for kind in RESULT_KINDS)
        else:
            expanded.add(name)
    return expanded


def test_the_docs_list_the_scalars_of_every_group():
    names = documented_scalar_names()
    assert {"losses/td_cross_entropy", "charts/SPS", "charts/learning_rate", "eval/random/ppg_ci95_high"} <= names
    assert DISTRIBUTED_ONLY <= names


def test_a_short_run_writes_events_tensorboard_reads_with_the_documented_scalars(tmp_path):
    event_accumulator = require("tensorboard.backend.event_processing.event_accumulator")
    config = load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)

    event_files = list(trainer.run_dir.glob("events.out.tfevents.*"))
    assert len(event_files) == 1, list(trainer.run_dir.iterdir())
    events = event_accumulator.EventAccumulator(str(trainer.run_dir), size_guidance={"scalars": 0, "tensors": 0})
    events.Reload()
    written = set(events.Tags()["scalars"])

    expected = documented_scalar_names() - DISTRIBUTED_ONLY
    assert expected <= written, f"documented but never written: {sorted(expected - written)}"
    assert not DISTRIBUTED_ONLY & written  # a single-process run has no learner lag
    assert written <= documented_scalar_names(), f"written but not documented: {sorted(written - documented_scalar_names())}"

    # Window scalars every log_every_games (6) games, evaluations every eval.every_games (12).
    window_steps = [event.step for event in events.Scalars("charts/games_per_s")]
    assert len(window_steps) >= 24 // 6 and window_steps == sorted(window_steps) and window_steps[-1] >= 24 - 6
    assert [event.step for event in events.Scalars("eval/random/ppg")] == [e.games_trained for e in trainer.evaluations
                                                                            if e.opponent == "random"]
    for bot in OPPONENTS:
        ppg = [e.value for e in events.Scalars(f"eval/{bot}/ppg")]
        recorded = [e.ppg for e in trainer.evaluations if e.opponent == bot]
        assert ppg == pytest.approx(recorded, abs=1e-6)
        for low, value, high in zip(events.Scalars(f"eval/{bot}/ppg_ci95_low"), ppg,
                                    events.Scalars(f"eval/{bot}/ppg_ci95_high")):
            assert low.value <= value + 1e-6 and value <= high.value + 1e-6
        assert all(0.0 <= e.value <= 1.0 for e in events.Scalars(f"eval/{bot}/win_rate"))
    assert all(e.value > 0 for e in events.Scalars("losses/td_cross_entropy"))
    # TensorBoard stores float32 values.
    assert [e.value for e in events.Scalars("charts/learning_rate")] == pytest.approx(
        [config.learning.learning_rate] * len(window_steps), rel=1e-6)
    cpu_minutes = [e.value for e in events.Scalars("charts/cpu_minutes")]
    assert cpu_minutes == sorted(cpu_minutes) and cpu_minutes[-1] > 0
    shares = [sum(events.Scalars(f"charts/result_{kind}")[i].value for kind in RESULT_KINDS)
              for i in range(len(window_steps))]
    assert all(share == pytest.approx(1.0) or share == 0.0 for share in shares)
    assert any(share == pytest.approx(1.0) for share in shares)

    # The config as text ("the config as text" in the docs), once.
    assert "config/text_summary" in events.Tags()["tensors"]
    text = events.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert 'variant = "tapa"' in text and "hidden = 16" in text
