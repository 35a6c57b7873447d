"""The starting-quarter rule (docs/rules.md 8.4 c) in the fast generator, on the rule sets where it acts alone.

Standard Fevga has it only beside the runner rule and the prime rule, which decide most of the same steps; a
check of the quarter that is wrong only where those do not bind goes unseen there. Custom rule sets switch the
quarter rule on with no start rule, with the head rule, and with no other restriction at all. Boards with
their starting quarter nearly full (``running_edge_positions``' ``quarter`` kind), every distinct roll each:
the fast generator must find exactly the reference's afterstates (tapa_ai/movegen/differential.py), and the
sample must really hold steps that would fill the quarter. The mismatch report writes a custom rule set so that
it reads back (a report that crashed on one hid the mismatch behind the crash).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.movegen.differential import compare_with_reference, report_json
from tapa_ai.movegen.random_positions import running_edge_positions
from tapa_ai.notation import position_from_json
from tapa_ai.rules import legal_moves, variant_rules
from tapa_ai.rules.rolls import DISTINCT_ROLLS
from tapa_ai.rules.reference import _landing_steps, broken_restriction, play_step, turn_start

ALL_ROLLS = np.array([(a, b) for a, b, _ in DISTINCT_ROLLS], dtype=np.int8)
QUARTER_RULE_SETS = {
    "quarter-alone": ("fevga", {"start_rule": "none", "prime_rule": False}),
    "quarter-and-prime": ("fevga", {"start_rule": "none"}),
    "quarter-and-head": ("narde", {"full_start_quarter_allowed": False, "prime_rule": False}),
}
BOARDS = 10


@functools.lru_cache(maxsize=None)
def quarter_sample(name: str) -> tuple[PositionBatch, np.ndarray]:
    """``BOARDS`` boards of the rule set ``name`` with the starting quarter nearly full, each with every roll."""
    game, changes = QUARTER_RULE_SETS[name]
    rules = variant_rules(game).replace(name=name, **changes)
    boards = running_edge_positions(rules, BOARDS, np.random.default_rng([list(QUARTER_RULE_SETS).index(name), 61]),
                                    kinds=("quarter",))
    positions = [boards.position(i) for i in range(len(boards)) for _ in range(len(ALL_ROLLS))]
    return PositionBatch.from_positions(positions), np.tile(ALL_ROLLS, (len(boards), 1))


def quarter_breaking(position, roll) -> bool:
    """Some legal-looking landing step of the roll's dice would fill the mover's points 19-24 (reference)."""
    side, turn = position.turn, turn_start(position, roll)
    return any(broken_restriction(play_step(position, side, *step), side, turn) == "start_quarter"
               for die in set(roll) for step in _landing_steps(position, side, die))


@pytest.mark.parametrize("name", list(QUARTER_RULE_SETS))
def test_the_quarter_rule_alone_or_beside_one_other_gives_the_reference_afterstates(name):
    batch, dice = quarter_sample(name)
    assert not batch.position(0).rules.full_start_quarter_allowed
    reached = sum(quarter_breaking(batch.position(i), (int(dice[i, 0]), int(dice[i, 1]))) for i in range(len(batch)))
    assert reached >= len(batch) // 4, f"only {reached} of {len(batch)} position-rolls could fill the quarter"
    seen, mismatches = compare_with_reference(batch, dice, replay=False)
    assert seen > len(batch)  # afterstates were compared
    assert not mismatches, f"{len(mismatches)} mismatches of {len(batch)}; first: {mismatches[0]}"


def test_a_mismatch_report_writes_a_custom_rule_set_that_reads_back():
    batch, dice = quarter_sample("quarter-and-head")
    rows = np.arange(0, 3 * len(ALL_ROLLS), len(ALL_ROLLS))  # three boards, each with the roll 1-1
    batch, dice = batch.take(rows), dice[rows]
    other = dice.copy()
    other[:] = (6, 5)
    wrong = generate(batch, other)  # the afterstates of another roll: a mismatch at every position
    _, mismatches = compare_with_reference(batch, dice, replay=False, afterstates=wrong)
    assert len(mismatches) == 3
    for index, mismatch in enumerate(mismatches):
        position = batch.position(index)
        assert mismatch["dice"] == [int(dice[index, 0]), int(dice[index, 1])]
        assert mismatch["position"]["rules"]["name"] == "quarter-and-head"
        assert position_from_json(mismatch["position"]) == position
        reference = {move.position for move in legal_moves(position, (1, 1))}
        only_fast = {position_from_json(p) for p in mismatch["only_fast"]}
        assert only_fast and not only_fast & reference
        assert only_fast <= {wrong.position(row) for row in range(int(wrong.offsets[index]), int(wrong.offsets[index + 1]))}
        assert {position_from_json(p) for p in mismatch["only_reference"]} <= reference


def test_report_json_of_a_preset_is_the_positions_json():
    from tapa_ai.notation import position_to_json
    from tapa_ai.rules import start_position

    for game in ("fevga", "narde", "plakoto", "backgammon"):
        position = start_position(variant_rules(game), "O")
        assert report_json(position) == position_to_json(position)
    changed = start_position(variant_rules("fevga").replace(prime_rule=False), "X")
    assert report_json(changed)["rules"] == {"prime_rule": False}
    assert position_from_json(report_json(changed)) == changed
