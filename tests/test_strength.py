import json

from tapa_ai.arena.strength import model_card, strength_matches, strength_table
from tapa_ai.config import load_config
from tapa_ai.training.trainer import Trainer, new_run_directory

TINY = ["run.total_games=16", "selfplay.parallel_games=8", "model.hidden=8", "learning.batch_size=64",
        "eval.every_games=16", "eval.games=4", "checkpoint.every_games=16", "logging.tensorboard=false"]


def test_strength_matches_write_records_and_the_model_card_states_the_facts(tmp_path):
    config = load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    model = str(trainer.run_dir / "latest.pt")

    summary = strength_matches(model, games=8, games_2ply=2, previous=model, out=tmp_path / "report", workers=1,
                               parts=("0ply", "previous"), progress=False)
    assert set(summary["matches"]) == {"0ply_vs_random", "0ply_vs_runner", "0ply_vs_heuristic", "0ply_vs_previous"}
    assert json.loads((tmp_path / "report" / "summary.json").read_text()) == summary
    record = json.loads((tmp_path / "report" / "0ply_vs_heuristic.json").read_text())
    assert record["games"] == 8 and record["bot_b"] == "heuristic"
    assert summary["matches"]["0ply_vs_previous"]["bot_b"] == f"net:{model}"

    table = strength_table(summary)
    assert table.count("\n") == 1 + 4 and "vs heuristic | 8 |" in table
    card = model_card(model, summary, history="trained for a test", command="python scripts/strength.py ...")
    assert f"| games trained | {trainer.games:,}" in card
    assert "tapa-td version 1" in card and "trained for a test" in card and 'variant = "tapa"' in card
    assert "vs heuristic | 8 |" in card


def test_training_curve_png_from_the_checkpoints_evaluations(tmp_path):
    from tapa_ai.arena.strength import plot_training_curve

    config = load_config("configs/quick.toml", [*TINY, "eval.every_games=8", f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    assert len(trainer.evaluations) >= 2
    path = plot_training_curve(str(trainer.run_dir / "latest.pt"), tmp_path / "curve.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
