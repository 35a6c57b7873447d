"""Cross-check the reference move generator against an independent one.

``tests/independent_rules.py`` implements the move rules of docs/rules.md a second
time, from the text alone. Here both generate every legal result of a turn
for the same position and dice, and the sets of resulting positions must be
equal. Positions come from three sources, for each variant:

(a) uniform random playouts from the start position,
(b) playouts that prefer pinning / hitting (and pinning mothers), so that
    pins, mother wins, draws, hits, the bar and entering are common,
(c) random end-game boards built directly as JSON (bearing off with pinned
    checkers inside and outside home, mothers pinned or about to be, checkers
    on the bar), checked with all 21 rolls, also under custom rule options
    (tapa without mother rules, plakoto with backgammons, backgammon without).

The running games of section 8 (``fevga``, ``narde``) go through the same
three sources: (a) uniform playouts, (b) playouts that prefer long runs of held
points on the opponent's path (so that the prime rule is tried), (c) random
boards (bearing off, checkers still at the start for the runner and head
rules, five of the starting quarter held, runs of 4-6 points), all 21 rolls
each; and custom options (fevga without the prime rule or with the head rule,
narde without a start rule or with fevga's). Boards on which the mover already
breaks a restriction of 8.4 cannot arise in play and are left out.

Hand-worked cases (``HAND_CASES``, ``RUNNING_HAND_CASES``; the latter each
checked for both colours) pin the independent implementation itself
to answers derived by hand from docs/rules.md. Each comparison also checks that the
reference lists every resulting position once and keeps ``turn`` = the mover.
The per-test line printed with ``-s`` gives counts and a coverage summary.

Everything is seeded (``random.Random``), so a failure reproduces exactly;
the message prints the position JSON, the dice and both set differences.
"""

from __future__ import annotations

import json
import os
import random
import sys
import traceback
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import independent_rules as ind  # noqa: E402

from tapa_ai.notation import position_from_json, position_to_json  # noqa: E402
from tapa_ai.rules import legal_moves, next_turn, start_position  # noqa: E402
from tapa_ai.rules.position import PositionError  # noqa: E402

VARIANTS = ("tapa", "plakoto", "backgammon")
RUNNING = ("fevga", "narde")
ALL_VARIANTS = VARIANTS + RUNNING
ALL_ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]
MAX_REPORTED = 4

# Sizes, tuned so that the whole file runs well under 90 s on two cores. TAPA_CROSSCHECK_SCALE=k
# multiplies every count by k for a deeper one-off run (the same seeds, so scale 1 is a prefix of it).
SCALE = max(1, int(os.environ.get("TAPA_CROSSCHECK_SCALE", "1")))
UNIFORM_GAMES = {v: n * SCALE for v, n in {"tapa": 24, "plakoto": 24, "backgammon": 24, "fevga": 2, "narde": 2}.items()}
BIASED_GAMES = {v: n * SCALE for v, n in {"tapa": 24, "plakoto": 24, "backgammon": 8, "fevga": 3, "narde": 2}.items()}
ENDGAME_BOARDS = 140 * SCALE
RUNNING_BOARDS = 22 * SCALE
CUSTOM_ENDGAME_BOARDS = 40 * SCALE
CUSTOM_RUNNING_BOARDS = 5 * SCALE
CUSTOM_RUNNING_GAMES = 1 * SCALE
CUSTOM_RUNNING_PLIES = 60
EXTRA_ROLLS_PER_PLAYOUT_POSITION = 1
MAX_PLIES = 400

STATS: dict[tuple[str, str], dict[str, int]] = {}


def canonical(position) -> tuple:
    result = position.result
    res = None if result is None else (result.winner, result.kind, result.points)
    return (tuple(position.points), position.off[0], position.off[1], position.bar[0], position.bar[1], res)


class Checker:
    """Compares both generators and collects mismatches (with full detail)."""

    def __init__(self, variant: str, source: str) -> None:
        self.variant = variant
        self.source = source
        self.mismatches: list[str] = []
        self.mismatch_count = 0
        self.positions = 0
        self.comparisons = 0
        self.rejected = 0
        self.decided = 0
        self.unreachable = 0
        self.moves = 0  # resulting positions (moves) compared, summed over the comparisons
        self.coverage: Counter = Counter()

    def report(self, position_json: dict, dice: tuple, text: str) -> None:
        self.mismatch_count += 1
        if len(self.mismatches) < MAX_REPORTED:
            self.mismatches.append(
                f"--- {self.variant}/{self.source} mismatch #{self.mismatch_count}\n"
                f"position: {json.dumps(position_json)}\n"
                f"dice: {dice[0]}-{dice[1]}  (positions below: stacks by X's point number = index + 1)\n{text}"
            )

    def compare(self, position, dice: tuple) -> list:
        """Compare both generators for one position and roll; returns the reference's moves."""
        self.comparisons += 1
        data = position_to_json(position)
        start = canonical(position)
        try:
            moves = legal_moves(position, dice)
        except Exception:  # a crash of the reference is a finding too
            self.report(data, dice, "reference raised:\n" + traceback.format_exc())
            return []
        refused: set = set()
        mine, case = ind.analyse_turn(data, dice[0], dice[1], refused)
        self.coverage.update(features(data, start, mine, case))
        self.coverage.update(f"refused:{name}" for name in refused)
        theirs_list = [canonical(m.position) for m in moves]
        theirs = set(theirs_list) if theirs_list else {start}
        self.moves += len(theirs)
        problems = []
        if mine != theirs:
            only_ref = theirs - mine
            only_ind = mine - theirs
            problems.append(
                f"only in reference ({len(only_ref)} of {len(theirs)}):\n{ind.describe(only_ref) or '    -'}\n"
                f"only in independent ({len(only_ind)} of {len(mine)}):\n{ind.describe(only_ind) or '    -'}"
            )
        if len(theirs_list) != len(set(theirs_list)):
            problems.append(f"reference lists the same resulting position twice: {len(theirs_list)} moves, "
                            f"{len(set(theirs_list))} distinct")
        wrong_turn = [m.position.turn for m in moves if m.position.turn != position.turn]
        if wrong_turn:
            problems.append(f"afterstates should keep turn={position.turn!r}, got {wrong_turn[:3]}")
        if problems:
            self.report(data, dice, "\n".join(problems))
        return moves

    def finish(self) -> None:
        STATS[(self.variant, self.source)] = {
            "positions": self.positions, "comparisons": self.comparisons,
            "moves": self.moves, "rejected": self.rejected, "decided": self.decided, "unreachable": self.unreachable,
            "mismatches": self.mismatch_count,
        }
        print(f"\n{self.variant}/{self.source}: {self.positions} positions, {self.comparisons} (position, dice) "
              f"comparisons ({self.moves} resulting positions), {self.rejected} boards rejected by the loader, {self.decided} already-decided boards "
              f"skipped, {self.unreachable} running-game boards skipped (the mover already breaks a restriction), "
              f"{self.mismatch_count} mismatches")
        print("  coverage: " + ", ".join(f"{k}={v}" for k, v in sorted(self.coverage.items())))
        assert not self.mismatch_count, (
            f"{self.mismatch_count} mismatches between the reference and the independent rules "
            f"({self.variant}, {self.source}); first {len(self.mismatches)}:\n\n" + "\n\n".join(self.mismatches)
        )


def features(data: dict, start: tuple, results: set, case: str) -> set:
    """What a (position, dice) comparison exercised, from the independent side (for coverage)."""
    mover = data["turn"]
    me = 0 if mover == "X" else 1
    enemy = ind.opp(mover)
    points = start[0]
    found = {f"case:{case}"}
    for state in results:
        if state[5] is not None:
            found.add(f"result:{state[5][1]}")
        if state[1 + me] > start[1 + me]:
            found.add("bear-off")
        if state[4 - me] > start[4 - me]:
            found.add("hit")
    if start[3 + me]:
        found.add("enter-from-bar")
    own = [(ind.own_point(mover, i), stack) for i, stack in enumerate(points) if mover in stack]
    pinned_points = [p for p, stack in own if stack[0] == mover and len(stack) > 1 and stack[-1] == enemy]
    if pinned_points and not start[3 + me]:
        if max(p for p, _ in own) <= 6:
            found.add("bear-off-zone-with-own-pinned")
            if max(pinned_points) == max(p for p, _ in own):
                found.add("own-pinned-on-highest-point")
        elif all(p <= 6 for p, _ in own if p not in pinned_points):
            found.add("pinned-straggler-blocks-bear-off")
    if any(len(stack) > 1 and stack[0] != stack[-1] for stack in points):
        found.add("pins-on-board")
    for side in "XO":
        if ind.mother_pinned(points, side):
            found.add("mother-pinned-at-start")
    return found


def roll(rng: random.Random) -> tuple:
    return (rng.randint(1, 6), rng.randint(1, 6))


# -- (a) and (b): playouts --------------------------------------------------------

def blocking(position, mover: str) -> float:
    """How much a resulting running-game position blocks the opponent (for biased playouts).

    Long runs of held points on the opponent's path score most, so that five in a row are common
    and the prime rule gets tried; any held point scores a little.
    """
    enemy = "O" if mover == "X" else "X"
    score = 0.0
    if position.result is not None:
        score += 10
    # the opponent's path from its 24-point: its path index u is my path index u + 12
    held = [mover in position.points[ind.square(enemy, u)] for u in range(24)]
    run = best = 0
    for flag in held:
        run = run + 1 if flag else 0
        best = max(best, run)
    score += 2 * best + 0.3 * sum(held)
    return score


def aggression(position, mover: str) -> float:
    """How much a resulting position pins/hits the opponent (for biased playouts)."""
    enemy = "O" if mover == "X" else "X"
    score = 0.0
    if position.result is not None:
        score += 10
    for stack in position.points:
        if len(stack) >= 2 and stack[0] == enemy:
            score += 1
    score += 1.5 * position.bar[0 if enemy == "X" else 1]
    # the enemy's mother: its single checker on its own 24-point
    mother_index = 23 if enemy == "X" else 0
    stack = position.points[mother_index]
    if len(stack) >= 2 and stack[0] == enemy:
        score += 4
    return score


def playout(checker: Checker, variant: str, rng: random.Random, biased: bool, overrides: dict | None = None,
            max_plies: int = MAX_PLIES) -> None:
    position = start_position(variant, turn=rng.choice("XO"))
    if overrides:
        data = position_to_json(position)
        data["rules"] = dict(overrides)
        position = position_from_json(data)
    score = blocking if variant in RUNNING else aggression
    for _ in range(max_plies):
        checker.positions += 1
        dice = roll(rng)
        for _ in range(EXTRA_ROLLS_PER_PLAYOUT_POSITION):
            checker.compare(position, roll(rng))
        moves = checker.compare(position, dice)
        if not moves:
            position = next_turn(position)
            continue
        if biased and rng.random() < 0.8:
            scores = [score(m.position, position.turn) for m in moves]
            top = max(scores)
            move = rng.choice([m for m, s in zip(moves, scores) if s == top])
        else:
            move = rng.choice(moves)
        if move.position.result is not None:
            return
        position = next_turn(move.position)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_uniform_playouts(variant):
    checker = Checker(variant, "uniform playouts")
    rng = random.Random(f"uniform-{variant}")
    for _ in range(UNIFORM_GAMES[variant]):
        playout(checker, variant, rng, biased=False)
    checker.finish()


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_pin_and_hit_biased_playouts(variant):
    """Pin/hit-biased for the contact games; block/prime-biased for the running games."""
    checker = Checker(variant, "biased playouts")
    rng = random.Random(f"biased-{variant}")
    for _ in range(BIASED_GAMES[variant]):
        playout(checker, variant, rng, biased=True)
    checker.finish()


# -- (c): random end-game boards ------------------------------------------------

def side_layout(rng: random.Random, role: str, pins: bool) -> dict[int, int]:
    """{own point: checkers} for one side; the rest of its 15 are off (or on the bar)."""
    if role == "bearer":
        on_board = rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 15]) if rng.random() < 0.8 else rng.randint(1, 15)
        weights = [6 if p <= 6 else 0 for p in range(1, 25)]
        layout = {}
        # sometimes a straggler or two outside home
        stragglers = rng.choice([0, 0, 0, 1, 1, 2])
        for _ in range(min(stragglers, on_board)):
            point = rng.choice(range(7, 25) if rng.random() < 0.5 else range(7, 13))
            layout[point] = layout.get(point, 0) + 1
        placed = sum(layout.values())
    elif role == "mother":
        on_board = rng.randint(2, 15)
        layout = {}
        mothers = rng.choice([0, 0, 1, 1, 1, 2])
        mothers = min(mothers, on_board)
        if mothers:
            layout[24] = mothers
        weights = [3 if 2 <= p <= 13 else 1 for p in range(1, 25)]
        weights[23] = 0
        placed = mothers
    else:  # "back": an opponent with checkers left in the other side's home board
        on_board = 15 if rng.random() < 0.3 else rng.randint(1, 15)
        layout = {}
        weights = [1 if p <= 18 else 4 for p in range(1, 25)]
        if rng.random() < 0.5:
            layout[24] = 1  # a lone mother to pin (or already pinned)
            weights[23] = 0
        placed = sum(layout.values())
    for _ in range(max(0, on_board - placed)):
        point = rng.choices(range(1, 25), weights)[0]
        layout[point] = layout.get(point, 0) + 1
    return layout


def random_endgame(rng: random.Random, variant: str) -> dict | None:
    pins = variant != "backgammon"
    mover = rng.choice("XO")
    enemy = "O" if mover == "X" else "X"
    kind = rng.random()
    if kind < 0.45:
        roles = {mover: "bearer", enemy: rng.choice(["back", "mother", "bearer"])}
    elif kind < 0.8:
        roles = {mover: "mother", enemy: rng.choice(["mother", "back"])}
    else:
        roles = {mover: rng.choice(["bearer", "back"]), enemy: rng.choice(["bearer", "back", "mother"])}
    counts = {"X": [0] * 24, "O": [0] * 24}
    for side, role in roles.items():
        for point, n in side_layout(rng, role, pins).items():
            counts[side][ind.abs_index(side, point)] += n
    bar = {"X": 0, "O": 0}
    if not pins:
        for side in "XO":
            if rng.random() < 0.25:
                on_board = sum(counts[side])
                bar[side] = min(rng.choice([1, 1, 2, 3]), 15 - on_board)
    points = []
    for index in range(24):
        x, o = counts["X"][index], counts["O"][index]
        if x and o:
            if not pins:
                return None
            if x == 1 and (o > 1 or rng.random() < 0.5):
                points.append("X" + "O" * o)
            elif o == 1:
                points.append("O" + "X" * x)
            else:
                return None
        else:
            points.append("X" * x + "O" * o)
    off = {side: 15 - sum(counts[side]) - bar[side] for side in "XO"}
    if min(off.values()) < 0 or max(off.values()) >= 15:
        return None
    data = {"variant": variant, "points": points, "off": off, "turn": mover}
    if not pins:
        data["bar"] = bar
    return data


def already_decided(data: dict) -> bool:
    """A pin-game board on which the mother rules have already ended the game (not a reachable turn)."""
    rules = ind.rules_of(data)
    if not (rules.pins and rules.mother_points):
        return False
    points = tuple(data["points"])
    pinned = {side: ind.mother_pinned(points, side) for side in "XO"}
    if pinned["X"] and pinned["O"]:
        return True
    for side in "XO":
        enemy = ind.opp(side)
        if pinned[enemy] and side not in points[ind.abs_index(side, 24)]:
            return True
    return False


def endgames(checker: Checker, variant: str, boards: int, seed: str, overrides: dict | None = None) -> None:
    rng = random.Random(seed)
    built = 0
    while built < boards:
        data = random_endgame(rng, variant)
        if data is None:
            continue
        if overrides:
            data["rules"] = dict(overrides)
        if already_decided(data):
            checker.decided += 1
            continue
        try:
            position = position_from_json(data)
        except PositionError:
            checker.rejected += 1
            continue
        built += 1
        checker.positions += 1
        for dice in ALL_ROLLS:
            checker.compare(position, dice)


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_endgames(variant):
    checker = Checker(variant, "end-game boards")
    endgames(checker, variant, ENDGAME_BOARDS, f"endgame-{variant}")
    checker.finish()
    # keep the boards hard: every rule these boards are meant for must have been exercised
    wanted = ["case:pass", "case:higher", "case:lower", "case:partial", "bear-off", "result:single",
              "result:gammon"]
    if variant == "backgammon":
        wanted += ["enter-from-bar", "hit", "result:backgammon"]
    else:
        wanted += ["result:mother", "result:draw", "case:end-beats-rest", "bear-off-zone-with-own-pinned",
                   "own-pinned-on-highest-point", "pinned-straggler-blocks-bear-off", "mother-pinned-at-start"]
        if variant == "tapa":
            wanted.append("result:backgammon")
    missing = [name for name in wanted if not checker.coverage[name]]
    assert not missing, f"the end-game boards no longer exercise {missing}"


CUSTOM_RULES = [
    ("tapa", {"mother_points": 0}),
    ("plakoto", {"backgammons": True}),
    ("backgammon", {"backgammons": False}),
]


@pytest.mark.parametrize("variant, overrides", CUSTOM_RULES, ids=lambda x: str(x))
def test_random_endgames_custom_rules(variant, overrides):
    """The rule options that change move results, away from their preset values."""
    checker = Checker(variant, f"end-game boards {overrides}")
    endgames(checker, variant, CUSTOM_ENDGAME_BOARDS, f"custom-{variant}-{sorted(overrides)}", overrides)
    checker.finish()


# -- a few hand-made cases where the text of docs/rules.md is explicit ------------------

def _board(variant: str, layout: str, turn: str = "X", bar: dict | None = None) -> dict:
    points = [""] * 24
    for token in layout.split():
        where, _, stack = token.partition(":")
        points[int(where) - 1] = stack
    bar = bar or {"X": 0, "O": 0}
    off = {s: 15 - sum(p.count(s) for p in points) - bar[s] for s in "XO"}
    data = {"variant": variant, "points": points, "off": off, "turn": turn}
    if variant == "backgammon":
        data["bar"] = bar
    return data


# (variant, layout, turn, bar, dice, expected): the layout uses X's point numbers
# (absolute index + 1), stacks bottom to top; ``expected`` lists every legal
# result as (layout, bar, result), worked out by hand from docs/rules.md.
HAND_CASES = [
    # bearing off: a pinned checker on the highest point blocks the 6; only the 1 plays (3.3)
    ("tapa", "5:XO 3:XX 19:OOOOOOOOOOOOOO", "X", None, (6, 1),
     [("5:XO 3:X 2:X 19:OOOOOOOOOOOOOO", None, None)]),
    # a pinned checker outside home prevents bearing off: the 3 cannot be played
    ("plakoto", "8:XO 3:XX 2:X 20:OOOOOOOOOOOOOO", "X", None, (3, 2),
     [("8:XO 3:X 2:X 1:X 20:OOOOOOOOOOOOOO", None, None)]),
    # pinning the mother with no checker left on the 24-point wins at once (3.4)
    ("tapa", "1:O 7:X 8:XX 13:OOOOOOOOOOOOOO", "X", None, (6, 5),
     [("1:OX 8:XX 13:OOOOOOOOOOOOOO", None, ("X", "mother", 3)),
      ("1:OX 3:X 8:X 13:OOOOOOOOOOOOOO", None, ("X", "mother", 3)),
      ("1:O 2:XX 8:X 13:OOOOOOOOOOOOOO", None, None),
      ("1:O 2:X 3:X 7:X 13:OOOOOOOOOOOOOO", None, None)]),
    # ... with a checker still on the 24-point, the win comes at the step that moves it off
    ("plakoto", "1:O 7:X 8:XX 13:OOOOOOOOOOOOOO 24:X", "X", None, (6, 5),
     [("1:OX 8:XX 13:OOOOOOOOOOOOOO 19:X", None, ("X", "mother", 2)),
      ("1:OX 3:X 8:X 13:OOOOOOOOOOOOOO 24:X", None, None),
      ("1:O 2:X 8:XX 13:OOOOOOOOOOOOOO 18:X", None, None),
      ("1:O 3:X 7:X 8:X 13:OOOOOOOOOOOOOO 18:X", None, None),
      ("1:O 2:X 7:X 8:X 13:OOOOOOOOOOOOOO 19:X", None, None),
      ("1:O 2:XX 8:X 13:OOOOOOOOOOOOOO 24:X", None, None),
      ("1:O 2:X 3:X 7:X 13:OOOOOOOOOOOOOO 24:X", None, None)]),
    # both mothers pinned: a draw, checked before the mother win
    ("tapa", "1:O 7:X 8:XX 13:OOOOOOOOOOOOO 24:XO", "X", None, (6, 5),
     [("1:OX 8:XX 13:OOOOOOOOOOOOO 24:XO", None, (None, "draw", 0)),
      ("1:OX 3:X 8:X 13:OOOOOOOOOOOOO 24:XO", None, (None, "draw", 0)),
      ("1:O 2:XX 8:X 13:OOOOOOOOOOOOO 24:XO", None, None),
      ("1:O 2:X 3:X 7:X 13:OOOOOOOOOOOOO 24:XO", None, None)]),
    # a game-ending step with the lower die counts as using both dice, so it beats
    # bearing off with the higher die (after which the 1 cannot be played)
    ("tapa", "1:O 2:X 3:XO 19:O", "X", None, (1, 2),
     [("1:OX 3:XO 19:O", None, ("X", "mother", 3))]),
    # the last checker borne off ends the game; the loser has borne off none and
    # has a checker (released from the pin) in the winner's home board: backgammon
    ("tapa", "1:X 2:OX 20:OOOOOOOOOOOOOO", "X", None, (6, 6),
     [("2:O 20:OOOOOOOOOOOOOO", None, ("X", "backgammon", 3))]),
    # ... the same in plakoto, which has no backgammons: gammon
    ("plakoto", "1:X 2:OX 20:OOOOOOOOOOOOOO", "X", None, (6, 6),
     [("2:O 20:OOOOOOOOOOOOOO", None, ("X", "gammon", 2))]),
    # backgammon: both bar checkers must enter first; the 6 is closed, so only the 1 (hitting)
    ("backgammon", "6:XXXXX 8:XXX 13:XXXXX 19:OO 20:OO 21:OO 22:OO 23:OO 24:O", "X", {"X": 2, "O": 4}, (6, 1),
     [("6:XXXXX 8:XXX 13:XXXXX 19:OO 20:OO 21:OO 22:OO 23:OO 24:X", {"X": 1, "O": 5}, None)]),
    # ... once the last one has entered, the other die moves any checker
    ("backgammon", "6:XXXXX 8:XXX 13:XXXXX 19:OO 20:OO 21:OO 22:OO 23:OO 24:O", "X", {"X": 1, "O": 4}, (5, 1),
     [("6:XXXXX 8:XXXX 13:XXXX 19:OO 20:OO 21:OO 22:OO 23:OO 24:X", {"X": 0, "O": 5}, None),
      ("3:X 6:XXXXX 8:XX 13:XXXXX 19:OO 20:OO 21:OO 22:OO 23:OO 24:X", {"X": 0, "O": 5}, None),
      ("1:X 6:XXXX 8:XXX 13:XXXXX 19:OO 20:OO 21:OO 22:OO 23:OO 24:X", {"X": 0, "O": 5}, None)]),
]


@pytest.mark.parametrize("case", HAND_CASES, ids=lambda c: f"{c[0]}-{c[4][0]}{c[4][1]}")
def test_hand_cases(case):
    variant, layout, turn, bar, dice, expected = case
    data = _board(variant, layout, turn, bar)
    want = set()
    for after_layout, after_bar, result in expected:
        after = _board(variant, after_layout, turn, after_bar)
        points, offx, offo, barx, baro, _ = ind.parse_state(after)[1]
        want.add((points, offx, offo, barx, baro, result))
    mine = ind.legal_results(data, *dice)
    assert mine == want, (
        f"independent rules disagree with the hand-worked answer\nonly independent:\n{ind.describe(mine - want)}"
        f"\nonly expected:\n{ind.describe(want - mine)}"
    )
    checker = Checker(variant, "hand cases")
    checker.positions += 1
    checker.compare(position_from_json(data), dice)
    checker.finish()


# -- the running games (section 8): hand cases ---------------------------------------
#
# Layouts use X's point numbers (absolute index + 1) with ``X*14`` for ``XXXXXXXXXXXXXX``;
# every case is written with X to move and is also checked mirrored, with O to move
# (the board turned by 12 points and the colours swapped: X's point p is O's point p).

def _stack(text: str) -> str:
    side, star, count = text.partition("*")
    return side * int(count) if star else side


def _running_board(variant: str, layout: str, turn: str = "X", rules: dict | None = None) -> dict:
    points = [""] * 24
    for token in layout.split():
        where, _, stack = token.partition(":")
        points[int(where) - 1] = _stack(stack)
    off = {s: 15 - sum(p.count(s) for p in points) for s in "XO"}
    data = {"variant": variant, "points": points, "off": off, "bar": {"X": 0, "O": 0}, "turn": turn}
    if rules:
        data["rules"] = dict(rules)
    return data


def _mirror(layout: str) -> str:
    """The same position for the other colour: X's point p is O's point p (8.1)."""
    swap = str.maketrans("XO", "OX")
    tokens = []
    for token in layout.split():
        where, _, stack = token.partition(":")
        p = int(where)
        tokens.append(f"{p + 12 if p <= 12 else p - 12}:{stack.translate(swap)}")
    return " ".join(tokens)


START = "24:X*15 12:O*15"
PASS = "pass"  # expected: the turn is passed (the position unchanged)

# (name, variant, rule overrides, layout, dice, expected): ``expected`` lists every legal result as
# (layout, result) or is PASS; each worked out by hand from docs/rules.md section 8 (reasoning in the comments).
RUNNING_HAND_CASES = [
    # -- first turns. Fevga: the runner rule lets one checker only leave the 24-point until one
    # stands on points 1-11; the opponent's 15 on its 24-point close X's 12-point.
    ("fevga-start-65", "fevga", None, START, (6, 5),
     [("24:X*14 13:X 12:O*15", None)]),                        # 24/18/13 or 24/19/13; 24/18 24/19 = two off
    ("fevga-start-66", "fevga", None, START, (6, 6),
     [("24:X*14 18:X 12:O*15", None)]),                        # 18/12 closed, a second checker may not leave
    ("fevga-start-44", "fevga", None, START, (4, 4),
     [("24:X*14 16:X 12:O*15", None)]),                        # 24/20/16, 16/12 closed
    ("fevga-start-33", "fevga", None, START, (3, 3),
     [("24:X*14 15:X 12:O*15", None)]),                        # 24/21/18/15, 15/12 closed: three of four
    ("fevga-start-21", "fevga", None, START, (2, 1),
     [("24:X*14 21:X 12:O*15", None)]),
    # Narde: the head rule: one checker leaves the 24-point, two on a first turn with 6-6, 4-4, 3-3.
    ("narde-start-65", "narde", None, START, (6, 5),
     [("24:X*14 13:X 12:O*15", None)]),
    ("narde-start-66", "narde", None, START, (6, 6),
     [("24:X*13 18:X*2 12:O*15", None)]),                      # two leave; 18/12 closed: two of four
    ("narde-start-44", "narde", None, START, (4, 4),
     [("24:X*13 16:X*2 12:O*15", None)]),                      # each 24/20/16 (16/12 closed)
    ("narde-start-33", "narde", None, START, (3, 3),
     [("24:X*13 18:X*2 12:O*15", None),                        # 2 + 2 steps
      ("24:X*13 21:X 15:X 12:O*15", None)]),                   # 3 + 1 steps (15/12 closed)
    ("narde-start-55", "narde", None, START, (5, 5),
     [("24:X*14 4:X 12:O*15", None)]),                         # 5-5 is no exception: one runs 24/19/14/9/4
    ("narde-start-22", "narde", None, START, (2, 2),
     [("24:X*14 16:X 12:O*15", None)]),
    # -- the runner (fevga). On X's 12-point it has not passed; from 11 on it has, and a second
    # checker may leave in the same turn.
    ("fevga-runner-on-12", "fevga", None, "24:X*14 12:X 14:O*15", (2, 1),
     [("24:X*14 9:X 14:O*15", None),                           # 12/10/9 or 12/11/9
      ("24:X*13 22:X 11:X 14:O*15", None),                     # 12/11 (passed), then 24/22
      ("24:X*13 23:X 10:X 14:O*15", None)]),                   # 12/10 (passed), then 24/23; 24/2x first: no
    ("fevga-runner-reaches-12", "fevga", None, "24:X*14 16:X 2:O*15", (3, 1),
     [("24:X*14 12:X 2:O*15", None)]),                         # on 12 it has not passed: 24/23, 24/21 refused
    ("fevga-runner-reaches-11", "fevga", None, "24:X*14 16:X 2:O*15", (5, 1),
     [("24:X*14 10:X 2:O*15", None),                           # 16/11/10, 16/15/10
      ("24:X*13 23:X 11:X 2:O*15", None)]),                    # 16/11 then 24/23; 16/15 then 24/19 refused
    ("fevga-runner-blocked", "fevga", None, "24:X*14 13:X 12:O*15", (1, 1),
     PASS),                                                    # 13/12 closed, 24/23 = two off, none passed
    ("narde-same-board", "narde", None, "24:X*14 13:X 12:O*15", (1, 1),
     [("24:X*13 20:X 13:X 12:O*15", None)]),                   # one leaves the head and takes all four
    ("fevga-intermediate-closed", "fevga", None, "24:X*14 16:X 11:O*7 10:O*8", (6, 5),
     PASS),                                                    # 16/10 and 16/11 closed: 16/5 impossible
    ("fevga-runner-66", "fevga", None, "24:X*14 20:X 11:O*8 10:O*7", (6, 6),
     [("24:X*13 18:X 2:X 11:O*8 10:O*7", None),                # 20/14/8 first (passed), then 8/2 24/18
      ("24:X*13 12:X 8:X 11:O*8 10:O*7", None),                # ... or 24/18/12
      ("24:X*12 18:X*2 8:X 11:O*8 10:O*7", None)]),            # ... or 24/18(2)
    # -- the head (narde) on a later turn: one checker only leaves it, even with 6-6.
    ("narde-head-later-66", "narde", None, "24:X*14 20:X 11:O*8 10:O*7", (6, 6),
     [("24:X*13 18:X 2:X 11:O*8 10:O*7", None),                # 20/14/8/2 24/18
      ("24:X*13 12:X 8:X 11:O*8 10:O*7", None),                # 20/14/8 24/18/12
      ("24:X*13 14:X 6:X 11:O*8 10:O*7", None)]),              # 20/14 24/18/12/6
    # -- maximum use when a restriction refuses the other die: the higher die if it plays, else the lower
    ("narde-head-higher-die", "narde", None, "24:X*14 3:X 15:O*15", (5, 4),
     [("24:X*13 19:X 3:X 15:O*15", None)]),                    # 19/15 and 20/15 closed, second head refused
    ("narde-head-lower-die", "narde", None, "24:X*14 3:X 19:O 15:O*14", (5, 4),
     [("24:X*13 20:X 3:X 19:O 15:O*14", None)]),               # 24/19 closed: only the 4
    # -- the prime rule. X's 5 4 3 2 1 24 are O's 17..12 (k = 12), a run across X's 24 and 1.
    ("narde-prime-across-24-1", "narde", None,
     "24:X*2 11:X 4:X 3:X 2:X 1:X*9 12:O*11 10:O 9:O 8:O 7:O", (6, 5),
     [("24:X 13:X 11:X 4:X 3:X 2:X 1:X*9 12:O*11 10:O 9:O 8:O 7:O", None),   # 24/18/13
      ("24:X 18:X 6:X 4:X 3:X 2:X 1:X*9 12:O*11 10:O 9:O 8:O 7:O", None)]),  # 24/18 11/6
    # (11/5 with 24 still held shuts O in: 11/5 24/19 is refused at either step; 24/18 24/19 two off the head)
    ("narde-prime-rule-off", "narde", {"prime_rule": False},
     "24:X*2 11:X 4:X 3:X 2:X 1:X*9 12:O*11 10:O 9:O 8:O 7:O", (6, 5),
     [("24:X 13:X 11:X 4:X 3:X 2:X 1:X*9 12:O*11 10:O 9:O 8:O 7:O", None),
      ("24:X 18:X 6:X 4:X 3:X 2:X 1:X*9 12:O*11 10:O 9:O 8:O 7:O", None),
      ("24:X 19:X 5:X 4:X 3:X 2:X 1:X*9 12:O*11 10:O 9:O 8:O 7:O", None)]),
    ("narde-prime-with-checker-ahead", "narde", None,
     "24:X*2 11:X 4:X 3:X 2:X 1:X*9 12:O*10 20:O 10:O 9:O 8:O 7:O", (6, 5),   # O on its 8 < 12: ahead
     [("24:X 13:X 11:X 4:X 3:X 2:X 1:X*9 12:O*10 20:O 10:O 9:O 8:O 7:O", None),
      ("24:X 18:X 6:X 4:X 3:X 2:X 1:X*9 12:O*10 20:O 10:O 9:O 8:O 7:O", None),
      ("24:X 19:X 5:X 4:X 3:X 2:X 1:X*9 12:O*10 20:O 10:O 9:O 8:O 7:O", None)]),
    # X's 18..13 are O's 6..1 (k = 1): only a checker borne off is ahead of them
    ("narde-prime-in-their-home", "narde", None,
     "24:X 17:X 16:X 15:X 14:X 13:X 1:X*9 12:O*10 11:O 10:O 9:O 8:O 7:O", (6, 6),
     PASS),                                                    # 24/18 shuts O in; everything else closed
    ("narde-prime-one-borne-off", "narde", None,
     "24:X 17:X 16:X 15:X 14:X 13:X 1:X*9 12:O*9 11:O 10:O 9:O 8:O 7:O", (6, 6),
     [("18:X 17:X 16:X 15:X 14:X 13:X 1:X*9 12:O*9 11:O 10:O 9:O 8:O 7:O", None)]),
    # X's 15 14 13 12 11 10 are O's 3 2 1 24 23 22: not six that follow one another on O's path
    ("fevga-no-prime-across-12-13", "fevga", None,
     "18:X 15:X 14:X 13:X 11:X 10:X 1:X*9 9:O*10 8:O 7:O 6:O 5:O 4:O", (6, 6),
     [("15:X 14:X 13:X 12:X 11:X 10:X 1:X*9 9:O*10 8:O 7:O 6:O 5:O 4:O", None)]),
    # -- the starting quarter: refused in fevga, allowed in narde (O's checkers ahead: no prime)
    ("fevga-start-quarter", "fevga", None,
     "24:X*2 23:X 22:X 21:X 20:X 1:X*9 18:O*3 17:O*3 16:O*3 15:O*3 14:O*3", (5, 5),
     PASS),
    ("narde-start-quarter", "narde", None,
     "24:X*2 23:X 22:X 21:X 20:X 1:X*9 18:O*3 17:O*3 16:O*3 15:O*3 14:O*3", (5, 5),
     [("24:X 23:X 22:X 21:X 20:X 19:X 1:X*9 18:O*3 17:O*3 16:O*3 15:O*3 14:O*3", None)]),
    ("fevga-start-quarter-allowed", "fevga", {"full_start_quarter_allowed": True},
     "24:X*2 23:X 22:X 21:X 20:X 1:X*9 18:O*3 17:O*3 16:O*3 15:O*3 14:O*3", (5, 5),
     [("23:X 22:X 21:X 20:X 19:X*2 1:X*9 18:O*3 17:O*3 16:O*3 15:O*3 14:O*3", None)]),  # 24/19(2): no head
    # rule in fevga, and two dice beat one (19/14 and the rest closed)
    # -- bearing off (8.3) and results (8.5)
    ("fevga-bear-off-gammon", "fevga", None, "5:X 3:X 12:O*15", (6, 4),
     [("12:O*15", ("X", "gammon", 2)),                         # 5/off (6 > 5), then 3/off (4 > 3, highest)
      ("1:X 12:O*15", None)]),                                 # 5/1 then 3/off; 3/off with the 4 first: no
    ("fevga-bear-off-single", "fevga", None, "5:X 3:X 12:O*14", (6, 4),
     [("12:O*14", ("X", "single", 1)),
      ("1:X 12:O*14", None)]),
    ("fevga-bear-off-not-all-home", "fevga", None, "7:X 5:X 12:O*15", (6, 5),
     [("1:X 12:O*15", None),                                   # 7/1 then 5/off
      ("2:X 12:O*15", None)]),                                 # 7/2 then 5/off with the 6; 5/off first: no
    ("narde-bear-off-ends-turn", "narde", None, "6:X 2:X 1:X 12:O*15", (6, 6),
     [("12:O*15", ("X", "gammon", 2))]),                       # three of the four end the game
]


def _expected_states(variant, layout, turn, rules, expected) -> set:
    if expected == PASS:
        return {ind.parse_state(_running_board(variant, layout, turn, rules))[1]}
    want = set()
    for after_layout, result in expected:
        points, offx, offo, barx, baro, _ = ind.parse_state(_running_board(variant, after_layout, turn, rules))[1]
        want.add((points, offx, offo, barx, baro, result))
    return want


def _running_hand_instances():
    for name, variant, rules, layout, dice, expected in RUNNING_HAND_CASES:
        yield pytest.param(variant, rules, layout, "X", dice, expected, id=f"{name}-X")
        mirrored = expected if expected == PASS else [
            (_mirror(after), None if result is None else (ind.opp(result[0]),) + tuple(result[1:]))
            for after, result in expected]
        yield pytest.param(variant, rules, _mirror(layout), "O", dice, mirrored, id=f"{name}-O")


@pytest.mark.parametrize("variant, rules, layout, turn, dice, expected", list(_running_hand_instances()))
def test_running_hand_cases(variant, rules, layout, turn, dice, expected):
    """The independent rules against answers worked out by hand (both colours)."""
    data = _running_board(variant, layout, turn, rules)
    assert ind.start_breaks_restriction(data) is None
    want = _expected_states(variant, layout, turn, rules, expected)
    mine = ind.legal_results(data, *dice)
    assert mine == want, (
        f"independent rules disagree with the hand-worked answer\nonly independent:\n{ind.describe(mine - want)}"
        f"\nonly expected:\n{ind.describe(want - mine)}"
    )


@pytest.mark.parametrize("variant, rules, layout, turn, dice, expected", list(_running_hand_instances()))
def test_running_hand_cases_vs_reference(variant, rules, layout, turn, dice, expected):
    """The same hand-worked positions through the reference generator."""
    data = _running_board(variant, layout, turn, rules)
    checker = Checker(variant, "hand cases")
    checker.positions += 1
    checker.compare(position_from_json(data), dice)
    checker.finish()


# -- the running games: random boards -------------------------------------------------

def running_layout(rng: random.Random, role: str) -> tuple[list[int], int]:
    """(checkers by the side's own path index 0..23, checkers off) for one side of a running game.

    Path index t = 24 - own point: 0 is the 24-point (the start), 18..23 the home board.
    """
    counts = [0] * 24
    if role == "bearer":            # home (mostly), a straggler or two, some off
        on_board = rng.choice([1, 2, 3, 4, 6, 8, 11, 15]) if rng.random() < 0.8 else rng.randint(1, 15)
        for _ in range(on_board):
            if rng.random() < 0.12:
                counts[rng.randint(6, 17)] += 1
            else:
                counts[rng.randint(18, 23)] += 1
        return counts, 15 - on_board
    if role == "starter":           # still around the start: the runner and head rules
        away = rng.choice([0, 1, 1, 2, 3, 5])
        for _ in range(away):
            # mostly before the opponent's start (t <= 12: not passed), sometimes just past it
            counts[rng.randint(1, 12) if rng.random() < 0.75 else rng.randint(13, 16)] += 1
        counts[0] = 15 - away
        return counts, 0
    if role == "quarter":           # five of the six points 24..19 held, one checker past the start
        gap = rng.randint(0, 5)
        for t in range(6):
            if t != gap:
                counts[t] += 1
        counts[rng.randint(13, 23)] += 1
        for _ in range(9):
            counts[rng.choice([0, 0, rng.randint(0, 23)])] += 1
        return counts, 0
    if role == "primer":            # a run of held points, 4-6 long, the rest anywhere
        length = rng.choice([4, 5, 5, 6])
        first = rng.randint(1, 23 - length)
        for t in range(first, first + length):
            counts[t] += 1
        spare = 15 - length
        for _ in range(spare):
            counts[rng.choice([rng.randint(0, 23), rng.randint(0, 23), 0, rng.randint(first, 23)])] += 1
        return counts, 0
    # "spread": anywhere, perhaps some off
    on_board = 15 if rng.random() < 0.6 else rng.randint(5, 15)
    for _ in range(on_board):
        counts[rng.randint(0, 23)] += 1
    return counts, 15 - on_board


def random_running_board(rng: random.Random, variant: str) -> dict | None:
    mover = rng.choice("XO")
    enemy = "O" if mover == "X" else "X"
    roles = {
        mover: rng.choice(["bearer", "bearer", "starter", "quarter", "primer", "primer", "spread"]),
        enemy: rng.choice(["bearer", "starter", "primer", "spread", "spread"]),
    }
    points = [""] * 24
    off = {}
    for side, role in roles.items():
        counts, off[side] = running_layout(rng, role)
        for t, n in enumerate(counts):
            if n:
                index = ind.square(side, t)
                if points[index]:
                    return None  # both sides on one point: draw again
                points[index] = side * n
    if max(off.values()) >= 15:
        return None
    return {"variant": variant, "points": points, "off": off, "bar": {"X": 0, "O": 0}, "turn": mover}


def running_boards(checker: Checker, variant: str, boards: int, seed: str, overrides: dict | None = None) -> None:
    rng = random.Random(seed)
    built = 0
    while built < boards:
        data = random_running_board(rng, variant)
        if data is None:
            continue
        if overrides:
            data["rules"] = dict(overrides)
        if ind.start_breaks_restriction(data) is not None:
            checker.unreachable += 1
            continue
        try:
            position = position_from_json(data)
        except PositionError:
            checker.rejected += 1
            continue
        built += 1
        checker.positions += 1
        for dice in ALL_ROLLS:
            checker.compare(position, dice)


@pytest.mark.parametrize("variant", RUNNING)
def test_random_running_boards(variant):
    checker = Checker(variant, "random boards")
    running_boards(checker, variant, RUNNING_BOARDS, f"running-{variant}")
    checker.finish()
    wanted = ["case:pass", "case:higher", "case:lower", "case:partial", "case:all", "bear-off", "result:single",
              "result:gammon", "refused:prime"]
    wanted += ["refused:runner", "refused:quarter"] if variant == "fevga" else ["refused:head"]
    missing = [name for name in wanted if not checker.coverage[name]]
    assert not missing, f"the random boards no longer exercise {missing}"


CUSTOM_RUNNING_RULES = [
    ("fevga", {"prime_rule": False}),
    ("fevga", {"start_rule": "head", "full_start_quarter_allowed": True}),
    ("narde", {"start_rule": "none"}),
    ("narde", {"start_rule": "runner", "full_start_quarter_allowed": False}),
]


@pytest.mark.parametrize("variant, overrides", CUSTOM_RUNNING_RULES, ids=lambda x: str(x))
def test_running_custom_rules(variant, overrides):
    """The running games' options away from their presets: random boards and a few playouts."""
    checker = Checker(variant, f"custom rules {overrides}")
    running_boards(checker, variant, CUSTOM_RUNNING_BOARDS, f"custom-{variant}-{sorted(overrides.items())}",
                   overrides)
    rng = random.Random(f"custom-playouts-{variant}-{sorted(overrides.items())}")
    for _ in range(CUSTOM_RUNNING_GAMES):
        playout(checker, variant, rng, biased=True, overrides=overrides, max_plies=CUSTOM_RUNNING_PLIES)
    checker.finish()
