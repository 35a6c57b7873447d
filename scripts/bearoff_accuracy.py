"""How well networks play bear-offs on their own, judged by the exact databases (``learning.bearoff_targets``).

    python scripts/bearoff_accuracy.py NET_A NET_B --positions 20000 --duel-pairs 10000

For each network (its own values, ``bearoff=False``), on the same random bear-off positions (each side 1 to
15 checkers spread uniformly over its 1- to 6-points, X to move, as ``scripts/bearoff_duel.py``) and one
random roll each:

- **value error**: mean absolute difference between the network's equity of the position and the
  databases' (exact two-sided up to 6 checkers a side, else the one-sided estimate), in points;
- **move error**: how often the network's move is not one of the best by the databases, and the mean
  equity it gives away per move (databases' values of the two afterstates).

Then a duel of A against B, both on their own values, in duplicate pairs from random bear-offs (the same
dice for both games of a pair): A's points per game with a 95% CI. One JSON object is printed (``--json``
writes it too).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from bearoff_duel import random_bearoff_starts

from tapa_ai.arena.duels import play_pairs
from tapa_ai.bearoff.evaluate import bearoff_distributions
from tapa_ai.bots.search import NetBot
from tapa_ai.net.evaluator import evaluator_for
from tapa_ai.movegen import generate
from tapa_ai.movegen.choice import segment_argmax
from tapa_ai.net.checkpoint import load_network
from tapa_ai.rules.outcomes import outcome_points


def accuracy(net, starts, dice) -> dict:
    """Value and move errors of ``net`` (its own values) on the bear-off positions ``starts`` with ``dice``."""
    points = outcome_points(net.rules).astype(np.float64)
    rows, exact = bearoff_distributions(starts)
    assert len(rows) == len(starts)
    own = NetBot(net, bearoff=False).pre_roll_distributions(starts, 0) @ points
    afterstates = generate(starts, dice)
    judged = evaluator_for(net, bearoff=True).afterstate_distributions(afterstates) @ points
    chosen = segment_argmax(evaluator_for(net, bearoff=False).afterstate_distributions(afterstates) @ points,
                            afterstates.offsets)
    best = np.maximum.reduceat(judged, afterstates.offsets[:-1])
    loss = best - judged[chosen]
    return {"value_error": float(np.mean(np.abs(own - exact @ points))),
            "move_error_rate": float(np.mean(loss > 1e-9)), "equity_lost_per_move": float(np.mean(loss))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("nets", nargs=2, metavar="NET", help="two checkpoints of the same variant")
    parser.add_argument("--positions", type=int, default=20000)
    parser.add_argument("--duel-pairs", type=int, default=10000, help="duplicate pairs from random bear-offs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the report here too")
    args = parser.parse_args()
    nets = [load_network(path) for path in args.nets]
    if nets[0].rules != nets[1].rules:
        parser.error("the two networks play different rule sets")
    rules = nets[0].rules
    rng = np.random.default_rng([args.seed, 2])
    starts = random_bearoff_starts(rules, args.positions, rng)
    dice = rng.integers(1, 7, size=(args.positions, 2)).astype(np.int8)
    report = {"command": "python scripts/bearoff_accuracy.py " + " ".join(sys.argv[1:]), "variant": rules.name,
              "positions": args.positions,
              "nets": {path: accuracy(net, starts, dice) for path, net in zip(args.nets, nets)}}
    if args.duel_pairs:
        bots = [NetBot(net, bearoff=False) for net in nets]
        duel_starts = random_bearoff_starts(rules, args.duel_pairs, np.random.default_rng([args.seed, 1]))
        start = time.perf_counter()
        summary = play_pairs(rules, lambda a, r: bots[0].choose(a, r), lambda a, r: bots[1].choose(a, r),
                             len(duel_starts), args.seed, max_turns=200, starts=duel_starts).summary()
        report["duel"] = {"pairs": args.duel_pairs, "a": args.nets[0], "b": args.nets[1], "games": summary.games,
                          "ppg_a": round(summary.ppg, 4), "ppg_ci95": [round(x, 4) for x in summary.ppg_ci95],
                          "win_rate_a": round(summary.win_rate, 4), "unfinished": summary.unfinished,
                          "seconds": round(time.perf_counter() - start, 1)}
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
