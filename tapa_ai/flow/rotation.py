"""A rotation's match (docs/rules.md 9 and 10.4): a match to N points whose games rotate variants, as Tavli rotates
Portes, Plakoto, Fevga and Tabla backgammon, Gul Bara, Tapa.

A :class:`RotationMatch` is a :class:`~tapa_ai.flow.match.MatchState` whose
next game is of the next game of its :class:`~tapa_ai.rules.rotations.Rotation`:
the game actions, the scoring (each game's points under its own rule set), the
match end and the game records are the match's. What a rotation adds:

- game ``n`` (from 1) is ``rotation.rules(n)``;
- the first game opens with an opening roll, the winner of each game opens
  the next (rolling both dice);
- a drawn game (both mothers pinned in Plakoto or Tapa) scores nothing, the
  rotation moves on, and the next game opens with an opening roll;
- no cube (no game of a rotation has one).

:attr:`RotationMatch.played` keeps the finished games themselves (with their
histories), so that a match can be saved and analysed whole
(:meth:`RotationMatch.to_dict`, :meth:`RotationMatch.from_dict`; a Tavli
match saved before rotations were data, format ``tapa-ai/tavli``, reads as
the Tavli rotation).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from ..rules.options import RuleOptions
from ..rules.position import SIDES, other
from ..rules.rotations import ROTATIONS, Rotation, RotationError, rotation_from_data
from ..quoting import quoted
from ..rules.reference import Move
from .dice import DiceSource
from .errors import FlowError
from .game import GameState, describe_result
from .match import GameRecord, MatchState
from .snapshots import SNAPSHOT_VERSION, SnapshotError, check_format, expect_object

__all__ = ["MATCH_FORMAT", "RotationContext", "RotationMatch"]

MATCH_FORMAT = "tapa-ai/rotation"
"""The snapshot format of :meth:`RotationMatch.to_dict` (``tapa-ai/tavli`` before rotations were data: read as
the Tavli rotation)."""
_OLD_FORMAT = "tapa-ai/tavli"


def _rotation(data: Any, where: str) -> Rotation:
    try:
        return rotation_from_data(data, where)
    except RotationError as error:
        raise SnapshotError(str(error)) from None


@dataclass(frozen=True)
class RotationMatch:
    """A rotation's match to ``length`` points; :attr:`match` holds the score, the current game and the records."""

    match: MatchState
    rotation: Rotation
    """The games, in turn."""
    played: tuple[GameState, ...] = ()
    """The finished games before the current one, in order, with their histories (a match built at a game
    other than the first may leave them out: then only their records are known, in :attr:`match`)."""

    @classmethod
    def new(cls, length: int, rotation: Rotation | str = "tavli") -> "RotationMatch":
        """A new match to ``length`` >= 1 points of ``rotation`` (or a preset's name), its first game opening with
        an opening roll."""
        if isinstance(rotation, str):
            try:
                rotation = ROTATIONS[rotation]
            except KeyError:
                raise FlowError(f"unknown rotation {rotation!r}; presets: {sorted(ROTATIONS)}") from None
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise FlowError(f"{rotation.name} match length {length!r} must be an integer >= 1")
        return cls(MatchState.new(rotation.rules(1), length), rotation)

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
        return self.rotation.variant(self.game_number)

    @property
    def rules(self) -> RuleOptions:
        """The current game's rule set."""
        return self.match.rules

    @property
    def next_variant(self) -> str:
        """The variant of the game after the current one."""
        return self.rotation.variant(self.game_number + 1)

    @property
    def winner(self) -> Optional[str]:
        return self.match.winner

    @property
    def is_over(self) -> bool:
        return self.match.is_over

    @property
    def results(self) -> tuple[tuple[str, GameRecord], ...]:
        """(variant, record) of each finished game, in order."""
        return tuple((self.rotation.variant(record.number), record) for record in self.match.results)

    # -- actions ----------------------------------------------------------------------------------------
    def with_match(self, match: MatchState) -> "RotationMatch":
        """This match with its :class:`MatchState` replaced (the same finished games)."""
        return replace(self, match=match)

    def roll(self, source: DiceSource, side: Optional[str] = None) -> "RotationMatch":
        return self.with_match(self.match.roll(source, side))

    def rolled(self, dice: Sequence[int], side: Optional[str] = None) -> "RotationMatch":
        return self.with_match(self.match.rolled(dice, side))

    def play(self, move: Move | str, side: Optional[str] = None) -> "RotationMatch":
        return self.with_match(self.match.play(move, side))

    def start_next_game(self) -> "RotationMatch":
        """Begin the next game of the rotation once the current one is over: its winner opens it (rolling
        both dice); after a draw it opens with an opening roll."""
        following = self.match.start_next_game()  # the match's checks: the game is over, the match is not
        opener = self.game.winner  # None after a draw: an opening roll
        game = GameState.new(self.rotation.rules(following.game_number), opener=opener)
        return RotationMatch(replace(following, game=game), self.rotation, self.played + (self.game,))

    # -- snapshot ---------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly snapshot: the length, the rotation (:meth:`~tapa_ai.rules.rotations.Rotation.to_data`),
        the finished games (each its variant and game snapshot with its history) and the match state with the
        current game; :meth:`from_dict` loads it."""
        return {"format": MATCH_FORMAT, "version": SNAPSHOT_VERSION, "length": self.length,
                "rotation": self.rotation.to_data(),
                "played": [{"number": number, "variant": self.rotation.variant(number), "game": game.to_dict()}
                           for number, game in enumerate(self.played, start=1)],
                "match": self.match.to_dict()}

    @classmethod
    def from_dict(cls, data: Any, where: str = "rotation_match") -> "RotationMatch":
        """A rotation's match from :meth:`to_dict` output (or a ``tapa-ai/tavli`` snapshot, the Tavli rotation),
        checked whole: every game of its variant in the rotation,
        each finished game's result the match's record of it, the score their sum, the opener of each game the
        winner of the one before (an opening roll for the first and after a draw). :class:`SnapshotError`, one
        line naming the place, for anything else."""
        expect_object(data, where, {"format", "version", "length", "played", "match"}, {"rotation"})
        if isinstance(data.get("format"), str) and data["format"] == _OLD_FORMAT:
            check_format(data, where, _OLD_FORMAT)
            tavli = ROTATIONS["tavli"]
            if "rotation" in data and data["rotation"] != list(tavli.variants):
                raise SnapshotError(f"{where}.rotation: a {_OLD_FORMAT} snapshot is of {list(tavli.variants)}, got "
                                    f"{quoted(data['rotation'], 60)}")
            rotation = tavli
        else:
            check_format(data, where, MATCH_FORMAT)
            if "rotation" not in data:
                raise SnapshotError(f"{where}.rotation: missing (a preset's name, {sorted(ROTATIONS)}, or the list of "
                                    "games)")
            rotation = _rotation(data["rotation"], f"{where}.rotation")
        length = data["length"]
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise SnapshotError(f"{where}.length: a match length must be an integer >= 1, got {length!r}")
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
            if item.get("variant", rotation.variant(number)) != rotation.variant(number):
                raise SnapshotError(f"{here}.variant: game {number} of the {rotation.name} match is "
                                    f"{rotation.variant(number)}, got {quoted(item.get('variant'), 40)}")
            game = GameState.from_dict(item["game"], f"{here}.game")
            if not game.is_over:
                raise SnapshotError(f"{here}.game: game {number} is not over, but game {match.game_number} is "
                                    "being played")
            played.append(game)
        games = played + [match.game]
        for number, game in enumerate(games, start=1):
            here = f"{where}.played[{number - 1}].game" if number < len(games) else f"{where}.match.game"
            if game.rules != rotation.rules(number):
                got = game.rules.name if game.rules.name != rotation.variant(number) else \
                    f"{game.rules.name} with other options ({game.rules.changes_from(rotation.rules(number))})"
                raise SnapshotError(f"{here}: game {number} of the {rotation.name} match is {rotation.variant(number)} "
                                    f"(the rotation {', '.join(rotation.variants)}), got {got}")
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
        return cls(match, rotation, tuple(played))


@dataclass(frozen=True)
class RotationContext:
    """Where a position stands in a rotation's match: the match ``length``, the ``score`` (points of X, O), the
    ``game`` being played (from 1; its variant is ``rotation.variant(game)``) and the ``rotation``. What a bot
    needs to play by the score (the engine protocol's ``"rotation_match"`` key; ``"tavli"`` for the Tavli rotation,
    docs/protocol.md)."""

    length: int
    score: tuple[int, int]
    game: int
    rotation: Rotation

    @property
    def variant(self) -> str:
        return self.rotation.variant(self.game)

    def away(self, side: str) -> tuple[int, int]:
        """(points ``side`` still needs, points the other side needs)."""
        index = SIDES.index(side)
        return self.length - self.score[index], self.length - self.score[SIDES.index(other(side))]

    @classmethod
    def of(cls, match: RotationMatch) -> "RotationContext":
        return cls(match.length, match.score, match.game_number, match.rotation)

    @classmethod
    def from_request(cls, data: Any, rules: Optional[RuleOptions] = None, where: str = "rotation_match",
                     rotation: Optional[Rotation] = None) -> "RotationContext":
        """A rotation's match in play from ``{"rotation": "tabla", "length": 5, "score": {"X": 2, "O": 3},
        "game": 4}`` (``rotation``: a preset's name or the list of games; given by ``rotation`` instead, the key
        is not allowed: the ``"tavli"`` key's form); ``rules``, the position's rule set, must be game ``game``'s.
        FlowError, one line, for anything else."""
        keys = ["game", "length", "score"] + ([] if rotation is not None else ["rotation"])
        example = ("{\"length\": 5, \"score\": {\"X\": 0, \"O\": 0}, \"game\": 1}" if rotation is not None else
                   "{\"rotation\": \"tabla\", \"length\": 5, \"score\": {\"X\": 0, \"O\": 0}, \"game\": 1}")
        if not isinstance(data, dict):
            raise FlowError(f"{where}: must be an object like {example}, got {type(data).__name__}")
        unknown = sorted(set(data) - set(keys))
        if unknown:
            raise FlowError(f"{where}: unknown key(s) {quoted(unknown)}; known: {sorted(keys)}")
        if rotation is None:
            if "rotation" not in data:
                raise FlowError(f"{where}.rotation: missing; a preset's name ({', '.join(sorted(ROTATIONS))}) or the "
                                "list of games")
            try:
                rotation = rotation_from_data(data["rotation"], f"{where}.rotation")
            except RotationError as error:
                raise FlowError(str(error)) from None

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
        if rules is not None and rules != rotation.rules(game):
            what = rules.name if rules.name != rotation.variant(game) else f"{rules.name} with other options"
            raise FlowError(f"{where}.game: game {game} of the {rotation.name} match is {rotation.variant(game)} (the "
                            f"rotation {', '.join(rotation.variants)}), but the position is {what}")
        return cls(length, score, game, rotation)  # type: ignore[arg-type]
