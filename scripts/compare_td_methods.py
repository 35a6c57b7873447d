"""Compare lambda-return and online-traces TD learning at equal CPU time (see docs/training.md).

    python scripts/compare_td_methods.py --config configs/quick.toml --cpu-minutes 5 --pairs 1000
"""

from __future__ import annotations

import argparse
import json

from tapa_ai.training.compare import compare_methods


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/quick.toml")
    parser.add_argument("--set", action="append", default=[], help="config override for both methods")
    parser.add_argument("--traces-set", action="append", default=[],
                        help="config override for online-traces only (e.g. learning.learning_rate=0.05)")
    parser.add_argument("--cpu-minutes", type=float, default=5.0, help="CPU time per method")
    parser.add_argument("--pairs", type=int, default=1000, help="paired deals per evaluation duel")
    args = parser.parse_args()
    report = compare_methods(args.config, args.set, args.cpu_minutes * 60, args.pairs,
                             method_overrides={"online-traces": args.traces_set})
    for method, row in report["methods"].items():
        print(f"{method}: {row['games']} games, {row['updates']} updates, {row['cpu_seconds_used']:.0f} CPU s; "
              f"vs random {row['random']['ppg']:+.3f} {row['random']['ppg_ci95']}, "
              f"vs pipcount {row['pipcount']['ppg']:+.3f} {row['pipcount']['ppg_ci95']}")
    h2h = report["head_to_head"]
    print(f"{h2h['a']} vs {h2h['b']}: {h2h['ppg']:+.3f} points/game {h2h['ppg_ci95']} over {h2h['games']} games")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
