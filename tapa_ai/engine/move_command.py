"""The engine's ``best_move`` and ``hint``: the legal moves of a roll ranked by the model (docs/protocol.md).

Besides the money ranking at the request's depth, a request may carry:

- ``"rotation_match": {"rotation", "length", "score", "game"}``: the position is game ``game`` of a rotation's
  match (``rotation``: a preset's name, ``tavli`` or ``tabla``, or the list of games) at that score; the moves are
  ranked by the mover's match-winning chance (the rotation's table, :mod:`tapa_ai.cube.rotation_met`), each with
  its ``match_winning_chance``; ``"tavli": {"length", "score", "game"}`` is the short form for the Tavli rotation
  (one or the other, not both);
- ``"level"`` (and ``"noise_seed"``): a level of play of the model's variant (:mod:`tapa_ai.bots.levels`):
  ``best_move`` answers the level's move, ``hint`` adds it as ``level_move`` beside its list.

Bad input raises :class:`~tapa_ai.analysis.analyzer.AnalysisError` (one line), which the engine answers as an
error.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..analysis.analyzer import AnalysisError
from ..notation.json_position import position_to_json

DEFAULT_HINT_COUNT = 5
MAX_HINT_COUNT = 100
"""Most moves a ``hint`` answer lists."""


def level_of(request: dict, analyzer):
    """The request's ``"level"`` as a :class:`~tapa_ai.bots.levels.Level` of the model's variant, or None (its
    ``"noise_seed"``'s range is the request's schema's, that of :func:`tapa_ai.bots.noise.check_noise_seed`)."""
    if request.get("level") is None:
        if "noise_seed" in request:
            raise AnalysisError("noise_seed goes with a level: add \"level\" (docs/levels.md)")
        return None
    from ..bots.levels import LevelError, find_level

    name = request["level"]  # a short string: the request's schema
    if request.get("plies") is not None:
        raise AnalysisError("give a level or plies, not both: a level sets the depth (docs/levels.md)")
    try:
        return find_level(analyzer.bot.evaluator.model_rules.name, name)
    except LevelError as error:
        raise AnalysisError(str(error)) from None


def rotation_score(request: dict, position):
    """The request's ``"rotation_match"`` (or ``"tavli"``) context as a one-position
    :class:`~tapa_ai.cube.rotation_met.RotationScore`, or None."""
    rotation_match, tavli = request.get("rotation_match"), request.get("tavli")
    if rotation_match is None and tavli is None:
        return None
    if rotation_match is not None and tavli is not None:
        raise AnalysisError("give \"rotation_match\" or \"tavli\" (its short form for the Tavli rotation), not both")
    from ..cube.met import MAX_MATCH_LENGTH
    from ..cube.rotation_met import RotationScore, rotation_met
    from ..flow.errors import FlowError
    from ..flow.rotation import RotationContext
    from ..rules.rotations import ROTATIONS

    try:
        if tavli is not None:
            context = RotationContext.from_request(tavli, position.rules, "tavli", rotation=ROTATIONS["tavli"])
        else:
            context = RotationContext.from_request(rotation_match, position.rules)
    except FlowError as error:
        raise AnalysisError(str(error)) from None
    where = "tavli" if tavli is not None else "rotation_match"
    if context.length > MAX_MATCH_LENGTH:
        raise AnalysisError(f"{where}.length: {context.length} is past the match equity table's reach (1 to "
                            f"{MAX_MATCH_LENGTH} points)")
    away, opponent_away = context.away(position.turn)
    return RotationScore(rotation_met(context.rotation), [away], [opponent_away], context.game - 1)


def _ranked(request: dict, analyzer, position, dice, plies: Optional[int], limit: int):
    """(depth, ranked moves, legal move count, the level's choice or None): one search at the depth, the level's
    move chosen from the same search (:meth:`~tapa_ai.analysis.analyzer.Analyzer.rank_and_choose`)."""
    level = level_of(request, analyzer)
    plies = level.plies if level is not None else plies
    score = rotation_score(request, position)
    class_values = None if score is None else score.class_values(analyzer.points)[0]
    if level is None:
        moves, total = analyzer.rank(position, dice, plies, limit=limit, class_values=class_values)
        return plies, moves, total, None
    seed = request.get("noise_seed")
    moves, total, chosen = analyzer.rank_and_choose(position, dice, plies, limit, class_values, level.noise, seed,
                                                    np.random.default_rng(seed))
    return plies, moves, total, (level, seed, chosen)


def _move_fields(move) -> dict:
    """A ranked move's match-winning chance, when it was ranked at a rotation's match score."""
    return {} if move.match_winning_chance is None else {"match_winning_chance": move.match_winning_chance}


def _level_fields(choice) -> dict:
    """A level's name, noise and seed, and the move it chose, when the request named a level."""
    if choice is None:
        return {}
    level, seed, chosen = choice
    return {"level": {"name": level.name, "plies": level.plies, "noise": level.noise, "noise_seed": seed},
            "level_move": chosen.move}


def answer_best_move(request: dict, analyzer, position, dice, plies: Optional[int]) -> dict:
    """``best_move``: the best move (a level's move with ``"level"``) with its value."""
    _, moves, _, choice = _ranked(request, analyzer, position, dice, plies, 1)
    best = moves[0] if choice is None else choice[2]
    return {"move": best.move, "position": position_to_json(best.position), "equity": best.equity,
            "probabilities": analyzer.named(best.probabilities), "plies": best.plies, **_move_fields(best),
            **_level_fields(choice)}


def answer_hint(request: dict, analyzer, position, dice, plies: Optional[int]) -> dict:
    """``hint``: the best ``count`` moves, each with its difference to the best."""
    count = request.get("count", DEFAULT_HINT_COUNT)  # 1..MAX_HINT_COUNT: the request's schema
    plies, moves, total, choice = _ranked(request, analyzer, position, dice, plies, count)
    best = moves[0].value
    return {"moves": [{"move": m.move, "equity": m.equity, "difference": m.value - best,
                       "probabilities": analyzer.named(m.probabilities), "plies": m.plies,
                       "position": position_to_json(m.position), **_move_fields(m)} for m in moves],
            "legal_moves": total, "plies": plies, **_level_fields(choice)}
