"""Speed of the fast move generator per variant and batch size, the reference beside it, gnubg and OpenSpiel.

    python scripts/bench_movegen.py                 # table
    python scripts/bench_movegen.py --json          # table, then one JSON line (the last line)
    python scripts/bench_movegen.py --threads 1 --seconds 0.5 --json
    python scripts/bench_movegen.py --variants plakoto,fevga,narde --batch-sizes 1024 --rounds 5

Besides the table, the running games (fevga, narde, gulbara) are timed against plakoto side by side at batch
1024: ``--rounds`` rounds, each timing plakoto and each running game in turn on their pools, so the machine's
drift falls on all alike; the best round of each and the ratios to plakoto are printed.

Positions are drawn from uniform random playouts of each variant (seeded),
with uniform random dice; every batch size runs over the same positions.
For backgammon the same positions and dice go, one call each, to GNU
Backgammon's C generator (``gnubg_nn.moves``) when ``gnubg-nn`` is installed.
OpenSpiel cannot be set to an arbitrary position from Python, so its
``legal_actions`` is timed on states of its own random backgammon games
(``open-spiel`` package), one call per state. Peak memory is the process's
peak resident set size after each measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.movegen import PositionBatch, generate  # noqa: E402
from tapa_ai.movegen.generate import decision_plan, default_threads  # noqa: E402
from tapa_ai.movegen.random_positions import playout_positions, random_dice  # noqa: E402
from tapa_ai.rules.options import REGISTRY, same_board_game  # noqa: E402
from tapa_ai.rules.reference import legal_moves  # noqa: E402

VARIANTS = tuple(name for index, (name, entry) in enumerate(REGISTRY.items())
                 if not any(same_board_game(other.rules, entry.rules) for other in list(REGISTRY.values())[:index]))
"""Every board game of the registry once (portes plays backgammon's)."""
BATCH_SIZES = (1, 64, 1024, 8192)
RUNNING_BASELINE = "plakoto"
RUNNING_GAMES = tuple(name for name in VARIANTS if REGISTRY[name].rules.parallel)


@dataclass
class Args:
    positions: int = 16384
    """Positions per variant in the pool that every batch size runs over."""
    seconds: float = 1.0
    """Minimum time per measurement (the pool is repeated as needed)."""
    reference_positions: int = 300
    """Positions timed with the reference generator (it takes milliseconds each)."""
    threads: int = 0
    """Threads of the fast generator (0: ``TAPA_MOVEGEN_THREADS`` or the CPU count)."""
    seed: int = 0
    """Seed of positions and dice."""
    json: bool = False
    """Print one JSON object as the last line."""
    numpy_prototype: bool = False
    """Also time the pure-numpy prototype (``scripts/movegen_numpy_prototype.py``) against the kernel on backgammon."""
    profile: bool = False
    """Also print where the kernel's time goes: CPU time per position by kind of roll, one thread."""
    variants: str = ",".join(VARIANTS)
    """Comma-separated variants to time (the running-games comparison needs plakoto and fevga or narde)."""
    batch_sizes: str = ",".join(str(size) for size in BATCH_SIZES)
    """Comma-separated batch sizes of the table."""
    rounds: int = 5
    """Interleaved rounds of the running games against plakoto at batch 1024 (0: skip the comparison)."""


def parse_args(argv=None) -> Args:
    defaults = Args()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, default=defaults.positions)
    parser.add_argument("--seconds", type=float, default=defaults.seconds)
    parser.add_argument("--reference-positions", type=int, default=defaults.reference_positions)
    parser.add_argument("--threads", type=int, default=defaults.threads)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", action="store_true", help="CPU time per position by kind of roll")
    parser.add_argument("--numpy-prototype", action="store_true", help="time the pure-numpy prototype too")
    parser.add_argument("--variants", default=defaults.variants, help="comma-separated variants")
    parser.add_argument("--batch-sizes", default=defaults.batch_sizes, help="comma-separated batch sizes")
    parser.add_argument("--rounds", type=int, default=defaults.rounds,
                        help="interleaved rounds of fevga and narde against plakoto at batch 1024 (0: none)")
    return Args(**vars(parser.parse_args(argv)))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def time_fast(pool: PositionBatch, dice: np.ndarray, batch_size: int, seconds: float, threads: int):
    """(positions/s, afterstates/s) of ``generate`` on consecutive slices of the pool."""
    slices = [(start, min(start + batch_size, len(pool))) for start in range(0, len(pool), batch_size)]
    batches = [(pool.take(slice(a, b)), dice[a:b]) for a, b in slices if b - a == batch_size] or [(pool, dice)]
    generate(*batches[0], threads=threads)  # compile or load the kernel, make the thread buffers
    positions = afterstates = 0
    started = time.perf_counter()
    while True:
        for batch, roll in batches:
            afterstates += len(generate(batch, roll, threads=threads))
            positions += len(batch)
            elapsed = time.perf_counter() - started
            if elapsed >= seconds and positions >= 4 * batch_size:
                return positions / elapsed, afterstates / elapsed


def time_reference(pool: PositionBatch, dice: np.ndarray, count: int):
    positions = pool.take(slice(0, count)).to_positions()
    rolls = [(int(a), int(b)) for a, b in dice[:count]]
    afterstates = 0
    started = time.perf_counter()
    for position, roll in zip(positions, rolls):
        # A position inside a cascade plays its stage with no roll (docs/rules.md 10.2), as generate() does.
        afterstates += len(legal_moves(position, None if position.cascade is not None else roll))
    elapsed = time.perf_counter() - started
    return len(positions) / elapsed, afterstates / elapsed


def gnubg_boards(pool: PositionBatch) -> list:
    """Boards in gnubg's layout: [opponent's 25, mover's 25], each from its own 1-point up, bar last."""
    top = pool.board.astype(np.int64)
    mover = np.concatenate([np.clip(top, 0, None), pool.bar[:, :1]], axis=1)
    opponent = np.concatenate([np.clip(-top[:, ::-1], 0, None), pool.bar[:, 1:]], axis=1)
    return [[o, m] for o, m in zip(opponent.tolist(), mover.tolist())]


def time_gnubg(pool: PositionBatch, dice: np.ndarray, seconds: float):
    """gnubg positions/s on the same positions, and how often its move count equals ours."""
    try:
        import gnubg_nn
    except ImportError:
        return None
    boards = gnubg_boards(pool)
    rolls = [(int(a), int(b)) for a, b in dice]
    ours = np.diff(generate(pool, dice).offsets)
    same = sum(max(len(gnubg_nn.moves(b, d1, d2)), 1) == n for b, (d1, d2), n in zip(boards, rolls, ours))
    positions = 0
    started = time.perf_counter()
    while True:
        for board, (d1, d2) in zip(boards, rolls):
            gnubg_nn.moves(board, d1, d2)
        positions += len(boards)
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return {"positions_per_s": positions / elapsed, "same_move_count": same / len(boards),
                    "positions": len(boards)}


def time_openspiel(count: int, seed: int):
    """OpenSpiel backgammon ``legal_actions`` per second, on states of its own random games."""
    try:
        import pyspiel
    except ImportError:
        return None
    rng = np.random.default_rng(seed)
    game = pyspiel.load_game("backgammon")
    states = []
    while len(states) < count:
        state = game.new_initial_state()
        while not state.is_terminal() and len(states) < count:
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probabilities)))
            else:
                states.append(state.clone())
                actions = state.legal_actions()
                state.apply_action(int(actions[rng.integers(len(actions))]))
    started = time.perf_counter()
    for state in states:
        state.legal_actions()
    elapsed = time.perf_counter() - started
    return {"positions_per_s": len(states) / elapsed, "positions": len(states),
            "note": "states of OpenSpiel's own random games (it cannot load our positions)"}


def profile_kernel(variant: str, pool: PositionBatch, dice: np.ndarray, repeats: int = 5) -> None:
    """Print the kernel's CPU time per position (best of ``repeats``, one thread) by kind of roll.

    CPU time (``time.process_time``), not wall time, so other jobs on the
    machine disturb it less. Kinds: two different dice; doubles searched in
    canonical order; doubles searched in every order (a mother can be pinned
    during the turn).
    """
    from tapa_ai.movegen import kernel

    doubles = dice[:, 0] == dice[:, 1]
    opponent_alone_on_one = (np.clip(-pool.board[:, 0], 0, None) + (pool.pinned[:, 0] == -1)) == 1
    # (the mothers' every-order search; the running games' own is not told apart here)
    every_order = doubles & opponent_alone_on_one & (variant in ("tapa", "plakoto"))
    kinds = {"all rolls": np.ones(len(pool), dtype=bool), "two dice": ~doubles,
             "doubles, canonical": doubles & ~every_order, "doubles, every order": every_order}
    total = None
    for name, mask in kinds.items():
        index = np.flatnonzero(mask)
        if not index.size:
            continue
        part = pool.take(index)
        arrays = (part.board, part.pinned, part.off, part.bar, part.rules_id, part.kernel_rule_table(),
                  decision_plan(part, dice[index]))
        scratch, outputs = kernel.make_scratch(), kernel.make_outputs(64 * len(index))
        best = float("inf")
        for _ in range(repeats):
            started = time.process_time()
            _, _, afterstates, _ = kernel.generate_range(*arrays, 0, len(index), scratch, outputs)
            best = min(best, time.process_time() - started)
        total = total or best
        print(f"  profile {variant:>10} {name:<22} {index.size:>6} positions ({100 * index.size / len(pool):5.1f}%): "
              f"{1e6 * best / index.size:6.2f} us CPU each, {afterstates / index.size:6.1f} afterstates each, "
              f"{100 * best / total:5.1f}% of the time")


def time_numpy_prototype(pool: PositionBatch, dice: np.ndarray, seconds: float) -> dict:
    """Positions/s of the numpy prototype and of the kernel (one thread), batches of 1024 and 8192."""
    from movegen_numpy_prototype import generate_numpy  # beside this script

    results = {}
    for batch_size in (1024, 8192):
        part, roll = pool.take(slice(0, batch_size)), dice[:batch_size]
        for name, run in (("numpy", lambda: generate_numpy(part, roll)),
                          ("numba, 1 thread", lambda: generate(part, roll, threads=1))):
            run()
            calls = 0
            started = time.perf_counter()
            while calls < 2 or time.perf_counter() - started < seconds:
                run()
                calls += 1
            per_s = calls * batch_size / (time.perf_counter() - started)
            results[f"{name} {batch_size}"] = per_s
            print(f"  backgammon batch {batch_size:>5} {name:<16} {per_s:>12,.0f} positions/s")
    return results


def compare_running_games(pools: dict, rounds: int, seconds: float, threads: int) -> dict:
    """Positions/s at batch 1024 of plakoto and the running games, timed in turn ``rounds`` times; best of each."""
    names = [name for name in (RUNNING_BASELINE, *RUNNING_GAMES) if name in pools]
    best = {name: 0.0 for name in names}
    for _ in range(rounds):
        for name in names:
            per_s, _ = time_fast(*pools[name], 1024, seconds, threads)
            best[name] = max(best[name], per_s)
    result = {"rounds": rounds, "batch": 1024, "positions_per_s": best}
    if RUNNING_BASELINE in best:
        result["ratio_to_" + RUNNING_BASELINE] = {name: best[name] / best[RUNNING_BASELINE]
                                                  for name in RUNNING_GAMES if name in best}
    return result


def main(argv=None) -> int:
    args = parse_args(argv)
    threads = args.threads or default_threads()
    variants = [name for name in args.variants.split(",") if name]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; known: {list(VARIANTS)}")
    batch_sizes = [int(size) for size in args.batch_sizes.split(",") if size]
    print(f"fast generator: {threads} thread(s); CPUs {os.cpu_count()}; pool {args.positions} positions per variant "
          f"from uniform random playouts (seed {args.seed}); >= {args.seconds} s per measurement; "
          f"load average {os.getloadavg()[0]:.2f}")
    report: dict = {"load_average_start": os.getloadavg()[0]}
    header = f"{'variant':>10} {'batch':>6} {'positions/s':>13} {'afterstates/s':>14} {'peak RSS MB':>12}"
    print(header)
    pools = {}
    for variant in variants:
        rng = np.random.default_rng([args.seed, VARIANTS.index(variant)])
        pool = playout_positions(variant, args.positions, rng, "uniform")
        dice = random_dice(len(pool), rng)
        pools[variant] = (pool, dice)
        report[variant] = {}
        for batch_size in batch_sizes:
            per_s, after_per_s = time_fast(pool, dice, batch_size, args.seconds, threads)
            report[variant][str(batch_size)] = {"positions_per_s": per_s, "afterstates_per_s": after_per_s,
                                                "peak_rss_mb": peak_rss_mb()}
            print(f"{variant:>10} {batch_size:>6} {per_s:>13,.0f} {after_per_s:>14,.0f} {peak_rss_mb():>12.0f}")
        per_s, after_per_s = time_reference(pool, dice, args.reference_positions)
        report.setdefault("reference", {})[variant] = {"positions_per_s": per_s, "afterstates_per_s": after_per_s}
        print(f"{variant:>10} {'ref':>6} {per_s:>13,.0f} {after_per_s:>14,.0f} {peak_rss_mb():>12.0f}")
        if args.profile:
            profile_kernel(variant, pool, dice)

    if args.rounds and RUNNING_BASELINE in pools and any(name in pools for name in RUNNING_GAMES):
        running = compare_running_games(pools, args.rounds, args.seconds, threads)
        report["running_vs_plakoto"] = running
        speeds = ", ".join(f"{name} {per_s:,.0f}" for name, per_s in running["positions_per_s"].items())
        ratios = ", ".join(f"{name}/plakoto {ratio:.2f}" for name, ratio in running.get("ratio_to_plakoto", {}).items())
        print(f"running games beside plakoto, batch 1024, best of {args.rounds} interleaved rounds: {speeds} "
              f"positions/s; {ratios}")
    if "backgammon" in pools:
        compare_backgammon_programs(args, pools["backgammon"], report)
    report["threads"] = threads
    report["peak_rss_mb"] = peak_rss_mb()
    report["load_average_end"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report))
    return 0


def compare_backgammon_programs(args: Args, pool_and_dice: tuple, report: dict) -> None:
    """gnubg and OpenSpiel on backgammon (and the numpy prototype when asked), into ``report``."""
    pool, dice = pool_and_dice
    gnubg = time_gnubg(pool, dice, args.seconds)
    if gnubg is None:
        print("gnubg: not installed (pip install gnubg-nn)")
        report["gnubg"] = {"positions_per_s": None, "error": "not installed"}
    else:
        report["gnubg"] = gnubg
        ours = report["backgammon"].get("1024", {}).get("positions_per_s")
        print(f"gnubg moves(), same backgammon positions, 1 thread: {gnubg['positions_per_s']:,.0f} positions/s; "
              f"same move count as ours on {100 * gnubg['same_move_count']:.2f}%"
              + (f"; ours at batch 1024 / gnubg = {ours / gnubg['positions_per_s']:.2f}" if ours else ""))
    openspiel = time_openspiel(min(args.positions, 4000), args.seed)
    if openspiel is None:
        print("openspiel: not installed (pip install open-spiel)")
        report["openspiel"] = {"positions_per_s": None, "error": "not installed"}
    else:
        report["openspiel"] = openspiel
        print(f"OpenSpiel legal_actions, its own backgammon states: {openspiel['positions_per_s']:,.0f} positions/s")
    if args.numpy_prototype:
        report["numpy_prototype"] = time_numpy_prototype(pool, dice, args.seconds)


if __name__ == "__main__":
    sys.exit(main())
