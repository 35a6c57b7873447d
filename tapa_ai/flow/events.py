"""A game's history: :class:`Event` (opening roll, move, double, take, drop) and :data:`EVENT_ACTIONS`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..rules.cube import CUBE_VALUES
from ..rules.position import SIDES
from .snapshots import SnapshotError, expect_object, load_dice

__all__ = ["EVENT_ACTIONS", "Event"]

EVENT_ACTIONS = ("opening", "move", "double", "take", "drop")


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
        expect_object(data, where, required={"action"}, optional={"side", "dice", "move", "cube"})
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
            dice = load_dice(data["dice"], f"{where}.dice")
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

    def played_on(self, state: Any) -> Any:
        """``state`` (a :class:`~tapa_ai.flow.GameState`, a :class:`~tapa_ai.flow.MatchState` or a rotation's
        match) after this event: the opening roll; a move, its roll first where the state waits for one; a cube
        action. The flow's errors (:class:`~tapa_ai.flow.FlowError`) say what does not fit."""
        if self.action == "opening":
            return state.rolled(self.dice)
        if self.action == "move":
            if getattr(state, "game", state).phase == "roll":
                state = state.rolled(self.dice, self.side)
            return state.play(self.move, self.side)
        return getattr(state, self.action)(self.side)
