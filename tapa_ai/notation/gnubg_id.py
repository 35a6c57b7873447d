"""GNU Backgammon Position IDs for backgammon positions: ``4HPwATDgc/ABMA`` is the start.

The ID is the gnubg *position key* (80 bits, 10 bytes) in base64 without
padding (14 characters). The key lists, for each player, its checkers on its
own points 1..24 and then on its bar: per point, a ``1`` bit per checker and a
closing ``0`` bit; borne-off checkers are implicit (15 minus those listed).
Bits fill each byte from the least significant bit up, and the unused tail is
zero.

**Which player comes first.** The gnubg manual (section "A technical
description of the Position ID") says the player on roll is listed first, but
gnubg itself does the opposite: its boards are ``anBoard[0]`` = the player
*not* on roll and ``anBoard[1]`` = the player on roll, and ``PositionKey``
writes ``anBoard[0]`` first (so does wildbg's ``Position::position_id``, and
the ``gnubg-nn`` package agrees: ``moves(board_from_position_id(id), ...)``
moves the second half). This module follows gnubg's behaviour: **the player
not on roll first, then the player on roll**. For the symmetric start position
both readings give the same ID.

The ID carries no side names and no result: :func:`position_from_gnubg_id`
is told which side is on roll, and a finished game comes back without its
``result``.
"""

from __future__ import annotations

import base64
import binascii
import re

from ..rules.options import BACKGAMMON, CHECKERS_PER_SIDE, RuleOptions
from ..rules.position import SIDES, Position, PositionError, absolute_index, other, validate_position
from ..quoting import quoted

__all__ = ["GnubgIdError", "position_to_gnubg_id", "position_from_gnubg_id"]

ID_LENGTH = 14
"""Characters in a Position ID (10 bytes in base64, padding dropped)."""
KEY_BITS = 80
"""Bits in the position key: 30 checkers + 2 x 25 closing zeros."""
SLOTS = 25
"""Per player: its points 1..24, then its bar."""

_ID_PATTERN = re.compile(r"^[A-Za-z0-9+/]{14}$")


class GnubgIdError(PositionError):
    """A Position ID that cannot be read, or a position that has no Position ID."""


# --------------------------------------------------------------------------
# Position -> ID
# --------------------------------------------------------------------------

def _side_slots(position: Position, side: str) -> list[int]:
    """``side``'s checkers on its own points 1..24 and its bar (25 counts)."""
    return [position.checkers_on_point(side, point) for point in range(1, 25)] + [position.bar_count(side)]


def _why_not(rules: RuleOptions) -> str:
    return "with pins" if rules.pins else "a running game: both sides travel the same way round"


def position_to_gnubg_id(position: Position) -> str:
    """The gnubg Position ID of a backgammon position, with ``position.turn`` as the player on roll.

    For an afterstate (``turn`` = the side that just moved) this is the ID
    with the mover on roll; use ``next_turn`` first for the opponent's turn.
    Raises :class:`GnubgIdError` for a pinning game (pins have no gnubg ID)
    and for an impossible position.
    """
    if not position.rules.hits:
        raise GnubgIdError(
            f"gnubg Position IDs exist only for backgammon (hitting) rules, not for {quoted(position.rules.name)} "
            f"({_why_not(position.rules)})"
        )
    try:
        validate_position(position)
    except PositionError as error:
        raise GnubgIdError(f"no gnubg Position ID for an impossible position: {error}") from None
    key = bytearray(KEY_BITS // 8)
    bit = 0
    # gnubg order: the player not on roll, then the player on roll (module docstring).
    for side in (other(position.turn), position.turn):
        for count in _side_slots(position, side):
            for _ in range(count):
                key[bit // 8] |= 1 << (bit % 8)
                bit += 1
            bit += 1  # the closing 0 bit of this point
    return base64.b64encode(bytes(key)).decode("ascii")[:ID_LENGTH]


# --------------------------------------------------------------------------
# ID -> Position
# --------------------------------------------------------------------------

def _key_of_id(pid: str) -> bytes:
    if not isinstance(pid, str):
        raise GnubgIdError(f"gnubg Position ID must be a string, got {type(pid).__name__}")
    text = pid.strip()
    if len(text) != ID_LENGTH:
        raise GnubgIdError(f"gnubg Position ID {quoted(pid)}: must be {ID_LENGTH} characters, got {len(text)}")
    if not _ID_PATTERN.match(text):
        bad = sorted({ch for ch in text if not re.match(r"[A-Za-z0-9+/]", ch)})
        raise GnubgIdError(
            f"gnubg Position ID {quoted(pid)}: characters {bad} are not base64 (A-Z, a-z, 0-9, + and / only)"
        )
    try:
        key = base64.b64decode(text + "==", validate=True)
    except (binascii.Error, ValueError) as error:  # pragma: no cover - the pattern already excludes this
        raise GnubgIdError(f"gnubg Position ID {quoted(pid)}: not valid base64 ({error})") from None
    if base64.b64encode(key).decode("ascii")[:ID_LENGTH] != text:
        # The last character carries 2 bits of the key; its 4 low bits must be 0.
        raise GnubgIdError(f"gnubg Position ID {quoted(pid)}: the last character sets bits beyond the 80-bit key")
    return key


def _slot_name(slot: int) -> str:
    """Name of the ``slot``-th slot (1-based) of a player's 25: its points 1..24, then its bar."""
    return "bar" if slot == SLOTS else f"{slot}-point"


def _slot_counts(key: bytes, pid: str) -> tuple[list[int], list[int]]:
    """The 25 slot counts of the player not on roll and of the player on roll."""

    def bit_at(index: int) -> int:
        return (key[index // 8] >> (index % 8)) & 1

    bit = 0
    players = []
    for role in ("not on roll", "on roll"):
        slots = []
        for _ in range(SLOTS):
            count = 0
            while bit < KEY_BITS and bit_at(bit):
                count += 1
                bit += 1
            if bit >= KEY_BITS:
                raise GnubgIdError(
                    f"gnubg Position ID {quoted(pid)}: the 80 bits run out before the 50 points and bars are closed "
                    f"(too many checkers encoded)"
                )
            bit += 1  # the closing 0 bit
            slots.append(count)
            if sum(slots) > CHECKERS_PER_SIDE:
                raise GnubgIdError(
                    f"gnubg Position ID {quoted(pid)}: the player {role} has more than {CHECKERS_PER_SIDE} checkers "
                    f"on the board and bar ({sum(slots)} counted up to its {_slot_name(len(slots))})"
                )
        players.append(slots)
    if any(bit_at(index) for index in range(bit, KEY_BITS)):
        raise GnubgIdError(f"gnubg Position ID {quoted(pid)}: bits are set after the last bar (too many bits)")
    return players[0], players[1]


def position_from_gnubg_id(pid: str, turn: str = "X", rules: RuleOptions = BACKGAMMON) -> Position:
    """The backgammon position of a gnubg Position ID, with ``turn`` the side on roll.

    Raises :class:`GnubgIdError` naming what is wrong: wrong length, a
    character that is not base64, stray bits, more than 15 checkers a side,
    a point holding checkers of both sides, or pinning rules.
    """
    if turn not in SIDES:
        raise GnubgIdError(f"turn {quoted(turn)}: must be 'X' or 'O'")
    if not isinstance(rules, RuleOptions):
        raise GnubgIdError(f"rules must be a RuleOptions, got {type(rules).__name__}")
    if not rules.hits:
        raise GnubgIdError(
            f"gnubg Position IDs exist only for backgammon (hitting) rules, not for {quoted(rules.name)} "
            f"({_why_not(rules)})"
        )
    key = _key_of_id(pid)
    not_on_roll, on_roll = _slot_counts(key, pid)
    board = [""] * 24
    bar = {}
    off = {}
    for side, slots in ((other(turn), not_on_roll), (turn, on_roll)):
        for point, count in enumerate(slots[:24], start=1):
            if not count:
                continue
            index = absolute_index(side, point)
            if board[index]:
                raise GnubgIdError(
                    f"gnubg Position ID {quoted(pid)}: {side}'s point {point} also holds "
                    f"{len(board[index])} checker(s) of {other(side)}"
                )
            board[index] = side * count
        bar[side] = slots[24]
        off[side] = CHECKERS_PER_SIDE - sum(slots)
    position = Position(rules, tuple(board), (off["X"], off["O"]), (bar["X"], bar["O"]), turn)
    try:
        validate_position(position)
    except PositionError as error:
        raise GnubgIdError(f"gnubg Position ID {quoted(pid)}: {error}") from None
    return position
