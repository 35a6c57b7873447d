"""Ship a new generation of a model only if it beats the shipped one (0-ply duel, 95% CI above zero).

    python scripts/ship_model.py runs/tapa__main__1__.../best.pt checkpoints/tapa.pt --games 10000

The replaced model is kept as checkpoints/generations/<variant>-g<N>.pt (network only); the duel
record goes to --out (default docs/strength/<variant>/generation_duel_g<N+1>.json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tapa_ai.arena.strength import promote
from tapa_ai.bots.base import BotError
from tapa_ai.net.checkpoint import CheckpointError, load_checkpoint


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidate", help="checkpoint of the new generation")
    parser.add_argument("shipped", help="the shipped checkpoint it must beat (replaced if it does)")
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--generations", default="checkpoints/generations")
    parser.add_argument("--out", help="where the duel record goes")
    args = parser.parse_args()
    try:
        variant = load_checkpoint(args.shipped).rules().name
        record = promote(args.candidate, args.shipped, args.generations, args.games, args.seed, args.workers)
    except (BotError, CheckpointError, ValueError, OSError) as error:
        print(f"ship_model: {error}", file=sys.stderr)
        return 2
    record["candidate"], record["shipped"] = args.candidate, args.shipped
    out = Path(args.out or f"docs/strength/{variant}/generation_duel_g{record['generation']}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    low, high = record["ppg_ci95"]
    verdict = f"shipped; the previous model is kept as {record['kept_as']}" if record["promoted"] else \
        "NOT shipped: the lower end of the CI is not above zero"
    print(f"candidate vs shipped: {record['ppg']:+.3f} [{low:+.3f}, {high:+.3f}] over {record['games']} games, "
          f"win {record['win_rate']:.1%} -> {verdict} ({out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
