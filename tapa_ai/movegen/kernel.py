"""The compiled whole-turn move generator (numba): a batch slice in, all legal afterstates out.

One call of :func:`generate_range` handles positions ``start..stop-1`` of a
:class:`~tapa_ai.movegen.batch.PositionBatch` (passed as its arrays) on one
thread; ``nogil=True`` lets :mod:`tapa_ai.movegen.generate` run slices on
several threads at once.

Per position the turn is searched depth first, one die per step, exactly as
the reference generator does, with the board of every depth kept in a small
stack (``levels``) so nothing is allocated per step. What makes it fast:

- **Closed points are fixed for the whole turn.** A point is closed to the
  mover when it holds two or more opposing checkers or pins one of the
  mover's; the mover's own steps never change either, so closedness is one
  array per position.
- **Doubles in canonical order.** Four equal dice can be played in any
  order of their source points, so the search only plays sources that do
  not increase, as GNU Backgammon does. One thing breaks that argument: a
  mother win or draw ends the turn in the middle (RULES.md 2, Decision), and
  then *which* steps came before the ending one matters. That can only
  happen when the opponent has exactly one checker on the mover's 1-point;
  for those positions the search plays every order and prunes states already
  expanded at the same depth instead (exact, via a table of seen states).
- **Afterstates deduplicated in an open-addressing table** keyed by an
  incrementally updated 64-bit hash, with a full board comparison on every
  hash match, so a collision can never merge two positions. The table is
  cleared only where it was used.
- **Whole-turn rules as bookkeeping on the leaves.** Each distinct afterstate
  remembers the most dice any sequence reaching it used and whether a
  one-die sequence reaching it played the higher die; the maximum-use and
  higher-die rules are a filter over those leaves at the end.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Result codes of an afterstate (the winner is the mover for every code but NONE and DRAW).
RESULT_NONE = 0
RESULT_SINGLE = 1
RESULT_GAMMON = 2
RESULT_BACKGAMMON = 3
RESULT_MOTHER = 4
RESULT_DRAW = 5
RESULT_KINDS = (None, "single", "gammon", "backgammon", "mother", "draw")

# Status codes of an input position.
STATUS_OK = 0
STATUS_GAME_OVER = 1
STATUS_BAD_DICE = 2

# Distinct afterstates of one position are bounded: each is fixed by the multiset of
# source points of its steps (at most 4 of 25), C(28,4)+C(27,3)+C(26,2)+25+1 = 23751
# for doubles and far fewer otherwise.
MAX_LEAVES = 24576
TABLE_SIZE = 65536  # power of two, > 2 * MAX_LEAVES so probing stays short
START_MASK = 255

BAR = 25
# counts columns of a level: mover's off, mover's bar, opponent's bar, mover's checkers not home (7..24 or bar)
C_OFF, C_BAR, C_OPP_BAR, C_NOT_HOME = 0, 1, 2, 3

_random = np.random.default_rng(0x7A9A)
# Additive hash: sum of count * key over every feature; updated in O(1) per step.
Z_TOP = _random.integers(-(2**62), 2**62, size=24, dtype=np.int64)
Z_PIN = _random.integers(-(2**62), 2**62, size=24, dtype=np.int64)
Z_OFF = np.int64(_random.integers(-(2**62), 2**62))
Z_BAR = np.int64(_random.integers(-(2**62), 2**62))
Z_OPP_BAR = np.int64(_random.integers(-(2**62), 2**62))
Z_DEPTH = _random.integers(-(2**62), 2**62, size=5, dtype=np.int64)
HASH_MULTIPLIER = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as int64


@njit(cache=True, nogil=True)
def _slot(h, mask):
    return ((h * HASH_MULTIPLIER) >> 40) & mask


@njit(cache=True, nogil=True)
def _level_hash(tops, pins, counts, k):
    h = np.int64(0)
    for i in range(24):
        h += tops[k, i] * Z_TOP[i] + pins[k, i] * Z_PIN[i]
    h += counts[k, C_OFF] * Z_OFF + counts[k, C_BAR] * Z_BAR + counts[k, C_OPP_BAR] * Z_OPP_BAR
    return h


@njit(cache=True, nogil=True)
def _next_source(tops, pins, counts, closed, k, cursor, die):
    """Highest source point <= cursor (25 = bar) with a legal step of ``die`` at depth ``k``; 0 if none."""
    if counts[k, C_BAR] > 0:
        # Every checker on the bar enters before anything else moves.
        if cursor >= BAR and not closed[24 - die]:
            return BAR
        return 0
    s = min(cursor, 24)
    while s >= 1:
        if tops[k, s - 1] > 0:
            target = s - die
            if target >= 1:
                if not closed[target - 1]:
                    return s
            elif counts[k, C_NOT_HOME] == 0:
                if target == 0:
                    return s
                # A larger die bears off only from the highest point holding any own checker.
                highest = True
                for index in range(s, 6):
                    if tops[k, index] > 0 or pins[k, index] == 1:
                        highest = False
                        break
                if highest:
                    return s
        s -= 1
    return 0


@njit(cache=True, nogil=True)
def _apply_step(tops, pins, counts, hashes, k, source, die, pin_game):
    """Depth ``k + 1`` := depth ``k`` after one step; returns the target point (0 = off)."""
    for i in range(24):
        tops[k + 1, i] = tops[k, i]
        pins[k + 1, i] = pins[k, i]
    for c in range(4):
        counts[k + 1, c] = counts[k, c]
    h = hashes[k]
    target = source - die
    if source == BAR:
        counts[k + 1, C_BAR] -= 1
        h -= Z_BAR
    else:
        i = source - 1
        tops[k + 1, i] -= 1
        h -= Z_TOP[i]
        if tops[k + 1, i] == 0 and pins[k + 1, i] == -1:
            # The last checker leaving releases the opponent's checker it pinned.
            tops[k + 1, i] = -1
            pins[k + 1, i] = 0
            h += Z_PIN[i] - Z_TOP[i]
        if source >= 7 and target <= 6:
            counts[k + 1, C_NOT_HOME] -= 1
    if target <= 0:
        target = 0
        counts[k + 1, C_OFF] += 1
        h += Z_OFF
    else:
        j = target - 1
        if tops[k + 1, j] == -1 and pins[k + 1, j] == 0:
            tops[k + 1, j] = 1
            h += 2 * Z_TOP[j]
            if pin_game:
                pins[k + 1, j] = -1
                h -= Z_PIN[j]
            else:
                counts[k + 1, C_OPP_BAR] += 1
                h += Z_OPP_BAR
        else:
            tops[k + 1, j] += 1
            h += Z_TOP[j]
    hashes[k + 1] = h
    return target


@njit(cache=True, nogil=True)
def _result_at(tops, pins, counts, k, mother_rules, mover_mother_pinned, opponent_off, backgammons):
    """Result code of depth ``k`` for the mover, checked after every step (RULES.md 3.4, 3.5, 4)."""
    if mother_rules and pins[k, 0] == -1:
        # The opponent's mother (its lone checker on the mover's 1-point) is pinned: draw first.
        if mover_mother_pinned:
            return RESULT_DRAW
        if tops[k, 23] <= 0 and pins[k, 23] != 1:
            return RESULT_MOTHER
    if counts[k, C_OFF] == 15:
        if opponent_off > 0:
            return RESULT_SINGLE
        if backgammons:
            if counts[k, C_OPP_BAR] > 0:
                return RESULT_BACKGAMMON
            for i in range(6):
                if tops[k, i] < 0 or pins[k, i] == -1:
                    return RESULT_BACKGAMMON
        return RESULT_GAMMON
    return RESULT_NONE


@njit(cache=True, nogil=True)
def _find(table, mask, store_hash, store_board, store_pinned, store_counts, h, tops, pins, counts, k, depth):
    """Index of the stored state equal to depth ``k`` (same ``depth``), else ``-(empty slot + 1)``."""
    slot = _slot(h, mask)
    while True:
        entry = table[slot]
        if entry == 0:
            return -(slot + 1)
        j = entry - 1
        if store_hash[j] == h and store_counts[j, 3] == depth:
            same = (
                store_counts[j, 0] == counts[k, C_OFF]
                and store_counts[j, 1] == counts[k, C_BAR]
                and store_counts[j, 2] == counts[k, C_OPP_BAR]
            )
            if same:
                for i in range(24):
                    if store_board[j, i] != tops[k, i] or store_pinned[j, i] != pins[k, i]:
                        same = False
                        break
            if same:
                return j
        slot = (slot + 1) & mask


@njit(cache=True, nogil=True)
def _store(store_hash, store_board, store_pinned, store_counts, j, h, tops, pins, counts, k, depth):
    store_hash[j] = h
    for i in range(24):
        store_board[j, i] = tops[k, i]
        store_pinned[j, i] = pins[k, i]
    store_counts[j, 0] = counts[k, C_OFF]
    store_counts[j, 1] = counts[k, C_BAR]
    store_counts[j, 2] = counts[k, C_OPP_BAR]
    store_counts[j, 3] = depth


@njit(cache=True, nogil=True)
def _grow_table(table, mask, store_hash, stored):
    """Double the used part of ``table`` and reinsert the ``stored`` entries; returns the new mask."""
    for s in range(mask + 1):
        table[s] = 0
    mask = mask * 2 + 1
    for j in range(stored):
        slot = _slot(store_hash[j], mask)
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
def generate_range(board, pinned, off, bar, rules_id, rule_pins, rule_mother, rule_backgammons, dice, start, stop):
    """All legal whole-turn afterstates of positions ``start..stop-1``.

    Inputs are the arrays of a ``PositionBatch`` (``board``/``pinned`` (B, 24)
    int8, ``off``/``bar`` (B, 2) int8, ``rules_id`` (B,) int8), the rule
    tables (R,) and ``dice`` (B, 2) int8. Returns, for the ``n = stop - start``
    positions and the ``N`` afterstates found, in source order:

    - ``counts`` (n,) int32: afterstates per position (1 for a pass);
    - ``status`` (n,) int8: ``STATUS_OK``, ``STATUS_GAME_OVER`` or ``STATUS_BAD_DICE`` (then 0 afterstates);
    - ``out_board``, ``out_pinned`` (N, 24) int8, ``out_off``, ``out_bar`` (N, 2) int8: the
      afterstates, still seen from the side that moved;
    - ``out_result`` (N,) int8: a ``RESULT_*`` code; ``out_points`` (N,) int8: points before the cube;
    - ``out_steps`` (N, 4, 3) int8: (from, to, die) per step, own numbering, 25 = bar, 0 = off;
      ``out_nsteps`` (N,) int8: steps played.
    """
    n_positions = stop - start
    position_counts = np.zeros(n_positions, dtype=np.int32)
    status = np.zeros(n_positions, dtype=np.int8)
    capacity = max(64, n_positions * 24)
    out_board = np.empty((capacity, 24), dtype=np.int8)
    out_pinned = np.empty((capacity, 24), dtype=np.int8)
    out_off = np.empty((capacity, 2), dtype=np.int8)
    out_bar = np.empty((capacity, 2), dtype=np.int8)
    out_result = np.empty(capacity, dtype=np.int8)
    out_points = np.empty(capacity, dtype=np.int8)
    out_steps = np.zeros((capacity, 4, 3), dtype=np.int8)
    out_nsteps = np.empty(capacity, dtype=np.int8)
    n_out = 0

    # The board at every depth of the search: depth 0 is the position itself.
    tops = np.zeros((5, 24), dtype=np.int8)
    pins = np.zeros((5, 24), dtype=np.int8)
    counts = np.zeros((5, 4), dtype=np.int8)
    hashes = np.zeros(5, dtype=np.int64)
    cursor = np.zeros(5, dtype=np.int8)
    found = np.zeros(5, dtype=np.bool_)
    steps = np.zeros((4, 3), dtype=np.int8)
    order = np.zeros(4, dtype=np.int8)
    closed = np.zeros(24, dtype=np.bool_)

    # Distinct afterstates of the current position (the leaves of the search).
    leaf_hash = np.zeros(MAX_LEAVES, dtype=np.int64)
    leaf_board = np.zeros((MAX_LEAVES, 24), dtype=np.int8)
    leaf_pinned = np.zeros((MAX_LEAVES, 24), dtype=np.int8)
    leaf_counts = np.zeros((MAX_LEAVES, 4), dtype=np.int8)
    leaf_used = np.zeros(MAX_LEAVES, dtype=np.int8)
    leaf_high = np.zeros(MAX_LEAVES, dtype=np.bool_)
    leaf_result = np.zeros(MAX_LEAVES, dtype=np.int8)
    leaf_steps = np.zeros((MAX_LEAVES, 4, 3), dtype=np.int8)
    leaf_nsteps = np.zeros(MAX_LEAVES, dtype=np.int8)
    leaf_table = np.zeros(TABLE_SIZE, dtype=np.int32)
    # States already expanded, for the all-orders search of doubles.
    seen_hash = np.zeros(MAX_LEAVES, dtype=np.int64)
    seen_board = np.zeros((MAX_LEAVES, 24), dtype=np.int8)
    seen_pinned = np.zeros((MAX_LEAVES, 24), dtype=np.int8)
    seen_counts = np.zeros((MAX_LEAVES, 4), dtype=np.int8)
    seen_table = np.zeros(TABLE_SIZE, dtype=np.int32)

    for b in range(start, stop):
        row = b - start
        die_a = dice[b, 0]
        die_b = dice[b, 1]
        if die_a < 1 or die_a > 6 or die_b < 1 or die_b > 6:
            status[row] = STATUS_BAD_DICE
            continue
        rule = rules_id[b]
        pin_game = rule_pins[rule]
        mother_rules = pin_game and rule_mother[rule] > 0
        backgammons = rule_backgammons[rule]
        opponent_off = off[b, 1]

        not_home = bar[b, 0]
        for i in range(24):
            tops[0, i] = board[b, i]
            pins[0, i] = pinned[b, i]
            closed[i] = board[b, i] <= -2 or pinned[b, i] == 1
            if i >= 6:
                if board[b, i] > 0:
                    not_home += board[b, i]
                if pinned[b, i] == 1:
                    not_home += 1
        counts[0, C_OFF] = off[b, 0]
        counts[0, C_BAR] = bar[b, 0]
        counts[0, C_OPP_BAR] = bar[b, 1]
        counts[0, C_NOT_HOME] = not_home
        hashes[0] = _level_hash(tops, pins, counts, 0)

        # A finished game has no moves (the reference refuses it, from either side's view).
        mover_mother_pinned = mother_rules and pinned[b, 23] == 1
        over = _result_at(tops, pins, counts, 0, mother_rules, mover_mother_pinned, opponent_off, False) != 0
        if off[b, 1] == 15:
            over = True
        if mother_rules and mover_mother_pinned and board[b, 0] >= 0 and pinned[b, 0] != -1:
            over = True  # the opponent pins the mover's mother and has left its own 24-point
        if over:
            status[row] = STATUS_GAME_OVER
            continue

        double = die_a == die_b
        n_dice = 4 if double else 2
        high = max(die_a, die_b)
        low = min(die_a, die_b)
        opponent_on_one = (-board[b, 0] if board[b, 0] < 0 else 0) + (1 if pinned[b, 0] == -1 else 0)
        # Mid-turn game ends (mothers) make the order of equal dice matter: search all orders then.
        all_orders = double and mother_rules and opponent_on_one == 1
        canonical = double and not all_orders

        n_leaves = 0
        leaf_mask = START_MASK
        n_seen = 0
        seen_mask = START_MASK
        for pass_number in range(1 if double else 2):
            if double:
                for s in range(4):
                    order[s] = high
            elif pass_number == 0:
                order[0] = high
                order[1] = low
            else:
                order[0] = low
                order[1] = high
            first_high = pass_number == 0
            k = 0
            cursor[0] = BAR
            found[0] = False
            while k >= 0:
                die = order[k]
                source = _next_source(tops, pins, counts, closed, k, cursor[k], die)
                result = RESULT_NONE
                depth = k
                if source == 0:
                    if found[k]:
                        k -= 1
                        continue
                    # No step at all from here: the sequence ends with k dice used.
                    used = k
                    k -= 1
                else:
                    found[k] = True
                    cursor[k] = source - 1
                    target = _apply_step(tops, pins, counts, hashes, k, source, die, pin_game)
                    steps[k, 0] = source
                    steps[k, 1] = target
                    steps[k, 2] = die
                    depth = k + 1
                    result = _result_at(
                        tops, pins, counts, depth, mother_rules, mover_mother_pinned, opponent_off, backgammons
                    )
                    if result == RESULT_NONE and depth < n_dice:
                        if all_orders:
                            h = hashes[depth] ^ Z_DEPTH[depth]
                            j = _find(seen_table, seen_mask, seen_hash, seen_board, seen_pinned, seen_counts,
                                      h, tops, pins, counts, depth, depth)
                            if j >= 0:
                                continue  # expanded already from another order of the same steps
                            seen_table[-j - 1] = n_seen + 1
                            _store(seen_hash, seen_board, seen_pinned, seen_counts, n_seen, h, tops, pins, counts,
                                   depth, depth)
                            n_seen += 1
                            if 2 * n_seen > seen_mask:
                                seen_mask = _grow_table(seen_table, seen_mask, seen_hash, n_seen)
                        k = depth
                        cursor[k] = source if canonical else BAR
                        found[k] = False
                        continue
                    # Dice used up, or the game ended (which counts as using every die).
                    used = n_dice
                # A leaf: the board at ``depth`` after ``depth`` steps.
                h = hashes[depth]
                j = _find(leaf_table, leaf_mask, leaf_hash, leaf_board, leaf_pinned, leaf_counts,
                          h, tops, pins, counts, depth, 0)
                if j < 0:
                    leaf_table[-j - 1] = n_leaves + 1
                    j = n_leaves
                    _store(leaf_hash, leaf_board, leaf_pinned, leaf_counts, j, h, tops, pins, counts, depth, 0)
                    n_leaves += 1
                    if 2 * n_leaves > leaf_mask:
                        leaf_mask = _grow_table(leaf_table, leaf_mask, leaf_hash, n_leaves)
                    leaf_used[j] = -1
                    leaf_high[j] = False
                    leaf_result[j] = result
                is_high = first_high or double
                # Keep, per afterstate, a sequence that survives the whole-turn filters below.
                if used > leaf_used[j] or (used == leaf_used[j] and is_high and not leaf_high[j]):
                    leaf_used[j] = used
                    leaf_high[j] = is_high
                    leaf_nsteps[j] = depth
                    for s in range(depth):
                        leaf_steps[j, s, 0] = steps[s, 0]
                        leaf_steps[j, s, 1] = steps[s, 1]
                        leaf_steps[j, s, 2] = steps[s, 2]

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
            capacity = max(2 * capacity, n_out + kept)
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
                for i in range(24):
                    out_board[n_out, i] = leaf_board[j, i]
                    out_pinned[n_out, i] = leaf_pinned[j, i]
                out_off[n_out, 0] = leaf_counts[j, 0]
                out_off[n_out, 1] = opponent_off
                out_bar[n_out, 0] = leaf_counts[j, 1]
                out_bar[n_out, 1] = leaf_counts[j, 2]
                code = leaf_result[j]
                out_result[n_out] = code
                if code == RESULT_MOTHER:
                    out_points[n_out] = rule_mother[rule]
                elif code == RESULT_DRAW:
                    out_points[n_out] = 0
                else:
                    out_points[n_out] = code  # single 1, gammon 2, backgammon 3, none 0
                n = leaf_nsteps[j]
                out_nsteps[n_out] = n
                for s in range(4):
                    for c in range(3):
                        out_steps[n_out, s, c] = leaf_steps[j, s, c] if s < n else 0
                n_out += 1
        position_counts[row] = kept

        # Clear only the part of the tables this position used.
        for s in range(leaf_mask + 1):
            leaf_table[s] = 0
        if n_seen:
            for s in range(seen_mask + 1):
                seen_table[s] = 0

    return (position_counts, status, out_board[:n_out], out_pinned[:n_out], out_off[:n_out], out_bar[:n_out],
            out_result[:n_out], out_points[:n_out], out_steps[:n_out], out_nsteps[:n_out])
