"""Compare the fast move generator with the reference on many random positions; 0 mismatches required.

    python scripts/check_movegen.py                          # 1,000,000 positions per variant
    python scripts/check_movegen.py --positions 100000 --variant tapa --seed 7

Positions come from ``tapa_ai.movegen.random_positions.mixed_positions`` (a
third uniform playouts, a third pinning/hitting playouts, a third end-game
boards with pins), in chunks that each worker process makes from its own
seed ``(seed, variant, chunk)``, so a run is reproducible and any chunk can be
rerun alone. Every afterstate set is compared exactly; the move text of every
afterstate is replayed for one position in ``--replay-every``. The reference
is slow (milliseconds per position), so the work is spread over processes and
the expected run time is printed first.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.movegen import generate  # noqa: E402
from tapa_ai.movegen.differential import compare_with_reference  # noqa: E402
from tapa_ai.movegen.random_positions import mixed_positions, random_dice  # noqa: E402
from tapa_ai.rules.options import VARIANTS  # noqa: E402


@dataclass
class Args:
    positions: int = 1_000_000
    """Positions to check per variant."""
    variant: str = "all"
    """``tapa``, ``plakoto``, ``backgammon`` or ``all``."""
    seed: int = 0
    """Seed of the whole run; chunk ``c`` of variant ``v`` uses ``(seed, v, c)``."""
    workers: int = 0
    """Worker processes (0: one per CPU)."""
    chunk: int = 600
    """Positions per task."""
    replay_every: int = 10
    """Replay the move text of every afterstate of one chunk position in this many (1 = all)."""
    show: int = 3
    """How many mismatching cases to print as JSON."""


def parse_args(argv=None) -> Args:
    defaults = Args()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, default=defaults.positions, help="positions per variant")
    parser.add_argument("--variant", default=defaults.variant, choices=sorted(VARIANTS) + ["all"])
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--workers", type=int, default=defaults.workers, help="processes (0: CPU count)")
    parser.add_argument("--chunk", type=int, default=defaults.chunk, help="positions per task")
    parser.add_argument("--replay-every", type=int, default=defaults.replay_every,
                        help="replay move texts for 1 position in this many")
    parser.add_argument("--show", type=int, default=defaults.show, help="mismatches printed as JSON")
    return Args(**vars(parser.parse_args(argv)))


def check_chunk(task: tuple[str, int, int, int, int, int]) -> dict:
    """Make and check one chunk; returns counts, timings and the mismatches (JSON-ready)."""
    variant, variant_index, seed, chunk_index, count, replay_every = task
    rng = np.random.default_rng([seed, variant_index, chunk_index])
    batch = mixed_positions(variant, count, rng)
    dice = random_dice(len(batch), rng)
    started = time.perf_counter()
    afterstates = generate(batch, dice, threads=1)
    fast_seconds = time.perf_counter() - started
    started = time.perf_counter()
    replay_rows = np.zeros(len(batch), dtype=bool)
    replay_rows[:: max(1, replay_every)] = True
    seen = 0
    mismatches = []
    for replay in (True, False):
        part = np.flatnonzero(replay_rows == replay)
        if part.size:
            n, found = compare_with_reference(batch.take(part), dice[part], replay=replay)
            seen += n
            mismatches += found
    return {
        "variant": variant, "chunk": chunk_index, "positions": len(batch), "afterstates": seen,
        "game_over": int(afterstates.game_over.sum()), "fast_seconds": fast_seconds,
        "check_seconds": time.perf_counter() - started, "mismatches": mismatches,
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    variants = sorted(VARIANTS) if args.variant == "all" else [args.variant]
    workers = args.workers or os.cpu_count() or 1
    full, rest = divmod(args.positions, args.chunk)
    sizes = [args.chunk] * full + ([rest] if rest else [])
    # Variants interleaved, so a run stopped early has checked all of them about equally.
    tasks = [
        (variant, sorted(VARIANTS).index(variant), args.seed, c, size, args.replay_every)
        for c, size in enumerate(sizes) for variant in variants
    ]

    # Estimate from one small pilot chunk per variant, run here before the pool starts.
    pilot_seconds = 0.0
    for variant in variants:
        pilot = check_chunk((variant, sorted(VARIANTS).index(variant), args.seed + 10**6, 0, 60, args.replay_every))
        pilot_seconds += pilot["check_seconds"] / pilot["positions"] * args.positions
    print(f"checking {args.positions:,} positions per variant ({', '.join(variants)}) with {workers} processes; "
          f"estimated {pilot_seconds / workers / 60:.1f} min ({pilot_seconds / workers:.0f} s)", flush=True)

    totals = {v: {"positions": 0, "afterstates": 0, "mismatches": 0, "game_over": 0, "fast_seconds": 0.0,
                  "check_seconds": 0.0} for v in variants}
    shown = []
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers) as pool, \
            tqdm(total=args.positions * len(variants), unit="pos", smoothing=0.05, mininterval=10) as bar:
        for report in pool.imap_unordered(check_chunk, tasks):
            total = totals[report["variant"]]
            for key in ("positions", "afterstates", "game_over", "fast_seconds", "check_seconds"):
                total[key] += report[key]
            total["mismatches"] += len(report["mismatches"])
            for case in report["mismatches"]:
                if len(shown) < args.show:
                    shown.append({"chunk": report["chunk"], **case})
                    tqdm.write("MISMATCH " + json.dumps(shown[-1]))
            bar.update(report["positions"])
            done_tasks = bar.n // max(1, args.chunk)
            if done_tasks % 100 == 0:
                tqdm.write(f"[{time.strftime('%H:%M:%S')}] so far: " + json.dumps(
                    {v: {"positions": t["positions"], "mismatches": t["mismatches"]} for v, t in totals.items()}))
            bar.set_postfix(mismatches=sum(t["mismatches"] for t in totals.values()))
    elapsed = time.perf_counter() - started

    print(f"done in {elapsed / 60:.1f} min (seed {args.seed}, {workers} processes)")
    for variant, total in totals.items():
        print(
            f"{variant:>10}: {total['positions']:,} positions, {total['afterstates']:,} afterstates "
            f"({total['game_over']:,} game-ending), mismatches {total['mismatches']}; "
            f"fast {total['positions'] / max(total['fast_seconds'], 1e-9):,.0f} pos/s, "
            f"reference + check {total['positions'] / max(total['check_seconds'], 1e-9):,.0f} pos/s per process"
        )
    print(json.dumps({v: {"positions": t["positions"], "mismatches": t["mismatches"]} for v, t in totals.items()}))
    return 1 if any(t["mismatches"] for t in totals.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
