"""Fast inference: encoding + :class:`~tapa_ai.model.EvaluatorNet` in one numba kernel, exploiting sparsity.

The ``tapa-td`` encoding (:mod:`tapa_ai.encoding`) has 259 columns, but a
position sets only a few dozen of them: an empty point sets none, a point
with ``n`` free checkers sets at most four. So the first layer is computed as
GNU Backgammon does, as the bias plus the weight columns of the nonzero
features (each times its value), straight from the int8 arrays of a
:class:`~tapa_ai.movegen.batch.PositionBatch` — the feature matrix is never
built. The remaining layers, the activation, the softmax and the equity are
dense. The result equals ``encode`` followed by the torch network to float32
rounding (``tests/test_fast_eval.py`` checks 1e-5 on every variant).

The kernel can read a batch **from the other side** (``flip=True``) by index
arithmetic, so the afterstates of self-play (seen from the side that moved)
are evaluated with the opponent to roll without copying them into
``positions.flipped()``.

Usage::

    evaluator = FastEvaluator.from_net(net)          # copies the weights (numpy float32)
    probabilities, equities = evaluator.evaluate(batch)   # == evaluate(net, encode(batch))
    distributions = afterstate_distributions_fast(evaluator, afterstates)
    evaluator.refresh(net)                           # after a learning step (about 0.1 ms at 259 x 128)

:func:`fast_evaluator_for` keeps one evaluator per network and refreshes it
whenever torch reports that a parameter changed in place (an optimizer step,
``load_state_dict``), so callers holding only the network stay correct.
"""

from __future__ import annotations

import math
import os
import threading
import weakref
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np
from numba import njit

from .encoding import (
    BAR_SCALE, CHECKER_SCALE, MOTHER_POINTS_SCALE, MOVER_CONTACT, MOVER_EXPOSURE, MOVER_SCALARS, OPPONENT_CONTACT,
    OPPONENT_EXPOSURE, OPPONENT_POINTS, OPPONENT_SCALARS, PIP_SCALE, PRIME_CAP, RULES_COLUMNS, contact_counts,
    num_features, roll_reach,
)
from .model import EvaluatorNet, outcome_classes, outcome_points, swap_sides
from .movegen.batch import PositionBatch

__all__ = ["ACTIVATION_CODES", "FastEvaluator", "afterstate_distributions_fast", "fast_evaluator_for",
           "MIN_ROWS_PER_THREAD"]

ACTIVATION_CODES = {"relu": 0, "tanh": 1, "sigmoid": 2, "gelu": 3, "silu": 4}
"""Activations the kernel implements, as :data:`tapa_ai.model.ACTIVATIONS` defines them (GELU exact, with erf)."""

MIN_ROWS_PER_THREAD = 256
"""Below this many rows per thread a batch runs on the calling thread (a hand-off costs ~20 us)."""

_MOVER_BLOCK = 0
_OPPONENT_BLOCK = OPPONENT_POINTS.start  # 120
_MOVER_SCALARS = MOVER_SCALARS.start  # 240
_OPPONENT_SCALARS = OPPONENT_SCALARS.start  # 248
_RULES = RULES_COLUMNS.start  # 256
_MOVER_EXPOSURE = MOVER_EXPOSURE.start  # 259 (version 2)
_OPPONENT_EXPOSURE = OPPONENT_EXPOSURE.start  # 284
_MOVER_CONTACT = MOVER_CONTACT.start  # 309 (version 3)
_OPPONENT_CONTACT = OPPONENT_CONTACT.start  # 312
_EXTRA_VALUES = (np.arange(4, 16, dtype=np.float32) - 3) / 2  # free_extra of 4..15 free checkers


# -- the kernel ---------------------------------------------------------------------------
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
    """Version-3 contact columns ``base .. base + 2`` of one side (see ``encoding.contact_features``)."""
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
    """Version-2 exposure columns ``base .. base + 24`` of one side (see ``encoding.exposure_features``)."""
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


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _evaluate_rows(board, pinned, off, bar, rules_id, rule_bias, mother_rules, flip, exposure, contact, classes,
                   first_weights, point_table, dense_weights, dense_bias, layer_shapes, activation,
                   points, output_order, start, stop, probabilities, equities):
    """Rows ``start:stop``: probabilities (in ``output_order``) and equity (with ``points``) into the outputs.

    board, pinned: (B, 24) int8; off, bar: (B, 2) int8; rules_id: (B,) int8;
    rule_bias: (R, H0) float32 first-layer bias plus the rule-flag columns of each rule set;
    mother_rules: (R,) bool.
    flip: read each position from the other side (the opponent of its mover to move).
    exposure: compute the version-2 exposure columns (first_weights has 309 rows or more).
    contact: compute the version-3 contact columns too (first_weights has 315 rows).
    classes: (B,) int64 outcome class (in output order) of a finished row, written one-hot and not
    evaluated; -1 for the rows to evaluate.
    first_weights: (259, 309 or 315, H0) float32, the first layer transposed.
    point_table: (48, 16, H0) float32, the first layer's sum over the four free-checker units of a point
    (``24 * side + point - 1``, side 0 = the view's mover) holding n free checkers.
    dense_weights / dense_bias: later layers, flat, each (out, in) row-major;
    layer_shapes: (L, 4) int64 rows (in, out, weight offset, bias offset).
    activation: a code of ACTIVATION_CODES, applied after every layer but the last.
    points: (K,) points of the output classes; output_order: (K,) network class of each output column.
    probabilities: (B, K) float32 out; equities: (B,) float32 out.
    """
    width0 = first_weights.shape[1]
    widest = width0
    for layer in range(layer_shapes.shape[0]):
        widest = max(widest, layer_shapes[layer, 1])
    hidden = np.empty(widest, dtype=np.float32)
    following = np.empty(widest, dtype=np.float32)
    num_classes = points.shape[0]
    logits = np.empty(num_classes, dtype=np.float64)
    # Column blocks of the side that moved in the stored view ("a", board > 0) and of the other ("b").
    if flip:
        points_a, points_b = _OPPONENT_BLOCK, _MOVER_BLOCK
        scalars_a, scalars_b = _OPPONENT_SCALARS, _MOVER_SCALARS
        table_a, table_b = 24, 0
        exposure_a, exposure_b = _OPPONENT_EXPOSURE, _MOVER_EXPOSURE
        contact_a, contact_b = _OPPONENT_CONTACT, _MOVER_CONTACT
    else:
        points_a, points_b = _MOVER_BLOCK, _OPPONENT_BLOCK
        scalars_a, scalars_b = _MOVER_SCALARS, _OPPONENT_SCALARS
        table_a, table_b = 0, 24
        exposure_a, exposure_b = _MOVER_EXPOSURE, _OPPONENT_EXPOSURE
        contact_a, contact_b = _MOVER_CONTACT, _OPPONENT_CONTACT
    hits_of_roll = np.zeros(21, dtype=np.int64)
    for row in range(start, stop):
        outcome = classes[row]
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
            _add_contact(hidden, first_weights, contact_a, sources_a, open_a, 1 if outside_a + bar[row, 0] == 0 else 0)
            _add_contact(hidden, first_weights, contact_b, sources_b, open_b, 1 if outside_b + bar[row, 1] == 0 else 0)
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

        # Dense layers: activation, then the next layer, until the logits.
        width = width0
        for layer in range(layer_shapes.shape[0]):
            _activate(hidden, width, activation)
            inputs = layer_shapes[layer, 0]
            outputs = layer_shapes[layer, 1]
            weights_at = layer_shapes[layer, 2]
            bias_at = layer_shapes[layer, 3]
            for out in range(outputs):
                # A slice, so that the index below is known non-negative (no wraparound check).
                weights = dense_weights[weights_at + out * inputs: weights_at + (out + 1) * inputs]
                total = np.float32(0.0)
                for i in range(inputs):
                    total += weights[i] * hidden[i]
                following[out] = total + dense_bias[bias_at + out]
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


# -- threads ------------------------------------------------------------------------------
_executor: Optional[ThreadPoolExecutor] = None
_executor_lock = threading.Lock()


def default_threads() -> int:
    """Threads of the kernel: ``TAPA_EVAL_THREADS`` or the CPU count."""
    return max(1, int(os.environ.get("TAPA_EVAL_THREADS", os.cpu_count() or 1)))


def _pool(threads: int) -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None or _executor._max_workers < threads:  # noqa: SLF001 - resize only when needed
            _executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="fast-eval")
        return _executor


# -- the evaluator ----------------------------------------------------------------------------
class FastEvaluator:
    """A numpy copy of an :class:`EvaluatorNet`'s weights and the kernel that evaluates batches with them.

    Not tied to torch after :meth:`from_net`: call :meth:`refresh` after the
    network's weights change (a learning step); until then it evaluates the
    weights it copied.
    """

    def __init__(self, net: EvaluatorNet, threads: Optional[int] = None) -> None:
        activation = net.config.activation
        if activation not in ACTIVATION_CODES:
            raise ValueError(f"fast evaluator: activation {activation!r} is not implemented; "
                             f"known: {sorted(ACTIVATION_CODES)} (use the torch path)")
        self.activation = ACTIVATION_CODES[activation]
        self.rules = net.rules
        self.num_outcomes = net.num_outcomes
        self.points = outcome_points(net.rules).astype(np.float32)
        self.threads = default_threads() if threads is None else max(1, int(threads))
        classes = self.num_outcomes
        self._identity = np.arange(classes, dtype=np.int64)
        self._swapped = swap_sides(self._identity)
        self.refresh(net)

    @classmethod
    def from_net(cls, net: EvaluatorNet, threads: Optional[int] = None) -> "FastEvaluator":
        """An evaluator holding a copy of ``net``'s current weights."""
        return cls(net, threads)

    def refresh(self, net: EvaluatorNet) -> None:
        """Copy ``net``'s current weights (same architecture as at construction)."""
        linears = [module for module in net.layers if hasattr(module, "weight")]
        weights = [module.weight.detach().to("cpu", copy=False).numpy() for module in linears]
        biases = [module.bias.detach().to("cpu", copy=False).numpy() for module in linears]
        width = num_features(net.encoding_version)
        if weights[0].shape[1] != width:
            raise ValueError(f"network's first layer has {weights[0].shape[1]} inputs, its encoding {width}")
        self.exposure = net.encoding_version >= 2
        self.contact = net.encoding_version >= 3
        # First layer transposed: the weights of one feature are one contiguous row.
        self.first_weights = np.ascontiguousarray(weights[0].T, dtype=np.float32)  # (259, 309 or 315, H0)
        self.first_bias = np.array(biases[0], dtype=np.float32)  # (H0,)
        # The free-checker units of a point (>= 1, >= 2, >= 3, (n - 3) / 2) summed per count n = 0..15.
        units = self.first_weights[: 2 * _OPPONENT_BLOCK].reshape(48, 5, -1)  # (48 points, 5 units, H0)
        table = np.empty((48, 16, units.shape[2]), dtype=np.float32)
        table[:, 0] = 0.0
        table[:, 1] = units[:, 0]
        table[:, 2] = units[:, 0] + units[:, 1]
        table[:, 3] = table[:, 2] + units[:, 2]
        table[:, 4:] = table[:, 3, None] + _EXTRA_VALUES[None, :, None] * units[:, 3, None]
        self.point_table = table  # (48, 16, H0)
        shapes = []
        weight_at = bias_at = 0
        for weight in weights[1:]:
            shapes.append((weight.shape[1], weight.shape[0], weight_at, bias_at))
            weight_at += weight.size
            bias_at += weight.shape[0]
        self.layer_shapes = np.array(shapes, dtype=np.int64).reshape(len(shapes), 4)
        if weights[1:]:
            self.dense_weights = np.concatenate([w.reshape(-1) for w in weights[1:]]).astype(np.float32)
            self.dense_bias = np.concatenate(biases[1:]).astype(np.float32)
        else:
            self.dense_weights = np.zeros(1, dtype=np.float32)
            self.dense_bias = np.zeros(1, dtype=np.float32)
        outputs = weights[-1].shape[0]
        if outputs != self.num_outcomes:
            raise ValueError(f"network has {outputs} outputs, its rule set {self.num_outcomes} outcome classes")

    # ------------------------------------------------------------------
    def _run(self, batch: PositionBatch, flip: bool, classes: np.ndarray, output_order: np.ndarray,
             threads: Optional[int]) -> tuple[np.ndarray, np.ndarray]:
        size = len(batch)
        probabilities = np.empty((size, self.num_outcomes), dtype=np.float32)
        equities = np.empty(size, dtype=np.float32)
        if size == 0:
            return probabilities, equities
        flags = np.array([[float(r.pins), float(r.backgammons), r.mother_points / MOTHER_POINTS_SCALE]
                          for r in batch.rules], dtype=np.float32).reshape(len(batch.rules), 3)
        # The rule flags are constant per rule set: folded into one first-layer bias per rule set.
        rule_bias = self.first_bias + (flags[:, :, None] * self.first_weights[None, _RULES:_RULES + 3]).sum(axis=1)
        mother_rules = np.array([r.pins and r.mother_points > 0 for r in batch.rules], dtype=np.bool_)
        arrays = (
            np.ascontiguousarray(batch.board, dtype=np.int8), np.ascontiguousarray(batch.pinned, dtype=np.int8),
            np.ascontiguousarray(batch.off, dtype=np.int8), np.ascontiguousarray(batch.bar, dtype=np.int8),
            np.ascontiguousarray(batch.rules_id, dtype=np.int8), np.ascontiguousarray(rule_bias, dtype=np.float32),
            mother_rules, flip, self.exposure, self.contact, np.ascontiguousarray(classes, dtype=np.int64), self.first_weights, self.point_table,
            self.dense_weights, self.dense_bias, self.layer_shapes, self.activation, self.points, output_order,
        )
        threads = self.threads if threads is None else max(1, int(threads))
        parts = min(threads, max(1, size // MIN_ROWS_PER_THREAD))
        if parts <= 1:
            _evaluate_rows(*arrays, 0, size, probabilities, equities)
        else:
            bounds = np.linspace(0, size, parts + 1).astype(np.int64)
            pool = _pool(parts)
            futures = [pool.submit(_evaluate_rows, *arrays, int(lo), int(hi), probabilities, equities)
                       for lo, hi in zip(bounds[1:-1], bounds[2:])]
            _evaluate_rows(*arrays, 0, int(bounds[1]), probabilities, equities)  # the first slice here
            for future in futures:
                future.result()
        return probabilities, equities

    def evaluate(self, batch: PositionBatch, threads: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities (B, K) and equity (B,), float32, of every position from its side to move.

        Equals :func:`tapa_ai.model.evaluate` of ``encode(batch)``.
        """
        classes = np.full(len(batch), -1, dtype=np.int64)
        return self._run(batch, False, classes, self._identity, threads)

    def evaluate_flipped(self, batch: PositionBatch, threads: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
        """The evaluation of ``batch.flipped()`` (the other side to move), read back from ``batch``'s side.

        Probabilities (B, K) and equity (B,) from the view of ``batch``'s side
        to move; no copy of the batch is made.
        """
        classes = np.full(len(batch), -1, dtype=np.int64)
        return self._run(batch, True, classes, self._swapped, threads)

    def afterstate_distributions(self, afterstates, threads: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
        """(N, K) distributions and (N,) equities of afterstates from the mover's side (see the module function)."""
        classes = np.full(len(afterstates), -1, dtype=np.int64)
        over = np.flatnonzero(afterstates.game_over)
        if over.size:
            classes[over] = outcome_classes(afterstates.result_kind[over], np.ones(over.size, dtype=bool))
        return self._run(afterstates.positions, True, classes, self._swapped, threads)


def afterstate_distributions_fast(evaluator: FastEvaluator, afterstates) -> np.ndarray:
    """(N, K) outcome probabilities of every afterstate, from the view of the side that moved.

    Same contract as :func:`tapa_ai.training.policy.afterstate_distributions`:
    a finished game is its exact outcome (one-hot); any other afterstate is the
    network's evaluation of the position with the opponent to roll, read from
    the mover's side. The afterstates are read flipped in place (no copy).
    """
    return evaluator.afterstate_distributions(afterstates)[0]


# -- one evaluator per network, kept up to date ----------------------------------------------
_EVALUATORS: "weakref.WeakKeyDictionary[EvaluatorNet, tuple[tuple, FastEvaluator]]" = weakref.WeakKeyDictionary()


def _parameter_versions(net: EvaluatorNet) -> tuple:
    # Every in-place change of a tensor (optimizer step, load_state_dict, copy_) bumps its version.
    return tuple((id(p), p._version) for p in net.parameters())  # noqa: SLF001


def fast_evaluator_for(net: EvaluatorNet) -> Optional[FastEvaluator]:
    """The cached evaluator of ``net``, refreshed if its parameters changed since; None if it cannot have one.

    Cheap when nothing changed (a tuple of parameter versions is compared).
    ``TAPA_FAST_EVAL=0`` in the environment disables the fast path (None).
    """
    if os.environ.get("TAPA_FAST_EVAL", "1") == "0":
        return None
    if net.config.activation not in ACTIVATION_CODES:
        return None
    versions = _parameter_versions(net)
    cached = _EVALUATORS.get(net)
    if cached is not None:
        seen, evaluator = cached
        if seen == versions:
            return evaluator
        evaluator.refresh(net)
    else:
        evaluator = FastEvaluator.from_net(net)
    _EVALUATORS[net] = (versions, evaluator)
    return evaluator


def refresh_fast_evaluator(net: EvaluatorNet) -> None:
    """Copy ``net``'s weights into its cached evaluator now (call after a learning step)."""
    fast_evaluator_for(net)
