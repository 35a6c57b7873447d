"""What an analysis holds: each move's and cube decision's rating, the totals per player, the games and the
whole :class:`Analysis` with its JSON form and report (``tapa-ai analyse``; computed by
:mod:`tapa_ai.analysis.analyse`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..notation.json_position import position_to_json, result_to_json
from ..rules.position import Position
from .records import Record, RecordedGame

DEFAULT_ERROR_MP = 20.0
"""A move losing more than this many millipoints is an error (``?``)."""
DEFAULT_BLUNDER_MP = 80.0
"""A move losing more than this many millipoints is a blunder (``??``)."""
ANALYSIS_FORMAT = "tapa-ai/analysis"
ANALYSIS_VERSION = 1


@dataclass(frozen=True)
class CubeRating:
    """One cube decision rated: what was done, the bot's choice, the equities and the normalized error."""

    action: str
    """What was done: ``double``, ``no_double`` (the doubler's decision), ``take`` or ``drop`` (the receiver's)."""
    best: str
    """The bot's choice of the same two (a doubler's: ``double`` or ``no_double``)."""
    no_double: float
    double_take: float
    double_pass: float
    """The doubler's equities (``units``) of the three outcomes."""
    units: str
    """``points`` (money, the cube included) or ``mwc`` (match-winning chance)."""
    error: float
    """The equity lost against the bot's choice, normalized to a cube of 1 (points; >= 0)."""
    mark: str = ""
    cube: int = 1
    """The cube's value before the decision (money equities are in points with it)."""
    chances: tuple[float, ...] = ()
    """The doubler's cubeless chances before the roll (as :attr:`Candidate.chances`)."""
    cubeless: float = 0.0
    """The doubler's cubeless equity before the roll, in points for a cube of 1."""

    @property
    def error_mp(self) -> float:
        return 1000.0 * self.error

    def to_dict(self) -> dict[str, Any]:
        from ..rules.outcomes import CUMULATIVE_NAMES

        return {"action": self.action, "best": self.best, "error_mp": self.error_mp, "mark": self.mark,
                "equities": {"no_double": self.no_double, "double_take": self.double_take,
                             "double_pass": self.double_pass}, "units": self.units, "cube_value": self.cube,
                "chances": dict(zip(CUMULATIVE_NAMES, self.chances)), "cubeless_equity": self.cubeless}


@dataclass(frozen=True)
class Candidate:
    """One of a rated move's candidates: its text, its value for the mover and its chances."""

    move: str
    equity: float
    """As :attr:`MoveRating.equity` (the same units)."""
    chances: tuple[float, ...]
    """``win, win_gammon, win_backgammon, lose_gammon, lose_backgammon, draw`` (each "or more", the top class
    a backgammon or mother win: :func:`tapa_ai.rules.outcomes.cumulative_probabilities`), cubeless."""

    def to_dict(self) -> dict[str, Any]:
        from ..rules.outcomes import CUMULATIVE_NAMES

        return {"move": self.move, "equity": self.equity, "chances": dict(zip(CUMULATIVE_NAMES, self.chances))}


CANDIDATES_KEPT = 5
"""A rated move keeps its bot's best moves up to this many (the move played as well, where it is not among
them): the list GNU Backgammon shows, written to SGF as its ``A[...]`` property."""


@dataclass(frozen=True)
class MoveRating:
    """One move rated: what was played, the bot's best, the error and the roll's luck."""

    game: int
    index: int
    side: str
    player: str
    dice: tuple[int, int]
    move: str
    """The move played (``""``: no legal move)."""
    best: str
    """The bot's best move (the move played when it is as good)."""
    equity: float
    """The played move's cubeless equity for the mover, at the bot's depth."""
    best_equity: float
    legal: int
    """Legal moves (distinct resulting positions); 1: forced, not rated."""
    luck: float
    """The roll's luck for the mover, in points."""
    position: Position
    """The position before the move (its side to move is the mover)."""
    opening: bool = False
    mark: str = ""
    """``""``, ``error`` or ``blunder``."""
    cube: Optional[CubeRating] = None
    """The decision not to double before this roll, where the mover could have (None: it could not)."""
    units: str = "points"
    """``points``: :attr:`equity`, :attr:`best_equity` and :attr:`luck` are cubeless equities; ``mwc``
    (a rotation's match): they are match-winning chances at the game's score."""
    scale: float = 1.0
    """What one point is worth in :attr:`units` here (``mwc``: half the spread between winning and losing a
    single game now): the mark compares ``error / scale`` with the thresholds."""
    candidates: tuple[Candidate, ...] = ()
    """The bot's best moves, best first (:data:`CANDIDATES_KEPT`), and the move played where it is not among
    them (last); empty for a forced move."""

    action = "move"

    @property
    def error(self) -> float:
        """Points lost against the best move (>= 0)."""
        return max(0.0, self.best_equity - self.equity)

    @property
    def error_mp(self) -> float:
        return 1000.0 * self.error

    @property
    def forced(self) -> bool:
        return self.legal <= 1

    @property
    def normalized_error_mp(self) -> float:
        """The error in equivalent millipoints (``error / scale``), which the mark is set by."""
        return self.error_mp / self.scale

    def to_dict(self, positions: bool = True) -> dict[str, Any]:
        data = {"index": self.index, "action": "move", "side": self.side, "player": self.player,
                "dice": list(self.dice), "move": self.move, "best": self.best}
        if self.units == "mwc":
            data.update({"units": "mwc", "match_winning_chance": self.equity,
                         "best_match_winning_chance": self.best_equity, "error_mwc": self.error,
                         "error_normalized_mp": self.normalized_error_mp, "luck_mwc": self.luck})
        else:
            data.update({"equity": self.equity, "best_equity": self.best_equity, "error_mp": self.error_mp,
                         "luck": self.luck})
        data.update({"legal_moves": self.legal, "forced": self.forced, "opening": self.opening, "mark": self.mark,
                     "cube": None if self.cube is None else self.cube.to_dict()})
        if self.candidates:
            data["candidates"] = [candidate.to_dict() for candidate in self.candidates]
        if positions:
            data["position"] = position_to_json(self.position)
        return data


@dataclass(frozen=True)
class CubeAction:
    """A double, take or pass in its place, and its rating."""

    game: int
    index: int
    side: str
    player: str
    action: str
    cube: int
    """The cube's value before the action."""
    position: Position
    rating: Optional[CubeRating] = None

    def to_dict(self, positions: bool = True) -> dict[str, Any]:
        data = {"index": self.index, "action": self.action, "side": self.side, "player": self.player,
                "cube": self.cube, "rated": self.rating is not None}
        if self.rating is not None:
            data.update({key: value for key, value in self.rating.to_dict().items() if key != "action"})
        if positions:
            data["position"] = position_to_json(self.position)
        return data


@dataclass
class PlayerTotals:
    """One player's totals over every game of the record."""

    player: str
    moves: int = 0
    rated: int = 0
    """Moves with a choice (more than one legal move)."""
    error: float = 0.0
    """Points lost in all, against the bot's best moves."""
    errors: int = 0
    """Moves marked error (blunders not counted)."""
    blunders: int = 0
    luck: float = 0.0
    """The luck of all the player's rolls, in points."""
    cube_decisions: int = 0
    """Cube decisions rated (doubles, takes, passes, rolls without a double where one was allowed)."""
    cube_error: float = 0.0
    """Points lost in all on them, normalized to a cube of 1."""
    cube_errors: int = 0
    cube_blunders: int = 0
    units: str = "points"
    """``points``, or ``mwc`` (a rotation's match): :attr:`error` and :attr:`luck` are match-winning chances."""

    def merge(self, other: "PlayerTotals") -> None:
        """Add ``other``'s totals (the same player's, in the same units) to these."""
        for name in ("moves", "rated", "error", "errors", "blunders", "luck", "cube_decisions", "cube_error",
                     "cube_errors", "cube_blunders"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def error_rate_mp(self) -> float:
        """Millipoints lost per rated move."""
        return 1000.0 * self.error / self.rated if self.rated else 0.0

    def add_cube(self, rating: CubeRating) -> None:
        self.cube_decisions += 1
        self.cube_error += rating.error
        self.cube_errors += rating.mark == "error"
        self.cube_blunders += rating.mark == "blunder"

    def add(self, rating: MoveRating) -> None:
        if rating.cube is not None:
            self.add_cube(rating.cube)
        self.moves += 1
        self.luck += rating.luck
        if not rating.forced:
            self.rated += 1
            self.error += rating.error
        self.errors += rating.mark == "error"
        self.blunders += rating.mark == "blunder"

    def to_dict(self) -> dict[str, Any]:
        if self.units == "mwc":
            return {"player": self.player, "units": "mwc", "moves": self.moves, "rated_moves": self.rated,
                    "error_total_mwc": self.error, "error_rate_mwc": self.error / self.rated if self.rated else 0.0,
                    "errors": self.errors, "blunders": self.blunders, "luck_mwc": self.luck}
        return {"player": self.player, "moves": self.moves, "rated_moves": self.rated,
                "error_total_mp": 1000.0 * self.error, "error_rate_mp": self.error_rate_mp, "errors": self.errors,
                "blunders": self.blunders, "luck": self.luck, "cube_decisions": self.cube_decisions,
                "cube_error_total_mp": 1000.0 * self.cube_error, "cube_errors": self.cube_errors,
                "cube_blunders": self.cube_blunders}


@dataclass
class GameAnalysis:
    game: RecordedGame
    entries: list = field(default_factory=list)
    """:class:`MoveRating` and :class:`CubeAction` in the order they happened."""

    def to_dict(self, positions: bool = True) -> dict[str, Any]:
        game = self.game
        result = None if game.result is None else {**result_to_json(game.result),
                                                    "score_points": game.result.points * game.cube}
        return {"number": game.number, "variant": game.rules.name, "players": dict(game.players),
                "match_length": game.match_length,
                "score": {"X": game.score[0], "O": game.score[1]}, "result": result, "ending": game.ending,
                "cube": game.cube, "turns": [entry.to_dict(positions) for entry in self.entries]}


@dataclass
class Analysis:
    """A record rated by a bot: the games' entries and the players' totals."""

    record: Record
    bot: str
    plies: int
    error_mp: float
    blunder_mp: float
    games: list[GameAnalysis]
    players: dict[str, PlayerTotals]
    units: str = "points"
    """``points`` (cubeless equities), or ``mwc``: a rotation's match's moves by the match-winning chance."""

    @property
    def moves(self) -> list[MoveRating]:
        return [entry for game in self.games for entry in game.entries if isinstance(entry, MoveRating)]

    def to_dict(self, positions: bool = True) -> dict[str, Any]:
        """The whole analysis as JSON data (``tapa-ai analyse --json``, the engine's ``analyse``)."""
        data = {"format": ANALYSIS_FORMAT, "version": ANALYSIS_VERSION, "source": self.record.source,
                "variant": self._variant(), "bot": self.bot,
                "plies": self.plies, "cubeless": True,
                "thresholds": {"error_mp": self.error_mp, "blunder_mp": self.blunder_mp},
                "players": [totals.to_dict() for totals in self.players.values()],
                "games": [game.to_dict(positions) for game in self.games]}
        rotation = self.record.rotation
        if rotation is not None:
            data.update(units="mwc", rotation_match={"rotation": rotation.to_data(), "length": self.record.length})
        return data

    def _variant(self) -> str:
        """The record's variant; a rotation's match: the preset's name (``tavli``, ``tabla``), else ``rotation``."""
        rotation = self.record.rotation
        if rotation is None:
            return self.record.rules.name
        return rotation.to_data() if isinstance(rotation.to_data(), str) else "rotation"

    def report(self, name: Optional[str] = None) -> str:
        from .report import text_report

        return text_report(self, name)
