"""A match: :class:`MatchState` (score, Crawford, the current game) and :class:`GameRecord` per finished game."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Sequence

from ..rules.cube import CUBE_VALUES, MatchScore, match_winner
from ..rules.options import RuleOptions, RulesError, variant_rules
from ..rules.position import SIDES, GameResult
from ..rules.reference import Move
from .dice import DiceSource
from .errors import FlowError
from .game import GameState, describe_result
from .snapshots import SNAPSHOT_VERSION, SnapshotError, check_format, expect_object, load_bool

__all__ = ["GameRecord", "MatchState"]


@dataclass(frozen=True)
class GameRecord:
    """The outcome of one finished game of a match."""

    number: int
    """Game number, from 1."""
    winner: Optional[str]
    """None for a draw."""
    kind: str
    """``single``, ``gammon``, ``backgammon``, ``mother`` or ``draw``."""
    cube: int
    """Cube value at the end."""
    points: int
    """Points scored: result points times the cube (0 for a draw)."""
    dropped: bool = False
    """Ended by a passed double."""
    crawford: bool = False
    """It was the Crawford game."""

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "winner": self.winner, "kind": self.kind, "cube": self.cube,
                "points": self.points, "dropped": self.dropped, "crawford": self.crawford}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> "GameRecord":
        expect_object(data, where, {"number", "winner", "kind", "cube", "points"}, {"dropped", "crawford"})
        number, winner, kind, cube, points = (data[k] for k in ("number", "winner", "kind", "cube", "points"))
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise SnapshotError(f"{where}.number: must be an integer >= 1, got {number!r}")
        if isinstance(cube, bool) or cube not in CUBE_VALUES:
            raise SnapshotError(f"{where}.cube: must be one of {CUBE_VALUES}, got {cube!r}")
        if isinstance(points, bool) or not isinstance(points, int) or points < 0:
            raise SnapshotError(f"{where}.points: must be an integer >= 0, got {points!r}")
        try:
            GameResult(winner, kind, 0 if winner is None else 1)
        except RulesError as error:
            raise SnapshotError(f"{where}: {error}") from None
        dropped = load_bool(data.get("dropped", False), f"{where}.dropped")
        crawford = load_bool(data.get("crawford", False), f"{where}.crawford")
        return cls(number, winner, kind, cube, points, dropped, crawford)


@dataclass(frozen=True)
class MatchState:
    """A match to ``length`` points (0: money play, unlimited), with the current game.

    The game actions (:meth:`roll`, :meth:`rolled`, :meth:`double`,
    :meth:`take`, :meth:`drop`, :meth:`play`) act on the current game and
    score it when it ends; :meth:`start_next_game` then begins the next one.
    """

    game: GameState
    """The current game (possibly finished, until :meth:`start_next_game`)."""
    length: int = 0
    """Points to win the match; 0 is money play (no end, no Crawford)."""
    score: tuple[int, int] = (0, 0)
    """Points of (X, O), including the current game once it is over."""
    game_number: int = 1
    """Number of the current game, from 1."""
    post_crawford: bool = False
    """The Crawford game has been played: doubling is allowed again."""
    results: tuple[GameRecord, ...] = ()
    """The finished games, in order (the current one included once over)."""

    def __post_init__(self) -> None:
        problem = self._inconsistency()
        if problem:
            raise FlowError(f"inconsistent match state: {problem}")

    def _inconsistency(self) -> Optional[str]:
        if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length < 0:
            return f"length {self.length!r} must be an integer >= 0 (0 for money play)"
        if len(self.score) != 2 or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.score):
            return f"score {self.score!r} must be two integers >= 0"
        if isinstance(self.game_number, bool) or not isinstance(self.game_number, int) or self.game_number < 1:
            return f"game number {self.game_number!r} must be an integer >= 1"
        if self.length and sum(s >= self.length for s in self.score) > 1:
            return f"both sides have reached the match length {self.length}"
        if self.length and self.winner is not None and not self.game.is_over:
            return "the match is over but its current game is still being played"
        if self.game.crawford and self.post_crawford:
            return "a game cannot be both the Crawford game and post-Crawford"
        if (self.game.crawford or self.post_crawford) and not (self.rules.crawford and self.length):
            return "Crawford flags need the option crawford and a match length"
        return None

    @classmethod
    def new(cls, rules: RuleOptions | str, length: Optional[int] = None) -> "MatchState":
        """A new match (``length`` 0 or None: money play), its first game starting with an opening roll."""
        if isinstance(rules, str):
            rules = variant_rules(rules)
        length = 0 if length is None else length
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise FlowError(f"match length {length!r} must be an integer >= 0 (0 or None for money play)")
        return cls(GameState.new(rules), length)

    # -- views ----------------------------------------------------------------
    @property
    def rules(self) -> RuleOptions:
        return self.game.rules

    @property
    def winner(self) -> Optional[str]:
        """The side that has reached the match length, or None (always None in money play)."""
        return match_winner(self.length, self.score)

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def crawford_game(self) -> bool:
        """The current game is the Crawford game (no doubling)."""
        return self.game.crawford

    @property
    def match_score(self) -> Optional[MatchScore]:
        """The score as the cube's :class:`~tapa_ai.rules.cube.MatchScore`; None in money play."""
        if not self.length:
            return None
        return MatchScore(self.length, self.score, self.game.crawford, self.post_crawford)

    def score_of(self, side: str) -> int:
        return self.score[SIDES.index(side)]

    # -- actions ----------------------------------------------------------------
    def roll(self, source: DiceSource, side: Optional[str] = None) -> "MatchState":
        return self._act("roll", lambda game: game.roll(source, side))

    def rolled(self, dice: Sequence[int], side: Optional[str] = None) -> "MatchState":
        return self._act("roll", lambda game: game.rolled(dice, side))

    def double(self, side: Optional[str] = None) -> "MatchState":
        return self._act("double", lambda game: game.double(side))

    def take(self, side: Optional[str] = None) -> "MatchState":
        return self._act("take", lambda game: game.take(side))

    def drop(self, side: Optional[str] = None) -> "MatchState":
        return self._act("drop", lambda game: game.drop(side))

    def play(self, move: Move | str, side: Optional[str] = None) -> "MatchState":
        return self._act("move", lambda game: game.play(move, side))

    def start_next_game(self) -> "MatchState":
        """Begin the next game once the current one is over.

        The opener is decided by an opening roll, or (``next_game_opener =
        winner``) is the previous winner, rolling both dice; a draw is followed
        by an opening roll. The game right after a side first reaches
        ``length - 1`` is the Crawford game (option ``crawford``).
        """
        self._require_match_not_over("start the next game")
        if not self.game.is_over:
            raise FlowError(f"cannot start the next game: game {self.game_number} is still being played")
        rules = self.rules
        winner = self.game.winner
        opener = winner if rules.next_game_opener == "winner" else None
        post_crawford = self.post_crawford or self.game.crawford
        crawford = (
            rules.crawford
            and self.length >= 2
            and not post_crawford
            and winner is not None
            and self.score_of(winner) == self.length - 1
        )
        game = GameState.new(rules, opener=opener, crawford=crawford)
        return replace(self, game=game, game_number=self.game_number + 1, post_crawford=post_crawford)

    def _require_match_not_over(self, action: str) -> None:
        if self.is_over:
            x, o = self.score
            raise FlowError(f"cannot {action}: the match is over, {self.winner} won {x}-{o} (X-O)")

    def _act(self, action: str, apply: Callable[[GameState], GameState]) -> "MatchState":
        self._require_match_not_over(action)
        if self.game.is_over:
            raise FlowError(
                f"cannot {action}: game {self.game_number} is over ({describe_result(self.game)}); "
                "call start_next_game()"
            )
        game = apply(self.game)
        if not game.is_over:
            return replace(self, game=game)
        score = list(self.score)
        if game.winner is not None:
            score[SIDES.index(game.winner)] += game.points_won
        record = GameRecord(self.game_number, game.winner, game.result.kind, game.cube_value, game.points_won,
                            game.dropped, game.crawford)
        return replace(self, game=game, score=(score[0], score[1]), results=self.results + (record,))

    # -- snapshot -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly snapshot; :meth:`from_dict` loads it."""
        return {
            "format": "tapa-ai/match",
            "version": SNAPSHOT_VERSION,
            "length": self.length,
            "score": {"X": self.score[0], "O": self.score[1]},
            "game_number": self.game_number,
            "crawford_game": self.game.crawford,
            "post_crawford": self.post_crawford,
            "results": [record.to_dict() for record in self.results],
            "game": self.game.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "match") -> "MatchState":
        """A match from :meth:`to_dict` output; raises :class:`SnapshotError` saying what is wrong."""
        required = {"format", "version", "length", "score", "game_number", "game"}
        optional = {"crawford_game", "post_crawford", "results"}
        expect_object(data, where, required, optional)
        check_format(data, where, "tapa-ai/match")
        length = data["length"]
        if length is None:
            length = 0
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise SnapshotError(f"{where}.length: must be an integer >= 0 (0 for money play), got {length!r}")
        score_data = data["score"]
        expect_object(score_data, f"{where}.score", set(SIDES), set())
        for side in SIDES:
            value = score_data[side]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SnapshotError(f"{where}.score.{side}: must be an integer >= 0, got {value!r}")
        game_number = data["game_number"]
        if isinstance(game_number, bool) or not isinstance(game_number, int) or game_number < 1:
            raise SnapshotError(f"{where}.game_number: must be an integer >= 1, got {game_number!r}")
        game = GameState.from_dict(data["game"], f"{where}.game")
        crawford_game = load_bool(data.get("crawford_game", False), f"{where}.crawford_game")
        if crawford_game != game.crawford:
            raise SnapshotError(f"{where}.crawford_game: {crawford_game} disagrees with {where}.game.crawford")
        post_crawford = load_bool(data.get("post_crawford", False), f"{where}.post_crawford")
        results_data = data.get("results", [])
        if not isinstance(results_data, list):
            raise SnapshotError(f"{where}.results: must be a list of game records")
        results = tuple(GameRecord.from_dict(item, f"{where}.results[{i}]") for i, item in enumerate(results_data))
        try:
            return cls(game, length, (score_data["X"], score_data["O"]), game_number, post_crawford, results)
        except FlowError as error:
            raise SnapshotError(f"{where}: {error}") from None
