"""The roll-based columns of the ``tapa-td`` encoding: version 2's exposure and version 3's contact.

Both ask what the 21 distinct rolls can do: which lone checkers of a side the other side's next roll can
land on (exposure), and whether a side's rearmost checker can escape past the other's blockade, how long
that blockade is and how many rolls cannot move at all (contact). They are bit-mask computations over whole
batches (:func:`roll_reach`, :func:`contact_counts`), written with plain integer operations so that the fast
evaluator's numba kernel (:mod:`tapa_ai.net.fast_kernel`) compiles the same functions. ``docs/encoding.md``
specifies every column; :mod:`tapa_ai.net.encoding` lays them out and calls :func:`exposure_features` and
:func:`contact_features`.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..rules.rolls import DISTINCT_ROLLS

EXPOSURE_UNITS = tuple(f"p{point:02d}.exposed" for point in range(1, 25)) + ("exposed_any",)
"""Version 2, per side: exposure of the side's lone checker on each of its points, and of any of them."""
CONTACT_UNITS = ("escapes", "prime", "dance")
"""Version 3, per side: escape rolls of its rearmost checker, the prime in front of it, rolls that cannot move."""


# -- version 2: exposure ------------------------------------------------------------------
# Masks are int64 bit sets in the *attacker's* numbering: bit p is its point p (1..24), bit 25
# its bar. The attacker moves towards bit 0; what moves past its point 1 is dropped.
ROLLS = DISTINCT_ROLLS
"""The 21 distinct rolls and how many of the 36 each stands for."""
_POINT_BITS = np.int64(0x1FFFFFE)  # bits 1..24
_BAR_BIT = np.int64(1) << 25
_ROLL_WEIGHTS = np.array([weight for _, _, weight in ROLLS], dtype=np.int32)


def roll_reach(sources: np.ndarray, open_: np.ndarray, a: int, b: int) -> np.ndarray:
    """Attacker points one of whose checkers can land on with roll (a, b): the masks of ``docs/encoding.md``.

    One die: any point ``d`` below a source. Both dice, or up to four steps
    of a double: every intermediate point must be open. The landing point
    itself is not required open (the targets asked about are).

    Plain integer operations only, so that the same function serves numpy
    arrays of masks here and single int64 masks in the numba kernel
    (``tapa_ai.net.fast_eval`` compiles it).
    """
    if a == b:
        reach = sources & 0
        step = sources
        for _ in range(4):
            landed = (step >> a) & _POINT_BITS
            reach |= landed
            step = landed & open_
        return reach
    by_a = (sources >> a) & _POINT_BITS
    by_b = (sources >> b) & _POINT_BITS
    return by_a | by_b | (((by_a & open_) >> b) & _POINT_BITS) | (((by_b & open_) >> a) & _POINT_BITS)


def _shots(sources: np.ndarray, open_: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, 26) rolls (of 36) landing on each target bit, and (R,) rolls landing on any target."""
    rows = sources.shape[0]
    if not targets.any():
        return np.zeros((rows, 26), dtype=np.int32), np.zeros(rows, dtype=np.int32)
    hits = np.empty((rows, len(ROLLS)), dtype=np.int64)
    for index, (a, b, _) in enumerate(ROLLS):
        hits[:, index] = roll_reach(sources, open_, a, b) & targets
    any_target = (hits != 0).astype(np.int32) @ _ROLL_WEIGHTS
    # Bits of the little-endian int64 masks: (rows, 21 rolls, 64 bits), weighted over the rolls.
    little = hits.astype("<i8", copy=False)  # no copy on little-endian machines
    bits = np.unpackbits(little.view(np.uint8).reshape(rows, len(ROLLS), 8), axis=2, bitorder="little")
    per_bit = np.einsum("rkb,k->rb", bits[:, :, :26].astype(np.int32), _ROLL_WEIGHTS)
    return per_bit, any_target


def _side_counts(board: np.ndarray, pinned: np.ndarray) -> tuple[np.ndarray, ...]:
    """Free checkers of the mover and of the opponent per column (int16), where nothing is pinned, the columns."""
    board = board.astype(np.int16)
    return np.clip(board, 0, None), np.clip(-board, 0, None), pinned == 0, np.arange(24)


def exposure_features(board: np.ndarray, pinned: np.ndarray, bar: np.ndarray) -> np.ndarray:
    """(R, 50) float32 version-2 columns of mover-relative rows (board > 0 = the side to move).

    Side ``S``'s lone checkers (one free checker of ``S`` with nothing under it)
    are the targets of the other side ``T``, whose sources are its points with
    free checkers (only its bar when it has checkers there) and whose open
    points are those with no free checker of ``S`` or a lone one. For each of
    the 36 rolls of ``T``: which lone checkers some checker of ``T`` can land
    on (:func:`roll_reach`). The maximum-use rule and ``T``'s other
    obligations are ignored.
    """
    mine, theirs, unpinned, columns = _side_counts(board, pinned)
    out = np.zeros((board.shape[0], 2 * len(EXPOSURE_UNITS)), dtype=np.float32)
    # side 0 = the mover (its point = column + 1), side 1 = the opponent (its point = 24 - column).
    for side, (own, other, bits_of_attacker) in enumerate((
        (mine, theirs, np.int64(1) << (24 - columns)),   # mover's lone checkers, the opponent attacking
        (theirs, mine, np.int64(1) << (columns + 1)),    # opponent's lone checkers, the mover attacking
    )):
        lone = (own == 1) & unpinned
        targets = (lone * bits_of_attacker).sum(axis=1)
        open_ = (((own == 0) | lone) * bits_of_attacker).sum(axis=1)
        sources = ((other > 0) * bits_of_attacker).sum(axis=1)
        sources = np.where(bar[:, 1 - side] > 0, _BAR_BIT, sources)
        per_bit, any_target = _shots(sources, open_, targets)
        block = out[:, side * len(EXPOSURE_UNITS):(side + 1) * len(EXPOSURE_UNITS)]
        # The side's own point q is the attacker's point 25 - q.
        block[:, :24] = per_bit[:, 24:0:-1] / np.float32(36.0)
        block[:, 24] = any_target / np.float32(36.0)
    return out


# -- version 3: contact ---------------------------------------------------------------------
# Masks in the *moving side's own* numbering: bit q is its point q (1..24), bit 25 its bar.
ESCAPE_ZONE = 12
"""Points in front of the rearmost checker where the other side's closed points count as its blockade."""
PRIME_CAP = 6
"""Longest prime counted (a run of six closed points cannot be passed)."""


def contact_counts(sources, open_, home):
    """(escapes, prime, dance) of one side from its masks; ``docs/encoding.md`` "Version 3: contact".

    ``sources``: the side's points with a free checker on top (only its bar, bit 25, when it has checkers
    there); ``open_``: the points it may land on (docs/rules.md 3.2); ``home``: all its checkers home or off.
    Returns the rolls (of 36) that carry its rearmost checker past the blockade, the length of the longest
    run of closed points in front of that checker (at most :data:`PRIME_CAP`), and the rolls (of 36) with
    which no checker can move by either die (0 when ``home``). Plain integer operations only, so that
    the same function serves numpy arrays of masks here and single int64 masks in the numba kernel.
    """
    closed = _POINT_BITS & ~open_
    rear = sources & 0
    for q in range(25, 0, -1):
        rear = rear | ((((sources >> q) & 1) << q) * (rear == 0))
    ahead = (rear - 1) * (rear != 0)  # every point in front of it (towards point 1)
    below_zone = rear >> ESCAPE_ZONE
    zone = ahead ^ ((below_zone - 1) * (below_zone != 0))  # the 12 points in front of it
    blocks = closed & zone
    lowest = blocks & -blocks
    beyond = ahead + (blocks != 0) * ((lowest - 1) - ahead)  # in front of the blockade's last point
    landing = open_ & beyond
    escapes = rear & 0
    dance = rear & 0
    for a, b, weight in ROLLS:
        escapes = escapes + weight * ((roll_reach(rear, open_, a, b) & landing) != 0)
        stuck = ((((sources >> a) | (sources >> b)) & open_ & _POINT_BITS) == 0) & (sources != 0)
        dance = dance + weight * stuck
    run = rear & 0
    prime = rear & 0
    in_front = closed & ahead
    for q in range(1, 25):
        run = (run + 1) * ((in_front >> q) & 1)
        prime = prime + (run > prime) * (run - prime)
    prime = prime - (prime > PRIME_CAP) * (prime - PRIME_CAP)
    return escapes, prime, dance * (1 - home)


def contact_features(board: np.ndarray, pinned: np.ndarray, bar: np.ndarray,
                     parallel: Optional[np.ndarray] = None) -> np.ndarray:
    """(R, 6) float32 version-3 columns of mover-relative rows (board > 0 = the side to move).

    Per side ``S`` (the mover, then the opponent), in ``S``'s own numbering:
    ``escapes`` = share of ``S``'s 36 rolls with which a checker on its rearmost
    point can land on an open point beyond the other side's last closed point
    within 12 points in front of it (anywhere in front when there is none);
    ``prime`` = the longest run of closed points in front of that checker / 6;
    ``dance`` = share of the rolls with which no free checker of ``S`` can move
    by either die (0 once ``S`` is all home). See :func:`contact_counts`.

    ``parallel``: (R,) bool, the running-game rows (version 4; None: none). On those the opponent's own
    point q is column (q + 11) % 24, and a point is open to ``S`` only when no opposing checker stands
    on it (``contact = "block"``).
    """
    mine, theirs, unpinned, columns = _side_counts(board, pinned)
    out = np.zeros((board.shape[0], 2 * len(CONTACT_UNITS)), dtype=np.float32)
    opponent_bits = np.int64(1) << (24 - columns)
    opponent_home = columns >= 18
    lone_open = unpinned
    if parallel is not None:
        running = parallel[:, None]
        # The opponent's own point of column c is (c + 12) % 24 + 1; its home (points 1..6) columns 12..17.
        opponent_bits = np.where(running, np.int64(1) << ((columns + 12) % 24 + 1), opponent_bits)
        opponent_home = np.where(running, (columns >= 12) & (columns < 18), opponent_home)
        lone_open = unpinned & ~running  # block contact: a lone opposing checker closes its point
    # side 0 = the mover (its point = column + 1), side 1 = the opponent (its point = 24 - column, or
    # (column + 12) % 24 + 1 in the running games).
    for side, (own, other, own_pinned, bits, home_columns) in enumerate((
        (mine, theirs, pinned == 1, np.int64(1) << (columns + 1), columns < 6),
        (theirs, mine, pinned == -1, opponent_bits, opponent_home),
    )):
        sources = ((own > 0) * bits).sum(axis=1)
        sources = np.where(bar[:, side] > 0, _BAR_BIT, sources)
        open_ = (((other == 0) | ((other == 1) & lone_open)) * bits).sum(axis=1)
        outside = ((own + own_pinned) * ~home_columns).sum(axis=1)
        home = ((outside + bar[:, side]) == 0).astype(np.int64)
        escapes, prime, dance = contact_counts(sources, open_, home)
        block = out[:, side * len(CONTACT_UNITS):(side + 1) * len(CONTACT_UNITS)]
        block[:, 0] = escapes / np.float32(36.0)
        block[:, 1] = prime / np.float32(PRIME_CAP)
        block[:, 2] = dance / np.float32(36.0)
    return out
