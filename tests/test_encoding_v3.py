"""Encoding version 3 (version 2 + contact columns): layout, exact values, symmetry, the fast kernel.

The contact columns are checked against ``reference_contact``, a loop over the
36 ordered rolls and ``Position`` stack strings written from ``docs/encoding.md``
("Version 3: contact"), sharing no code with the bit-mask implementations
(numpy in ``encoding``, numba in ``fast_eval``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tapa_ai.config import ModelConfig
from tapa_ai.net.encoding import (
    MOVER_CONTACT, OPPONENT_CONTACT, OPPONENT_EXPOSURE, encode, encode_positions, feature_names, num_features,
    swap_side_blocks,
)
from tapa_ai.net.fast_eval import FastEvaluator
from tapa_ai.net.model import EvaluatorNet, evaluate
from tapa_ai.rules.outcomes import swap_sides
from tapa_ai.movegen.batch import PositionBatch
from tapa_ai.notation import board
from tapa_ai.rules import Position, other
from tapa_ai.rules.options import variant_rules

from .test_encoding import VARIANTS, colour_swapped, random_positions

ROLLS36 = [(a, b) for a in range(1, 7) for b in range(1, 7)]


def reference_contact(position: Position) -> np.ndarray:
    """The 6 contact columns of one position, the slow, obvious way from docs/encoding.md."""
    values: list[float] = []
    for side in (position.turn, other(position.turn)):
        foe = other(side)

        def is_open(point: int) -> bool:  # docs/rules.md 3.2, for `side`
            stack = position.stack(side, point)
            return not stack.endswith(foe) or stack == foe

        if position.bar_count(side) > 0:
            sources = [25]
        else:
            sources = [p for p in range(1, 25) if position.stack(side, p).endswith(side)]
        if not sources:
            values += [0.0, 0.0, 0.0]
            continue
        rear = max(sources)
        closed_in_zone = [p for p in range(1, rear) if rear - p <= 12 and not is_open(p)]
        limit = min(closed_in_zone) if closed_in_zone else rear
        outside = sum(len([c for c in position.stack(side, p) if c == side]) for p in range(7, 25))
        home = outside == 0 and position.bar_count(side) == 0
        escapes = dance = 0
        for a, b in ROLLS36:
            landed = set()
            orders = [(a,) * 4] if a == b else [(a, b), (b, a)]
            for steps in orders:
                point = rear
                for step in steps:
                    point -= step
                    if point < 1:
                        break
                    landed.add(point)
                    if not is_open(point):
                        break
            escapes += any(p < limit and is_open(p) for p in landed)
            can_move = any(s - d >= 1 and is_open(s - d) for s in sources for d in (a, b))
            dance += (not can_move) and not home
        longest = run = 0
        for p in range(1, rear):
            run = 0 if is_open(p) else run + 1
            longest = max(longest, run)
        values += [escapes / 36, min(longest, 6) / 6, dance / 36]
    return np.array(values, dtype=np.float32)


def contact(layout: str, variant: str = "tapa", turn: str = "X") -> dict[str, float]:
    """The contact columns of a mini-language position: escapes and dance in rolls of 36, prime in points."""
    features = encode_positions([board(variant, layout, turn=turn)], version=3)[0]
    names = feature_names(3)
    scale = {"escapes": 36, "prime": 6, "dance": 36}
    return {names[i]: round(float(features[i]) * scale[names[i].split(".")[1]], 4)
            for i in range(MOVER_CONTACT.start, OPPONENT_CONTACT.stop)}


@pytest.fixture(scope="module")
def positions() -> list[Position]:
    found = []
    for index, variant in enumerate(VARIANTS):
        found += random_positions(variant, 12, seed=30 + index)
    return found


def test_version_3_is_version_2_plus_six_contact_columns(positions):
    assert num_features(3) == 315 and (MOVER_CONTACT.start, OPPONENT_CONTACT.stop) == (309, 315)
    assert feature_names(3)[:309] == feature_names(2)
    assert feature_names(3)[309:] == ["mover.escapes", "mover.prime", "mover.dance",
                                      "opponent.escapes", "opponent.prime", "opponent.dance"]
    v3 = encode_positions(positions, version=3)
    assert np.array_equal(v3[:, :OPPONENT_EXPOSURE.stop], encode_positions(positions, version=2))


# -- exact values ------------------------------------------------------------------------------
def test_three_point_block_escapes_dance_and_prime():
    # X's 15 on its 24-point; O holds X's 18, 19 and 20 (its own 7, 6, 5).
    values = contact("24:XXXXXXXXXXXXXXX 18:OO 19:OO 20:OO 1:OOOOOOOOO")
    # Past X's 18 takes 7+ pips with a first step of 1-3: 1-6 2-5 2-6 3-4 3-5 3-6, both orders; no double does.
    assert values["mover.escapes"] == 12
    assert values["mover.prime"] == 3
    assert values["mover.dance"] == 9  # both dice in 4..6
    # O's rear (its 24-point, X's 1) sees only X's 24-point stack (its point 1) in front: no block within 12.
    assert values["opponent.escapes"] == 36 and values["opponent.prime"] == 1 and values["opponent.dance"] == 0


def test_full_prime_closes_everything():
    values = contact("24:XXXXXXXXXXXXXXX 18:OO 19:OO 20:OO 21:OO 22:OO 23:OO 1:OOO")
    assert (values["mover.escapes"], values["mover.prime"], values["mover.dance"]) == (0, 6, 36)


def test_prime_six_points_away_only_6_6_dances():
    values = contact("24:XXXXXXXXXXXXXXX 13:OO 14:OO 15:OO 16:OO 17:OO 18:OO 1:OOO")
    assert (values["mover.escapes"], values["mover.prime"], values["mover.dance"]) == (0, 6, 1)


def test_a_single_opposing_checker_is_open_a_pinning_one_is_closed():
    # O alone on X's 20 can be pinned: open. O on top of a pinned X on X's 21: closed, the only block.
    values = contact("24:XXXXXXXXXXXXXX 21:XO 20:O 1:OOOOOOOOOOOOO")
    assert values["mover.prime"] == 1
    # From 24, landing open below 21: any 4, 5 or 6; 1-3 and 2-3 by the open 23 or 22; 2-2 (22, 20).
    # Not: 1-2 and 2-1 (23 or 22, then 21), 1-1 (23, 22, then 21), 3-3 (21 at once).
    assert values["mover.escapes"] == 32
    assert values["mover.dance"] == 1  # 3-3: a 3 is the only die no checker can play


def test_bar_checkers_are_the_rearmost_and_dance_on_a_closed_board():
    closed = "19:OO 20:OO 21:OO 22:OO 23:OO 24:OO 6:OOO"
    values = contact(f"bar:X 1:XXXXXXXXXXXXXX {closed}", variant="backgammon")
    assert (values["mover.escapes"], values["mover.prime"], values["mover.dance"]) == (0, 6, 36)
    open_one = contact("bar:X 1:XXXXXXXXXXXXXX 20:OO 21:OO 22:OO 23:OO 24:OO 6:OOOOO", variant="backgammon")
    assert open_one["mover.dance"] == 25  # both dice in 1..5: no entry


def test_dance_is_zero_once_all_home():
    values = contact("1:XXXXXXXXXXXXXXX 2:OO 3:OO 4:OO 5:OO 6:OO 7:OO 24:OOO")
    assert values["mover.dance"] == 0


def test_contact_equals_the_reference_on_random_positions(positions):
    features = encode_positions(positions, version=3)
    expected = np.stack([reference_contact(position) for position in positions])
    assert np.array_equal(features[:, MOVER_CONTACT.start:], expected)


def test_version_3_colour_swap_and_flip_symmetry(positions):
    twins = [colour_swapped(position) for position in positions]
    assert np.array_equal(encode_positions(positions, version=3), encode_positions(twins, version=3))
    batch = PositionBatch.from_positions(positions)
    assert np.array_equal(encode(batch.flipped(), version=3), swap_side_blocks(encode(batch, version=3)))


@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_kernel_computes_version_3(variant, positions):
    net = EvaluatorNet(ModelConfig(hidden=32, encoding_version=3), variant_rules(variant), seed=5)
    with torch.no_grad():
        # Large contact weights, so that a wrong contact column shows in the outputs.
        net.layers[0].weight[:, MOVER_CONTACT.start:] *= 30.0
    mine = [position for position in positions if position.rules == net.rules]
    batch = PositionBatch.from_positions(mine)
    evaluator = FastEvaluator.from_net(net)
    probabilities, equities = evaluator.evaluate(batch)
    expected, expected_equities = evaluate(net, encode(batch, version=3))
    assert np.abs(probabilities - expected).max() < 1e-5 and np.abs(equities - expected_equities).max() < 4e-5
    flipped, _ = evaluator.evaluate_flipped(batch)
    expected_flipped, _ = evaluate(net, encode(batch.flipped(), version=3))
    assert np.abs(flipped - swap_sides(expected_flipped)).max() < 1e-5
