"""The one bot interface: choose an afterstate for each position of a batch.

Every bot, from ``random`` to a network searching 2 plies, answers the same
question, vectorized: given :class:`~tapa_ai.movegen.generate.Afterstates`
(all legal whole-turn moves of ``B`` positions, rows grouped by
``offsets``), return the chosen row of each position. The arena, self-play,
the engine protocol and ``tapa-ai play`` all call :meth:`Bot.choose`;
:meth:`Bot.choose_position` is the one-position convenience on top of it.

Bots that rank moves by a score per afterstate (``runner``, ``heuristic``,
``pubeval``, nets) subclass :class:`ScoringBot` and implement
:meth:`ScoringBot.scores` only.

Checker play in a match by the score is one more (:meth:`Bot.choose_at_score`): given what
each outcome class is worth at the score of each position (a rotation's match, Tavli or Tabla,
:class:`tapa_ai.cube.rotation_met.RotationScore`), a bot with an evaluator plays the
move of the highest match-winning chance; the others choose as they always do.

Cube decisions are two more questions, vectorized the same way
(:mod:`tapa_ai.cube.decisions`): :meth:`Bot.offer_double` and
:meth:`Bot.accept_double`. Their defaults are the **passive cube** (never
double, always take), kept by every bot without an evaluator; network bots
answer from their evaluation (Janowski's cubeful equity in money play, match
equity tables in matches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from ..errors import TapaError
from ..movegen.batch import PositionBatch
from ..movegen.choice import segment_argmax
from ..movegen.generate import Afterstates, generate
from ..rules.options import RuleOptions
from ..rules.position import Position

if TYPE_CHECKING:  # pragma: no cover
    from ..cube.decisions import CubeSituation


class BotError(TapaError, ValueError):
    """A bot that cannot be built (bad spec, missing file or package) or cannot play these rules."""


class Bot:
    """Chooses one afterstate per position. Subclasses set :attr:`name` and implement :meth:`choose`."""

    name: str = "bot"
    """The bot spec string that builds this bot (shown in reports)."""
    variants: Optional[tuple[str, ...]] = None
    """Rule-set names this bot can play (None = any rule set)."""

    def check_rules(self, rules: RuleOptions) -> None:
        """Raise :class:`BotError` if this bot cannot play ``rules``."""
        if self.variants is not None and rules.name not in self.variants:
            raise BotError(f"bot {self.name!r} plays only {', '.join(self.variants)}, not {rules.name!r}")

    def playing(self, rules: RuleOptions) -> "Bot":
        """This bot set to play ``rules``: itself, for the bots that play the rules of the positions they are given;
        a network bot playing another rule set of its board game is a copy that values with that rule set's
        points (:meth:`tapa_ai.bots.search.NetBot.playing`). :meth:`check_rules` still says whether it can."""
        return self

    def choose(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        """(B,) int64: for each source position, the row of ``afterstates`` to play."""
        raise NotImplementedError

    def choose_at_score(self, afterstates: Afterstates, rng: np.random.Generator, score) -> np.ndarray:
        """(B,) int64 rows chosen in a match at ``score``: an object with ``class_values(points) -> (B, K)``,
        what each outcome class is worth to each position's mover (match-winning chances; ``points`` the
        classes' points, e.g. :class:`tapa_ai.cube.rotation_met.RotationScore`). Default: :meth:`choose` (a bot
        without outcome classes plays as in money play)."""
        return self.choose(afterstates, rng)

    def __call__(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        """A bot is also a plain policy function (see :data:`tapa_ai.arena.duels.Policy`)."""
        return self.choose(afterstates, rng)

    def offer_double(self, positions: PositionBatch, situation: "CubeSituation",
                     rng: np.random.Generator) -> np.ndarray:
        """(B,) bool: should the side to roll of each position double now? Asked only where it may.

        ``positions`` are seen from the side to roll (before its roll);
        ``situation`` holds the cube and score of each. Default: never.
        """
        return np.zeros(len(positions), dtype=bool)

    def accept_double(self, positions: PositionBatch, situation: "CubeSituation",
                      rng: np.random.Generator) -> np.ndarray:
        """(B,) bool: take the double on offer? ``positions`` and ``situation`` are the doubler's view, cube before
        the double. Default: always take."""
        return np.ones(len(positions), dtype=bool)

    def choose_position(self, position: Position, dice: tuple[int, int],
                        rng: Optional[np.random.Generator] = None, score=None) -> Position:
        """The position after this bot's move (the side that moved still ``turn``; see ``Move.position``);
        ``score``: the match score of the position to choose at (:meth:`choose_at_score`), None: as in money
        play (:meth:`choose`)."""
        afterstates = one_position_afterstates(position, dice)
        rng = rng or np.random.default_rng()
        rows = self.choose(afterstates, rng) if score is None else self.choose_at_score(afterstates, rng, score)
        return afterstates.position(int(rows[0]))

    def close(self) -> None:
        """Release resources (processes, files); the default has none."""

    def __repr__(self) -> str:
        return f"<bot {self.name}>"


def one_position_afterstates(position: Position, dice: tuple[int, int]) -> Afterstates:
    """The legal afterstates of one position, by the fast generator."""
    return generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))


class ScoringBot(Bot):
    """A bot that plays the afterstate with the highest score for the side that moved (ties at random)."""

    def scores(self, afterstates: Afterstates) -> np.ndarray:
        """(N,) float64: how good each afterstate is for the side that moved; higher is better."""
        raise NotImplementedError

    def choose(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        return segment_argmax(self.scores(afterstates), afterstates.offsets, rng)
