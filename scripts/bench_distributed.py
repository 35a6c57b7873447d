"""Distributed training measurements: throughput by worker count, the learner's capacity, learning at equal games.

    python scripts/bench_distributed.py throughput --seconds 30             # single process vs 1 and 2 actor processes
    python scripts/bench_distributed.py throughput --ray-address auto      # ... then as Ray actors on a running cluster
    python scripts/bench_distributed.py learner --seconds 20 --batch-sizes 256 1024 4096   # what the learner absorbs
    python scripts/bench_distributed.py search checkpoints/tapa.pt --workers 0 1 2     # expert iteration: targets/s
    python scripts/bench_distributed.py curves --marks 1000 3000 10000 --arms single w2 w2:p16 w2:p64
    python scripts/bench_distributed.py curves --arms single ray:w2 --marks 3000 10000 30000   # Ray vs one process

``throughput``: the real trainers on the benchmark config of
``scripts/bench_selfplay.py`` (259 x 128 network, 256 parallel games per
self-play batch, learning included), one after the other in one invocation:
the single-process trainer, then the actor–learner layout with each
``--workers`` count as actor processes, then (with ``--ray-address``) as Ray actors.
Rates count games and decisions as the learner takes them, after a warm-up
that starts once the first batch has arrived.

``search``: expert iteration (``learning.targets = "search"``, 2-ply labels)
from a checkpoint with its variant's training config: the single-process
trainer (``--workers 0``: it labels in its learner), then the learner with N
actor processes (they label before they send), then (``--ray-address``) Ray
actors; search targets per second as the learner adds them, CPU per target
of actors and learner, the learner's busy share; then the learner alone
(``--learner-seconds``): the targets/s one learner core absorbs.

``curves``: each arm trains from scratch with ``configs/quick.toml`` (and
``--set``) to the last mark, keeping the checkpoint at each mark; then every
snapshot plays ``--opponents`` at 0-ply over ``2 * --pairs`` games with paired
dice. An arm is ``single`` (the single-process trainer) or
``[ray:]w<N>[:p<K>]``: N actors (Ray actors on ``--ray-address``, default
``auto``, when prefixed ``ray:``), publishing the weights every K updates.

Every command prints the load average before and after; ``--json PATH`` writes the results.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"


def parse_arm(arm: str) -> dict:
    """``single`` or ``[ray:]w<N>[:p<K>]`` as {"workers", "ray", "publish_every"}."""
    if arm == "single":
        return {"workers": 1, "ray": False, "publish_every": 1}
    parts = arm.split(":")
    ray = parts[0] == "ray"
    if ray:
        parts = parts[1:]
    spec = {"workers": None, "ray": ray, "publish_every": 1}
    for part in parts:
        if part.startswith("w") and part[1:].isdigit():
            spec["workers"] = int(part[1:])
        elif part.startswith("p") and part[1:].isdigit():
            spec["publish_every"] = int(part[1:])
        else:
            raise SystemExit(f"arm {arm!r}: want 'single' or '[ray:]w<N>[:p<K>]', e.g. w2:p16")
    if spec["workers"] is None:
        raise SystemExit(f"arm {arm!r}: give the workers, e.g. w2")
    return spec


def cmd_throughput(args) -> dict:
    from tapa_ai.training.throughput import distributed_throughput, selfplay_throughput

    results: dict = {"load_before": os.getloadavg()}
    print(load(), flush=True)
    for variant in args.variants:
        single = selfplay_throughput(variant, args.seconds, args.parallel_games, args.warmup, args.set)
        cpu_ms = single.cpu_seconds / max(single.games, 1) * 1e3
        print(f"{variant:<10} single process      {single.decisions_per_s:9,.0f} decisions/s {single.games_per_s:7.1f} "
              f"games/s  ({single.games} games in {single.seconds:.1f} s; {cpu_ms:.2f} CPU-ms per game)", flush=True)
        rows = {"single": {**single.to_json(), "games": single.games, "seconds": round(single.seconds, 2),
                           "cpu_ms_per_game": round(cpu_ms, 3)}}
        arms = [(workers, None) for workers in args.workers]
        arms += [(workers, args.ray_address) for workers in args.workers] if args.ray_address else []
        for workers, ray_address in arms:
            result = distributed_throughput(variant, args.seconds, workers, args.parallel_games, args.warmup,
                                            args.set, ray_address=ray_address)
            label = f"{'ray' if ray_address else 'processes'} workers={workers}"
            print(f"{variant:<10} {label:<19} {result.decisions_per_s:9,.0f} decisions/s {result.games_per_s:7.1f} "
                  f"games/s  x{result.games_per_s / max(single.games_per_s, 1e-9):.2f}; per game: actors "
                  f"{result.actor_cpu_ms_per_game:.2f} CPU-ms, learner {result.learner_cpu_ms_per_game:.2f} CPU-ms; "
                  f"{result.updates_per_s:.1f} updates/s, staleness mean {result.mean_staleness:.2f} max "
                  f"{result.max_staleness}", flush=True)
            rows[label] = result.to_json()
        results[variant] = rows
    results["load_after"] = os.getloadavg()
    print(load())
    return results


def cmd_learner(args) -> dict:
    from tapa_ai.training.throughput import learner_capacity

    results: dict = {"load_before": os.getloadavg()}
    print(load(), flush=True)
    for variant in args.variants:
        for games, batch_size in [(g, b) for g in args.games_per_update for b in args.batch_sizes]:
            row = learner_capacity(variant, args.seconds, games_per_update=games,
                                   overrides=[*args.set, f"learning.batch_size={batch_size}"])
            print(f"{variant:<10} {games:4d} games/update: {row['games_per_s']:8.1f} games/s "
                  f"{row['positions_per_s']:9,.0f} positions/s {row['updates_per_s']:7.1f} updates/s "
                  f"{row['minibatch_steps_per_s']:6.1f} steps/s of {row['batch_size']} "
                  f"({row['positions_per_game']:.1f} positions/game, {row['cpu_ms_per_game']:.2f} CPU-ms/game)",
                  flush=True)
            results[f"{variant}/{games}/{batch_size}"] = row
    results["load_after"] = os.getloadavg()
    print(load())
    return results


def cmd_search(args) -> dict:
    from tapa_ai.training.search_bench import search_learner_capacity, search_throughput

    results: dict = {"load_before": os.getloadavg(), "checkpoint": args.checkpoint, "overrides": args.set}
    print(load(), flush=True)
    arms = [(workers, None) for workers in args.workers]
    arms += [(workers, args.ray_address) for workers in args.workers if workers] if args.ray_address else []
    base = None
    for workers, ray_address in arms:
        row = search_throughput(args.checkpoint, args.seconds, workers, args.warmup, args.set, ray_address)
        label = "single process" if workers == 0 else f"{'ray' if ray_address else 'processes'} workers={workers}"
        if workers == 1 and not ray_address:
            base = row.targets_per_s
        scale = f" x{row.targets_per_s / base:.2f} of 1 worker" if base and workers > 1 and not ray_address else ""
        print(f"{label:<20} {row.targets_per_s:7.1f} targets/s{scale} ({row.targets} in {row.seconds:.0f} s, "
              f"{row.games_per_s:.2f} games/s); per target: actors {row.actor_cpu_ms_per_target:.1f} CPU-ms "
              f"(search {row.label_cpu_ms_per_target:.1f}), learner {row.learner_cpu_ms_per_target:.2f} CPU-ms; "
              f"learner busy {row.learner_busy_share:.1%}; staleness {row.mean_staleness:.2f}", flush=True)
        results[label] = row.to_json()
    if args.learner_seconds:
        capacity = search_learner_capacity(args.checkpoint, args.learner_seconds, overrides=args.set)
        print(f"learner alone: {capacity['targets_per_s']:,.0f} targets/s on one core "
              f"({capacity['minibatch_steps_per_s']:.0f} minibatch steps/s of {capacity['batch_size']}, "
              f"replay_ratio {capacity['replay_ratio']:g}, {capacity['cpu_ms_per_target']:.3f} CPU-ms per target, "
              f"{capacity['message_bytes']:,} bytes a batch of {capacity['labels_per_update']} labels)", flush=True)
        results["learner_alone"] = capacity
    results["load_after"] = os.getloadavg()
    print(load())
    return results


def cmd_curves(args) -> dict:
    from tapa_ai.training.curve import evaluate_snapshots, train_to_games

    results: dict = {"load_before": os.getloadavg(), "marks": args.marks, "pairs": args.pairs, "arms": {}}
    print(load(), flush=True)
    for arm in args.arms:
        spec = parse_arm(arm)
        begin = time.perf_counter()
        overrides = [*args.set, f"distributed.publish_every={spec['publish_every']}"]
        trainer, rows = train_to_games(args.config, overrides, args.marks, workers=spec["workers"],
                                       ray_address=(args.ray_address or "auto") if spec["ray"] else None,
                                       progress=not args.quiet)
        wall = time.perf_counter() - begin
        staleness = getattr(trainer, "staleness_seen", None) or [0]
        print(f"{arm}: {trainer.games} games in {wall:.0f} s ({trainer.games / wall:.1f} games/s with start-up), "
              f"staleness mean {sum(staleness) / len(staleness):.2f} max {max(staleness)}; run {trainer.run_dir}",
              flush=True)
        rows = evaluate_snapshots(rows, args.pairs, progress=not args.quiet, opponents=args.opponents)
        for row in rows:
            cells = "  ".join(f"vs {name} {row[name]['ppg']:+.3f} [{row[name]['ppg_ci95'][0]:+.3f}, "
                              f"{row[name]['ppg_ci95'][1]:+.3f}] win {row[name]['win_rate']:.1%}"
                              for name in args.opponents)
            print(f"  {arm:<10} {row['games_trained']:7d} games  {cells}", flush=True)
        results["arms"][arm] = {
            "workers": spec["workers"], "ray": spec["ray"], "publish_every": spec["publish_every"],
            "games": trainer.games, "wall_seconds": wall, "cpu_seconds": trainer.cpu_seconds,
            "staleness_mean": sum(staleness) / len(staleness), "staleness_max": max(staleness),
            "rows": [{"mark": row["mark"], "games_trained": row["games_trained"],
                      **{name: row[name] for name in args.opponents}} for row in rows],
        }
    results["load_after"] = os.getloadavg()
    print(load())
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    throughput = sub.add_parser("throughput", help="games/s and decisions/s: single process vs N workers")
    throughput.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    throughput.add_argument("--seconds", type=float, default=30.0, help="timed seconds per measurement")
    throughput.add_argument("--warmup", type=float, default=3.0, help="untimed seconds first")
    throughput.add_argument("--parallel-games", type=int, default=256, help="games side by side per self-play batch")
    throughput.add_argument("--variants", nargs="+", default=["tapa"])
    throughput.add_argument("--ray-address", help="also measure Ray actors on this cluster (after the processes)")
    learner = sub.add_parser("learner", help="the learner alone: games/s, positions/s and updates/s it absorbs")
    learner.add_argument("--seconds", type=float, default=20.0)
    learner.add_argument("--games-per-update", type=int, nargs="+", default=[32])
    learner.add_argument("--batch-sizes", type=int, nargs="+", default=[256], help="learning.batch_size values")
    learner.add_argument("--variants", nargs="+", default=["tapa"])
    search = sub.add_parser("search", help="expert iteration: search targets/s, single process vs N actors")
    search.add_argument("checkpoint", help="the network that labels and learns (its variant's training config)")
    search.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2], help="0: the single-process trainer")
    search.add_argument("--seconds", type=float, default=60.0, help="timed seconds per measurement")
    search.add_argument("--warmup", type=float, default=5.0, help="untimed seconds after the first labels")
    search.add_argument("--ray-address", help="also measure Ray actors on this cluster (after the processes)")
    search.add_argument("--learner-seconds", type=float, default=15.0,
                        help="then the learner alone for this long (0: not)")
    curves = sub.add_parser("curves", help="strength at equal games: single process, workers, publish intervals")
    curves.add_argument("--arms", nargs="+", default=["single", "w2", "w2:p16", "w2:p64"])
    curves.add_argument("--marks", type=int, nargs="+", default=[1000, 3000, 10000], help="games of each snapshot")
    curves.add_argument("--config", default="configs/quick.toml")
    curves.add_argument("--pairs", type=int, default=500, help="paired deals per duel (2 games each)")
    curves.add_argument("--opponents", nargs="+", default=["pipcount", "heuristic"])
    curves.add_argument("--ray-address", help="cluster of the ray: arms (default auto)")
    curves.add_argument("--quiet", action="store_true")
    for command in (throughput, learner, search, curves):
        command.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                             help="config override (repeatable)")
        command.add_argument("--json", metavar="PATH", help="write the results here")
    args = parser.parse_args(argv)
    results = {"throughput": cmd_throughput, "learner": cmd_learner, "search": cmd_search,
               "curves": cmd_curves}[args.command](args)
    results["command"] = "python scripts/bench_distributed.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1, default=float)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
