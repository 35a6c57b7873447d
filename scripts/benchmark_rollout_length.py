"""Does a pair's rollout noise shrink with the games as the benchmark study assumes? Two sets, two lengths.

    python scripts/benchmark_rollout_length.py LONG_SCORE.json SHORT_SCORE.json

LONG and SHORT are ``tapa-ai benchmark score --out`` records of the same bots on two independent sets of one
variant, the first rolled out with more games (G) than the second (g). For each pair both score: the spread
of the pair's difference a position on each set, the noise share at G that the growth of the spread implies
(``(sd_g² − sd_G²) / (G/g − 1)``), and each set's own estimate of it (from halves or CIs, the short set's
scaled to G). Logic: :func:`tapa_ai.arena.benchmark.study.noise_between_lengths`. Results: docs/benchmark.md
(*Rollout length*).
"""

from __future__ import annotations

import argparse
import sys

from tapa_ai.arena.benchmark.file import BenchmarkError
from tapa_ai.arena.benchmark.study import noise_between_lengths, read_record


def _share(value) -> str:
    return "-" if value is None else f"{value:.0%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("long")
    parser.add_argument("short")
    args = parser.parse_args(argv)
    try:
        long, short = read_record(args.long, "score"), read_record(args.short, "score")
        rows = noise_between_lengths(long, short)
    except BenchmarkError as error:
        print(f"benchmark_rollout_length: {error}", file=sys.stderr)
        return 2
    print(f"{long['variant']}: {long['rollout']['games']} games ({long['positions']} positions) against "
          f"{short['rollout']['games']} ({short['positions']}); noise share at {long['rollout']['games']} games")
    print(f"{'pair':<48} {'sd long':>8} {'sd short':>8} {'implied':>8} {'long own':>8} {'short own':>9}")
    for row in rows:
        print(f"{row['a'] + ' - ' + row['b']:<48.48} {row['sd_long_mp']:8.1f} {row['sd_short_mp']:8.1f} "
              f"{_share(row['implied_noise_share']):>8} {_share(row['long_noise_share']):>8} "
              f"{_share(row['short_noise_share_at_long']):>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
