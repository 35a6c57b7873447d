"""Find positions where the score of a rotation's match (Tavli, Tabla) changes the move (docs/tavli.md).

    python scripts/rotation_positions.py                   # Tavli: 200 matches to 5 at 0 ply, the 2 largest per game
    python scripts/rotation_positions.py --rotation tabla --length 7 --matches 100 --show 4 --json tabla.json

The positions are real: those of the rotation's matches that ``net:rotation``
(each game's shipped model, e.g. for Tavli the backgammon model playing Portes,
``net:plakoto`` and ``net:fevga``, each playing its checkers by the match
score) plays against itself in the arena
(:func:`tapa_ai.arena.rotation.play_rotation_pairs`). At every decision the move it
plays is compared with the move the same model plays by cubeless money equity
(``money_play``); both value the same outcome probabilities, only what each
outcome class is worth differs (match-winning chances from the rotation's
match equity table at the score, or points). A decision counts where the two moves
differ and the score-aware move wins the match more often by more than
``--min-gain`` (no ties). The matches come in duplicate pairs (the same dice
with the seats swapped), so a position met twice at the same score counts
once. The counts per game of the rotation and the largest differences of
each game are printed as Markdown, as docs/tavli.md shows them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.arena.rotation import play_rotation_pairs  # noqa: E402
from tapa_ai.bots.rotation import make_rotation_player  # noqa: E402
from tapa_ai.rules.rotations import parse_rotation  # noqa: E402
from tapa_ai.movegen.choice import segment_argmax  # noqa: E402
from tapa_ai.notation.json_position import position_to_json  # noqa: E402
from tapa_ai.rules.outcomes import cumulative_probabilities  # noqa: E402


@dataclass
class Args:
    rotation: str = "tavli"
    """The rotation: a preset (tavli, tabla) or the games, comma-separated."""
    length: int = 5
    """Match length."""
    matches: int = 200
    """Matches played (in duplicate pairs)."""
    plies: int = 0
    """Search depth of the bots."""
    seed: int = 52
    min_gain: float = 0.002
    """Match-winning chance by which the score-aware move must beat the money move to count."""
    show: int = 2
    """Differences printed per game of the rotation (the largest first)."""
    json: str = ""
    """Write every difference found to this JSON file."""


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, value in vars(Args()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    return Args(**vars(parser.parse_args()))


class Recorder:
    """A score-aware network bot that plays as it would and records where money play would differ."""

    def __init__(self, bot, variant: str, args: Args, found: list, counts: Counter) -> None:
        self.bot, self.variant, self.args, self.found, self.counts = bot, variant, args, found, counts
        self.rng = np.random.default_rng(args.seed + 1)  # the money choice's ties: not the match's generator
        self.seen: set = set()
        """(position, dice, score) of every decision counted (the pair's other match meets it again)."""

    def __call__(self, afterstates, rng):  # a plain policy (unused: the arena asks at the score)
        return self.bot.choose(afterstates, rng)

    def choose_at_score(self, afterstates, rng, score):
        chosen = self.bot.choose_at_score(afterstates, rng, score)
        values = score.class_values(self.bot.evaluator.points)
        rows, distributions, money = self.bot.ranked(afterstates)
        money_rows = rows[segment_argmax(money, np.searchsorted(rows, afterstates.offsets), self.rng)]
        several = np.diff(afterstates.offsets) > 1
        for index in np.flatnonzero(several).tolist():
            key = (afterstates.inputs.position(index), tuple(afterstates.dice[index].tolist()),
                   int(score.away[index]), int(score.opponent_away[index]))
            if key in self.seen:
                continue
            self.seen.add(key)
            self.counts[self.variant, "decisions"] += 1
            if chosen[index] == money_rows[index]:
                continue
            both = np.array([chosen[index], money_rows[index]])
            probabilities = self.bot.evaluate(afterstates, both)
            mwc = probabilities @ values[index]
            gain = float(mwc[0] - mwc[1])
            if gain <= self.args.min_gain:
                continue
            self.counts[self.variant, "differ"] += 1
            moves = []
            for row, p, chance in zip(both.tolist(), probabilities, mwc):
                win, gammon, top, lose_gammon, lose_top, _ = cumulative_probabilities(p).tolist()
                moves.append({"move": afterstates.move_text(row), "win": win, "win_gammon": gammon, "win_top": top,
                              "lose_gammon": lose_gammon, "lose_top": lose_top, "mwc": float(chance),
                              "equity": float(p @ self.bot.evaluator.points)})
            position = afterstates.inputs.position(index)
            self.found.append({"variant": self.variant, "away": int(score.away[index]),
                               "opponent_away": int(score.opponent_away[index]), "length": self.args.length,
                               "position": position_to_json(position), "turn": position.turn,
                               "dice": [int(d) for d in afterstates.dice[index]], "score_move": moves[0],
                               "money_move": moves[1], "gain": gain})
        return chosen


def find(args: Args) -> tuple[list[dict], Counter]:
    found: list[dict] = []
    counts: Counter = Counter()
    rotation = parse_rotation(args.rotation)
    player = make_rotation_player(f"net:rotation@{args.plies}ply", rotation)
    players = {variant: Recorder(player.bot(variant), variant, args, found, counts) for variant in rotation.distinct}
    play_rotation_pairs(players, players, args.matches // 2, args.seed, args.length, rotation)
    return found, counts


def markdown(example: dict, number: int) -> str:
    score = f"{example['length'] - example['away']}-{example['length'] - example['opponent_away']}"
    rows = []
    for label, move in (("the score (match-winning chance)", example["score_move"]),
                        ("money (points)", example["money_move"])):
        rows.append(f"| {label} | `{move['move']}` | {move['win']:.3f} | {move['win_gammon']:.3f} | "
                    f"{move['lose_gammon']:.3f} | {100 * move['mwc']:.1f}% | {move['equity']:+.3f} |")
    return "\n".join([
        f"**{number}.** {example['variant'].capitalize()}, a match to {example['length']} at {score} (the mover "
        f"needs {example['away']}, the other side {example['opponent_away']}); {example['turn']} to play "
        f"{example['dice'][0]}-{example['dice'][1]}; position `{json.dumps(example['position'])}`",
        "",
        "| best by | move | win | gammon+ | lose gammon+ | match-winning chance | money equity |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
    ])


def main() -> int:
    args = parse_args()
    found, counts = find(args)
    rotation = parse_rotation(args.rotation)
    found.sort(key=lambda example: -example["gain"])
    name = rotation.name if rotation.name != "custom" else "rotation"
    print(f"{rotation.title()} matches to {args.length}: {args.matches} matches of net:{name}@{args.plies}ply "
          "against itself, "
          f"seed {args.seed}; decisions (two or more legal moves) where the score changes the move by more than "
          f"{args.min_gain:.3f} of match-winning chance:\n")
    print("| game | decisions | the score changes the move | share |\n|---|---:|---:|---:|")
    for variant in rotation.distinct:
        decisions, differ = counts[variant, "decisions"], counts[variant, "differ"]
        print(f"| {variant} | {decisions:,} | {differ:,} | {differ / max(decisions, 1):.1%} |")
    shown = [example for variant in rotation.distinct
             for example in [e for e in found if e["variant"] == variant][:args.show]]
    for number, example in enumerate(shown, start=1):
        print()
        print(markdown(example, number))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"args": vars(args), "found": found}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
