"""``tapa-ai serve``: the engine's commands as JSON over HTTP, and the web board (docs/protocol.md#http)."""

from __future__ import annotations

import argparse
import errno

from ..errors import TapaError


def add_parser(subparsers) -> None:
    """The ``serve`` command on ``subparsers`` (``tapa-ai``'s)."""
    serve = subparsers.add_parser("serve", help="the engine's commands as JSON over HTTP (docs/protocol.md#http)")
    serve.add_argument("--port", type=int, default=8080, help="TCP port (default 8080; 0 picks a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine "
                       "only; 0.0.0.0 opens it to the network)")
    serve.add_argument("--bot", metavar="SPEC", help="the model: net:PATH or net:PATH@Nply (as engine --bot)")
    serve.add_argument("--generator", choices=["reference", "vectorized"], default=None,
                       help="default move generator (default: vectorized when available)")
    serve.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                       help="let web pages of ORIGIN (e.g. https://board.example; '*' for any) call the engine "
                       "from a browser; repeatable (default: none, only the server's own page, the board)")
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="answer requests whose Host is NAME ('*' for any); repeatable (default: IP addresses, "
                       "localhost and the --host name only, so a web page cannot reach it by DNS rebinding)")
    serve.add_argument("--threads", type=int, default=8, help="worker threads answering requests (default 8)")
    serve.add_argument("--queue", type=int, default=64,
                       help="connections that may wait for a thread; more get 429 with Retry-After (default 64)")
    serve.add_argument("--read-timeout", type=float, default=10.0, metavar="S",
                       help="seconds a client has to send a whole request (default 10)")
    serve.add_argument("--command-timeout", type=float, default=30.0, metavar="S",
                       help="seconds one request may compute, then 503 (default 30; 0: no limit)")
    serve.add_argument("--max-rollout-games", type=int, default=2 * 1296, metavar="N",
                       help="most games one rollout request may play, games a move times the moves (default 2592)")
    serve.add_argument("--quiet", action="store_true", help="no request log on stderr")
    serve.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    from .http import run as run_server
    from .http_limits import ServerLimits
    from .protocol import RequestError

    if not 0 <= args.port <= 65535:
        raise TapaError(f"--port must be 0..65535 (0 picks a free port), got {args.port}")
    if args.max_rollout_games < 0:
        raise RequestError(f"--max-rollout-games {args.max_rollout_games}: must be 0 (no rollouts) or more")
    try:
        limits = ServerLimits(threads=args.threads, queue=args.queue, read_timeout=args.read_timeout,
                              command_timeout=args.command_timeout or None)
    except ValueError as error:
        raise RequestError(f"--{str(error).replace('_', '-')}") from None
    try:
        return run_server(args.host, args.port, bot=args.bot, generator=args.generator,
                          allow_origins=args.allow_origin, quiet=args.quiet, max_rollout_games=args.max_rollout_games,
                          allow_hosts=args.allow_host, limits=limits)
    except OSError as error:
        if isinstance(error, TapaError):
            raise
        if error.errno == errno.EADDRINUSE:
            raise TapaError(f"port {args.port} is in use: another program (perhaps another tapa-ai serve) listens "
                            f"on {args.host}:{args.port}; choose another with --port (0 picks a free one)") from None
        raise TapaError(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}") from None
