"""``tapa-ai engine``: one JSON request per line on stdin, one JSON response per line on stdout.

Commands (docs/protocol.md has examples):

- ``{"cmd": "start", "variant": "tapa"}`` -> ``{"position": {...}}``
- ``{"cmd": "legal_moves", "position": {...}, "dice": [5, 2]}`` ->
  ``{"moves": [{"move": "24/19 24/22", "position": {...}}, ...]}``
- ``{"cmd": "apply", "position": {...}, "dice": [5, 2], "move": "24/19 24/22"}`` ->
  ``{"move": "24/19 24/22", "position": {...}}``

Every request may carry an ``"id"``, echoed in the response. Any bad input
gets ``{"error": "..."}`` and the engine keeps serving: this module never
lets an exception escape a request.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import IO, Any, Callable

from ..notation.json_position import position_from_json, position_to_json
from ..notation.move_text import MoveTextError, find_move, format_move
from ..rules.options import RuleOptions, RulesError, variant_rules
from ..rules.position import SIDES, Position, start_position
from ..rules import reference

MoveGenerator = Callable[[Position, tuple[int, int]], list[reference.Move]]


class RequestError(ValueError):
    """A request the engine cannot answer; its message goes back as ``{"error": ...}``."""


def _vectorized_generator() -> MoveGenerator | None:
    try:
        from ..movegen import legal_moves_fast
    except ImportError:
        return None
    return legal_moves_fast


def available_generators() -> dict[str, MoveGenerator]:
    """Move generators by name: ``reference`` always, ``vectorized`` when the fast path is present."""
    generators: dict[str, MoveGenerator] = {"reference": reference.legal_moves}
    fast = _vectorized_generator()
    if fast is not None:
        generators["vectorized"] = fast
    return generators


class Engine:
    """Answers protocol requests. Stateless between requests."""

    COMMANDS = ("start", "legal_moves", "apply")

    def __init__(self, generator: str | None = None) -> None:
        self.generators = available_generators()
        if generator is None:
            generator = "vectorized" if "vectorized" in self.generators else "reference"
        if generator not in self.generators:
            raise RequestError(f"unknown move generator {generator!r}; available: {sorted(self.generators)}")
        self.default_generator = generator
        if "vectorized" in self.generators:
            # The fast generator is compiled on first use (about 10 s once after installing, then
            # cached on disk); start now so the compile overlaps with the client's own start-up.
            threading.Thread(target=self._warm_up, daemon=True).start()

    def _warm_up(self) -> None:
        try:
            self.generators["vectorized"](start_position("backgammon"), (6, 5))
        except Exception:  # noqa: BLE001 - a failed warm-up shows up again, reported, on first real use
            pass

    # -- request plumbing --------------------------------------------------
    def handle_line(self, line: str | bytes) -> str:
        """One request line in, one response line out (never raises)."""
        request_id = None
        try:
            if isinstance(line, bytes):
                try:
                    line = line.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise RequestError(f"request is not UTF-8 text ({error.reason} at byte {error.start})") from None
            try:
                request = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as error:
                raise RequestError(f"request is not valid JSON: {error}") from None
            if isinstance(request, dict):
                request_id = request.get("id")
            response = self.handle(request)
        except RequestError as error:
            response = {"error": str(error)}
        except Exception as error:  # noqa: BLE001 - the engine must keep serving
            response = {"error": f"internal error ({type(error).__name__}): {error}"}
        if request_id is not None and "id" not in response:
            response = {"id": request_id, **response}
        try:
            return json.dumps(response, separators=(",", ":"))
        except (TypeError, ValueError):
            return json.dumps({"error": "request id is not JSON-serialisable"})

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one parsed request; raises :class:`RequestError` for bad input."""
        if not isinstance(request, dict):
            raise RequestError(f"request must be a JSON object, got {type(request).__name__}")
        command = request.get("cmd")
        if command not in self.COMMANDS:
            raise RequestError(f"unknown cmd {command!r}; commands: {list(self.COMMANDS)}")
        try:
            response = getattr(self, f"_cmd_{command}")(request)
        except RulesError as error:
            raise RequestError(str(error)) from None
        if "id" in request:
            response = {"id": request["id"], **response}
        return response

    # -- helpers -----------------------------------------------------------
    @staticmethod
    def _position(request: dict) -> Position:
        if "position" not in request:
            raise RequestError("missing 'position'")
        return position_from_json(request["position"])

    @staticmethod
    def _dice(request: dict) -> tuple[int, int]:
        if "dice" not in request:
            raise RequestError("missing 'dice' (two integers 1..6, e.g. [5, 2])")
        dice = request["dice"]
        if not isinstance(dice, list):
            raise RequestError(f"dice must be a list of two integers 1..6, got {dice!r}")
        return reference.check_dice(dice)

    def _generator(self, request: dict) -> MoveGenerator:
        name = request.get("generator", self.default_generator)
        if name not in self.generators:
            raise RequestError(f"unknown generator {name!r}; available: {sorted(self.generators)}")
        return self.generators[name]

    def _playable(self, position: Position) -> None:
        if reference.finished_result(position) is not None:
            raise RequestError("the game is already over in this position (it has a result); start a new game")

    # -- commands ----------------------------------------------------------
    def _cmd_start(self, request: dict) -> dict:
        variant = request.get("variant", "tapa")
        rules: RuleOptions = variant_rules(variant)
        if "rules" in request:
            if not isinstance(request["rules"], dict):
                raise RequestError("'rules' must be an object of rule options to change")
            rules = rules.replace(**request["rules"])
        turn = request.get("turn", "X")
        if turn not in SIDES:
            raise RequestError(f"'turn' must be \"X\" or \"O\", got {turn!r}")
        return {"position": position_to_json(start_position(rules, turn))}

    def _cmd_legal_moves(self, request: dict) -> dict:
        position = self._position(request)
        dice = self._dice(request)
        self._playable(position)
        moves = self._generator(request)(position, dice)
        return {"moves": [{"move": format_move(m), "position": position_to_json(m.position)} for m in moves]}

    def _cmd_apply(self, request: dict) -> dict:
        position = self._position(request)
        dice = self._dice(request)
        self._playable(position)
        text = request.get("move")
        if not isinstance(text, str):
            raise RequestError("missing 'move' (move text such as \"24/21 23/22\", \"\" for a pass)")
        moves = self._generator(request)(position, dice)
        try:
            move = find_move(position, dice, text, moves)
        except MoveTextError as error:
            raise RequestError(str(error)) from None
        return {"move": format_move(move), "position": position_to_json(move.position)}


def serve(stdin: IO[bytes] | None = None, stdout: IO[str] | None = None, generator: str | None = None) -> int:
    """Serve requests until end of input; returns the process exit code."""
    engine = Engine(generator)
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    for raw in stdin:
        if not raw.strip():
            continue
        stdout.write(engine.handle_line(raw.rstrip(b"\r\n") if isinstance(raw, bytes) else raw) + "\n")
        stdout.flush()
    return 0
