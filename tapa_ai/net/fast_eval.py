"""Fast inference: encoding + :class:`~tapa_ai.net.model.EvaluatorNet` in one numba kernel, exploiting sparsity.

The ``tapa-td`` encoding (:mod:`tapa_ai.net.encoding`) has 259 columns, but a
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
    distributions, equities = evaluator.afterstate_distributions(afterstates)
    evaluator.refresh(net)                           # after a learning step (about 0.1 ms at 259 x 128)

What plays by it is :class:`tapa_ai.net.evaluator.KernelEvaluator`, which
owns one and refreshes it whenever torch reports that a parameter of its
network changed in place (an optimizer step, ``load_state_dict``).
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np
import torch

from ..movegen.batch import PositionBatch
from ..movegen.compile_notice import notice_compile
from .encoding import (CASCADE_COLUMNS, CASCADE_VERSION, MOTHER_POINTS_SCALE, OPPONENT_POINTS, PARALLEL_COLUMN,
                       RULES_COLUMNS, RUNNING_VERSION, cascade_features, check_rules_version, num_features)
from .fast_kernel import (ACTIVATION_CODES, EVALUATE_ROW, EXTRA_VALUES, NO_ACTIVATION, SKIP_ROW, evaluate_rows,
                          race_flags)
from .model import ACTIVATIONS, EvaluatorNet
from ..rules.outcomes import outcome_classes, outcome_points, swap_sides

__all__ = ["ACTIVATION_CODES", "DENSE_MODES", "DENSE_BLOCK_ROWS", "FIRST_CHUNK_ROWS", "FastEncoder", "FastEvaluator",
           "fast_encode", "MIN_ROWS_PER_THREAD"]

DENSE_MODES = ("fused", "batched")
"""How the layers after the first run: ``fused`` (the default) in the kernel, row by row, so that a row's
values never depend on the other rows of its batch, adding only the nonzero units' weights (most ReLU
units of a trained net are zero); ``batched`` as one dense matrix product per layer over the whole batch
(torch, so BLAS) after the kernel's sparse first layer: faster for wide layers of untrained (dense) nets,
but BLAS rounds a row differently in products of other shapes, so the same position can get values a few
ULP apart in two batches."""

MIN_ROWS_PER_THREAD = 256
"""Below this many rows per thread a batch runs on the calling thread (a hand-off costs ~20 us)."""
CHUNKS_PER_THREAD = 4
"""Chunks of a batch per thread, taken in turn by the threads (rows are independent: any split gives the same values)."""
MIN_ROWS_PER_CHUNK = 128
"""The smallest chunk worth a turn of its own."""


# -- threads ------------------------------------------------------------------------------
_executor: Optional[ThreadPoolExecutor] = None
_executor_lock = threading.Lock()

DENSE_BLOCK_ROWS = 512
"""Rows per matrix product of the batched dense layers (fixed, so results do not depend on the thread count)."""
FIRST_CHUNK_ROWS = 64 * DENSE_BLOCK_ROWS
"""Rows per pass of the batched path (its first-layer activations: 32 MB at 256 units)."""

_CPUS = os.cpu_count() or 1
"""The machine's CPU count, read once (os.cpu_count() reads /sys: ~0.1 ms, once per call was 1% of self-play)."""


def default_threads() -> int:
    """Threads of the kernel: ``TAPA_EVAL_THREADS`` or the CPU count."""
    return max(1, int(os.environ.get("TAPA_EVAL_THREADS", _CPUS)))


def _pool(threads: int) -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None or _executor._max_workers < threads:  # noqa: SLF001 - resize only when needed
            _executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="fast-eval")
        return _executor


def _point_table(first_weights: np.ndarray) -> np.ndarray:
    """(48, 16, H0): the free-checker units of a point (>= 1, >= 2, >= 3, (n - 3) / 2) summed per count n = 0..15."""
    units = first_weights[: 2 * OPPONENT_POINTS.start].reshape(48, 5, -1)  # (48 points, 5 units, H0)
    table = np.empty((48, 16, units.shape[2]), dtype=np.float32)
    table[:, 0] = 0.0
    table[:, 1] = units[:, 0]
    table[:, 2] = units[:, 0] + units[:, 1]
    table[:, 3] = table[:, 2] + units[:, 2]
    table[:, 4:] = table[:, 3, None] + EXTRA_VALUES[None, :, None] * units[:, 3, None]
    return table


def _run_kernel(layer, batch: PositionBatch, flip: bool, classes: np.ndarray, output_order: np.ndarray,
                outputs: tuple, threads: int) -> None:
    """``evaluate_rows`` over ``batch`` with the arrays of ``layer`` (a FastEvaluator or FastEncoder), split over threads.

    ``outputs``: (probabilities, equities, first_only, first_out) as the kernel takes them.
    """
    notice_compile("the fast evaluator", evaluate_rows)
    flags = np.array([[float(r.pins), float(r.backgammons), r.mother_points / MOTHER_POINTS_SCALE]
                      for r in batch.rules], dtype=np.float32).reshape(len(batch.rules), 3)
    # The rule flags are constant per rule set: folded into one first-layer bias per rule set.
    rule_bias = layer.first_bias + (
        flags[:, :, None] * layer.first_weights[None, RULES_COLUMNS.start:RULES_COLUMNS.start + 3]).sum(axis=1)
    parallel_rules = np.array([r.parallel for r in batch.rules], dtype=np.bool_)
    cascade_rules = np.array([r.cascades for r in batch.rules], dtype=np.bool_)
    if cascade_rules.any() and layer.version < CASCADE_VERSION and cascade_rules[batch.rules_id].any():
        check_rules_version(batch.rules[int(batch.rules_id[cascade_rules[batch.rules_id]][0])], layer.version)
    if parallel_rules.any():
        if layer.version < RUNNING_VERSION and parallel_rules[batch.rules_id].any():
            check_rules_version(batch.rules[int(batch.rules_id[parallel_rules[batch.rules_id]][0])], layer.version)
        if layer.running:
            # rules.parallel (version 4) is a rule flag too: 1 for the running games.
            rule_bias = rule_bias + parallel_rules[:, None] * layer.first_weights[None, PARALLEL_COLUMN]
    mother_rules = np.array([r.pins and r.mother_points > 0 for r in batch.rules], dtype=np.bool_)
    rules_id = np.ascontiguousarray(batch.rules_id, dtype=np.int8)
    if layer.cascade and cascade_rules.any():
        # Version 5's cascade columns depend on the rule set, the turn counts and the pending stage only: each
        # combination met in the batch is folded into a first-layer bias of its own, a "rule set" of the kernel.
        for part_rules, part_bias, part_mother, part_parallel, part_classes in _cascade_parts(
                layer, batch, flip, classes, rule_bias, mother_rules, parallel_rules):
            _run_rows(layer, batch, flip, part_classes, output_order, outputs, threads, part_rules, part_bias,
                      part_mother, part_parallel)
        return
    _run_rows(layer, batch, flip, classes, output_order, outputs, threads, rules_id, rule_bias, mother_rules,
              parallel_rules)


_KERNEL_RULES = 127
"""The most first-layer biases one kernel pass can tell apart (its ``rules_id`` is int8)."""


def _cascade_parts(layer, batch: PositionBatch, flip: bool, classes: np.ndarray, rule_bias: np.ndarray,
                   mother_rules: np.ndarray, parallel_rules: np.ndarray):
    """Kernel passes that add version 5's cascade columns: (rules_id, rule_bias, mother_rules, parallel_rules,
    classes) each, the rows of a pass keyed by (rule set, cascade columns), the other rows skipped (SKIP_ROW).

    One pass unless the batch holds more than :data:`_KERNEL_RULES` combinations; a finished row is written by
    the first pass only."""
    features = cascade_features(batch, flip)  # (B, 11)
    # The 11 columns are fixed by (cascades, cascade_now x 2, stage number, steps, remainder): one integer key.
    stage = batch.stage.astype(np.int64)
    key = batch.rules_id.astype(np.int64)
    for value, size in ((features[:, 1], 2), (features[:, 2], 2), (stage[:, 0], 7), (stage[:, 1], 5),
                        (stage[:, 2] != 0, 2)):
        key = key * size + np.asarray(value, dtype=np.int64)
    combos, first_row, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    weights = layer.first_weights[CASCADE_COLUMNS]  # (11, H0)
    combo_rules = batch.rules_id[first_row].astype(np.intp)
    combo_bias = rule_bias[combo_rules] + (features[first_row][:, :, None] * weights[None]).sum(axis=1)
    combo_mother, combo_parallel = mother_rules[combo_rules], parallel_rules[combo_rules]
    for part, start in enumerate(range(0, len(combos), _KERNEL_RULES)):
        stop = min(start + _KERNEL_RULES, len(combos))
        mine = (inverse >= start) & (inverse < stop)
        part_classes = classes if len(combos) <= _KERNEL_RULES else np.where(
            mine | ((classes >= 0) & (part == 0)), classes, SKIP_ROW)
        part_rules = np.where(mine, inverse - start, 0).astype(np.int8)
        yield (part_rules, np.ascontiguousarray(combo_bias[start:stop], dtype=np.float32),
               np.ascontiguousarray(combo_mother[start:stop]), np.ascontiguousarray(combo_parallel[start:stop]),
               part_classes)


def _run_rows(layer, batch: PositionBatch, flip: bool, classes: np.ndarray, output_order: np.ndarray,
              outputs: tuple, threads: int, rules_id: np.ndarray, rule_bias: np.ndarray, mother_rules: np.ndarray,
              parallel_rules: np.ndarray) -> None:
    """One kernel pass over ``batch`` with the given per-"rule set" arrays (indexed by ``rules_id``)."""
    size = len(batch)
    arrays = (
        np.ascontiguousarray(batch.board, dtype=np.int8), np.ascontiguousarray(batch.pinned, dtype=np.int8),
        np.ascontiguousarray(batch.off, dtype=np.int8), np.ascontiguousarray(batch.bar, dtype=np.int8),
        rules_id, np.ascontiguousarray(rule_bias, dtype=np.float32),
        mother_rules, parallel_rules, flip, layer.exposure, layer.contact, layer.running,
        np.ascontiguousarray(classes, dtype=np.int64),
        layer.first_weights, layer.point_table, layer.dense_weights, layer.dense_bias, layer.layer_shapes,
        layer.activation, layer.points, output_order,
    )
    parts = min(threads, max(1, size // MIN_ROWS_PER_THREAD))
    if parts <= 1:
        evaluate_rows(*arrays, 0, size, *outputs)
        return
    # Chunks the threads take in turn (this one among them): a thread slowed down by other work on its core
    # (a learner thread, another process) takes fewer, instead of every thread waiting for its fixed share.
    chunks = min(parts * CHUNKS_PER_THREAD, max(parts, size // MIN_ROWS_PER_CHUNK))
    bounds = np.linspace(0, size, chunks + 1).astype(np.int64).tolist()
    taken = itertools.count()  # next() is atomic under the GIL

    def work() -> None:
        while (chunk := next(taken)) < chunks:
            evaluate_rows(*arrays, bounds[chunk], bounds[chunk + 1], *outputs)

    pool = _pool(parts)
    futures = [pool.submit(work) for _ in range(parts - 1)]
    work()
    for future in futures:
        future.result()


# -- the encoder --------------------------------------------------------------------------------
class FastEncoder:
    """:func:`~tapa_ai.net.encoding.encode` through the evaluator's kernel: its first layer with identity weights.

    With the identity as first layer (and no bias) the first layer's
    pre-activations *are* the features, so the kernel that evaluates
    self-play also writes the rows that learning trains on: one loop over
    the int8 arrays instead of the vectorized numpy encoder's passes (the
    exposure columns most of all). Equal to ``encode`` (``tests/test_fast_eval.py``).
    """

    def __init__(self, version: int, threads: Optional[int] = None) -> None:
        self.version = int(version)
        self.width = num_features(self.version)
        self.exposure = self.version >= 2
        self.contact = self.version >= 3
        self.running = self.version >= RUNNING_VERSION
        self.cascade = self.version >= CASCADE_VERSION
        self.first_weights = np.eye(self.width, dtype=np.float32)
        self.first_bias = np.zeros(self.width, dtype=np.float32)
        self.point_table = _point_table(self.first_weights)
        self.dense_weights = np.zeros(1, dtype=np.float32)
        self.dense_bias = np.zeros(1, dtype=np.float32)
        self.layer_shapes = np.zeros((0, 4), dtype=np.int64)
        self.activation = NO_ACTIVATION  # the first layer's sums are the features
        self.points = np.zeros(1, dtype=np.float32)
        self._order = np.zeros(1, dtype=np.int64)
        self.threads = default_threads() if threads is None else max(1, int(threads))

    def encode(self, batch: PositionBatch, out: Optional[np.ndarray] = None,
               threads: Optional[int] = None) -> np.ndarray:
        """(B, num_features(version)) float32 features of ``batch`` from each side to move (as ``encode``).

        ``threads``: this call's thread count (default the encoder's); the same features on any count."""
        size = len(batch)
        if out is None:
            out = np.empty((size, self.width), dtype=np.float32)
        elif out.shape != (size, self.width) or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise ValueError(f"out: want a C-contiguous float32 array of shape {(size, self.width)}, "
                             f"got {out.dtype} {out.shape}")
        if size:
            classes = np.full(size, -1, dtype=np.int64)
            scratch = np.empty((1, 1), dtype=np.float32)
            _run_kernel(self, batch, False, classes, self._order, (scratch, np.empty(1, np.float32), True, out),
                        self.threads if threads is None else max(1, int(threads)))
        return out


_ENCODERS: dict[int, FastEncoder] = {}


def fast_encode(batch: PositionBatch, version: int, threads: Optional[int] = None) -> np.ndarray:
    """``encode(batch, version=version)`` through :class:`FastEncoder` (one cached encoder per version)."""
    encoder = _ENCODERS.get(version)
    if encoder is None:
        encoder = _ENCODERS[version] = FastEncoder(version)
    return encoder.encode(batch, threads=threads)


# -- the evaluator ----------------------------------------------------------------------------
class FastEvaluator:
    """A numpy copy of an :class:`EvaluatorNet`'s weights and the kernel that evaluates batches with them.

    Not tied to torch after :meth:`from_net`: call :meth:`refresh` after the
    network's weights change (a learning step); until then it evaluates the
    weights it copied.
    """

    def __init__(self, net: EvaluatorNet, threads: Optional[int] = None, dense: Optional[str] = None,
                 part: str = "layers") -> None:
        activation = net.config.activation
        if activation not in ACTIVATION_CODES:
            raise ValueError(f"fast evaluator: activation {activation!r} is not implemented; "
                             f"known: {sorted(ACTIVATION_CODES)} (use the torch path)")
        self.activation = ACTIVATION_CODES[activation]
        self._torch_activation = ACTIVATIONS[activation]()
        # The whole network runs in the kernel, row by row, by default: each row's values then depend on
        # that row alone, so a position gets the same value (to the bit) in any batch, which keeps the
        # bots' choices independent of how positions are batched: an engine subprocess chooses as the
        # net in this process (exact ties aside, which the net draws at random). It is also the faster
        # path for trained ReLU nets, whose zero units it skips; "batched" (BLAS products) is faster only
        # for dense activations, and rounds a row differently in batches of other sizes (docs/training.md,
        # *Deeper networks*).
        if dense is None:
            dense = "fused"
        if dense not in DENSE_MODES:
            raise ValueError(f"fast evaluator: dense={dense!r}; known: {DENSE_MODES}")
        self.dense = dense
        self.rules = net.rules
        self.num_outcomes = net.num_outcomes
        self.points = outcome_points(net.rules).astype(np.float32)
        self.threads = default_threads() if threads is None else max(1, int(threads))
        classes = self.num_outcomes
        self._identity = np.arange(classes, dtype=np.int64)
        self._swapped = swap_sides(self._identity)
        self.part = part
        # With a race network, a second evaluator of the same kind holds its weights; each batch's rows are
        # shared out between the two by race_flags (one pass each, the other's rows skipped).
        self.race = (FastEvaluator(net, threads, dense, part="race_layers")
                     if part == "layers" and net.race_layers is not None else None)
        self._refresh_part(net)

    @classmethod
    def from_net(cls, net: EvaluatorNet, threads: Optional[int] = None,
                 dense: Optional[str] = None) -> "FastEvaluator":
        """An evaluator holding a copy of ``net``'s current weights (``dense``: see :data:`DENSE_MODES`)."""
        return cls(net, threads, dense)

    def refresh(self, net: EvaluatorNet) -> None:
        """Copy ``net``'s current weights (same architecture as at construction)."""
        self._refresh_part(net)
        if self.race is not None:
            self.race.refresh(net)

    def _refresh_part(self, net: EvaluatorNet) -> None:
        linears = net.linear_layers(self.part)
        weights = [module.weight.detach().to("cpu", copy=False).numpy() for module in linears]
        biases = [module.bias.detach().to("cpu", copy=False).numpy() for module in linears]
        width = num_features(net.encoding_version)
        if weights[0].shape[1] != width:
            raise ValueError(f"network's first layer has {weights[0].shape[1]} inputs, its encoding {width}")
        self.version = net.encoding_version
        self.exposure = net.encoding_version >= 2
        self.contact = net.encoding_version >= 3
        self.running = net.encoding_version >= RUNNING_VERSION
        self.cascade = net.encoding_version >= CASCADE_VERSION
        # First layer transposed: the weights of one feature are one contiguous row.
        self.first_weights = np.ascontiguousarray(weights[0].T, dtype=np.float32)  # (259 ... 318, H0)
        self.first_bias = np.array(biases[0], dtype=np.float32)  # (H0,)
        self.point_table = _point_table(self.first_weights)  # (48, 16, H0)
        # The later layers, copied in the form their path reads: tensors for the batched matrix products
        # (torch's), or flat arrays and their shapes for the kernel (which then has none in the batched case).
        later = linears[1:] if self.dense == "batched" else []
        self.dense_layers = [(module.weight.detach().cpu().clone(), module.bias.detach().cpu().clone())
                             for module in later]
        fused = [] if later else list(zip(weights[1:], biases[1:]))
        shapes = []
        weight_at = bias_at = 0
        for weight, _ in fused:
            shapes.append((weight.shape[1], weight.shape[0], weight_at, bias_at))
            weight_at += weight.size
            bias_at += weight.shape[0]
        self.layer_shapes = np.array(shapes, dtype=np.int64).reshape(len(shapes), 4)
        if fused:
            # Transposed, (in, out): the kernel adds one input's weights to all outputs at once.
            self.dense_weights = np.concatenate([w.T.reshape(-1) for w, _ in fused]).astype(np.float32)
            self.dense_bias = np.concatenate([b for _, b in fused]).astype(np.float32)
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
        if self.race is None:
            self._fill(batch, flip, classes, output_order, threads, probabilities, equities)
            return probabilities, equities
        race = race_flags(np.ascontiguousarray(batch.board, dtype=np.int8),
                          np.ascontiguousarray(batch.pinned, dtype=np.int8),
                          np.ascontiguousarray(batch.bar, dtype=np.int8), batch.parallel_rows())
        open_races = (classes == EVALUATE_ROW) & race
        # The contact part writes the finished rows and evaluates the open contact rows; the race part the rest.
        self._fill(batch, flip, np.where(open_races, SKIP_ROW, classes), output_order, threads,
                   probabilities, equities)
        if bool(open_races.any()):
            self.race._fill(batch, flip, np.where(open_races, EVALUATE_ROW, SKIP_ROW), output_order, threads,
                            probabilities, equities)
        return probabilities, equities

    def _fill(self, batch: PositionBatch, flip: bool, classes: np.ndarray, output_order: np.ndarray,
              threads: Optional[int], probabilities: np.ndarray, equities: np.ndarray) -> None:
        """This part's rows of ``classes`` (the others are SKIP_ROW) into ``probabilities`` and ``equities``.

        The batched path holds the first layer's activations of the rows it works on (H0 float32 a
        row): it takes the batch in chunks of :data:`FIRST_CHUNK_ROWS` rows, so that a 2-ply search's
        millions of afterstates do not need gigabytes for them (the rows' values do not depend on it).
        """
        size = len(batch)
        threads = self.threads if threads is None else max(1, int(threads))
        batched = self.dense == "batched" and bool(self.dense_layers)
        if not batched:
            _run_kernel(self, batch, flip, classes, output_order,
                        (probabilities, equities, False, np.empty((1, 1), dtype=np.float32)), threads)
            return
        first = np.empty((min(size, FIRST_CHUNK_ROWS), self.first_bias.shape[0]), dtype=np.float32)
        for start in range(0, size, FIRST_CHUNK_ROWS):
            stop = min(size, start + FIRST_CHUNK_ROWS)
            chunk = batch if (start, stop) == (0, size) else batch.take(slice(start, stop))
            rows = first[:stop - start]
            outputs = (probabilities[start:stop], equities[start:stop])
            _run_kernel(self, chunk, flip, classes[start:stop], output_order, outputs + (True, rows), threads)
            self._dense_batched(rows, classes[start:stop], output_order, *outputs, threads)

    def _dense_batched(self, first: np.ndarray, classes: np.ndarray, output_order: np.ndarray,
                       probabilities: np.ndarray, equities: np.ndarray, threads: int) -> None:
        """The layers after the first for every evaluated row: matrix product, activation, ..., softmax.

        ``first`` holds the first layer's activations (the kernel applies it). In blocks of
        :data:`DENSE_BLOCK_ROWS` rows whatever the thread count (so the numbers do not depend on it),
        the blocks shared out over the kernel's thread pool: torch runs each product on the calling
        thread (one intra-op thread) without the GIL, so the threads multiply side by side. When every
        row is evaluated (no finished or skipped rows) the blocks are slices, else gathered rows.
        """
        rows = np.flatnonzero(classes == EVALUATE_ROW)
        if rows.size == 0:
            return
        every_row = rows.size == first.shape[0]
        points = self.points.astype(np.float64)
        last = len(self.dense_layers) - 1

        def block(start: int, stop: int) -> None:
            index = slice(start, stop) if every_row else rows[start:stop]
            hidden = torch.from_numpy(first[index])
            with torch.inference_mode():
                for layer, (weight, bias) in enumerate(self.dense_layers):
                    hidden = torch.nn.functional.linear(hidden, weight, bias)
                    if layer != last:
                        hidden = self._torch_activation(hidden)
                chances = torch.softmax(hidden.double(), dim=-1).numpy()[:, output_order]
            probabilities[index] = chances
            equities[index] = chances @ points

        bounds = list(range(0, rows.size, DENSE_BLOCK_ROWS)) + [rows.size]
        blocks = list(zip(bounds[:-1], bounds[1:]))
        parts = min(threads, len(blocks))
        if parts <= 1:
            for start, stop in blocks:
                block(start, stop)
            return
        pool = _pool(parts)
        # Each worker takes every parts-th block; the calling thread takes the first share.
        shares = [blocks[part::parts] for part in range(parts)]
        futures = [pool.submit(lambda share=share: [block(*b) for b in share]) for share in shares[1:]]
        for start, stop in shares[0]:
            block(start, stop)
        for future in futures:
            future.result()

    def evaluate(self, batch: PositionBatch, threads: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities (B, K) and equity (B,), float32, of every position from its side to move.

        Equals :func:`tapa_ai.net.model.evaluate` of ``encode(batch)``.
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
        same = getattr(afterstates, "same_side", None)
        positions = afterstates.positions
        if same is None or not same.any():
            return self._run(positions, True, classes, self._swapped, threads)
        # Inside a cascade the mover decides next (docs/rules.md 10.2): those rows are the position of its own
        # next decision, valued from its view. One kernel pass reads every row from the other side, so those
        # rows go in already flipped (read back, they are themselves), and their classes are swapped back.
        rows = np.flatnonzero(same)
        probabilities, equities = self._run(positions.flipped_where(same), True, classes, self._swapped, threads)
        probabilities[rows] = probabilities[rows][:, self._swapped]
        equities[rows] = probabilities[rows].astype(np.float64) @ self.points.astype(np.float64)
        return probabilities, equities
