"""The doubling cube and match scoring as plain values (docs/rules.md section 5).

:class:`Cube` is the cube (value and owner) and who may turn it;
:class:`MatchScore` is the score of a match (or money play) with its Crawford
state and how one game changes it. The game flow
(:mod:`tapa_ai.flow`) plays by these rules; the arena, the engine's
``cube`` command and the cube decisions read them from here.

docs/rules.md, section 5, and how each rule is kept:

- "before rolling, the side that may double offers to double the stakes; the
  other takes (and owns the cube) or passes (loses the current cube value)":
  :meth:`Cube.taken_by`, :meth:`Cube.points` (a pass scores the cube value
  before the double as a single game);
- "Values 2, 4, ... 64": :data:`CUBE_VALUES`, :data:`MAX_CUBE`;
- "Only the owner may redouble; nobody owns it at first":
  :meth:`Cube.double_refusal`;
- "times the cube" for every kind of win, mother wins included; a draw scores
  nothing: :meth:`Cube.points`;
- "Match to N points: the first side to N wins. Crawford: in the one game
  right after a side first reaches N - 1, no doubling is allowed":
  :meth:`MatchScore.after_game`, :meth:`MatchScore.double_refusal`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from .options import RuleOptions, RulesError
from .position import SIDES, GameResult, other
from ..quoting import quoted

MAX_CUBE = 64
CUBE_VALUES = (1, 2, 4, 8, 16, 32, 64)
"""1 is the centred cube (nobody owns it)."""


class CubeError(RulesError):
    """A cube or match score that the rules do not allow, with the reason."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Cube:
    """The doubling cube: its value and who owns it (None while centred at 1)."""

    value: int = 1
    owner: Optional[str] = None

    def __post_init__(self) -> None:
        if not _is_int(self.value) or self.value not in CUBE_VALUES:
            raise CubeError(f"cube value {quoted(self.value)}: must be a power of 2 from 1 to {MAX_CUBE} "
                            f"({', '.join(map(str, CUBE_VALUES))})")
        if self.owner is not None and self.owner not in SIDES:
            raise CubeError(f"cube owner {quoted(self.owner)}: must be 'X', 'O' or null (centred)")
        if self.owner is None and self.value != 1:
            raise CubeError(f"cube value {self.value} with no owner: a turned cube is owned by the side that took it")
        if self.owner is not None and self.value == 1:
            raise CubeError(f"cube owned by {self.owner} at value 1: the cube at 1 is centred (owner null)")

    @property
    def centred(self) -> bool:
        return self.owner is None

    def double_refusal(self, side: str) -> Optional[str]:
        """Why ``side`` may not double this cube (cap, ownership), or None when the cube allows it.

        Whose turn it is, the Crawford game and the rule set are checked by
        the game and the match (:func:`double_refusal`).
        """
        if side not in SIDES:
            raise CubeError(f"side {quoted(side)}: must be 'X' or 'O'")
        if self.value >= MAX_CUBE:
            return f"the cube is at {MAX_CUBE}, its highest value"
        if self.owner is not None and self.owner != side:
            return f"not your cube: {self.owner} owns it at {self.value}"
        return None

    def may_double(self, side: str) -> bool:
        return self.double_refusal(side) is None

    def taken_by(self, taker: str) -> "Cube":
        """The cube after ``taker`` took a double offered by the other side: twice the value, owned by the taker."""
        reason = self.double_refusal(other(taker))
        if reason:
            raise CubeError(f"{other(taker)} cannot double: {reason}")
        return Cube(2 * self.value, taker)

    def points(self, result: GameResult) -> int:
        """Points the winner of ``result`` scores: the result's points times the cube (0 for a draw)."""
        if result.winner is None:
            return 0
        return result.points * self.value

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "owner": self.owner}

    @classmethod
    def from_dict(cls, data: Any, where: str = "cube") -> "Cube":
        """A cube from ``{"value": 2, "owner": "X"}`` (owner may be omitted or null while centred)."""
        if not isinstance(data, dict):
            raise CubeError(f"{where}: must be an object like {{\"value\": 1, \"owner\": null}}, got "
                            f"{type(data).__name__}")
        unknown = sorted(set(data) - {"value", "owner"})
        if unknown:
            raise CubeError(f"{where}: unknown key(s) {quoted(unknown)}; known: ['owner', 'value']")
        if "value" not in data:
            raise CubeError(f"{where}: missing 'value' (1, 2, 4 ... {MAX_CUBE})")
        try:
            return cls(data["value"], data.get("owner"))
        except CubeError as error:
            raise CubeError(f"{where}: {error}") from None


def match_winner(length: int, score: tuple[int, int]) -> Optional[str]:
    """The side whose ``score`` (of X, O) has reached ``length``, else None (always None in money play, 0)."""
    if not length:
        return None
    for side, points in zip(SIDES, score):
        if points >= length:
            return side
    return None


@dataclass(frozen=True)
class MatchScore:
    """The score before a game: money play (``length`` 0) or a match to ``length`` points.

    ``crawford`` says the coming game is the Crawford game (no doubling);
    ``post_crawford`` that the Crawford game has been played.
    """

    length: int = 0
    score: tuple[int, int] = (0, 0)
    """Points of (X, O)."""
    crawford: bool = False
    post_crawford: bool = False

    def __post_init__(self) -> None:
        if not _is_int(self.length) or self.length < 0:
            raise CubeError(f"match length {quoted(self.length)}: must be an integer >= 1 (0 for money play)")
        if len(self.score) != 2 or not all(_is_int(s) and s >= 0 for s in self.score):
            raise CubeError(f"match score {quoted(self.score)}: must be two integers >= 0")
        if not isinstance(self.crawford, bool) or not isinstance(self.post_crawford, bool):
            raise CubeError("crawford and post_crawford must be true or false")
        if not self.length:
            if self.score != (0, 0) or self.crawford or self.post_crawford:
                raise CubeError("money play (length 0) has no score and no Crawford game")
            return
        if sum(s >= self.length for s in self.score) > 1:
            raise CubeError(f"match score {self.score[0]}-{self.score[1]}: both sides have reached the length "
                            f"{self.length}")
        if self.crawford:
            if self.post_crawford:
                raise CubeError("a game cannot be both the Crawford game and post-Crawford")
            at_match_point = [side for side, s in zip(SIDES, self.score) if s == self.length - 1]
            if len(at_match_point) != 1:
                who = "nobody is" if not at_match_point else "both sides are"
                raise CubeError(f"crawford: the Crawford game comes right after one side reaches "
                                f"{self.length - 1} ({self.length} - 1), but at {self.score[0]}-{self.score[1]} "
                                f"{who} at {self.length - 1}")

    @property
    def money(self) -> bool:
        return self.length == 0

    @property
    def winner(self) -> Optional[str]:
        """The side that has reached the length (the match is over), else None."""
        return match_winner(self.length, self.score)

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def score_of(self, side: str) -> int:
        return self.score[SIDES.index(side)]

    def away(self, side: str) -> int:
        """Points ``side`` still needs (0 in money play)."""
        return max(self.length - self.score_of(side), 0) if self.length else 0

    def double_refusal(self) -> Optional[str]:
        """Why nobody may double in the coming game (the Crawford game, the match is over), or None."""
        if self.is_over:
            return "the match is over"
        if self.crawford:
            return "no doubling in the Crawford game"
        return None

    def check_rules(self, rules: RuleOptions, where: str = "match") -> None:
        """Refuse a Crawford state that the rule set does not have."""
        if (self.crawford or self.post_crawford) and not rules.crawford:
            raise CubeError(f"{where}.crawford: the rule set {quoted(rules.name)} has no Crawford rule")

    def after_game(self, winner: Optional[str], points: int, rules: RuleOptions) -> "MatchScore":
        """The score after a game: ``winner`` (None: a draw) scored ``points`` (the cube included).

        The game after the one where a side first reaches ``length - 1`` is
        the Crawford game (option ``crawford``); a drawn Crawford game still
        was the Crawford game.
        """
        if self.is_over:
            raise CubeError("the match is over")
        if winner is not None and winner not in SIDES:
            raise CubeError(f"winner {quoted(winner)}: must be 'X', 'O' or None for a draw")
        if not _is_int(points) or points < 0 or (winner is None and points):
            raise CubeError(f"points {quoted(points)}: must be an integer >= 0 (0 for a draw)")
        if not self.length:
            return self
        score = list(self.score)
        if winner is not None:
            score[SIDES.index(winner)] += points
        post_crawford = self.post_crawford or self.crawford
        crawford = (rules.crawford and self.length >= 2 and not post_crawford and winner is not None
                    and score[SIDES.index(winner)] == self.length - 1)
        return replace(self, score=(score[0], score[1]), crawford=crawford, post_crawford=post_crawford)

    @classmethod
    def from_request(cls, data: Any, rules: Optional[RuleOptions] = None, where: str = "match") -> "MatchScore":
        """A match in play from ``{"length": 7, "score": {"X": 3, "O": 5}, "crawford": false}``.

        ``crawford`` (default false) says the coming game is the Crawford
        game; when it is false and a side is at ``length - 1`` under the
        Crawford rule, the Crawford game has been played (post-Crawford).
        Every score must be below the length (a finished match has no cube
        decisions left).
        """
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise CubeError(f"{where}: must be an object like {{\"length\": 7, \"score\": {{\"X\": 0, \"O\": 0}}}}, "
                            f"got {type(data).__name__}")
        unknown = sorted(set(data) - {"length", "score", "crawford"})
        if unknown:
            raise CubeError(f"{where}: unknown key(s) {quoted(unknown)}; known: ['crawford', 'length', 'score']")
        length = data.get("length")
        if not _is_int(length) or length < 1:
            raise CubeError(f"{where}.length: must be an integer >= 1 (leave 'match' out for money play), "
                            f"got {quoted(length)}")
        score_data = data.get("score", {"X": 0, "O": 0})
        if not isinstance(score_data, dict) or sorted(score_data) != ["O", "X"]:
            raise CubeError(f"{where}.score: must be an object {{\"X\": n, \"O\": n}}, got {quoted(score_data, 60)}")
        score = (score_data["X"], score_data["O"])
        for side, value in zip(SIDES, score):
            if not _is_int(value) or value < 0:
                raise CubeError(f"{where}.score.{side}: must be an integer >= 0, got {quoted(value)}")
            if value >= length:
                raise CubeError(f"{where}.score.{side}: {value} has reached the match length {length}; "
                                f"the match is over (scores must be 0..{length - 1})")
        crawford = data.get("crawford", False)
        if not isinstance(crawford, bool):
            raise CubeError(f"{where}.crawford: must be true or false, got {quoted(crawford)}")
        crawford_rule = rules.crawford if rules is not None else True
        if crawford and not crawford_rule:
            raise CubeError(f"{where}.crawford: the rule set {quoted(rules.name)} has no Crawford rule")
        post_crawford = (not crawford and crawford_rule and length >= 2
                         and any(s == length - 1 for s in score))
        try:
            return cls(length, score, crawford, post_crawford)
        except CubeError as error:
            raise CubeError(f"{where}.{error}" if str(error).startswith("crawford") else f"{where}: {error}") from None


def double_refusal(rules: RuleOptions, cube: Cube, side: str, match: Optional[MatchScore] = None) -> Optional[str]:
    """Why ``side``, about to roll, may not double now, or None when it may (no game phase checks)."""
    if not rules.cube:
        return f"the rule set {quoted(rules.name)} has no cube (option cube is off)"
    if match is not None:
        reason = match.double_refusal()
        if reason:
            return reason
    return cube.double_refusal(side)
