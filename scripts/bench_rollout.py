"""Rollout speed: the shipped backgammon net at 0-ply against GNU Backgammon 0-ply, same games, same positions.

    python scripts/bench_rollout.py                       # 20 positions x 144 games, one process each
    python scripts/bench_rollout.py --positions 10 --games 72 --json

Ours: ``tapa_ai.arena.rollout.rollout_position`` (no luck adjustment, so the
games are plain playouts as gnubg's are; first roll rotated, which costs
nothing) with ``--bot`` (default ``net:checkpoints/backgammon.pt``), in one
worker process with one move-generator thread unless ``--workers`` /
``--threads`` say more. gnubg: ``gnubg_nn.bestmove`` at 0-ply in a loop,
playing both sides of the same number of games from each of the same
positions to the end (one process). Both run in this one invocation, ours
first; the ratio is printed last (``--json``: one JSON object as the last line).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _gnubg_board(position):
    """[player not on roll, player on roll], 25 slots each (points 1..24 of that player, then its bar)."""
    mover = position.turn
    board = [[0] * 25, [0] * 25]
    for index, stack in enumerate(position.points):
        for side in set(stack):
            row = 1 if side == mover else 0
            point = index + 1 if side == "X" else 24 - index
            board[row][point - 1] += stack.count(side)
    board[1][24] = position.bar[0 if mover == "X" else 1]
    board[0][24] = position.bar[1 if mover == "X" else 0]
    return board


def gnubg_games(gnubg, board, games: int, rng: random.Random) -> int:
    """Play ``games`` from ``board`` with gnubg 0-ply for both sides; returns the decisions made."""
    decisions = 0
    for _ in range(games):
        current = [list(board[0]), list(board[1])]
        while True:
            _, key = gnubg.bestmove(current, rng.randint(1, 6), rng.randint(1, 6), n=0, b=1)
            decisions += 1
            after = gnubg.boardfromkey(key)
            if sum(after[0]) == 0:
                break
            current = [list(after[0]), list(after[1])]
    return decisions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=20, help="positions drawn from playouts (default 20)")
    parser.add_argument("--games", type=int, default=144, help="games per position (default 144)")
    parser.add_argument("--bot", default="net:checkpoints/backgammon.pt")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="move-generator and evaluator threads (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    for name in ("TAPA_MOVEGEN_THREADS", "TAPA_EVAL_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[name] = str(args.threads)

    import numpy as np

    from tapa_ai.arena.rollout import RolloutSettings, rollout_position
    from tapa_ai.movegen.random_positions import playout_positions

    batch = playout_positions("backgammon", args.positions, np.random.default_rng(args.seed), "contact", games=32)
    positions = [batch.position(k) for k in range(len(batch))]
    settings = RolloutSettings(games=args.games, luck=False, seed=args.seed)
    rollout_position(positions[0], args.bot, RolloutSettings(games=36, luck=False), progress=False)  # compile
    start = time.perf_counter()
    plies = 0.0
    for position in positions:
        result = rollout_position(position, args.bot, settings, workers=args.workers, progress=False)
        plies += result.stats[0].mean_plies * result.stats[0].games
    ours_seconds = time.perf_counter() - start
    games = settings.total_games * len(positions)
    report = {"positions": len(positions), "games": games, "bot": args.bot, "workers": args.workers,
              "threads": args.threads,
              "ours": {"seconds": ours_seconds, "games_per_s": games / ours_seconds,
                       "decisions_per_s": plies / ours_seconds}}
    print(f"ours  {args.bot}: {games} games in {ours_seconds:.1f} s = {games / ours_seconds:.1f} games/s "
          f"({plies / ours_seconds:,.0f} decisions/s)", flush=True)
    try:
        import gnubg_nn
    except ImportError:
        print("gnubg: gnubg-nn is not installed (pip install gnubg-nn): no anchor")
    else:
        rng = random.Random(args.seed)
        start = time.perf_counter()
        decisions = sum(gnubg_games(gnubg_nn, _gnubg_board(position), settings.total_games, rng)
                        for position in positions)
        seconds = time.perf_counter() - start
        report["gnubg"] = {"seconds": seconds, "games_per_s": games / seconds, "decisions_per_s": decisions / seconds}
        report["ratio_games_per_s"] = report["ours"]["games_per_s"] / report["gnubg"]["games_per_s"]
        print(f"gnubg 0-ply: {games} games in {seconds:.1f} s = {games / seconds:.1f} games/s "
              f"({decisions / seconds:,.0f} decisions/s)")
        print(f"ratio (games/s): {report['ratio_games_per_s']:.2f}x")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
