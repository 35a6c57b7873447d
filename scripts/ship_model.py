"""Ship a new generation of a model only if it beats the shipped one (0-ply duel, 95% CI above zero).

    python scripts/ship_model.py runs/tapa__main__1__.../best.pt checkpoints/tapa.pt --games 10000

The replaced model is kept as checkpoints/generations/<variant>-g<N>.pt (network only); the duel
record goes to --out (default docs/strength/<variant>/generation_duel_g<N+1>.json).

A shipped model changes what other files were measured with; the script prints what to redo:
the match equity rates (``python scripts/met_rates.py --variants <variant>``, which writes
tapa_ai/cube/result_rates.json; tests/test_met_rates.py fails until it is run), the strength report and
model card (scripts/strength.py), every docs table naming the shipped file with its old hash
(tests/test_docs_models.py lists them; docs/strength.md, *Naming the model a table was measured with*), the
variant's benchmark set (docs/benchmark.md) and the export test vectors (scripts/make_test_vectors.py).
With --rates the rates are measured at once (20,000 games of 0-ply self-play, a few minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
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
    parser.add_argument("--rates", action="store_true",
                        help="when shipped, measure the new model's match equity rates at once (scripts/met_rates.py)")
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
    if not record["promoted"]:
        return 0
    rates = [sys.executable, str(Path(__file__).with_name("met_rates.py")), "--variants", variant,
             "--workers", str(args.workers)]
    if args.shipped != f"checkpoints/{variant}.pt":
        rates += ["--checkpoints", str(Path(args.shipped).parent)]
    print(f"""
{args.shipped} is now generation {record['generation']}. Measured with the replaced model, to redo:
  - the match equity rates (tapa_ai/cube/result_rates.json; tests/test_met_rates.py fails until then):
      python scripts/met_rates.py --variants {variant}{'' if args.rates else '    (or ship with --rates)'}
    then the rates and tables of docs/cube.md (python scripts/met_rates.py --markdown);
  - the strength report and model card: python scripts/strength.py {args.shipped} ... (docs/strength.md);
  - every docs table naming {args.shipped}: python -m pytest -q tests/test_docs_models.py lists them;
  - the shipped benchmark set (tests/test_benchmark.py fails until then; docs/benchmark.md, *The shipped sets*):
      tapa-ai benchmark build --variant {variant} ... (its command in that table), then its score and study{
          "" if variant != "backgammon" else
          ", and its reroll by gnubg (backgammon-gnubg0.jsonl.gz: tapa-ai benchmark reroll --set backgammon ...)"};
  - the export test vectors (tests/test_export.py skips its check of them until then):
      python scripts/make_test_vectors.py""")
    if args.rates:
        return subprocess.call(rates)
    return 0


if __name__ == "__main__":
    sys.exit(main())
