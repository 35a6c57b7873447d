"""An independent second implementation of the move rules of docs/rules.md.

Written only from ``docs/rules.md`` (sections 1-4, 7, 8 and 10.1-10.3), without
looking at the project's reference generator, so that the two can be compared
position by position (``tests/test_reference_vs_independent.py``, and for Gul
Bara's cascading doubles ``tests/test_gulbara_vs_independent.py``). It imports
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

* The running games of section 8 (``fevga``, ``narde``) have a search of
  their own (:func:`running_turn_leaves`), in a different style again: each
  side's checkers are counted by **path index** ``t = 24 - own point``
  (``t = 0`` its 24-point, ``t = 23`` its 1-point, ``t = 24`` off), the
  opponent is seen in the mover's path indices, and the turn is a depth-first
  walk over ``(my path counts, my off, dice left)``; the restrictions of 8.4
  are a predicate on every node reached by a single step.

A state is the hashable tuple ``(points, offX, offO, barX, barO, result)``
with ``points`` a 24-tuple of stacks written bottom to top and ``result``
either None or ``(winner, kind, points)`` (winner None for a draw; points
before the cube).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

N_CHECKERS = 15
HOME = range(1, 7)

# The three variants of docs/rules.md section 6, reduced to what the move rules need.
VARIANTS = {
    "tapa": {"contact": "pin", "mother_points": 3, "backgammons": True},
    "plakoto": {"contact": "pin", "mother_points": 2, "backgammons": False},
    "backgammon": {"contact": "hit", "mother_points": 0, "backgammons": True},
}

# The running games (section 8.6), reduced to what the move rules need.
RUNNING_VARIANTS = {
    "fevga": {"paths": "parallel", "contact": "block", "start_rule": "runner", "prime_rule": True,
              "full_start_quarter_allowed": False},
    "narde": {"paths": "parallel", "contact": "block", "start_rule": "head", "prime_rule": True,
              "full_start_quarter_allowed": True},
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


class RunningRules:
    """Options of a running game (section 8): parallel paths, blocking, restrictions 8.4."""

    __slots__ = ("start_rule", "prime_rule", "quarter_banned")
    pins = False
    mother_points = 0
    backgammons = False

    def __init__(self, paths: str, contact: str, start_rule: str, prime_rule: bool,
                 full_start_quarter_allowed: bool) -> None:
        if paths != "parallel" or contact != "block":
            raise ValueError(f"running rules need paths='parallel', contact='block', got {paths!r}, {contact!r}")
        if start_rule not in ("runner", "head", "none"):
            raise ValueError(f"start_rule {start_rule!r}")
        self.start_rule = start_rule
        self.prime_rule = bool(prime_rule)
        self.quarter_banned = not full_start_quarter_allowed


def rules_of(data: dict):
    name = data["variant"]
    options = dict(RUNNING_VARIANTS[name] if name in RUNNING_VARIANTS else VARIANTS[name])
    for key, value in (data.get("rules") or {}).items():
        if key in options:
            options[key] = value
    if name in RUNNING_VARIANTS:
        return RunningRules(**options)
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


# -- running games (section 8), in path-index terms ----------------------------------
#
# For a side P, path index t = 24 - (P's own point): t = 0 is P's 24-point (its
# start, the "head"), t = 23 its 1-point, t >= 24 off. Both sides walk the
# absolute board the same way (towards lower indices, wrapping from points[0]
# to points[23] for O), so P's path index t is the absolute index
# (23 - t) mod 24 for X and (11 - t) mod 24 for O (8.1). The opponent's own
# path index of the same square is (t + 12) mod 24.

_HEAD_SQUARE = {"X": 23, "O": 11}
PATH_LEN = 24
HOME_FROM = 18          # path indices 18..23 are the home board (points 6..1)
PASSED_FROM = 13        # path indices 13..23 are points 11..1: past the opponent's start
QUARTER = range(0, 6)   # path indices 0..5 are the starting quarter (points 24..19)
HEAD_DOUBLES = (6, 4, 3)  # the doubles that let two checkers leave the head on the first turn


def square(side: str, t: int) -> int:
    """Absolute index of ``side``'s path index ``t`` (0..23)."""
    return (_HEAD_SQUARE[side] - t) % 24


def path_counts(points: tuple, side: str) -> tuple:
    """``side``'s checkers counted by its own path index."""
    return tuple(len(points[square(side, t)]) if side in points[square(side, t)] else 0
                 for t in range(PATH_LEN))


class _Turn:
    """Everything fixed during one turn of a running game, seen from the mover."""

    def __init__(self, rules: RunningRules, points: tuple, off: tuple, mover: str, dice: tuple) -> None:
        for index, stack in enumerate(points):
            if stack and stack != stack[0] * len(stack):
                raise ValueError(f"points[{index}] = {stack!r}: a running-game point holds one side only")
        enemy = opp(mover)
        self.rules = rules
        self.mover = mover
        self.mine0 = path_counts(points, mover)
        self.my_off0 = off[si(mover)]
        # the opponent, in the mover's path indices (for blocking)
        self.blocked = tuple(c > 0 for c in
                             (len(points[square(mover, t)]) if enemy in points[square(mover, t)] else 0
                              for t in range(PATH_LEN)))
        # ... and in its own path indices (for the prime rule): the furthest one along,
        # and whether any is off
        theirs = path_counts(points, enemy)
        self.their_furthest = max((u for u in range(PATH_LEN) if theirs[u]), default=-1)
        self.their_off = off[si(enemy)]
        self.head_limit = 1
        self.refused: set = set()  # the restrictions that refused some step (for coverage reports)
        is_double = len(dice) == 4 or (len(dice) == 2 and dice[0] == dice[1])
        if self.mine0[0] == N_CHECKERS and is_double and dice[0] in HEAD_DOUBLES:
            self.head_limit = 2

    # -- 8.4 restrictions on a node (my path counts, my off) -------------------
    def allowed(self, mine: tuple, my_off: int) -> bool:
        broken = self.broken(mine, my_off)
        if broken is not None:
            self.refused.add(broken)
            return False
        return True

    def broken(self, mine: tuple, my_off: int) -> Optional[str]:
        """The first restriction of 8.4 that the node breaks (None: it breaks none)."""
        rules = self.rules
        if rules.start_rule == "runner":
            passed = my_off > 0 or any(mine[PASSED_FROM:])
            if not passed and sum(mine[1:]) > 1:
                return "runner"
        elif rules.start_rule == "head":
            if self.mine0[0] - mine[0] > self.head_limit:
                return "head"
        if rules.quarter_banned and all(mine[t] for t in QUARTER):
            return "quarter"
        if rules.prime_rule and self.their_off == 0 and self.shuts_in(mine):
            return "prime"
        return None

    def shuts_in(self, mine: tuple) -> bool:
        """Six of the opponent's path indices u0..u0+5 held by me with no opposing checker beyond them."""
        held = [mine[(u + 12) % PATH_LEN] > 0 for u in range(PATH_LEN)]  # by the opponent's path index
        run = 0
        for u in range(PATH_LEN):  # no wrap: the opponent's path ends at u = 23
            run = run + 1 if held[u] else 0
            if run >= 6 and self.their_furthest <= u:
                return True
        return False

    # -- single steps ---------------------------------------------------------
    def steps(self, mine: tuple, my_off: int, die: int) -> list:
        """Legal (mine, my_off) after one step of ``die`` (restrictions checked)."""
        out = []
        occupied = [t for t in range(PATH_LEN) if mine[t]]
        may_bear_off = all(t >= HOME_FROM for t in occupied)
        rearmost = occupied[0] if occupied else None
        for t in occupied:
            dest = t + die
            if dest < PATH_LEN:
                if self.blocked[dest]:
                    continue
                new = list(mine)
                new[t] -= 1
                new[dest] += 1
                node = (tuple(new), my_off)
            else:
                # exact (point = die), or a larger die from the highest point held
                if not may_bear_off or (dest > PATH_LEN and t != rearmost):
                    continue
                new = list(mine)
                new[t] -= 1
                node = (tuple(new), my_off + 1)
            if self.allowed(*node):
                out.append(node)
        return out

    # -- back to the absolute state tuple -------------------------------------
    def to_state(self, points: tuple, off: tuple, mine: tuple, my_off: int) -> State:
        board = [("" if self.mover in stack else stack) for stack in points]
        for t, n in enumerate(mine):
            if n:
                board[square(self.mover, t)] = self.mover * n
        new_off = list(off)
        new_off[si(self.mover)] = my_off
        result = None
        if my_off == N_CHECKERS:
            result = (self.mover, "gammon", 2) if self.their_off == 0 else (self.mover, "single", 1)
        return (tuple(board), new_off[0], new_off[1], 0, 0, result)


def running_turn_leaves(rules: RunningRules, start: State, mover: str, dice: tuple,
                        refused: Optional[set] = None) -> dict:
    """Depth-first over (my path counts, my off, dice left); returns {leaf node: dice used}.

    ``refused``, when given, receives the names of the restrictions that refused a step.
    """
    points, offx, offo, barx, baro, _ = start
    if barx or baro:
        raise ValueError("the running games have no bar")
    off = (offx, offo)
    turn = _Turn(rules, points, off, mover, dice)
    total = len(dice)
    leaves: dict = {}
    seen = set()
    stack = [(turn.mine0, turn.my_off0, tuple(sorted(dice)))]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        mine, my_off, left = node
        if my_off == N_CHECKERS:  # the last checker off ends the game and the turn
            leaves[(turn.to_state(points, off, mine, my_off), left)] = total
            continue
        moved = False
        for die in sorted(set(left)):
            rest = _remove_one(left, die)
            for new_mine, new_off in turn.steps(mine, my_off, die):
                moved = True
                stack.append((new_mine, new_off, rest))
        if not moved:
            leaves[(turn.to_state(points, off, mine, my_off), left)] = total - len(left)
    if refused is not None:
        refused |= turn.refused
    return leaves


def start_breaks_restriction(data: dict) -> Optional[str]:
    """For a running-game position: the restriction of 8.4 the mover already breaks before moving.

    Such a board cannot arise in play (the opponent's moves cannot make the mover break one), and
    docs/rules.md does not say how a turn from it goes; the comparisons leave these boards out.
    """
    rules, (points, offx, offo, _, _, _), mover = parse_state(data)
    if not isinstance(rules, RunningRules):
        return None
    turn = _Turn(rules, points, (offx, offo), mover, (1, 2))
    return turn.broken(turn.mine0, turn.my_off0)


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


def analyse_turn(data: dict, d1: int, d2: int, refused: Optional[set] = None) -> tuple[set, str]:
    """The legal resulting states, and which case of the maximum-use rule decided them.

    The case is one of ``pass``, ``all`` (every die played, or the game ended),
    ``partial`` (doubles: 1-3 of the four), ``higher`` (only one die of a
    non-double: the higher), ``lower`` (only the lower one could be played),
    ``end-beats-rest`` (a game-ending step, with dice left unplayed, is the only
    way to "use all dice": it excludes the longer sequences that did not end it).
    In a running game, ``refused`` (a set, when given) receives the names of the
    restrictions of 8.4 (``runner``, ``head``, ``quarter``, ``prime``) that refused a step.
    """
    rules, start, mover = parse_state(data)
    dice = (d1, d1, d1, d1) if d1 == d2 else (d1, d2)
    if isinstance(rules, RunningRules):
        leaves = running_turn_leaves(rules, start, mover, dice, refused)
    else:
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


# -- Gul Bara: cascading doubles (docs/rules.md 10) ------------------------------------
#
# Written from docs/rules.md 10.1-10.3 alone. A Gul Bara position is read as a dict like the JSON of
# 10.3: ``points``, ``off``, ``turn``, and optionally ``turns`` ({"X": a, "O": b}), ``cascade``
# ({"number": k, "steps": s, "remainder": bool}) and ``rules`` (``plain_double_turns``,
# ``cascade_remainder``). The board moves are those of a running game (8.1-8.3, no restriction of
# 8.4), searched with :func:`running_turn_leaves` above. What comes on top is the bookkeeping of the
# turn: which numbers this decision plays, and who decides next, with which turn counts and which
# pending stage. That bookkeeping is written as a queue of the stages still owed: a pending stage
# ``(k, s)`` owes ``s`` steps of ``k`` now and four of each of ``k+1 .. 6`` after it.

GULBARA = {
    "paths": "parallel", "contact": "block", "start_rule": "none", "prime_rule": False,
    "full_start_quarter_allowed": True,
    "doubles": "cascade", "plain_double_turns": 3, "cascade_remainder": "lost",
}

STAGE = 4  # steps of a stage (a double's four moves)

Decision = tuple  # (next side or None, (turns X, turns O), pending (number, steps, remainder) or None)


def gulbara_options(data: dict) -> dict:
    options = dict(GULBARA)
    for key, value in (data.get("rules") or {}).items():
        if key not in options:
            raise ValueError(f"gulbara: unknown rule option {key!r}")
        options[key] = value
    if options["cascade_remainder"] not in ("lost", "opponent"):
        raise ValueError(f"cascade_remainder {options['cascade_remainder']!r}")
    if options["doubles"] not in ("plain", "cascade"):
        raise ValueError(f"doubles {options['doubles']!r}")
    return options


def _owed_stages(number: int, steps: int) -> list:
    """The stages a cascade still owes from a stage of ``steps`` steps of ``number`` on: [(k, s), ...]."""
    return [(number, steps)] + [(k, STAGE) for k in range(number + 1, 7)]


def _best_leaves(leaves: dict, start: State, numbers: tuple) -> dict:
    """Section 2's maximum-use rule on the leaves of one decision: {resulting state: steps counted as used}."""
    best = max(leaves.values())
    if best == 0:
        return {start: 0}
    kept = {(state, left) for (state, left), used in leaves.items() if used == best}
    if len(set(numbers)) == 2 and best == 1:
        # two different dice, only one playable: the higher one if it can be
        low = min(numbers)
        with_high = {(state, left) for state, left in kept if left == (low,)}
        if with_high:
            kept = with_high
    return {state: best for state, _ in kept}


def gulbara_decision(data: dict, roll: Optional[tuple] = None) -> dict:
    """Every legal resulting state of the present decision of a Gul Bara position, each with the next decision.

    ``roll`` is the two dice when the side to move rolls; with a pending stage (``cascade``) it must be None
    or ``(k, k)``. Returns ``{state: (next side, (turns X, turns O), pending stage)}`` with ``next side`` None
    when the game is over and ``pending stage`` a tuple ``(number, steps, remainder)`` or None (the next side
    rolls).
    """
    options = gulbara_options(data)
    cap = options["plain_double_turns"]
    rules = RunningRules(options["paths"], options["contact"], options["start_rule"], options["prime_rule"],
                         options["full_start_quarter_allowed"])
    mover = data["turn"]
    enemy = opp(mover)
    raw_turns = data.get("turns") or {}
    counts = {"X": int(raw_turns.get("X", 0)), "O": int(raw_turns.get("O", 0))}
    pending = data.get("cascade")
    _, start, _ = parse_state({**data, "variant": "fevga", "rules": {}})

    # 1. What this decision plays, and what the turn still owes after it when every step is played.
    if pending is not None:
        number, steps, remainder = pending["number"], pending.get("steps", STAGE), bool(pending.get("remainder", False))
        if roll is not None and tuple(roll) != (number, number):
            raise ValueError(f"a pending stage of {number} is played with no roll or ({number}, {number})")
        owed = _owed_stages(number, steps)
        cascading = True
    else:
        if roll is None or len(roll) != 2:
            raise ValueError("the side to move rolls: two dice needed")
        d1, d2 = roll
        before = counts[mover]
        counts[mover] = min(before + 1, cap)  # a roll begins a turn; counted up to plain_double_turns
        remainder = False
        cascading = options["doubles"] == "cascade" and d1 == d2 and before >= cap
        if cascading:
            owed = _owed_stages(d1, STAGE)
        elif d1 == d2:
            owed = [(d1, STAGE)]
        else:
            owed = None  # two different dice
    if owed is None:
        numbers = tuple(roll)
    else:
        numbers = (owed[0][0],) * owed[0][1]

    # 2. The board moves of this decision.
    leaves = running_turn_leaves(rules, start, mover, numbers)
    states = _best_leaves(leaves, start, numbers)

    # 3. Who decides next.
    turns = (counts["X"], counts["O"])
    out = {}
    for state, used in states.items():
        if state[5] is not None:
            out[state] = (None, turns, None)  # the game is over: no next decision
            continue
        if not cascading:
            out[state] = (enemy, turns, None)
            continue
        number, steps = owed[0]
        later = owed[1:]
        if used == steps:
            if later:  # on to the next stage, same side, no roll
                out[state] = (mover, turns, (later[0][0], later[0][1], remainder))
            elif remainder:  # the remainder is done: its player rolls for its own turn
                out[state] = (mover, turns, None)
            else:  # the cascade's last stage (6) played: the turn passes
                out[state] = (enemy, turns, None)
        else:
            # Not played in full: the cascade stops.
            if remainder:  # what the remainder's player cannot play is lost; then it rolls
                out[state] = (mover, turns, None)
            elif options["cascade_remainder"] == "lost":
                out[state] = (enemy, turns, None)
            else:  # the opponent plays what is left, stage by stage, before its own roll
                out[state] = (enemy, turns, (number, steps - used, True))
    return out
