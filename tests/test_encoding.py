"""The ``tapa-td`` network input: layout, exact values on known positions, symmetry, batch == one by one.

The vectorized encoder is checked against ``reference_features``, a plain
per-position loop written from ``docs/encoding.md`` over ``Position`` stack
strings (no shared code with the encoder), on random positions of every
variant.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tapa_ai.net import encoding
from tapa_ai.net.encoding import (
    ENCODING_NAME,
    ENCODING_VERSION,
    MOVER_POINTS,
    MOVER_SCALARS,
    NUM_FEATURES,
    OPPONENT_POINTS,
    OPPONENT_SCALARS,
    RULES_COLUMNS,
    column,
    encode,
    encode_positions,
    feature_names,
    swap_side_blocks,
)
from tapa_ai.movegen.batch import PositionBatch
from tapa_ai.notation import board
from tapa_ai.rules import Position, legal_moves, next_turn, other, start_position

VARIANTS = ["tapa", "plakoto", "backgammon"]


def nonzero(position: Position) -> dict[str, float]:
    """The nonzero features of one position, by name, rounded to 6 places."""
    features = encode_positions([position])[0]
    names = feature_names()
    return {names[i]: round(float(features[i]), 6) for i in np.flatnonzero(features)}


def colour_swapped(position: Position) -> Position:
    """The same position with X and O exchanged (board mirrored, off/bar/turn swapped)."""
    swap = str.maketrans("XO", "OX")
    points = tuple(stack.translate(swap) for stack in reversed(position.points))
    return Position(position.rules, points, position.off[::-1], position.bar[::-1], other(position.turn))


def random_positions(variant: str, games: int, seed: int) -> list[Position]:
    """Every position met in ``games`` random games of the reference rules (seeded)."""
    rng = random.Random(seed)
    positions = []
    for _ in range(games):
        position = start_position(variant, rng.choice("XO"))
        while True:
            positions.append(position)
            move = rng.choice(legal_moves(position, (rng.randint(1, 6), rng.randint(1, 6))))
            if move.position.result is not None:
                break
            position = next_turn(move.position)
    return positions


def reference_features(position: Position) -> np.ndarray:
    """The encoding of one position, computed the slow, obvious way from docs/encoding.md."""
    rules = position.rules
    mover = position.turn
    features: list[float] = []
    for side in (mover, other(mover)):
        for point in range(1, 25):
            stack = position.stack(side, point)
            free = stack.count(side) if stack.endswith(side) else 0
            pinned = len(stack) >= 2 and stack[0] == side and stack[-1] != side
            features += [free >= 1, free >= 2, free >= 3, max(free - 3, 0) / 2, pinned]
    for side in (mover, other(mover)):
        own_24 = position.stack(side, 24)
        mother_rules = rules.pins and rules.mother_points > 0
        alone = own_24 == side
        pinned_mother = len(own_24) >= 2 and own_24[0] == side and own_24[-1] != side
        safe = side not in own_24
        outside_home = sum(position.checkers_on_point(side, p) for p in range(7, 25))
        features += [
            own_24.count(side) / 15,
            mother_rules and alone, mother_rules and pinned_mother, mother_rules and safe,
            position.off_count(side) / 15,
            position.pip_count(side) / 360,
            position.bar_count(side) / 2,
            outside_home + position.bar_count(side) == 0,
        ]
    features += [rules.pins, rules.backgammons, rules.mother_points / 3]
    return np.array(features, dtype=np.float32)


@pytest.fixture(scope="module")
def mixed_positions() -> list[Position]:
    positions = []
    for seed, variant in enumerate(VARIANTS):
        positions += random_positions(variant, 3, seed)
    return positions


# -- layout ---------------------------------------------------------------------------------

def test_layout_has_259_named_columns_in_documented_ranges():
    names = feature_names()
    assert (ENCODING_NAME, ENCODING_VERSION, NUM_FEATURES) == ("tapa-td", 1, 259)
    assert len(names) == len(set(names)) == NUM_FEATURES
    assert names[MOVER_POINTS][:5] == ["mover.p01.free1", "mover.p01.free2", "mover.p01.free3",
                                       "mover.p01.free_extra", "mover.p01.pinned"]
    assert names[OPPONENT_POINTS.start] == "opponent.p01.free1" and names[OPPONENT_POINTS.stop - 1] == "opponent.p24.pinned"
    assert names[MOVER_SCALARS] == ["mover.on_24", "mover.mother_alone", "mover.mother_pinned", "mover.mother_safe",
                                    "mover.off", "mover.pips", "mover.bar", "mover.all_home"]
    assert names[OPPONENT_SCALARS][0] == "opponent.on_24"
    assert names[RULES_COLUMNS] == ["rules.pins", "rules.backgammons", "rules.mother_points"]
    assert (MOVER_POINTS.start, OPPONENT_POINTS.start, MOVER_SCALARS.start, OPPONENT_SCALARS.start,
            RULES_COLUMNS.start, RULES_COLUMNS.stop) == (0, 120, 240, 248, 256, 259)
    # Column formula of docs/encoding.md: side block + (point - 1) * 5 + unit.
    assert column("opponent.p07.free_extra") == 120 + 6 * 5 + 3


# -- exact values on known positions ----------------------------------------------------------

def test_tapa_start_position():
    assert nonzero(start_position("tapa")) == {
        **{f"{side}.p{p}.{unit}": 1.0 for side in ("mover", "opponent") for p in (22, 23, 24)
           for unit in ("free1", "free2", "free3", "free_extra")},
        "mover.on_24": round(5 / 15, 6), "opponent.on_24": round(5 / 15, 6),
        "mover.pips": round(345 / 360, 6), "opponent.pips": round(345 / 360, 6),
        "rules.pins": 1.0, "rules.backgammons": 1.0, "rules.mother_points": 1.0,
    }


def test_plakoto_start_position_uses_extra_unit_for_fifteen_checkers():
    features = nonzero(start_position("plakoto", "O"))
    assert features["mover.p24.free_extra"] == features["opponent.p24.free_extra"] == 6.0  # (15 - 3) / 2
    assert features["mover.pips"] == 1.0 and features["mover.on_24"] == 1.0
    assert features["rules.mother_points"] == round(2 / 3, 6) and "rules.backgammons" not in features


def test_worked_example_of_the_docs():
    # docs/encoding.md, "Worked example": pins on both sides, X's mother alone, O's mother pinned.
    position = board("tapa", "24:X 23:OOO 20:XO 6:XXXX 5:OX 1:OX", turn="X")
    assert nonzero(position) == {
        "mover.p01.free1": 1.0,
        "mover.p05.free1": 1.0,
        "mover.p06.free1": 1.0, "mover.p06.free2": 1.0, "mover.p06.free3": 1.0, "mover.p06.free_extra": 0.5,
        "mover.p20.pinned": 1.0,
        "mover.p24.free1": 1.0,
        "opponent.p02.free1": 1.0, "opponent.p02.free2": 1.0, "opponent.p02.free3": 1.0,
        "opponent.p05.free1": 1.0,
        "opponent.p20.pinned": 1.0,
        "opponent.p24.pinned": 1.0,
        "mover.on_24": round(1 / 15, 6), "mover.mother_alone": 1.0, "mover.off": round(7 / 15, 6),
        "mover.pips": round(74 / 360, 6),
        "opponent.on_24": round(1 / 15, 6), "opponent.mother_pinned": 1.0, "opponent.off": round(9 / 15, 6),
        "opponent.pips": round(55 / 360, 6),
        "rules.pins": 1.0, "rules.backgammons": 1.0, "rules.mother_points": 1.0,
    }


@pytest.mark.parametrize("free, units", [
    (0, [0, 0, 0, 0]), (1, [1, 0, 0, 0]), (2, [1, 1, 0, 0]), (3, [1, 1, 1, 0]),
    (4, [1, 1, 1, 0.5]), (7, [1, 1, 1, 2.0]), (14, [1, 1, 1, 5.5]),
])
def test_free_checkers_are_unary_with_half_units_beyond_three(free, units):
    layout = f"6:{'X' * free} 19:{'O' * free} 1:X 24:O"  # each side keeps one more checker: the game is on
    features = encode_positions([board("backgammon", layout, turn="X")])[0]
    start = column("mover.p06.free1")
    assert features[start: start + 4].tolist() == units
    start = column("opponent.p06.free1")  # O's 6-point is X's 19-point
    assert features[start: start + 4].tolist() == units


def test_mother_alone_pinned_safe_or_still_several():
    states = {
        "24:X 1:OO": "alone",
        "24:XO 1:OO": "pinned",
        "12:X 1:OO": "safe",
        "24:XX 1:OO": None,  # two checkers still on the 24-point: no mother yet
    }
    for layout, expected in states.items():
        features = nonzero(board("tapa", layout, turn="X"))
        got = [state for state in ("alone", "pinned", "safe") if features.get(f"mover.mother_{state}")]
        assert got == ([expected] if expected else []), layout


def test_mother_features_are_zero_without_mother_rules():
    for layout in ("24:X 1:O", "12:X 13:O"):
        features = nonzero(board("backgammon", layout, turn="X"))
        assert not any("mother" in name for name in features), layout
    no_mother_tapa = board(start_position("tapa").rules.replace(mother_points=0), "24:X 1:O", turn="X")
    assert not any("mother_" in name for name in nonzero(no_mother_tapa))


def test_backgammon_bar_counts_in_pips_and_blocks_all_home():
    features = nonzero(board("backgammon", "bar:XX 3:XXX 24:O", turn="X"))
    assert features["mover.bar"] == 1.0  # 2 / 2
    assert features["mover.pips"] == round((2 * 25 + 3 * 3) / 360, 6)
    assert "mover.all_home" not in features
    assert features["opponent.all_home"] == 1.0  # O's checker is on its 1-point
    assert "rules.pins" not in features and features["rules.backgammons"] == 1.0


def test_pinned_checker_counts_as_home_only_inside_the_home_board():
    inside = nonzero(board("tapa", "2:XO 20:O", turn="X"))  # X pinned on its 2-point
    outside = nonzero(board("tapa", "8:XO 20:O", turn="X"))  # X pinned on its 8-point
    assert inside["mover.all_home"] == 1.0 and inside["mover.p02.pinned"] == 1.0
    assert "mover.all_home" not in outside and outside["opponent.p17.free1"] == 1.0


# -- symmetry and agreement -------------------------------------------------------------------

def test_colour_swapped_twin_encodes_identically(mixed_positions):
    twins = [colour_swapped(position) for position in mixed_positions]
    assert np.array_equal(encode_positions(mixed_positions), encode_positions(twins))


def test_flipping_the_batch_swaps_the_side_blocks(mixed_positions):
    batch = PositionBatch.from_positions(mixed_positions)
    assert np.array_equal(encode(batch.flipped()), swap_side_blocks(encode(batch)))


def test_batch_equals_one_by_one_and_the_reference(mixed_positions):
    together = encode_positions(mixed_positions)  # one batch mixing the three rule sets
    assert together.shape == (len(mixed_positions), NUM_FEATURES) and together.dtype == np.float32
    for row, position in enumerate(mixed_positions):
        alone = encode_positions([position])[0]
        assert np.array_equal(together[row], alone)
        np.testing.assert_allclose(alone, reference_features(position), rtol=1e-6, atol=1e-7,
                                   err_msg=f"row {row}: {position}")


def test_chunk_boundaries_do_not_change_the_result(mixed_positions, monkeypatch):
    batch = PositionBatch.from_positions(mixed_positions)
    whole = encode(batch)
    monkeypatch.setattr(encoding, "CHUNK_ROWS", 7)
    assert np.array_equal(encode(batch), whole)


def test_output_buffer_is_filled_and_returned(mixed_positions):
    batch = PositionBatch.from_positions(mixed_positions[:10])
    out = np.full((10, NUM_FEATURES), np.nan, dtype=np.float32)
    assert encode(batch, out) is out
    assert np.array_equal(out, encode(batch))
    with pytest.raises(ValueError, match="out: want float32"):
        encode(batch, np.zeros((10, NUM_FEATURES), dtype=np.float64))


def test_empty_batch():
    assert encode_positions([]).shape == (0, NUM_FEATURES)
