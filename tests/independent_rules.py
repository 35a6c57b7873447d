"""An independent second implementation of the move rules of RULES.md.

Written only from ``/work/shared/RULES.md`` (sections 1-4 and 7), without
looking at the project's reference generator, so that the two can be compared
position by position (``tests/test_reference_vs_independent.py``). It imports
nothing from ``tapa_ai``.

Approach (deliberately unlike a per-die depth-first search from the mover's
view):

* The board stays the **absolute board** of section 1 (``points[0]`` = X's
  1-point); a side's direction is arithmetic: X walks towards index -1, O
  towards index 24. "Own point" numbers are only computed where the rules
  speak of them (bearing off, home board, 24-point).
* A turn is a **breadth-first search over nodes ``(state, dice still to
  play)``**, deduplicated per layer. Every node where nothing more can be
  played (or the game has ended) is a *leaf*; the maximum-use rule and the
  higher-die rule are then applied once, to the set of leaves, by counting
  the dice each leaf used (a game-ending leaf counts as having used them all).

A state is the hashable tuple ``(points, offX, offO, barX, barO, result)``
with ``points`` a 24-tuple of stacks written bottom to top and ``result``
either None or ``(winner, kind, points)`` (winner None for a draw; points
before the cube).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

N_CHECKERS = 15
HOME = range(1, 7)

# The three variants of RULES.md section 6, reduced to what the move rules need.
VARIANTS = {
    "tapa": {"contact": "pin", "mother_points": 3, "backgammons": True},
    "plakoto": {"contact": "pin", "mother_points": 2, "backgammons": False},
    "backgammon": {"contact": "hit", "mother_points": 0, "backgammons": True},
}

Result = Optional[tuple]
State = tuple  # (points, offX, offO, barX, barO, result)


class Rules:
    __slots__ = ("pins", "mother_points", "backgammons")

    def __init__(self, contact: str, mother_points: int, backgammons: bool) -> None:
        if contact not in ("pin", "hit"):
            raise ValueError(f"contact {contact!r}")
        self.pins = contact == "pin"
        self.mother_points = mother_points if self.pins else 0
        self.backgammons = bool(backgammons)


def rules_of(data: dict) -> Rules:
    options = dict(VARIANTS[data["variant"]])
    for key, value in (data.get("rules") or {}).items():
        if key in options:
            options[key] = value
    return Rules(**options)


# -- geometry on the absolute board --------------------------------------------

def opp(side: str) -> str:
    return "O" if side == "X" else "X"


def sgn(side: str) -> int:
    """Direction of travel on the absolute board."""
    return -1 if side == "X" else 1


def abs_index(side: str, own_point: int) -> int:
    """Absolute index of ``side``'s own point ``own_point`` (1..24)."""
    return own_point - 1 if side == "X" else 24 - own_point


def own_point(side: str, index: int) -> int:
    """``side``'s own point number of absolute index ``index``."""
    return index + 1 if side == "X" else 24 - index


def bar_entry_index(side: str, die: int) -> int:
    """Where ``side`` enters from the bar with ``die``: its own point 25 - die."""
    return abs_index(side, 25 - die)


def si(side: str) -> int:
    return 0 if side == "X" else 1


# -- stacks ----------------------------------------------------------------------

def can_land(stack: str, side: str, pins: bool) -> bool:
    """Section 3.2 / 4: is this stack open for ``side``?"""
    if not stack:
        return True
    if pins:
        # own checkers on top (own stack, or own checkers pinning an opponent)
        # or exactly one lone opposing checker (landing pins it)
        return stack[-1] == side or stack == opp(side)
    return stack[0] == side or len(stack) == 1


def is_free_on_top(stack: str, side: str) -> bool:
    """Does ``stack`` hold a free (unpinned) checker of ``side``? A pinned one is at the bottom under others."""
    return bool(stack) and stack[-1] == side


def mother_pinned(points: tuple, side: str) -> bool:
    """Is ``side``'s mother (its single checker on its own 24-point) pinned?"""
    stack = points[abs_index(side, 24)]
    return len(stack) >= 2 and stack[0] == side and stack[1] != side


# -- results ---------------------------------------------------------------------

def normal_win(rules: Rules, points: tuple, off: list, bar: list, winner: str) -> tuple:
    loser = opp(winner)
    if off[si(loser)] > 0:
        return (winner, "single", 1)
    if rules.backgammons:
        in_home = any(loser in points[abs_index(winner, p)] for p in HOME)
        if in_home or bar[si(loser)] > 0:
            return (winner, "backgammon", 3)
    return (winner, "gammon", 2)


def game_over(rules: Rules, points: tuple, off: list, bar: list, mover: str) -> Result:
    """Checked after every single step (sections 2, 3.4, 3.5, 4)."""
    if off[si(mover)] == N_CHECKERS:
        return normal_win(rules, points, off, bar, mover)
    if rules.pins and rules.mother_points > 0:
        if mother_pinned(points, "X") and mother_pinned(points, "O"):
            return (None, "draw", 0)
        if mother_pinned(points, opp(mover)) and mover not in points[abs_index(mover, 24)]:
            return (mover, "mother", rules.mother_points)
    return None


# -- single steps ----------------------------------------------------------------

def _make(rules: Rules, points: list, off: list, bar: list, mover: str) -> State:
    pts = tuple(points)
    result = game_over(rules, pts, off, bar, mover)
    return (pts, off[0], off[1], bar[0], bar[1], result)


def _land(rules: Rules, points: list, bar: list, index: int, side: str) -> None:
    stack = points[index]
    if not rules.pins and stack and stack[0] != side:
        # a blot is hit and goes to the bar
        points[index] = side
        bar[si(opp(side))] += 1
    else:
        points[index] = stack + side


def single_steps(rules: Rules, state: State, mover: str, die: int) -> list[State]:
    """All states after ``mover`` plays one die ``die`` from ``state``."""
    points, offx, offo, barx, baro, _ = state
    me = si(mover)
    off = [offx, offo]
    bar = [barx, baro]
    out = []

    if bar[me] > 0:
        target = bar_entry_index(mover, die)
        if not can_land(points[target], mover, rules.pins):
            return out
        new_points = list(points)
        new_bar = list(bar)
        new_bar[me] -= 1
        _land(rules, new_points, new_bar, target, mover)
        out.append(_make(rules, new_points, list(off), new_bar, mover))
        return out

    # Bearing-off preconditions (3.3 / 4): every checker of the mover (pinned
    # ones included) on its points 1..6 or off, none on the bar.
    occupied = [own_point(mover, i) for i in range(24) if mover in points[i]]
    highest = max(occupied) if occupied else 0
    all_home = bar[me] == 0 and highest <= 6
    step = sgn(mover) * die

    for i in range(24):
        stack = points[i]
        if not is_free_on_top(stack, mover):
            continue
        j = i + step
        if 0 <= j < 24:
            if not can_land(points[j], mover, rules.pins):
                continue
            new_points = list(points)
            new_bar = list(bar)
            new_points[i] = stack[:-1]
            _land(rules, new_points, new_bar, j, mover)
            out.append(_make(rules, new_points, list(off), new_bar, mover))
        else:
            if not all_home:
                continue
            p = own_point(mover, i)
            # exact number, or a larger die from the highest occupied point
            if p == die or (p < die and p == highest):
                new_points = list(points)
                new_points[i] = stack[:-1]
                new_off = list(off)
                new_off[me] += 1
                out.append(_make(rules, new_points, new_off, list(bar), mover))
    return out


# -- whole turns -----------------------------------------------------------------

def _remove_one(dice: tuple, die: int) -> tuple:
    k = dice.index(die)
    return dice[:k] + dice[k + 1:]


def turn_leaves(rules: Rules, start: State, mover: str, dice: tuple) -> dict:
    """Breadth-first over (state, dice left); returns {leaf node: dice used}."""
    total = len(dice)
    leaves: dict = {}
    layer = {(start, tuple(sorted(dice)))}
    while layer:
        next_layer = set()
        for state, left in layer:
            if state[5] is not None:
                leaves[(state, left)] = total  # game over: counts as all dice used
                continue
            progressed = False
            for die in set(left):
                successors = single_steps(rules, state, mover, die)
                if successors:
                    progressed = True
                    rest = _remove_one(left, die)
                    for succ in successors:
                        next_layer.add((succ, rest))
            if not progressed:
                leaves[(state, left)] = total - len(left)
        layer = next_layer
    return leaves


def parse_state(data: dict) -> tuple[Rules, State, str]:
    rules = rules_of(data)
    points = tuple(data["points"])
    if len(points) != 24:
        raise ValueError("points must have 24 stacks")
    off = data.get("off") or {}
    bar = data.get("bar") or {}
    state = (points, int(off.get("X", 0)), int(off.get("O", 0)),
             int(bar.get("X", 0)), int(bar.get("O", 0)), None)
    return rules, state, data["turn"]


def legal_results(data: dict, d1: int, d2: int) -> set:
    """All legal resulting states of the whole turn (section 2 maximum use)."""
    return analyse_turn(data, d1, d2)[0]


def analyse_turn(data: dict, d1: int, d2: int) -> tuple[set, str]:
    """The legal resulting states, and which case of the maximum-use rule decided them.

    The case is one of ``pass``, ``all`` (every die played, or the game ended),
    ``partial`` (doubles: 1-3 of the four), ``higher`` (only one die of a
    non-double: the higher), ``lower`` (only the lower one could be played),
    ``end-beats-rest`` (a game-ending step, with dice left unplayed, is the only
    way to "use all dice": it excludes the longer sequences that did not end it).
    """
    rules, start, mover = parse_state(data)
    dice = (d1, d1, d1, d1) if d1 == d2 else (d1, d2)
    leaves = turn_leaves(rules, start, mover, dice)
    best = max(leaves.values())
    if best == 0:
        return {start}, "pass"
    chosen = [node for node, used in leaves.items() if used == best]
    if best == len(dice):
        if all(state[5] is not None and left for state, left in chosen) and any(
            state[5] is None and used > 0 for (state, _), used in leaves.items()
        ):
            return {state for state, _ in chosen}, "end-beats-rest"
        return {state for state, _ in chosen}, "all"
    if d1 == d2:
        return {state for state, _ in chosen}, "partial"
    low = min(d1, d2)
    # only one die playable: the higher one when it can be played
    with_high = {state for state, left in chosen if left == (low,)}
    if with_high:
        return with_high, "higher"
    return {state for state, _ in chosen}, "lower"


def state_to_json(variant: str, state: State, turn: str) -> dict[str, Any]:
    """A state back as a JSON-style dict (for messages and for chaining turns)."""
    points, offx, offo, barx, baro, result = state
    data: dict[str, Any] = {
        "variant": variant,
        "points": list(points),
        "off": {"X": offx, "O": offo},
        "bar": {"X": barx, "O": baro},
        "turn": turn,
    }
    if result is not None:
        data["result"] = {"winner": result[0], "kind": result[1], "points": result[2]}
    return data


def describe(states: Iterable[State]) -> str:
    lines = []
    for points, offx, offo, barx, baro, result in sorted(states, key=repr):
        cells = " ".join(f"{i + 1}:{s}" for i, s in enumerate(points) if s)
        extra = f" off X{offx}/O{offo}"
        if barx or baro:
            extra += f" bar X{barx}/O{baro}"
        if result is not None:
            extra += f" result={result}"
        lines.append(f"    [{cells}]{extra}")
    return "\n".join(lines)
