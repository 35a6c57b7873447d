"""Where a match stands at the end of a match file's document: :func:`match_file_state`.

The one replay of a match file's games through the flow, to the state at the file's end, shared by
``tapa-ai play --load FILE`` (:mod:`tapa_ai.play.saves`) and the engine's ``read_match`` command (the web board's
*Open*, :mod:`tapa_ai.engine.match_file_command`). It lives here, not in :mod:`tapa_ai.play.saves`, so that the
engine, a layer below the terminal game, reads a file the same way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from ..arena.recorded_games import GAMES_FORMAT
from ..flow import Event, GameRecord, GameState, MatchState
from ..flow.rotation import RotationMatch
from ..rules.position import SIDES
from .records import read_saved

__all__ = ["match_file_state"]


def match_file_state(document: dict, where: str, record: Any = None) -> MatchState | RotationMatch:
    """The match at the end of a match file's document (:func:`tapa_ai.matchfiles.to_document`: ``tapa-ai/games``,
    or ``tapa-ai/rotation-match`` for a rotation's match).

    The document is replayed whole by :func:`~tapa_ai.analysis.records.read_saved` first (a
    :class:`RecordError` naming the place, which :func:`~tapa_ai.matchfiles.replay_match` turns into the file's
    game and move), then its games are played through the flow: each game of a ``tapa-ai/games`` document from
    the score the file gives before it (the Crawford game as the file marks it, the games after it
    post-Crawford); a rotation's match from its first game, each next game begun as the flow begins it (its
    winner opens). A game the moves do not end but the file gives a result (resigned) ends with that result, as
    ``resign`` ends one. ``record``: the document's :func:`~tapa_ai.analysis.records.read_saved` record where the
    caller has replayed it already."""
    if record is None:
        record = read_saved(document, where).record
    items = document["games"]
    if document["format"] == GAMES_FORMAT:
        state: Optional[MatchState] = None
        post_crawford = False
        for item, game in zip(items, record.games):
            score = item.get("score", {"X": 0, "O": 0})
            first = item["history"][0]
            opener = None if first["action"] == "opening" else first["side"]
            begun = GameState.new(record.rules, opener=opener, crawford=game.crawford)
            state = MatchState(begun, item.get("match_length", 0), (score["X"], score["O"]), game.number,
                               post_crawford and not game.crawford, state.results if state is not None else ())
            state = _play_events(state, item, game)
            post_crawford = post_crawford or game.crawford
        won = [0, 0]
        for result in state.results:
            if result.winner is not None:
                won[SIDES.index(result.winner)] += result.points
        if any(points > score for points, score in zip(won, state.score)):  # the file's scores are its own
            state = replace(state, results=state.results[-1:] if state.game.is_over else ())
        return state
    match = RotationMatch.new(record.length, record.rotation)
    for index, (item, game) in enumerate(zip(items, record.games)):
        if index:
            match = match.start_next_game()
        match = match.with_match(_play_events(match.match, item, game))
    return match


def _play_events(state: MatchState, item: dict, game: Any) -> MatchState:
    """``state`` with the events of a document's game played (``game``: the game as replayed, a
    :class:`~tapa_ai.analysis.records.RecordedGame`, for the result of a resigned game)."""
    for index, data in enumerate(item["history"]):
        state = Event.from_dict(data, f"history[{index}]").played_on(state)
    result = game.result
    if game.ending == "resigned" and not state.game.is_over and result is not None and result.winner is not None:
        over = replace(state.game, position=state.game.position.with_changes(result=result), phase="over",
                       dice=None, result=result)
        score = list(state.score)
        score[SIDES.index(result.winner)] += over.points_won
        record = GameRecord(state.game_number, result.winner, result.kind, over.cube_value, over.points_won,
                            False, over.crawford)
        state = replace(state, game=over, score=(score[0], score[1]), results=state.results + (record,))
    return state
