"""Encoding speed: rows (positions) per second of ``tapa_ai.net.encoding.encode`` and of the fast kernel, per version.

    python scripts/bench_encoding.py [--rows 50000] [--repeat 20] [--seed 0] [--threads 1] [--versions 1 2] [--json]

Positions come from random games of every variant (``playout_positions``,
contact style, so pins and mothers appear), tiled to ``--rows`` rows and
shuffled; the batch mixes the three rule sets. The best of ``--repeat`` timed
calls is reported, writing into a reused output buffer (as self-play does) and
with a fresh allocation per call. For scale, the same rows are then scored by
``tapa_ai.net.model.evaluate`` with a default network (1 x 128 relu) on
``--threads`` torch threads, and by the numba kernel of
``tapa_ai.net.fast_eval`` (encoding and network in one pass, one thread), which
is what self-play runs. Every encoding version in ``--versions`` is measured
in the same run, one after the other, so their ratios compare like with like.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from tapa_ai.net.encoding import ENCODING_VERSIONS, encode, num_features
from tapa_ai.net.fast_eval import FastEvaluator
from tapa_ai.net.model import EvaluatorNet, ModelConfig, configure_threads, evaluate
from tapa_ai.movegen.batch import concatenate
from tapa_ai.movegen.random_positions import playout_positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000, help="rows per encode call")
    parser.add_argument("--repeat", type=int, default=20, help="timed calls; the best is reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads for the evaluate measurement")
    parser.add_argument("--versions", type=int, nargs="+", default=list(ENCODING_VERSIONS),
                        choices=ENCODING_VERSIONS, help="encoding versions to measure")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    pool = concatenate([playout_positions(v, 4000, rng, style="contact") for v in ("tapa", "plakoto", "backgammon")])
    batch = pool.take(rng.integers(0, len(pool), size=args.rows))
    tapa_rows = batch.take(np.flatnonzero(batch.rules_id == 0))  # the kernel evaluates one network's rule set
    configure_threads(args.threads)

    def best(call) -> float:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return min(times)

    results = {}
    for version in args.versions:
        width = num_features(version)
        out = np.empty((args.rows, width), dtype=np.float32)
        encode(batch, out, version=version)  # warm-up
        reused = best(lambda: encode(batch, out, version=version))
        fresh = best(lambda: encode(batch, version=version))
        net = EvaluatorNet(ModelConfig(encoding_version=version), tapa_rows.rules[0], seed=args.seed)
        evaluate(net, out)  # warm-up
        forward = best(lambda: evaluate(net, out))
        kernel = FastEvaluator.from_net(net, threads=1)
        kernel.evaluate(tapa_rows)  # compile / warm-up
        fast = best(lambda: kernel.evaluate(tapa_rows))
        results[version] = {
            "rows": args.rows,
            "features": width,
            "rows_per_s": round(args.rows / reused),
            "rows_per_s_fresh_output": round(args.rows / fresh),
            "seconds_per_call": round(reused, 5),
            "evaluate_rows_per_s": round(args.rows / forward),
            "evaluate_threads": args.threads,
            "kernel_rows_per_s": round(len(tapa_rows) / fast),
            "kernel_rows": len(tapa_rows),
        }
        r = results[version]
        print(f"version {version}: encode {args.rows} rows x {width} features in {reused * 1e3:.2f} ms "
              f"= {r['rows_per_s']:,} rows/s ({r['rows_per_s_fresh_output']:,} rows/s with a fresh output array); "
              f"evaluate (1 x 128 relu, {args.threads} torch thread(s)) {r['evaluate_rows_per_s']:,} rows/s; "
              f"fast kernel (tapa rows, 1 thread) {r['kernel_rows_per_s']:,} rows/s")
    if len(results) > 1:
        first, last = results[min(results)], results[max(results)]
        print(f"version {max(results)} / version {min(results)}: encode x{last['rows_per_s'] / first['rows_per_s']:.2f}, "
              f"fast kernel x{last['kernel_rows_per_s'] / first['kernel_rows_per_s']:.2f}")
    if args.json:
        print(json.dumps({str(version): result for version, result in results.items()}))


if __name__ == "__main__":
    main()
