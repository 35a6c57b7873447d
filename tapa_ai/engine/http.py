"""``tapa-ai serve``: the engine protocol as JSON over HTTP (standard library only).

One request, one response; the commands and their JSON are those of the
JSON-lines protocol (docs/protocol.md, "HTTP"):

===============================  ==================================================================
``POST /``                       body: one request object with its ``"cmd"``
``POST /v1/<cmd>``               body: the request object without ``"cmd"`` (``{}`` or empty for none)
``GET /health``                  ``{"status": "ok", "bot": ..., "variant": ..., "plies": ..., ...}`` (no file paths)
``GET /``                        the web board (``tapa_ai/web/index.html``; docs/web.md)
``GET /web/<file>``              the board's scripts and style sheet
``GET /model/<variant>.*``       the variant's exported network for the board, ``.json`` or ``.npz``
``GET /model/<name>-met.json``   a preset rotation's match equity table (``tavli``, ``tabla``), for the board
``GET /v1/rotation-met``         ``?rotation=tabla`` or ``?rotation=backgammon,gulbara,tapa``: any rotation's table
``GET /v1/variants``             the family's variants and the preset rotations
``OPTIONS *``                    CORS preflight: 204 with the ``Access-Control-*`` headers (allowed origins only)
===============================  ==================================================================

Status codes: 200 answer, 400 bad request (the body says what is wrong, as
``{"error": ...}``), 403 a Host or Origin this server does not answer, 404
unknown path, 405 wrong method, 408 request not received within the read
time limit, 411 no Content-Length, 413 body over
:data:`~tapa_ai.engine.protocol.MAX_REQUEST_BYTES`, 415 a POST body that is
not ``application/json``, 429 busy (``Retry-After``), 500 internal error
(``{"error": "internal error", "error_id": ...}``; the traceback is logged
under that id), 503 the command ran past its time limit. Every response but
the board's files, errors included, is JSON.

Safe by default (:mod:`tapa_ai.engine.http_limits`): it listens on 127.0.0.1,
answers only localhost names, IP addresses and its own name as ``Host`` (no
DNS rebinding), gives no cross-origin access unless ``allow_origins`` (the CLI's
``--allow-origin``) names the origin, and bounds its work (a fixed pool of
threads, a bounded queue, read and command time limits). The one
:class:`~tapa_ai.engine.protocol.Engine` is shared; its model evaluates one
request at a time (a lock).
"""

from __future__ import annotations

import io
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any, Iterable, Optional, Union

from .. import __version__
from ..quoting import quoted
from .http_limits import (AccessPolicy, DeadlineReader, PooledHTTPServer, RequestTimedOut, ServerLimits,
                          late_message)
from .protocol import _UNWRITABLE, HTTP_MAX_ROLLOUT_GAMES, MAX_REQUEST_BYTES, Engine, _dumps, internal_error
from .web_board import (ROTATION_MET_QUERY_PATH, VARIANTS_PATH, ModelFiles, WebFileError, engine_checkpoint_of,
                        met_path_of, model_path_of, static_file, variants_json)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DRAIN_LIMIT = 16 * 1024 * 1024
"""An over-long body up to this size is read and dropped before the 413, so the client sees the answer."""
_PATHS = re.compile(r"(?<=[:=])[^@,\s]*[/\\]")
"""Directories inside a bot spec (``net:/home/me/runs/x.pt@1ply`` -> ``net:x.pt@1ply``)."""


SCHEMAS_PATH = "/v1/schemas/"
"""Where ``tapa-ai serve`` publishes the declared schemas (``GET /v1/schemas/protocol.json``)."""


def without_directories(spec: Optional[str]) -> Optional[str]:
    """A bot spec with its files' directories left out (what ``/health`` says of the model)."""
    return spec if spec is None else _PATHS.sub("", spec)


class EngineHTTPServer(PooledHTTPServer):
    """An HTTP server answering engine requests with one shared :class:`Engine`."""

    def __init__(self, address: tuple[str, int], engine: Engine,
                 allow_origins: Union[str, Iterable[str], None] = (), quiet: bool = False,
                 models: Optional[ModelFiles] = None, allow_hosts: Iterable[str] = (),
                 limits: Optional[ServerLimits] = None) -> None:
        self.engine = engine
        if isinstance(allow_origins, str):
            allow_origins = (allow_origins,)
        self.policy = AccessPolicy(address[0], allow_hosts, allow_origins or ())
        self.quiet = quiet
        self.models = models or ModelFiles(engine_checkpoint=engine_checkpoint_of(engine))
        """The web board's models (``GET /model/<variant>.json``), exported on first request."""
        self.max_body = MAX_REQUEST_BYTES
        super().__init__(address, EngineRequestHandler, limits or ServerLimits())

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class EngineRequestHandler(BaseHTTPRequestHandler):
    server: EngineHTTPServer
    server_version = f"tapa-ai/{__version__}"

    def setup(self) -> None:
        super().setup()
        # What the intake has read of the request (all of it, as a rule), then, if more is to come, the
        # socket's bytes until the read time limit (counted from the connection's accept, however slowly).
        self.rfile.close()
        arrival = self.server.arrival()
        self._reader = DeadlineReader(None if arrival.whole else self.connection, arrival.deadline, arrival.data)
        self.rfile = io.BufferedReader(self._reader)
        self._answered = False
        # What the base class sets once a request line is parsed (a 408 may come before).
        self.requestline, self.request_version, self.command, self.headers = "", "HTTP/1.0", None, None

    def handle_one_request(self) -> None:
        super().handle_one_request()
        if self._reader.expired and not self._answered:  # the headers did not arrive in time
            self.close_connection = True
            self._reply_quietly(408, {"error": late_message(self.server.limits.read_timeout)})

    # -- responses ------------------------------------------------------------------------
    def _cors_headers(self) -> None:
        origin = self.server.policy.cors_origin(self.headers.get("Origin") if self.headers is not None else None)
        if origin:
            self.send_header("Access-Control-Allow-Origin", origin)
            if origin != "*":
                self.send_header("Vary", "Origin")

    def _send_json(self, status: int, body: Any, extra_headers: Optional[dict[str, str]] = None) -> None:
        text = body if isinstance(body, str) else _dumps(body)
        data = (text + "\n").encode("utf-8")
        self._answered = True
        self.connection.settimeout(self.server.limits.read_timeout)  # a client that never reads is let go
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self._cors_headers()
        for name, value in (extra_headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_file(self, data: bytes, content_type: str, cache: str = "no-cache") -> None:
        self._answered = True
        self.connection.settimeout(self.server.limits.read_timeout)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", cache)
        self.send_header("X-Content-Type-Options", "nosniff")
        self._cors_headers()
        self.end_headers()
        self.wfile.write(data)

    def _reply_quietly(self, status: int, body: Any) -> None:
        """Answer, ignoring a client that has gone away."""
        try:
            self._send_json(status, body)
        except OSError:
            pass

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """The base class's errors (malformed request line, unsupported method...) as JSON too."""
        self.close_connection = True
        self._reply_quietly(code, {"error": message or self.responses.get(code, ("error",))[0]})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if not self.server.quiet:
            sys.stderr.write(f"{self.address_string()} - {format % args}\n")

    # -- methods -------------------------------------------------------------------------------
    def _guarded(handler):  # noqa: N805 - a decorator of the methods below
        """Check Host and Origin first; any fault of the server's own answers 500 with a logged error id."""

        def method(self) -> None:
            try:
                if self._refused():
                    return
                handler(self)
            except RequestTimedOut:
                self.close_connection = True
                self._reply_quietly(408, {"error": late_message(self.server.limits.read_timeout)})
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            except Exception:  # noqa: BLE001 - never a traceback to the client; the log has it
                self.close_connection = True
                answer = internal_error(f"answering {self.command} {quoted(self.path)}", self.server.engine.log)
                if not self._answered:
                    self._reply_quietly(500, answer)

        method.__name__ = handler.__name__
        method.__doc__ = handler.__doc__
        return method

    def _refused(self) -> bool:
        """Answer 403 (and return True) for a Host or Origin this server does not answer."""
        policy = self.server.policy
        host = self.headers.get("Host")
        problem = policy.host_problem(host)
        origin = self.headers.get("Origin")
        if problem is None and origin is not None and not policy.origin_allowed(origin, host):
            problem = (f"cross-origin requests from {quoted(origin)} are not allowed; start tapa-ai serve with "
                       f"--allow-origin {origin[:100]} to allow that page to use this engine")
        if problem is None:
            return False
        self.close_connection = True
        self._send_json(403, {"error": problem})
        return True

    @_guarded
    def do_OPTIONS(self) -> None:  # noqa: N802 - http.server's naming
        self._answered = True
        self.send_response(204)
        self._cors_headers()
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "Content-Type")
        self.send_header("Access-Control-Max-Age", "86400")
        self.send_header("Allow", "GET, POST, OPTIONS")
        self.send_header("Content-Length", "0")
        self.end_headers()

    @_guarded
    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        if path in ("/health", "/v1/health"):
            info = self.server.engine.describe()
            info["bot"] = without_directories(info.get("bot"))
            self._send_json(200, {"status": "ok", "service": "tapa-ai engine", "version": __version__, **info})
        elif path.startswith(SCHEMAS_PATH):
            self._get_schema(path[len(SCHEMAS_PATH):])
        elif path == VARIANTS_PATH:
            self._send_json(200, variants_json())
        elif path == ROTATION_MET_QUERY_PATH:
            self._get_rotation_met()
        elif path in ("/", "/index.html") or path.startswith("/web/") or model_path_of(path) is not None or \
                met_path_of(path) is not None:
            self._get_board_file(path)
        elif self._command_of(path) is not None:
            self._method_not_allowed(f"{path} takes POST with a JSON request body")
        else:
            self._not_found(path)

    @_guarded
    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        command = self._command_of(path)
        if command is None:
            if path in ("/health", "/v1/health"):
                self._method_not_allowed(f"{path} takes GET")
            else:
                self._not_found(path)
            return
        content_type = self.headers.get("Content-Type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            self.close_connection = True
            self._send_json(415, {"error": f"send the request as Content-Type: application/json "
                                           f"(got {quoted(content_type)})"})
            return
        body = self._read_body()
        if body is None:
            return
        if command == "":
            status, answer = self.server.engine.respond_text(body)
        else:
            status, answer = self._respond_to_path_command(command, body)
        self._send_json(status, answer)

    def _get_schema(self, name: str) -> None:
        """``GET /v1/schemas/<name>.json``: a declared schema (tapa_ai/schemas/, docs/schemas.md), for clients."""
        from ..schema import load_schema, schema_names

        stem = name[:-len(".json")] if name.endswith(".json") else None
        if stem not in schema_names():
            self._send_json(404, {"error": f"no schema {quoted(name, 60)}; schemas: "
                                           f"{', '.join(n + '.json' for n in schema_names())}"})
            return
        self._send_json(200, load_schema(stem))

    def _get_rotation_met(self) -> None:
        """``GET /v1/rotation-met?rotation=NAME|GAME,GAME,...``: a rotation's match equity table (400, one line,
        for a rotation that cannot be)."""
        from urllib.parse import parse_qs

        from ..rules.rotations import RotationError, parse_rotation

        query = parse_qs(self.path.split("?", 1)[1] if "?" in self.path else "", keep_blank_values=True)
        unknown = sorted(set(query) - {"rotation"})
        if unknown or len(query.get("rotation", [])) != 1:
            self._send_json(400, {"error": "rotation-met: give one ?rotation= (a preset's name, tavli or tabla, or the "
                                           "games comma-separated, backgammon,gulbara,tapa)"
                                           + (f"; unknown parameter(s) {quoted(unknown, 60)}" if unknown else "")})
            return
        try:
            rotation = parse_rotation(query["rotation"][0])
        except RotationError as error:
            self._send_json(400, {"error": f"rotation-met: {error}"})
            return
        self._send_file(self.server.models.rotation_met(rotation), "application/json; charset=utf-8")

    def _get_board_file(self, path: str) -> None:
        """The web board's page, its files and its models (:mod:`tapa_ai.engine.web_board`)."""
        try:
            model = model_path_of(path)
            if met_path_of(path) is not None:
                self._send_file(self.server.models.rotation_met(met_path_of(path)), "application/json; charset=utf-8")
            elif model is not None:
                variant, kind = model
                npz, text = self.server.models.files(variant)
                if kind == "npz":
                    self._send_file(npz, "application/octet-stream")
                else:
                    self._send_file(text, "application/json; charset=utf-8")
            elif path.startswith("/web/"):
                self._send_file(*static_file(path[len("/web/"):]))
            else:
                self._send_file(*static_file("index.html"))
        except WebFileError as error:
            self._send_json(error.status, {"error": str(error)})

    @_guarded
    def _method(self) -> None:
        self._method_not_allowed(f"method {self.command} is not used; POST requests, GET /health")

    do_PUT = do_DELETE = do_PATCH = do_HEAD = _method
    del _guarded

    # -- helpers -------------------------------------------------------------------------
    def _command_of(self, path: str) -> Optional[str]:
        """``""`` for ``POST /`` (the body names the command), the command of ``/v1/<cmd>``, else None."""
        if path == "/":
            return ""
        if path.startswith("/v1/"):
            name = path[len("/v1/"):].strip("/")
            if name in self.server.engine.COMMANDS:
                return name
        return None

    def _not_found(self, path: str) -> None:
        commands = ", ".join(f"/v1/{name}" for name in self.server.engine.COMMANDS)
        self._send_json(404, {"error": f"no such path {quoted(path)}; use POST / (the body names its 'cmd'), "
                                       f"POST {commands}, GET /health, or GET / (the web board)"})

    def _method_not_allowed(self, why: str) -> None:
        self._send_json(405, {"error": why}, {"Allow": "GET, POST, OPTIONS"})

    def _read_body(self) -> Optional[bytes]:
        """The request body, or None after answering 411 / 400 / 413 for a missing, bad or too long one."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            self._send_json(411, {"error": "send the body with a Content-Length (chunked bodies are not read)"})
            return None
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            self._send_json(411, {"error": "missing Content-Length header: send the JSON request as the body"})
            return None
        try:
            length = int(length_text)
            if length < 0:
                raise ValueError
        except ValueError:
            self.close_connection = True
            self._send_json(400, {"error": f"bad Content-Length {quoted(length_text, 40)}"})
            return None
        if length > MAX_REQUEST_BYTES:
            self.close_connection = True
            if length <= DRAIN_LIMIT:
                self._drain(length)
            self._send_json(413, {"error": f"request body is {length} bytes, more than the limit of "
                                           f"{MAX_REQUEST_BYTES} (a position takes about 400)"})
            return None
        return self.rfile.read(length)

    def _drain(self, length: int) -> None:
        try:
            while length > 0:
                chunk = self.rfile.read(min(length, 1 << 16))
                if not chunk:
                    return
                length -= len(chunk)
        except OSError:
            pass

    def _respond_to_path_command(self, command: str, body: bytes) -> tuple[int, str]:
        """``POST /v1/<cmd>``: the body is the request without its ``cmd`` (which may repeat the path's)."""
        if not body.strip():
            request: Any = {}
        else:
            try:
                request = json.loads(body.decode("utf-8"))
            except UnicodeDecodeError as error:
                return 400, _dumps({"error": f"request is not UTF-8 text ({error.reason} at byte "
                                                 f"{error.start})"})
            except (ValueError, RecursionError) as error:  # ValueError: also over-long integers
                return 400, _dumps({"error": f"request is not valid JSON: {error}"})
        if not isinstance(request, dict):
            return 400, _dumps({"error": f"request must be a JSON object, got {type(request).__name__}"})
        if request.get("cmd", command) != command:
            return 400, _dumps({"error": f"the body's cmd {quoted(request['cmd'], 40)} differs from the path's "
                                             f"{quoted(command)}; leave cmd out of the body"})
        status, answer = self.server.engine.respond({**request, "cmd": command})
        try:
            return status, _dumps(answer)
        except (TypeError, ValueError):
            return 400, _dumps(_UNWRITABLE)


def make_server(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, engine: Optional[Engine] = None,
                bot: Any = None, generator: Optional[str] = None, allow_origins: Union[str, Iterable[str], None] = (),
                quiet: bool = False, max_rollout_games: int = HTTP_MAX_ROLLOUT_GAMES,
                models: Optional[ModelFiles] = None, allow_hosts: Iterable[str] = (),
                limits: Optional[ServerLimits] = None) -> EngineHTTPServer:
    """A bound (not yet serving) server; ``port=0`` picks a free port (see ``server.url``).

    ``allow_origins``: web origins (``"https://board.example"``, ``"*"`` for any) allowed to call it from
    a browser besides its own; ``allow_hosts``: ``Host`` names it answers besides IP addresses, localhost
    and the name it listens on (``"*"``: any); ``limits``: threads, queue and time limits
    (:class:`~tapa_ai.engine.http_limits.ServerLimits`; its ``command_timeout`` applies to a new engine).
    ``max_rollout_games``: the most games one ``rollout`` request may play (any client may ask).
    ``models``: where the web board's models come from (default: ``./checkpoints/<variant>.pt``, else the
    shipped models installed with the package, and the engine's own model for its variant; :class:`~tapa_ai.engine.web_board.ModelFiles`).
    """
    limits = limits or ServerLimits()
    engine = engine or Engine(generator, bot, max_rollout_games=max_rollout_games,
                              command_timeout=limits.command_timeout)
    return EngineHTTPServer((host, port), engine, allow_origins, quiet, models, allow_hosts, limits)


def serve_in_thread(server: EngineHTTPServer) -> threading.Thread:
    """Start ``server.serve_forever`` in a daemon thread (stop with ``server.shutdown()``)."""
    thread = threading.Thread(target=server.serve_forever, name="tapa-ai-http", daemon=True)
    thread.start()
    return thread


def run(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, bot: Any = None, generator: Optional[str] = None,
        allow_origins: Iterable[str] = (), quiet: bool = False, max_rollout_games: int = HTTP_MAX_ROLLOUT_GAMES,
        allow_hosts: Iterable[str] = (), limits: Optional[ServerLimits] = None) -> int:
    """Serve until interrupted (``tapa-ai serve``); returns the exit code."""
    server = make_server(host, port, bot=bot, generator=generator, allow_origins=allow_origins, quiet=quiet,
                         max_rollout_games=max_rollout_games, allow_hosts=allow_hosts, limits=limits)
    info = server.engine.describe()
    model = f"bot {info['bot']} ({info['variant']}, {info['plies']}-ply)" if info["bot"] else "no model (--bot)"
    limits = server.limits
    origins = ", ".join(server.policy.allow_origins) or "none but its own"
    print(f"tapa-ai serve: listening on {server.url} with {model}; the board: open {server.url}/ in a browser; "
          f"GET {server.url}/health", file=sys.stderr, flush=True)
    print(f"tapa-ai serve: cross-origin access: {origins}; {limits.threads} threads, {limits.queue} waiting at "
          f"most, {limits.read_timeout:g} s to send a request, "
          f"{'no limit' if limits.command_timeout is None else f'{limits.command_timeout:g} s'} per command",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
