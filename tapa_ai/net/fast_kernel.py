"""The numba kernel of :mod:`tapa_ai.net.fast_eval`: a network's first layer from the sparse inputs, then the dense rest.

``evaluate_rows`` computes rows ``start:stop`` of a batch straight from its
int8 arrays (the feature matrix is never built); the helpers add a point's
weight columns, the exposure (version 2) and contact (version 3) columns and
apply the activation. Rows of the running games (``paths = "parallel"``,
version 4) take their own first-layer loop (:func:`_first_layer_parallel`),
chosen once per row, so the other variants' loop is the one it always was.

Kept whole: its njit functions are one compiled evaluator, ``evaluate_rows`` and the first-layer helpers it
inlines (``inline="always"``), which read the same column layout; split, the layout would be read in two
places.
"""

from __future__ import annotations

import math
import types

import numpy as np
from numba import njit

from .encoding import (
    BAR_SCALE, CHECKER_SCALE, MOVER_CONTACT, MOVER_EXPOSURE, MOVER_PASSED, MOVER_SCALARS, OPPONENT_CONTACT,
    OPPONENT_EXPOSURE, OPPONENT_PASSED, OPPONENT_POINTS, OPPONENT_SCALARS, PASSED_BELOW, PIP_SCALE, RULES_COLUMNS,
)
from .roll_features import PRIME_CAP, contact_counts, roll_reach

ACTIVATION_CODES = {"relu": 0, "tanh": 1, "sigmoid": 2, "gelu": 3, "silu": 4}
"""Activations the kernel implements, as :data:`tapa_ai.net.model.ACTIVATIONS` defines them (GELU exact, with erf)."""
NO_ACTIVATION = -1
"""The activation code of the identity (the encoder's: its "first layer" writes the features themselves)."""

_MOVER_BLOCK = 0
_OPPONENT_BLOCK = OPPONENT_POINTS.start  # 120
_MOVER_SCALARS = MOVER_SCALARS.start  # 240
_OPPONENT_SCALARS = OPPONENT_SCALARS.start  # 248
_RULES = RULES_COLUMNS.start  # 256
_MOVER_EXPOSURE = MOVER_EXPOSURE.start  # 259 (version 2)
_OPPONENT_EXPOSURE = OPPONENT_EXPOSURE.start  # 284
_MOVER_CONTACT = MOVER_CONTACT.start  # 309 (version 3)
_OPPONENT_CONTACT = OPPONENT_CONTACT.start  # 312
_MOVER_PASSED = MOVER_PASSED  # 316 (version 4)
_OPPONENT_PASSED = OPPONENT_PASSED  # 317
_PASSED_BELOW = PASSED_BELOW
EXTRA_VALUES = (np.arange(4, 16, dtype=np.float32) - 3) / 2  # free_extra of 4..15 free checkers
SKIP_ROW = -2
"""A row's ``classes`` code that leaves the row alone (another network part evaluates it)."""
EVALUATE_ROW = -1
"""A row's ``classes`` code: evaluate it (a code >= 0 writes that finished outcome)."""


@njit(cache=True, nogil=True)
def race_flags(board, pinned, bar, parallel):
    """(B,) bool: the positions where no checker can meet an opposing one again (``model.race_rows``).

    ``parallel``: (B,) bool, the rows of a running game (``PositionBatch.parallel_rows()``).
    Opposite paths: side a (board > 0) has its own point ``column + 1``, side b ``24 - column``; a checker
    on the bar is on its side's 25; the two rearmost add up to more than 25 exactly while contact is left.
    Running games: a race once every checker of each side is on its own points 1..12 (or off): side a in
    columns 0..11, side b (own point ``(column + 12) % 24 + 1``) in columns 12..23.
    """
    size = board.shape[0]
    race = np.empty(size, dtype=np.bool_)
    for row in range(size):
        if parallel[row]:
            apart = bar[row, 0] == 0 and bar[row, 1] == 0
            for column in range(24):
                stack = board[row, column]
                if (column >= 12 and stack > 0) or (column < 12 and stack < 0):
                    apart = False
                    break
            race[row] = apart
            continue
        back_a = 25 if bar[row, 0] > 0 else 0
        back_b = 25 if bar[row, 1] > 0 else 0
        for column in range(24):
            stack = board[row, column]
            pin = pinned[row, column]
            if back_a < column + 1 and (stack > 0 or pin == 1):
                back_a = column + 1
            if back_b < 24 - column and (stack < 0 or pin == -1):
                back_b = 24 - column
        race[row] = back_a + back_b <= 25
    return race


@njit(cache=True, nogil=True, inline="always")
def _add_column(hidden, first_weights, column, value):
    for unit in range(hidden.shape[0]):
        hidden[unit] += value * first_weights[column, unit]


@njit(cache=True, nogil=True, inline="always")
def _add_column1(hidden, table, row):
    for unit in range(hidden.shape[0]):
        hidden[unit] += table[row, unit]


@njit(cache=True, nogil=True, inline="always")
def _activate(values, count, activation):
    if activation < 0:
        return
    if activation == 0:
        for i in range(count):
            # Branch-free (a branch here mispredicts on half the units and is not vectorized).
            values[i] = max(values[i], np.float32(0.0))
    elif activation == 1:
        for i in range(count):
            values[i] = math.tanh(values[i])
    elif activation == 2:
        for i in range(count):
            values[i] = 1.0 / (1.0 + math.exp(-values[i]))
    elif activation == 3:
        for i in range(count):
            values[i] = 0.5 * values[i] * (1.0 + math.erf(values[i] * 0.7071067811865476))
    else:
        for i in range(count):
            values[i] = values[i] / (1.0 + math.exp(-values[i]))


# The roll reach of one row (int64 bit masks in the attacker's numbering): the encoder's own function.
_reach = njit(cache=True, nogil=True, inline="always")(roll_reach)
# The contact counts of one side (version 3): the encoder's own function, compiled with its call of
# roll_reach bound to the compiled one above (numba cannot call a plain Python function).
_contact = njit(cache=True, nogil=True)(types.FunctionType(
    contact_counts.__code__, {**contact_counts.__globals__, "roll_reach": _reach}, "_contact"))


@njit(cache=True, nogil=True)
def _add_contact(hidden, first_weights, base, sources, open_, home):
    """Version-3 contact columns ``base .. base + 2`` of one side (see ``roll_features.contact_features``)."""
    if sources == 0:
        return
    escapes, prime, dance = _contact(sources, open_, home)
    if escapes != 0:
        _add_column(hidden, first_weights, base, np.float32(escapes / np.float32(36.0)))
    if prime != 0:
        _add_column(hidden, first_weights, base + 1, np.float32(prime / np.float32(PRIME_CAP)))
    if dance != 0:
        _add_column(hidden, first_weights, base + 2, np.float32(dance / np.float32(36.0)))


@njit(cache=True, nogil=True)
def _add_exposure(hidden, first_weights, base, sources, open_, targets, hits_of_roll):
    """Version-2 exposure columns ``base .. base + 24`` of one side (see ``roll_features.exposure_features``)."""
    if targets == 0 or sources == 0:
        return
    any_target = 0
    roll = 0
    for a in range(1, 7):
        for b in range(a, 7):
            hits = _reach(sources, open_, a, b) & targets
            hits_of_roll[roll] = hits
            roll += 1
            if hits != 0:
                any_target += 1 if a == b else 2
    if any_target == 0:
        return
    # Per target (a side has few lone checkers): the rolls that reach it.
    remaining = targets
    for bit in range(1, 25):
        if remaining == 0:
            break
        mask = 1 << bit
        if remaining & mask:
            remaining ^= mask
            count = 0
            roll = 0
            for a in range(1, 7):
                for b in range(a, 7):
                    if hits_of_roll[roll] & mask:
                        count += 1 if a == b else 2
                    roll += 1
            if count > 0:
                # The side's own point q is the attacker's point 25 - q: column base + q - 1.
                _add_column(hidden, first_weights, base + 24 - bit, np.float32(count / np.float32(36.0)))
    _add_column(hidden, first_weights, base + 24, np.float32(any_target / np.float32(36.0)))


@njit(cache=True, nogil=True)
def _first_layer_parallel(hidden, first_weights, point_table, board, off, bar, row, table_a, table_b,
                          scalars_a, scalars_b, contact_a, contact_b, passed_a, passed_b, contact, running):
    """The first-layer sums of one running-game row (``paths = "parallel"``, encoding version 4), added to
    ``hidden`` (which holds the bias and rule flags): ``encoding.encode``'s columns path-aware.

    Side a (board > 0) has its own point ``column + 1``, side b ``(column + 12) % 24 + 1``; no pins, no
    mother, nothing can be hit (the exposure columns are 0); a point is open to a side when no checker of
    the other stands on it. ``contact``: the contact columns; ``running``: the passed columns.
    """
    pips_a = 0
    pips_b = 0
    outside_a = 0
    outside_b = 0
    count24_a = 0
    count24_b = 0
    passed_a_now = off[row, 0] > 0
    passed_b_now = off[row, 1] > 0
    sources_a = 0
    open_a = 0
    sources_b = 0
    open_b = 0
    for column in range(24):
        stack = board[row, column]
        point_a = column + 1
        point_b = (column + 12) % 24 + 1
        if stack > 0:
            _add_column1(hidden, point_table[table_a + column], stack)
            pips_a += point_a * stack
            if point_a > 6:
                outside_a += stack
            if point_a < _PASSED_BELOW:
                passed_a_now = True
            if point_a == 24:
                count24_a = stack
            sources_a |= 1 << point_a
        else:
            open_b |= 1 << point_b  # no checker of a here: open to b
        if stack < 0:
            free_b = -stack
            _add_column1(hidden, point_table[table_b + point_b - 1], free_b)
            pips_b += point_b * free_b
            if point_b > 6:
                outside_b += free_b
            if point_b < _PASSED_BELOW:
                passed_b_now = True
            if point_b == 24:
                count24_b = free_b
            sources_b |= 1 << point_b
        else:
            open_a |= 1 << point_a  # no checker of b here: open to a
    if contact:
        if bar[row, 0] > 0:
            sources_a = 1 << 25
        if bar[row, 1] > 0:
            sources_b = 1 << 25
        _add_contact(hidden, first_weights, contact_a, sources_a, open_a, 1 if outside_a + bar[row, 0] == 0 else 0)
        _add_contact(hidden, first_weights, contact_b, sources_b, open_b, 1 if outside_b + bar[row, 1] == 0 else 0)
    for side in range(2):
        if side == 0:
            base = scalars_a
            count24 = count24_a
            pips = pips_a
            outside = outside_a
        else:
            base = scalars_b
            count24 = count24_b
            pips = pips_b
            outside = outside_b
        side_off = off[row, side]
        side_bar = bar[row, side]
        if count24 > 0:
            _add_column(hidden, first_weights, base, np.float32(count24 / CHECKER_SCALE))
        if side_off > 0:
            _add_column(hidden, first_weights, base + 4, np.float32(side_off / CHECKER_SCALE))
        pip_value = np.float32((pips + 25.0 * side_bar) / PIP_SCALE)
        if pip_value != 0.0:
            _add_column(hidden, first_weights, base + 5, pip_value)
        if side_bar > 0:
            _add_column(hidden, first_weights, base + 6, np.float32(side_bar / BAR_SCALE))
        if outside + side_bar == 0:
            _add_column1(hidden, first_weights, base + 7)
    if running:
        if passed_a_now:
            _add_column1(hidden, first_weights, passed_a)
        if passed_b_now:
            _add_column1(hidden, first_weights, passed_b)


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def evaluate_rows(board, pinned, off, bar, rules_id, rule_bias, mother_rules, parallel_rules, flip, exposure,
                   contact, running, classes,
                   first_weights, point_table, dense_weights, dense_bias, layer_shapes, activation,
                   points, output_order, start, stop, probabilities, equities, first_only, first_out):
    """Rows ``start:stop``: probabilities (in ``output_order``) and equity (with ``points``) into the outputs.

    With ``first_only`` the kernel stops after the first layer: it writes each evaluated row's
    first-layer activations (the sums themselves with NO_ACTIVATION) into ``first_out`` (B, H0) and
    leaves that row's probabilities and equity to the caller (the dense layers then run batched, as
    matrix products); finished rows are written as always.

    board, pinned: (B, 24) int8; off, bar: (B, 2) int8; rules_id: (B,) int8;
    rule_bias: (R, H0) float32 first-layer bias plus the rule-flag columns of each rule set;
    mother_rules: (R,) bool; parallel_rules: (R,) bool, the running games (their rows take
    ``_first_layer_parallel``; only version-4 networks get them).
    flip: read each position from the other side (the opponent of its mover to move).
    exposure: compute the version-2 exposure columns (first_weights has 309 rows or more).
    contact: compute the version-3 contact columns too (first_weights has 315 rows or more).
    running: the version-4 columns (first_weights has 318 rows): the passed columns of the running games
    (rules.parallel is a rule flag, folded into ``rule_bias``; all three are 0 in the other variants).
    classes: (B,) int64 outcome class (in output order) of a finished row, written one-hot and not
    evaluated; EVALUATE_ROW (-1) for the rows to evaluate, SKIP_ROW (-2) for rows left untouched.
    first_weights: (259, 309, 315 or 318, H0) float32, the first layer transposed.
    point_table: (48, 16, H0) float32, the first layer's sum over the four free-checker units of a point
    (``24 * side + point - 1``, side 0 = the view's mover) holding n free checkers.
    dense_weights / dense_bias: later layers, flat, each transposed: (in, out) row-major;
    layer_shapes: (L, 4) int64 rows (in, out, weight offset, bias offset).
    activation: a code of ACTIVATION_CODES (or NO_ACTIVATION), applied after every layer but the last.
    points: (K,) points of the output classes; output_order: (K,) network class of each output column.
    probabilities: (B, K) float32 out; equities: (B,) float32 out.
    first_only: bool; first_out: (B, H0) float32 out when ``first_only`` (else any float32 matrix).
    """
    width0 = first_weights.shape[1]
    widest = width0
    for layer in range(layer_shapes.shape[0]):
        widest = max(widest, layer_shapes[layer, 1])
    hidden = np.empty(widest, dtype=np.float32)
    following = np.empty(widest, dtype=np.float32)
    nonzero = np.empty(widest, dtype=np.int64)
    num_classes = points.shape[0]
    logits = np.empty(num_classes, dtype=np.float64)
    # Column blocks of the side that moved in the stored view ("a", board > 0) and of the other ("b").
    if flip:
        points_a, points_b = _OPPONENT_BLOCK, _MOVER_BLOCK
        scalars_a, scalars_b = _OPPONENT_SCALARS, _MOVER_SCALARS
        table_a, table_b = 24, 0
        exposure_a, exposure_b = _OPPONENT_EXPOSURE, _MOVER_EXPOSURE
        contact_a, contact_b = _OPPONENT_CONTACT, _MOVER_CONTACT
        passed_a, passed_b = _OPPONENT_PASSED, _MOVER_PASSED
    else:
        points_a, points_b = _MOVER_BLOCK, _OPPONENT_BLOCK
        scalars_a, scalars_b = _MOVER_SCALARS, _OPPONENT_SCALARS
        table_a, table_b = 0, 24
        exposure_a, exposure_b = _MOVER_EXPOSURE, _OPPONENT_EXPOSURE
        contact_a, contact_b = _MOVER_CONTACT, _OPPONENT_CONTACT
        passed_a, passed_b = _MOVER_PASSED, _OPPONENT_PASSED
    hits_of_roll = np.zeros(21, dtype=np.int64)
    for row in range(start, stop):
        outcome = classes[row]
        if outcome == SKIP_ROW:
            continue
        if outcome >= 0:
            for k in range(num_classes):
                probabilities[row, k] = 0.0
            probabilities[row, outcome] = 1.0
            equities[row] = points[outcome]
            continue
        rules = rules_id[row]
        bias = rule_bias[rules]
        for unit in range(width0):
            hidden[unit] = bias[unit]
        if parallel_rules[rules]:
            _first_layer_parallel(hidden, first_weights, point_table, board, off, bar, row, table_a, table_b,
                                  scalars_a, scalars_b, contact_a, contact_b, passed_a, passed_b, contact, running)
        else:
            pips_a = 0
            pips_b = 0
            outside_a = 0
            outside_b = 0
            count24_a = 0
            count24_b = 0
            # Exposure masks (version 2), each in its attacker's numbering: a's point column + 1, b's 24 - column.
            sources_a = 0
            open_a = 0
            lone_b = 0
            sources_b = 0
            open_b = 0
            lone_a = 0
            for column in range(24):
                stack = board[row, column]
                pin = pinned[row, column]
                # Side a: own point column + 1. Side b: own point 24 - column.
                free_a = stack if stack > 0 else 0
                free_b = -stack if stack < 0 else 0
                pinned_a = 1 if pin == 1 else 0
                pinned_b = 1 if pin == -1 else 0
                if free_a > 0:
                    _add_column1(hidden, point_table[table_a + column], free_a)
                if pinned_a:
                    _add_column1(hidden, first_weights, points_a + 5 * column + 4)
                if free_b > 0:
                    _add_column1(hidden, point_table[table_b + 23 - column], free_b)
                if pinned_b:
                    _add_column1(hidden, first_weights, points_b + 5 * (23 - column) + 4)
                count_a = free_a + pinned_a
                count_b = free_b + pinned_b
                pips_a += (column + 1) * count_a
                pips_b += (24 - column) * count_b
                if column >= 6:
                    outside_a += count_a
                if column <= 17:
                    outside_b += count_b
                if column == 23:
                    count24_a = count_a
                if column == 0:
                    count24_b = count_b
                if exposure:
                    bit_a = 1 << (column + 1)
                    bit_b = 1 << (24 - column)
                    if free_a > 0:
                        sources_a |= bit_a
                    if free_b > 0:
                        sources_b |= bit_b
                    if free_b == 1 and pin == 0:
                        lone_b |= bit_a
                    if free_b == 0 or (free_b == 1 and pin == 0):
                        open_a |= bit_a
                    if free_a == 1 and pin == 0:
                        lone_a |= bit_b
                    if free_a == 0 or (free_a == 1 and pin == 0):
                        open_b |= bit_b
            if exposure:
                if bar[row, 0] > 0:
                    sources_a = 1 << 25
                if bar[row, 1] > 0:
                    sources_b = 1 << 25
                _add_exposure(hidden, first_weights, exposure_a, sources_b, open_b, lone_a, hits_of_roll)
                _add_exposure(hidden, first_weights, exposure_b, sources_a, open_a, lone_b, hits_of_roll)
            if contact:
                # Each side's own masks: its sources, the points open to it, whether it is all home.
                _add_contact(hidden, first_weights, contact_a, sources_a, open_a,
                             1 if outside_a + bar[row, 0] == 0 else 0)
                _add_contact(hidden, first_weights, contact_b, sources_b, open_b,
                             1 if outside_b + bar[row, 1] == 0 else 0)
            mother_on = mother_rules[rules]
            for side in range(2):
                if side == 0:
                    base = scalars_a
                    count24 = count24_a
                    stack = board[row, 23]
                    pin = pinned[row, 23]
                    free24 = stack if stack > 0 else 0
                    pinned24 = pin == 1
                    pips = pips_a
                    outside = outside_a
                else:
                    base = scalars_b
                    count24 = count24_b
                    stack = board[row, 0]
                    pin = pinned[row, 0]
                    free24 = -stack if stack < 0 else 0
                    pinned24 = pin == -1
                    pips = pips_b
                    outside = outside_b
                side_off = off[row, side]
                side_bar = bar[row, side]
                if count24 > 0:
                    _add_column(hidden, first_weights, base, np.float32(count24 / CHECKER_SCALE))
                if mother_on:
                    if free24 == 1 and pin == 0:
                        _add_column1(hidden, first_weights, base + 1)
                    if pinned24:
                        _add_column1(hidden, first_weights, base + 2)
                    if free24 == 0 and not pinned24:
                        _add_column1(hidden, first_weights, base + 3)
                if side_off > 0:
                    _add_column(hidden, first_weights, base + 4, np.float32(side_off / CHECKER_SCALE))
                pip_value = np.float32((pips + 25.0 * side_bar) / PIP_SCALE)
                if pip_value != 0.0:
                    _add_column(hidden, first_weights, base + 5, pip_value)
                if side_bar > 0:
                    _add_column(hidden, first_weights, base + 6, np.float32(side_bar / BAR_SCALE))
                if outside + side_bar == 0:
                    _add_column1(hidden, first_weights, base + 7)

        if first_only:
            _activate(hidden, width0, activation)
            for unit in range(width0):
                first_out[row, unit] = hidden[unit]
            continue
        # Dense layers: activation, then the next layer, until the logits. Each layer runs over the
        # nonzero inputs only (ReLU leaves about nine units in ten at zero in the trained nets), each
        # adding its weight row (the layer is stored transposed) to the outputs: a zero input adds
        # nothing, so skipping it changes no value.
        width = width0
        for layer in range(layer_shapes.shape[0]):
            _activate(hidden, width, activation)
            inputs = layer_shapes[layer, 0]
            outputs = layer_shapes[layer, 1]
            weights_at = layer_shapes[layer, 2]
            bias_at = layer_shapes[layer, 3]
            active = 0
            for i in range(inputs):
                # Branch-free compaction of the nonzero inputs' indices.
                nonzero[active] = i
                active += 1 if hidden[i] != 0.0 else 0
            for out in range(outputs):
                following[out] = dense_bias[bias_at + out]
            # Four inputs a pass: each output is loaded and stored once for four weight rows (the loop is
            # bound by those loads and stores), and summed in the same order as one input a pass (the same
            # values to the bit).
            k = 0
            while k + 4 <= active:
                i0, i1, i2, i3 = nonzero[k], nonzero[k + 1], nonzero[k + 2], nonzero[k + 3]
                v0, v1, v2, v3 = hidden[i0], hidden[i1], hidden[i2], hidden[i3]
                # Slices, so that the indices below are known non-negative (no wraparound check).
                w0 = dense_weights[weights_at + i0 * outputs: weights_at + (i0 + 1) * outputs]
                w1 = dense_weights[weights_at + i1 * outputs: weights_at + (i1 + 1) * outputs]
                w2 = dense_weights[weights_at + i2 * outputs: weights_at + (i2 + 1) * outputs]
                w3 = dense_weights[weights_at + i3 * outputs: weights_at + (i3 + 1) * outputs]
                for out in range(outputs):
                    following[out] = (((following[out] + v0 * w0[out]) + v1 * w1[out]) + v2 * w2[out]) + v3 * w3[out]
                k += 4
            while k < active:
                i = nonzero[k]
                value = hidden[i]
                weights = dense_weights[weights_at + i * outputs: weights_at + (i + 1) * outputs]
                for out in range(outputs):
                    following[out] += value * weights[out]
                k += 1
            for out in range(outputs):
                hidden[out] = following[out]
            width = outputs
        # Softmax over the logits (in float64), then the equity.
        largest = -np.inf
        for k in range(num_classes):
            logits[k] = hidden[k]
            if logits[k] > largest:
                largest = logits[k]
        total64 = 0.0
        for k in range(num_classes):
            logits[k] = math.exp(logits[k] - largest)
            total64 += logits[k]
        value = 0.0
        for k in range(num_classes):
            probability = logits[output_order[k]] / total64
            probabilities[row, k] = probability
            value += probability * points[k]
        equities[row] = value
