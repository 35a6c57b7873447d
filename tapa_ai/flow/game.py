"""One game as immutable state: :class:`GameState` and its :data:`PHASES`, actions and snapshot."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Optional, Sequence

from ..notation.json_position import position_from_json, position_to_json, result_from_json, result_to_json
from ..notation.move_text import find_move, format_move
from ..rules.cube import CUBE_VALUES, MAX_CUBE, Cube
from ..rules.options import RuleOptions, RulesError, variant_rules
from ..rules.position import SIDES, GameResult, Position, other, start_position
from ..rules.reference import Move, check_dice, legal_moves, next_turn
from ..rules.turns import stage_dice
from .dice import DiceSource, roll_die
from .errors import FlowError
from .events import Event
from .snapshots import SNAPSHOT_VERSION, SnapshotError, check_format, expect_object, load_bool, load_dice

__all__ = ["PHASES", "GameState", "describe_result"]

PHASES = ("opening", "roll", "double", "move", "over")
"""``opening``: nobody has rolled yet; ``roll``: the side to move may double, then rolls;
``double``: a double is offered, the other side takes or drops; ``move``: dice rolled,
the side to move plays (also a cascade's next stage, docs/rules.md 10.2, with its
``[k, k]`` and no roll); ``over``: the game has ended."""


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
        cascade = self.position.cascade
        if cascade is not None and self.phase != "over" and (self.phase != "move"
                                                             or tuple(self.dice) != stage_dice(cascade)):
            return (f"{self.position.turn} is inside a cascade: it plays its stage of {cascade.number}s "
                    f"(phase 'move', dice {list(stage_dice(cascade))}) with no roll")
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
                chosen = find_move(self.position, self.dice, move, list(self.moves))
            except RulesError as error:
                raise FlowError(str(error)) from None
        elif isinstance(move, Move):
            by_position = {legal.position: legal for legal in self.moves}
            if move.position not in by_position:
                legal_list = ", ".join(repr(format_move(m)) for m in self.moves)
                raise FlowError(
                    f"move {format_move(move)!r} is not a legal move with dice {list(self.dice)}; "
                    f"legal moves: {legal_list}"
                )
            chosen = by_position[move.position]
        else:
            raise FlowError(f"a move must be a Move or move text, got {type(move).__name__}")
        event = Event("move", side=mover, dice=self.dice, move=format_move(chosen))
        history = self.history + (event,)
        after = chosen.position
        if after.result is not None:
            return replace(self, position=after, phase="over", dice=None, result=after.result, history=history)
        following = next_turn(after)
        if following.cascade is not None:
            # A cascade's next stage (docs/rules.md 10.2): the side named plays it at once, with no roll.
            return replace(self, position=following, phase="move", dice=stage_dice(following.cascade),
                           history=history)
        return replace(self, position=following, phase="roll", dice=None, history=history)

    # -- checks -----------------------------------------------------------------
    def _require_not_over(self, action: str) -> None:
        if self.phase == "over":
            raise FlowError(f"cannot {action}: the game is over ({describe_result(self)})")

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
            "position": position_to_json(self.position),
            "phase": self.phase,
            "dice": list(self.dice) if self.dice is not None else None,
            "cube": {"value": self.cube_value, "owner": self.cube_owner},
            "crawford": self.crawford,
            "result": result_to_json(self.result) if self.result is not None else None,
            "dropped": self.dropped,
            "history": [event.to_dict() for event in self.history],
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "game") -> "GameState":
        """A game from :meth:`to_dict` output; raises :class:`SnapshotError` saying what is wrong."""
        required = {"format", "version", "position", "phase", "cube"}
        optional = {"dice", "crawford", "result", "dropped", "history"}
        expect_object(data, where, required, optional)
        check_format(data, where, "tapa-ai/game")
        try:
            position = position_from_json(data["position"], f"{where}.position")
        except RulesError as error:
            raise SnapshotError(str(error)) from None
        phase = data["phase"]
        if phase not in PHASES:
            raise SnapshotError(f"{where}.phase: {phase!r} must be one of {PHASES}")
        dice = data.get("dice")
        if dice is not None:
            dice = load_dice(dice, f"{where}.dice")
        cube = data["cube"]
        expect_object(cube, f"{where}.cube", {"value"}, {"owner"})
        value, owner = cube["value"], cube.get("owner")
        if isinstance(value, bool) or value not in CUBE_VALUES:
            raise SnapshotError(f"{where}.cube.value: must be one of {CUBE_VALUES}, got {value!r}")
        if owner is not None and owner not in SIDES:
            raise SnapshotError(f"{where}.cube.owner: must be 'X', 'O' or null, got {owner!r}")
        crawford = load_bool(data.get("crawford", False), f"{where}.crawford")
        dropped = load_bool(data.get("dropped", False), f"{where}.dropped")
        result = None
        if data.get("result") is not None:
            try:
                result = result_from_json(data["result"], f"{where}.result")
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


def describe_result(game: GameState) -> str:
    result = game.result
    if result is None:
        return "still playing"
    if result.winner is None:
        return "a draw"
    how = "the double was passed" if game.dropped else result.kind
    return f"{result.winner} won {game.points_won} point(s), {how}"
