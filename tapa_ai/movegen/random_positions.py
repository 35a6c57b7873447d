"""Random positions for testing move generators: playouts and end-game boards with pins.

Every generator takes an injected ``numpy.random.Generator``, so a seed
reproduces the same positions. The three sources cover different rules:

- :func:`playout_positions` with ``style="uniform"``: positions met in games
  where each side picks a uniformly random legal move (opening, middle game,
  races);
- ``style="contact"``: games where each side prefers moves that pin (or hit)
  the opponent, pins mothers and keeps checkers back, so pins, mothers, bar
  entry and closed boards come up far more often;
- :func:`endgame_positions`: boards built directly, checkers mostly in the
  home boards with some stragglers, pins on both sides (pinning games),
  blots and checkers on the bar (backgammon), mothers on and next to the
  1-point, some checkers borne off: bearing off with pinned checkers,
  mother wins and draws, gammons and backgammons in one move.

All positions are games in progress (no side has already won) and pass
:func:`~tapa_ai.rules.position.validate_position`.
"""

from __future__ import annotations

import numpy as np

from ..rules.options import CHECKERS_PER_SIDE, RuleOptions, variant_rules
from ..rules.position import SIDES, Position, absolute_index, start_position, validate_position
from ..rules.reference import finished_result
from .batch import PositionBatch, concatenate
from .generate import generate

STYLES = ("uniform", "contact")


def _rules(rules: RuleOptions | str) -> RuleOptions:
    return variant_rules(rules) if isinstance(rules, str) else rules


def random_dice(count: int, rng: np.random.Generator) -> np.ndarray:
    """(count, 2) int8 dice, uniform over the 36 rolls."""
    return rng.integers(1, 7, size=(count, 2)).astype(np.int8)


def _contact_score(after) -> np.ndarray:
    """(N,) how much each afterstate hurts the opponent: pinned or hit checkers, a pinned mother."""
    pinned_opponents = (after.positions.pinned == -1).sum(axis=1).astype(np.float64)
    score = pinned_opponents + 2.0 * after.positions.bar[:, 1]
    score += 3.0 * (after.positions.pinned[:, 0] == -1)  # the opponent's mother (its 24-point) pinned
    score += 0.5 * (after.positions.board[:, 23] > 0)  # keeping a checker back on the own 24-point
    return score


def playout_positions(
    rules: RuleOptions | str,
    count: int,
    rng: np.random.Generator,
    style: str = "uniform",
    games: int = 512,
    max_plies: int = 400,
) -> PositionBatch:
    """``count`` positions (side to move's view) met in random games of ``games`` at a time.

    Positions are taken from all plies of the games, then ``count`` of them
    are drawn at random, so openings, middle games and races all appear.
    """
    if style not in STYLES:
        raise ValueError(f"style {style!r}: must be one of {STYLES}")
    rules = _rules(rules)
    if count <= 0:
        return PositionBatch.from_positions([])
    collected: list[PositionBatch] = []
    total = 0
    while total < count:
        starts = [start_position(rules, SIDES[int(side)]) for side in rng.integers(0, 2, size=games)]
        batch = PositionBatch.from_positions(starts)
        # Both sides can be left with nothing but pinned or blocked checkers, passing for
        # ever (rule sets without mothers): games are cut after ``max_plies``.
        for _ in range(max_plies):
            if not len(batch):
                break
            collected.append(batch)
            total += len(batch)
            after = generate(batch, random_dice(len(batch), rng))
            if style == "uniform":
                per_position = np.diff(after.offsets)
                chosen = after.offsets[:-1] + (rng.random(len(batch)) * per_position).astype(np.int64)
            else:
                # Mostly the most aggressive move (ties broken at random), sometimes any move.
                score = _contact_score(after) + rng.random(len(after)) * 0.9
                greedy = rng.random(len(after)) < 0.85
                score = np.where(greedy[after.source], score, rng.random(len(after)))
                order = np.lexsort((score, after.source))
                chosen = order[after.offsets[1:] - 1]
            alive = chosen[~after.game_over[chosen]]
            batch = after.positions.take(alive).flipped()
    everything = concatenate(collected)
    # A random sample in random order: openings, middle games and races mixed in any slice.
    return everything.take(rng.choice(len(everything), size=count, replace=False))


def _place(stacks: list[str], side: str, point: int, pins: bool) -> bool:
    """Put one checker of ``side`` on its point ``point`` if the stack stays legal; True if placed."""
    index = absolute_index(side, point)
    stack = stacks[index]
    opponent = "O" if side == "X" else "X"
    if not stack or stack[-1] == side:
        if stack and stack[0] == opponent and point == 24:
            return False
        stacks[index] = stack + side
        return True
    if not pins or stack != opponent or point == 24:
        # Closed, or a blot in backgammon (two sides never share a point there), or
        # pinning on one's own 24-point, where no checker of its side can land.
        return False
    stacks[index] = stack + side
    return True


def _endgame_weights(rng: np.random.Generator, pins: bool) -> np.ndarray:
    """(24,) placement weights over a side's own points 1..24: mostly home, some stragglers."""
    profile = np.full(24, 0.15)
    profile[:6] = 3.0
    profile[6:12] = 0.6
    if pins:
        profile[23] = 1.2  # mothers and checkers kept back on the 24-point
    weights = profile * rng.gamma(0.6, size=24)
    if rng.random() < 0.4:
        weights[6:] *= 0.02  # often a pure bear-off for this side
    return weights / weights.sum()


def endgame_position(rules: RuleOptions | str, rng: np.random.Generator) -> Position:
    """One random end-game position of a game in progress (see module docstring)."""
    rules = _rules(rules)
    while True:
        stacks = [""] * 24
        off = [0, 0]
        bar = [0, 0]
        on_board = {}
        for s, side in enumerate(SIDES):
            off[s] = int(rng.integers(0, CHECKERS_PER_SIDE)) if rng.random() < 0.75 else 0
            on_board[side] = CHECKERS_PER_SIDE - off[s]
            if not rules.pins and rng.random() < 0.2:
                bar[s] = int(min(on_board[side], rng.integers(1, 3)))
                on_board[side] -= bar[s]
        weights = {side: _endgame_weights(rng, rules.pins) for side in SIDES}
        if rules.pins and rng.random() < 0.5:
            # A mother: a lone checker on the side's 24-point, maybe pinned next move.
            side = SIDES[int(rng.integers(0, 2))]
            if on_board[side] > 0:
                _place(stacks, side, 24, True)
                on_board[side] -= 1
                weights[side][23] = 0.0
                weights[side] /= weights[side].sum()
        queue = [side for side in SIDES for _ in range(on_board[side])]
        rng.shuffle(queue)
        failed = False
        for side in queue:
            for _ in range(50):
                if _place(stacks, side, int(rng.choice(24, p=weights[side])) + 1, rules.pins):
                    break
            else:
                failed = True
                break
        if failed:
            continue
        turn = SIDES[int(rng.integers(0, 2))]
        position = Position(rules, tuple(stacks), (off[0], off[1]), (bar[0], bar[1]), turn)
        validate_position(position)
        if finished_result(position) is None:
            return position


def endgame_positions(rules: RuleOptions | str, count: int, rng: np.random.Generator) -> PositionBatch:
    """``count`` random end-game positions as a batch."""
    return PositionBatch.from_positions([endgame_position(rules, rng) for _ in range(count)])


def mixed_positions(rules: RuleOptions | str, count: int, rng: np.random.Generator) -> PositionBatch:
    """``count`` positions: a third each from uniform playouts, contact playouts and end-game boards."""
    third = count // 3
    # About 40 positions per game are drawn from each game played, so small requests stay cheap.
    games = int(np.clip(third // 40, 4, 512))
    parts = [
        playout_positions(rules, third, rng, "uniform", games=games),
        playout_positions(rules, third, rng, "contact", games=games),
        endgame_positions(rules, count - 2 * third, rng),
    ]
    return concatenate(parts)
