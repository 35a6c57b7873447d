"""Issue 49, item 5: slow or silent clients do not starve ``tapa-ai serve``.

Each request is read whole by the intake (all connections at once) before a worker sees it, under one
deadline from the connection's accept (tapa_ai.engine.http_limits): 200 connections that send nothing and
20 that trickle a byte a second hold no worker, and are answered 408 at the read time limit.
"""

import http.client
import json
import socket
import threading
import time

import pytest

from tapa_ai.engine.http import make_server, serve_in_thread
from tapa_ai.engine.http_limits import HEAD_LIMIT, ServerLimits, request_end
from tapa_ai.engine.protocol import Engine

TRICKLED = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 15\r\n\r\n{\"cmd\":\"start\"}")


def normal_request(address, index):
    """(status, seconds) of a GET /health or a POST start, in turn."""
    start = time.monotonic()
    connection = http.client.HTTPConnection(*address, timeout=10)
    try:
        if index % 2:
            connection.request("GET", "/health")
        else:
            connection.request("POST", "/", body=b'{"cmd": "start"}', headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        body = json.loads(response.read())
        status = response.status if ("position" in body or body.get("status") == "ok") else -response.status
    except OSError as error:
        status = type(error).__name__
    finally:
        connection.close()
    return status, time.monotonic() - start


def reply_of(sock, wait):
    sock.settimeout(wait)
    reply = b""
    try:
        while chunk := sock.recv(4096):
            reply += chunk
    except OSError:
        pass
    return reply


def test_silent_and_trickling_clients_do_not_starve_normal_requests():
    read_timeout = 4.0
    server = make_server("127.0.0.1", 0, engine=Engine("reference"), quiet=True,
                         limits=ServerLimits(read_timeout=read_timeout))
    thread = serve_in_thread(server)
    address = server.server_address[:2]
    stop = threading.Event()
    silent, slow = [], []
    try:
        assert normal_request(address, 0)[0] == 200  # warm (the first start loads the move generator)
        opened = time.monotonic()
        silent = [socket.create_connection(address, timeout=10) for _ in range(200)]
        slow = [socket.create_connection(address, timeout=10) for _ in range(20)]

        def trickle(sock):
            for byte in TRICKLED:
                if stop.is_set():
                    return
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    return  # cut off
                time.sleep(1)

        tricklers = [threading.Thread(target=trickle, args=(sock,), daemon=True) for sock in slow]
        for each in tricklers:
            each.start()
        # While all 220 are open and their requests still arriving, normal requests are answered at once.
        during = []
        for index in range(10):
            during.append(normal_request(address, index))
            time.sleep(0.1)
        assert time.monotonic() - opened < read_timeout - 0.5  # all of them before any slow one was cut off
        assert [status for status, _ in during] == [200] * 10, during
        assert max(seconds for _, seconds in during) < 1.0, during
        # Each slow client is cut off with a 408 at the read time limit from its accept, however it trickles.
        for sock in slow + silent[:20]:
            reply = reply_of(sock, read_timeout + 3 - (time.monotonic() - opened))
            assert reply.startswith(b"HTTP/1.0 408") and b"did not arrive within 4 s" in reply, reply[:200]
        assert time.monotonic() - opened < read_timeout + 2.5
        after = [normal_request(address, index) for index in range(4)]
        assert [status for status, _ in after] == [200] * 4
        assert server.late_refusals >= 220
    finally:
        stop.set()
        for sock in silent + slow:
            sock.close()
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.mark.parametrize("data, end", [
    (b"GET /health HTTP/1.1\r\nHost: x\r\n", None),  # the head goes on
    (b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", (33, True)),
    (b"GET /health HTTP/1.1\nHost: x\n\n", (30, True)),
    (b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n{}", None),  # the body goes on
    (b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n{}  GET", (42, True)),  # what follows is not this request's
    (b"POST / HTTP/1.1\r\nContent-Length: 99999\r\n\r\n", (42, False)),  # too long: the handler's 413
    (b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", (38, False)),  # the handler's 400
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n", (47, False)),  # the handler's 411
    (b"GET /\r\n", (7, False)),  # not an HTTP/1.x request line: the handler answers it
])
def test_where_a_request_ends(data, end):
    assert request_end(data, 65536) == end


def test_an_endless_head_goes_to_the_handler():
    data = b"GET / HTTP/1.1\r\nX: " + b"a" * HEAD_LIMIT
    assert request_end(data, 65536) == (len(data), False)
    assert request_end(data[:1000], 65536) is None
