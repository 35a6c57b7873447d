"""Find positions where Portes' scoring changes the backgammon model's move (backgammon risk), docs/portes.md.

    python scripts/portes_positions.py                      # 256 games at once, 0 ply, the 6 largest differences
    python scripts/portes_positions.py --games 64 --plies 1 --show 4 --json portes-positions.json

The positions are real: those of Portes games that ``net:backgammon`` plays
against itself (valuing with Portes' points). At every turn the move it plays
is compared with the move the same model would play valuing a backgammon at 3
(``net:backgammon,points=backgammon``): both value the same outcome
probabilities (the model is shown every position as a backgammon position),
only the points differ. A position counts where the two moves differ and the
Portes move is better under Portes' points by more than ``--min-gain`` (no
ties). With ``--plies 1`` each bot searches one ply (the Portes bot choosing
the opponent's replies by Portes' points, the other by backgammon's). The
largest differences are printed as Markdown, as docs/portes.md shows them:
the position (gnubg Position ID, and the layout in the tests' mini-language;
the side to move is named X, so the layout and the moves share its
numbering), the roll, both moves, and each move's
probabilities and equity under each rule set's points.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, replace

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.bots.spec import make_bot  # noqa: E402
from tapa_ai.movegen import PositionBatch, generate  # noqa: E402
from tapa_ai.movegen.batch import concatenate  # noqa: E402
from tapa_ai.movegen.choice import segment_argmax  # noqa: E402
from tapa_ai.movegen.random_positions import random_dice  # noqa: E402
from tapa_ai.notation.gnubg_id import position_to_gnubg_id  # noqa: E402
from tapa_ai.notation.json_position import position_to_json  # noqa: E402
from tapa_ai.rules.options import BACKGAMMON, PORTES  # noqa: E402
from tapa_ai.rules.outcomes import cumulative_probabilities, outcome_points  # noqa: E402
from tapa_ai.rules.position import start_position  # noqa: E402


@dataclass
class Args:
    games: int = 256
    """Games played at once (each replaced by a new one when it ends)."""
    turns: int = 400
    """Turns played in all (each a move of every game at once)."""
    plies: int = 0
    """Search depth of both bots."""
    seed: int = 52
    """Seed of the dice and of the tie-breaks."""
    min_gain: float = 0.005
    """Points by which the Portes move must beat the other under Portes' points to count."""
    show: int = 6
    """Differences printed (the largest first)."""
    json: str = ""
    """Write every difference found to this JSON file."""


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, value in vars(Args()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    return Args(**vars(parser.parse_args()))


def mini_layout(position) -> str:
    """The position in the tests' mini-language (``tapa_ai.notation.mini``), X's numbering."""
    cells = [f"{point}:{stack}" for point, stack in enumerate(position.points, start=1) if stack]
    bar = "X" * position.bar[0] + "O" * position.bar[1]
    return " ".join(cells + ([f"bar:{bar}"] if bar else []))


def find(args: Args) -> tuple[list[dict], int, int]:
    """Every difference found, the number of decisions compared and the number of games finished."""
    portes_bot = make_bot(f"net:backgammon@{args.plies}ply", PORTES)
    baseline = make_bot(f"net:backgammon@{args.plies}ply,points=backgammon", PORTES)
    rng = np.random.default_rng(args.seed)
    starts = [start_position(PORTES, "XO"[game % 2]) for game in range(args.games)]
    batch = PositionBatch.from_positions(starts)
    found, decisions, finished = [], 0, 0
    portes_points, backgammon_points = outcome_points(PORTES).astype(float), outcome_points(BACKGAMMON).astype(float)
    for _ in range(args.turns):
        # Every position named with its side to move as X (the batch is seen from the mover anyway), so that the
        # layout and the move text share X's numbering.
        batch = replace(batch, turn=np.zeros(len(batch), dtype=np.int8))
        dice = random_dice(len(batch), rng)
        afterstates = generate(batch, dice)
        rows, values, equities = portes_bot.ranked(afterstates)
        other_rows, other_values, other_equities = baseline.ranked(afterstates)
        offsets, other_offsets = np.searchsorted(rows, afterstates.offsets), np.searchsorted(other_rows,
                                                                                             afterstates.offsets)
        mine = segment_argmax(equities, offsets, rng)
        theirs = segment_argmax(other_equities, other_offsets, rng)
        several = np.diff(afterstates.offsets) > 1
        decisions += int(several.sum())
        for index in np.flatnonzero(several & (rows[mine] != other_rows[theirs])).tolist():
            portes_row, other_row = int(rows[mine[index]]), int(other_rows[theirs[index]])
            # Both moves valued by each bot at its depth: the Portes bot's values of the two, and the other's.
            both = np.array([portes_row, other_row])
            by_portes = portes_bot.evaluate(afterstates, both)
            by_baseline = baseline.evaluate(afterstates, both)
            gain = float(by_portes[0] @ portes_points - by_portes[1] @ portes_points)
            if gain <= args.min_gain:
                continue
            position = batch.position(index)
            moves = []
            for row, portes_values, baseline_values in zip(both.tolist(), by_portes, by_baseline):
                win, gammon, backgammon, lose_gammon, lose_backgammon, _ = cumulative_probabilities(
                    portes_values).tolist()
                moves.append({"move": afterstates.move_text(row), "win": win, "win_gammon": gammon,
                              "win_backgammon": backgammon, "lose_gammon": lose_gammon,
                              "lose_backgammon": lose_backgammon,
                              "equity_portes": float(portes_values @ portes_points),
                              "equity_backgammon": float(baseline_values @ backgammon_points)})
            found.append({"position": position_to_json(position), "gnubg_id": position_to_gnubg_id(
                position.with_changes(rules=BACKGAMMON)), "mini": mini_layout(position), "turn": position.turn,
                "dice": [int(d) for d in dice[index]], "portes_move": moves[0], "backgammon_move": moves[1],
                "gain": gain})
        chosen = rows[mine]
        over = afterstates.game_over[chosen]
        finished += int(over.sum())
        batch = afterstates.positions.take(chosen).flipped()
        if over.any():  # a new game where one ended, the loser opening it (the winner opens in Portes: either way)
            fresh = PositionBatch.from_positions([start_position(PORTES, "X") for _ in range(int(over.sum()))])
            replaced = np.flatnonzero(over)
            keep = np.flatnonzero(~over)
            batch = concatenate([batch.take(keep), fresh])
            order = np.argsort(np.concatenate([keep, replaced]), kind="stable")
            batch = batch.take(order)
    return found, decisions, finished


def markdown(example: dict, number: int) -> str:
    rows = []
    for label, move in (("Portes", example["portes_move"]), ("backgammon (a backgammon = 3)",
                                                             example["backgammon_move"])):
        rows.append(f"| {label} | `{move['move']}` | {move['win']:.3f} | {move['win_gammon']:.3f} | "
                    f"{move['win_backgammon']:.3f} | {move['lose_gammon']:.3f} | {move['lose_backgammon']:.3f} | "
                    f"{move['equity_portes']:+.3f} | {move['equity_backgammon']:+.3f} |")
    return "\n".join([
        f"**{number}.** {example['turn']} to play {example['dice'][0]}-{example['dice'][1]} "
        f"(gnubg Position ID `{example['gnubg_id']}`; mini-language `{example['mini']}`)",
        "",
        "| best by the points of | move | win | gammon+ | backgammon | lose gammon+ | lose backgammon | "
        "equity, Portes points | equity, backgammon points |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ])


def main() -> int:
    args = parse_args()
    found, decisions, finished = find(args)
    found.sort(key=lambda example: -example["gain"])
    gain = sum(example["gain"] for example in found)
    print(f"{len(found)} of {decisions:,} decisions differ (Portes move better by > {args.min_gain} points under "
          f"Portes' points), {args.plies}-ply, {args.games} games x {args.turns} turns ({finished:,} games "
          f"finished), seed {args.seed}; the Portes moves' gains sum to {gain:.2f} points "
          f"({gain / max(decisions, 1):.5f} a decision)\n")
    for number, example in enumerate(found[: args.show], start=1):
        print(markdown(example, number) + "\n")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"args": vars(args), "decisions": decisions, "games_finished": finished, "found": found}, out,
                      indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
