"""What each of the rollouts' variance reductions buys: CI widths at equal games, with and without.

    python scripts/rollout_variance.py                         # backgammon and tapa, ~20 CPU-minutes
    python scripts/rollout_variance.py --variants tapa --positions 2 --seeds 4 --games 144 --json

For each variant, ``--positions`` positions from contact playouts (seeded) are
rolled out ``--seeds`` times with independent seeds in each setting, with the
shipped net at 0-ply playing both sides:

- ``plain``: random dice, no luck adjustment;
- ``rotate``: the first roll balanced over every 36 games;
- ``luck``: luck-adjusted (the same net's 21-roll mean), random dice;
- ``rotate+luck``: both (the default of ``tapa-ai rollout``).

Reported per setting: the 95% half-width computed from the spread of the
``--seeds`` independent means (1.96 x their standard deviation: what a user's
number would really wander by) and the mean half-width the rollout itself
reports, both averaged over the positions, and the games per second.
Paired dice: the two best moves of a roll rolled out together (the same dice:
the CI of their difference from the paired games) against each rolled out with
its own seed (the CI of the difference of two independent means).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SETTINGS = {"plain": dict(rotate=0, luck=False), "rotate": dict(rotate=1, luck=False),
            "luck": dict(rotate=0, luck=True), "rotate+luck": dict(rotate=1, luck=True)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["backgammon", "tapa"])
    parser.add_argument("--positions", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--games", type=int, default=288, help="games per rollout (default 288 = 8 blocks of 36)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import numpy as np

    from tapa_ai.arena.rollout import RolloutSettings, rollout_moves, rollout_position
    from tapa_ai.movegen.random_positions import playout_positions

    report = {}
    for variant in args.variants:
        bot = f"net:checkpoints/{variant}.pt"
        batch = playout_positions(variant, args.positions, np.random.default_rng(7), "contact", games=16)
        positions = [batch.position(k) for k in range(len(batch))]
        rows = {}
        for name, options in SETTINGS.items():
            spread, reported, games, seconds = [], [], 0, 0.0
            for position in positions:
                means = []
                for seed in range(args.seeds):
                    start = time.perf_counter()
                    result = rollout_position(position, bot, RolloutSettings(games=args.games, seed=seed, **options),
                                              workers=args.workers, progress=False)
                    seconds += time.perf_counter() - start
                    stats = result.stats[0]
                    means.append(stats.equity)
                    reported.append((stats.equity_ci95[1] - stats.equity_ci95[0]) / 2)
                    games += stats.games
                spread.append(1.96 * float(np.std(means, ddof=1)))
            rows[name] = {"half_width_from_seeds": float(np.mean(spread)), "half_width_reported": float(np.mean(reported)),
                          "games_per_s": games / seconds}
            print(f"{variant:10s} {name:12s} 95% half-width: from {args.seeds} seeds {rows[name]['half_width_from_seeds']:.4f}"
                  f", reported {rows[name]['half_width_reported']:.4f}   {rows[name]['games_per_s']:.0f} games/s",
                  flush=True)
        # Paired dice across two candidates against independent dice.
        paired, unpaired = [], []
        for k, position in enumerate(positions):
            dice = (6, 4) if k % 2 else (3, 1)
            two = rollout_moves(position, dice, bot, RolloutSettings(games=args.games, seed=k), candidates=2,
                                progress=False, workers=args.workers)
            if len(two.stats) < 2:
                continue
            paired.append((two.stats[1].difference_ci95[1] - two.stats[1].difference_ci95[0]) / 2)
            halves = []
            for j, entry in enumerate(two.stats):
                alone = rollout_moves(position, dice, bot, RolloutSettings(games=args.games, seed=1000 + 10 * k + j),
                                      moves=[entry.move], progress=False, workers=args.workers)
                halves.append((alone.stats[0].equity_ci95[1] - alone.stats[0].equity_ci95[0]) / 2)
            unpaired.append(math.hypot(*halves))
        rows["difference_of_two_moves"] = {"paired_dice": float(np.mean(paired)), "independent_dice": float(np.mean(unpaired))}
        print(f"{variant:10s} difference of the two best moves, 95% half-width: paired dice "
              f"{np.mean(paired):.4f}, independent dice {np.mean(unpaired):.4f}", flush=True)
        report[variant] = rows
    if args.json:
        print(json.dumps({"games": args.games, "seeds": args.seeds, "positions": args.positions, **report}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
