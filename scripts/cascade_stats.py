"""What Gul Bara's cascading doubles are worth in games between two bots (tapa_ai/arena/cascades.py).

    python scripts/cascade_stats.py heuristic heuristic --pairs 1000 --seed 1
    python scripts/cascade_stats.py net:gulbara net:gulbara --pairs 5000

Prints the games, the share decided by a cascade (95% CI), cascades per game, stages and steps per cascade, and
the cascades by how many stages they played; ``--json`` adds one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.arena.cascades import cascade_stats  # noqa: E402
from tapa_ai.bots.spec import make_bot  # noqa: E402
from tapa_ai.rules.options import variant_rules  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bot_a")
    parser.add_argument("bot_b")
    parser.add_argument("--variant", default="gulbara")
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rules = variant_rules(args.variant)
    bots = [make_bot(spec, rules) for spec in (args.bot_a, args.bot_b)]
    policies = [bot.choose for bot in bots]
    stats = cascade_stats(rules, *policies, pairs=args.pairs, seed=args.seed).summary()
    low, high = stats["decided_by_a_cascade_ci"]
    print(f"{args.bot_a} vs {args.bot_b}, {args.variant}: {stats['games']} games ({stats['unfinished']} unfinished)")
    print(f"  decided by a cascade   {100 * stats['decided_by_a_cascade']:.1f}%  95% CI [{100 * low:.1f}%, "
          f"{100 * high:.1f}%]")
    print(f"  cascades per game      {stats['cascades_per_game']:.2f}")
    print(f"  stages per cascade     {stats['stages_per_cascade']:.2f}  (steps {stats['steps_per_cascade']:.1f})")
    print(f"  cascades by stages     {stats['cascades_by_stages']}")
    if args.json:
        print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
