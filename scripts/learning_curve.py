"""Learning curves: train a variant to CPU-minute marks, duel each snapshot against the fixed bots.

    python scripts/learning_curve.py --config configs/tapa.toml --marks 10 30 60 --pairs 1000
    python scripts/learning_curve.py --resume runs/tapa__main__1__... --marks 10 30 60   # continue after a kill
    python scripts/learning_curve.py --plot docs/curves/tapa.json docs/curves/plakoto.json ...  # redraw the PNG

Writes docs/curves/<variant>.json (one row per mark: games trained, CPU and
wall seconds, points per game with 95% CI and win rate against random and
pipcount over 2 * pairs games with paired dice) and docs/curves/learning_curves.png.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tapa_ai.config import ConfigError
from tapa_ai.training.curve import OPPONENTS, evaluate_snapshots, plot_curves, train_to_marks, write_report
from tapa_ai.training.stopping import TrainingStopped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="config of a new run")
    parser.add_argument("--resume", help="run directory to continue")
    parser.add_argument("--set", action="append", default=[], help="config override")
    parser.add_argument("--marks", type=float, nargs="+", default=[10, 30, 60], help="CPU-minute marks")
    parser.add_argument("--pairs", type=int, default=1000, help="paired deals per duel (2 games each)")
    parser.add_argument("--out", default="docs/curves", help="directory of the JSON reports and the PNG")
    parser.add_argument("--plot", nargs="+", metavar="JSON", help="only redraw the PNG from these reports")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    out = Path(args.out)
    if not args.plot:
        if bool(args.config) == bool(args.resume):
            parser.error("give exactly one of --config and --resume")
        try:
            run_dir, rows = train_to_marks(args.config, args.set, args.marks, args.resume, progress=not args.quiet)
        except TrainingStopped as stopped:
            run = stopped.checkpoint.parent
            print(f"{stopped}; continue with: python scripts/learning_curve.py --resume {run} --marks "
                  f"{' '.join(f'{m:g}' for m in args.marks)} --pairs {args.pairs} --out {args.out}", file=sys.stderr)
            return stopped.exit_code
        rows = evaluate_snapshots(rows, args.pairs, progress=not args.quiet)
        variant = Path(run_dir).name.split("__")[0]
        report = write_report(variant, rows, out)
        print(f"{report} (run {run_dir})")
        for row in rows:
            print(f"{variant} {row['minutes']:g} CPU-min, {row['games_trained']} games: " + ", ".join(
                f"vs {name} {row[name]['ppg']:+.3f} [{row[name]['ppg_ci95'][0]:+.3f}, {row[name]['ppg_ci95'][1]:+.3f}]"
                f" win {row[name]['win_rate']:.1%}" for name in OPPONENTS if name in row))
        args.plot = sorted(str(path) for path in out.glob("*.json"))
    curves = {}
    for path in args.plot:
        report = json.loads(Path(path).read_text())
        if "rows" not in report or "variant" not in report:
            continue  # another report in the same folder (e.g. the TD-method comparison)
        curves[report["variant"]] = report["rows"]
    print(plot_curves(curves, out / "learning_curves.png"))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ConfigError as error:  # a bad --config or --set: one line, as tapa-ai train says it
        print(f"learning_curve: {error}", file=sys.stderr)
        sys.exit(2)
