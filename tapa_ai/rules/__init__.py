"""The rules: pure Python, no torch. ``reference`` is the oracle move generator."""

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
from .cube import Cube, CubeError, MatchScore, double_refusal
from .flow import (
    CUBE_VALUES,
    MAX_CUBE,
    PHASES,
    ChooseMove,
    CubePolicy,
    DiceSource,
    Event,
    FlowError,
    GameRecord,
    GameState,
    MatchState,
    NeverDouble,
    ScriptedDice,
    SnapshotError,
    play_game,
    play_match,
    roll_die,
)

__all__ = [
    "BACKGAMMON", "PLAKOTO", "TAPA", "VARIANTS", "RULES_VERSION", "RuleOptions", "RulesError", "variant_rules",
    "BAR_POINT", "OFF_POINT", "SIDES", "GameResult", "Position", "PositionError", "other", "start_position",
    "validate_position", "Move", "Step", "check_dice", "finished_result", "legal_moves", "next_turn",
    "CUBE_VALUES", "MAX_CUBE", "PHASES", "ChooseMove", "CubePolicy", "DiceSource", "Event", "FlowError",
    "GameRecord", "GameState", "MatchState", "NeverDouble", "ScriptedDice", "SnapshotError", "play_game",
    "play_match", "roll_die", "Cube", "CubeError", "MatchScore", "double_refusal",
]
