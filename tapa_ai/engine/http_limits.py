"""What ``tapa-ai serve`` allows: who may call it (hosts, origins) and how much work it takes on (threads, queue, time).

- **Hosts** (:class:`AccessPolicy`): a request's ``Host`` must be an IP address, ``localhost`` (or a name
  under ``.localhost``), the name the server listens on, or one allowed by ``--allow-host`` (``*``: any).
  A web page that rebinds its own domain name to 127.0.0.1 (DNS rebinding) sends its domain as the Host,
  so it is refused; requests without a Host (HTTP/1.0 clients, not browsers) pass.
- **Origins**: no cross-origin access unless allowed. A request carrying an ``Origin`` (browsers send
  one with every cross-origin request and with same-origin POSTs) is answered only if it is the server's
  own (``http://`` + its Host) or allowed by ``--allow-origin`` (repeatable; ``*``: any); the CORS headers
  name it. POST bodies must be ``Content-Type: application/json``, which a foreign page cannot send
  without a preflight, and the preflight is refused unless the origin is allowed.
- **Work** (:class:`ServerLimits`): a fixed pool of ``threads`` workers takes connections from a queue of at
  most ``queue`` waiting ones; a connection that finds the queue full is answered 429 with
  ``Retry-After`` at once. The listen backlog is the pool plus the queue. A request must arrive whole
  (headers and body) within ``read_timeout`` seconds of its connection being taken up
  (:class:`DeadlineReader`: a client sending a byte every few seconds is cut off at that time), and its
  command may compute for at most ``command_timeout`` seconds (:mod:`tapa_ai.deadline`; then 503).
"""

from __future__ import annotations

import io
import ipaddress
import json
import queue
import socket
import threading
import time
from dataclasses import dataclass
from http.server import HTTPServer
from typing import Iterable, Optional

__all__ = ["ServerLimits", "AccessPolicy", "DeadlineReader", "RequestTimedOut", "PooledHTTPServer", "host_name"]


@dataclass(frozen=True)
class ServerLimits:
    """How much work the server takes on (module docstring); the defaults are ``tapa-ai serve``'s."""

    threads: int = 8
    """Worker threads answering requests (fixed: the server never starts more)."""
    queue: int = 64
    """Connections that may wait for a worker; one more is answered 429."""
    read_timeout: float = 10.0
    """Seconds within which a request's headers and body must have arrived."""
    command_timeout: Optional[float] = 30.0
    """Seconds one request's command may compute (None: no limit)."""
    retry_after: int = 1
    """Seconds a 429 answer asks the client to wait."""

    def __post_init__(self) -> None:
        for name, low, high in (("threads", 1, 256), ("queue", 0, 4096)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an integer {low}..{high}, got {value!r}")
        for name in ("read_timeout", "command_timeout"):
            value = getattr(self, name)
            if value is None and name == "command_timeout":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 86400:
                raise ValueError(f"{name} must be a number of seconds in (0, 86400], got {value!r}")


def host_name(host_header: str) -> str:
    """The name part of a ``Host`` header, lower case: ``"[::1]:8080"`` -> ``"::1"``, ``"A.b.:80"`` -> ``"a.b"``."""
    host = host_header.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 0 else host
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class AccessPolicy:
    """Which ``Host`` and ``Origin`` headers the server answers (module docstring)."""

    def __init__(self, served_host: str, allow_hosts: Iterable[str] = (), allow_origins: Iterable[str] = ()) -> None:
        self.allow_hosts = tuple(host_name(host) if host != "*" else "*" for host in allow_hosts)
        self.allow_origins = tuple(origin.rstrip("/") for origin in allow_origins)
        served = host_name(served_host)
        self._hosts = {"localhost", *self.allow_hosts} | ({served} if served and not _is_ip(served) else set())

    def host_problem(self, host_header: Optional[str]) -> Optional[str]:
        """Why a request with this ``Host`` is refused, or None if it is answered."""
        if host_header is None or "*" in self.allow_hosts:
            return None
        name = host_name(host_header)
        if _is_ip(name) or name in self._hosts or name.endswith(".localhost"):
            return None
        return (f"Host {host_header[:100]!r} is not a name this server answers to (it answers IP addresses, "
                f"localhost and the name it listens on, so that a web page cannot reach it by DNS rebinding); "
                f"start tapa-ai serve with --allow-host {name[:100]} to answer it")

    def origin_allowed(self, origin: str, host_header: Optional[str]) -> bool:
        """Whether a request carrying this ``Origin`` is answered: the server's own or an allowed one."""
        origin = origin.rstrip("/")
        if "*" in self.allow_origins or origin in self.allow_origins:
            return True
        return host_header is not None and origin.lower() == f"http://{host_header.strip().lower()}"

    def cors_origin(self, origin: Optional[str]) -> Optional[str]:
        """The ``Access-Control-Allow-Origin`` to send for a request from ``origin`` (None: none)."""
        if "*" in self.allow_origins:
            return "*"
        if origin is not None and origin.rstrip("/") in self.allow_origins:
            return origin.rstrip("/")
        return None


class RequestTimedOut(TimeoutError):
    """The request did not arrive whole within the read time limit."""


class DeadlineReader(io.RawIOBase):
    """A socket's reading side that gives up ``deadline`` (``time.monotonic()``) has passed, however the
    bytes trickle in: each read waits at most the time left."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self.sock = sock
        self.deadline = deadline
        self.expired = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.expired = True
            raise RequestTimedOut("the request did not arrive within the time limit")
        self.sock.settimeout(left)
        try:
            return self.sock.recv_into(buffer)
        except socket.timeout:
            self.expired = True
            raise RequestTimedOut("the request did not arrive within the time limit") from None


class PooledHTTPServer(HTTPServer):
    """An HTTP server whose connections are answered by a fixed pool of threads fed by a bounded queue.

    The thread calling :meth:`serve_forever` only accepts connections and queues them; a connection that
    finds the queue full gets a 429 (:meth:`refuse_busy`, from one more thread) without waiting for a worker.
    """

    allow_reuse_address = True

    def __init__(self, address, handler, limits: ServerLimits) -> None:
        self.limits = limits
        self.request_queue_size = limits.threads + limits.queue  # the listen backlog
        self._connections: queue.Queue = queue.Queue(maxsize=limits.queue)
        self._workers: list[threading.Thread] = []
        self.busy_refusals = 0
        """Connections answered 429 since the start."""
        super().__init__(address, handler)
        for index in range(limits.threads):
            worker = threading.Thread(target=self._work, name=f"tapa-ai-http-{index}", daemon=True)
            worker.start()
            self._workers.append(worker)
        # One more thread answers the 429s, so that accepting never waits for a refused client.
        self._refusals: queue.Queue = queue.Queue(maxsize=64)
        self._refuser = threading.Thread(target=self._refuse, name="tapa-ai-http-busy", daemon=True)
        self._refuser.start()

    def process_request(self, request, client_address) -> None:
        try:
            self._connections.put_nowait((request, client_address))
        except queue.Full:
            self.busy_refusals += 1
            try:
                self._refusals.put_nowait(request)
            except queue.Full:  # even the refusals are backed up: close at once
                self.shutdown_request(request)

    def _refuse(self) -> None:
        while True:
            request = self._refusals.get()
            if request is None:
                return
            self.refuse_busy(request)

    def _work(self) -> None:
        while True:
            item = self._connections.get()
            if item is None:
                return
            request, client_address = item
            try:
                self.finish_request(request, client_address)
            except Exception:  # noqa: BLE001 - one connection's fault never stops a worker
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def refuse_busy(self, request: socket.socket) -> None:
        """Answer 429 Too Many Requests at once, without reading the request (what was sent is dropped)."""
        body = json.dumps({"error": f"the server is busy ({self.limits.threads} requests in progress and "
                                    f"{self.limits.queue} waiting); retry after {self.limits.retry_after} s"})
        data = body.encode() + b"\n"
        head = (f"HTTP/1.0 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\n"
                f"Content-Length: {len(data)}\r\nRetry-After: {self.limits.retry_after}\r\n"
                f"Cache-Control: no-store\r\nConnection: close\r\n\r\n").encode()
        try:
            # Read the request's head first (briefly): a client still sending when its connection closes
            # would see a reset instead of the answer.
            request.settimeout(0.5)
            received = b""
            try:
                while b"\r\n\r\n" not in received and len(received) < 65536:
                    chunk = request.recv(65536)
                    if not chunk:
                        break
                    received += chunk
            except OSError:  # nothing more within the wait, or the client has gone
                pass
            request.sendall(head + data)
        except OSError:
            pass
        finally:
            self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        try:
            self._refusals.put(None, timeout=5)
        except queue.Full:
            pass
        for _ in self._workers:
            try:
                self._connections.put(None, timeout=5)
            except queue.Full:
                break
        for worker in self._workers:
            worker.join(5)
        self._workers = []
