"""``generate(batch, dice)``: every legal whole-turn afterstate of every position of a batch.

The work is split over threads (the numba kernel releases the GIL), one
contiguous slice of the batch per thread, and the slices' outputs are joined
in order. Move text and ``Position`` objects are made only on request.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ..notation.move_text import format_steps
from ..rules.options import RulesError
from ..rules.position import SIDES, GameResult, Position, PositionError
from ..rules.reference import Move, Step
from ..rules.turns import stage_numbers
from . import kernel
from ..rules import outcomes
from .batch import PositionBatch
from .compile_notice import notice_compile

#: Below this many positions a batch runs on the calling thread (thread hand-off costs more).
MIN_POSITIONS_PER_THREAD = 64


@dataclass
class Afterstates:
    """The legal afterstates of a batch of ``B`` positions: ``N`` rows, grouped by source position.

    Rows of position ``b`` are ``offsets[b]:offsets[b + 1]``, in the order the
    search found them. A passed turn is one row with no steps. Each row is
    seen from the side that moved (``positions.turn`` is that side);
    ``positions.flipped()`` gives the next positions to play. ``inputs`` and
    ``dice`` say what was moved from, with which roll (bots that ask another
    program, such as ``engine:``, need them); every subset of source
    positions keeps them (:meth:`of_sources`).
    """

    positions: PositionBatch
    """N afterstates, board seen from the side that moved."""
    source: np.ndarray
    """(N,) int32: index of the source position in the input batch."""
    offsets: np.ndarray
    """(B + 1,) int64: ragged offsets; ``offsets[b + 1] - offsets[b]`` afterstates for position ``b``."""
    game_over: np.ndarray
    """(N,) bool: the move ended the game."""
    winner: np.ndarray
    """(N,) int8: 0 = X, 1 = O, -1 = nobody (game not over, or a draw)."""
    result_kind: np.ndarray
    """(N,) int8: a ``kernel.RESULT_*`` code (0 none, 1 single, 2 gammon, 3 backgammon, 4 mother, 5 draw)."""
    result_points: np.ndarray
    """(N,) int8: points won, before the cube (0 when not over or a draw)."""
    steps: np.ndarray
    """(N, kernel.MAX_STEPS, 3) int8: the steps played, (from, to, die) in the mover's numbering, 25 = bar,
    0 = off (a decision plays at most a double's four steps, a cascade's stage included)."""
    n_steps: np.ndarray
    """(N,) int8: how many rows of ``steps`` are used (0 = pass)."""
    inputs: Optional[PositionBatch] = None
    """The B positions moved from (seen from their side to move), set by :func:`generate`; None when unknown."""
    dice: Optional[np.ndarray] = None
    """(B, 2) int8: the dice each position was played with (a pending stage's ``[k, k]``), set by
    :func:`generate`; None when unknown."""
    same_side: Optional[np.ndarray] = None
    """(N,) bool: the side that moved also decides next (inside a cascade, docs/rules.md 10.2): its next position
    is the afterstate itself, not flipped. All False (made so when not given) where doubles are plain."""

    def __post_init__(self) -> None:
        if self.same_side is None:
            self.same_side = np.zeros(self.source.shape[0], dtype=np.bool_)

    def __len__(self) -> int:
        return int(self.source.shape[0])

    def next_positions(self, rows: Optional[np.ndarray] = None) -> PositionBatch:
        """The positions of the next decisions after ``rows`` (all rows when None; games not over): each
        afterstate seen from the side that plays next, the other side (``positions.flipped()``) or, inside a
        cascade, the mover itself."""
        positions = self.positions if rows is None else self.positions.take(rows)
        same = self.same_side if rows is None else self.same_side[rows]
        return positions.flipped_where(~same)

    def _next_sides(self, rows) -> list:
        """The side that plays next after each of ``rows`` (``Position.next`` of its afterstate)."""
        turn = self.positions.turn[rows]
        return [SIDES[int(side if same else 1 - side)] for side, same in zip(turn, self.same_side[rows])]

    def result(self, row: int) -> Optional[GameResult]:
        """The game result reached by afterstate ``row``, or None."""
        code = int(self.result_kind[row])
        if code == outcomes.RESULT_NONE:
            return None
        winner = None if code == outcomes.RESULT_DRAW else SIDES[int(self.winner[row])]
        return GameResult(winner, outcomes.RESULT_KINDS[code], int(self.result_points[row]))

    def position(self, row: int) -> Position:
        """Afterstate ``row`` as the reference generator writes it (``turn`` = mover, result set, and where
        doubles cascade the next decision's ``next``, ``turns`` and ``cascade``)."""
        result = self.result(row)
        next_sides = None if result is not None else self._next_sides([row])
        return self.positions.positions([row], [result], next_sides)[0]

    def step_list(self, row: int) -> tuple[Step, ...]:
        return tuple(Step(int(f), int(t), int(d)) for f, t, d in self.steps[row, : int(self.n_steps[row])].tolist())

    def move(self, row: int) -> Move:
        return Move(self.step_list(row), self.position(row))

    def move_text(self, row: int) -> str:
        """Move text of afterstate ``row`` (docs/rules.md 7), e.g. ``"24/21 23/22"``."""
        return format_steps(self.step_list(row))

    def rows(self, rows: np.ndarray) -> "Afterstates":
        """Some rows as their own Afterstates, each row its own 'source' (the search values rows this way)."""
        rows = np.asarray(rows, dtype=np.int64)
        count = rows.size
        return Afterstates(self.positions.take(rows), np.arange(count, dtype=np.int32),
                           np.arange(count + 1, dtype=np.int64), self.game_over[rows], self.winner[rows],
                           self.result_kind[rows], self.result_points[rows], self.steps[rows], self.n_steps[rows],
                           same_side=self.same_side[rows])

    def of_sources(self, index: np.ndarray) -> "Afterstates":
        """The afterstates of some source positions only (``index``, sorted), as their own Afterstates: offsets
        rebased, the source positions and dice, where known, cut to the same positions."""
        index = np.asarray(index, dtype=np.int64)
        starts = self.offsets[index]
        counts = self.offsets[index + 1] - starts
        rows = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(counts.sum())
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        inputs = None if self.inputs is None else self.inputs.take(index)
        dice = None if self.dice is None else self.dice[index]
        return Afterstates(
            self.positions.take(rows), np.repeat(np.arange(index.size, dtype=np.int32), counts), offsets,
            self.game_over[rows], self.winner[rows], self.result_kind[rows], self.result_points[rows],
            self.steps[rows], self.n_steps[rows], inputs, dice, self.same_side[rows],
        )

    def moves_of(self, index: int) -> list[Move]:
        """The reference-style moves of source position ``index``."""
        rows = list(range(int(self.offsets[index]), int(self.offsets[index + 1])))
        results = [self.result(row) for row in rows]
        next_sides = [None if result is not None else side for result, side in zip(results, self._next_sides(rows))]
        positions = self.positions.positions(rows, results, next_sides)
        return [Move(self.step_list(row), position) for row, position in zip(rows, positions)]


_executor: Optional[ThreadPoolExecutor] = None
_thread_state = threading.local()

_CPUS = os.cpu_count() or 1
"""The machine's CPU count, read once (os.cpu_count() reads /sys: ~0.1 ms, once per call was 1% of self-play)."""


def _scratch() -> tuple:
    """This thread's kernel working memory, made once (about 1.5 MB; allocating it per call costs ~1 ms)."""
    scratch = getattr(_thread_state, "scratch", None)
    if scratch is None:
        scratch = _thread_state.scratch = kernel.make_scratch()
    return scratch


def _run_range(arrays: tuple, start: int, stop: int, copy: bool = True) -> tuple:
    """Kernel on one slice; returns (counts, status, *output arrays cut to size).

    With ``copy=False`` the arrays are views of this thread's reused buffer,
    valid only until the thread's next call.
    """
    notice_compile("the move generator", kernel.generate_range, kernel.make_outputs, kernel.make_scratch)
    outputs = getattr(_thread_state, "outputs", None)
    if outputs is None:
        outputs = kernel.make_outputs(4096)
    counts, status, n_out, outputs = kernel.generate_range(*arrays, start, stop, _scratch(), outputs)
    _thread_state.outputs = outputs
    return (counts, status) + tuple(array[:n_out].copy() if copy else array[:n_out] for array in outputs)


# Multi-threaded calls join views of the threads' buffers; one at a time, so no other
# job can reuse a buffer before it is joined.
_join_lock = threading.Lock()


def default_threads() -> int:
    """Threads used by :func:`generate` when not told: ``TAPA_MOVEGEN_THREADS`` or the CPU count."""
    return max(1, int(os.environ.get("TAPA_MOVEGEN_THREADS", _CPUS)))


def _pool(threads: int) -> ThreadPoolExecutor:
    global _executor
    if _executor is None or _executor._max_workers < threads:  # noqa: SLF001 - resize only when needed
        _executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="movegen")
    return _executor


def _dice_array(dice, batch: PositionBatch) -> np.ndarray:
    """(B, 2) int8 dice: a roll for every position, one per position, or None where every position is inside a
    cascade. A position with a pending stage plays the stage whatever it is given (its row becomes ``[k, k]``)."""
    size = len(batch)
    stages = batch.stage[:, 0] > 0
    if dice is None:
        if not stages.all():
            first = int(np.flatnonzero(~stages)[0])
            raise RulesError(f"dice: position {first} of the batch is to roll; give two dice 1..6")
        array = np.zeros((size, 2), dtype=np.int8)
    else:
        array = np.asarray(dice, dtype=np.int64)
        if array.shape == (2,):
            array = np.broadcast_to(array, (size, 2))
        if array.shape != (size, 2):
            raise RulesError(f"dice: want shape (2,) or ({size}, 2), got {array.shape}")
        array = np.array(array, dtype=np.int8)
    if stages.any():
        array[stages] = batch.stage[stages, :1]
    return array


def decision_plan(batch: PositionBatch, dice: np.ndarray) -> np.ndarray:
    """(B, 3) int8: each position's two numbers and the steps it plays (the kernel's ``plan``): a pending
    stage's number ``steps`` times, a roll's two dice, a double's four (a cascade's first stage is four too)."""
    plan = np.empty((len(batch), 3), dtype=np.int8)
    plan[:, :2] = dice
    plan[:, 2] = np.where(dice[:, 0] == dice[:, 1], 4, 2)
    stages = batch.stage[:, 0] > 0
    if stages.any():
        plan[stages, 2] = batch.stage[stages, 1]
    return plan


def _next_decisions(batch: PositionBatch, dice: np.ndarray, source: np.ndarray, n_steps: np.ndarray,
                    game_over: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each afterstate's next decision under cascading doubles (:func:`tapa_ai.rules.turns.after_stage` on
    arrays): turn counts (N, 2) and pending stage (N, 3) seen from the mover, and whether the mover plays next.
    What depends on the source position only is worked out once per position, then spread to its rows."""
    rules = batch.rules
    plain_turns = np.array([r.plain_double_turns for r in rules], dtype=np.int16)[batch.rules_id]
    to_opponent = np.array([r.cascade_remainder == "opponent" for r in rules], dtype=np.bool_)[batch.rules_id]
    cascades = batch.cascade_rows()
    turns = batch.turns.astype(np.int16)
    stage = batch.stage.astype(np.int16)
    rolled = stage[:, 0] == 0
    begun = turns[:, 0].copy()
    turns[:, 0] = np.where(rolled & cascades, np.minimum(begun + 1, plain_turns), begun)
    cascade_roll = rolled & cascades & (dice[:, 0] == dice[:, 1]) & (begun >= plain_turns)
    number = np.where(rolled, dice[:, 0], stage[:, 0])
    steps = np.where(rolled, 4, stage[:, 1])
    remainder = ~rolled & (stage[:, 2] != 0)
    in_cascade_source = cascades & (cascade_roll | ~rolled)
    # Per afterstate: played in full or not, the game over or not.
    in_cascade = in_cascade_source[source] & ~game_over
    full = n_steps == steps[source]
    go_on = in_cascade & full & (number < 6)[source]
    remainder_row = remainder[source]
    remainder_done = in_cascade & ~go_on & remainder_row
    pass_on = in_cascade & ~go_on & ~remainder_row & ~full & to_opponent[source]
    next_stage = np.zeros((source.size, 3), dtype=np.int8)
    if go_on.any():
        next_stage[go_on, 0] = number[source[go_on]] + 1
        next_stage[go_on, 1] = 4
        next_stage[go_on, 2] = remainder_row[go_on]
    if pass_on.any():
        next_stage[pass_on, 0] = number[source[pass_on]]
        next_stage[pass_on, 1] = steps[source[pass_on]] - n_steps[pass_on]
        next_stage[pass_on, 2] = 1
    return turns.astype(np.int8)[source], next_stage, go_on | remainder_done


def generate(batch: PositionBatch, dice, threads: Optional[int] = None) -> Afterstates:
    """All legal afterstates of every position's present decision, deduplicated per position.

    ``dice`` is one roll (2,) for all positions or one per position (B, 2), values 1..6; a position inside a
    cascade (docs/rules.md 10.2) plays its pending stage instead (``dice`` may be None when all are). Raises
    :class:`PositionError` if a position's game is already over and :class:`RulesError` for bad dice, like the
    reference generator. Under cascading doubles each afterstate carries its next decision's turn counts and
    stage, and :attr:`Afterstates.same_side` says whether the mover plays it.
    """
    size = len(batch)
    dice_array = _dice_array(dice, batch)
    plan = decision_plan(batch, dice_array)
    arrays = (
        np.ascontiguousarray(batch.board, dtype=np.int8), np.ascontiguousarray(batch.pinned, dtype=np.int8),
        np.ascontiguousarray(batch.off, dtype=np.int8), np.ascontiguousarray(batch.bar, dtype=np.int8),
        np.ascontiguousarray(batch.rules_id, dtype=np.int8), batch.kernel_rule_table(), plan,
    )
    threads = default_threads() if threads is None else max(1, threads)
    parts = min(threads, max(1, size // MIN_POSITIONS_PER_THREAD))
    if parts <= 1:
        joined = _run_range(arrays, 0, size)
    else:
        bounds = np.linspace(0, size, parts + 1).astype(np.int64).tolist()
        with _join_lock:
            # The calling thread takes the first slice itself; the pool the others.
            futures = [
                _pool(parts - 1).submit(_run_range, arrays, lo, hi, False)
                for lo, hi in zip(bounds[1:-1], bounds[2:])
            ]
            outputs = [_run_range(arrays, bounds[0], bounds[1], False)] + [future.result() for future in futures]
            joined = tuple(np.concatenate([out[field] for out in outputs]) for field in range(len(outputs[0])))
    counts, status, board, pinned, off, bar, result_kind, points, steps, n_steps = joined

    bad = np.flatnonzero(status)
    if bad.size:
        first = int(bad[0])
        if status[first] == kernel.STATUS_BAD_DICE:
            raise RulesError(f"dice must be two integers 1..6, got {dice_array[first].tolist()} for position {first}")
        raise PositionError(f"the game is already over (position {first} of the batch)")

    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    source = np.repeat(np.arange(size, dtype=np.int32), counts)
    turn = batch.turn[source]
    game_over = result_kind != outcomes.RESULT_NONE
    winner = np.where(game_over & (result_kind != outcomes.RESULT_DRAW), turn, -1).astype(np.int8)
    same_side = None
    turns = stage = None
    if batch.cascade_rows().any():
        turns, stage, same_side = _next_decisions(batch, dice_array, source, n_steps, game_over)
    positions = PositionBatch(board, pinned, off, bar, turn, batch.rules_id[source], batch.rules, turns, stage)
    return Afterstates(positions, source, offsets, game_over, winner, result_kind, points, steps, n_steps,
                       batch, dice_array, same_side)


def legal_moves_fast(position: Position, dice: Optional[Sequence[int]] = None) -> list[Move]:
    """Drop-in for :func:`tapa_ai.rules.reference.legal_moves`, computed by the fast generator.

    Same moves (one per distinct resulting position, same ``Position``
    afterstates and results); the steps shown for a position may be another
    legal order of the same move.
    """
    _, dice = stage_numbers(position, dice)
    if position.result is not None:
        raise PositionError("the game is already over")
    batch = PositionBatch.from_positions([position])
    afterstates = generate(batch, dice, threads=1)
    moves = afterstates.moves_of(0)
    if len(moves) == 1 and not moves[0].steps and not position.rules.cascades:
        # A pass keeps the very position object, as the reference does.
        return [Move((), position)]
    return moves
