"""The Tavli match (docs/rules.md section 9): a match to N points of games rotating Portes, Plakoto, Fevga, ...

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

:attr:`TavliMatch.played` keeps the finished games themselves (with their
histories), so that a match can be saved and analysed whole
(:meth:`TavliMatch.to_dict`, :meth:`TavliMatch.from_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from ..rules.options import RuleOptions, variant_rules
from ..rules.position import SIDES, other
from ..quoting import quoted
from ..rules.reference import Move
from .dice import DiceSource
from .errors import FlowError
from .game import GameState, describe_result
from .match import GameRecord, MatchState
from .snapshots import SNAPSHOT_VERSION, SnapshotError, check_format, expect_object

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
    played: tuple[GameState, ...] = ()
    """The finished games before the current one, in order, with their histories (a match built at a game
    other than the first may leave them out: then only their records are known, in :attr:`match`)."""

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
    def rules(self) -> RuleOptions:
        """The current game's rule set."""
        return self.match.rules

    @property
    def next_variant(self) -> str:
        """The variant of the game after the current one."""
        return tavli_variant(self.game_number + 1)

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
    def with_match(self, match: MatchState) -> "TavliMatch":
        """This Tavli match with its :class:`MatchState` replaced (the same finished games)."""
        return replace(self, match=match)

    def roll(self, source: DiceSource, side: Optional[str] = None) -> "TavliMatch":
        return self.with_match(self.match.roll(source, side))

    def rolled(self, dice: Sequence[int], side: Optional[str] = None) -> "TavliMatch":
        return self.with_match(self.match.rolled(dice, side))

    def play(self, move: Move | str, side: Optional[str] = None) -> "TavliMatch":
        return self.with_match(self.match.play(move, side))

    def start_next_game(self) -> "TavliMatch":
        """Begin the next game of the rotation once the current one is over: its winner opens it (rolling
        both dice); after a draw it opens with an opening roll."""
        following = self.match.start_next_game()  # the match's checks: the game is over, the match is not
        opener = self.game.winner  # None after a draw: an opening roll
        game = GameState.new(tavli_rules(following.game_number), opener=opener)
        return TavliMatch(replace(following, game=game), self.played + (self.game,))

    # -- snapshot ---------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly snapshot: the length, the rotation, the finished games (each its variant and game
        snapshot with its history) and the match state with the current game; :meth:`from_dict` loads it."""
        return {"format": "tapa-ai/tavli", "version": SNAPSHOT_VERSION, "length": self.length,
                "rotation": list(TAVLI_ROTATION),
                "played": [{"number": number, "variant": tavli_variant(number), "game": game.to_dict()}
                           for number, game in enumerate(self.played, start=1)],
                "match": self.match.to_dict()}

    @classmethod
    def from_dict(cls, data: Any, where: str = "tavli") -> "TavliMatch":
        """A Tavli match from :meth:`to_dict` output, checked whole: every game of its variant in the rotation,
        each finished game's result the match's record of it, the score their sum, the opener of each game the
        winner of the one before (an opening roll for the first and after a draw). :class:`SnapshotError`, one
        line naming the place, for anything else."""
        expect_object(data, where, {"format", "version", "length", "played", "match"}, {"rotation"})
        check_format(data, where, "tapa-ai/tavli")
        length = data["length"]
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise SnapshotError(f"{where}.length: a Tavli match length must be an integer >= 1, got {length!r}")
        if "rotation" in data and data["rotation"] != list(TAVLI_ROTATION):
            raise SnapshotError(f"{where}.rotation: must be {list(TAVLI_ROTATION)}, got {quoted(data['rotation'], 60)}")
        match = MatchState.from_dict(data["match"], f"{where}.match")
        if match.length != length:
            raise SnapshotError(f"{where}.length: {length} disagrees with {where}.match.length {match.length}")
        played_data = data["played"]
        if not isinstance(played_data, list):
            raise SnapshotError(f"{where}.played: must be a list of the finished games")
        if len(played_data) != match.game_number - 1:
            raise SnapshotError(f"{where}.played: {len(played_data)} finished game(s), but the current game is game "
                                f"{match.game_number}: want {match.game_number - 1}")
        played = []
        for number, item in enumerate(played_data, start=1):
            here = f"{where}.played[{number - 1}]"
            expect_object(item, here, {"game"}, {"number", "variant"})
            if item.get("number", number) != number:
                raise SnapshotError(f"{here}.number: must be {number}, got {quoted(item.get('number'), 40)}")
            if item.get("variant", tavli_variant(number)) != tavli_variant(number):
                raise SnapshotError(f"{here}.variant: game {number} of a Tavli match is {tavli_variant(number)}, "
                                    f"got {quoted(item.get('variant'), 40)}")
            game = GameState.from_dict(item["game"], f"{here}.game")
            if not game.is_over:
                raise SnapshotError(f"{here}.game: game {number} is not over, but game {match.game_number} is "
                                    "being played")
            played.append(game)
        games = played + [match.game]
        for number, game in enumerate(games, start=1):
            here = f"{where}.played[{number - 1}].game" if number < len(games) else f"{where}.match.game"
            if game.rules != tavli_rules(number):
                raise SnapshotError(f"{here}: game {number} of a Tavli match is {tavli_variant(number)} (the "
                                    f"rotation {', '.join(TAVLI_ROTATION)}), got {game.rules.name}")
            before = games[number - 2].winner if number > 1 else None
            first = game.history[0] if game.history else None
            if before is None and not (first is None and game.phase == "opening" or
                                       first is not None and first.action == "opening"):
                raise SnapshotError(f"{here}.history: game {number} must open with an opening roll "
                                    f"({'the first game' if number == 1 else 'after a draw'})")
            if before is not None and (first is None and (game.phase != "roll" or game.position.turn != before)
                                       or first is not None and first.side != before):
                raise SnapshotError(f"{here}.history: game {number} must be opened by {before}, the winner of game "
                                    f"{number - 1}")
        finished = len(match.results)
        expected = match.game_number if match.game.is_over else match.game_number - 1
        if finished != expected:
            raise SnapshotError(f"{where}.match.results: {finished} game record(s) for {expected} finished game(s)")
        score = [0, 0]
        for number, (record, game) in enumerate(zip(match.results, games), start=1):
            if (record.number, record.winner, record.kind, record.points) != (number, game.winner, game.result.kind,
                                                                              game.points_won):
                raise SnapshotError(f"{where}.match.results[{number - 1}]: disagrees with game {number}'s result "
                                    f"({describe_result(game)}, {game.points_won} point(s))")
            if game.winner is not None:
                score[SIDES.index(game.winner)] += record.points
        if tuple(score) != match.score:
            raise SnapshotError(f"{where}.match.score: X {match.score[0]}, O {match.score[1]} is not the sum of the "
                                f"games' points (X {score[0]}, O {score[1]})")
        return cls(match, tuple(played))


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
