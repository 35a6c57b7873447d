"""``engine:CMD``: any program speaking this project's JSON-lines engine protocol (docs/protocol.md) as a bot.

``CMD`` is a command line, split with :func:`shlex.split` (quote it as a
shell would), run as a subprocess: one JSON request per line on its stdin,
one JSON answer per line on its stdout, the ``"id"`` of each request echoed.
``tapa-ai engine --bot net:PATH`` is such a program; so is any other engine
that answers these three commands:

- at start-up, a handshake: ``{"cmd": "start", "variant": ...}`` (the answer's
  ``position`` must be the rule set's start position) and one ``best_move``
  on it, so a first request that pays a compile (numba) or a model load is
  allowed :data:`DEFAULT_START_TIMEOUT` seconds, and an engine that cannot
  play the rule set (no model, another variant's model) is refused at once;
- ``{"cmd": "best_move", "position": ..., "dice": [d1, d2], "id": n}`` for
  every position of a batch with more than one legal move (a single legal
  move is played without asking); the answer's ``position`` (else its
  ``move`` text, read with :func:`tapa_ai.notation.move_text.find_move`)
  must be exactly one of the legal afterstates;
- ``{"cmd": "cube", "position": ..., "cube": {...}, "match": {...}}`` for
  :meth:`offer_double` (its ``action``) and :meth:`accept_double` (its
  ``response``). An engine that answers the first cube request with an error
  (``tapa-ai engine`` without a model, say) plays the **passive cube** from
  then on (never doubles, always takes), as it says once on stderr.

The requests of a batch are pipelined: all are queued to a writer thread,
then the answers are read, a reader thread draining the engine's stdout (so
neither side can block the other on a full pipe) and another keeping the last
lines of its stderr for error messages.

**Limits.** Each answer must come within :data:`MOVE_TIMEOUT_ENV` seconds
(default :data:`DEFAULT_MOVE_TIMEOUT`) and the handshake within
:data:`START_TIMEOUT_ENV` (default :data:`DEFAULT_START_TIMEOUT`); both are
environment variables, read when the bot is built, inherited by the arena's
worker processes, and not part of the spec (they change no move, only how
long a broken engine is waited for). An answer that is late, not JSON, an
error, an illegal move or no move at all stops the engine and raises
:class:`~tapa_ai.bots.base.BotError` with the request, the answer and the
engine's last stderr lines. An engine process that dies is restarted once
(the batch is played again, with a note on stderr); a second death is a
BotError. :meth:`close` ends the process: stdin closed, a short wait, then
killed (with its process group); a bot never closed is ended when it is
garbage collected or at interpreter exit.
"""

from __future__ import annotations

import json
import math
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import weakref
from collections import deque
from typing import Any, Optional

import numpy as np

from ..cube.equity import OWNER_CENTRED, OWNER_MOVER
from ..movegen.batch import PositionBatch
from ..movegen.generate import Afterstates, generate
from ..notation.json_position import position_from_json, position_to_json
from ..notation.move_text import MoveTextError, find_move
from ..rules.options import RuleOptions, RulesError, variant_rules
from ..rules.position import PositionError, other, start_position
from .base import Bot, BotError

MOVE_TIMEOUT_ENV = "TAPA_ENGINE_MOVE_TIMEOUT"
"""Environment variable: seconds an engine may take per answer (default :data:`DEFAULT_MOVE_TIMEOUT`)."""
START_TIMEOUT_ENV = "TAPA_ENGINE_START_TIMEOUT"
"""Environment variable: seconds an engine may take to answer its handshake (default :data:`DEFAULT_START_TIMEOUT`)."""
DEFAULT_MOVE_TIMEOUT = 60.0
DEFAULT_START_TIMEOUT = 120.0
CLOSE_WAIT = 2.0
"""Seconds :meth:`EngineBot.close` waits for the engine to exit after its stdin is closed, before killing it."""
MAX_RESTARTS = 1
"""Times a bot restarts an engine process that died; the next death is an error."""
STDERR_LINES = 10
"""Last lines of the engine's stderr kept for error messages."""
_SHOWN = 500
"""Characters of a request or answer shown in an error message."""
_PROBE_DICE = (3, 1)
"""The roll of the handshake's ``best_move`` (not a double, so legal as an opening roll everywhere)."""


def seconds_from_environment(name: str, default: float) -> float:
    """A time limit from the environment variable ``name`` (unset or empty: ``default``); BotError if not > 0."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise BotError(f"{name}={text!r}: want a number of seconds > 0")
    return value


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} characters)"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class _Failure(Exception):
    """An exchange with the engine gone wrong: what happened, the request concerned, the answer (text)."""

    def __init__(self, why: str, request: Optional[dict] = None, answer: Any = None, died: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.request = request
        self.answer = answer if answer is None or isinstance(answer, str) else _dumps(answer)
        self.died = died


class _EngineProcess:
    """One running engine: its pipes, a writer thread and a reader thread for each of stdout and stderr."""

    def __init__(self, argv: list[str]) -> None:
        # A session of its own, so that stopping the engine ends whatever it started too.
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=os.name == "posix")
        self.lines: queue.Queue = queue.Queue()
        self.outbox: queue.Queue = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self.next_id = 0
        self.threads = [threading.Thread(target=target, name=f"engine-{name}-{self.process.pid}", daemon=True)
                        for name, target in (("stdout", self._read_stdout), ("stderr", self._read_stderr),
                                             ("stdin", self._write))]
        for thread in self.threads:
            thread.start()

    def _read_stdout(self) -> None:
        try:
            for line in self.process.stdout:
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self.lines.put(None)  # the end of the engine's output

    def _read_stderr(self) -> None:
        try:
            for line in self.process.stderr:
                self.stderr_tail.append(line.decode("utf-8", errors="replace").rstrip())
        except (OSError, ValueError):
            pass

    def _write(self) -> None:
        while True:
            data = self.outbox.get()
            if data is None:
                break
            try:
                self.process.stdin.write(data)
                self.process.stdin.flush()
            except (OSError, ValueError):  # the engine is gone: the stdout reader sees the end of its output
                break
        try:
            self.process.stdin.close()
        except (OSError, ValueError):
            pass

    def exit_note(self) -> str:
        """How the process ended, e.g. ``"exit code 3"``, waiting briefly for it; ``"still running"`` if it has not."""
        try:
            code = self.process.wait(1.0)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def exchange(self, requests: list[dict], timeout: float, limit: str) -> list[dict]:
        """Send every request (each given an ``id``), then read one answer per request, each within ``timeout``
        seconds of the one before; the answers in the order of the requests. Raises :class:`_Failure`.

        ``limit`` names the environment variable that sets ``timeout`` (for the message).
        """
        pending: dict[int, dict] = {}
        for request in requests:
            self.next_id += 1
            request = {**request, "id": self.next_id}
            pending[self.next_id] = request
            self.outbox.put((_dumps(request) + "\n").encode("utf-8"))
        order = list(pending)
        answers: dict[int, dict] = {}
        while len(answers) < len(order):
            waiting = pending[next(key for key in order if key not in answers)]
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise _Failure(f"gave no answer within {timeout:g} s (the limit {limit})", waiting) from None
            if line is None:
                raise _Failure(f"process ended ({self.exit_note()}) before answering", waiting, died=True)
            text = line.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                answer = json.loads(text)
            except ValueError:
                raise _Failure("answered a line that is not JSON", waiting, text) from None
            if not isinstance(answer, dict):
                raise _Failure("answered JSON that is not an object", waiting, text)
            key = answer.get("id")
            if type(key) is not int or key not in pending or key in answers:
                raise _Failure(f"answered with id {key!r}, not the id of a request waiting for its answer "
                               f"({', '.join(str(k) for k in order if k not in answers)})", waiting, text)
            answers[key] = answer
        return [answers[key] for key in order]

    def stop(self, graceful: bool = True) -> None:
        """End the process: close its stdin and wait :data:`CLOSE_WAIT` s (``graceful``), then kill it."""
        self.outbox.put(None)  # the writer closes stdin after what is queued
        if graceful:
            try:
                self.process.wait(CLOSE_WAIT)
            except subprocess.TimeoutExpired:
                pass
        if self.process.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(self.process.pid, signal.SIGKILL)
                else:  # pragma: no cover
                    self.process.kill()
            except (ProcessLookupError, PermissionError):
                pass
            self.process.wait()
        for thread in self.threads:
            thread.join(timeout=1.0)


def _stop_quietly(process: _EngineProcess) -> None:
    """What a bot never closed does when it is collected or the interpreter exits."""
    try:
        process.stop(graceful=True)
    except Exception:  # noqa: BLE001 - at interpreter exit anything may be half torn down
        pass


_FIELDS = ("board", "pinned", "off", "bar")


class EngineBot(Bot):
    """``engine:CMD``: a subprocess speaking the JSON-lines engine protocol (module docstring)."""

    def __init__(self, command: str, rules: RuleOptions, move_timeout: Optional[float] = None,
                 start_timeout: Optional[float] = None) -> None:
        self.command = command
        self.name = f"engine:{command}"
        try:
            self.argv = shlex.split(command)
        except ValueError as error:
            raise BotError(f"bot spec {self.name!r}: cannot split the command line ({error})") from None
        if not self.argv:
            raise BotError(f"bot spec {self.name!r}: give the engine's command line, e.g. "
                           "engine:'tapa-ai engine --bot net:tapa'")
        self.rules = rules
        self.variants = (rules.name,)
        self.move_timeout = (seconds_from_environment(MOVE_TIMEOUT_ENV, DEFAULT_MOVE_TIMEOUT)
                             if move_timeout is None else float(move_timeout))
        """Seconds each answer may take."""
        self.start_timeout = (seconds_from_environment(START_TIMEOUT_ENV, DEFAULT_START_TIMEOUT)
                              if start_timeout is None else float(start_timeout))
        """Seconds each answer of the handshake may take."""
        self.restarts = 0
        self.cube_mode: Optional[str] = None
        """None until the first cube request; then ``"engine"`` (its answers) or ``"passive"``."""
        try:
            self._start_position = start_position(rules, "X")
            self._start_request = {"cmd": "start", "variant": rules.name}
            changed = self._rule_overrides(rules)
            if changed:
                self._start_request["rules"] = changed
            self._probe = {"cmd": "best_move", "position": position_to_json(self._start_position),
                           "dice": list(_PROBE_DICE)}
        except (PositionError, RulesError) as error:
            raise BotError(f"bot spec {self.name!r}: these rules cannot be sent to an engine ({error})") from None
        self._process: Optional[_EngineProcess] = None
        self._finalizer: Optional[weakref.finalize] = None
        self._start()

    @staticmethod
    def _rule_overrides(rules: RuleOptions) -> dict:
        return rules.changes_from(variant_rules(rules.name))

    def check_rules(self, rules: RuleOptions) -> None:
        if rules != self.rules:
            raise BotError(f"bot {self.name!r} was started for rule set {self.rules.name!r}; "
                           f"it cannot play {rules.name!r}")

    # -- the process ------------------------------------------------------------------------------
    def _start(self) -> None:
        try:
            process = _EngineProcess(self.argv)
        except OSError as error:
            raise BotError(f"bot spec {self.name!r}: cannot start {self.argv[0]!r}: "
                           f"{error.strerror or error}") from None
        self._process = process
        self._finalizer = weakref.finalize(self, _stop_quietly, process)
        try:
            self._handshake(process)
        except _Failure as failure:
            raise self._error(failure, " at start-up") from None

    def _handshake(self, process: _EngineProcess) -> None:
        start, probe = process.exchange([self._start_request, self._probe], self.start_timeout, START_TIMEOUT_ENV)
        if "error" in start:
            raise _Failure(f"refused to start a {self.rules.name} game", self._start_request, start)
        try:
            position = position_from_json(start.get("position"), "answer.position")
        except PositionError as error:
            raise _Failure(f"answered 'start' without a readable position ({error})", self._start_request,
                           start) from None
        if position != self._start_position:
            raise _Failure(f"answered 'start' with another position than the start of {self.rules.name}",
                           self._start_request, start)
        afterstates = generate(PositionBatch.from_positions([self._start_position]),
                               np.array([_PROBE_DICE], dtype=np.int8))
        self._row(afterstates, 0, self._probe, probe)

    def _stop(self, graceful: bool) -> None:
        process, self._process = self._process, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if process is not None:
            process.stop(graceful)

    def _error(self, failure: _Failure, context: str = "") -> BotError:
        """Stop the engine (its state is unknown now); the BotError describing ``failure``."""
        process = self._process
        self._stop(graceful=False)
        parts = [f"bot {self.name!r}: the engine {failure.why}{context}"]
        if failure.request is not None:
            parts.append(f"request: {_clip(_dumps(failure.request))}")
        if failure.answer is not None:
            parts.append(f"answer: {_clip(failure.answer)}")
        tail = list(process.stderr_tail) if process is not None else []
        parts.append("engine stderr, last lines: " + " | ".join(tail) if tail else "engine stderr: nothing")
        return BotError("; ".join(parts))

    def _exchange(self, requests: list[dict]) -> list[dict]:
        """The answers to ``requests``, restarting a dead engine once (:data:`MAX_RESTARTS`)."""
        while True:
            if self._process is None:
                raise BotError(f"bot {self.name!r}: its engine was stopped (closed, or after an earlier error)")
            try:
                return self._process.exchange(requests, self.move_timeout, MOVE_TIMEOUT_ENV)
            except _Failure as failure:
                if not failure.died or self.restarts >= MAX_RESTARTS:
                    raise self._error(failure, " again after its restart" if failure.died else "") from None
                self.restarts += 1
                dead = self._process
                self._stop(graceful=False)  # its stderr reader has finished: the tail is complete
                tail = " | ".join(dead.stderr_tail)
                print(f"{self.name}: the engine {failure.why}" + (f" (stderr: {tail})" if tail else "") +
                      "; restarting it and playing the batch again (only once: another death stops the match)",
                      file=sys.stderr)
                self._start()

    def close(self) -> None:
        self._stop(graceful=True)

    # -- moves ----------------------------------------------------------------------------------
    def choose(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        offsets = afterstates.offsets
        chosen = offsets[:-1].astype(np.int64)
        asked = np.flatnonzero(np.diff(offsets) > 1)
        if not asked.size:
            return chosen
        if afterstates.inputs is None or afterstates.dice is None:
            raise BotError(f"bot {self.name!r} needs the positions moved from and their dice (Afterstates.inputs "
                           "and .dice, set by tapa_ai.movegen.generate); these afterstates were built without them")
        requests = [{"cmd": "best_move", "position": position_to_json(afterstates.inputs.position(index)),
                     "dice": [int(die) for die in afterstates.dice[index]]} for index in asked.tolist()]
        answers = self._exchange(requests)
        for index, request, answer in zip(asked.tolist(), requests, answers):
            try:
                chosen[index] = self._row(afterstates, index, request, answer)
            except _Failure as failure:
                raise self._error(failure) from None
        return chosen

    def _row(self, afterstates: Afterstates, index: int, request: dict, answer: dict) -> int:
        """The row of ``afterstates`` that the engine's answer to ``best_move`` plays; :class:`_Failure` if none."""
        if "error" in answer:
            raise _Failure("answered an error", request, answer)
        lo, hi = int(afterstates.offsets[index]), int(afterstates.offsets[index + 1])
        if "position" in answer:
            try:
                position = position_from_json(answer["position"], "answer.position")
            except PositionError as error:
                raise _Failure(f"answered a position that cannot be read ({error})", request, answer) from None
            if position.rules != self.rules:
                raise _Failure(f"answered a position of rule set {position.rules.name!r}, not {self.rules.name!r}",
                               request, answer)
            target = PositionBatch.from_positions([position])
            rows = afterstates.positions
            same = rows.turn[lo:hi] == target.turn[0]
            for name in _FIELDS:
                here, there = getattr(rows, name)[lo:hi], getattr(target, name)[0]
                same &= (here.reshape(hi - lo, -1) == there.reshape(1, -1)).all(axis=1)
            matches = np.flatnonzero(same)
            if matches.size != 1:
                legal = ", ".join(repr(afterstates.move_text(row)) for row in range(lo, hi))
                raise _Failure(f"answered an illegal move: its position is none of the {hi - lo} legal afterstates "
                               f"(legal moves: {_clip(legal)})", request, answer)
            return lo + int(matches[0])
        text = answer.get("move")
        if not isinstance(text, str):
            raise _Failure("answered neither a 'position' nor a 'move'", request, answer)
        moves = afterstates.moves_of(index)
        try:
            move = find_move(afterstates.inputs.position(index), afterstates.dice[index].tolist(), text, moves)
        except MoveTextError as error:
            raise _Failure(f"answered an illegal move ({error})", request, answer) from None
        return lo + [candidate.position for candidate in moves].index(move.position)

    # -- the cube -----------------------------------------------------------------------------------
    def _cube_request(self, positions: PositionBatch, situation, index: int) -> dict:
        position = positions.position(index)
        mover, receiver = position.turn, other(position.turn)
        owner = int(situation.owner[index])
        request = {"cmd": "cube", "position": position_to_json(position),
                   "cube": {"value": int(situation.value[index]),
                            "owner": None if owner == OWNER_CENTRED else mover if owner == OWNER_MOVER else receiver}}
        if not situation.money:
            length = int(situation.length)
            request["match"] = {"length": length,
                                "score": {mover: length - int(situation.away[index]),
                                          receiver: length - int(situation.opponent_away[index])},
                                "crawford": bool(situation.crawford_game[index])}
        return request

    def _cube(self, positions: PositionBatch, situation) -> Optional[list[tuple[dict, dict]]]:
        """(request, answer) of the engine's ``cube`` command for every position, or None: the passive cube."""
        if self.cube_mode == "passive" or len(positions) == 0:
            return None
        requests = [self._cube_request(positions, situation, index) for index in range(len(positions))]
        answers = self._exchange(requests)
        if self.cube_mode is None:
            if "error" in answers[0]:
                self.cube_mode = "passive"
                print(f"{self.name}: the engine answers no cube decisions ({_clip(str(answers[0]['error']))}); "
                      "this bot plays the passive cube (never doubles, always takes)", file=sys.stderr)
                return None
            self.cube_mode = "engine"
        for request, answer in zip(requests, answers):
            if "error" in answer:
                raise self._error(_Failure("answered an error to a cube request", request, answer))
        return list(zip(requests, answers))

    def _cube_answers(self, positions, situation, key: str, yes: str, no: str) -> Optional[np.ndarray]:
        pairs = self._cube(positions, situation)
        if pairs is None:
            return None
        out = np.zeros(len(pairs), dtype=bool)
        for index, (request, answer) in enumerate(pairs):
            value = answer.get(key)
            if value not in (yes, no):
                raise self._error(_Failure(f"answered a cube request without {key!r} {yes!r} or {no!r}", request,
                                           answer))
            out[index] = value == yes
        return out

    def offer_double(self, positions: PositionBatch, situation, rng: np.random.Generator) -> np.ndarray:
        answers = self._cube_answers(positions, situation, "action", "double", "no_double")
        return super().offer_double(positions, situation, rng) if answers is None else answers

    def accept_double(self, positions: PositionBatch, situation, rng: np.random.Generator) -> np.ndarray:
        answers = self._cube_answers(positions, situation, "response", "take", "pass")
        return super().accept_double(positions, situation, rng) if answers is None else answers
