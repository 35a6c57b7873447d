"""The engine's ``bot_move`` command: the move of a bot that needs no model, in any variant.

``{"bot": "heuristic" | "runner" | "random", "position": ..., "dice": [a, b], "seed": s}``: the move the
bot (:mod:`tapa_ai.bots.spec`) plays; ``seed`` (optional) fixes its random tie-breaks. The web board plays
these bots in the variants that have no trained network. Bad input raises
:class:`~tapa_ai.analysis.analyzer.AnalysisError` (the protocol answers it as an error).
"""

from __future__ import annotations

import numpy as np

from ..notation.json_position import position_to_json
from ..notation.move_text import format_move
from ..rules.position import Position

FIXED_BOTS = ("heuristic", "runner", "random")
"""The bots ``bot_move`` plays: no model, any variant."""


def answer_bot_move(request: dict, position: Position, dice: tuple[int, int]) -> dict:
    """The answer to a ``bot_move`` request; ``position`` and ``dice`` already read and checked playable."""
    from ..bots.base import one_position_afterstates
    from ..bots.spec import make_bot

    name, seed = request["bot"], request.get("seed")  # one of FIXED_BOTS, a 63-bit seed: the request's schema
    afterstates = one_position_afterstates(position, dice)
    row = int(make_bot(name, position.rules).choose(afterstates, np.random.default_rng(seed))[0])
    move = afterstates.move(row)
    return {"move": format_move(move), "position": position_to_json(move.position), "bot": name}
