"""The doubling cube's mathematics: cubeful equity from cubeless probabilities, and match equity tables.

Pure numpy, no torch: :mod:`.equity` turns an evaluator's outcome
probabilities into the equities of no double, double/take and double/pass
(Janowski's formulas for money play, their match-play form over a match
equity table for matches); :mod:`.met` computes a match equity table for a
variant from its own rates of singles, gammons and top wins (backgammons or
mother wins). docs/cube.md describes both methods; :mod:`.decisions` makes the
bots' cube decisions from them (the situation of a batch of positions, the
cube policy a game's flow asks). The cube's rules (who may double, scoring,
Crawford) are in :mod:`tapa_ai.rules.cube`, below the game flow that plays
them; games played with the cube are in :mod:`tapa_ai.arena.cube_play`.
"""

from .equity import DEFAULT_CUBE_LIFE, CubeEquities, janowski_money, outcome_split
from .met import (MAX_MATCH_LENGTH, VARIANT_RATES, MatchEquityTable, ResultRates, build_met, match_cube_equities,
                  variant_met)

__all__ = ["DEFAULT_CUBE_LIFE", "CubeEquities", "MAX_MATCH_LENGTH", "MatchEquityTable", "ResultRates",
           "VARIANT_RATES", "build_met", "janowski_money", "match_cube_equities", "outcome_split", "variant_met"]
