"""Backgammon cube decisions against GNU Backgammon's (``gnubg_nn.evaluate_cube_decision``).

Positions: pre-roll positions from self-play of the backgammon net (0-ply,
sampled over whole games) and random end-game boards
(:func:`tapa_ai.movegen.random_positions.endgame_positions`). For each
position, cube state and match score, three deciders are compared with
gnubg's own decision (0-ply, its match equity table):

- ``ours``: the net's probabilities, our match model and our backgammon MET
  (what ``tapa-ai engine``'s ``cube`` command answers);
- ``ours_on_gnubg_probs``: gnubg's 0-ply probabilities through our match
  model and MET (the cube model alone);
- ``gnubg_on_our_probs``: our net's probabilities through gnubg's cube model
  (``evaluate_cube_decision(..., p=...)``; the evaluator alone).

gnubg_nn answers match play only (money raises "Not implemented for
money"), so money play is stood in for by a 25-point match at 0-0, compared
with our money (Janowski) decisions. Agreement is counted separately for
the doubler's decision (double / no double) and the receiver's (take /
pass). The **cost** of a disagreement is measured by gnubg's equities
(match-winning chance, MWC, of the side concerned): for the doubler
``max(ND, min(DT, DP))`` minus the equity of our action, for the receiver
``max(1 - DT, 1 - DP)`` minus ours.

    python scripts/cube_vs_gnubg.py --positions 400 --seed 3 --out docs/cube/gnubg_agreement.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tapa_ai.cube.decisions import CubeSituation, cube_equities  # noqa: E402
from tapa_ai.bots.gnubg import gnubg_boards  # noqa: E402
from tapa_ai.bots.spec import make_bot  # noqa: E402
from tapa_ai.cube.equity import OWNER_CENTRED, OWNER_MOVER  # noqa: E402
from tapa_ai.movegen import PositionBatch, generate  # noqa: E402
from tapa_ai.movegen.batch import concatenate  # noqa: E402
from tapa_ai.movegen.random_positions import endgame_positions, random_dice  # noqa: E402
from tapa_ai.rules import start_position, variant_rules  # noqa: E402

SCORES = [(7, 7), (3, 5), (5, 3), (25, 25)]
"""(away of the side to roll, away of the other side); 25-25 stands in for money play."""
CUBES = [(1, OWNER_CENTRED), (2, OWNER_MOVER)]


def self_play_positions(bot, count: int, rng: np.random.Generator, games: int = 200) -> PositionBatch:
    """``count`` pre-roll positions drawn from ``games`` games of the bot against itself."""
    rules = bot.net.rules
    batch = PositionBatch.from_positions([start_position(rules, "X")] * games)
    collected = []
    for turn in range(400):
        if not len(batch):
            break
        if turn > 0:  # the first turn is the opening roll: no cube decision
            collected.append(batch)
        after = generate(batch, random_dice(len(batch), rng))
        chosen = bot.choose(after, rng)
        alive = chosen[~after.game_over[chosen]]
        batch = after.positions.take(alive).flipped()
    everything = concatenate(collected)
    return everything.take(rng.choice(len(everything), size=min(count, len(everything)), replace=False))


def gnubg_decision(gnubg, key: str, away: int, opponent_away: int, cube: int, probabilities=None):
    """gnubg's (double, take, ND, DT, DP) for the side on roll of ``key`` (its board is [other, roller])."""
    gnubg.set.score(away, opponent_away)
    gnubg.set.cube(cube, b"O") if cube > 1 else gnubg.set.cube(1)
    kwargs = {"n": 0, "s": b"O", "i": 1}
    if probabilities is not None:
        kwargs["p"] = tuple(float(np.clip(v, 0.0, 1.0)) for v in probabilities)
    double, take, _too_good, nd, dt, dp = gnubg.evaluate_cube_decision(key, **kwargs)
    return bool(double), bool(take), nd, dt, dp


def five_probabilities(classes: np.ndarray) -> tuple[float, ...]:
    """gnubg's (win, win gammon+, win backgammon, lose gammon+, lose backgammon) from our 6 classes."""
    ws, wg, wb, ls, lg, lb = classes
    return (ws + wg + wb, wg + wb, wb, lg + lb, lb)


def ours_from_five(five) -> np.ndarray:
    """Our 6 classes from gnubg's 5 probabilities."""
    win, wg, wb, lg, lb = five
    return np.array([win - wg, wg - wb, wb, 1 - win - lg, lg - lb, lb])


def cost(gnubg_eq, double: bool, take: bool, reference_double: bool, reference_take: bool):
    """(doubler's cost, receiver's cost) in gnubg's MWC of our decision against gnubg's."""
    nd, dt, dp = gnubg_eq
    best = max(nd, min(dt, dp))
    ours = min(dt, dp) if double else nd
    receiver_best = max(1 - dt, 1 - dp)
    receiver_ours = 1 - dt if take else 1 - dp
    return best - ours, receiver_best - receiver_ours


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--net", default="checkpoints/backgammon.pt")
    parser.add_argument("--positions", type=int, default=400, help="positions (3/4 self-play, 1/4 end games)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", help="write the summary here as JSON")
    args = parser.parse_args(argv)

    import gnubg_nn as gnubg

    rules = variant_rules("backgammon")
    bot = make_bot(f"net:{args.net}", rules)
    rng = np.random.default_rng(args.seed)
    playing = self_play_positions(bot, args.positions - args.positions // 4, rng)
    endings = endgame_positions(rules, args.positions // 4, rng)
    positions = concatenate([playing, endings])
    sources = ["self-play"] * len(playing) + ["end game"] * len(endings)
    ours_probabilities = bot.pre_roll_distributions(positions, 0)
    boards = gnubg_boards(positions)[:, ::-1]  # [other, roller]: gnubg's board with the roller on roll
    keys = [gnubg.key_of_board(board.tolist()) for board in boards]
    gnubg_probabilities = np.array([ours_from_five(gnubg.probabilities(board.tolist(), 0)) for board in boards])
    gnubg_probabilities = np.clip(gnubg_probabilities, 0.0, None)

    rows = []
    for score in SCORES:
        for cube, owner in CUBES:
            money = score == (25, 25)
            if money:
                situation = CubeSituation.money_play(rules, np.full(len(positions), cube), owner)
            else:
                count = len(positions)
                situation = CubeSituation(rules, np.full(count, cube), np.full(count, owner, dtype=np.int8),
                                          max(score), np.full(count, score[0]), np.full(count, score[1]),
                                          np.zeros(count, dtype=bool), np.zeros(count, dtype=bool))
            ours = cube_equities(ours_probabilities, situation, bot.cube_life)
            ours_g = cube_equities(gnubg_probabilities, situation, bot.cube_life)
            for i, key in enumerate(keys):
                g_double, g_take, nd, dt, dp = gnubg_decision(gnubg, key, score[0], score[1], cube)
                mixed = gnubg_decision(gnubg, key, score[0], score[1], cube,
                                       five_probabilities(ours_probabilities[i]))
                row = {"score": list(score), "cube": cube, "owner": int(owner), "source": sources[i], "key": key,
                       "gnubg": {"double": g_double, "take": g_take, "nd": nd, "dt": dt, "dp": dp}}
                for name, double, take in (("ours", ours.double[i], ours.take[i]),
                                           ("ours_on_gnubg_probs", ours_g.double[i], ours_g.take[i]),
                                           ("gnubg_on_our_probs", mixed[0], mixed[1])):
                    double, take = bool(double), bool(take)
                    doubler_cost, receiver_cost = cost((nd, dt, dp), double, take, g_double, g_take)
                    row[name] = {"double": double, "take": take, "doubler_cost": doubler_cost,
                                 "receiver_cost": receiver_cost}
                rows.append(row)
    gnubg.set.score(0, 0)
    gnubg.set.cube(1)

    def summarize(selected, name):
        if not selected:
            return None
        double_agree = np.mean([r[name]["double"] == r["gnubg"]["double"] for r in selected])
        take_agree = np.mean([r[name]["take"] == r["gnubg"]["take"] for r in selected])
        doubler = np.array([r[name]["doubler_cost"] for r in selected])
        receiver = np.array([r[name]["receiver_cost"] for r in selected])
        wrong_d = doubler[[r[name]["double"] != r["gnubg"]["double"] for r in selected]]
        wrong_t = receiver[[r[name]["take"] != r["gnubg"]["take"] for r in selected]]
        return {"decisions": len(selected), "double_agreement": float(double_agree),
                "take_agreement": float(take_agree),
                "doubler_cost_mean_mwc": float(doubler.mean()), "receiver_cost_mean_mwc": float(receiver.mean()),
                "doubler_cost_per_disagreement_mwc": float(wrong_d.mean()) if wrong_d.size else 0.0,
                "receiver_cost_per_disagreement_mwc": float(wrong_t.mean()) if wrong_t.size else 0.0}

    def window(r):
        """gnubg or we think the doubler's side is at or past the doubling point, or the take is a pass."""
        return (r["gnubg"]["double"] or r["ours"]["double"] or not r["gnubg"]["take"] or not r["ours"]["take"]
                or r["gnubg"]["nd"] > r["gnubg"]["dp"])

    summary = {"positions": len(positions), "self_play": len(playing), "end_games": len(endings), "seed": args.seed,
               "net": args.net, "gnubg_plies": 0, "scores": SCORES, "cubes": CUBES, "by_score": {}}
    for name in ("ours", "ours_on_gnubg_probs", "gnubg_on_our_probs"):
        summary[name] = {"all": summarize(rows, name), "window": summarize([r for r in rows if window(r)], name)}
    for score in SCORES:
        label = "money (25-25)" if score == (25, 25) else f"{score[0]}-away {score[1]}-away"
        selected = [r for r in rows if tuple(r["score"]) == score]
        summary["by_score"][label] = {name: summarize(selected, name) for name in ("ours", "ours_on_gnubg_probs")}
        summary["by_score"][label]["window_ours"] = summarize([r for r in selected if window(r)], "ours")
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
        Path(args.out).with_suffix(".rows.json").write_text(json.dumps(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
