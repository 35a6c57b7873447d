"""``tapa-ai serve`` is safe by default: Host and Origin checks, JSON-only POSTs, bounded threads and queue,
read and command time limits, internal errors without their text (tapa_ai.engine.http_limits, tapa_ai.deadline)."""

import http.client
import io
import json
import socket
import threading
import time

import pytest

from tapa_ai.deadline import DeadlineExceeded, acquire, check_deadline, remaining, time_limit
from tapa_ai.engine.http import make_server, serve_in_thread, without_directories
from tapa_ai.engine.http_limits import AccessPolicy, ServerLimits, host_name
from tapa_ai.engine.protocol import Engine
from tapa_ai.notation import position_to_json
from tapa_ai.rules import start_position

from .test_engine_http import tiny_path  # noqa: F401 - the module's fixture

START = position_to_json(start_position("tapa"))


def served(**options):
    server = make_server("127.0.0.1", 0, quiet=True, **options)
    thread = serve_in_thread(server)
    return server, thread


def stop(server, thread):
    server.shutdown()
    server.server_close()
    thread.join(10)


@pytest.fixture
def bare():
    server, thread = served(engine=Engine("reference"))
    yield server
    stop(server, thread)


def raw(server, method, path, headers=None, body=b"", timeout=30):
    """(status, headers, JSON body) of one request with exactly these headers (http.client adds only Host)."""
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.putrequest(method, path, skip_host="Host" in (headers or {}), skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body or method == "POST":
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body or None)
        response = connection.getresponse()
        data = response.read()
        return response.status, response.headers, json.loads(data) if data else None
    finally:
        connection.close()


JSON = {"Content-Type": "application/json"}
START_REQUEST = json.dumps({"cmd": "start"}).encode()


# -- Host and Origin -----------------------------------------------------------------------------------


def test_host_names_of_headers():
    assert host_name("127.0.0.1:8080") == "127.0.0.1" and host_name("[::1]:80") == "::1"
    assert host_name("LocalHost.:8080") == "localhost" and host_name("board.example") == "board.example"


@pytest.mark.parametrize("host", ["127.0.0.1:1234", "localhost:8080", "localhost", "[::1]:8080", "10.1.2.3",
                                  "board.localhost:8080"])
def test_local_hosts_and_ip_addresses_are_answered(bare, host):
    status, _, body = raw(bare, "POST", "/", {"Host": host, **JSON}, START_REQUEST)
    assert status == 200 and "position" in body


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "localhost.evil"])
def test_other_host_names_are_refused_against_dns_rebinding(bare, host):
    status, headers, body = raw(bare, "POST", "/", {"Host": host, **JSON}, START_REQUEST)
    assert status == 403 and "DNS rebinding" in body["error"] and "--allow-host" in body["error"]
    assert raw(bare, "GET", "/health", {"Host": host})[0] == 403


def test_allowed_host_names_are_answered():
    server, thread = served(engine=Engine("reference"), allow_hosts=["board.lan"])
    try:
        assert raw(server, "POST", "/", {"Host": "board.lan:8080", **JSON}, START_REQUEST)[0] == 200
        assert raw(server, "POST", "/", {"Host": "other.lan", **JSON}, START_REQUEST)[0] == 403
    finally:
        stop(server, thread)
    policy = AccessPolicy("127.0.0.1", allow_hosts=["*"])
    assert policy.host_problem("anything.example") is None
    assert AccessPolicy("myhost.lan").host_problem("myhost.lan:8080") is None  # the name it listens on


def test_no_cross_origin_access_by_default_but_the_servers_own_page_works(bare):
    host, port = bare.server_address[:2]
    own = {"Host": f"{host}:{port}", "Origin": f"http://{host}:{port}", **JSON}
    status, headers, body = raw(bare, "POST", "/v1/start", own, b"{}")
    assert status == 200 and "position" in body and "Access-Control-Allow-Origin" not in headers
    foreign = {"Origin": "https://evil.example", **JSON}
    status, headers, body = raw(bare, "POST", "/v1/start", foreign, b"{}")
    assert status == 403 and "--allow-origin https://evil.example" in body["error"]
    assert "Access-Control-Allow-Origin" not in headers
    assert raw(bare, "GET", "/health", {"Origin": "null"})[0] == 403  # a sandboxed page or a file
    preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"}
    status, headers, _ = raw(bare, "OPTIONS", "/v1/hint", preflight)
    assert status == 403 and "Access-Control-Allow-Origin" not in headers


@pytest.mark.parametrize("allowed, sent", [(["https://board.example"], "https://board.example"), (["*"], "*")])
def test_allowed_origins_get_the_cors_headers(allowed, sent):
    server, thread = served(engine=Engine("reference"), allow_origins=allowed)
    try:
        status, headers, _ = raw(server, "POST", "/v1/start", {"Origin": "https://board.example", **JSON}, b"{}")
        assert status == 200 and headers["Access-Control-Allow-Origin"] == sent
        status, headers, _ = raw(server, "OPTIONS", "/v1/start", {"Origin": "https://board.example",
                                                                  "Access-Control-Request-Method": "POST"})
        assert status == 204 and headers["Access-Control-Allow-Origin"] == sent
        if sent != "*":
            assert raw(server, "POST", "/v1/start", {"Origin": "https://other.example", **JSON}, b"{}")[0] == 403
    finally:
        stop(server, thread)


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/jsonx"])
def test_posts_must_be_json(bare, content_type):
    headers = {} if content_type is None else {"Content-Type": content_type}
    status, _, body = raw(bare, "POST", "/", headers, START_REQUEST)
    assert status == 415 and "application/json" in body["error"]


def test_json_with_a_charset_is_json(bare):
    status, _, body = raw(bare, "POST", "/", {"Content-Type": "Application/JSON; charset=utf-8"}, START_REQUEST)
    assert status == 200 and "position" in body


def test_health_names_no_directories():
    assert without_directories("net:/home/me/runs/tapa.pt@1ply") == "net:tapa.pt@1ply"
    assert without_directories("net:C:\\nets\\tapa.pt,nobearoff") == "net:tapa.pt,nobearoff"
    assert without_directories("net:tapa.pt") == "net:tapa.pt" and without_directories(None) is None


# -- bounded work --------------------------------------------------------------------------------------


def test_limits_are_checked():
    for options, fragment in (({"threads": 0}, "threads"), ({"queue": -1}, "queue"),
                              ({"read_timeout": 0}, "read_timeout"), ({"command_timeout": -1}, "command_timeout"),
                              ({"threads": True}, "threads")):
        with pytest.raises(ValueError, match=fragment):
            ServerLimits(**options)
    assert ServerLimits(command_timeout=None).command_timeout is None


def test_cli_refuses_bad_limits(capsys):
    from tapa_ai.cli import main

    assert main(["serve", "--port", "0", "--threads", "0"]) == 2
    assert "--threads must be an integer 1..256" in capsys.readouterr().err
    assert main(["serve", "--port", "0", "--read-timeout", "-1"]) == 2
    assert "--read-timeout must be" in capsys.readouterr().err


def test_a_full_queue_is_answered_429_with_retry_after_and_the_server_recovers(monkeypatch):
    server, thread = served(engine=Engine("reference"), limits=ServerLimits(threads=1, queue=1, read_timeout=2.0))
    release = threading.Event()
    answer = server.engine._cmd_start

    def slow_start(request):  # holds a worker until released
        release.wait(20)
        return answer(request)

    monkeypatch.setattr(server.engine, "_cmd_start", slow_start)
    results = []
    busy = [threading.Thread(target=lambda: results.append(raw(server, "POST", "/", JSON, START_REQUEST)[0]))
            for _ in range(2)]
    try:
        for each in busy:  # one in progress, one waiting in the queue
            each.start()
            time.sleep(0.3)
        start = time.monotonic()
        status, headers, body = raw(server, "POST", "/", JSON, START_REQUEST)
        assert status == 429 and headers["Retry-After"] == "1" and "busy" in body["error"]
        assert time.monotonic() - start < 1 and server.busy_refusals >= 1  # at once, not after a wait
        release.set()
        for each in busy:
            each.join(10)
        assert results == [200, 200]
        status, _, body = raw(server, "POST", "/", JSON, START_REQUEST)
        assert status == 200 and "position" in body
    finally:
        release.set()
        stop(server, thread)


def test_a_slow_client_is_cut_off_at_the_read_time_limit_and_does_not_block_others():
    server, thread = served(engine=Engine("reference"), limits=ServerLimits(threads=2, queue=4, read_timeout=2.0))
    try:
        slow = socket.create_connection(server.server_address[:2], timeout=30)
        request = b"POST / HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"cmd\":\"start\"}"
        start = time.monotonic()
        answered_meanwhile = []
        for index, byte in enumerate(request):
            try:
                slow.sendall(bytes([byte]))
            except OSError:
                break  # the server has closed it
            if index == 3:
                answered_meanwhile.append(raw(server, "POST", "/", JSON, START_REQUEST)[0])
            time.sleep(0.25)
            if time.monotonic() - start > 6:
                break
        reply = b""
        slow.settimeout(10)
        try:
            while chunk := slow.recv(4096):
                reply += chunk
        except OSError:
            pass
        elapsed = time.monotonic() - start
        slow.close()
        assert answered_meanwhile == [200]
        assert reply.startswith(b"HTTP/1.0 408") and b"did not arrive within 2 s" in reply
        assert elapsed < 5  # cut off at 2 s, not after the whole trickle (~23 s)
    finally:
        stop(server, thread)


def test_no_thread_is_started_per_connection():
    server, thread = served(engine=Engine("reference"), limits=ServerLimits(threads=4, queue=64))
    try:
        before = threading.active_count()
        results = []

        def client():
            for _ in range(10):
                results.append(raw(server, "POST", "/", JSON, START_REQUEST)[0])

        clients = [threading.Thread(target=client) for _ in range(8)]
        for each in clients:
            each.start()
        peak = threading.active_count()
        for each in clients:
            each.join(60)
        assert results.count(200) + results.count(429) == 80 and results.count(200) > 0
        assert peak <= before + 8 and threading.active_count() == before
        workers = [t for t in threading.enumerate() if t.name.startswith("tapa-ai-http-") and t.name[13:].isdigit()]
        assert len(workers) == 4
    finally:
        stop(server, thread)


def test_a_command_past_its_time_limit_answers_503(tiny_path):  # noqa: F811 - the fixture
    server, thread = served(bot=f"net:{tiny_path}", limits=ServerLimits(command_timeout=0.001))
    try:
        request = json.dumps({"cmd": "hint", "position": START, "dice": [3, 1], "plies": 2}).encode()
        status, _, body = raw(server, "POST", "/", JSON, request)
        assert status == 503 and "time limit of 0.001 s" in body["error"] and "fewer plies" in body["error"]
        status, _, body = raw(server, "POST", "/", JSON, json.dumps({"cmd": "start"}).encode())
        assert status == 200  # quick commands still fit
    finally:
        stop(server, thread)
    unlimited = Engine(bot=f"net:{tiny_path}")
    status, answer = unlimited.respond({"cmd": "hint", "position": START, "dice": [3, 1], "plies": 2})
    assert status == 200 and answer["moves"]


def test_internal_errors_give_an_id_and_no_exception_text(bare, monkeypatch):
    log = io.StringIO()
    engine = bare.engine
    monkeypatch.setattr(engine, "log", log)

    def broken(request):
        raise RuntimeError("secret detail /home/me/private")

    monkeypatch.setattr(engine, "_cmd_start", broken)
    status, _, body = raw(bare, "POST", "/", JSON, json.dumps({"cmd": "start", "id": 7}).encode())
    assert status == 500 and body["error"] == "internal error" and body["id"] == 7
    assert "secret" not in json.dumps(body) and len(body["error_id"]) == 12
    logged = log.getvalue()
    assert body["error_id"] in logged and "secret detail" in logged and "Traceback" in logged
    # The same on stdin/stdout.
    answer = json.loads(engine.handle_line('{"cmd": "start"}'))
    assert answer["error"] == "internal error" and answer["error_id"] in log.getvalue()


def test_a_fault_in_the_server_itself_answers_500_with_an_id(bare, monkeypatch, capsys):
    def broken(self):
        raise KeyError("secret")

    monkeypatch.setattr(type(bare.engine), "describe", broken)
    status, _, body = raw(bare, "GET", "/health")
    assert status == 500 and body["error"] == "internal error" and "secret" not in json.dumps(body)
    assert body["error_id"] in capsys.readouterr().err
    monkeypatch.undo()
    assert raw(bare, "GET", "/health")[0] == 200


# -- tapa_ai.deadline ----------------------------------------------------------------------------------


def test_time_limits_nest_and_belong_to_their_thread():
    assert remaining() is None
    check_deadline()  # no limit: nothing
    with time_limit(0.05):
        assert 0 < remaining() <= 0.05
        with time_limit(100):  # an inner limit cannot extend the outer one
            assert remaining() <= 0.05
        seen = []
        other = threading.Thread(target=lambda: seen.append(remaining()))
        other.start()
        other.join()
        assert seen == [None]
        time.sleep(0.06)
        with pytest.raises(DeadlineExceeded, match="time limit of 0.05 s"):
            check_deadline()
    check_deadline()
    with pytest.raises(ValueError):
        with time_limit(0):
            pass


def test_waiting_for_a_lock_counts_against_the_limit():
    lock = threading.Lock()
    lock.acquire()
    start = time.monotonic()
    with time_limit(0.1):
        with pytest.raises(DeadlineExceeded):
            acquire(lock)
    assert time.monotonic() - start < 1
    lock.release()
    with time_limit(1):
        acquire(lock)
    lock.release()
