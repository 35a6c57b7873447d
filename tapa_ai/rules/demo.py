"""Random self-play: plays games with uniformly random legal moves and summarises them.

Until training exists this is the main job of ``tapa-ai`` on defaults, and it
measures the reference generator: positions/s, legal moves per position,
game length and how games end, per variant.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

from tqdm import tqdm

from .options import RuleOptions, variant_rules
from .position import Position, start_position
from .reference import legal_moves, next_turn


@dataclass
class RandomPlayStats:
    """What random self-play of one rule set looked like."""

    variant: str
    games: int = 0
    turns: int = 0
    """Turns played, passes included."""
    passes: int = 0
    legal_moves: int = 0
    """Sum over positions of the number of legal moves (a pass counts as one)."""
    generator_seconds: float = 0.0
    """Time spent inside the move generator."""
    kinds: Counter = field(default_factory=Counter)
    winners: Counter = field(default_factory=Counter)
    points: Counter = field(default_factory=Counter)

    @property
    def positions_per_second(self) -> float:
        return self.turns / self.generator_seconds if self.generator_seconds else 0.0

    def summary(self) -> dict:
        return {
            "variant": self.variant,
            "games": self.games,
            "turns_per_game": round(self.turns / max(self.games, 1), 2),
            "legal_moves_per_position": round(self.legal_moves / max(self.turns, 1), 2),
            "pass_rate": round(self.passes / max(self.turns, 1), 4),
            "reference_positions_per_s": round(self.positions_per_second, 1),
            "result_kinds": dict(sorted(self.kinds.items())),
            "winners": {str(k): v for k, v in sorted(self.winners.items(), key=str)},
            "points_X": self.points["X"],
            "points_O": self.points["O"],
        }


def play_random_game(rules: RuleOptions, rng: random.Random, stats: RandomPlayStats, max_turns: int = 5000) -> Position:
    """Play one game with random legal moves; the side to open is drawn at random."""
    position = start_position(rules, rng.choice("XO"))
    for _ in range(max_turns):
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        started = time.perf_counter()
        moves = legal_moves(position, dice)
        stats.generator_seconds += time.perf_counter() - started
        stats.turns += 1
        stats.legal_moves += len(moves)
        stats.passes += not moves[0].steps
        after = rng.choice(moves).position
        if after.result is not None:
            stats.games += 1
            stats.kinds[after.result.kind] += 1
            stats.winners[after.result.winner or "draw"] += 1
            if after.result.winner:
                stats.points[after.result.winner] += after.result.points
            return after
        position = next_turn(after)
    raise RuntimeError(f"a random game of {rules.name} did not end in {max_turns} turns")


def random_play(variant: str | RuleOptions, games: int, seed: int, progress: bool = True) -> RandomPlayStats:
    """Play ``games`` random games of a variant from ``seed``."""
    rules = variant_rules(variant) if isinstance(variant, str) else variant
    rng = random.Random(seed)
    stats = RandomPlayStats(rules.name)
    for _ in tqdm(range(games), desc=f"random {rules.name}", unit="game", disable=not progress):
        play_random_game(rules, rng, stats)
    return stats
