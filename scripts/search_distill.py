"""Learning from search, measured: fit copies of a checkpoint to its own n-ply search values, then duel them.

    python scripts/search_distill.py checkpoints/tapa.pt --out runs/distill/tapa --states 200000 --plies 0 1

Each student starts from the checkpoint and is fitted to the value of the
move its ``n``-ply search plays after a roll, on the same positions of 0-ply
self-play; ``--plies 0`` (the TD(0) target, no search) is the control.
Writes out/report.json (fits, held-out losses, duels), the students
(out/student_<n>ply.pt, network only) and the targets (reused by a rerun).
Logic: tapa_ai/training/distill.py; results in docs/training.md, *Learning from search*.
"""

from __future__ import annotations

import argparse
import json
import sys

from tapa_ai.bots.base import BotError
from tapa_ai.net.checkpoint import CheckpointError
from tapa_ai.training.distill import DistillError, experiment


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="the teacher (and starting point of every student)")
    parser.add_argument("--out", required=True, help="directory of targets, students and report.json")
    parser.add_argument("--states", type=int, default=200_000, help="positions to fit (default 200000)")
    parser.add_argument("--every", type=int, default=1, help="keep every N-th turn of a self-play game")
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 1], help="search depths of the targets")
    parser.add_argument("--rolls", choices=("sample", "all"), default="sample",
                        help="one roll per position (default) or the average over the 21 rolls")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-4, help="Adam learning rate of the fit")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--pairs", type=int, default=5000, help="duplicate pairs per duel (games = 2 x pairs)")
    parser.add_argument("--opponents", nargs="+", default=["heuristic"], help="bot specs to measure against")
    parser.add_argument("--seed", type=int, default=1, help="seed of the positions, targets and fits")
    parser.add_argument("--eval-seed", type=int, default=1, help="seed of the duels' dice")
    parser.add_argument("--refine", nargs=2, metavar=("N", "MARGIN"),
                        help="2-ply targets and deeper: search the candidates one ply less deep first and keep the "
                             "best N within MARGIN (about 3 times cheaper at 2 plies; docs/training.md)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    try:
        refine = (int(args.refine[0]), float(args.refine[1])) if args.refine else None
    except ValueError:
        parser.error(f"--refine {' '.join(args.refine)}: want an integer and a number, e.g. --refine 2 0.04")
    try:
        report = experiment(args.checkpoint, args.out, states=args.states, every=args.every, plies=args.plies,
                            rolls=args.rolls, epochs=args.epochs, learning_rate=args.lr,
                            batch_size=args.batch_size, pairs=args.pairs, opponents=args.opponents,
                            seed=args.seed, eval_seed=args.eval_seed, progress=not args.quiet, refine=refine)
    except (DistillError, CheckpointError, BotError, OSError, ValueError) as error:
        print(f"search_distill: {error}", file=sys.stderr)
        return 2
    for name, row in report["matches"].items():
        low, high = row["ppg_ci95"]
        print(f"{name:28s} {row['games']:6d} games  {row['ppg']:+.3f} [{low:+.3f}, {high:+.3f}]  "
              f"won {row['win_rate']:.1%}")
    for name, facts in report["students"].items():
        print(f"student {name}: held-out cross-entropy {facts['held_out_before']:.4f} -> {facts['held_out_after']:.4f} "
              f"(targets' entropy {facts['held_out_entropy']:.4f})")
    print(json.dumps({"report": f"{args.out}/report.json"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
