"""GNU Backgammon Position IDs: known IDs, the player order, round trips, bad input.

The known IDs were checked against gnubg's own code through the ``gnubg-nn``
package (``board_from_position_id`` / ``position_id``); when that package is
installed, the last tests repeat the check on random backgammon positions.
"""

from __future__ import annotations

import base64
import random

import pytest

from tapa_ai.notation.gnubg_id import GnubgIdError, position_from_gnubg_id, position_to_gnubg_id
from tapa_ai.notation.mini import board
from tapa_ai.rules import BACKGAMMON, TAPA, PositionError, legal_moves, next_turn, other, start_position
from tests.requires import require

START_ID = "4HPwATDgc/ABMA"


def raw_id(not_on_roll: list[int], on_roll: list[int], set_bits: tuple[int, ...] = ()) -> str:
    """An ID built straight from slot counts (25 a player: points 1..24, bar), valid or not."""
    bits: list[int] = []
    for slots in (not_on_roll, on_roll):
        for count in slots:
            bits += [1] * count + [0]
    bits = (bits + [0] * 80)[:80]
    for index in set_bits:
        bits[index] = 1
    key = bytes(sum(bits[8 * i + j] << j for j in range(8)) for i in range(10))
    return base64.b64encode(key).decode("ascii")[:14]


def slots(**points: int) -> list[int]:
    """25 slot counts from ``p<point>=count`` keywords, ``bar=count`` for the bar."""
    counts = [0] * 25
    for name, count in points.items():
        counts[24 if name == "bar" else int(name[1:]) - 1] = count
    return counts


def playout_positions(seed: int, games: int = 3):
    """Positions with the side to move, from random backgammon games."""
    rng = random.Random(seed)
    for _ in range(games):
        position = start_position("backgammon", rng.choice("XO"))
        while True:
            yield position
            move = rng.choice(legal_moves(position, (rng.randint(1, 6), rng.randint(1, 6))))
            if move.position.result is not None:
                break
            position = next_turn(move.position)


# --------------------------------------------------------------------------
# Known IDs
# --------------------------------------------------------------------------

@pytest.mark.parametrize("turn", ["X", "O"])
def test_start_position_id_is_4HPwATDgc_ABMA(turn):
    assert position_to_gnubg_id(start_position("backgammon", turn)) == START_ID


@pytest.mark.parametrize("turn", ["X", "O"])
def test_start_id_reads_as_the_start_position(turn):
    assert position_from_gnubg_id(START_ID, turn) == start_position("backgammon", turn)


# IDs from wildbg's test suite; layouts confirmed with gnubg-nn's board_from_position_id.
KNOWN = [
    ("jGfkASjg8wcBMA", "1:O 2:O 6:XXXXX 8:XXXXXXX 12:OOOO 13:X 14:O 17:OO 19:OOOO 22:OO 24:XX"),
    ("zGbiIQgxH/AAWA", "1:X 3:O 4:XX 6:XXXXX 8:O 12:OOOO 13:XXXX 15:O 17:OO 19:OO 20:OO 22:OO 24:XX bar:X"),
    ("zGbiIYCYD3gALA", "1:X 4:XX 6:XXXXX 8:O 12:OOOO 13:XXXX 15:O 17:OO 19:OO 20:OO 22:OO 24:XX bar:X"),
]


@pytest.mark.parametrize("pid, layout", KNOWN)
def test_known_ids_with_x_on_roll(pid, layout):
    position = board("backgammon", layout, turn="X")
    assert position_from_gnubg_id(pid, "X") == position
    assert position_to_gnubg_id(position) == pid


def test_borne_off_checkers_are_implicit():
    # zGbiIYCYD3gALA is zGbiIQgxH/AAWA with O's checker on its 3-point borne off.
    position = position_from_gnubg_id("zGbiIYCYD3gALA", "X")
    assert position.off == (0, 1)
    assert position.bar == (1, 0)


def test_player_not_on_roll_is_encoded_first():
    # X on roll, 15 on its 1-point; O 15 on its 2-point (X's 23-point).
    # Bits: O first (0, fifteen 1s, 0, 23 more 0s), then X (fifteen 1s, 0, 24 0s):
    # bytes FE FF 00 00 00 FF 7F 00 00 00, least significant bit first.
    position = board("backgammon", "1:" + "X" * 15 + " 23:" + "O" * 15, turn="X")
    expected = base64.b64encode(bytes([0xFE, 0xFF, 0, 0, 0, 0xFF, 0x7F, 0, 0, 0])).decode()[:14]
    assert expected == "/v8AAAD/fwAAAA"
    assert position_to_gnubg_id(position) == expected
    assert position_from_gnubg_id(expected, "X") == position


def test_changing_the_side_on_roll_swaps_the_halves():
    position = board("backgammon", "1:" + "X" * 15 + " 23:" + "O" * 15, turn="O")
    assert position_to_gnubg_id(position) == raw_id(slots(p1=15), slots(p2=15))
    assert position_to_gnubg_id(position.with_changes(turn="X")) == raw_id(slots(p2=15), slots(p1=15))


def test_bar_is_the_last_slot_of_each_player():
    position = board("backgammon", "6:" + "X" * 14 + " bar:X 19:" + "O" * 13 + " bar:OO", turn="X")
    assert position_to_gnubg_id(position) == raw_id(slots(p6=13, bar=2), slots(p6=14, bar=1))


def test_afterstate_is_encoded_with_the_mover_on_roll():
    start = start_position("backgammon", "X")
    move = next(m for m in legal_moves(start, (3, 1)) if m.position.points[4] == "XX")  # 8/5 6/5
    assert move.position.turn == "X"
    assert position_from_gnubg_id(position_to_gnubg_id(move.position), "X") == move.position
    assert position_to_gnubg_id(next_turn(move.position)) != position_to_gnubg_id(move.position)


# --------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------

def test_round_trip_on_random_game_positions():
    seen = 0
    for position in playout_positions(seed=2024, games=4):
        pid = position_to_gnubg_id(position)
        assert len(pid) == 14
        assert position_from_gnubg_id(pid, position.turn) == position
        seen += 1
    assert seen > 100


def test_id_tolerates_surrounding_whitespace():
    assert position_from_gnubg_id(f"  {START_ID}\n") == start_position("backgammon")


def test_custom_hitting_rules_are_kept():
    rules = BACKGAMMON.replace(cube=False, crawford=False)
    position = position_from_gnubg_id(START_ID, "O", rules=rules)
    assert position.rules == rules
    assert position_to_gnubg_id(position) == START_ID


# --------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------

@pytest.mark.parametrize("pid", ["", "4HPwATDgc/ABM", "4HPwATDgc/ABMAA", "4HPwATDgc/ABMA=="])
def test_wrong_length_is_rejected(pid):
    with pytest.raises(GnubgIdError, match="must be 14 characters"):
        position_from_gnubg_id(pid)


@pytest.mark.parametrize("pid", ["4HPwATDgc_ABMA", "4HPwATDgc-ABMA", "4HPwATDgc/AB!A", "4HPwATDgc/AB A"])
def test_characters_outside_base64_are_rejected(pid):
    with pytest.raises(GnubgIdError, match="not base64"):
        position_from_gnubg_id(pid)


def test_last_character_beyond_the_key_is_rejected():
    with pytest.raises(GnubgIdError, match="beyond the 80-bit key"):
        position_from_gnubg_id("4HPwATDgc/ABMB")


def test_more_than_15_checkers_for_the_player_not_on_roll():
    with pytest.raises(GnubgIdError, match="not on roll has more than 15 checkers"):
        position_from_gnubg_id(raw_id(slots(p6=16), slots(p6=15)))


def test_more_than_15_checkers_for_the_player_on_roll():
    with pytest.raises(GnubgIdError, match="player on roll has more than 15 checkers"):
        position_from_gnubg_id(raw_id(slots(p6=10), slots(p6=10, p8=6)))


def test_all_ones_runs_out_of_bits():
    with pytest.raises(GnubgIdError, match="run out"):
        position_from_gnubg_id("/////////////w")


def test_bits_after_the_last_bar_are_rejected():
    # 15 + 14 checkers use 79 bits; bit 79 must stay 0.
    with pytest.raises(GnubgIdError, match="after the last bar"):
        position_from_gnubg_id(raw_id(slots(p6=15), slots(p6=14), set_bits=(79,)))


def test_both_sides_on_one_point_is_rejected():
    # O (not on roll) on its 24-point is X's 1-point, where X also stands.
    with pytest.raises(GnubgIdError, match="also holds"):
        position_from_gnubg_id(raw_id(slots(p24=1), slots(p1=1)), "X")


def test_both_sides_borne_off_is_rejected():
    with pytest.raises(GnubgIdError, match="both sides"):
        position_from_gnubg_id("AAAAAAAAAAAAAA")


def test_errors_are_position_errors_and_value_errors():
    with pytest.raises(PositionError):
        position_from_gnubg_id("nonsense")
    with pytest.raises(ValueError):
        position_from_gnubg_id("nonsense")


@pytest.mark.parametrize("pid", [None, 12345678901234, b"4HPwATDgc/ABMA"])
def test_non_string_id_is_rejected(pid):
    with pytest.raises(GnubgIdError, match="must be a string"):
        position_from_gnubg_id(pid)


def test_bad_turn_is_rejected():
    with pytest.raises(GnubgIdError, match="turn"):
        position_from_gnubg_id(START_ID, turn="Y")


def test_pin_rules_have_no_gnubg_id():
    with pytest.raises(GnubgIdError, match="only for backgammon"):
        position_to_gnubg_id(start_position("tapa"))
    with pytest.raises(GnubgIdError, match="only for backgammon"):
        position_from_gnubg_id(START_ID, rules=TAPA)


def test_impossible_position_has_no_id():
    start = start_position("backgammon")
    broken = start.with_changes(points=("XO",) + start.points[1:])
    with pytest.raises(GnubgIdError, match="impossible position"):
        position_to_gnubg_id(broken)


# --------------------------------------------------------------------------
# Optional cross-check against gnubg's own code (pip install gnubg-nn)
# --------------------------------------------------------------------------

def _gnubg_board(position):
    """gnubg's board: [player not on roll, player on roll], each 24 points (own view) + bar."""
    def side_slots(side):
        return [position.checkers_on_point(side, p) for p in range(1, 25)] + [position.bar_count(side)]

    return [side_slots(other(position.turn)), side_slots(position.turn)]


def test_ids_agree_with_gnubg_on_random_positions():
    gnubg = require("gnubg_nn")
    checked = 0
    for position in playout_positions(seed=11, games=6):
        pid = position_to_gnubg_id(position)
        gnubg_board = _gnubg_board(position)
        assert gnubg.position_id(gnubg_board) == pid
        assert [list(half) for half in gnubg.board_from_position_id(pid)] == gnubg_board
        checked += 1
    assert checked > 200


def test_backgammon_moves_agree_with_gnubg_on_random_positions():
    """gnubg moves the second half of the board (the player on roll), so equal move sets confirm the order.

    Positions where a move ends the game are skipped: there docs/rules.md's
    Decision (a game-ending step counts as using every die) allows e.g.
    ``2/off`` with 41 beside gnubg's only move ``2/1* 1/off``.
    """
    gnubg = require("gnubg_nn")
    rng = random.Random(5)
    compared = 0
    for position in playout_positions(seed=5, games=6):
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        moves = legal_moves(position, dice)
        if any(move.position.result is not None for move in moves):
            continue
        ours = {gnubg.key_of_board(_gnubg_board(move.position)) for move in moves}
        theirs = {entry if isinstance(entry, str) else entry[0] for entry in gnubg.moves(_gnubg_board(position), *dice)}
        # gnubg lists no move for a pass; we list the unchanged position.
        assert ours == (theirs or {gnubg.key_of_board(_gnubg_board(position))}), (position_to_gnubg_id(position), dice)
        compared += 1
    assert compared > 200
