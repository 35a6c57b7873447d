"""Self-play throughput with learning per variant, GNU Backgammon's 0-ply self-play beside it.

    python scripts/bench_selfplay.py                          # 20 s per variant, then gnubg
    python scripts/bench_selfplay.py --seconds 5 --json       # last line: one JSON object
    python scripts/bench_selfplay.py --init shipped --rounds 3   # three rounds back to back, medians at the end
    python scripts/bench_selfplay.py --parallel-games 64 128 256 512 --variants tapa
    python scripts/bench_selfplay.py --profile /tmp/tapa.prof --variants tapa
    python scripts/bench_selfplay.py --variants tapa --init shipped   # from checkpoints/tapa.pt's trained weights
    python scripts/bench_selfplay.py --evaluator             # ns per afterstate: torch path vs fast kernel
    python scripts/bench_selfplay.py --evaluator --hidden 256 128 --encoding-version 2   # a deeper network
    python scripts/bench_selfplay.py --evaluator --variants tapa --init shipped   # the shipped (trained) network

Ours: the real trainer playing and learning on both cores, with each variant's
training config, the one its shipped model is trained with
(``configs/<variant>.toml``: network, encoding, learning method, parallel
games; ``--config`` for another), evaluation and checkpoints pushed out of
the timed window (``tapa_ai/training/throughput.py``).
gnubg: ``gnubg_nn.bestmove`` at 0-ply in a loop (``--gnubg-processes`` loops
side by side); skipped with a message when ``gnubg-nn`` is not installed.
With ``--json`` the last line is ``{"<variant>": {"decisions_per_s": ...,
"games_per_s": ..., "network": "1 x 128 relu", "parallel_games": 128}, ...,
"gnubg": {"decisions_per_s": ..., "games_per_s": ...}}`` (with several ``--parallel-games``,
the variants' entries are of the last one).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.config import ConfigError  # noqa: E402
from tapa_ai.net.checkpoint import CheckpointError  # noqa: E402
from tapa_ai.net.encoding import ENCODING_VERSIONS  # noqa: E402
from tapa_ai.rules.options import REGISTRY  # noqa: E402
from tapa_ai.training.throughput import (  # noqa: E402
    evaluator_costs, gnubg_available, gnubg_throughput, selfplay_throughput,
)

VARIANTS = tuple(name for name in REGISTRY if name != "portes")
"""Every variant with a training config of its own (portes trains as backgammon)."""
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "checkpoints"


def init_path(init, variant: str):
    """The checkpoint of ``--init`` for ``variant``: ``shipped`` is checkpoints/<variant>.pt; None is none."""
    return SHIPPED_DIR / f"{variant}.pt" if init == "shipped" else init


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="timed seconds per measurement")
    parser.add_argument("--warmup", type=float, default=2.0, help="untimed seconds of play before each measurement")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--parallel-games", type=int, nargs="+", default=[None],
                        help="parallel self-play games (default: the config's)")
    parser.add_argument("--config", metavar="TOML", help="bench this config instead of configs/<variant>.toml")
    parser.add_argument("--gnubg-processes", type=int, default=1, help="gnubg loops side by side (1 = the anchor; 0 = no gnubg)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="config override for our self-play (repeatable)")
    parser.add_argument("--profile", metavar="PATH", help="write a cProfile of the (last) timed window here")
    parser.add_argument("--evaluator", action="store_true",
                        help="only time the evaluation of afterstates (torch path vs fast kernel) per variant")
    parser.add_argument("--hidden", type=int, nargs="+", default=[128],
                        help="with --evaluator: the hidden widths of the timed network (e.g. 256 128)")
    parser.add_argument("--encoding-version", type=int, default=1, choices=ENCODING_VERSIONS,
                        help="with --evaluator: the encoding version of the timed network")
    parser.add_argument("--init", metavar="CHECKPOINT",
                        help="start our self-play from this checkpoint's network instead of random weights "
                             "('shipped': checkpoints/<variant>.pt); the architecture must be the config's")
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat the measurement (ours, then gnubg) this many times; medians at the end")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: must be at least 1")

    if args.evaluator:
        for variant in args.variants:
            costs = evaluator_costs(variant, hidden=args.hidden, encoding_version=args.encoding_version,
                                    init=init_path(args.init, variant))
            batched = (f"   batched products 1 thread {costs['batched_1_thread']:5.0f}"
                       if "batched_1_thread" in costs else "")
            print(f"{variant:<11} {costs['afterstates']:7.0f} afterstates, ns each: "
                  f"encode + torch (1 thread) {costs['torch_1_thread']:6.0f}   fast kernel 1 thread "
                  f"{costs['fast_1_thread']:5.0f}   2 threads {costs['fast_2_threads']:5.0f}{batched}", flush=True)
        return 0

    rounds: list[dict] = []
    for round_number in range(args.rounds):
        if args.rounds > 1:
            print(f"round {round_number + 1} of {args.rounds}", flush=True)
        summary: dict = {}
        for variant in args.variants:
            for games in args.parallel_games:
                result = selfplay_throughput(variant, args.seconds, games, args.warmup, args.set, args.profile,
                                             args.config, init_path(args.init, variant))
                print(f"{variant:<11} {result.network:<16} parallel_games={result.parallel_games:<4} "
                      f"{result.decisions_per_s:9,.0f} decisions/s "
                      f"{result.games_per_s:8.1f} games/s  ({result.decisions} decisions, {result.games} games "
                      f"in {result.seconds:.1f} s)", flush=True)
                summary[variant] = result.to_json()
        if args.gnubg_processes < 0:
            parser.error("--gnubg-processes must be 0 (no gnubg) or more")
        if args.gnubg_processes == 0:
            print("--gnubg-processes 0: no gnubg comparison")
        elif gnubg_available():
            result = gnubg_throughput(args.seconds, args.gnubg_processes)
            print(f"{'gnubg 0-ply':<11} processes={args.gnubg_processes:<6} {result.decisions_per_s:9,.0f} "
                  f"decisions/s {result.games_per_s:8.1f} games/s  ({result.decisions} decisions, "
                  f"{result.games} games)", flush=True)
            summary["gnubg"] = result.to_json()
            for variant in args.variants:
                ratio = summary[variant]["decisions_per_s"] / summary["gnubg"]["decisions_per_s"]
                summary[variant]["ratio_to_gnubg"] = round(ratio, 3)
                print(f"ratio {variant}/gnubg decisions/s: {ratio:.2f}")
        else:
            print("gnubg-nn not installed: no gnubg comparison")
        rounds.append(summary)
    summary = rounds[-1]
    if args.rounds > 1:
        # This machine's speed drifts from minute to minute: each round times ours and gnubg back to back,
        # and the medians over the rounds are the figures to quote.
        summary = {name: {key: float(np.median([r[name][key] for r in rounds]))
                          for key in rounds[0][name] if isinstance(rounds[0][name][key], (int, float))}
                   | {key: value for key, value in rounds[0][name].items() if not isinstance(value, (int, float))}
                   for name in rounds[0]}
        for variant in args.variants:
            ratios = [r[variant]["ratio_to_gnubg"] for r in rounds if "ratio_to_gnubg" in r[variant]]
            if ratios:
                print(f"median over {args.rounds} rounds: {variant} {summary[variant]['decisions_per_s']:,.0f} "
                      f"decisions/s, ratio to gnubg {np.median(ratios):.2f} (rounds: "
                      f"{', '.join(f'{ratio:.2f}' for ratio in ratios)})")
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ConfigError, CheckpointError, ValueError) as error:
        # a bad --config, --set or --init: one line, as tapa-ai train says it
        print(f"bench_selfplay: {error}", file=sys.stderr)
        sys.exit(2)
