"""Cost of a search target: CPU time per position of ``search_targets`` at 0, 1 and 2 plies, side by side.

    NUMBA_NUM_THREADS=1 python scripts/bench_search_targets.py checkpoints/tapa.pt [--positions 3000 1000 150] [--seed 5]
    NUMBA_NUM_THREADS=1 python scripts/bench_search_targets.py checkpoints/tapa.pt --refine 2 0.04   # + the refined 2-ply
    NUMBA_NUM_THREADS=1 python scripts/bench_search_targets.py checkpoints/tapa.pt --refine 2 0.04 --refine 1 0
    NUMBA_NUM_THREADS=1 python scripts/bench_search_targets.py checkpoints/plakoto.pt --refine 1 0 --last-ply-dice 6

Positions before the roll come from 0-ply self-play of the checkpoint (every
4th turn); each depth is timed on the first N of them with one sampled roll
per position (process CPU time, so other load on the machine matters less).
With ``--refine N MARGIN`` (repeatable) the 2-ply targets are timed again for each setting in the
same run with the second move filter (``NetBot(refine=(N, MARGIN))``), on the
same positions and dice, and the two kinds of target are compared (mean and
largest difference of their equities, and how often they pick another move).
With ``--last-ply-dice K`` (repeatable) the refined (1, 0) targets are timed again with the
last ply averaged over K of the 36 dice (``search_targets(last_ply_dice=K)``, config
``learning.search_last_ply_dice``) on the same positions and root dice, and compared with the
exact refined ones: the mean signed difference (the estimate is unbiased: near 0) and its rms
(the noise the sampling adds to a label). For scale, the self-play cost per position of the checkpoint's own training
run (its CPU time over its decisions) is printed too.
Logic: tapa_ai/training/distill.py; results in docs/training.md, *Learning from search*.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from tapa_ai.net.checkpoint import CheckpointError, load_checkpoint, load_network
from tapa_ai.rules.outcomes import outcome_points
from tapa_ai.training.distill import collect_states, search_targets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint")
    parser.add_argument("--positions", type=int, nargs=3, default=[3000, 1000, 150], metavar=("N0", "N1", "N2"),
                        help="positions timed at 0, 1 and 2 plies")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--refine", nargs=2, action="append", default=[], metavar=("N", "MARGIN"),
                        help="also time 2-ply targets with the second move filter: N moves within MARGIN "
                             "(repeatable: each setting on the same positions and dice)")
    parser.add_argument("--last-ply-dice", type=int, action="append", default=[], metavar="K",
                        help="also time refined (1, 0) 2-ply targets whose last ply averages K of the 36 dice "
                             "(repeatable)")
    args = parser.parse_args()
    if any(not 1 <= k <= 36 for k in args.last_ply_dice):
        parser.error(f"--last-ply-dice {args.last_ply_dice}: each K from 1 to 36")
    refines = []
    for count, margin in args.refine:
        try:
            refines.append((int(count), float(margin)))
        except ValueError:
            parser.error(f"--refine {count} {margin}: want an integer and a number, e.g. --refine 2 0.04")
    try:
        net = load_network(args.checkpoint)
        checkpoint = load_checkpoint(args.checkpoint)
    except CheckpointError as error:
        print(f"bench_search_targets: {error}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    states = collect_states(net, max(args.positions), rng, every=4)
    search_targets(net, states[:20], 2, rng)  # compile and warm the kernels outside the timing
    result = {"checkpoint": args.checkpoint, "ms_per_position": {}}
    targets = {}
    for plies, count in enumerate(args.positions):
        start = time.process_time()
        targets[plies] = search_targets(net, states[:count], plies, np.random.default_rng([args.seed, plies]))
        result["ms_per_position"][f"{plies}ply"] = (time.process_time() - start) / count * 1e3
    points = outcome_points(net.rules)
    count = args.positions[2]
    if args.last_ply_dice and (1, 0.0) not in refines:
        refines.append((1, 0.0))
    for refine in refines:
        start = time.process_time()
        # One chunk: the root dice are the first draws of the generator, the same for every setting.
        targets[refine] = search_targets(net, states[:count], 2, np.random.default_rng([args.seed, 2]),
                                         refine=refine, chunk=count)
        name = f"2ply_refine_{refine[0]}_{refine[1]:g}"
        result["ms_per_position"][name] = (time.process_time() - start) / count * 1e3
        gap = np.abs((targets[refine] - targets[2]) @ points)
        result.setdefault("refined_vs_2ply", {})[name] = {
            "mean_abs_equity_difference": float(gap.mean()), "max_abs_equity_difference": float(gap.max()),
            "share_differing": float((gap > 1e-6).mean()), "positions": count}
    for dice in args.last_ply_dice:
        start = time.process_time()
        sampled = search_targets(net, states[:count], 2, np.random.default_rng([args.seed, 2]), refine=(1, 0.0),
                                 chunk=count, last_ply_dice=dice)
        name = f"2ply_refine_1_0_dice_{dice}"
        result["ms_per_position"][name] = (time.process_time() - start) / count * 1e3
        difference = (sampled - targets[(1, 0.0)]) @ points
        result.setdefault("sampled_vs_refined", {})[name] = {
            "mean_equity_difference": float(difference.mean()),
            "rms_equity_difference": float(np.sqrt(np.mean(difference ** 2))), "positions": count}
    cpu = checkpoint.extra.get("cpu_seconds")
    if cpu and checkpoint.decisions:
        result["selfplay_ms_per_position"] = cpu / checkpoint.decisions * 1e3
    for name, ms in result["ms_per_position"].items():
        print(f"{name} sampled target: {ms:8.3f} ms per position (CPU)")
    for name, gap in result.get("refined_vs_2ply", {}).items():
        print(f"{name} vs 2-ply targets: equity differs on {gap['share_differing']:.1%} of {gap['positions']} "
              f"positions, mean {gap['mean_abs_equity_difference']:.4f}, largest {gap['max_abs_equity_difference']:.4f}")
    for name, gap in result.get("sampled_vs_refined", {}).items():
        print(f"{name} vs 2ply_refine_1_0: mean difference {gap['mean_equity_difference']:+.4f}, "
              f"rms {gap['rms_equity_difference']:.4f} ({gap['positions']} positions)")
    if "selfplay_ms_per_position" in result:
        print(f"training self-play:  {result['selfplay_ms_per_position']:8.4f} ms per position (CPU, its run)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
