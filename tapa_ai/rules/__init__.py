"""The rules: pure Python, no torch. ``reference`` is the oracle move generator; ``turns`` says what a decision
plays and who decides next (a roll's plan of stages, docs/rules.md 2 and 10.2).

The game and match flow built on them is :mod:`tapa_ai.flow` (it needs
:mod:`tapa_ai.notation`, which needs these rules, so it lives above both).
"""

from .cube import CUBE_VALUES, MAX_CUBE, Cube, CubeError, MatchScore, double_refusal
from .options import BACKGAMMON, PLAKOTO, RULES_VERSION, TAPA, VARIANTS, RuleOptions, RulesError, variant_rules
from .position import (
    BAR_POINT,
    OFF_POINT,
    SIDES,
    GameResult,
    Position,
    PositionError,
    other,
    start_position,
    validate_position,
)
from .reference import Move, Step, check_dice, finished_result, legal_moves, next_turn
from .turns import Cascade, roll_plan

__all__ = [
    "BACKGAMMON", "PLAKOTO", "TAPA", "VARIANTS", "RULES_VERSION", "RuleOptions", "RulesError", "variant_rules",
    "BAR_POINT", "OFF_POINT", "SIDES", "GameResult", "Position", "PositionError", "other", "start_position",
    "validate_position", "Move", "Step", "check_dice", "finished_result", "legal_moves", "next_turn",
    "CUBE_VALUES", "MAX_CUBE", "Cube", "CubeError", "MatchScore", "double_refusal", "Cascade", "roll_plan",
]
