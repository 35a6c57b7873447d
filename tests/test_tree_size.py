"""The repository stays small: what is tracked outside the shipped models and the runs in progress has a budget.

Finished training runs leave the tree (git history keeps them: kept_runs/README.md), per-game match CSVs are not
committed (docs/curves/README.md), and a run in progress keeps only what a resume needs (``latest.pt``) and
network-only snapshots (``curve_<m>min.pt``). The shipped models (``checkpoints/``, the model cards beside them)
are the product and are not counted.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MB = 1 << 20
TREE_BUDGET = 20 * MB
"""All tracked files outside the shipped models and the runs in progress, together."""
FILE_BUDGET = 1 * MB
"""Any one of those files."""
RUN_FILE_BUDGET = {"latest.pt": 8 * MB, "snapshot": 1 * MB, "benchmark": 3 * MB}
"""A run in progress: its resumable checkpoint (network, optimizer, replay buffer) and each slim snapshot; a
benchmark set being built: its file so far (a 1,000-position set is about 1.7 MB before it is gzipped)."""
SHIPPED = ("checkpoints/", "tapa_ai/models/")


def tracked_files() -> list[tuple[str, int]]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.fail(f"the tree-size check needs the git checkout and git ({error}); it measures what is tracked")
    files = []
    for name in listed.decode().split("\0"):
        path = ROOT / name
        if name and path.is_file() and not path.is_symlink():
            files.append((name, path.stat().st_size))
    return files


def runs_in_progress() -> set[str]:
    """The run directories named in kept_runs/README.md's *In progress* table."""
    text = (ROOT / "kept_runs" / "README.md").read_text()
    section = text.split("## In progress", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", section, flags=re.MULTILINE))


def test_the_tree_outside_the_shipped_models_and_runs_in_progress_is_small():
    rest = [(name, size) for name, size in tracked_files()
            if not name.startswith(SHIPPED) and not name.startswith("kept_runs/")]
    large = [f"{name} ({size / MB:.2f} MB)" for name, size in rest if size > FILE_BUDGET]
    assert not large, f"tracked files over {FILE_BUDGET // MB} MB: {large}"
    total = sum(size for _, size in rest)
    assert total <= TREE_BUDGET, f"tracked files outside the models and runs: {total / MB:.1f} MB > {TREE_BUDGET // MB}"


def test_kept_runs_holds_only_runs_in_progress_with_what_a_resume_needs():
    in_progress = runs_in_progress()
    for name, size in tracked_files():
        if not name.startswith("kept_runs/") or name == "kept_runs/README.md":
            continue
        parts = name.split("/")
        assert len(parts) == 3, f"{name}: kept_runs/ holds run directories with files directly in them"
        run, file = parts[1], parts[2]
        assert run in in_progress, (f"{name}: {run} is not in kept_runs/README.md's 'In progress' table "
                                    "(a finished run leaves the tree; history keeps it)")
        if file == "latest.pt":
            assert size <= RUN_FILE_BUDGET["latest.pt"], f"{name}: {size / MB:.1f} MB"
        elif file.endswith(".jsonl"):  # a benchmark set being built (resumable: `benchmark build` goes on after it)
            assert size <= RUN_FILE_BUDGET["benchmark"], f"{name}: {size / MB:.1f} MB"
        else:
            assert re.fullmatch(r"curve_\d+(min|k)?\.pt", file), f"{name}: a run keeps latest.pt and curve snapshots"
            assert size <= RUN_FILE_BUDGET["snapshot"], f"{name}: {size / MB:.1f} MB (snapshots are network-only)"
