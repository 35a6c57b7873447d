"""``tapa-ai engine``: one JSON request per line on stdin, one JSON response per line on stdout.

Commands (docs/protocol.md has examples):

- ``{"cmd": "start", "variant": "tapa"}`` -> ``{"position": {...}}``
- ``{"cmd": "legal_moves", "position": {...}, "dice": [5, 2]}`` ->
  ``{"moves": [{"move": "24/19 24/22", "position": {...}}, ...]}``
- ``{"cmd": "apply", "position": {...}, "dice": [5, 2], "move": "24/19 24/22"}`` ->
  ``{"move": "24/19 24/22", "position": {...}}``
- ``{"cmd": "bearoff", "home": [n1, ..., n6]}`` -> ``{"turns": [p0, p1, ...], "first_off": [q0, q1, ...]}``:
  the chance that bearing off those checkers (on the 1- to 6-points) takes exactly k turns, all of them
  and the first one (the one-sided database, :mod:`tapa_ai.bearoff`; built on first use, ~10 s, then cached);
  ``{"cmd": "bearoff", "position": {...}}`` -> ``{"X": {"home", "turns", "first_off"}, "O": {...},
  "probabilities": {...}, "equity": e, "exact": true}`` for a position with no contact left (else an error
  naming what is not home): the side to move's cubeless chances (:mod:`tapa_ai.bearoff.evaluate`)
- ``{"cmd": "bot_move", "bot": "heuristic", "position": {...}, "dice": [5, 2]}`` ->
  ``{"move": ..., "position": {...}, "bot": "heuristic"}``: the move of one of the fixed bots
  (:data:`FIXED_BOTS`: ``heuristic``, ``runner``, ``random``; optional ``"seed"`` for their random tie-breaks),
  no model needed, any variant (the web board's fixed-bot opponents)
- ``{"cmd": "read_match", "name": "m.sgf", "text": "..."}``: a match file's text or a saved game read, replayed
  and answered as the web board's own record and where the match stands (:mod:`.match_file_command`)

With a model (``tapa-ai engine --bot net:tapa``, the shipped model, see
:mod:`tapa_ai.analysis.analyzer`):

- ``{"cmd": "encode", "position": {...}}`` -> ``{"features": [...259, 309, 315 or 318 numbers...], "encoding_version": ...}``
- ``{"cmd": "evaluate", "position": {...}}`` -> ``{"probabilities": {"win_single": p, ...}, "equity": e}``
- ``{"cmd": "best_move", "position": {...}, "dice": [5, 2], "plies": 1}`` ->
  ``{"move": ..., "position": {...}, "equity": e, "probabilities": {...}, "plies": 1}``
- ``{"cmd": "hint", "position": {...}, "dice": [5, 2], "count": 5}`` ->
  ``{"moves": [{"move": ..., "equity": e, "difference": d, "probabilities": {...}, ...}, ...]}``
- ``best_move`` and ``hint`` with ``"rotation_match": {"rotation": "tabla", "length": 5, "score": {"X": 2,
  "O": 3}, "game": 4}`` (the position is game 4 of a Tabla match to 5, so a backgammon position; ``rotation``: a
  preset's name or the list of games): the moves ranked by the mover's match-winning chance at that score (the
  rotation's match equity table, :mod:`tapa_ai.cube.rotation_met`), each with its ``"match_winning_chance"``;
  ``difference`` is then in match-winning chance. ``"tavli": {"length", "score", "game"}`` is the short form for
  the Tavli rotation
- ``best_move`` and ``hint`` with ``"level": "intermediate"`` (and optionally ``"noise_seed": 7``): the move
  that level of play chooses (its depth and noise, docs/levels.md; with a seed the same move every time in
  the same position), as ``best_move``'s move and as ``"level_move"`` beside ``hint``'s list, which is ranked
  at the level's depth without noise
- ``{"cmd": "cube", "position": {...}, "cube": {"value": 2, "owner": "X"}, "match": {"length": 7,
  "score": {"X": 3, "O": 5}, "crawford": false}}`` -> ``{"action": "double", "response": "take",
  "equities": {"no_double": ..., "double_take": ..., "double_pass": ...}, ...}`` (``match`` left out: money play)
- ``{"cmd": "analyse", "record": {...a game record...}}`` -> ``{"players": [...], "games": [{"turns": [{"move":
  ..., "best": ..., "error_mp": e, "luck": l, ...}, ...]}, ...]}``: every move's error and roll's luck
  (:mod:`tapa_ai.engine.analyse_command`, docs/analysis.md)

Every request has a declared shape, ``request_<cmd>`` of ``tapa_ai/schemas/protocol.json`` (docs/schemas.md),
checked first: unknown keys, types, ranges and lengths are refused in one line. Every request may carry an
``"id"``, echoed in the response (when the schema allows it). Any bad input gets ``{"error": "..."}`` and the
engine keeps serving: this module never lets an exception escape a request. Request lines longer than
:data:`MAX_REQUEST_BYTES` are refused unread, and ``hint`` returns at most :data:`MAX_HINT_COUNT` moves, so
every request is answered in bounded time and memory.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
import traceback
from typing import IO, Any, Callable

from ..deadline import DeadlineExceeded, time_limit
from .bot_move_command import FIXED_BOTS
from .move_command import DEFAULT_HINT_COUNT, MAX_HINT_COUNT  # noqa: F401  (part of this module's interface)
from ..errors import TapaError
from ..notation.json_position import position_from_json, position_to_json
from ..notation.move_text import MoveTextError, find_move, format_move
from ..rules import reference
from ..rules.options import RuleOptions, RulesError, variant_rules
from ..rules.position import Position, start_position
from ..rules.turns import stage_dice, stage_numbers
from ..quoting import quoted
from ..schema import check, is_valid, unknown_key_message
from ..analysis.analyzer import MAX_REQUEST_PLIES, AnalysisError  # noqa: F401  (the schema's plies bound)

MoveGenerator = Callable[[Position, tuple[int, int]], list[reference.Move]]

MAX_REQUEST_BYTES = 64 * 1024
"""Longest request accepted (a position is about 400 bytes); longer lines get an error, unread."""
MAX_ROLLOUT_GAMES = 100_000
"""Most games one ``rollout`` request may play (games a move times the moves), on stdin/stdout."""
HTTP_MAX_ROLLOUT_GAMES = 2 * 1296
"""The same over HTTP (``tapa-ai serve``, where any client may ask): two rollouts of the default 1296 games."""

MODEL_COMMANDS = ("encode", "evaluate", "best_move", "hint", "cube", "rollout", "analyse")
"""Commands answered by the engine's model (``--bot net:PATH``); ``encode`` also works without one."""


def _dumps(value: Any) -> str:
    """Compact, strict JSON (NaN and infinities, which JSON lacks, raise ValueError)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


_UNWRITABLE = {"error": "the response cannot be written as JSON: the request id (or a value) is not "
                        "JSON-serialisable, or is NaN or infinite"}


class RequestError(TapaError, ValueError):
    """A request the engine cannot answer; its message goes back as ``{"error": ...}``."""


def internal_error(context: str, log: IO[str] | None = None) -> dict[str, str]:
    """The client's answer to the exception being handled: ``{"error": "internal error", "error_id": ID}``;
    the traceback goes to ``log`` (default stderr) under that id, for the operator."""
    error_id = secrets.token_hex(6)
    text = f"tapa-ai engine: internal error {error_id} while {context}:\n{traceback.format_exc()}"
    try:
        print(text, file=log if log is not None else sys.stderr, end="", flush=True)
    except (OSError, ValueError):
        pass
    return {"error": "internal error", "error_id": error_id}


def unknown_command(command: Any, commands) -> str:
    """The error for a ``cmd`` the engine does not know: quoted bounded, with "did you mean"."""
    if command is None:
        return f"missing 'cmd': one of {', '.join(commands)}"
    return unknown_key_message(command, commands, noun="cmd", listed="commands")


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

    COMMANDS = ("start", "legal_moves", "apply", "bearoff", "bot_move", "read_match", *MODEL_COMMANDS)

    def __init__(self, generator: str | None = None, bot: Any = None,
                 max_rollout_games: int = MAX_ROLLOUT_GAMES, command_timeout: float | None = None,
                 log: IO[str] | None = None) -> None:
        """``generator``: the default move generator; ``bot``: the model of the model commands, one of None,
        a ``net:PATH[@Nply]`` spec (:class:`~tapa_ai.bots.base.BotError` if bad), a NetBot or an
        :class:`~tapa_ai.analysis.analyzer.Analyzer`; ``max_rollout_games``: the most games a ``rollout``
        request may play; ``command_timeout``: seconds a request may compute (None: no limit; past it the
        answer is a 503 error, :mod:`tapa_ai.deadline`); ``log``: where internal errors' tracebacks go
        (default stderr)."""
        from ..analysis.analyzer import load_analyzer

        if command_timeout is not None and not command_timeout > 0:
            raise RequestError(f"command_timeout must be a positive number of seconds, got {quoted(command_timeout)}")
        self.command_timeout = command_timeout
        self.log = log
        self.max_rollout_games = int(max_rollout_games)
        self.generators = available_generators()
        if generator is None:
            generator = "vectorized" if "vectorized" in self.generators else "reference"
        if generator not in self.generators:
            raise RequestError(f"unknown move generator {quoted(generator)}; available: {sorted(self.generators)}")
        self.default_generator = generator
        self.analyzer = load_analyzer(bot)
        if "vectorized" in self.generators or self.analyzer is not None:
            # The fast generator (and the model's fast evaluator) are compiled on first use (tens of
            # seconds once after installing, said on stderr, then cached on disk: docs/startup.md); start
            # now so the compile overlaps
            # with the client's own start-up. Not a daemon: Python joins it before finalizing, so a
            # short session never exits while it still holds (and then frees) torch tensors, which
            # aborts the process ("terminate called without an active exception").
            self._warm_thread = threading.Thread(target=self._warm_up, name="tapa-ai-warm-up")
            self._warm_thread.start()

    def _warm_up(self) -> None:
        try:
            if "vectorized" in self.generators:
                self.generators["vectorized"](start_position("backgammon"), (6, 5))
            if self.analyzer is not None:  # compiles (or loads) the fast evaluator's kernel too
                self.analyzer.rank(start_position(self.analyzer.rules), (6, 5), plies=0, limit=1)
        except Exception:  # noqa: BLE001 - a failed warm-up shows up again, reported, on first real use
            pass

    def describe(self) -> dict[str, Any]:
        """The engine's commands and model (``GET /health`` of ``tapa-ai serve``)."""
        info: dict[str, Any] = {"commands": list(self.COMMANDS), "generator": self.default_generator,
                                "fixed_bots": list(FIXED_BOTS)}
        if self.analyzer is None:
            info.update({"bot": None, "variant": None, "plies": None})
        else:
            info.update(self.analyzer.describe())
        return info

    # -- request plumbing --------------------------------------------------
    def handle_line(self, line: str | bytes) -> str:
        """One request line in, one response line out (never raises)."""
        return self.respond_text(line)[1]

    def respond_text(self, text: str | bytes) -> tuple[int, str]:
        """One request (JSON text) in; (HTTP-style status, one JSON line) out. Never raises.

        The status is 200 for an answer, 400 for bad input, 413 for a request
        over :data:`MAX_REQUEST_BYTES`, 500 for an internal error; the body is
        ``{"error": ...}`` for all but 200.
        """
        if len(text) > MAX_REQUEST_BYTES:
            return 413, _dumps({"error": f"request is {len(text)} bytes long, more than the limit of "
                                         f"{MAX_REQUEST_BYTES}; it was not read (a position takes about 400)"})
        try:
            if isinstance(text, bytes):
                try:
                    text = text.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise RequestError(f"request is not UTF-8 text ({error.reason} at byte {error.start})") from None
            try:
                request = json.loads(text)
            except (ValueError, RecursionError) as error:  # ValueError: also over-long integers
                raise RequestError(f"request is not valid JSON: {error}") from None
        except RequestError as error:
            return 400, _dumps({"error": str(error)})
        status, response = self.respond(request)
        try:
            return status, _dumps(response)
        except (TypeError, ValueError):
            return 400, _dumps(_UNWRITABLE)

    def respond(self, request: Any) -> tuple[int, dict[str, Any]]:
        """Answer one parsed request: (200, answer), (400 | 500 | 503, ``{"error": ...}``). Never raises.

        503: the request computed past :attr:`command_timeout`. 500: a fault of the engine's own; the
        answer is ``{"error": "internal error", "error_id": ...}`` and the traceback goes to the log
        under that id (:func:`internal_error`): no exception text reaches the client.
        """
        request_id = request.get("id") if isinstance(request, dict) else None
        if not is_valid(request_id, "protocol", "id"):
            request_id = None  # refused by the schema: never echoed (a 60 KB id would make a 60 KB answer)
        try:
            with time_limit(self.command_timeout):
                status, response = 200, self.handle(request)
        except RequestError as error:
            status, response = 400, {"error": str(error)}
        except DeadlineExceeded as error:
            status, response = 503, {"error": f"the request {error} (the server's command time limit); "
                                              "ask for less work: fewer plies, games or moves"}
        except Exception:  # noqa: BLE001 - the engine must keep serving
            command = request.get("cmd") if isinstance(request, dict) else None
            status, response = 500, internal_error(f"answering {quoted(command, 40)}", self.log)
        if request_id is not None and "id" not in response:
            response = {"id": request_id, **response}
        return status, response

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one parsed request; raises :class:`RequestError` for bad input."""
        if not isinstance(request, dict):
            raise RequestError(f"request must be a JSON object, got {type(request).__name__}")
        command = request.get("cmd")
        if command not in self.COMMANDS:
            raise RequestError(unknown_command(command, self.COMMANDS))
        if command in MODEL_COMMANDS and command != "encode" and self.analyzer is None:
            self._model(request, command)  # says how to start an engine with a model
        if command in MODEL_COMMANDS and "bot" in request:
            raise RequestError("'bot' cannot be chosen per request: the model is fixed when the engine starts "
                               "(tapa-ai engine --bot net:PATH[@Nply], tapa-ai serve --bot ...)")
        # The request's shape: its declared schema (tapa_ai/schemas/protocol.json, docs/schemas.md).
        check(request, "protocol", f"request_{command}", error=RequestError)
        try:
            response = getattr(self, f"_cmd_{command}")(request)
        except (RulesError, AnalysisError) as error:
            raise RequestError(str(error)) from None
        if "id" in request:
            response = {"id": request["id"], **response}
        return response

    # -- helpers -----------------------------------------------------------
    @staticmethod
    def _position(request: dict) -> Position:
        position = position_from_json(request["position"])  # present: the request's schema
        problem = reference.result_contradiction(position)
        if problem is not None:
            raise RequestError(f"{problem}; leave 'result' out to ask about the board")
        return position

    @staticmethod
    def _dice(request: dict, position: Position) -> tuple[int, int]:
        """The request's roll, or for a position inside a cascade (docs/rules.md 10.3) its stage's ``[k, k]``
        (the request gives none or those); a clear line when they are missing or do not fit."""
        _, dice = stage_numbers(position, request.get("dice"))  # a roll's shape: the request's schema
        return stage_dice(position.cascade) if dice is None else dice

    def _generator(self, request: dict) -> MoveGenerator:
        name = request.get("generator", self.default_generator)
        if name not in self.generators:  # the schema names both; "vectorized" may be missing (no numba)
            raise RequestError(f"unknown generator {quoted(name)}; available: {sorted(self.generators)}")
        return self.generators[name]

    def _playable(self, position: Position) -> None:
        if reference.finished_result(position) is not None:
            raise RequestError("the game is already over in this position (it has a result); start a new game")
        if position.next is not None:
            raise RequestError(f"position.next: this is a move's resulting position; to play on, set 'turn' to "
                               f"{quoted(position.next)} and drop 'next' (docs/rules.md 10.3)")

    # -- commands ----------------------------------------------------------
    def _cmd_start(self, request: dict) -> dict:
        variant = request.get("variant", "tapa" if self.analyzer is None else self.analyzer.rules.name)
        rules: RuleOptions = variant_rules(variant)
        if "rules" in request:
            rules = rules.replace(**request["rules"])
        turn = request.get("turn", "X")
        return {"position": position_to_json(start_position(rules, turn))}

    def _cmd_bearoff(self, request: dict) -> dict:
        from .bearoff_command import answer_bearoff

        if "position" in request:
            if "home" in request:
                raise RequestError("give 'home' (one side's checkers) or 'position', not both")
            position = self._position(request)
            self._playable(position)
            return answer_bearoff(request, position)
        return answer_bearoff(request, None)

    def _cmd_legal_moves(self, request: dict) -> dict:
        position = self._position(request)
        self._playable(position)
        dice = self._dice(request, position)
        moves = self._generator(request)(position, dice)
        return {"moves": [{"move": format_move(m), "position": position_to_json(m.position)} for m in moves]}

    def _cmd_apply(self, request: dict) -> dict:
        position = self._position(request)
        self._playable(position)
        dice = self._dice(request, position)
        text = request.get("move")
        if not isinstance(text, str):
            raise RequestError("missing 'move' (move text such as \"24/21 23/22\", \"\" for a pass)")
        moves = self._generator(request)(position, dice)
        try:
            move = find_move(position, dice, text, moves)
        except MoveTextError as error:
            raise RequestError(str(error)) from None
        return {"move": format_move(move), "position": position_to_json(move.position)}

    def _cmd_bot_move(self, request: dict) -> dict:
        from .bot_move_command import answer_bot_move

        position = self._position(request)
        self._playable(position)
        return answer_bot_move(request, position, self._dice(request, position))

    def _cmd_read_match(self, request: dict) -> dict:  # the web board's Open; its errors: AnalysisError
        from .match_file_command import answer_read_match  # imported when asked: the match files' reader
        return answer_read_match(request)

    # -- model commands ----------------------------------------------------------------
    def _model(self, request: dict, command: str):
        if self.analyzer is None:
            raise RequestError(f"{quoted(command)} needs a model: start the engine with --bot net:PATH, "
                               "e.g. tapa-ai engine --bot net:tapa (or net:tapa@1ply to search)")
        return self.analyzer

    def _model_and_position(self, request: dict, command: str):
        """The model for the request's position (portes: the backgammon model with Portes' points) and it."""
        analyzer, position = self._model(request, command), self._position(request)
        analyzer = analyzer.playing(position.rules)
        analyzer.check(position)
        return analyzer, position

    def _plies(self, request: dict, analyzer) -> int:
        plies = request.get("plies", None)  # 0..MAX_REQUEST_PLIES: the request's schema
        return analyzer.plies if plies is None else plies

    def _cmd_encode(self, request: dict) -> dict:
        from ..net.encoding import ENCODING_NAME, default_version, encode
        from ..movegen.batch import PositionBatch

        position = self._position(request)
        if self.analyzer is not None:
            analyzer = self.analyzer.playing(position.rules)
            analyzer.check(position)
            features, version = analyzer.encode(position), analyzer.encoding_version
        else:  # without a model, the rule set's default encoding version
            version = default_version(position.rules)
            features = encode(PositionBatch.from_positions([position]), version=version)[0]
        # Shortest text of each float32 value: reads back as exactly the same float32.
        return {"features": [float(str(value)) for value in features],
                "encoding": ENCODING_NAME, "encoding_version": version}

    def _cmd_evaluate(self, request: dict) -> dict:
        analyzer, position = self._model_and_position(request, "evaluate")
        probabilities, value, exact = analyzer.evaluate(position)
        response = {"probabilities": analyzer.named(probabilities), "equity": value}
        if exact:
            response["exact"] = True
        return response

    def _move_request(self, request: dict, command: str):
        """The model, position, dice and depth of a ``best_move`` or ``hint`` request (None: a level's depth)."""
        analyzer, position = self._model_and_position(request, command)
        self._playable(position)
        dice = self._dice(request, position)
        plies = None if request.get("level") is not None else self._plies(request, analyzer)
        return analyzer, position, dice, plies

    def _cmd_best_move(self, request: dict) -> dict:
        from .move_command import answer_best_move

        return answer_best_move(request, *self._move_request(request, "best_move"))

    def _cmd_hint(self, request: dict) -> dict:
        from .move_command import answer_hint

        self._model(request, "hint")
        return answer_hint(request, *self._move_request(request, "hint"))

    def _cmd_cube(self, request: dict) -> dict:
        from ..rules.cube import Cube, MatchScore

        analyzer, position = self._model_and_position(request, "cube")
        self._playable(position)
        cube = Cube.from_dict(request.get("cube", {"value": 1, "owner": None}))
        match = MatchScore.from_request(request.get("match"), analyzer.rules) if request.get("match") is not None \
            else None
        return analyzer.cube(position, cube, match, self._plies(request, analyzer), request.get("cube_life"))

    def _cmd_rollout(self, request: dict) -> dict:
        from .rollout_command import answer_rollout

        analyzer, position = self._model_and_position(request, "rollout")
        self._playable(position)
        dice = self._dice(request, position) if "dice" in request or position.cascade is not None else None
        return answer_rollout(analyzer, request, position, dice, self.max_rollout_games)

    def _cmd_analyse(self, request: dict) -> dict:
        from .analyse_command import answer_analyse

        analyzer = self._model(request, "analyse")
        return answer_analyse(analyzer, request, self._plies(request, analyzer))


def _request_lines(stdin: IO, limit: int):
    """Lines of ``stdin`` without their line end; a line longer than ``limit`` is skipped and yields None."""
    while True:
        line = stdin.readline(limit + 1)
        if not line:
            return
        newline = b"\n" if isinstance(line, bytes) else "\n"
        if len(line) > limit and not line.endswith(newline):
            while True:  # skip the rest of the line, in bounded pieces
                rest = stdin.readline(1 << 16)
                if not rest or rest.endswith(newline):
                    break
            yield None
            continue
        yield line.rstrip(b"\r\n" if isinstance(line, bytes) else "\r\n")


def serve(stdin: IO[bytes] | None = None, stdout: IO[str] | None = None, generator: str | None = None,
          bot: Any = None) -> int:
    """Serve requests until end of input, or until the reader of the answers goes away; the exit code (0).

    ``bot``: the model of the model commands (see :class:`Engine`); a bad spec
    raises :class:`~tapa_ai.bots.base.BotError` before anything is read. A
    closed output (``tapa-ai engine | head -1``) ends the loop quietly, like
    the end of input: nothing more can be answered.
    """
    engine = Engine(generator, bot)
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    for line in _request_lines(stdin, MAX_REQUEST_BYTES):
        if line is None:
            answer = _dumps({"error": f"request line is longer than the limit of {MAX_REQUEST_BYTES} bytes; "
                                          "it was not read (a position takes about 400)"})
        elif not line.strip():
            continue
        else:
            answer = engine.handle_line(line)
        try:
            stdout.write(answer + "\n")
            stdout.flush()
        except BrokenPipeError:
            if stdout is sys.stdout:
                import os

                # Python flushes sys.stdout once more at exit, into the same broken pipe ("Exception
                # ignored ... BrokenPipeError"): send what is left to /dev/null instead.
                try:
                    devnull = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(devnull, sys.stdout.fileno())
                    os.close(devnull)
                except (OSError, ValueError):
                    pass
            return 0
    return 0
