"""A ``tapa-ai serve`` server for a test: on a free port of 127.0.0.1, serving in a thread, shut down after."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from tapa_ai.engine.http import EngineHTTPServer, make_server, serve_in_thread


@contextmanager
def serving(**options) -> Iterator[EngineHTTPServer]:
    """The server of :func:`~tapa_ai.engine.http.make_server`'s ``options`` (``bot=``, ``engine=`` ...), quiet,
    serving for the ``with`` block; then shut down, closed and its thread joined."""
    server = make_server("127.0.0.1", 0, quiet=True, **options)
    thread = serve_in_thread(server)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
