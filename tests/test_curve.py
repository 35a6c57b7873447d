"""Learning curves: snapshots at CPU-time marks, resumable, evaluated with paired dice, plotted."""

import json

from tapa_ai.training.curve import evaluate_snapshots, plot_curves, snapshot_path, train_to_marks, write_report

TINY = ["selfplay.parallel_games=8", "model.hidden=8", "learning.batch_size=64",
        "checkpoint.every_games=1000000", "logging.tensorboard=false"]


def test_snapshots_at_cpu_marks_resume_and_evaluate(tmp_path):
    marks = [0.01, 0.03]  # CPU-minutes: 0.6 s and 1.8 s
    run_dir, rows = train_to_marks("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}"], marks[:1],
                                   progress=False)
    assert snapshot_path(run_dir, 0.01).is_file() and len(rows) == 1
    # Continue the same run to the next mark; the first snapshot is kept, not retrained.
    first = snapshot_path(run_dir, 0.01).read_bytes()
    _, rows = train_to_marks(None, [], marks, resume=str(run_dir), progress=False)
    assert snapshot_path(run_dir, 0.01).read_bytes() == first
    rows = evaluate_snapshots(rows, pairs=3, progress=False)
    assert [row["minutes"] for row in rows] == marks
    assert rows[0]["games_trained"] < rows[1]["games_trained"]
    assert 0.6 <= rows[0]["cpu_seconds"] < rows[1]["cpu_seconds"]
    assert rows[1]["cpu_seconds"] >= 1.8
    for row in rows:
        for bot in ("random", "pipcount", "heuristic"):
            assert row[bot]["games"] == 6 and row[bot]["ppg_ci95"][0] <= row[bot]["ppg"] <= row[bot]["ppg_ci95"][1]
    report = write_report("tapa", rows, tmp_path / "out")
    assert json.loads(report.read_text())["rows"][1]["minutes"] == 0.03
    png = plot_curves({"tapa": rows}, tmp_path / "out" / "curves.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
