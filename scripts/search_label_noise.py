"""What an expert-iteration label carries: the search's correction of the net against the noise of the dice.

    NUMBA_NUM_THREADS=1 python scripts/search_label_noise.py checkpoints/backgammon.pt [--positions 300] [--seed 5]

Positions before the roll from 0-ply self-play of the checkpoint (every 4th
turn). Per position: the net's value, the 2-ply search value averaged over the
21 rolls (a ``rolls="all"`` label), four single-roll labels (what training
uses) and the 21-roll 0-ply value (the TD(0) target's mean), all in equity
(points a game, mover's view). Prints their root mean squares and how many
sampled labels of one position average the dice's noise down to the size of
what the search corrects. Logic: :func:`tapa_ai.training.distill.label_noise`.
Results: docs/experiments/expert-iteration-at-scale.md.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from tapa_ai.net.checkpoint import CheckpointError, load_network
from tapa_ai.training.distill import DistillError, collect_states, label_noise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint")
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--plies", type=int, default=2)
    parser.add_argument("--samples", type=int, default=4, help="sampled labels a position")
    parser.add_argument("--refine", nargs=2, default=["1", "0"], metavar=("N", "MARGIN"),
                        help="the second move filter of the search (default 1 0, as generation 6's run)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        refine = (int(args.refine[0]), float(args.refine[1]))
    except ValueError:
        parser.error(f"--refine {' '.join(args.refine)}: want an integer and a number")
    try:
        net = load_network(args.checkpoint)
        rng = np.random.default_rng(args.seed)
        states = collect_states(net, args.positions, rng, every=4)
        result = label_noise(net, states, args.plies, rng, samples=args.samples,
                             refine=refine if args.plies >= 2 else None)
    except (CheckpointError, DistillError) as error:
        print(f"search_label_noise: {error}", file=sys.stderr)
        return 2
    print(f"{args.checkpoint}: {result['positions']} positions, {args.plies}-ply labels (equity, points a game)")
    print(f"  search's correction of the net  rms {result['rms_signal']:.4f}  mean {result['mean_signal']:+.4f}")
    print(f"  a sampled label's dice noise    rms {result['rms_noise']:.4f}")
    print(f"  search beyond the 1-ply mean    rms {result['rms_beyond_1ply']:.4f}  "
          f"mean {result['mean_beyond_1ply']:+.4f}")
    print(f"  1-ply mean vs the net           rms {result['rms_1ply_vs_net']:.4f}  "
          f"mean {result['mean_1ply_vs_net']:+.4f}")
    print(f"  sampled labels a position to bring the noise to the correction's size: "
          f"{result['sampled_labels_per_signal']:.0f}")
    print(json.dumps({"checkpoint": args.checkpoint, **result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
