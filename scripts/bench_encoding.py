"""Encoding speed: rows (positions) encoded per second by ``tapa_ai.encoding.encode``.

    python scripts/bench_encoding.py [--rows 50000] [--repeat 20] [--seed 0] [--threads 1] [--json]

Positions come from random games of every variant (``playout_positions``,
contact style, so pins and mothers appear), tiled to ``--rows`` rows and
shuffled; the batch mixes the three rule sets. The best of ``--repeat`` timed
calls is reported, writing into a reused output buffer (as self-play does) and
with a fresh allocation per call. For scale, the same rows are then scored by
``tapa_ai.model.evaluate`` with a default network (1 x 128 relu) on
``--threads`` torch threads.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from tapa_ai.encoding import NUM_FEATURES, encode
from tapa_ai.model import EvaluatorNet, ModelConfig, configure_threads, evaluate
from tapa_ai.movegen.batch import concatenate
from tapa_ai.movegen.random_positions import playout_positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000, help="rows per encode call")
    parser.add_argument("--repeat", type=int, default=20, help="timed calls; the best is reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads for the evaluate measurement")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    pool = concatenate([playout_positions(v, 4000, rng, style="contact") for v in ("tapa", "plakoto", "backgammon")])
    batch = pool.take(rng.integers(0, len(pool), size=args.rows))
    out = np.empty((args.rows, NUM_FEATURES), dtype=np.float32)
    encode(batch, out)  # warm-up

    def best(call) -> float:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return min(times)

    reused = best(lambda: encode(batch, out))
    fresh = best(lambda: encode(batch))
    configure_threads(args.threads)
    net = EvaluatorNet(ModelConfig(), batch.rules[0], seed=args.seed)
    evaluate(net, out)  # warm-up
    forward = best(lambda: evaluate(net, out))
    result = {
        "rows": args.rows,
        "features": NUM_FEATURES,
        "rows_per_s": round(args.rows / reused),
        "rows_per_s_fresh_output": round(args.rows / fresh),
        "seconds_per_call": round(reused, 5),
        "evaluate_rows_per_s": round(args.rows / forward),
        "evaluate_threads": args.threads,
    }
    print(f"encode: {args.rows} rows x {NUM_FEATURES} features in {reused * 1e3:.2f} ms "
          f"= {result['rows_per_s']:,} rows/s ({result['rows_per_s_fresh_output']:,} rows/s with a fresh output array)")
    print(f"evaluate (1 x 128 relu, {args.threads} torch thread(s)): {result['evaluate_rows_per_s']:,} rows/s")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
