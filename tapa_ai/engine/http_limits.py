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
- **Work** (:class:`ServerLimits`): accepted connections go to one intake thread, which reads every request
  whole (headers and body, all connections at once) before a worker sees it, so a client that sends nothing, or
  trickles a byte a second, holds no worker: it is answered 408 when ``read_timeout`` seconds have passed
  since its connection was accepted, however the bytes trickle (the deadline bounds the whole read, not
  each ``recv``). The intake holds at most ``connections`` connections; one more lets the oldest go (429).
  A request that has arrived goes to a fixed pool of ``threads`` workers, with at most ``queue`` requests
  waiting for one; a request that finds them all taken is answered 429 with ``Retry-After`` at once. Its
  command may compute for at most ``command_timeout`` seconds (:mod:`tapa_ai.deadline`; then 503).
"""

from __future__ import annotations

import collections
import io
import ipaddress
import json
import queue
import selectors
import socket
import threading
import time
from dataclasses import dataclass
from http.server import HTTPServer
from typing import Iterable, Optional, Union

from ..quoting import quoted

__all__ = ["ServerLimits", "AccessPolicy", "DeadlineReader", "RequestTimedOut", "PooledHTTPServer", "host_name",
           "Arrival", "request_end", "late_message"]


@dataclass(frozen=True)
class ServerLimits:
    """How much work the server takes on (module docstring); the defaults are ``tapa-ai serve``'s."""

    threads: int = 8
    """Worker threads answering requests (fixed: the server never starts more)."""
    queue: int = 64
    """Requests (arrived whole) that may wait for a worker; one more is answered 429."""
    read_timeout: float = 10.0
    """Seconds from a connection's accept within which its request's headers and body must have arrived."""
    command_timeout: Optional[float] = 30.0
    """Seconds one request's command may compute (None: no limit)."""
    retry_after: int = 1
    """Seconds a 429 answer asks the client to wait."""
    connections: int = 1024
    """Connections whose requests are still arriving that the intake holds; one more lets the oldest go (429)."""

    def __post_init__(self) -> None:
        for name, low, high in (("threads", 1, 256), ("queue", 0, 4096), ("connections", 1, 16384)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an integer {low}..{high}, got {quoted(value)}")
        for name in ("read_timeout", "command_timeout"):
            value = getattr(self, name)
            if value is None and name == "command_timeout":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 86400:
                raise ValueError(f"{name} must be a number of seconds in (0, 86400], got {quoted(value)}")


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
        return (f"Host {quoted(host_header)} is not a name this server answers to (it answers IP addresses, "
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


def late_message(read_timeout: float) -> str:
    """The error of a 408: the request did not arrive whole in time."""
    return f"the request did not arrive within {read_timeout:g} s"


class DeadlineReader(io.RawIOBase):
    """A request's bytes: first ``prefix`` (what the intake has read), then the socket's (none when ``sock`` is
    None) until ``deadline`` (``time.monotonic()``) has passed, however the bytes trickle in: each read waits
    at most the time left."""

    def __init__(self, sock: Optional[socket.socket], deadline: float, prefix: bytes = b"") -> None:
        super().__init__()
        self.sock = sock
        self.deadline = deadline
        self.prefix = memoryview(prefix)
        self.expired = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if len(self.prefix):
            count = min(len(buffer), len(self.prefix))
            buffer[:count] = self.prefix[:count]
            self.prefix = self.prefix[count:]
            return count
        if self.sock is None:
            return 0
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


HEAD_LIMIT = 2 * 65536
"""Bytes of a request's head the intake reads; a longer head goes to a worker as it is (which answers 414/431)."""
LINGER = 1.0
"""Seconds the intake keeps reading (and dropping) from a connection it has answered, before closing it: a
connection closed with unread bytes is reset, and the client may lose the answer."""


def request_end(data: Union[bytes, bytearray], max_body: int) -> Optional[tuple[int, bool]]:
    """Where the first request in ``data`` ends: None while more is needed, else ``(end, whole)``.

    ``whole``: ``data[:end]`` is the request, head and body (a ``Content-Length`` of at most ``max_body``,
    or none). Otherwise the head is ``data[:end]`` and a worker reads the rest from the socket: a body of
    another kind (chunked, a bad or too long length, which the handler answers 411/400/413), a head over
    :data:`HEAD_LIMIT`, or a first line that is not an ``HTTP/1.x`` request line (the handler answers it).
    """
    line_end = data.find(b"\n")
    if line_end < 0:
        return (len(data), False) if len(data) > HEAD_LIMIT else None
    words = bytes(data[:line_end]).split()
    if len(words) != 3 or not words[2].startswith(b"HTTP/"):
        return line_end + 1, False
    ends = [found for found in (data.find(b"\n\r\n", line_end), data.find(b"\n\n", line_end)) if found >= 0]
    if not ends:
        return (len(data), False) if len(data) > HEAD_LIMIT else None
    head_end = min(ends) + (3 if data[min(ends) + 1] == 13 else 2)
    length_text = chunked = None
    for line in bytes(data[line_end + 1:head_end]).splitlines():
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length" and length_text is None:
            length_text = value.strip()
        elif name == b"transfer-encoding" and chunked is None:
            chunked = b"chunked" in value.lower()
    if chunked:
        return head_end, False
    if length_text is None:
        return head_end, True
    try:
        length = int(length_text)
    except ValueError:
        return head_end, False
    if not 0 <= length <= max_body:
        return head_end, False
    return (head_end + length, True) if len(data) >= head_end + length else None


@dataclass
class Arrival:
    """A connection and what the intake has read of its request."""

    sock: socket.socket
    address: tuple
    deadline: float
    """``time.monotonic()`` by which the request must have arrived whole."""
    data: bytes = b""
    whole: bool = False
    """``data`` is the whole request (else a worker reads the rest from ``sock``, by ``deadline``)."""


class PooledHTTPServer(HTTPServer):
    """An HTTP server whose requests are read by one intake thread and answered by a fixed pool of workers.

    The thread calling :meth:`serve_forever` only accepts connections and hands them to the intake; the
    intake reads each request whole, for all connections at once, before queueing it for a worker, answers
    408 itself to a request not arrived within the read time limit of its accept, and 429 with
    ``Retry-After`` to one that finds the workers and the queue taken, at once. So no worker ever waits
    for a client's bytes (module docstring).
    """

    allow_reuse_address = True
    max_body = 65536
    """The longest body the intake reads for a worker; a longer one is the handler's to refuse (413)."""

    def __init__(self, address, handler, limits: ServerLimits) -> None:
        self.limits = limits
        self.request_queue_size = max(128, limits.threads + limits.queue)  # the listen backlog
        self._requests: queue.Queue = queue.Queue()
        self._slots = threading.BoundedSemaphore(limits.threads + limits.queue)
        """Requests in progress or waiting: taken by the intake before queueing one, given back when done."""
        self._current = threading.local()
        self._accepted: collections.deque = collections.deque()
        self._wake_read, self._wake_write = socket.socketpair()
        for end in (self._wake_read, self._wake_write):
            end.setblocking(False)
        self._closing = False
        self._workers: list[threading.Thread] = []
        self.busy_refusals = 0
        """Connections answered 429 since the start."""
        self.late_refusals = 0
        """Connections answered 408 by the intake since the start."""
        self._intake_thread: Optional[threading.Thread] = None
        super().__init__(address, handler)  # a bind that fails calls server_close() before any thread is started
        for index in range(limits.threads):
            worker = threading.Thread(target=self._work, name=f"tapa-ai-http-{index}", daemon=True)
            worker.start()
            self._workers.append(worker)
        self._intake_thread = threading.Thread(target=self._intake, name="tapa-ai-http-intake", daemon=True)
        self._intake_thread.start()

    def process_request(self, request, client_address) -> None:
        """Hand an accepted connection to the intake (never waits)."""
        self._accepted.append(Arrival(request, client_address, time.monotonic() + self.limits.read_timeout))
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_write.send(b"\0")
        except (BlockingIOError, OSError):  # already woken, or closed
            pass

    def arrival(self) -> Arrival:
        """The request this worker thread is answering (for the handler's ``setup``)."""
        return self._current.arrival

    # -- the intake --------------------------------------------------------------------------------------
    def _intake(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._wake_read, selectors.EVENT_READ, None)
        reading: dict[socket.socket, Arrival] = {}  # oldest first (their deadlines in order)
        lingering: dict[socket.socket, float] = {}  # answered; closed at the time given, or at their end
        try:
            while not self._closing:
                soonest = [next(iter(reading.values())).deadline] if reading else []
                soonest += [next(iter(lingering.values()))] if lingering else []
                wait = min([0.5] + [when - time.monotonic() for when in soonest])
                for key, _ in selector.select(max(wait, 0.0)):
                    if key.data is None:
                        self._take_accepted(selector, reading, lingering)
                    elif key.data == "linger":
                        self._drop_input(selector, key.fileobj, lingering)
                    else:
                        self._read(selector, key.data, reading, lingering)
                now = time.monotonic()
                while reading and next(iter(reading.values())).deadline <= now:
                    late = reading.pop(next(iter(reading)))
                    selector.unregister(late.sock)
                    self.late_refusals += 1
                    self._answer(selector, late.sock, 408, "Request Timeout",
                                 late_message(self.limits.read_timeout), lingering)
                while lingering and next(iter(lingering.values())) <= now:
                    sock = next(iter(lingering))
                    del lingering[sock]
                    selector.unregister(sock)
                    sock.close()
        finally:
            for sock in (*reading, *lingering):
                sock.close()
            while self._accepted:
                self._accepted.popleft().sock.close()
            selector.close()

    def _take_accepted(self, selector, reading: dict, lingering: dict) -> None:
        try:
            while self._wake_read.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass
        while self._accepted:
            arrival = self._accepted.popleft()
            if len(reading) >= self.limits.connections:  # let the oldest go: the slowest to send
                oldest = reading.pop(next(iter(reading)))
                selector.unregister(oldest.sock)
                self.busy_refusals += 1
                self._answer(selector, oldest.sock, 429, "Too Many Requests", self._busy_message(), lingering)
            arrival.sock.setblocking(False)
            arrival.data = bytearray()
            reading[arrival.sock] = arrival
            selector.register(arrival.sock, selectors.EVENT_READ, arrival)

    def _read(self, selector, arrival: Arrival, reading: dict, lingering: dict) -> None:
        try:
            chunk = arrival.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # gone before its request arrived
            del reading[arrival.sock]
            selector.unregister(arrival.sock)
            arrival.sock.close()
            return
        arrival.data += chunk
        end = request_end(arrival.data, self.max_body)
        if end is None:
            return
        del reading[arrival.sock]
        selector.unregister(arrival.sock)
        if not self._slots.acquire(blocking=False):
            self.busy_refusals += 1
            self._answer(selector, arrival.sock, 429, "Too Many Requests", self._busy_message(), lingering)
            return
        length, arrival.whole = end
        if arrival.whole:
            arrival.data = arrival.data[:length]  # one request a connection: what follows is dropped
        arrival.data = bytes(arrival.data)
        arrival.sock.setblocking(True)
        self._requests.put(arrival)

    def _busy_message(self) -> str:
        return (f"the server is busy ({self.limits.threads} requests in progress and {self.limits.queue} "
                f"waiting); retry after {self.limits.retry_after} s")

    def _answer(self, selector, sock: socket.socket, status: int, reason: str, error: str,
                lingering: dict) -> None:
        """Answer from the intake (no worker), then drop what the client still sends for a while, and close."""
        data = json.dumps({"error": error}).encode() + b"\n"
        retry = f"Retry-After: {self.limits.retry_after}\r\n" if status == 429 else ""
        head = (f"HTTP/1.0 {status} {reason}\r\nContent-Type: application/json; charset=utf-8\r\n"
                f"Content-Length: {len(data)}\r\n{retry}Cache-Control: no-store\r\nConnection: close\r\n\r\n")
        try:
            sock.send(head.encode() + data)  # a few hundred bytes into an empty send buffer: never waits
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            sock.close()
            return
        if len(lingering) >= self.limits.connections:
            sock.close()
            return
        lingering[sock] = time.monotonic() + LINGER
        selector.register(sock, selectors.EVENT_READ, "linger")

    @staticmethod
    def _drop_input(selector, sock: socket.socket, lingering: dict) -> None:
        try:
            if sock.recv(65536):
                return
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass
        del lingering[sock]
        selector.unregister(sock)
        sock.close()

    # -- the workers -------------------------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            arrival = self._requests.get()
            if arrival is None:
                return
            self._current.arrival = arrival
            try:
                self.finish_request(arrival.sock, arrival.address)
            except Exception:  # noqa: BLE001 - one connection's fault never stops a worker
                self.handle_error(arrival.sock, arrival.address)
            finally:
                self._current.arrival = None
                self.shutdown_request(arrival.sock)
                self._slots.release()

    def server_close(self) -> None:
        """Close the socket and stop the threads; safe on a server that never started (its bind failed) and
        when called twice."""
        super().server_close()
        if self._closing and self._wake_write.fileno() == -1:
            return
        self._closing = True
        if self._intake_thread is not None:
            self._wake()
            self._intake_thread.join(5)
        for _ in self._workers:
            self._requests.put(None)
        for worker in self._workers:
            worker.join(5)
        self._workers = []
        for end in (self._wake_read, self._wake_write):
            end.close()
