"""Shared test helpers: exact move-set assertions written as move text."""

from __future__ import annotations

from tapa_ai.rules.position import Position
from tapa_ai.rules.reference import legal_moves, play_step, result_after_step

_POINT_WORDS = {"bar": 25, "off": 0}


def play_literally(position: Position, text: str) -> Position:
    """Apply move text step by step without any legality check (test oracle for expected sets)."""
    side = position.turn
    for token in text.split():
        start, end = (int(_POINT_WORDS.get(word, word)) for word in token.split("/"))
        position = play_step(position, side, start, end)
        result = result_after_step(position, side)
        if result is not None:
            return position.with_changes(result=result)
    return position


def afterstates(position: Position, dice) -> set[Position]:
    return {move.position for move in legal_moves(position, dice)}


def assert_moves(position: Position, dice, expected: list[str]) -> None:
    """The legal moves reach exactly the positions that ``expected`` move texts reach."""
    wanted = {play_literally(position, text): text for text in expected}
    assert len(wanted) == len(expected), "expected move texts contain duplicates by resulting position"
    got = {move.position: move for move in legal_moves(position, dice)}
    from tapa_ai.notation import format_move

    missing = [wanted[p] for p in wanted if p not in got]
    extra = [format_move(got[p]) for p in got if p not in wanted]
    assert not missing and not extra, f"dice {dice}: missing {missing}, unexpected {extra}"
