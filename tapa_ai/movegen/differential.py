"""Differential check of the fast generator against the reference: the same afterstates, exactly.

Used by ``tests/test_movegen_differential.py`` and ``scripts/check_movegen.py``.
For each position and roll the *set* of afterstates (``Position`` objects,
results included) of :func:`tapa_ai.movegen.generate` must equal the
reference's, with no duplicates; optionally the move text the fast generator
gives for each afterstate must replay, step by legal step, to that afterstate.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..notation.json_position import position_to_json, result_to_json
from ..notation.move_text import parse_move_text
from ..rules.options import VARIANTS
from ..rules.turns import stage_dice, stage_numbers
from ..rules.position import Position
from ..rules.reference import NO_TURN_START, legal_moves, play_step, result_after_step, single_steps, turn_start
from .batch import PositionBatch
from .generate import Afterstates, generate


def replay_text(position: Position, text: str, dice: Optional[tuple[int, int]] = None) -> Optional[Position]:
    """The position reached by playing ``text`` (one ``from/to`` per die) step by step, or None.

    Each step must be a legal single step (reference ``single_steps``) with one
    of the dice still unused; returns None at the first one that is not. With
    the turn's ``dice`` the head rule of the running games (docs/rules.md 8.4 a),
    which looks back to the start of the turn, is checked too.
    """
    side = position.turn
    turn = NO_TURN_START if dice is None else turn_start(position, dice)
    for segment in parse_move_text(text):
        legal = {(start, end) for die in range(1, 7) for start, end in single_steps(position, side, die, turn)}
        if (segment.start, segment.end) not in legal:
            return None
        position = play_step(position, side, segment.start, segment.end)
        result = result_after_step(position, side)
        if result is not None:
            return position.with_changes(result=result)
    return position


def report_json(position: Position) -> dict[str, Any]:
    """A position as a mismatch report writes it: :func:`~tapa_ai.notation.json_position.position_to_json`, and
    for a custom rule set under a name of its own (which ``position_to_json`` refuses: tests and scripts build
    them) the nearest preset's ``variant`` with every option that differs, its ``name`` included, in ``rules``,
    so the report still reads back (:func:`~tapa_ai.notation.json_position.position_from_json`) to the same
    position and rule set."""
    rules = position.rules
    if rules.name in VARIANTS:  # a preset, or a preset's name with options changed: position_to_json's "rules"
        return position_to_json(position)
    base = min(VARIANTS.values(), key=lambda preset: len(rules.changes_from(preset)))
    data: dict[str, Any] = {
        "variant": base.name,
        "rules": rules.changes_from(base),
        "points": list(position.points),
        "off": {"X": position.off[0], "O": position.off[1]},
    }
    if rules.hits:
        data["bar"] = {"X": position.bar[0], "O": position.bar[1]}
    data["turn"] = position.turn
    if position.result is not None:
        data["result"] = result_to_json(position.result)
    return data


def _dice_text_ok(afterstates: Afterstates, row: int, numbers: tuple[int, ...]) -> bool:
    """The recorded steps use the decision's numbers (a roll's dice, a double's four, a stage's): each once, at
    most."""
    used = [int(d) for d in afterstates.steps[row, : int(afterstates.n_steps[row]), 2]]
    available = list(numbers)
    for die in used:
        if die not in available:
            return False
        available.remove(die)
    return True


def compare_with_reference(
    batch: PositionBatch, dice: np.ndarray, replay: bool = True, afterstates: Optional[Afterstates] = None
) -> tuple[int, list[dict[str, Any]]]:
    """Check every position of ``batch`` with its roll ``dice`` (B, 2); returns (afterstates seen, mismatches).

    A mismatch is a JSON-ready dict: the position, the dice, what only the
    reference found, what only the fast generator found, duplicates, and move
    texts that do not replay.
    """
    if afterstates is None:
        afterstates = generate(batch, dice)
    mismatches = []
    for index in range(len(batch)):
        position = batch.position(index)
        roll = (int(dice[index][0]), int(dice[index][1]))
        # A position inside a cascade plays its pending stage (the generator ignores its dice).
        numbers, given = stage_numbers(position, None if position.cascade else roll)
        if given is None:
            roll = stage_dice(position.cascade)
        reference = {move.position for move in legal_moves(position, given)}
        rows = range(int(afterstates.offsets[index]), int(afterstates.offsets[index + 1]))
        fast = [afterstates.position(row) for row in rows]
        fast_set = set(fast)
        problem: dict[str, Any] = {}
        if fast_set != reference:
            problem["only_reference"] = [report_json(p) for p in reference - fast_set]
            problem["only_fast"] = [report_json(p) for p in fast_set - reference]
        if len(fast) != len(fast_set):
            problem["duplicates"] = len(fast) - len(fast_set)
        if replay:
            bad_text = []
            for row, after in zip(rows, fast):
                text = afterstates.move_text(row)
                replayed = replay_text(position, text, roll)
                if replayed is not None:  # the board the text reaches, with the decision the generator set
                    replayed = replayed.with_changes(turns=after.turns, cascade=after.cascade, next=after.next)
                if not _dice_text_ok(afterstates, row, numbers) or replayed != after:
                    bad_text.append(text)
            if bad_text:
                problem["text_does_not_replay"] = bad_text
        if problem:
            mismatches.append({"position": report_json(position), "dice": list(roll), **problem})
    return len(afterstates), mismatches
