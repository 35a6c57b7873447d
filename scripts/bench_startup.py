"""First-answer latency of ``tapa-ai engine``: process start to its first answer line, cold and warm numba cache.

    python scripts/bench_startup.py                                # legal_moves, the default (vectorized) generator
    python scripts/bench_startup.py --bot net:checkpoints/tapa.pt  # best_move with a model: both kernels compile

Each run starts ``python -m tapa_ai.cli engine`` with ``NUMBA_CACHE_DIR`` set
to a folder of its own: empty for the first (cold) run, as after a fresh
install, then the same folder again for the warm runs. It writes one request
on stdin and times the first line on stdout; it also says whether the
compile notice (:mod:`tapa_ai.movegen.compile_notice`) was on stderr. The
numbers depend on the machine and its load: say which with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tapa_ai.notation.json_position import position_to_json  # noqa: E402
from tapa_ai.rules.position import start_position  # noqa: E402


def request(bot: str | None, variant: str) -> dict:
    position = position_to_json(start_position(variant))
    if bot:
        return {"cmd": "best_move", "position": position, "dice": [3, 1], "id": 1}
    return {"cmd": "legal_moves", "position": position, "dice": [3, 1], "id": 1}


def first_answer(cache_dir: str, bot: str | None, variant: str) -> tuple[float, str, dict]:
    """(seconds from start to the first answer line, stderr, the answer) of one engine process."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    argv = [sys.executable, "-m", "tapa_ai.cli", "engine", *(["--bot", bot] if bot else [])]
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    process.stdin.write(json.dumps(request(bot, variant)) + "\n")
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = time.perf_counter() - start
    _, stderr = process.communicate(timeout=600)
    return elapsed, stderr, json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", help="an engine --bot spec (best_move is timed instead of legal_moves)")
    parser.add_argument("--variant", default="tapa")
    parser.add_argument("--warm-runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:
        cold, cold_err, answer = first_answer(cache_dir, args.bot, args.variant)
        if "error" in answer:
            raise SystemExit(f"the engine answered an error: {answer}")
        warm = [first_answer(cache_dir, args.bot, args.variant) for _ in range(args.warm_runs)]
    record = {
        "command": " ".join(["tapa-ai engine", *(["--bot", args.bot] if args.bot else [])]),
        "request": request(args.bot, args.variant)["cmd"],
        "cold_s": round(cold, 2), "cold_notice": "compiling the numba kernels" in cold_err,
        "warm_s": [round(seconds, 2) for seconds, _, _ in warm],
        "warm_median_s": round(statistics.median(seconds for seconds, _, _ in warm), 2) if warm else None,
        "warm_notice": any("compiling the numba kernels" in err for _, err, _ in warm),
        "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()
