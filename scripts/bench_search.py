"""Search speed: decisions/s of a network bot at 0, 1 and 2 ply, per variant, side by side in one run.

    python scripts/bench_search.py --net tapa=runs/.../latest.pt --net backgammon=checkpoints/backgammon.pt
    python scripts/bench_search.py            # untrained 259x128 networks

The speed depends on the weights where zeros can be skipped: a trained ReLU network leaves most units of
its hidden layers at zero, which the fused kernel does not multiply (measure a trained checkpoint).

Positions: random-play positions (``playout_positions``), a fixed seed, a
fresh roll each; the bot chooses a move for ``--batch`` positions at once.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from tapa_ai.bots.search import NetBot
from tapa_ai.net.checkpoint import load_network
from tapa_ai.config import ModelConfig
from tapa_ai.net.model import EvaluatorNet
from tapa_ai.movegen import generate
from tapa_ai.movegen.random_positions import playout_positions, random_dice
from tapa_ai.rules import variant_rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", default=["tapa", "plakoto", "backgammon"])
    parser.add_argument("--net", action="append", default=[], metavar="VARIANT=CHECKPOINT")
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--batch", type=int, default=32, help="positions decided per call")
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per measurement (at least one call)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    nets = dict(item.split("=", 1) for item in args.net)
    report = {}
    for variant in args.variants:
        rules = variant_rules(variant)
        net = load_network(nets[variant]) if variant in nets else EvaluatorNet(ModelConfig(hidden=128), rules, seed=1)
        rng = np.random.default_rng(args.seed)
        positions = playout_positions(rules, 4 * args.batch, rng)
        report[variant] = {}
        for plies in args.plies:
            bot = NetBot(net, plies)
            bot.choose(generate(positions.take(np.arange(4)), random_dice(4, rng)), rng)  # compile / warm up
            decisions, start = 0, time.perf_counter()
            while True:
                index = rng.integers(0, len(positions), args.batch)
                afterstates = generate(positions.take(index), random_dice(args.batch, rng))
                bot.choose(afterstates, rng)
                decisions += args.batch
                elapsed = time.perf_counter() - start
                if elapsed >= args.seconds:
                    break
            report[variant][f"{plies}ply"] = decisions / elapsed
            print(f"{variant:<11} {plies}-ply  {decisions / elapsed:>10,.1f} decisions/s  ({decisions} in {elapsed:.1f} s)",
                  flush=True)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
