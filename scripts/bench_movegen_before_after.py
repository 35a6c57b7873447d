"""The move generator's kernel before and after a change, side by side in one process, at batch 1024.

    git archive 2109362 | (mkdir -p /tmp/before && tar -x -C /tmp/before)
    python scripts/bench_movegen_before_after.py --before /tmp/before --rounds 7

The kernel of this tree (``tapa_ai/movegen/kernel.py``) and the one of the tree ``--before`` (loaded from its
file under another module name, so both are compiled and cached in their own trees) run on the same
positions and dice: pools of uniform random playouts per variant (made with this tree's generator, seeded),
cut into batches of 1024, one thread, the kernel called directly (no thread pool). Each round times every
variant with both kernels, in turn and in alternating order, so a machine whose speed drifts slows both
alike; the best round of each and the median of the per-round ratios are printed. The variants the old kernel
does not play (``NEW_ONLY``) are timed with this tree's kernel in the same rounds, beside plakoto.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.movegen import kernel  # noqa: E402
from tapa_ai.movegen.random_positions import playout_positions, random_dice  # noqa: E402

OLD_VARIANTS = ("tapa", "plakoto", "backgammon", "fevga", "narde")
NEW_ONLY = ("gulbara",)
BATCH = 1024


def load_before(tree: str):
    """The kernel module of another tree, as ``tapa_ai.movegen.kernel_before`` (its relative imports read this
    tree's ``tapa_ai.rules``: only the result codes, which must be the same)."""
    path = os.path.join(tree, "tapa_ai", "movegen", "kernel.py")
    spec = importlib.util.spec_from_file_location("tapa_ai.movegen.kernel_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def batches(variant: str, positions: int, seed: int):
    rng = np.random.default_rng([seed, (*OLD_VARIANTS, *NEW_ONLY).index(variant)])
    pool = playout_positions(variant, positions, rng, "uniform")
    dice = random_dice(len(pool), rng)
    out = []
    for start in range(0, len(pool) - BATCH + 1, BATCH):
        part = pool.take(slice(start, start + BATCH))
        out.append((part, np.ascontiguousarray(dice[start:start + BATCH])))
    return out


def kernel_arguments(module, part, dice) -> tuple:
    """The arguments before ``start`` of ``module.generate_range``, in the form its signature takes: one rule
    table and a decision plan (since the turn plans), or the rule flags as separate arrays and the dice."""
    parameters = inspect.signature(module.generate_range.py_func).parameters
    head = tuple(np.ascontiguousarray(a) for a in (part.board, part.pinned, part.off, part.bar, part.rules_id))
    if "plan" in parameters:
        from tapa_ai.movegen.generate import decision_plan

        return (*head, module.rule_table(part.rules), decision_plan(part, dice))
    pins = np.array([r.pins for r in part.rules], dtype=np.bool_)
    mother = np.array([r.mother_points for r in part.rules], dtype=np.int8)
    backgammons = np.array([r.backgammons for r in part.rules], dtype=np.bool_)
    restrictions = ()
    if "rule_block" in parameters:
        restrictions = (np.array([r.contact == "block" for r in part.rules], dtype=np.bool_),
                        np.array([module.START_RULE_CODES[r.start_rule] for r in part.rules], dtype=np.int8),
                        np.array([r.prime_rule for r in part.rules], dtype=np.bool_),
                        np.array([not r.full_start_quarter_allowed for r in part.rules], dtype=np.bool_))
    return (*head, pins, mother, backgammons, *restrictions, dice)


def runner(module, parts, seconds: float):
    """A function timing ``module.generate_range`` over ``parts``, repeated for at least ``seconds``:
    (positions/s wall, positions/s CPU, afterstates of one pass)."""
    scratch, outputs = module.make_scratch(), module.make_outputs(64 * BATCH)
    calls = [kernel_arguments(module, part, dice) for part, dice in parts]

    def run(least: float = seconds):
        found = positions = 0
        wall, cpu = time.perf_counter(), time.process_time()
        while True:
            for arrays in calls:
                _, _, n_out, _ = module.generate_range(*arrays, 0, BATCH, scratch, outputs)
                found += n_out
            positions += BATCH * len(calls)
            if time.perf_counter() - wall >= least:
                break
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return positions / wall, positions / cpu, found * BATCH * len(calls) // positions

    run(0.0)  # compile or load from the cache, warm the buffers
    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="root of the tree whose kernel is the 'before'")
    parser.add_argument("--positions", type=int, default=16384, help="positions per variant")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=1.0, help="least time of each measurement")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object as the last line")
    args = parser.parse_args(argv)

    before = load_before(args.before)
    print(f"before: {os.path.abspath(args.before)}; after: {os.path.dirname(os.path.abspath(kernel.__file__))}; "
          f"{args.positions} positions per variant, batch {BATCH}, 1 thread, {args.rounds} rounds of "
          f">= {args.seconds} s per measurement; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    pools = {variant: batches(variant, args.positions, args.seed) for variant in (*OLD_VARIANTS, *NEW_ONLY)}
    runs = {}
    for variant in OLD_VARIANTS:
        runs[(variant, "before")] = runner(before, pools[variant], args.seconds)
        runs[(variant, "after")] = runner(kernel, pools[variant], args.seconds)
    for variant in NEW_ONLY:
        runs[(variant, "after")] = runner(kernel, pools[variant], args.seconds)
    # Same afterstate counts before and after (the differential tests check the afterstates themselves).
    for variant in OLD_VARIANTS:
        assert runs[(variant, "before")](0.0)[2] == runs[(variant, "after")](0.0)[2], variant

    timings = {key: [] for key in runs}
    for round_number in range(args.rounds):
        for variant in (*OLD_VARIANTS, *NEW_ONLY):
            sides = ["before", "after"] if round_number % 2 == 0 else ["after", "before"]
            for side in sides:
                if (variant, side) in runs:
                    timings[(variant, side)].append(runs[(variant, side)]())
    report = {"load_average_end": os.getloadavg()[0], "rounds": args.rounds, "variants": {}}
    print(f"{'variant':>10} {'before pos/s':>13} {'after pos/s':>13} {'after/before':>13} {'median ratio':>13} "
          f"{'CPU ratio':>10}")
    for variant in OLD_VARIANTS:
        old, new = timings[(variant, "before")], timings[(variant, "after")]
        best_old, best_new = max(t[0] for t in old), max(t[0] for t in new)
        median = statistics.median(n[0] / o[0] for o, n in zip(old, new))
        cpu = max(t[1] for t in new) / max(t[1] for t in old)
        report["variants"][variant] = {"before": best_old, "after": best_new, "ratio_best": best_new / best_old,
                                       "ratio_median": median, "ratio_cpu_best": cpu}
        print(f"{variant:>10} {best_old:>13,.0f} {best_new:>13,.0f} {best_new / best_old:>13.3f} {median:>13.3f} "
              f"{cpu:>10.3f}")
    plakoto = [t[0] for t in timings[("plakoto", "after")]]
    for variant in NEW_ONLY:
        mine = [t[0] for t in timings[(variant, "after")]]
        median = statistics.median(m / p for m, p in zip(mine, plakoto))
        report["variants"][variant] = {"after": max(mine), "ratio_to_plakoto_best": max(mine) / max(plakoto),
                                       "ratio_to_plakoto_median": median}
        print(f"{variant:>10} {'':>13} {max(mine):>13,.0f}   {variant}/plakoto {max(mine) / max(plakoto):.3f} "
              f"(median of rounds {median:.3f})")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
