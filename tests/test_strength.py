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


def test_2ply_ladder_plays_every_fixed_bot_with_per_opponent_counts(tmp_path):
    import pytest

    from tapa_ai.bots.base import BotError

    config = load_config("configs/quick.toml", [*TINY, "model.hidden=4", f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    model = str(trainer.run_dir / "latest.pt")
    summary = strength_matches(model, games=2, games_2ply=2, previous=None, out=tmp_path / "report", workers=1,
                               parts=("2ply",), progress=False, games_2ply_for={"heuristic": 4, "0ply": 0})
    counts = {name: match["games"] for name, match in summary["matches"].items()}
    assert counts == {"2ply_vs_random": 2, "2ply_vs_runner": 2, "2ply_vs_heuristic": 4}
    assert summary["matches"]["2ply_vs_heuristic"]["bot_a"] == f"net:{model}@2ply"
    with pytest.raises(BotError, match=r"2-ply game counts for \['pubeval'\]: not opponents of a tapa model"):
        strength_matches(model, games=2, games_2ply=2, previous=None, out=tmp_path / "report", workers=1,
                         parts=("2ply",), progress=False, games_2ply_for={"pubeval": 2})


def test_training_curve_png_from_the_checkpoints_evaluations(tmp_path):
    from tapa_ai.arena.strength import plot_training_curve

    config = load_config("configs/quick.toml", [*TINY, "eval.every_games=8", f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    assert len(trainer.evaluations) >= 2
    path = plot_training_curve(str(trainer.run_dir / "latest.pt"), tmp_path / "curve.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_promote_ships_only_a_candidate_that_is_better_with_confidence(tmp_path):
    import shutil

    from tapa_ai.arena.strength import promote
    from tapa_ai.net.checkpoint import load_checkpoint

    config = load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    shipped = tmp_path / "shipped.pt"
    shutil.copyfile(trainer.run_dir / "latest.pt", shipped)
    # The same network as candidate cannot be better with confidence.
    record = promote(str(trainer.run_dir / "latest.pt"), str(shipped), tmp_path / "gens", games=8, workers=1,
                     progress=False)
    assert not record["promoted"] and record["kept_as"] is None and not (tmp_path / "gens").exists()


def test_promote_ships_a_clearly_better_candidate_and_keeps_the_old_one_slim(tmp_path):
    from tapa_ai.arena.strength import promote
    from tapa_ai.net.checkpoint import load_checkpoint

    config = load_config("configs/quick.toml", ["run.total_games=3000", "logging.tensorboard=false",
                                                "eval.every_games=100000", f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    untrained = trainer.save()  # generation 1: the initial weights
    shipped = tmp_path / "shipped.pt"
    shipped.write_bytes(untrained.read_bytes())
    trainer.train(progress=False)
    record = promote(str(trainer.run_dir / "latest.pt"), str(shipped), tmp_path / "gens", games=200, workers=1,
                     progress=False)
    assert record["promoted"] and record["ppg_ci95"][0] > 0 and record["generation"] == 2
    assert load_checkpoint(shipped).games == trainer.games
    kept = load_checkpoint(tmp_path / "gens" / "tapa-g1.pt")
    assert kept.games == 0 and kept.optimizer_state is None


def test_a_second_run_writing_the_same_report_meanwhile_keeps_its_matches(tmp_path, monkeypatch):
    """Two strength runs may share --out (say 2-ply rows on two cores): neither drops the other's rows."""
    import tapa_ai.arena.strength as strength

    config = load_config("configs/quick.toml", [*TINY, "model.hidden=4", f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    model = str(trainer.run_dir / "latest.pt")
    out = tmp_path / "report"
    real_run_match = strength.run_match
    other = {"bot_a": "x", "bot_b": "y", "games": 2, "ppg": 0.0, "ppg_ci95": [0.0, 0.0], "win_rate": 0.5,
             "win_rate_ci95": [0.0, 1.0], "kinds": {}, "seed": 9, "games_per_s": 1.0}

    def run_match_while_another_run_writes(*args, **kwargs):
        # The other run finishes a match while this one plays.
        path = out / "summary.json"
        summary = json.loads(path.read_text()) if path.is_file() else {}
        summary.setdefault("matches", {})["2ply_vs_other"] = other
        path.write_text(json.dumps(summary))
        return real_run_match(*args, **kwargs)

    monkeypatch.setattr(strength, "run_match", run_match_while_another_run_writes)
    summary = strength_matches(model, games=2, games_2ply=2, previous=None, out=out, workers=1, parts=("0ply",),
                               progress=False)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == summary
    assert set(on_disk["matches"]) == {"2ply_vs_other", "0ply_vs_random", "0ply_vs_runner", "0ply_vs_heuristic"}
    assert on_disk["matches"]["2ply_vs_other"] == other


def test_the_shipped_models_sections_of_the_strength_docs_are_their_ladders_and_histories():
    """docs/strength.md holds each shipped model's ladder and history as scripts/strength.py --doc writes them:
    the docs cannot drift from the records (docs/strength/<variant>/summary.json, history.md)."""
    from pathlib import Path

    from tapa_ai.arena.strength import marked_section, strength_section

    doc = Path("docs/strength.md").read_text()
    for variant in ("tapa", "plakoto", "backgammon"):
        model = f"checkpoints/{variant}.pt"
        summary = json.loads(Path(f"docs/strength/{variant}/summary.json").read_text())
        history = Path(f"docs/strength/{variant}/history.md").read_text()
        assert marked_section(doc, model) == strength_section(model, summary, history), variant


def test_a_marked_section_is_replaced_whole_and_missing_markers_are_named():
    import pytest

    from tapa_ai.arena.strength import marked_section, replace_section, section_markers

    begin, end = section_markers("m.pt")
    text = f"intro\n{begin}\nold ladder\nold history\n{end}\nafter\n"
    replaced = replace_section(text, "m.pt", "new ladder\n")
    assert replaced == f"intro\n{begin}\nnew ladder\n{end}\nafter\n"
    assert marked_section(replaced, "m.pt") == "new ladder"
    for broken in ("no markers", f"{end}\n{begin}\n", f"{begin}\n{begin}\n{end}\n"):
        with pytest.raises(ValueError, match="begin strength.py m.pt"):
            replace_section(broken, "m.pt", "x")


def test_the_strength_script_writes_the_models_section_of_a_doc(tmp_path):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from tapa_ai.arena.strength import marked_section, section_markers

    report = tmp_path / "report"
    shutil.copytree("docs/strength/tapa", report)
    begin, end = section_markers("checkpoints/tapa.pt")
    doc = tmp_path / "strength.md"
    doc.write_text(f"# Strength\n\n{begin}\nstale\n{end}\n\nmore\n")
    history = tmp_path / "history.md"
    history.write_text("Made for a test.\n")
    done = subprocess.run([sys.executable, "scripts/strength.py", "checkpoints/tapa.pt", "--out", str(report),
                           "--only-card", "--history", str(history), "--doc", str(doc)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    section = marked_section(doc.read_text(), "checkpoints/tapa.pt")
    assert section.startswith("Final ladder of the shipped model, measured with `checkpoints/tapa.pt` (generation")
    assert "net:checkpoints/tapa.pt vs heuristic | 10,000 |" in section and section.endswith("Made for a test.")
    assert doc.read_text().endswith("\n\nmore\n")
    doc.write_text("# no markers\n")
    refused = subprocess.run([sys.executable, "scripts/strength.py", "checkpoints/tapa.pt", "--out", str(report),
                              "--only-card", "--doc", str(doc)], capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "strength: the file needs one line" in refused.stderr
    assert doc.read_text() == "# no markers\n"


def test_a_new_models_card_lists_only_the_commands_that_measured_it(tmp_path):
    """The card's Reproduce block names the commands of the file it describes, not those of the model
    shipped before it under the same name (their lines stay in summary.json, tied to the old sha256), and
    not a command whose matches a later one played again."""
    import shutil
    import subprocess
    import sys

    from tapa_ai.net.model_id import file_sha256

    models = []
    for seed in (1, 2):
        config = load_config("configs/quick.toml", [*TINY, "model.hidden=4", f"run.seed={seed}",
                                                    f"run.name=m{seed}", f"checkpoint.directory={tmp_path}"])
        trainer = Trainer(config, new_run_directory(config))
        trainer.train(progress=False)
        models.append(trainer.run_dir / "latest.pt")
    shipped = tmp_path / "shipped.pt"
    report, card = tmp_path / "report", tmp_path / "card.md"

    def measure(games: int, *parts: str) -> list[str]:
        argv = ["scripts/strength.py", str(shipped), "--games", str(games), "--parts", *(parts or ("0ply",)),
                "--workers", "1", "--out", str(report), "--card", str(card), "--partial", "none", "--quiet"]
        done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return argv

    shutil.copy(models[0], shipped)
    first = measure(2)
    assert " ".join(first) in card.read_text()
    shutil.copy(models[1], shipped)  # a new model shipped under the same name, measured again
    second = measure(4)
    text = card.read_text()
    assert " ".join(second) in text and " ".join(first) not in text
    recorded = json.loads((report / "summary.json").read_text())["commands"]
    assert [entry["model_sha256"] for entry in recorded] == [file_sha256(models[0]), file_sha256(models[1])]
    # The same matches played again with more games take them over: the shorter command no longer shows.
    third = measure(6)
    text = card.read_text()
    assert " ".join(third) in text and " ".join(second) not in text
    summary = json.loads((report / "summary.json").read_text())
    assert [entry["matches"] for entry in summary["commands"][1:]] == [sorted(summary["matches"])]
    # Another part measured beside them adds its command: both reproduce what the card shows.
    fourth = measure(2, "previous", "--previous", str(models[0]))
    text = card.read_text()
    assert " ".join(third) in text and " ".join(fourth) in text
