"""Our ``gnubg:0`` rollouts against an independent Monte Carlo of gnubg-nn's own best_move, on 50 positions.

    python scripts/rollout_gnubg_agreement.py --games 288      # the figure in docs/rollout.md (~15 min)

gnubg-nn's ``bestmove`` moves both sides on dice of its own (seed ``1000 + k``
for position ``k``, not the rollout's), so the two are independent estimates:
agreement is being within the combined 95% CI. The positions (25 uniform and
25 contact playouts, seed 20261202) and the replay and the gnubg board are
those of ``tests/test_rollout.py``, whose
``test_gnubg_rollout_plays_the_games_of_gnubg_itself_on_the_same_dice`` gives
the replay the rollout's own dice and asks for the same games. Prints the
positions that agree and the z-scores of the differences (mean ~0 and
standard deviation ~1 for two unbiased estimates).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=288)
    args = parser.parse_args(argv)

    import gnubg_nn
    import numpy as np

    from tapa_ai.arena.rollout import RolloutSettings, rollout_position
    from tapa_ai.movegen.random_positions import playout_positions
    from tests.test_rollout import _dice_stream, _gnubg_board, _gnubg_replay

    rng = np.random.default_rng(20261202)
    positions = [batch.position(k) for style in ("uniform", "contact")
                 for batch in [playout_positions("backgammon", 25, rng, style, games=16)] for k in range(25)]
    agree, z = 0, []
    start = time.perf_counter()
    for k, position in enumerate(positions):
        ours = rollout_position(position, "gnubg:0", RolloutSettings(games=args.games, seed=k), progress=False).stats[0]
        ours_half = (ours.equity_ci95[1] - ours.equity_ci95[0]) / 2
        dice = _dice_stream(np.random.default_rng(1000 + k), args.games)  # not the rollout's dice
        theirs = _gnubg_replay(gnubg_nn, _gnubg_board(position), dice)
        theirs_half = 1.96 * theirs.std(ddof=1) / math.sqrt(args.games)
        agree += abs(ours.equity - theirs.mean()) <= math.hypot(ours_half, theirs_half)
        z.append((ours.equity - theirs.mean()) / (math.hypot(ours_half, theirs_half) / 1.96))
    print(f"{args.games} games a position: agree within the combined 95% CI on {agree} of {len(positions)}; "
          f"z-scores mean {np.mean(z):+.3f}, sd {np.std(z):.3f}; {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
