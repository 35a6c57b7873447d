"""What the bear-off database is worth to a network bot: the same net at 0 ply with and without it, in a duel.

    python scripts/bearoff_duel.py --net checkpoints/backgammon.pt --pairs 1000 --bearoff-pairs 2000

Two duels of duplicate pairs (the same dice for both games of a pair, each bot moving first in one),
bot A ``NetBot(net)`` (``bearoff = True``: the database values bear-offs) against bot B, the same net with
``bearoff = False``:

- from the variant's starting position, and
- from random bear-off positions, to isolate the end game: each side gets 1 to 15 checkers (uniform)
  spread uniformly over its 1- to 6-points, the rest borne off, X to move; both games of a pair start
  from the same position (both with ``tapa_ai.arena.duels.play_pairs``).

Prints A's points per game with a 95% confidence interval over the pairs, one JSON line per duel.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from tapa_ai.arena.duels import play_pairs
from tapa_ai.bots.search import NetBot
from tapa_ai.movegen import PositionBatch
from tapa_ai.net.checkpoint import load_network
from tapa_ai.notation.mini import board


def random_bearoff_starts(rules, pairs: int, rng: np.random.Generator) -> PositionBatch:
    """``pairs`` random bear-off positions, X to move (module docstring)."""
    positions = []
    for _ in range(pairs):
        layout = []
        for side, point_of in (("X", lambda q: q), ("O", lambda q: 25 - q)):
            counts = np.bincount(rng.integers(0, 6, size=int(rng.integers(1, 16))), minlength=6)
            layout += [f"{point_of(q + 1)}:{side * int(n)}" for q, n in enumerate(counts) if n]
        positions.append(board(rules, " ".join(layout), "X"))
    return PositionBatch.from_positions(positions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", required=True, help="checkpoint, e.g. checkpoints/backgammon.pt")
    parser.add_argument("--pairs", type=int, default=1000, help="duplicate pairs from the start (0: none)")
    parser.add_argument("--bearoff-pairs", type=int, default=2000, help="duplicate pairs from random bear-offs (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    net = load_network(args.net)
    with_database, without = NetBot(net), NetBot(net, bearoff=False)
    policy_a = lambda afterstates, rng: with_database.choose(afterstates, rng)  # noqa: E731
    policy_b = lambda afterstates, rng: without.choose(afterstates, rng)  # noqa: E731
    duels = []
    if args.pairs:
        duels.append(("start", lambda: play_pairs(net.rules, policy_a, policy_b, args.pairs, args.seed)))
    if args.bearoff_pairs:
        starts = random_bearoff_starts(net.rules, args.bearoff_pairs, np.random.default_rng([args.seed, 1]))
        duels.append(("random bear-offs", lambda: play_pairs(net.rules, policy_a, policy_b, len(starts), args.seed,
                                                                       max_turns=200, starts=starts)))
    for name, play in duels:
        began = time.perf_counter()
        summary = play().summary()
        print(json.dumps({"net": args.net, "variant": net.rules.name, "from": name, "games": summary.games,
                          "ppg_with_database": round(summary.ppg, 4),
                          "ppg_ci95": [round(x, 4) for x in summary.ppg_ci95],
                          "win_rate": round(summary.win_rate, 4), "kinds": dict(summary.kinds),
                          "unfinished": summary.unfinished, "seconds": round(time.perf_counter() - began, 1)}),
              flush=True)


if __name__ == "__main__":
    main()
