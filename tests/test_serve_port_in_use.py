"""``tapa-ai serve`` on a port in use (issue 61 found 10): one line naming the port and ``--port``, exit 2, no
traceback; the server's ``server_close`` is safe on a server whose bind failed (tapa_ai/engine/http_limits.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest

from tapa_ai.engine.http import make_server
from tapa_ai.engine.protocol import Engine


@pytest.fixture
def taken_port():
    """A port this test listens on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


def test_serve_on_a_port_in_use_says_so_in_one_line(taken_port):
    code = "import sys; from tapa_ai.cli import main; sys.exit(main(sys.argv[1:]))"
    result = subprocess.run([sys.executable, "-c", code, "serve", "--port", str(taken_port), "--quiet"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"tapa-ai serve: port {taken_port} is in use:"), lines[0]
    assert "choose another with --port" in lines[0] and "Traceback" not in result.stderr


def test_a_server_whose_bind_failed_closes_cleanly(taken_port):
    engine = Engine("reference")
    before = {thread.name for thread in threading.enumerate()}
    with pytest.raises(OSError) as error:
        make_server("127.0.0.1", taken_port, engine=engine, quiet=True)
    assert not isinstance(error.value, AttributeError) and error.value.errno is not None
    left = {thread.name for thread in threading.enumerate()} - before
    assert not any(name.startswith("tapa-ai-http") for name in left), left  # no worker or intake thread


def test_server_close_twice_is_safe():
    server = make_server("127.0.0.1", 0, engine=Engine("reference"), quiet=True)
    server.server_close()
    server.server_close()
    assert server.socket.fileno() == -1
