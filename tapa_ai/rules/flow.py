"""Game and match flow (RULES.md section 5) as explicit, immutable state.

A game is a :class:`GameState`; every action returns a new state and raises
:class:`FlowError` when it is not allowed now, saying why. The phases::

    opening --roll--> move          (opening = use-opening-dice: the higher side plays the opening dice)
    opening --roll--> roll          (opening = reroll: the higher side rolls both dice afresh)
    roll --double--> double --take--> roll      (the doubler then rolls)
                            --drop--> over      (the doubler wins the cube value before doubling)
    roll --roll--> move --play--> roll (other side) | over

A match is a :class:`MatchState`: the current game, the score, the Crawford
flags and the results of the finished games; :meth:`MatchState.start_next_game`
begins the next game once one is over. Both serialize to JSON-friendly dicts
(``to_dict`` / ``from_dict``) so a game or match can be saved and loaded.

Randomness is injected: every roll takes a **dice source**, either a
``random.Random`` or a callable returning one die 1..6 (:class:`ScriptedDice`
replays fixed dice). :func:`play_game` and :func:`play_match` drive whole
games with an injected ``choose_move`` and an optional :class:`CubePolicy`.

Decisions where RULES.md is silent:

- With ``opening = reroll`` the opener's first turn is an ordinary turn, so it
  may double before rolling it (when the cube is in use).
- Nobody may double before the opening roll, nor on the opener's first turn
  with ``use-opening-dice`` (its dice are already rolled).
- A drawn Crawford game still was the Crawford game: the games after it are
  post-Crawford.
- A passed double ends the game as a ``single`` win for the doubler at the
  cube value before the double.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Callable, Iterable, Optional, Protocol, Sequence, Union

# Module imports, not name imports: tapa_ai.notation imports tapa_ai.rules, so
# this keeps ``tapa_ai.rules`` free to export flow names without an import cycle.
from ..notation import json_position, move_text
from .cube import CUBE_VALUES, MAX_CUBE, Cube, MatchScore, match_winner
from .options import RuleOptions, RulesError, variant_rules
from .position import SIDES, GameResult, Position, other, start_position
from .reference import Move, check_dice, legal_moves, next_turn

__all__ = [
    "FlowError", "SnapshotError", "DiceSource", "ScriptedDice", "roll_die",
    "PHASES", "CUBE_VALUES", "MAX_CUBE", "Event", "GameState", "GameRecord", "MatchState",
    "ChooseMove", "CubePolicy", "NeverDouble", "play_game", "play_match",
]

SNAPSHOT_VERSION = 1
"""Bumped when the snapshot format changes."""

PHASES = ("opening", "roll", "double", "move", "over")
"""``opening``: nobody has rolled yet; ``roll``: the side to move may double, then rolls;
``double``: a double is offered, the other side takes or drops; ``move``: dice rolled,
the side to move plays; ``over``: the game has ended."""


EVENT_ACTIONS = ("opening", "move", "double", "take", "drop")


class FlowError(RulesError):
    """An action at the wrong time in the game or match flow, with the reason."""


class SnapshotError(FlowError):
    """A saved game or match that cannot be loaded; the message says where."""


# --------------------------------------------------------------------------
# Dice
# --------------------------------------------------------------------------

DiceSource = Union[random.Random, Callable[[], int]]
"""A ``random.Random`` or a callable returning one die 1..6."""


def roll_die(source: DiceSource) -> int:
    """One die from a dice source, checked to be an integer 1..6."""
    if isinstance(source, random.Random):
        return source.randint(1, 6)
    if not callable(source):
        raise FlowError(f"dice source must be a random.Random or a callable returning 1..6, got {source!r}")
    value = source()
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
        raise FlowError(f"dice source returned {value!r}; a die must be an integer 1..6")
    return value


class ScriptedDice:
    """A dice source that returns fixed dice in order, for tests and replays.

    ``ScriptedDice([3, 1, 6, 6])`` gives 3, then 1, then 6, then 6; pairs are
    flattened, so ``ScriptedDice([(3, 1), (6, 6)])`` is the same. Running out
    raises :class:`FlowError`.
    """

    def __init__(self, dice: Iterable[int | Sequence[int]]):
        values: list[int] = []
        for item in dice:
            values.extend(item if isinstance(item, (tuple, list)) else [item])
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
                raise FlowError(f"scripted dice: {value!r} is not a die 1..6")
        self._values = values
        self._next = 0

    def __call__(self) -> int:
        if self._next >= len(self._values):
            raise FlowError(f"scripted dice ran out after {len(self._values)} dice")
        value = self._values[self._next]
        self._next += 1
        return value

    @property
    def remaining(self) -> int:
        """How many scripted dice are left."""
        return len(self._values) - self._next


# --------------------------------------------------------------------------
# History
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    """One entry of a game's history.

    ``opening``: one opening roll, ``dice`` = (X's die, O's die), no side.
    ``move``: ``side`` played ``move`` (move text, ``""`` for a pass) with ``dice``.
    ``double``: ``side`` offered the cube at ``cube``. ``take``: ``side`` took,
    now owning the cube at ``cube``. ``drop``: ``side`` passed the double.
    """

    action: str
    side: Optional[str] = None
    dice: Optional[tuple[int, int]] = None
    move: Optional[str] = None
    cube: Optional[int] = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.action}
        if self.side is not None:
            data["side"] = self.side
        if self.dice is not None:
            data["dice"] = list(self.dice)
        if self.move is not None:
            data["move"] = self.move
        if self.cube is not None:
            data["cube"] = self.cube
        return data

    @classmethod
    def from_dict(cls, data: Any, where: str) -> "Event":
        _expect_object(data, where, required={"action"}, optional={"side", "dice", "move", "cube"})
        action = data["action"]
        if action not in EVENT_ACTIONS:
            raise SnapshotError(f"{where}.action: {action!r} must be one of {EVENT_ACTIONS}")
        side = data.get("side")
        if action == "opening":
            if side is not None:
                raise SnapshotError(f"{where}: an opening roll has no side")
        elif side not in SIDES:
            raise SnapshotError(f"{where}.side: must be 'X' or 'O', got {side!r}")
        dice = None
        if "dice" in data:
            dice = _load_dice(data["dice"], f"{where}.dice")
        if action in ("opening", "move") and dice is None:
            raise SnapshotError(f"{where}: a {action} event needs 'dice'")
        move = data.get("move")
        if action == "move" and not isinstance(move, str):
            raise SnapshotError(f"{where}.move: must be move text (a string), got {move!r}")
        if action != "move" and move is not None:
            raise SnapshotError(f"{where}: only a move event has 'move'")
        cube = data.get("cube")
        if cube is not None and cube not in CUBE_VALUES[1:]:
            raise SnapshotError(f"{where}.cube: must be one of {CUBE_VALUES[1:]}, got {cube!r}")
        return cls(action, side, dice, move, cube)


# --------------------------------------------------------------------------
# One game
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class GameState:
    """The state of one game. Immutable: every action returns a new state.

    ``position.turn`` is the side to move (in phase ``double`` the doubler; in
    phase ``over`` after a move, the side that moved, as in an afterstate).
    """

    position: Position
    """The board; its rules are the game's rules."""
    phase: str = "opening"
    """One of :data:`PHASES`."""
    dice: Optional[tuple[int, int]] = None
    """The dice to play, only in phase ``move``."""
    cube_value: int = 1
    """The cube before any double now on offer: 1 (centred), 2, 4 ... 64."""
    cube_owner: Optional[str] = None
    """Who owns the cube (may redouble); None while it is centred."""
    crawford: bool = False
    """This is the Crawford game of a match: no doubling."""
    result: Optional[GameResult] = None
    """How the game ended (before the cube); set exactly in phase ``over``."""
    dropped: bool = False
    """The game ended by a passed double."""
    history: tuple[Event, ...] = ()
    """What happened so far, in order."""

    def __post_init__(self) -> None:
        problem = self._inconsistency()
        if problem:
            raise FlowError(f"inconsistent game state: {problem}")

    def _inconsistency(self) -> Optional[str]:
        rules = self.rules
        if self.phase not in PHASES:
            return f"phase {self.phase!r} must be one of {PHASES}"
        if (self.phase == "move") != (self.dice is not None):
            return "dice are set exactly in phase 'move'"
        if self.dice is not None:
            try:
                check_dice(self.dice)
            except RulesError as error:
                return str(error)
        if self.cube_value not in CUBE_VALUES:
            return f"cube value {self.cube_value!r} must be one of {CUBE_VALUES}"
        if self.cube_owner is not None and self.cube_owner not in SIDES:
            return f"cube owner {self.cube_owner!r} must be 'X', 'O' or null"
        if (self.cube_owner is None) != (self.cube_value == 1):
            return "the cube has an owner exactly when its value is above 1"
        if not rules.cube and (self.cube_value != 1 or self.phase == "double"):
            return "the rule set has no cube (option cube is off), but the cube is in play"
        if self.crawford and not rules.crawford:
            return "a Crawford game needs the option crawford"
        if self.crawford and (self.cube_value != 1 or self.phase == "double"):
            return "no doubling in the Crawford game, but the cube has been turned"
        if self.phase == "double":
            if self.cube_value >= MAX_CUBE:
                return f"a double is offered with the cube already at {MAX_CUBE}"
            if self.cube_owner not in (None, self.position.turn):
                return f"{self.position.turn} offers a double but {self.cube_owner} owns the cube"
        if (self.phase == "over") != (self.result is not None):
            return "the result is set exactly in phase 'over'"
        if self.dropped:
            if self.result is None or self.result.kind != "single" or self.result.points != 1:
                return "a passed double ends the game as a single win for the doubler"
            if self.position.result is not None:
                return "a passed double ends the game, not a move, so the position has no result"
        elif self.position.result != self.result:
            return "the result must be the position's result when a move ended the game"
        return None

    # -- construction ---------------------------------------------------------
    @classmethod
    def new(
        cls,
        rules: RuleOptions | str,
        *,
        opener: Optional[str] = None,
        crawford: bool = False,
        position: Optional[Position] = None,
    ) -> "GameState":
        """A new game: an opening roll, or ``opener`` rolling both dice (phase ``roll``).

        ``position`` starts from a position other than the rules' start
        position (for analysis and tests); its rules must be ``rules``.
        """
        if isinstance(rules, str):
            rules = variant_rules(rules)
        if position is None:
            position = start_position(rules, opener or "X")
        elif position.rules != rules:
            raise FlowError(f"the position's rules ({position.rules.name}) are not the game's rules ({rules.name})")
        if opener is None:
            return cls(position.with_changes(result=None), "opening", crawford=crawford)
        if opener not in SIDES:
            raise FlowError(f"opener {opener!r} must be 'X', 'O' or None for an opening roll")
        return cls(position.with_changes(turn=opener, result=None), "roll", crawford=crawford)

    # -- views ----------------------------------------------------------------
    @property
    def rules(self) -> RuleOptions:
        return self.position.rules

    @property
    def is_over(self) -> bool:
        return self.phase == "over"

    @property
    def side_to_act(self) -> Optional[str]:
        """Who acts next: the side to move, the side answering a double, None at the opening or when over."""
        if self.phase in ("opening", "over"):
            return None
        if self.phase == "double":
            return other(self.position.turn)
        return self.position.turn

    @property
    def offered_value(self) -> Optional[int]:
        """The cube value a double on offer would make (phase ``double``), else None."""
        return 2 * self.cube_value if self.phase == "double" else None

    @property
    def winner(self) -> Optional[str]:
        return self.result.winner if self.result is not None else None

    @property
    def points_won(self) -> Optional[int]:
        """Points the winner scores: result points times the cube (0 for a draw, None while playing)."""
        if self.result is None:
            return None
        return self.result.points * self.cube_value

    def double_refusal(self, side: Optional[str] = None) -> Optional[str]:
        """Why ``side`` (default: the side to move) may not double now, or None when it may."""
        if self.phase == "over":
            return "the game is over"
        if not self.rules.cube:
            return f"the rule set {self.rules.name!r} has no cube (option cube is off)"
        if self.crawford:
            return "no doubling in the Crawford game"
        if self.phase == "opening":
            return "no doubling before the opening roll"
        if self.phase == "double":
            return f"a double to {self.offered_value} is already on offer; {self.side_to_act} must take or drop it"
        if self.phase == "move":
            return f"too late after rolling: doubling comes before the roll, and {self.position.turn} has rolled"
        mover = self.position.turn
        side = mover if side is None else side
        if side != mover:
            return f"only the side to move may double before its roll; it is {mover}'s turn"
        return Cube(self.cube_value, self.cube_owner).double_refusal(side)

    @property
    def may_double(self) -> bool:
        """The side to move may double now."""
        return self.double_refusal() is None

    @cached_property
    def moves(self) -> tuple[Move, ...]:
        """The legal moves with the rolled dice (phase ``move``); a pass is the one move with no steps."""
        self._require("move", "list the legal moves")
        return tuple(legal_moves(self.position, self.dice))

    # -- actions ----------------------------------------------------------------
    def roll(self, source: DiceSource, side: Optional[str] = None) -> "GameState":
        """Roll with ``source``: the opening roll (repeated on equal dice), or the side to move's two dice."""
        if self.phase == "opening":
            if side is not None:
                raise FlowError("the opening roll is made by both sides at once; give no side")
            state = self
            while state.phase == "opening":
                state = state.rolled((roll_die(source), roll_die(source)))
            return state
        self._require("roll", "roll", side)
        return self.rolled((roll_die(source), roll_die(source)))

    def rolled(self, dice: Sequence[int], side: Optional[str] = None) -> "GameState":
        """The state after ``dice`` were rolled (dice from outside: a protocol, a real board).

        In phase ``opening`` the dice are (X's die, O's die); equal dice are
        recorded and the state stays in phase ``opening`` to roll again.
        """
        try:
            dice = check_dice(dice)
        except RulesError as error:
            raise FlowError(str(error)) from None
        if self.phase == "opening":
            if side is not None:
                raise FlowError("the opening roll is made by both sides at once; give no side")
            history = self.history + (Event("opening", dice=dice),)
            x_die, o_die = dice
            if x_die == o_die:
                return replace(self, history=history)
            opener = "X" if x_die > o_die else "O"
            position = self.position.with_changes(turn=opener)
            if self.rules.opening == "use-opening-dice":
                return replace(self, position=position, phase="move", dice=(max(dice), min(dice)), history=history)
            return replace(self, position=position, phase="roll", history=history)
        self._require("roll", "roll", side)
        return replace(self, phase="move", dice=dice)

    def double(self, side: Optional[str] = None) -> "GameState":
        """The side to move offers to double, before rolling."""
        self._require_not_over("double")
        reason = self.double_refusal(side)
        if reason:
            who = side or self.side_to_act
            raise FlowError(f"{who} may not double: {reason}" if who else f"cannot double: {reason}")
        mover = self.position.turn
        event = Event("double", side=mover, cube=2 * self.cube_value)
        return replace(self, phase="double", history=self.history + (event,))

    def take(self, side: Optional[str] = None) -> "GameState":
        """The side offered a double takes it: the cube doubles and it owns it; the doubler rolls."""
        self._require_not_over("take")
        if self.phase != "double":
            raise FlowError(f"cannot take: no double has been offered (phase {self.phase!r})")
        taker = self._check_actor(side, "take")
        value = 2 * self.cube_value
        event = Event("take", side=taker, cube=value)
        return replace(self, phase="roll", cube_value=value, cube_owner=taker, history=self.history + (event,))

    def drop(self, side: Optional[str] = None) -> "GameState":
        """The side offered a double passes it: it loses the cube value before the double."""
        self._require_not_over("drop")
        if self.phase != "double":
            raise FlowError(f"cannot drop (pass) a double: no double has been offered (phase {self.phase!r})")
        dropper = self._check_actor(side, "drop")
        event = Event("drop", side=dropper)
        result = GameResult(self.position.turn, "single", 1)
        return replace(self, phase="over", result=result, dropped=True, history=self.history + (event,))

    def play(self, move: Move | str, side: Optional[str] = None) -> "GameState":
        """Play a legal move, given as a :class:`Move` or as move text (``""`` for a pass)."""
        if self.phase != "move":
            self._require_not_over("move")
            if self.phase in ("opening", "roll"):
                raise FlowError("cannot move before rolling the dice")
            raise FlowError(f"cannot move: a double is on offer; {self.side_to_act} must take or drop it first")
        mover = self._check_actor(side, "move")
        if isinstance(move, str):
            try:
                chosen = move_text.find_move(self.position, self.dice, move, list(self.moves))
            except RulesError as error:
                raise FlowError(str(error)) from None
        elif isinstance(move, Move):
            by_position = {legal.position: legal for legal in self.moves}
            if move.position not in by_position:
                legal_list = ", ".join(repr(move_text.format_move(m)) for m in self.moves)
                raise FlowError(
                    f"move {move_text.format_move(move)!r} is not a legal move with dice {list(self.dice)}; "
                    f"legal moves: {legal_list}"
                )
            chosen = by_position[move.position]
        else:
            raise FlowError(f"a move must be a Move or move text, got {type(move).__name__}")
        event = Event("move", side=mover, dice=self.dice, move=move_text.format_move(chosen))
        history = self.history + (event,)
        after = chosen.position
        if after.result is not None:
            return replace(self, position=after, phase="over", dice=None, result=after.result, history=history)
        return replace(self, position=next_turn(after), phase="roll", dice=None, history=history)

    # -- checks -----------------------------------------------------------------
    def _require_not_over(self, action: str) -> None:
        if self.phase == "over":
            raise FlowError(f"cannot {action}: the game is over ({_describe_result(self)})")

    def _require(self, phase: str, action: str, side: Optional[str] = None) -> None:
        self._require_not_over(action)
        if self.phase != phase:
            reasons = {
                "opening": "the opening roll is still to be made",
                "roll": f"{self.position.turn} is to double or roll",
                "double": f"a double is on offer; {self.side_to_act} must take or drop it",
                "move": f"{self.position.turn} has rolled {list(self.dice or ())} and must move",
            }
            raise FlowError(f"cannot {action} now: {reasons[self.phase]}")
        self._check_actor(side, action)

    def _check_actor(self, side: Optional[str], action: str) -> Optional[str]:
        expected = self.side_to_act
        if side is not None and side != expected:
            raise FlowError(f"{side} cannot {action}: it is {expected}'s turn to act")
        return expected

    # -- snapshot -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly snapshot; :meth:`from_dict` loads it."""
        return {
            "format": "tapa-ai/game",
            "version": SNAPSHOT_VERSION,
            "position": json_position.position_to_json(self.position),
            "phase": self.phase,
            "dice": list(self.dice) if self.dice is not None else None,
            "cube": {"value": self.cube_value, "owner": self.cube_owner},
            "crawford": self.crawford,
            "result": json_position.result_to_json(self.result) if self.result is not None else None,
            "dropped": self.dropped,
            "history": [event.to_dict() for event in self.history],
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "game") -> "GameState":
        """A game from :meth:`to_dict` output; raises :class:`SnapshotError` saying what is wrong."""
        required = {"format", "version", "position", "phase", "cube"}
        optional = {"dice", "crawford", "result", "dropped", "history"}
        _expect_object(data, where, required, optional)
        _check_format(data, where, "tapa-ai/game")
        try:
            position = json_position.position_from_json(data["position"], f"{where}.position")
        except RulesError as error:
            raise SnapshotError(str(error)) from None
        phase = data["phase"]
        if phase not in PHASES:
            raise SnapshotError(f"{where}.phase: {phase!r} must be one of {PHASES}")
        dice = data.get("dice")
        if dice is not None:
            dice = _load_dice(dice, f"{where}.dice")
        cube = data["cube"]
        _expect_object(cube, f"{where}.cube", {"value"}, {"owner"})
        value, owner = cube["value"], cube.get("owner")
        if isinstance(value, bool) or value not in CUBE_VALUES:
            raise SnapshotError(f"{where}.cube.value: must be one of {CUBE_VALUES}, got {value!r}")
        if owner is not None and owner not in SIDES:
            raise SnapshotError(f"{where}.cube.owner: must be 'X', 'O' or null, got {owner!r}")
        crawford = _load_bool(data.get("crawford", False), f"{where}.crawford")
        dropped = _load_bool(data.get("dropped", False), f"{where}.dropped")
        result = None
        if data.get("result") is not None:
            try:
                result = json_position.result_from_json(data["result"], f"{where}.result")
            except RulesError as error:
                raise SnapshotError(str(error)) from None
        history_data = data.get("history", [])
        if not isinstance(history_data, list):
            raise SnapshotError(f"{where}.history: must be a list of events")
        history = tuple(Event.from_dict(item, f"{where}.history[{i}]") for i, item in enumerate(history_data))
        try:
            return cls(position, phase, dice, value, owner, crawford, result, dropped, history)
        except FlowError as error:
            raise SnapshotError(f"{where}: {error}") from None


def _describe_result(game: GameState) -> str:
    result = game.result
    if result is None:
        return "still playing"
    if result.winner is None:
        return "a draw"
    how = "the double was passed" if game.dropped else result.kind
    return f"{result.winner} won {game.points_won} point(s), {how}"


# --------------------------------------------------------------------------
# A match
# --------------------------------------------------------------------------

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
        _expect_object(data, where, {"number", "winner", "kind", "cube", "points"}, {"dropped", "crawford"})
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
        dropped = _load_bool(data.get("dropped", False), f"{where}.dropped")
        crawford = _load_bool(data.get("crawford", False), f"{where}.crawford")
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
                f"cannot {action}: game {self.game_number} is over ({_describe_result(self.game)}); "
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
        _expect_object(data, where, required, optional)
        _check_format(data, where, "tapa-ai/match")
        length = data["length"]
        if length is None:
            length = 0
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise SnapshotError(f"{where}.length: must be an integer >= 0 (0 for money play), got {length!r}")
        score_data = data["score"]
        _expect_object(score_data, f"{where}.score", set(SIDES), set())
        for side in SIDES:
            value = score_data[side]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SnapshotError(f"{where}.score.{side}: must be an integer >= 0, got {value!r}")
        game_number = data["game_number"]
        if isinstance(game_number, bool) or not isinstance(game_number, int) or game_number < 1:
            raise SnapshotError(f"{where}.game_number: must be an integer >= 1, got {game_number!r}")
        game = GameState.from_dict(data["game"], f"{where}.game")
        crawford_game = _load_bool(data.get("crawford_game", False), f"{where}.crawford_game")
        if crawford_game != game.crawford:
            raise SnapshotError(f"{where}.crawford_game: {crawford_game} disagrees with {where}.game.crawford")
        post_crawford = _load_bool(data.get("post_crawford", False), f"{where}.post_crawford")
        results_data = data.get("results", [])
        if not isinstance(results_data, list):
            raise SnapshotError(f"{where}.results: must be a list of game records")
        results = tuple(GameRecord.from_dict(item, f"{where}.results[{i}]") for i, item in enumerate(results_data))
        try:
            return cls(game, length, (score_data["X"], score_data["O"]), game_number, post_crawford, results)
        except FlowError as error:
            raise SnapshotError(f"{where}: {error}") from None


# --------------------------------------------------------------------------
# Snapshot helpers
# --------------------------------------------------------------------------

def _expect_object(data: Any, where: str, required: set[str], optional: set[str]) -> None:
    if not isinstance(data, dict):
        raise SnapshotError(f"{where}: must be a JSON object, got {type(data).__name__}")
    missing = sorted(required - set(data))
    if missing:
        raise SnapshotError(f"{where}: missing key(s) {missing}")
    unknown = sorted(set(data) - required - optional)
    if unknown:
        raise SnapshotError(f"{where}: unknown key(s) {unknown}; known: {sorted(required | optional)}")


def _check_format(data: dict, where: str, expected: str) -> None:
    if data["format"] != expected:
        raise SnapshotError(f"{where}.format: expected {expected!r}, got {data['format']!r}")
    if data["version"] != SNAPSHOT_VERSION:
        raise SnapshotError(f"{where}.version: this code reads version {SNAPSHOT_VERSION}, got {data['version']!r}")


def _load_dice(data: Any, where: str) -> tuple[int, int]:
    try:
        return check_dice(data)
    except RulesError as error:
        raise SnapshotError(f"{where}: {error}") from None


def _load_bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise SnapshotError(f"{where}: must be true or false, got {value!r}")
    return value


# --------------------------------------------------------------------------
# Drivers
# --------------------------------------------------------------------------

ChooseMove = Callable[[Position, tuple[int, int], list[Move]], Move]
"""``choose_move(position, dice, moves) -> Move``: pick one of the legal moves (or return move text)."""


class CubePolicy(Protocol):
    """Cube decisions for both sides; ``match`` is None outside a match."""

    def offer_double(self, game: GameState, match: Optional[MatchState]) -> bool:
        """Should the side to move (``game.position.turn``) double now? Asked only when it may."""
        ...

    def accept_double(self, game: GameState, match: Optional[MatchState]) -> bool:
        """Should ``game.side_to_act`` take the double on offer?"""
        ...


class NeverDouble:
    """The default cube policy: never double, always take."""

    def offer_double(self, game: GameState, match: Optional[MatchState]) -> bool:
        return False

    def accept_double(self, game: GameState, match: Optional[MatchState]) -> bool:
        return True


def _advance(state, game: GameState, choose_move: ChooseMove, source: DiceSource, cube_policy: CubePolicy,
             match: Optional[MatchState]):
    """One action on ``state`` (a GameState or a MatchState whose current game is ``game``)."""
    if game.phase == "opening":
        return state.roll(source)
    if game.phase == "roll":
        if game.may_double and cube_policy.offer_double(game, match):
            return state.double()
        return state.roll(source)
    if game.phase == "double":
        return state.take() if cube_policy.accept_double(game, match) else state.drop()
    if game.phase == "move":
        moves = game.moves
        if len(moves) == 1:
            # A forced move or a pass: nothing to choose, the bot is not asked.
            return state.play(moves[0])
        return state.play(choose_move(game.position, game.dice, list(moves)))
    raise FlowError("the game is over")


def play_game(
    rules: RuleOptions | str | GameState,
    choose_move: ChooseMove,
    rng: DiceSource,
    cube_policy: Optional[CubePolicy] = None,
    *,
    max_actions: int = 20_000,
) -> GameState:
    """Play one game to the end and return its final state.

    ``rules`` may be a rule set (a new game with an opening roll) or a
    :class:`GameState` to continue. ``choose_move`` is asked only when there
    is more than one legal move. ``max_actions`` guards against a game that
    cannot end (both sides blocked for ever).
    """
    state = rules if isinstance(rules, GameState) else GameState.new(rules)
    policy = cube_policy or NeverDouble()
    for _ in range(max_actions):
        if state.is_over:
            return state
        state = _advance(state, state, choose_move, rng, policy, None)
    if state.is_over:
        return state
    raise FlowError(f"the game did not end within {max_actions} actions")


def play_match(
    rules: RuleOptions | str | MatchState,
    length: Optional[int],
    choose_move: ChooseMove,
    rng: DiceSource,
    cube_policy: Optional[CubePolicy] = None,
    *,
    max_games: Optional[int] = None,
    max_actions_per_game: int = 20_000,
) -> MatchState:
    """Play a match to ``length`` points (or ``max_games`` games) and return its final state.

    ``rules`` may be a rule set (a new match) or a :class:`MatchState` to
    continue (then ``length`` is ignored). Money play (``length`` 0 or None)
    needs ``max_games``. The returned match holds its last game, finished.
    """
    match = rules if isinstance(rules, MatchState) else MatchState.new(rules, length)
    if not match.length and max_games is None:
        raise FlowError("money play (match length 0) never ends: give max_games")
    policy = cube_policy or NeverDouble()
    games_played = 0
    while not match.is_over and (max_games is None or games_played < max_games):
        if match.game.is_over:
            match = match.start_next_game()
        for _ in range(max_actions_per_game):
            if match.game.is_over:
                break
            match = _advance(match, match.game, choose_move, rng, policy, match)
        else:
            raise FlowError(f"game {match.game_number} did not end within {max_actions_per_game} actions")
        games_played += 1
    return match
