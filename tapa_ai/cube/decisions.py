"""Cube decisions of bots: double or not, take or pass, for whole batches of positions.

Every bot answers two questions (:class:`~tapa_ai.bots.base.Bot`):

- :meth:`~tapa_ai.bots.base.Bot.offer_double`: the side to roll, allowed to
  double, doubles now?
- :meth:`~tapa_ai.bots.base.Bot.accept_double`: a double is on offer; the
  receiver takes?

A bot with an evaluator (``net:``) answers from the cubeless outcome
probabilities of the position before the roll (:func:`cube_equities`):
Janowski's cubeful equities in money play, their match-play form over the
variant's match equity table in matches (:mod:`tapa_ai.cube`). A bot without
one (``random``, ``runner``, ``heuristic``, ``pubeval``, ``gnubg:N``) plays
the **passive cube**: it never doubles and always takes.

The cube and the score of each position travel in a :class:`CubeSituation`,
seen from the side to roll (the doubler).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .equity import (DEFAULT_CUBE_LIFE, OWNER_CENTRED, OWNER_MOVER, OWNER_OPPONENT, CubeEquities,
                           janowski_money, outcome_split)
from .met import match_cube_equities, variant_met
from ..rules.cube import Cube, MatchScore
from ..rules.options import RuleOptions
from ..rules.position import other


@dataclass
class CubeSituation:
    """The cube and the score of ``B`` positions, from the view of the side to roll (the possible doubler).

    Money play has ``length`` 0 (``away`` and the Crawford arrays are then unused).
    """

    rules: RuleOptions
    value: np.ndarray
    """(B,) int64 cube value (before any double now on offer)."""
    owner: np.ndarray
    """(B,) int8: 0 centred, +1 the side to roll owns it, -1 the other side does."""
    length: int = 0
    """Match length; 0 = money play."""
    away: Optional[np.ndarray] = None
    """(B,) int64 points the side to roll still needs."""
    opponent_away: Optional[np.ndarray] = None
    """(B,) int64 points the other side still needs."""
    crawford_done: Optional[np.ndarray] = None
    """(B,) bool: the Crawford game has been played (post-Crawford)."""
    crawford_game: Optional[np.ndarray] = None
    """(B,) bool: this game is the Crawford game (nobody may double)."""

    def __len__(self) -> int:
        return int(self.value.shape[0])

    @property
    def money(self) -> bool:
        return self.length == 0

    def take(self, index) -> "CubeSituation":
        """The situations at ``index``."""
        pick = (lambda a: None if a is None else a[index])  # noqa: E731
        return CubeSituation(self.rules, self.value[index], self.owner[index], self.length, pick(self.away),
                             pick(self.opponent_away), pick(self.crawford_done), pick(self.crawford_game))

    @classmethod
    def joined(cls, situations: list["CubeSituation"]) -> "CubeSituation":
        """Situations of one rule set and one match length as one batch, in order."""
        first = situations[0]

        def join(name: str):
            return None if getattr(first, name) is None else np.concatenate([getattr(s, name) for s in situations])

        return cls(first.rules, join("value"), join("owner"), first.length, join("away"), join("opponent_away"),
                   join("crawford_done"), join("crawford_game"))

    @classmethod
    def money_play(cls, rules: RuleOptions, value, owner) -> "CubeSituation":
        value = np.atleast_1d(np.asarray(value, dtype=np.int64))
        owner = np.broadcast_to(np.asarray(owner, dtype=np.int8), value.shape).copy()
        return cls(rules, value, owner)

    @classmethod
    def single(cls, rules: RuleOptions, cube: Cube, roller: str, match: Optional[MatchScore] = None
               ) -> "CubeSituation":
        """One position's situation: ``roller`` is the side to roll (and possible doubler)."""
        owner = OWNER_CENTRED if cube.owner is None else (OWNER_MOVER if cube.owner == roller else OWNER_OPPONENT)
        value = np.array([cube.value], dtype=np.int64)
        owner_array = np.array([owner], dtype=np.int8)
        if match is None or match.money:
            return cls(rules, value, owner_array)
        return cls(rules, value, owner_array, match.length, np.array([match.away(roller)]),
                   np.array([match.away(other(roller))]), np.array([match.post_crawford]),
                   np.array([match.crawford]))


def cube_equities(probabilities: np.ndarray, situation: CubeSituation,
                  cube_life: float = DEFAULT_CUBE_LIFE) -> CubeEquities:
    """The cube equities of ``B`` positions from their outcome probabilities (B, K), the side to roll's view."""
    win, lose, draw, points = outcome_split(probabilities, situation.rules)
    if situation.money:
        equities = janowski_money(win, lose, draw, points, situation.value, situation.owner, cube_life)
    else:
        met = variant_met(situation.rules)
        equities = match_cube_equities(win, lose, draw, points, situation.value, situation.owner, situation.away,
                                       situation.opponent_away, situation.crawford_done, met, cube_life,
                                       crawford_game=situation.crawford_game)
    if not situation.rules.cube:
        equities.may_double = np.zeros(len(situation), dtype=bool)
    return equities


class BotCubePolicy:
    """A bot's cube decisions as a :class:`tapa_ai.flow.CubePolicy`, for ``play_game``/``play_match``.

    The game flow asks one side at a time; this builds the one-position batch
    and :class:`CubeSituation` from the game (and match) state and asks the
    bot. ``bots`` maps a side to its bot (one bot for both sides also works).
    """

    def __init__(self, bots, rng: Optional[np.random.Generator] = None) -> None:
        self.bots = bots if isinstance(bots, dict) else {"X": bots, "O": bots}
        self.rng = rng or np.random.default_rng()

    def _ask(self, game, match, side: str, method: str) -> bool:
        from ..movegen.batch import PositionBatch

        score = None if match is None else match.match_score
        situation = CubeSituation.single(game.rules, Cube(game.cube_value, game.cube_owner), game.position.turn,
                                         score)
        batch = PositionBatch.from_positions([game.position])  # the doubler (side to roll) moves
        return bool(getattr(self.bots[side], method)(batch, situation, self.rng)[0])

    def offer_double(self, game, match) -> bool:
        return self._ask(game, match, game.position.turn, "offer_double")

    def accept_double(self, game, match) -> bool:
        return self._ask(game, match, game.side_to_act, "accept_double")
