"""The engine's ``rollout`` command: a position, or the candidate moves of a roll, rolled out by the model.

The model plays both sides at 0 or 1 ply (``plies``) in the engine's own process, with the same games as
``tapa-ai rollout --bot <the model>@<plies>ply`` and the same options (:mod:`tapa_ai.arena.rollout`); a
request plays at most the engine's ``max_rollout_games`` (games a start times the starts).
"""

from __future__ import annotations

from typing import Optional

from ..rules.position import Position
from ..analysis.analyzer import AnalysisError

ROLLOUT_KEYS = ("position", "dice", "moves", "candidates", "games", "truncate", "bearoff", "rotate", "luck", "seed",
                "plies")
MAX_ROLLOUT_CANDIDATES = 20
"""Most moves one ``rollout`` request may analyse."""
_OPTIONS = ("games", "truncate", "rotate", "seed", "bearoff", "luck")


def _settings(request: dict):
    from ..arena.rollout import RolloutSettings

    return RolloutSettings(**{key: request[key] for key in _OPTIONS if key in request})


def _starts(request: dict, dice) -> tuple[Optional[list], int, int]:
    """(moves given or None, candidates, how many starts are rolled out), checked."""
    moves = request.get("moves")  # shapes and bounds (MAX_ROLLOUT_CANDIDATES): the request's schema
    candidates = request.get("candidates", 5)
    if moves is not None and dice is None:
        raise AnalysisError("rollout: moves need dice (the roll they are played with)")
    starts = 1 if dice is None else len(moves) if moves is not None else candidates
    return moves, candidates, starts


def answer_rollout(analyzer, request: dict, position: Position, dice, max_games: int) -> dict:
    """The answer to a ``rollout`` request (``position`` checked against the model; ``dice`` None: no dice)."""
    from ..arena.rollout import LocalPlayer, RolloutError, candidate_moves, moves_rollout, position_rollout
    from ..bots.search import NetBot

    plies = request.get("plies", 0)  # keys, types and ranges: the request's schema (tapa_ai/schemas/protocol.json)
    settings = _settings(request)
    moves, candidates, starts = _starts(request, dice)
    try:
        total = settings.check().total_games * starts
        if total > max_games:
            raise AnalysisError(f"rollout: {total} games asked ({settings.total_games} a start, {starts} "
                                f"start{'s' if starts > 1 else ''}); this engine plays at most {max_games} per request")
        with analyzer.locked():
            bot = NetBot(analyzer.evaluator, plies, name=f"{analyzer.name.split('@')[0]}@{plies}ply")
            player = LocalPlayer(analyzer.rules, bot, bot.evaluator, settings, evaluator_name=bot.name)
            if dice is None:
                result = position_rollout(player, position)
            else:
                chosen = candidate_moves(position, dice, analyzer.bot, candidates, moves)
                result = moves_rollout(player, position, dice, chosen)
    except RolloutError as error:
        raise AnalysisError(f"rollout: {error}") from None
    answer = result.to_dict()
    answer.pop("position", None)  # the client sent it
    return answer
