"""How ``tapa-ai analyse`` batches its work: as many moves, and the cube decisions among them, as the
search's budget of afterstates holds at the bot's depth.

The search (:mod:`tapa_ai.bots.search`) evaluates a batch's afterstates ply by ply, all at once, and at 3
plies each candidate move expands into some 300,000 of them (:func:`expanded`): a batch of 32 moves took
13 GB. A batch holds as many moves (and cube decisions) as :data:`SEARCH_BUDGET` holds, at least one and at
most :data:`CHUNK_MOVES`, so one move a batch at 3 plies keeps the whole analysis at about 1.5 GB, and the
progress (a batch at a time) moves every move.
"""

from __future__ import annotations

from typing import Iterator, Optional

from ..bots.search import NetBot
from ..rules.rolls import DISTINCT_ROLLS
from .records import Record, RecordedGame, Turn

CHUNK_MOVES = 32
"""The most moves (or cube decisions) rated in one batch (one generator call, one search)."""
SEARCH_BUDGET = 1_000_000
"""About how many afterstates the search of one batch may evaluate (:func:`expanded`): some 400 bytes each at
the deepest ply, so about half a gigabyte; a batch holds at least one move, whatever the depth."""
REPLIES = 30
"""About how many legal moves a roll has (the estimate of :func:`expanded`; 29.5 on average over the 21 rolls
of the positions of a game of the shipped tapa network against the heuristic)."""

__all__ = ["CHUNK_MOVES", "SEARCH_BUDGET", "expanded", "batch_sizes", "decisions_of", "batches"]


def expanded(plies: int) -> int:
    """About how many afterstates the search evaluates for one afterstate (a candidate move, or a position
    before its roll) searched ``plies`` deep: each ply, the 21 rolls of every position it reaches and some
    :data:`REPLIES` moves each, the best of which goes one ply deeper (``30 * (21 + 21**2 + ...)``)."""
    return REPLIES * sum(len(DISTINCT_ROLLS) ** k for k in range(1, plies + 1))


def batch_sizes(bot: NetBot, plies: Optional[int] = None) -> tuple[int, int]:
    """(moves, cube decisions) rated in one batch at ``plies`` (default the bot's): as many as
    :data:`SEARCH_BUDGET` holds, 1 to :data:`CHUNK_MOVES` (32, 9 and 1 moves at 1, 2 and 3 plies)."""
    each = max(1, expanded(bot.plies if plies is None else plies))
    candidates = bot.candidates or 2 * REPLIES  # no limit: the moves within the margin
    return (max(1, min(CHUNK_MOVES, SEARCH_BUDGET // (candidates * each))),
            max(1, min(CHUNK_MOVES, SEARCH_BUDGET // each)))


def decisions_of(record: Record) -> list[tuple[str, RecordedGame, Turn]]:
    """What is rated, in the order it happened: ``("move", game, turn)`` for every move, ``("cube", game,
    turn)`` for every cube decision (a double, take or pass, and in games played with the cube every roll
    where a double was allowed: the decision not to double, just before its move)."""
    found = []
    for game in record.games:
        for turn in game.turns:
            if turn.action != "move" or (record.cube and turn.may_double):
                found.append(("cube", game, turn))
            if turn.action == "move":
                found.append(("move", game, turn))
    return found


def batches(decisions: list, moves: int, cube: int) -> Iterator[list]:
    """``decisions`` (:func:`decisions_of`) in order, in batches of at most ``moves`` moves and ``cube`` cube
    decisions (:func:`batch_sizes`)."""
    batch, counts = [], {"move": 0, "cube": 0}
    limits = {"move": moves, "cube": cube}
    for decision in decisions:
        if batch and counts[decision[0]] == limits[decision[0]]:
            yield batch
            batch, counts = [], {"move": 0, "cube": 0}
        batch.append(decision)
        counts[decision[0]] += 1
    if batch:
        yield batch
