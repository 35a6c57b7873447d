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

For the running games (fevga, narde: docs/rules.md 8) ``style="contact"`` prefers
moves that hold many points in a row (blocks and primes), end-game boards
put a single side's checkers on a point and nothing on a bar, and
:func:`running_edge_positions` builds boards at the edges of the
restrictions of docs/rules.md 8.4: six points in a row nearly held with the
opponent behind or just ahead, the head on the first turns, the runner
about to pass the opponent's start, the starting quarter nearly full.

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


def _longest_runs(held: np.ndarray) -> np.ndarray:
    """(N,) the longest run of consecutive True columns of each row of ``held`` (N, 24)."""
    run = np.zeros(held.shape[0], dtype=np.int64)
    best = np.zeros(held.shape[0], dtype=np.int64)
    for column in range(held.shape[1]):
        run = np.where(held[:, column], run + 1, 0)
        np.maximum(best, run, out=best)
    return best


def _contact_score(after) -> np.ndarray:
    """(N,) how much each afterstate hurts the opponent: pinned or hit checkers, a pinned mother; in the running
    games, points held in a row across the opponent's path (blocks, primes) and points held at all."""
    if after.positions.parallel_rows().all():
        held = after.positions.board > 0
        # The opponent's path in the mover's columns runs from column 11 (its 24-point) down through 0,
        # then on from 23 to 12: turn the board by 12 so that a run across it is a run of columns.
        turned = np.roll(held, 12, axis=1)
        return _longest_runs(turned) + 0.3 * held.sum(axis=1)
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
            batch = after.next_positions(alive)
    everything = concatenate(collected)
    # A random sample in random order: openings, middle games and races mixed in any slice.
    return everything.take(rng.choice(len(everything), size=count, replace=False))


def _place(stacks: list[str], side: str, point: int, pins: bool, parallel: bool = False) -> bool:
    """Put one checker of ``side`` on its point ``point`` if the stack stays legal; True if placed."""
    index = absolute_index(side, point, parallel)
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
            if rules.hits and rng.random() < 0.2:
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
                if _place(stacks, side, int(rng.choice(24, p=weights[side])) + 1, rules.pins, rules.parallel):
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
    """``count`` positions: a third each from uniform playouts, contact playouts and end-game boards (for the
    running games a quarter each, the fourth from :func:`running_edge_positions`)."""
    third = count // 3
    # About 40 positions per game are drawn from each game played, so small requests stay cheap.
    games = int(np.clip(third // 40, 4, 512))
    rules = _rules(rules)
    if rules.parallel:
        quarter = count // 4
        games = int(np.clip(quarter // 40, 4, 512))
        return concatenate([
            playout_positions(rules, quarter, rng, "uniform", games=games),
            playout_positions(rules, quarter, rng, "contact", games=games),
            endgame_positions(rules, quarter, rng),
            running_edge_positions(rules, count - 3 * quarter, rng),
        ])
    parts = [
        playout_positions(rules, third, rng, "uniform", games=games),
        playout_positions(rules, third, rng, "contact", games=games),
        endgame_positions(rules, count - 2 * third, rng),
    ]
    return concatenate(parts)


# --------------------------------------------------------------------------
# The running games' restrictions (docs/rules.md 8.4): boards at their edges
# --------------------------------------------------------------------------

EDGE_KINDS = ("prime", "head", "runner", "quarter", "bearoff")


def _running_board(rules: RuleOptions, mover_points: dict[int, int], rng: np.random.Generator,
                   opponent_low: int = 1, turn: str = "X", off: tuple[int, int] = (0, 0)) -> Position | None:
    """A running-game position: the mover's checkers as given (own point -> count, the rest of its 15 minus
    ``off[0]`` spread on its points 13-24 not given), the opponent's on its own points ``opponent_low``..24 that
    the mover leaves free (never its 24-point alone: it keeps some there); None when they do not fit."""
    mover, opponent = turn, "O" if turn == "X" else "X"
    stacks = [""] * 24
    placed = dict(mover_points)
    left = CHECKERS_PER_SIDE - off[0] - sum(placed.values())
    if left < 0:
        return None
    spare = [p for p in range(13, 25) if p not in placed]
    for _ in range(left):
        if not spare:
            return None
        point = int(rng.choice(spare))
        placed[point] = placed.get(point, 0) + 1
    for point, count in placed.items():
        if count:
            stacks[absolute_index(mover, point, True)] = mover * count
    free = [q for q in range(max(1, opponent_low), 25)
            if not stacks[absolute_index(opponent, q, True)]]
    if not free:
        return None
    # The opponent: a few points, often heavy on its 24-point and its last points.
    chosen = rng.choice(free, size=min(len(free), int(rng.integers(1, 7))), replace=False)
    for _ in range(CHECKERS_PER_SIDE - off[1]):
        point = int(rng.choice(chosen))
        stacks[absolute_index(opponent, point, True)] += opponent
    position = Position(rules, tuple(stacks), (off[0], off[1]) if mover == "X" else (off[1], off[0]), (0, 0),
                        mover)
    validate_position(position)
    return position if finished_result(position) is None else None


def _edge_position(rules: RuleOptions, kind: str, rng: np.random.Generator) -> Position | None:
    turn = SIDES[int(rng.integers(0, 2))]
    if kind == "prime":
        # Four to six points in a row of the opponent's path held (its points k..k+5), k often 1..19,
        # with the opponent all behind the run, or one checker just ahead of it, or one borne off.
        length = int(rng.integers(4, 7))
        k = int(rng.integers(1, 20))
        theirs = [k + i for i in range(6)][:length]
        start = int(rng.integers(0, 6 - length + 1))
        theirs = [q + start for q in theirs]
        mover_points = {rules.opponent_point(q): int(rng.integers(1, 3)) for q in theirs if q <= 24}
        # Spare checkers a die or two above the gaps, ready to close the run.
        for _ in range(int(rng.integers(1, 4))):
            point = min(24, rules.opponent_point(k) + int(rng.integers(1, 9)))
            if point != rules.opponent_point(k + 5):
                mover_points[point] = mover_points.get(point, 0) + 1
        ahead = rng.random()
        low = k + 6 if ahead < 0.6 else max(1, k - int(rng.integers(1, 4)))
        off = (0, 1) if rng.random() < 0.1 else (0, 0)
        return _running_board(rules, mover_points, rng, min(low, 24), turn, off)
    if kind == "head":
        # The first turns: all 15 on the 24-point, or a few already left.
        gone = int(rng.choice([0, 0, 1, 2, 3]))
        mover_points = {24: CHECKERS_PER_SIDE - gone}
        for _ in range(gone):
            point = int(rng.integers(13, 24))
            mover_points[point] = mover_points.get(point, 0) + 1
        return _running_board(rules, mover_points, rng, 13, turn)
    if kind == "runner":
        # One checker out, about to pass the opponent's start (its own 12-point), or just past it.
        runner = int(rng.integers(9, 24))
        extra = int(rng.choice([0, 0, 0, 1]))  # sometimes a second one out already (breaks the rule)
        mover_points = {24: CHECKERS_PER_SIDE - 1 - extra, runner: 1}
        if extra:
            second = int(rng.integers(13, 24))
            mover_points[second] = mover_points.get(second, 0) + 1
        return _running_board(rules, mover_points, rng, int(rng.integers(1, 14)), turn)
    if kind == "quarter":
        # Three to five of the points 19-24 held, checkers above the others.
        missing = set(rng.choice(np.arange(19, 24), size=int(rng.choice([1, 1, 2, 2, 3])), replace=False).tolist())
        mover_points = {p: int(rng.integers(1, 4)) for p in range(19, 25) if p not in missing}
        mover_points[24] = max(mover_points[24], int(rng.integers(2, 6)))
        if rng.random() < 0.5:
            mover_points[int(rng.integers(1, 12))] = 1  # passed already
        return _running_board(rules, mover_points, rng, int(rng.integers(1, 19)), turn)
    # "bearoff": the mover home or nearly, some borne off, the opponent anywhere behind.
    off = (int(rng.integers(0, 15)), int(rng.integers(0, 15)) if rng.random() < 0.5 else 0)
    mover_points: dict[int, int] = {}
    for _ in range(CHECKERS_PER_SIDE - off[0]):
        point = int(rng.integers(1, 7)) if rng.random() < 0.92 else int(rng.integers(7, 13))
        mover_points[point] = mover_points.get(point, 0) + 1
    return _running_board(rules, mover_points, rng, int(rng.integers(1, 19)), turn, off)


def running_edge_positions(rules: RuleOptions | str, count: int, rng: np.random.Generator,
                           kinds: tuple[str, ...] = EDGE_KINDS) -> PositionBatch:
    """``count`` running-game boards at the edges of the restrictions (docs/rules.md 8.4), the ``kinds`` in turn."""
    rules = _rules(rules)
    if not rules.parallel:
        raise ValueError(f"running_edge_positions: {rules.name} is not a running game (paths='parallel')")
    positions: list[Position] = []
    while len(positions) < count:
        position = _edge_position(rules, kinds[len(positions) % len(kinds)], rng)
        if position is not None:
            positions.append(position)
    return PositionBatch.from_positions(positions)
