"""Positions and moves as text: JSON positions, move text, the test mini-language, gnubg IDs."""

from .gnubg_id import GnubgIdError, position_from_gnubg_id, position_to_gnubg_id
from .json_position import position_from_json, position_to_json, result_to_json
from .mini import board
from .move_text import MoveTextError, broken_rule, find_move, format_move, format_steps, parse_move_text

__all__ = [
    "position_from_json", "position_to_json", "result_to_json", "board",
    "GnubgIdError", "position_from_gnubg_id", "position_to_gnubg_id",
    "MoveTextError", "broken_rule", "find_move", "format_move", "format_steps", "parse_move_text",
]
