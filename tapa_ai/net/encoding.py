"""The network input: a fixed-length float32 vector per position, computed for a whole batch at once.

Encoding ``tapa-td``, versions 1 to 5 (``docs/encoding.md`` is the full
specification, with a worked example). Version 2 is version 1 followed by 50
**exposure** columns, version 3 is version 2 followed by 6 **contact** columns, version 4 is version 3
followed by 3 **running-game** columns and encodes the running games (fevga,
narde: ``paths = "parallel"``, see below), version 5 is version 4 followed by 11 **cascade** columns and is
the one version that encodes the rule sets whose doubles cascade (Gul Bara: ``doubles = "cascade"``); a
network stores the version it was built for (``ModelConfig.encoding_version``). Every position is described **from the view of the side
to move** (the side a :class:`~tapa_ai.movegen.batch.PositionBatch` is seen
from), and each side's features are written in **that side's own point
numbering**, so the opponent's block reads exactly like the mover's block of
the colour-swapped position. A position and its colour-swapped twin therefore
encode identically, and :meth:`PositionBatch.flipped` only swaps the two side
blocks.

Layout (``NUM_FEATURES`` = 259 columns)::

    [0, 120)    mover's points 1..24, 5 units each (free >= 1, >= 2, >= 3, (n - 3) / 2 beyond, pinned)
    [120, 240)  opponent's points 1..24 (its own numbering), same 5 units
    [240, 248)  mover's scalars: on_24, mother_alone, mother_pinned, mother_safe, off, pips, bar, all_home
    [248, 256)  opponent's scalars, same 8
    [256, 259)  rule flags: pins, backgammons, mother_points / 3
    versions 2 and 3:
    [259, 284)  mover's exposure: the share of the other side's 36 rolls that can land on the mover's
                lone checker at each of its points 1..24, then the share that can land on any of them
    [284, 309)  opponent's exposure (to the mover's roll), same 25
    versions 3 and 4:
    [309, 312)  mover's contact: escapes of its rearmost checker past the opponent's blockade, the longest
                prime in front of it, the rolls that cannot move (shares of 36, prime / 6)
    [312, 315)  opponent's contact, same 3
    version 4 only:
    315         rules.parallel: 1 in the running games (both sides travel the same way round)
    316, 317    mover.passed, opponent.passed: running games only, the side has a checker on its own
                points 1..11 or borne off (the condition of Fevga's runner rule, docs/rules.md 8.4 a)
    version 5 only (rule sets with doubles = "cascade", docs/rules.md 10.2-10.3; all 0 on the others):
    318         rules.cascades: 1 when doubles cascade
    319, 320    mover.cascade_now, opponent.cascade_now: the side's turn count (PositionBatch.turns) has reached
                rules.plain_double_turns, so a double it rolls from now on cascades
    [321, 327)  stage.number1 .. stage.number6: one-hot number of the pending stage the mover plays without
                rolling (PositionBatch.stage[:, 0]); all 0 when there is none (the mover rolls)
    327         stage.steps: the pending stage's steps / 4 (0 when none)
    328         stage.remainder: the pending stage is the opponent's unplayed remainder (cascade_remainder =
                "opponent")

Version 4 computes the first 315 columns **path-aware**: in a running game the opponent's own point ``q``
is the mover's point ``q + 12`` or ``q - 12`` (board column ``(q + 11) % 24``), every mask and block is
in each side's own numbering, a point is open to a side exactly when no opposing checker stands on it
(``contact = "block"``), and nothing can be hit, so the exposure columns are 0. On the other variants
version 4 is version 3 followed by three zeros. Versions 1-3 refuse running-game rows (ValueError).

Version 5 computes its first 318 columns exactly as version 4, then the 11 cascade columns; on a rule set whose
doubles are plain it is version 4 followed by 11 zeros. Versions 1-4 refuse rows of a cascading rule set
(ValueError): they cannot tell a position inside a cascade from the same board with the mover to roll. The
cascade-now pair is a pair of side columns (it swaps with the sides); the stage columns describe the decision
of the side to move, which :meth:`PositionBatch.flipped` keeps, so :func:`swap_side_blocks` leaves them (and
``rules.cascades``) in place.

An afterstate is seen from the side that just moved, which is *not* to roll
next: encode ``afterstates.positions.flipped()`` (the opponent to roll) and read
the network's answer from the opponent's view (``model.swap_sides``).

Everything is table look-ups on the int8 arrays of the batch: each point is one
code ``(board + 15) * 3 + pinned + 1`` (93 codes), and one gather of a
precomputed table gives the point units of both sides, another the checker
counts that pip counts and the scalars are made of.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..movegen.batch import PositionBatch
from ..rules.position import Position
from .roll_features import CONTACT_UNITS, EXPOSURE_UNITS, contact_features, exposure_features

__all__ = [
    "ENCODING_NAME", "ENCODING_VERSION", "ENCODING_VERSIONS", "NUM_FEATURES", "num_features", "check_version",
    "EXPOSURE_UNITS", "MOVER_EXPOSURE", "OPPONENT_EXPOSURE", "exposure_features",
    "CONTACT_UNITS", "MOVER_CONTACT", "OPPONENT_CONTACT", "contact_features", "POINT_UNITS", "SIDE_SCALARS", "RULE_FLAGS",
    "MOVER_POINTS", "OPPONENT_POINTS", "MOVER_SCALARS", "OPPONENT_SCALARS", "RULES_COLUMNS",
    "PIP_SCALE", "BAR_SCALE", "CHECKER_SCALE", "feature_names", "encode", "encode_positions", "column",
    "swap_side_blocks", "RUNNING_VERSION", "RUNNING_COLUMNS", "PARALLEL_COLUMN", "MOVER_PASSED", "OPPONENT_PASSED",
    "PASSED_BELOW", "check_rules_version", "default_version", "parallel_rows",
    "CASCADE_VERSION", "CASCADE_UNITS", "CASCADE_COLUMNS", "CASCADES_COLUMN", "MOVER_CASCADE_NOW",
    "OPPONENT_CASCADE_NOW", "STAGE_NUMBER_COLUMNS", "STAGE_STEPS_COLUMN", "STAGE_REMAINDER_COLUMN", "STAGE_SCALE",
    "cascade_features",
]

ENCODING_NAME = "tapa-td"
"""Name of this encoding; stored in checkpoints with :data:`ENCODING_VERSION`."""
ENCODING_VERSION = 1
"""The version new networks get unless their ``ModelConfig.encoding_version`` says otherwise.

A new version is added (never an old one changed) whenever a column's meaning or scaling changes."""
ENCODING_VERSIONS = (1, 2, 3, 4, 5)
"""The versions this program computes; version 2 = version 1 + the exposure columns; version 3 = version 2 +
the contact columns; version 4 = version 3 computed path-aware + the running-game columns; version 5 = version 4
+ the cascade columns."""
RUNNING_VERSION = 4
"""The first version that encodes the running games (``RuleOptions.parallel``)."""
CASCADE_VERSION = 5
"""The first (and only) version that encodes the rule sets whose doubles cascade (``RuleOptions.cascades``)."""

POINT_UNITS = ("free1", "free2", "free3", "free_extra", "pinned")
"""Units per point and side: free (top) checkers n >= 1, >= 2, >= 3, max(n - 3, 0) / 2, a checker pinned there."""
SIDE_SCALARS = ("on_24", "mother_alone", "mother_pinned", "mother_safe", "off", "pips", "bar", "all_home")
"""Scalars per side (see ``docs/encoding.md`` for each formula)."""
RULE_FLAGS = ("pins", "backgammons", "mother_points")
"""Rule flags: contact is pinning; backgammons count; mother-win points / 3."""

CHECKER_SCALE = 15.0
"""Divisor of ``on_24`` and ``off`` (checkers per side)."""
PIP_SCALE = 360.0
"""Divisor of pip counts: 360 = 15 checkers on the 24-point, the most any pinning-game position has
(tapa starts at 345, plakoto at 360, backgammon at 167)."""
BAR_SCALE = 2.0
"""Divisor of the bar count, as in TD-Gammon (backgammon only; zero in the pinning games)."""
MOTHER_POINTS_SCALE = 3.0
"""Divisor of the ``mother_points`` rule flag."""

_POINT_BLOCK = 24 * len(POINT_UNITS)  # 120
MOVER_POINTS = slice(0, _POINT_BLOCK)
OPPONENT_POINTS = slice(_POINT_BLOCK, 2 * _POINT_BLOCK)
MOVER_SCALARS = slice(2 * _POINT_BLOCK, 2 * _POINT_BLOCK + len(SIDE_SCALARS))
OPPONENT_SCALARS = slice(MOVER_SCALARS.stop, MOVER_SCALARS.stop + len(SIDE_SCALARS))
RULES_COLUMNS = slice(OPPONENT_SCALARS.stop, OPPONENT_SCALARS.stop + len(RULE_FLAGS))
NUM_FEATURES = RULES_COLUMNS.stop
"""Columns of version 1 (259)."""

MOVER_EXPOSURE = slice(NUM_FEATURES, NUM_FEATURES + len(EXPOSURE_UNITS))
OPPONENT_EXPOSURE = slice(MOVER_EXPOSURE.stop, MOVER_EXPOSURE.stop + len(EXPOSURE_UNITS))
MOVER_CONTACT = slice(OPPONENT_EXPOSURE.stop, OPPONENT_EXPOSURE.stop + len(CONTACT_UNITS))
OPPONENT_CONTACT = slice(MOVER_CONTACT.stop, MOVER_CONTACT.stop + len(CONTACT_UNITS))
RUNNING_UNITS = ("rules.parallel", "mover.passed", "opponent.passed")
"""Version 4: the rule flag of the running games, then per side whether it has passed the opponent's start."""
RUNNING_COLUMNS = slice(OPPONENT_CONTACT.stop, OPPONENT_CONTACT.stop + len(RUNNING_UNITS))
PARALLEL_COLUMN = RUNNING_COLUMNS.start  # 315
MOVER_PASSED = PARALLEL_COLUMN + 1  # 316
OPPONENT_PASSED = PARALLEL_COLUMN + 2  # 317
PASSED_BELOW = 12
"""A side has *passed* once it has a checker on one of its own points below this one (1..11) or off."""
CASCADE_UNITS = ("rules.cascades", "mover.cascade_now", "opponent.cascade_now",
                 *(f"stage.number{number}" for number in range(1, 7)), "stage.steps", "stage.remainder")
"""Version 5: the rule flag of cascading doubles, per side whether its doubles cascade now, the pending stage."""
CASCADE_COLUMNS = slice(RUNNING_COLUMNS.stop, RUNNING_COLUMNS.stop + len(CASCADE_UNITS))  # 318..328
CASCADES_COLUMN = CASCADE_COLUMNS.start  # 318
MOVER_CASCADE_NOW = CASCADES_COLUMN + 1  # 319
OPPONENT_CASCADE_NOW = CASCADES_COLUMN + 2  # 320
STAGE_NUMBER_COLUMNS = slice(CASCADES_COLUMN + 3, CASCADES_COLUMN + 9)  # 321..326: numbers 1..6
STAGE_STEPS_COLUMN = CASCADES_COLUMN + 9  # 327
STAGE_REMAINDER_COLUMN = CASCADES_COLUMN + 10  # 328
STAGE_SCALE = 4.0
"""Divisor of ``stage.steps`` (the steps of a full stage)."""
_WIDTHS = {1: NUM_FEATURES, 2: OPPONENT_EXPOSURE.stop, 3: OPPONENT_CONTACT.stop, 4: RUNNING_COLUMNS.stop,
           5: CASCADE_COLUMNS.stop}


def check_version(version: object) -> int:
    """``version`` if this program computes it, else a ValueError naming the known ones."""
    if isinstance(version, bool) or version not in _WIDTHS:
        raise ValueError(f"encoding version {version!r}: this program computes versions {list(ENCODING_VERSIONS)}")
    return int(version)


def num_features(version: int = ENCODING_VERSION) -> int:
    """Columns of an encoding version: 259 (version 1), 309 (version 2), 315 (version 3), 318 (version 4),
    329 (version 5)."""
    return _WIDTHS[check_version(version)]


def check_rules_version(rules, version: int) -> None:
    """A ValueError unless encoding ``version`` can describe positions of the rule set ``rules``.

    The running games (``rules.parallel``) need version 4: versions 1-3 number the opponent's points as
    ``25 - p`` and read a lone opposing checker as open, both wrong on their board. The rule sets whose doubles
    cascade (``rules.cascades``) need version 5: versions 1-4 do not see the turn counts or a pending stage.
    """
    if getattr(rules, "cascades", False) and check_version(version) < CASCADE_VERSION:
        raise ValueError(f"encoding version {version} cannot encode {rules.name!r} (doubles cascade, "
                         f"doubles='cascade'): it needs version {CASCADE_VERSION} or later")
    if getattr(rules, "parallel", False) and check_version(version) < RUNNING_VERSION:
        raise ValueError(f"encoding version {version} cannot encode {rules.name!r} (a running game, "
                         f"paths='parallel'): it needs version {RUNNING_VERSION} or later")


def default_version(rules) -> int:
    """The version that encodes ``rules``' positions when none is asked for: :data:`ENCODING_VERSION`; for a rule
    set whose doubles cascade :data:`CASCADE_VERSION`, for another running game :data:`RUNNING_VERSION` (the first
    version that encodes each)."""
    if getattr(rules, "cascades", False):
        return max(ENCODING_VERSION, CASCADE_VERSION)
    return max(ENCODING_VERSION, RUNNING_VERSION) if getattr(rules, "parallel", False) else ENCODING_VERSION


def parallel_rows(batch: PositionBatch) -> Optional[np.ndarray]:
    """(B,) bool: the rows of a running game, or None when the batch has none (the common, fast case)."""
    if not any(r.parallel for r in batch.rules):
        return None
    rows = batch.parallel_rows()
    return rows if rows.any() else None

_SIDES = ("mover", "opponent")


def feature_names(version: int = ENCODING_VERSION) -> list[str]:
    """One name per column, e.g. ``mover.p01.free1``, ``opponent.p24.pinned``, ``mover.pips``, ``rules.pins``,
    in version 2 ``mover.p07.exposed``, ``opponent.exposed_any``, in version 3 ``mover.escapes``,
    ``opponent.dance``, in version 4 ``rules.parallel``, ``mover.passed``, ``opponent.passed``, in version 5
    ``rules.cascades``, ``mover.cascade_now``, ``opponent.cascade_now``, ``stage.number1`` .. ``stage.number6``,
    ``stage.steps``, ``stage.remainder``."""
    check_version(version)
    names = []
    for side in _SIDES:
        for point in range(1, 25):
            names.extend(f"{side}.p{point:02d}.{unit}" for unit in POINT_UNITS)
    for side in _SIDES:
        names.extend(f"{side}.{scalar}" for scalar in SIDE_SCALARS)
    names.extend(f"rules.{flag}" for flag in RULE_FLAGS)
    if version >= 2:
        for side in _SIDES:
            names.extend(f"{side}.{unit}" for unit in EXPOSURE_UNITS)
    if version >= 3:
        for side in _SIDES:
            names.extend(f"{side}.{unit}" for unit in CONTACT_UNITS)
    if version >= 4:
        names.extend(RUNNING_UNITS)
    if version >= 5:
        names.extend(CASCADE_UNITS)
    return names


def column(name: str) -> int:
    """The column index of a feature name (see :func:`feature_names`; the same in every version that has it)."""
    return _COLUMN_OF[name]


def swap_side_blocks(features: np.ndarray) -> np.ndarray:
    """(B, N) the encoding of the same positions seen from the other side (the blocks of the two sides swapped).

    ``swap_side_blocks(encode(batch, version=v))`` equals ``encode(batch.flipped(), version=v)`` (any version).
    The rule flags stay in place, and so do version 5's stage columns: :meth:`PositionBatch.flipped` keeps the
    pending stage (it is the decision of whichever side is to move); ``mover.cascade_now`` and
    ``opponent.cascade_now`` swap (the turn counts swap sides).
    """
    swapped = features.copy()
    pairs = [(MOVER_POINTS, OPPONENT_POINTS), (MOVER_SCALARS, OPPONENT_SCALARS)]
    if features.shape[1] >= OPPONENT_EXPOSURE.stop:
        pairs.append((MOVER_EXPOSURE, OPPONENT_EXPOSURE))
    if features.shape[1] >= OPPONENT_CONTACT.stop:
        pairs.append((MOVER_CONTACT, OPPONENT_CONTACT))
    if features.shape[1] >= RUNNING_COLUMNS.stop:
        pairs.append((slice(MOVER_PASSED, MOVER_PASSED + 1), slice(OPPONENT_PASSED, OPPONENT_PASSED + 1)))
    if features.shape[1] >= CASCADE_COLUMNS.stop:
        pairs.append((slice(MOVER_CASCADE_NOW, MOVER_CASCADE_NOW + 1),
                      slice(OPPONENT_CASCADE_NOW, OPPONENT_CASCADE_NOW + 1)))
    for mine, theirs in pairs:
        swapped[:, mine] = features[:, theirs]
        swapped[:, theirs] = features[:, mine]
    return swapped


# -- look-up tables ---------------------------------------------------------------------
# A point's stack, seen from the mover, is (board, pinned) with board in -15..15 and
# pinned in -1..1: code = (board + 15) * 3 + pinned + 1. Codes 0..92 read the stack for
# the mover, codes 93..185 (code + _CODES) read it for the opponent.
_CODES = 31 * 3


def _build_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    codes = np.arange(_CODES)
    top = codes // 3 - 15
    pin = codes % 3 - 1
    units = np.zeros((2 * _CODES, len(POINT_UNITS)), dtype=np.float32)
    counts = np.zeros(2 * _CODES, dtype=np.int16)
    mother = np.zeros((2 * _CODES, 3), dtype=np.float32)
    for half, sign in ((0, 1), (1, -1)):
        rows = slice(half * _CODES, (half + 1) * _CODES)
        free = np.clip(sign * top, 0, None)
        pinned_here = sign * pin == 1  # one of this side's checkers pinned under the other's
        units[rows, 0] = free >= 1
        units[rows, 1] = free >= 2
        units[rows, 2] = free >= 3
        units[rows, 3] = np.maximum(free - 3, 0) / 2.0
        units[rows, 4] = pinned_here
        counts[rows] = free + pinned_here
        # Read at the side's own 24-point: its mother (docs/rules.md 3.4) is alone (one free
        # checker, nothing on it), pinned, or safe (the side has left its 24-point).
        mother[rows, 0] = (free == 1) & (sign * pin == 0)
        mother[rows, 1] = pinned_here
        mother[rows, 2] = (free == 0) & ~pinned_here
    return units, counts, mother


_UNIT_TABLE, _COUNT_TABLE, _MOTHER_TABLE = _build_tables()

_PIP_WEIGHTS = np.arange(1, 25, dtype=np.int16)
"""Pips of a checker on each of a side's own points 1..24."""

# Column order of the 48 point codes: the mover's points 1..24 are board columns 0..23;
# the opponent's own points 1..24 are board columns 23..0, in the running games 12..23, 0..11.
_OPPONENT_COLUMNS = np.arange(23, -1, -1)
PARALLEL_OPPONENT_COLUMNS = (np.arange(1, 25) + 11) % 24
"""Running games: the board column of the opponent's own point q = 1..24, (q + 11) % 24."""

_COLUMN_OF = {name: index for index, name in enumerate(feature_names(max(ENCODING_VERSIONS)))}


def _rule_rows(batch: PositionBatch) -> tuple[np.ndarray, np.ndarray]:
    """Per rule set of the batch: (R, 3) rule-flag features and (R,) whether the mother rules apply."""
    flags = np.array(
        [[float(r.pins), float(r.backgammons), r.mother_points / MOTHER_POINTS_SCALE] for r in batch.rules],
        dtype=np.float32,
    ).reshape(len(batch.rules), len(RULE_FLAGS))
    mother_rules = np.array([r.pins and r.mother_points > 0 for r in batch.rules], dtype=np.bool_)
    return flags, mother_rules


CHUNK_ROWS = 2048
"""Rows encoded per step: keeps each step's working arrays in the CPU cache (about 1.3x faster at 50,000 rows)."""


def encode(batch: PositionBatch, out: Optional[np.ndarray] = None, version: int = ENCODING_VERSION) -> np.ndarray:
    """(B, num_features(version)) float32 features of every position of ``batch``, from its side to move.

    ``out``, if given, is a float32 array of that shape to write into (saves
    an allocation per call in hot loops); it is returned. A network's inputs
    are ``encode(batch, version=net.encoding_version)``.
    """
    size = len(batch)
    width = num_features(version)
    if out is None:
        out = np.empty((size, width), dtype=np.float32)
    elif out.shape != (size, width) or out.dtype != np.float32:
        raise ValueError(f"out: want float32 array of shape {(size, width)}, got {out.dtype} {out.shape}")
    if size == 0:
        return out
    if version < CASCADE_VERSION:
        cascades = batch.cascade_rows()
        if cascades.any():
            check_rules_version(batch.rules[int(batch.rules_id[np.flatnonzero(cascades)[0]])], version)
    parallel = parallel_rows(batch)
    if parallel is not None and version < RUNNING_VERSION:
        check_rules_version(batch.rules[int(batch.rules_id[np.flatnonzero(parallel)[0]])], version)
    flags, mother_rules = _rule_rows(batch)
    for start in range(0, size, CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, size)
        chunk_parallel = None
        if parallel is not None and parallel[start:stop].any():
            chunk_parallel = parallel[start:stop]
        counts = _encode_rows(batch, start, stop, flags, mother_rules, out[start:stop, :NUM_FEATURES], chunk_parallel)
        board, pinned, bar = batch.board[start:stop], batch.pinned[start:stop], batch.bar[start:stop]
        if version >= 2:
            exposure = out[start:stop, NUM_FEATURES:OPPONENT_EXPOSURE.stop]
            if chunk_parallel is None:
                exposure[:] = exposure_features(board, pinned, bar)
            else:
                # Nothing can be hit in the running games: their rows' exposure is 0.
                exposure[:] = 0.0
                rows = np.flatnonzero(~chunk_parallel)
                if rows.size:
                    exposure[rows] = exposure_features(board[rows], pinned[rows], bar[rows])
        if version >= 3:
            out[start:stop, MOVER_CONTACT.start:OPPONENT_CONTACT.stop] = contact_features(
                board, pinned, bar, chunk_parallel)
        if version >= 4:
            running = out[start:stop, RUNNING_COLUMNS]
            running[:] = 0.0
            if chunk_parallel is not None:
                off = batch.off[start:stop]
                passed = (counts[:, :, :PASSED_BELOW - 1].sum(axis=2) > 0) | (off > 0)  # (R, 2) own numbering
                running[:, 0] = chunk_parallel
                running[:, 1:] = passed & chunk_parallel[:, None]
    if version >= CASCADE_VERSION:
        out[:, CASCADE_COLUMNS] = cascade_features(batch)
    return out


def cascade_features(batch: PositionBatch, flip: bool = False) -> np.ndarray:
    """(B, 11) float32: version 5's cascade columns (:data:`CASCADE_UNITS`) of every position of ``batch``.

    ``flip``: those of ``batch.flipped()`` (the turn counts swapped, the pending stage kept). All 0 in the rows of
    a rule set whose doubles are plain.
    """
    size = len(batch)
    out = np.zeros((size, len(CASCADE_UNITS)), dtype=np.float32)
    if size == 0 or not any(getattr(r, "cascades", False) for r in batch.rules):
        return out
    cascades = np.array([r.cascades for r in batch.rules], dtype=np.bool_)[batch.rules_id]
    plain_turns = np.array([r.plain_double_turns for r in batch.rules], dtype=np.int16)[batch.rules_id]
    turns = batch.turns[:, ::-1] if flip else batch.turns
    number = batch.stage[:, 0].astype(np.intp)
    staged = cascades & (number > 0)
    out[:, 0] = cascades
    out[:, 1:3] = (turns >= plain_turns[:, None]) & cascades[:, None]
    rows = np.flatnonzero(staged)
    out[rows, 2 + number[rows]] = 1.0  # stage.number1 is column 3 of the 11
    out[rows, 9] = batch.stage[rows, 1] / STAGE_SCALE
    out[rows, 10] = batch.stage[rows, 2] != 0
    return out


def _encode_rows(
    batch: PositionBatch, start: int, stop: int, flags: np.ndarray, mother_rules: np.ndarray, out: np.ndarray,
    parallel: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Encode rows ``start:stop`` of ``batch`` into ``out`` (their rows of the result); ``parallel``: (R,) the
    running-game rows among them (None: none). Returns (R, 2, 24) the checkers of each side on its own points."""
    rows = stop - start
    code = (batch.board[start:stop].astype(np.int16) + 15) * 3 + (batch.pinned[start:stop] + 1)  # (R, 24)
    codes = np.empty((rows, 48), dtype=np.intp)
    codes[:, :24] = code  # mover's numbering
    codes[:, 24:] = code[:, _OPPONENT_COLUMNS] + _CODES  # opponent's own numbering
    if parallel is not None:
        # Running games: the opponent's own point q stands in column (q + 11) % 24.
        codes[parallel, 24:] = code[parallel][:, PARALLEL_OPPONENT_COLUMNS] + _CODES

    # np.take is several times faster than fancy indexing for this gather.
    out[:, : 2 * _POINT_BLOCK] = np.take(_UNIT_TABLE, codes, axis=0).reshape(rows, 2 * _POINT_BLOCK)

    # Checkers (free + pinned) of each side on each of its own points. Integer
    # arithmetic on purpose: a float matmul goes through BLAS, whose thread
    # hand-offs cost more than the work at this size and stall under load.
    counts = np.take(_COUNT_TABLE, codes).reshape(rows, 2, 24)  # (R, 2, 24) int16
    pips = counts @ _PIP_WEIGHTS  # (R, 2)
    outside_home = counts[:, :, 6:].sum(axis=2)  # (R, 2)
    bar = batch.bar[start:stop].astype(np.float32)  # (R, 2)
    off = batch.off[start:stop].astype(np.float32)
    rules_id = batch.rules_id[start:stop]
    mother_on = mother_rules[rules_id][:, None]  # (R, 1)

    # Scalars are built in a small contiguous array and copied once: writing
    # single columns of ``out`` touches every one of its rows each time.
    scalars = np.empty((rows, 2, len(SIDE_SCALARS)), dtype=np.float32)
    for side in (0, 1):
        side_scalars = scalars[:, side]
        side_scalars[:, 0] = counts[:, side, 23] / CHECKER_SCALE
        # The side's own 24-point is the last of its 24 codes.
        side_scalars[:, 1:4] = np.take(_MOTHER_TABLE, codes[:, 24 * side + 23], axis=0) * mother_on
        side_scalars[:, 4] = off[:, side] / CHECKER_SCALE
        side_scalars[:, 5] = (pips[:, side] + 25.0 * bar[:, side]) / PIP_SCALE
        side_scalars[:, 6] = bar[:, side] / BAR_SCALE
        side_scalars[:, 7] = (outside_home[:, side] + bar[:, side]) == 0
    out[:, MOVER_SCALARS.start: OPPONENT_SCALARS.stop] = scalars.reshape(rows, 2 * len(SIDE_SCALARS))
    out[:, RULES_COLUMNS] = np.take(flags, rules_id, axis=0)
    return counts


def encode_positions(positions: Sequence[Position], version: int = ENCODING_VERSION) -> np.ndarray:
    """(len(positions), num_features(version)) features of reference positions, each from its ``turn``."""
    return encode(PositionBatch.from_positions(list(positions)), version=version)
