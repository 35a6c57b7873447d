"""The compiled whole-turn move generator (numba): a batch slice in, all legal afterstates out.

One call of :func:`generate_range` handles positions ``start..stop-1`` of a
:class:`~tapa_ai.movegen.batch.PositionBatch` (passed as its arrays) on one
thread; ``nogil=True`` lets :mod:`tapa_ai.movegen.generate` run slices on
several threads at once.

Per position the turn is searched depth first, one die per step, like the
reference generator, on one board that is changed in place and changed back
(make/unmake). What makes it fast (docs/movegen.md has the measurements):

- **Bit masks for step generation.** Closed points never change during a
  turn (a point is closed to the mover when it holds two or more opposing
  checkers or pins one of the mover's, in the running games when it holds
  any opposing checker, and the mover's own steps change neither), so they
  are one 24-bit mask per position; the points with a movable checker are a
  mask kept up to date by every step. The legal sources of a die are then a
  few shifts and ands.
- **An exact packed key.** Each point's stack is 7 bits (top count + 16,
  plus 32 x (pin + 1)); three int64 words hold the 24 points, the bars and
  the mover's off count. The key *is* the position, is updated by adding
  deltas per step, and two afterstates are equal exactly when their three
  words are: deduplication is an open-addressing table over keys, with no
  board comparison and no collision risk.
- **Doubles in canonical order.** Four equal dice can be played in any
  order of their source points, so the search only plays sources that do
  not increase, as GNU Backgammon does. One thing breaks that argument: a
  mother win or draw ends the turn in the middle (docs/rules.md 2, Decision), and
  then which steps came before the ending one matters. That needs the
  opponent's mother alone on the mover's 1-point, pinned already or a few
  steps of the die away from a mover's checker, and the mover's mother pinned
  (draw) or at most four checkers on the mover's 24-point; for those
  positions the search plays every order and skips states already expanded
  at the same depth (a second key table).
- **Fewer duplicate sequences for two different dice.** The low-die-first
  order skips a high second step that was already legal at the start and
  did not end the game there: the high-first order reaches the same
  position (the low step stays legal after it: closed points are fixed,
  the high step only moves forward and cannot free a bear-off from above).
- **The running games' restrictions (docs/rules.md 8.4)**, checked on the
  position after every step like the reference: a candidate step is kept
  only if the masks after it (held points, the 24-point's count, off) break
  none (:func:`_unrestricted`). Per position, :func:`_restriction_watch`
  first drops every rule that no position of this turn can break (the head
  with at most the allowed checkers on it; the runner once passed; the
  prime when no run of six with every opposing checker behind it is within
  the turn's new points; the quarter likewise), so most middle-game
  positions run the plain search, unfiltered. Pruning: the head rule counts
  the checkers that left the 24-point, the same for every order of the same
  steps, so canonical order and the skip stay exact under it. The runner,
  prime and quarter rules depend on the board after each step, and one
  order of the same steps can pass where another fails (fevga: 24/19
  then 20/15 fills the quarter on its first step, 20/15 then 24/19 does
  not): where one of them is watched, doubles are searched in every order
  (the second key table, as for mid-turn mothers). Two different dice keep
  the skip: its high-first order's only intermediate position is the high
  step legal at the start, restrictions included, and its end position is
  the low-first one's, which passed them.
- **Whole-turn rules as bookkeeping on the leaves.** Each distinct afterstate
  remembers the most dice any sequence reaching it used and whether a
  one-die sequence reaching it played the higher die; the maximum-use and
  higher-die rules are a filter over those leaves at the end.

Kept whole: its njit functions are one depth-first search (steps, make and
unmake, the turn's filters, the key table) that call each other and are
compiled and cached together; split, they would be read apart but never used
apart.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Result codes of an afterstate (the winner is the mover for every code but NONE and DRAW).
from ..rules.outcomes import RESULT_BACKGAMMON, RESULT_DRAW, RESULT_GAMMON, RESULT_MOTHER, RESULT_NONE, RESULT_SINGLE

# Status codes of an input position.
STATUS_OK = 0
STATUS_GAME_OVER = 1
STATUS_BAD_DICE = 2

MAX_STEPS = 4
"""The most steps one decision plays (a double's four, a cascade's stage: ``rules.turns.STAGE_STEPS``, tied by
tests/test_turn_plans.py); every per-step array is this long."""

# Distinct afterstates of one position are bounded: each is fixed by the multiset of
# source points of its steps (at most 4 of 25), C(28,4)+C(27,3)+C(26,2)+25+1 = 23751
# for doubles and far fewer otherwise.
MAX_LEAVES = 24576
TABLE_SIZE = 65536  # power of two, > 2 * MAX_LEAVES so probing stays short
START_MASK = 255

BAR = 25
BAR_BIT = 24  # bit of the bar in a source mask (bit s - 1 = point s)
POINTS_MASK = (1 << 24) - 1
NOT_HOME_MASK = POINTS_MASK ^ 0x3F

# The running games' restrictions (docs/rules.md 8.4): codes of ``start_rule`` in the rule tables.
START_NONE = 0
START_RUNNER = 1
START_HEAD = 2
START_RULE_CODES = {"none": START_NONE, "runner": START_RUNNER, "head": START_HEAD}
HEAD_DOUBLES = (6, 4, 3)  # with all 15 on the 24-point, two checkers may leave it on these doubles
PASSED_MASK = (1 << 11) - 1  # the mover's points 1-11: a checker there has passed the opponent's start
QUARTER_MASK = 0x3F << 18  # the mover's starting quarter, points 19-24

# The rule table's columns (one row per rule set, int8): see :func:`rule_table`.
RULE_PINS = 0  # contact "pin"
RULE_MOTHER = 1  # mother_points
RULE_BACKGAMMONS = 2
RULE_BLOCK = 3  # contact "block" (the running games)
RULE_START = 4  # start_rule, a START_* code
RULE_PRIME = 5
RULE_QUARTER = 6  # not full_start_quarter_allowed
RULE_COLUMNS = 7


def rule_table(rules) -> np.ndarray:
    """(R, RULE_COLUMNS) int8: the flags the kernel reads of each rule set, one named column each."""
    table = np.zeros((len(rules), RULE_COLUMNS), dtype=np.int8)
    for row, r in enumerate(rules):
        table[row, RULE_PINS] = r.pins
        table[row, RULE_MOTHER] = r.mother_points
        table[row, RULE_BACKGAMMONS] = r.backgammons
        table[row, RULE_BLOCK] = r.contact == "block"
        table[row, RULE_START] = START_RULE_CODES[r.start_rule]
        table[row, RULE_PRIME] = r.prime_rule
        table[row, RULE_QUARTER] = not r.full_start_quarter_allowed
    return table


# Packed key: point i is 7 bits at WORD[i], SHIFT[i]; word 2 also holds the counts.
KEY_WORD = np.array([i // 9 for i in range(24)], dtype=np.int64)
KEY_SHIFT = np.array([7 * (i % 9) for i in range(24)], dtype=np.int64)
OWN_BAR_SHIFT = 42
OPP_BAR_SHIFT = 47
OWN_OFF_SHIFT = 52
HASH_M0 = np.int64(-7046029254386353131)  # odd 64-bit mixing constants
HASH_M1 = np.int64(-4658895280553007687)
HASH_M2 = np.int64(-3372029247567499371)

# A point's 7-bit key code back to (board, pinned).
CODE_TOP = np.array([(code & 31) - 16 for code in range(128)], dtype=np.int8)
CODE_PIN = np.array([(code >> 5) - 1 for code in range(128)], dtype=np.int8)
# Index of the highest set bit of a 6-bit mask (for bearing off with a larger die).
HIGHEST_BIT_6 = np.array([-1] + [int(m).bit_length() - 1 for m in range(1, 64)], dtype=np.int64)
# Index of an isolated bit of a 32-bit word, by de Bruijn multiplication.
_DE_BRUIJN = 0x077CB531
DE_BRUIJN_INDEX = np.zeros(32, dtype=np.int64)
for _bit in range(32):
    DE_BRUIJN_INDEX[(((1 << _bit) * _DE_BRUIJN) & 0xFFFFFFFF) >> 27] = _bit


@njit(cache=True, nogil=True, inline="always")
def _bit_index(isolated_bit):
    return DE_BRUIJN_INDEX[((isolated_bit * _DE_BRUIJN) & 0xFFFFFFFF) >> 27]


@njit(cache=True, nogil=True, inline="always")
def _slot(w0, w1, w2, mask):
    return (((w0 * HASH_M0) ^ (w1 * HASH_M1) ^ (w2 * HASH_M2)) >> 40) & mask


@njit(cache=True, nogil=True, inline="always")
def _legal_sources(movable, own_any, closed, own_bar, die):
    """Mask of the source points (bit s - 1, bar = bit 24) from which ``die`` can be played."""
    if own_bar > 0:
        # Every checker on the bar enters before anything else moves.
        if (closed >> (24 - die)) & 1:
            return 0
        return 1 << BAR_BIT
    sources = movable & ~(closed << die) & ~((1 << die) - 1) & POINTS_MASK
    if own_any & NOT_HOME_MASK == 0:
        # All home: bear off exactly from point ``die``, or with a larger die from
        # the highest point holding any own checker (pinned ones count).
        sources |= movable & (1 << (die - 1))
        if own_any >> (die - 1) == 0:
            highest = HIGHEST_BIT_6[own_any & 0x3F]
            if highest >= 0 and (movable >> highest) & 1:
                sources |= 1 << highest
    return sources


@njit(cache=True, nogil=True, inline="always")
def _popcount(mask):
    mask = mask - ((mask >> 1) & 0x5555555555555555)
    mask = (mask & 0x3333333333333333) + ((mask >> 2) & 0x3333333333333333)
    mask = (mask + (mask >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (mask * 0x0101010101010101) >> 56


@njit(cache=True, nogil=True, inline="always")
def _turned(mask):
    """A 24-bit mask of the mover's points as the opponent numbers them (running games: point p is p +- 12)."""
    return ((mask >> 12) | (mask << 12)) & POINTS_MASK


@njit(cache=True, nogil=True, inline="always")
def _six_in_a_row(mask):
    """Bit k - 1 set where bits k - 1 .. k + 4 of ``mask`` all are (a run of six from point k)."""
    pairs = mask & (mask >> 1)
    fours = pairs & (pairs >> 2)
    return fours & (pairs >> 4)


@njit(cache=True, nogil=True)
def _restriction_watch(closed, movable, head, own_off, n_dice, start_rule, may_leave, prime_rule, quarter_rule,
                       opponent_off):
    """Which of the restrictions of docs/rules.md 8.4 some position reachable this turn could break.

    Returns ``(start_watch, prime_window, quarter_watch)``: the start rule code to check (0 when the rule
    cannot bind this turn), the mask of run starts (bit k - 1 = the opponent's point k) where a prime would
    be forbidden (0: none), and whether the full starting quarter can be reached. Conservative: a rule is
    dropped only when no position of the turn can break it, so checking the rest finds the same steps.
    Closed points are the opponent's checkers, fixed for the turn; at most ``n_dice`` new points get a
    checker of the mover.
    """
    start_watch = START_NONE
    if start_rule == START_HEAD:
        if head > may_leave:
            start_watch = START_HEAD
    elif start_rule == START_RUNNER:
        if own_off == 0 and movable & PASSED_MASK == 0:
            start_watch = START_RUNNER
    prime_window = 0
    if prime_rule and opponent_off == 0:
        theirs = _turned(closed)
        if theirs != 0:
            held = _turned(movable)
            lowest = theirs & -theirs  # the opponent's last checker, at its point L
            # A run from k is forbidden for k <= L (no opposing checker below it).
            window = ((lowest << 1) - 1) & _six_in_a_row(POINTS_MASK)
            starts = window
            while starts:
                bit = starts & -starts
                starts ^= bit
                run = bit * 63
                if run & theirs == 0 and _popcount(run & ~held) <= n_dice:
                    prime_window = window
                    break
    quarter_watch = False
    if quarter_rule and closed & QUARTER_MASK == 0 and _popcount(QUARTER_MASK & ~movable) <= n_dice:
        quarter_watch = True
    return start_watch, prime_window, quarter_watch


@njit(cache=True, nogil=True, inline="always")
def _unrestricted(sources, tops, moves, own_off, die, start_watch, head, may_leave, prime_window, quarter_watch):
    """The sources of ``sources`` whose step of ``die`` leaves a position that breaks no restriction (8.4).

    ``tops``/``moves``/``own_off`` are the position before the step; ``head`` the mover's checkers on its
    24-point when the turn began. Running games only: no pins, no bar, one side per point.
    """
    allowed = sources
    rest = sources
    while rest:
        lowest = rest & -rest
        rest ^= lowest
        i = _bit_index(lowest)
        after = moves
        if tops[i] == 1:
            after ^= lowest
        j = i - die
        off_after = own_off
        if j >= 0:
            after |= np.int64(1) << j
        else:
            off_after += 1
        head_after = tops[23] if tops[23] > 0 else 0
        if i == 23:
            head_after -= 1
        broken = False
        if start_watch == START_HEAD:
            broken = head - head_after > may_leave
        elif start_watch == START_RUNNER:
            broken = head_after < 14 and off_after == 0 and after & PASSED_MASK == 0
        if quarter_watch and after & QUARTER_MASK == QUARTER_MASK:
            broken = True
        if prime_window and _six_in_a_row(_turned(after)) & prime_window:
            broken = True
        if broken:
            allowed ^= lowest
    return allowed


@njit(cache=True, nogil=True, inline="always")
def _result_now(tops, pins, own_off, opp_bar, mother_rules, mover_mother_pinned, opponent_off, backgammons):
    """Result code of the current board for the mover, checked after every step (docs/rules.md 3.4, 3.5, 4)."""
    if mother_rules and pins[0] == -1:
        # The opponent's mother (its lone checker on the mover's 1-point) is pinned: draw first.
        if mover_mother_pinned:
            return RESULT_DRAW
        if tops[23] <= 0 and pins[23] != 1:
            return RESULT_MOTHER
    if own_off == 15:
        if opponent_off > 0:
            return RESULT_SINGLE
        if backgammons:
            if opp_bar > 0:
                return RESULT_BACKGAMMON
            for i in range(6):
                if tops[i] < 0 or pins[i] == -1:
                    return RESULT_BACKGAMMON
        return RESULT_GAMMON
    return RESULT_NONE


@njit(cache=True, nogil=True, inline="always")
def _find(table, mask, store_keys, store_depth, w0, w1, w2, depth):
    """Index of the stored key (w0, w1, w2) at ``depth``, else ``-(empty slot + 1)``."""
    slot = _slot(w0, w1, w2, mask)
    while True:
        entry = table[slot]
        if entry == 0:
            return -(slot + 1)
        j = entry - 1
        if store_keys[j, 0] == w0 and store_keys[j, 1] == w1 and store_keys[j, 2] == w2 and store_depth[j] == depth:
            return j
        slot = (slot + 1) & mask


@njit(cache=True, nogil=True)
def _grow_table(table, mask, store_keys, stored):
    """Double the used part of ``table`` and reinsert the ``stored`` keys; returns the new mask."""
    for s in range(mask + 1):
        table[s] = 0
    mask = mask * 2 + 1
    for j in range(stored):
        slot = _slot(store_keys[j, 0], store_keys[j, 1], store_keys[j, 2], mask)
        while table[slot] != 0:
            slot = (slot + 1) & mask
        table[slot] = j + 1
    return mask


@njit(cache=True, nogil=True)
def _grow2(array, size):
    grown = np.empty((size, array.shape[1]), dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown


@njit(cache=True, nogil=True)
def _grow1(array, size):
    grown = np.empty(size, dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown


@njit(cache=True, nogil=True)
def _grow3(array, size):
    grown = np.empty((size, array.shape[1], array.shape[2]), dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown


@njit(cache=True, nogil=True)
def make_outputs(capacity):
    """Output rows of one thread, reused from call to call (fresh pages cost more than the copy out)."""
    return (
        np.empty((capacity, 24), dtype=np.int8), np.empty((capacity, 24), dtype=np.int8),
        np.empty((capacity, 2), dtype=np.int8), np.empty((capacity, 2), dtype=np.int8),
        np.empty(capacity, dtype=np.int8), np.empty(capacity, dtype=np.int8),
        np.empty((capacity, MAX_STEPS, 3), dtype=np.int8), np.empty(capacity, dtype=np.int8),
    )


@njit(cache=True, nogil=True)
def make_scratch():
    """Working memory of one thread: the leaf and seen-state stores and their hash tables (tables zeroed)."""
    # Distinct afterstates of the current position (the leaves of the search).
    leaf_keys = np.empty((MAX_LEAVES, 3), dtype=np.int64)
    leaf_depth = np.zeros(MAX_LEAVES, dtype=np.int8)  # always 0: leaves share one table
    leaf_used = np.empty(MAX_LEAVES, dtype=np.int8)
    leaf_high = np.empty(MAX_LEAVES, dtype=np.bool_)
    leaf_result = np.empty(MAX_LEAVES, dtype=np.int8)
    leaf_steps = np.empty((MAX_LEAVES, MAX_STEPS, 3), dtype=np.int8)
    leaf_nsteps = np.empty(MAX_LEAVES, dtype=np.int8)
    leaf_table = np.zeros(TABLE_SIZE, dtype=np.int32)
    # States already expanded, for the all-orders search of doubles.
    seen_keys = np.empty((MAX_LEAVES, 3), dtype=np.int64)
    seen_depth = np.empty(MAX_LEAVES, dtype=np.int8)
    seen_table = np.zeros(TABLE_SIZE, dtype=np.int32)

    return (leaf_keys, leaf_depth, leaf_used, leaf_high, leaf_result, leaf_steps, leaf_nsteps, leaf_table,
            seen_keys, seen_depth, seen_table)


@njit(cache=True, nogil=True)
def generate_range(board, pinned, off, bar, rules_id, rule_table, plan, start, stop, scratch, outputs):
    """All legal whole-turn afterstates of positions ``start..stop-1``.

    Inputs are the arrays of a ``PositionBatch`` (``board``/``pinned`` (B, 24)
    int8, ``off``/``bar`` (B, 2) int8, ``rules_id`` (B,) int8), the rule
    table (R, ``RULE_COLUMNS``) int8 (:func:`rule_table`) and each position's
    decision ``plan`` (B, 3) int8: its two numbers and how many steps it plays
    (2 for two different numbers; 1..4 of a double's number: four for a whole
    double or a cascade's stage, fewer for a remainder, docs/rules.md 10.2); ``scratch`` is one thread's
    :func:`make_scratch` (reused across calls, never shared between threads
    running at once); ``outputs`` is one thread's :func:`make_outputs`, filled
    from row 0 and replaced by larger arrays when full. Returns, for the
    ``n = stop - start`` positions and the ``N`` afterstates found, in source order:

    - ``counts`` (n,) int32: afterstates per position (1 for a pass);
    - ``status`` (n,) int8: ``STATUS_OK``, ``STATUS_GAME_OVER`` or ``STATUS_BAD_DICE`` (numbers outside 1..6 or a
      step count the numbers cannot give; then 0 afterstates);
    - ``N``;
    - ``outputs``, the tuple of output arrays (maybe grown), whose first ``N`` rows are:
      ``out_board``, ``out_pinned`` (N, 24) int8, ``out_off``, ``out_bar`` (N, 2) int8: the
      afterstates, still seen from the side that moved;
    - ``out_result`` (N,) int8: a ``RESULT_*`` code; ``out_points`` (N,) int8: points before the cube;
    - ``out_steps`` (N, MAX_STEPS, 3) int8: (from, to, die) per step, own numbering, 25 = bar, 0 = off;
      ``out_nsteps`` (N,) int8: steps played.
    """
    n_positions = stop - start
    position_counts = np.zeros(n_positions, dtype=np.int32)
    status = np.zeros(n_positions, dtype=np.int8)
    (out_board, out_pinned, out_off, out_bar, out_result, out_points, out_steps, out_nsteps) = outputs
    capacity = out_board.shape[0]
    n_out = 0

    # The board, changed in place by each step and restored on the way back.
    tops = np.zeros(24, dtype=np.int8)
    pins = np.zeros(24, dtype=np.int8)
    # Per depth 0..MAX_STEPS of the search: packed key, movable mask, counts, candidates left.
    keys = np.zeros((MAX_STEPS + 1, 3), dtype=np.int64)
    movable = np.zeros(MAX_STEPS + 1, dtype=np.int64)
    own_bar = np.zeros(MAX_STEPS + 1, dtype=np.int64)
    opp_bar = np.zeros(MAX_STEPS + 1, dtype=np.int64)
    own_off = np.zeros(MAX_STEPS + 1, dtype=np.int64)
    candidates = np.zeros(MAX_STEPS + 1, dtype=np.int64)
    # Per step 0..MAX_STEPS - 1: (from, to, die) and what to undo.
    steps = np.zeros((MAX_STEPS, 3), dtype=np.int8)
    released = np.zeros(MAX_STEPS, dtype=np.bool_)
    captured = np.zeros(MAX_STEPS, dtype=np.bool_)
    order = np.zeros(MAX_STEPS, dtype=np.int64)

    (leaf_keys, leaf_depth, leaf_used, leaf_high, leaf_result, leaf_steps, leaf_nsteps, leaf_table,
     seen_keys, seen_depth, seen_table) = scratch

    for b in range(start, stop):
        row = b - start
        die_a = plan[b, 0]
        die_b = plan[b, 1]
        n_dice = plan[b, 2]
        double = die_a == die_b
        if (die_a < 1 or die_a > 6 or die_b < 1 or die_b > 6
                or (double and (n_dice < 1 or n_dice > MAX_STEPS)) or (not double and n_dice != 2)):
            status[row] = STATUS_BAD_DICE
            continue
        rule = rules_id[b]
        pin_game = rule_table[rule, RULE_PINS] != 0
        mother_points = rule_table[rule, RULE_MOTHER]
        mother_rules = pin_game and mother_points > 0
        backgammons = rule_table[rule, RULE_BACKGAMMONS] != 0
        block_game = rule_table[rule, RULE_BLOCK] != 0
        start_rule = rule_table[rule, RULE_START]
        prime_rule = rule_table[rule, RULE_PRIME] != 0
        quarter_rule = rule_table[rule, RULE_QUARTER] != 0
        opponent_off = off[b, 1]
        # A point is closed to the mover by two opposing checkers (or a pin), in the running games by one.
        closed_below = -1 if block_game else -2

        closed = 0
        own_pinned = 0
        movable0 = 0
        w0 = np.int64(0)
        w1 = np.int64(0)
        w2 = np.int64(0)
        for i in range(24):
            top = board[b, i]
            pin = pinned[b, i]
            tops[i] = top
            pins[i] = pin
            if top <= closed_below or pin == 1:
                closed |= 1 << i
            if pin == 1:
                own_pinned |= 1 << i
            if top > 0:
                movable0 |= 1 << i
            code = np.int64(top + 16 + 32 * (pin + 1)) << KEY_SHIFT[i]
            if i < 9:
                w0 += code
            elif i < 18:
                w1 += code
            else:
                w2 += code
        w2 += (np.int64(bar[b, 0]) << OWN_BAR_SHIFT) + (np.int64(bar[b, 1]) << OPP_BAR_SHIFT)
        w2 += np.int64(off[b, 0]) << OWN_OFF_SHIFT
        keys[0, 0] = w0
        keys[0, 1] = w1
        keys[0, 2] = w2
        movable[0] = movable0
        own_bar[0] = bar[b, 0]
        opp_bar[0] = bar[b, 1]
        own_off[0] = off[b, 0]

        # A finished game has no moves (the reference refuses it, from either side's view).
        mover_mother_pinned = mother_rules and pinned[b, 23] == 1
        over = _result_now(tops, pins, off[b, 0], bar[b, 1], mother_rules, mover_mother_pinned, opponent_off,
                           False) != RESULT_NONE
        if off[b, 1] == 15:
            over = True
        if mother_rules and mover_mother_pinned and board[b, 0] >= 0 and pinned[b, 0] != -1:
            over = True  # the opponent pins the mover's mother and has left its own 24-point
        if over:
            status[row] = STATUS_GAME_OVER
            continue

        high = max(die_a, die_b)
        low = min(die_a, die_b)
        # Mid-turn game ends (mothers) make the order of equal dice matter: search all orders then.
        # A mother can only end the game if the opponent's mother (alone on the mover's 1-point)
        # is or can be pinned this turn (a checker 1..4 steps of the die away), and then either
        # the mover's mother is pinned (draw) or its 24-point can be emptied in four steps.
        all_orders = False
        if double and mother_rules:
            opponent_on_one = (-board[b, 0] if board[b, 0] < 0 else 0) + (1 if pinned[b, 0] == -1 else 0)
            if opponent_on_one == 1:
                reach_one = pinned[b, 0] == -1
                for steps_away in range(1, 5):
                    if high * steps_away < 24 and board[b, high * steps_away] > 0:
                        reach_one = True
                own_on_24 = (board[b, 23] if board[b, 23] > 0 else 0) + (1 if pinned[b, 23] == 1 else 0)
                all_orders = reach_one and (mover_mother_pinned or own_on_24 <= 4)
        # The running games' restrictions (docs/rules.md 8.4), for the positions where one can bind this turn:
        # each candidate step is kept only if the position after it breaks none. The head rule counts the
        # checkers that left the 24-point, the same for every order of the same steps, so the pruning
        # stays. The runner, prime and quarter rules look at the board after each step, where one order
        # of the same steps can pass and another fail: doubles are then searched in every order. Two
        # different dice keep the low-die-first skip: its only intermediate position (after the high
        # step, legal at the start) was checked, and the end position is the same.
        restricted = False
        every_order = False
        start_watch = START_NONE
        prime_window = 0
        quarter_watch = False
        head = 0
        may_leave = 0
        if block_game and (start_rule != START_NONE or prime_rule or quarter_rule):
            head = board[b, 23] if board[b, 23] > 0 else 0
            may_leave = 1
            if double and n_dice == 4 and head == 15 and (die_a == 6 or die_a == 4 or die_a == 3):
                may_leave = 2
            start_watch, prime_window, quarter_watch = _restriction_watch(
                closed, movable0, head, off[b, 0], n_dice, start_rule, may_leave, prime_rule, quarter_rule,
                opponent_off)
            restricted = start_watch != START_NONE or prime_window != 0 or quarter_watch
            every_order = start_watch == START_RUNNER or prime_window != 0 or quarter_watch
            if double and every_order:
                all_orders = True
        canonical = double and not all_orders

        n_leaves = 0
        leaf_mask = START_MASK
        n_seen = 0
        seen_mask = START_MASK
        high_first_ok = 0  # high-die sources legal at the start that do not end the game
        for pass_number in range(1 if double else 2):
            if double:
                for s in range(MAX_STEPS):
                    order[s] = high
            elif pass_number == 0:
                order[0] = high
                order[1] = low
            else:
                order[0] = low
                order[1] = high
            first_high = pass_number == 0 or double
            candidates[0] = _legal_sources(movable[0], movable[0] | own_pinned, closed, own_bar[0], order[0])
            if restricted:
                candidates[0] = _unrestricted(candidates[0], tops, movable[0], own_off[0], order[0], start_watch,
                                              head, may_leave, prime_window, quarter_watch)
            # With no step at all in either order, the pass is added after the search.
            k = 0 if candidates[0] != 0 else -1
            while k >= 0:
                if candidates[k] == 0:
                    # Level exhausted: undo the step that led here.
                    k -= 1
                    if k >= 0:
                        source = steps[k, 0]
                        target = steps[k, 1]
                        if target > 0:
                            j = target - 1
                            if captured[k]:
                                tops[j] = -1
                                pins[j] = 0
                            else:
                                tops[j] -= 1
                        if source != BAR:
                            i = source - 1
                            if released[k]:
                                tops[i] = 1
                                pins[i] = -1
                            else:
                                tops[i] += 1
                    continue
                lowest = candidates[k] & -candidates[k]
                candidates[k] ^= lowest
                bit = _bit_index(lowest)
                source = bit + 1
                die = order[k]
                target = source - die

                depth = k + 1
                steps[k, 0] = source
                steps[k, 1] = target if target > 0 else 0
                steps[k, 2] = die
                # The last die of the turn, on a step that cannot end the game: the leaf's key
                # follows from the board without changing it (most leaves are reached this way).
                last_quiet = depth == n_dice and target > 0 and not (mother_rules and (target == 1 or source == 24))
                was_released = False
                was_captured = False
                if last_quiet:
                    w0 = keys[k, 0]
                    w1 = keys[k, 1]
                    w2 = keys[k, 2]
                    if source == BAR:
                        w2 -= np.int64(1) << OWN_BAR_SHIFT
                    else:
                        delta = np.int64(30) if tops[bit] == 1 and pins[bit] == -1 else np.int64(-1)
                        if KEY_WORD[bit] == 0:
                            w0 += delta << KEY_SHIFT[bit]
                        elif KEY_WORD[bit] == 1:
                            w1 += delta << KEY_SHIFT[bit]
                        else:
                            w2 += delta << KEY_SHIFT[bit]
                    j = target - 1
                    delta = np.int64(1)
                    if tops[j] == -1 and pins[j] == 0:
                        if pin_game:
                            delta = np.int64(2 - 32)
                        else:
                            w2 += np.int64(1) << OPP_BAR_SHIFT
                            delta = np.int64(2)
                    if KEY_WORD[j] == 0:
                        w0 += delta << KEY_SHIFT[j]
                    elif KEY_WORD[j] == 1:
                        w1 += delta << KEY_SHIFT[j]
                    else:
                        w2 += delta << KEY_SHIFT[j]
                    result = RESULT_NONE
                    used = n_dice
                    record = True
                else:
                    # -- make the step: depth k -> k + 1 ----------------------------------------
                    w0 = keys[k, 0]
                    w1 = keys[k, 1]
                    w2 = keys[k, 2]
                    moves = movable[k]
                    bar_now = own_bar[k]
                    opp_bar_now = opp_bar[k]
                    off_now = own_off[k]
                    was_released = False
                    was_captured = False
                    if source == BAR:
                        bar_now -= 1
                        w2 -= np.int64(1) << OWN_BAR_SHIFT
                    else:
                        i = bit
                        delta = np.int64(-1)
                        if tops[i] == 1:
                            moves &= ~lowest
                            if pins[i] == -1:
                                # The last checker leaving releases the opponent's checker it pinned.
                                tops[i] = -1
                                pins[i] = 0
                                was_released = True
                                delta = np.int64(30)  # top 1 -> -1 (-2), pin -1 -> 0 (+32)
                            else:
                                tops[i] = 0
                        else:
                            tops[i] -= 1
                        if KEY_WORD[i] == 0:
                            w0 += delta << KEY_SHIFT[i]
                        elif KEY_WORD[i] == 1:
                            w1 += delta << KEY_SHIFT[i]
                        else:
                            w2 += delta << KEY_SHIFT[i]
                    if target <= 0:
                        target = 0
                        off_now += 1
                        w2 += np.int64(1) << OWN_OFF_SHIFT
                    else:
                        j = target - 1
                        delta = np.int64(1)
                        if tops[j] == -1 and pins[j] == 0:
                            was_captured = True
                            tops[j] = 1
                            if pin_game:
                                pins[j] = -1
                                delta = np.int64(2 - 32)
                            else:
                                opp_bar_now += 1
                                w2 += np.int64(1) << OPP_BAR_SHIFT
                                delta = np.int64(2)
                        else:
                            tops[j] += 1
                        moves |= np.int64(1) << j
                        if KEY_WORD[j] == 0:
                            w0 += delta << KEY_SHIFT[j]
                        elif KEY_WORD[j] == 1:
                            w1 += delta << KEY_SHIFT[j]
                        else:
                            w2 += delta << KEY_SHIFT[j]
                    keys[depth, 0] = w0
                    keys[depth, 1] = w1
                    keys[depth, 2] = w2
                    movable[depth] = moves
                    own_bar[depth] = bar_now
                    opp_bar[depth] = opp_bar_now
                    own_off[depth] = off_now
                    steps[k, 1] = target
                    released[k] = was_released
                    captured[k] = was_captured

                    result = RESULT_NONE
                    # Only bearing off, landing on the 1-point or leaving the 24-point can end the game.
                    if target == 0 or (mother_rules and (target == 1 or source == 24)):
                        result = _result_now(tops, pins, off_now, opp_bar_now, mother_rules, mover_mother_pinned,
                                             opponent_off, backgammons)
                    record = False
                    if result != RESULT_NONE:
                        used = n_dice  # a game-ending step counts as using every die
                        record = True
                    elif depth == n_dice:
                        used = n_dice
                        record = True
                    else:
                        if k == 0 and pass_number == 0 and not double:
                            high_first_ok |= lowest
                        legal = _legal_sources(moves, moves | own_pinned, closed, bar_now, order[depth])
                        if restricted:
                            legal = _unrestricted(legal, tops, moves, off_now, order[depth], start_watch, head,
                                                  may_leave, prime_window, quarter_watch)
                        nxt = legal
                        if canonical:
                            nxt &= (lowest << 1) - 1  # sources not above this one
                        elif pass_number == 1:
                            nxt &= ~high_first_ok  # the high-first order already reached these
                        if legal == 0:
                            used = depth  # no further step at all
                            record = True
                        elif nxt != 0:
                            if all_orders:
                                found = _find(seen_table, seen_mask, seen_keys, seen_depth, w0, w1, w2, depth)
                                if found < 0:
                                    seen_table[-found - 1] = n_seen + 1
                                    seen_keys[n_seen, 0] = w0
                                    seen_keys[n_seen, 1] = w1
                                    seen_keys[n_seen, 2] = w2
                                    seen_depth[n_seen] = depth
                                    n_seen += 1
                                    if 2 * n_seen > seen_mask:
                                        seen_mask = _grow_table(seen_table, seen_mask, seen_keys, n_seen)
                                    k = depth
                                    candidates[k] = nxt
                                    continue
                            else:
                                k = depth
                                candidates[k] = nxt
                                continue
                if record:
                    found = _find(leaf_table, leaf_mask, leaf_keys, leaf_depth, w0, w1, w2, 0)
                    if found < 0:
                        leaf_table[-found - 1] = n_leaves + 1
                        found = n_leaves
                        leaf_keys[found, 0] = w0
                        leaf_keys[found, 1] = w1
                        leaf_keys[found, 2] = w2
                        leaf_used[found] = -1
                        leaf_high[found] = False
                        leaf_result[found] = result
                        n_leaves += 1
                        if 2 * n_leaves > leaf_mask:
                            leaf_mask = _grow_table(leaf_table, leaf_mask, leaf_keys, n_leaves)
                    # Keep, per afterstate, a sequence that survives the whole-turn filters below.
                    if used > leaf_used[found] or (used == leaf_used[found] and first_high and not leaf_high[found]):
                        leaf_used[found] = used
                        leaf_high[found] = first_high
                        leaf_nsteps[found] = depth
                        # All four rows, zeros past ``depth``, so the output copy needs no test.
                        for s in range(MAX_STEPS):
                            for c in range(3):
                                leaf_steps[found, s, c] = steps[s, c] if s < depth else 0
                # -- unmake the step ----------------------------------------------------------
                if last_quiet:
                    continue
                if target > 0:
                    j = target - 1
                    if was_captured:
                        tops[j] = -1
                        pins[j] = 0
                    else:
                        tops[j] -= 1
                if source != BAR:
                    i = bit
                    if was_released:
                        tops[i] = 1
                        pins[i] = -1
                    else:
                        tops[i] += 1
        if n_leaves == 0:
            # Neither die can be played: the turn is passed.
            leaf_keys[0, 0] = keys[0, 0]
            leaf_keys[0, 1] = keys[0, 1]
            leaf_keys[0, 2] = keys[0, 2]
            leaf_used[0] = 0
            leaf_high[0] = True
            leaf_result[0] = RESULT_NONE
            leaf_nsteps[0] = 0
            n_leaves = 1

        # Whole-turn rules: most dice used; with one die of two, the higher one when possible.
        most = 0
        for j in range(n_leaves):
            if leaf_used[j] > most:
                most = leaf_used[j]
        need_high = False
        if not double and most == 1:
            for j in range(n_leaves):
                if leaf_used[j] == 1 and leaf_high[j]:
                    need_high = True
                    break
        kept = 0
        for j in range(n_leaves):
            if leaf_used[j] == most and (leaf_high[j] or not need_high):
                kept += 1
        if n_out + kept > capacity:
            capacity = max(capacity + capacity // 2, n_out + kept)
            out_board = _grow2(out_board, capacity)
            out_pinned = _grow2(out_pinned, capacity)
            out_off = _grow2(out_off, capacity)
            out_bar = _grow2(out_bar, capacity)
            out_result = _grow1(out_result, capacity)
            out_points = _grow1(out_points, capacity)
            out_steps = _grow3(out_steps, capacity)
            out_nsteps = _grow1(out_nsteps, capacity)
        for j in range(n_leaves):
            if leaf_used[j] == most and (leaf_high[j] or not need_high):
                for word in range(3):
                    packed = leaf_keys[j, word]
                    for i in range(9 * word, min(9 * word + 9, 24)):
                        code = packed & 127
                        packed >>= 7
                        out_board[n_out, i] = CODE_TOP[code]
                        out_pinned[n_out, i] = CODE_PIN[code]
                w2 = leaf_keys[j, 2]
                out_off[n_out, 0] = (w2 >> OWN_OFF_SHIFT) & 31
                out_off[n_out, 1] = opponent_off
                out_bar[n_out, 0] = (w2 >> OWN_BAR_SHIFT) & 31
                out_bar[n_out, 1] = (w2 >> OPP_BAR_SHIFT) & 31
                code = leaf_result[j]
                out_result[n_out] = code
                if code == RESULT_MOTHER:
                    out_points[n_out] = mother_points
                elif code == RESULT_DRAW:
                    out_points[n_out] = 0
                else:
                    out_points[n_out] = code  # single 1, gammon 2, backgammon 3, none 0
                out_nsteps[n_out] = leaf_nsteps[j]
                for s in range(MAX_STEPS):
                    for c in range(3):
                        out_steps[n_out, s, c] = leaf_steps[j, s, c]
                n_out += 1
        position_counts[row] = kept

        # Clear only the part of the tables this position used.
        for s in range(leaf_mask + 1):
            leaf_table[s] = 0
        if n_seen:
            for s in range(seen_mask + 1):
                seen_table[s] = 0

    return (position_counts, status, n_out,
            (out_board, out_pinned, out_off, out_bar, out_result, out_points, out_steps, out_nsteps))
