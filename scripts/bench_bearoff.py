"""Bear-off databases: build and load times, file sizes, and the speed of valuing batches.

    python scripts/bench_bearoff.py                                  # numba's cache as it is
    NUMBA_CACHE_DIR=$(mktemp -d) python scripts/bench_bearoff.py     # a fresh install: numba compiles first

Builds both databases into a fresh temporary cache directory (``TAPA_AI_CACHE``), loads them back in a
new process, then times ``bearoff_mask`` and ``bearoff_distributions`` on random end-game positions
(``tapa_ai.movegen.random_positions.endgame_positions``). One JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

LOAD = """
import time, json
t = time.perf_counter()
from tapa_ai.bearoff import database
one = database.one_sided(progress=False); t1 = time.perf_counter()
two = database.two_sided(); t2 = time.perf_counter()
print(json.dumps({"load_one_sided_s": t1 - t, "load_two_sided_s": t2 - t1}))
"""


def main() -> None:
    report = {}
    with tempfile.TemporaryDirectory() as directory:
        env = {**os.environ, "TAPA_AI_CACHE": directory}
        os.environ["TAPA_AI_CACHE"] = directory
        from tapa_ai.bearoff import database

        began = time.perf_counter()
        database.one_sided(progress=False, quiet=True)
        report["build_one_sided_s"] = time.perf_counter() - began
        began = time.perf_counter()
        database.two_sided(quiet=True)
        report["build_two_sided_s"] = time.perf_counter() - began
        report["one_sided_bytes"] = database.database_path().stat().st_size
        report["two_sided_bytes"] = database.two_sided_path().stat().st_size
        loaded = subprocess.run([sys.executable, "-c", LOAD], env=env, capture_output=True, text=True, check=True)
        report.update(json.loads(loaded.stdout))

        from tapa_ai.bearoff.evaluate import bearoff_distributions, bearoff_mask
        from tapa_ai.movegen.random_positions import endgame_positions, mixed_positions

        rng = np.random.default_rng(1)
        mixed = mixed_positions("backgammon", 10_000, rng)
        mixed = mixed.take(np.tile(np.arange(len(mixed)), 100))  # 1,000,000 positions
        bearoff_mask(mixed.take(np.arange(10)))  # compiled (or loaded from numba's cache) before timing
        began = time.perf_counter()
        mask = bearoff_mask(mixed)
        report["mask_positions_per_s"] = len(mixed) / (time.perf_counter() - began)
        report["mixed_bearoff_fraction"] = float(mask.mean())
        endgames = endgame_positions("backgammon", 20_000, rng)
        rows, _ = bearoff_distributions(endgames)
        endgames = endgames.take(rows)
        began = time.perf_counter()
        for _ in range(5):
            bearoff_distributions(endgames)
        report["distributions_positions_per_s"] = 5 * len(endgames) / (time.perf_counter() - began)
        report["distributions_batch"] = len(endgames)
    print(json.dumps({key: round(value, 4) if isinstance(value, float) else value for key, value in report.items()}))


if __name__ == "__main__":
    main()
