"""Encoding version 2 (``tapa-td`` + exposure columns): layout, exact values, symmetry, the fast kernel.

The exposure columns are checked against ``reference_exposure``, a loop over
the 36 ordered rolls and ``Position`` stack strings written from
``docs/encoding.md`` ("Version 2: exposure"), sharing no code with the
bit-mask implementations (numpy in ``encoding``, numba in ``fast_eval``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tapa_ai.config import ConfigError, ModelConfig
from tapa_ai.net.encoding import (
    ENCODING_VERSIONS, MOVER_EXPOSURE, NUM_FEATURES, OPPONENT_EXPOSURE, column, encode, encode_positions,
    feature_names, num_features, swap_side_blocks,
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


def reference_exposure(position: Position) -> np.ndarray:
    """The 50 exposure columns of one position, the slow, obvious way from docs/encoding.md."""
    mover = position.turn
    values: list[float] = []
    for defender in (mover, other(mover)):
        attacker = other(defender)
        # Everything in the attacker's numbering: the defender's point q is the attacker's 25 - q.
        targets = {25 - q for q in range(1, 25) if position.stack(defender, q) == defender}
        if position.bar_count(attacker) > 0:
            sources = {25}
        else:
            sources = {p for p in range(1, 25) if position.stack(attacker, p).endswith(attacker)}

        def is_open(p: int) -> bool:
            stack = position.stack(attacker, p)
            return not stack.endswith(defender) or stack == defender

        counts = {t: 0 for t in targets}
        any_count = 0
        for a, b in ROLLS36:
            reach = set()
            for source in sources:
                if a == b:
                    point = source
                    for _ in range(4):
                        point -= a
                        if point < 1:
                            break
                        reach.add(point)
                        if not is_open(point):
                            break
                else:
                    for first, second in ((a, b), (b, a)):
                        if source - first >= 1:
                            reach.add(source - first)
                            if is_open(source - first) and source - first - second >= 1:
                                reach.add(source - first - second)
            hit = reach & targets
            for t in hit:
                counts[t] += 1
            any_count += bool(hit)
        values += [counts.get(25 - q, 0) / 36 for q in range(1, 25)] + [any_count / 36]
    return np.array(values, dtype=np.float32)


def exposure(layout: str, variant: str = "tapa", turn: str = "X") -> dict[str, float]:
    """The nonzero exposure columns of a mini-language position, in rolls out of 36."""
    features = encode_positions([board(variant, layout, turn=turn)], version=2)[0]
    names = feature_names(2)
    return {names[i]: round(float(features[i]) * 36, 4) for i in np.flatnonzero(features[NUM_FEATURES:]) + NUM_FEATURES}


@pytest.fixture(scope="module")
def positions() -> list[Position]:
    found = []
    for seed, variant in enumerate(VARIANTS):
        found += random_positions(variant, 4, 100 + seed)
    return found


# -- layout ------------------------------------------------------------------------------------

def test_version_2_is_version_1_plus_fifty_exposure_columns(positions):
    assert ENCODING_VERSIONS[:2] == (1, 2) and (num_features(1), num_features(2)) == (259, 309)
    names = feature_names(2)
    assert names[:NUM_FEATURES] == feature_names(1) and len(set(names)) == 309
    assert names[MOVER_EXPOSURE][:2] == ["mover.p01.exposed", "mover.p02.exposed"]
    assert names[MOVER_EXPOSURE.stop - 1] == "mover.exposed_any"
    assert (OPPONENT_EXPOSURE.start, OPPONENT_EXPOSURE.stop) == (284, 309)
    assert column("opponent.p18.exposed") == 284 + 17
    v1 = encode_positions(positions, version=1)
    v2 = encode_positions(positions, version=2)
    assert np.array_equal(v2[:, :NUM_FEATURES], v1)


def test_unknown_version_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"encoding version 6: this program computes versions \[1, 2, 3, 4, 5\]"):
        num_features(6)
    with pytest.raises(ConfigError, match="model.encoding_version=6: must be"):
        ModelConfig(encoding_version=6)


# -- exact values ------------------------------------------------------------------------------

def test_direct_and_combined_shots_of_the_docs_example():
    # O's checker on X's 7-point, X's lone checker on X's 10: 3 pips. Every roll with a 3 (11),
    # 1-2 and 2-1 (2), 1-1 (1). X's 24-stack is out of reach; O's 14 checkers on X's 20 are not lone.
    assert exposure("10:X 7:O 6:XXXXXXXXXXXXXX 20:OOOOOOOOOOOOOO") == {
        "mover.p10.exposed": 14, "mover.exposed_any": 14,
        "opponent.p18.exposed": 14, "opponent.exposed_any": 14,  # X's 10 attacks O's 18 (X's 7)
    }


def test_a_made_point_blocks_the_intermediate_landing():
    # X's 8-point made: 1-2 (via 8) and 1-1 are blocked, 2-1 (via 9) is not.
    got = exposure("10:X 7:O 8:XX 6:XXXXXXXXXXXX 20:OOOOOOOOOOOOOO")
    assert got["mover.p10.exposed"] == 13


def test_a_pinning_checker_is_not_a_target_and_closes_its_point():
    # X on top of a pinned O at X's 9: not lone, and closed to O (O cannot land on X's pin).
    got = exposure("9:OX 7:O 6:XXXXXXXXXXXXX 20:OOOOOOOOOOOOO")
    assert "mover.p09.exposed" not in got and "mover.exposed_any" not in got
    # With a lone X on X's 11: 7 -> 11 is 4 pips; 2-2 passes X's 9 (closed), 1-3 / 3-1 pass 8 / 10 (open).
    got = exposure("11:X 9:OX 7:O 6:XXXXXXXXXXXX 20:OOOOOOOOOOOOO")
    assert got["mover.p11.exposed"] == 11 + 2  # a 4, 1-3 and 3-1; 2-2 and 1-1 stop on the closed 9


def test_pinned_checkers_cannot_attack():
    # O's only checkers near X's blot are pinned under X: no source, no exposure.
    got = exposure("10:X 8:OX 6:XXXXXXXXXXXXX 20:OOOOOOOOOOOOOO")
    assert "mover.p10.exposed" not in got


def test_lone_mother_exposure():
    # X's mother alone on its 24-point; O's checkers on O's 24 (X's 1) can only move away from it,
    # O's checker on its own 21-point... is X's 4: behind the mother in O's direction? O moves 1 -> 24
    # in X's numbering, so O on X's 20 reaches X's 24 with a 4.
    got = exposure("24:X 20:O 1:OOOOOOOOOOOOOO 6:XXXXXXXXXXXXXX")
    assert got["mover.p24.exposed"] == 11 + 2 + 1 + 1  # a 4, 1-3 and 3-1, 2-2, 1-1
    assert got["mover.exposed_any"] == 15


def test_backgammon_bar_checkers_attack_only_from_the_bar():
    # O on the bar enters on X's 1..6 (O's 24..19); X's blot on X's 3 is O's 22: entered with a 3,
    # or 1-2 / 2-1 through O's 24 or 23 (X's 1, 2 open), or 1-1 (24, 23, 22). O's checker on X's 5
    # would hit X's 8 with any 3, but it may not move while O is on the bar: only the bar counts,
    # and X's 8 is O's 17, 8 pips from the bar: 5-3, 3-5, 6-2, 2-6, 4-4, 2-2.
    got = exposure("bar:O 3:X 5:O 8:X 13:XXXXXXXXXXXXX 19:OOOOOOOOOOOOO", variant="backgammon")
    assert got["mover.p03.exposed"] == 14
    assert got["mover.p08.exposed"] == 6
    assert got["mover.exposed_any"] == 14 + 6 - 2  # 3-5 and 5-3 reach both
    # With O off the bar the checker on X's 5 attacks X's 8 (3 pips) and nothing reaches X's 3 (behind it).
    got = exposure("3:X 5:O 8:X 13:XXXXXXXXXXXXX 19:OOOOOOOOOOOOOO", variant="backgammon")
    assert got["mover.p08.exposed"] == 14 and "mover.p03.exposed" not in got


# -- agreement and symmetry --------------------------------------------------------------------

def test_exposure_equals_the_reference_on_random_positions(positions):
    features = encode_positions(positions, version=2)
    for row, position in enumerate(positions):
        np.testing.assert_allclose(features[row, NUM_FEATURES:], reference_exposure(position), atol=1e-7,
                                   err_msg=f"row {row}: {position}")


def test_version_2_colour_swap_and_flip_symmetry(positions):
    twins = [colour_swapped(position) for position in positions]
    assert np.array_equal(encode_positions(positions, version=2), encode_positions(twins, version=2))
    batch = PositionBatch.from_positions(positions)
    assert np.array_equal(encode(batch.flipped(), version=2), swap_side_blocks(encode(batch, version=2)))


@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_kernel_computes_version_2(variant, positions):
    net = EvaluatorNet(ModelConfig(hidden=32, encoding_version=2), variant_rules(variant), seed=5)
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.mul_(3.0)
        # Large exposure weights, so that a wrong exposure column shows in the outputs.
        net.layers[0].weight[:, NUM_FEATURES:] *= 10.0
    rows = [p for p in positions if p.rules == net.rules]
    batch = PositionBatch.from_positions(rows)
    evaluator = FastEvaluator.from_net(net)
    probabilities, equities = evaluator.evaluate(batch)
    expected, expected_equities = evaluate(net, encode(batch, version=2))
    assert np.abs(probabilities - expected).max() < 1e-5
    assert np.abs(equities - expected_equities).max() < 4e-5
    flipped, _ = evaluator.evaluate_flipped(batch)
    expected_flipped, _ = evaluate(net, encode(batch.flipped(), version=2))
    assert np.abs(flipped - swap_sides(expected_flipped)).max() < 1e-5


def test_version_2_network_round_trips_its_architecture():
    net = EvaluatorNet(ModelConfig(hidden=8, encoding_version=2), variant_rules("plakoto"), seed=1)
    architecture = net.architecture()
    assert (architecture["encoding_version"], architecture["num_features"]) == (2, 309)
    rebuilt = EvaluatorNet.from_architecture(architecture)
    assert rebuilt.encoding_version == 2 and rebuilt.layers[0].in_features == 309
    # A version-1 architecture written before ModelConfig had the field still loads as version 1.
    old = EvaluatorNet(ModelConfig(hidden=8), variant_rules("plakoto"), seed=1).architecture()
    del old["model"]["encoding_version"]
    assert EvaluatorNet.from_architecture(old).encoding_version == 1
    with pytest.raises(ValueError, match="version 2 with 259"):
        EvaluatorNet.from_architecture({**old, "encoding_version": 2})
