"""The Tavli match (RULES.md section 9): a match to N points of games rotating Portes, Plakoto, Fevga, ...

A :class:`TavliMatch` is a :class:`~tapa_ai.flow.match.MatchState` whose
next game is of the next variant of :data:`TAVLI_ROTATION`: the game actions,
the scoring (each game's points under its own rule set: Portes' gammon and
backgammon 2, Plakoto's gammon and mother win 2, Fevga's gammon 2), the match
end and the game records are the match's. What Tavli adds:

- game ``n`` (from 1) is of variant ``TAVLI_ROTATION[(n - 1) % 3]``;
- the first game opens with an opening roll, the winner of each game opens
  the next (rolling both dice);
- a drawn game (both mothers pinned in Plakoto) scores nothing, the rotation
  moves on, and the next game opens with an opening roll;
- no cube (none of the three presets has one).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from ..rules.options import RuleOptions, variant_rules
from ..rules.position import SIDES, other
from ..rules.quoting import quoted
from ..rules.reference import Move
from .dice import DiceSource
from .errors import FlowError
from .game import GameState
from .match import GameRecord, MatchState

__all__ = ["TAVLI_ROTATION", "TavliContext", "TavliMatch", "tavli_rules", "tavli_variant"]

TAVLI_ROTATION = ("portes", "plakoto", "fevga")
"""The variants of a Tavli match's games, in turn."""


def tavli_variant(game_number: int) -> str:
    """The variant of game ``game_number`` (from 1) of a Tavli match."""
    if isinstance(game_number, bool) or not isinstance(game_number, int) or game_number < 1:
        raise FlowError(f"game number {game_number!r} must be an integer >= 1")
    return TAVLI_ROTATION[(game_number - 1) % len(TAVLI_ROTATION)]


def tavli_rules(game_number: int) -> RuleOptions:
    """The rule set of game ``game_number`` (from 1) of a Tavli match."""
    rules = variant_rules(tavli_variant(game_number))
    assert not rules.cube, f"the {rules.name} preset has a cube; Tavli has none"
    return rules


@dataclass(frozen=True)
class TavliMatch:
    """A Tavli match to ``length`` points; :attr:`match` holds the score, the current game and the records."""

    match: MatchState

    @classmethod
    def new(cls, length: int) -> "TavliMatch":
        """A new match to ``length`` >= 1 points, its first game (Portes) opening with an opening roll."""
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise FlowError(f"Tavli match length {length!r} must be an integer >= 1")
        return cls(MatchState.new(tavli_rules(1), length))

    # -- views ------------------------------------------------------------------------------------------
    @property
    def game(self) -> GameState:
        return self.match.game

    @property
    def length(self) -> int:
        return self.match.length

    @property
    def score(self) -> tuple[int, int]:
        """Points of (X, O)."""
        return self.match.score

    @property
    def game_number(self) -> int:
        return self.match.game_number

    @property
    def variant(self) -> str:
        """The current game's variant."""
        return tavli_variant(self.game_number)

    @property
    def winner(self) -> Optional[str]:
        return self.match.winner

    @property
    def is_over(self) -> bool:
        return self.match.is_over

    @property
    def results(self) -> tuple[tuple[str, GameRecord], ...]:
        """(variant, record) of each finished game, in order."""
        return tuple((tavli_variant(record.number), record) for record in self.match.results)

    # -- actions ----------------------------------------------------------------------------------------
    def roll(self, source: DiceSource, side: Optional[str] = None) -> "TavliMatch":
        return TavliMatch(self.match.roll(source, side))

    def rolled(self, dice: Sequence[int], side: Optional[str] = None) -> "TavliMatch":
        return TavliMatch(self.match.rolled(dice, side))

    def play(self, move: Move | str, side: Optional[str] = None) -> "TavliMatch":
        return TavliMatch(self.match.play(move, side))

    def start_next_game(self) -> "TavliMatch":
        """Begin the next game of the rotation once the current one is over: its winner opens it (rolling
        both dice); after a draw it opens with an opening roll."""
        following = self.match.start_next_game()  # the match's checks: the game is over, the match is not
        opener = self.game.winner  # None after a draw: an opening roll
        game = GameState.new(tavli_rules(following.game_number), opener=opener)
        return TavliMatch(replace(following, game=game))


@dataclass(frozen=True)
class TavliContext:
    """Where a position stands in a Tavli match: the match ``length``, the ``score`` (points of X, O) and the
    ``game`` being played (from 1; its variant is ``tavli_variant(game)``). What a bot needs to play by the
    score (the engine protocol's ``"tavli"`` key, docs/protocol.md)."""

    length: int
    score: tuple[int, int]
    game: int

    @property
    def variant(self) -> str:
        return tavli_variant(self.game)

    def away(self, side: str) -> tuple[int, int]:
        """(points ``side`` still needs, points the other side needs)."""
        index = SIDES.index(side)
        return self.length - self.score[index], self.length - self.score[SIDES.index(other(side))]

    @classmethod
    def of(cls, match: TavliMatch) -> "TavliContext":
        return cls(match.length, match.score, match.game_number)

    @classmethod
    def from_request(cls, data: Any, rules: Optional[RuleOptions] = None, where: str = "tavli") -> "TavliContext":
        """A Tavli match in play from ``{"length": 5, "score": {"X": 2, "O": 3}, "game": 4}``; ``rules``, the
        position's rule set, must be game ``game``'s variant. FlowError, one line, for anything else."""
        if not isinstance(data, dict):
            raise FlowError(f"{where}: must be an object like {{\"length\": 5, \"score\": {{\"X\": 0, \"O\": 0}}, "
                            f"\"game\": 1}}, got {type(data).__name__}")
        unknown = sorted(set(data) - {"length", "score", "game"})
        if unknown:
            raise FlowError(f"{where}: unknown key(s) {quoted(unknown)}; known: ['game', 'length', 'score']")

        def integer(value, name: str, low: int) -> int:
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise FlowError(f"{where}.{name}: must be an integer >= {low}, got {quoted(value)}")
            return value

        length = integer(data.get("length"), "length", 1)
        score_data = data.get("score", {"X": 0, "O": 0})
        if not isinstance(score_data, dict) or sorted(score_data) != ["O", "X"]:
            raise FlowError(f"{where}.score: must be an object {{\"X\": n, \"O\": n}}, got {quoted(score_data, 60)}")
        score = tuple(integer(score_data[side], f"score.{side}", 0) for side in SIDES)
        for side, value in zip(SIDES, score):
            if value >= length:
                raise FlowError(f"{where}.score.{side}: {value} has reached the match length {length}; the match "
                                f"is over (scores must be 0..{length - 1})")
        game = integer(data.get("game", 1), "game", 1)
        if rules is not None and rules.name != tavli_variant(game):
            raise FlowError(f"{where}.game: game {game} of a Tavli match is {tavli_variant(game)} (the rotation "
                            f"{', '.join(TAVLI_ROTATION)}), but the position is {rules.name}")
        return cls(length, score, game)  # type: ignore[arg-type]
