"""``tapa-ai serve``: the engine over HTTP, tested with urllib against a live server on an ephemeral port."""

import http.client
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tapa_ai.engine.http import DEFAULT_HOST, make_server, serve_in_thread
from tapa_ai.engine.protocol import MAX_REQUEST_BYTES, Engine
from tapa_ai.notation import position_to_json
from tapa_ai.rules import start_position

from .test_engine_model import save_tiny_net

ROOT = Path(__file__).resolve().parent.parent
START = position_to_json(start_position("tapa"))


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    return save_tiny_net("tapa", tmp_path_factory.mktemp("http-nets") / "tiny.pt")


@pytest.fixture(scope="module")
def server(tiny_path):
    server = make_server("127.0.0.1", 0, bot=f"net:{tiny_path}@1ply", quiet=True)
    thread = serve_in_thread(server)
    yield server
    server.shutdown()
    server.server_close()
    thread.join(10)


@pytest.fixture(scope="module")
def bare_server():
    """A server without a model."""
    server = make_server("127.0.0.1", 0, generator="reference", allow_origins=["https://example.org"], quiet=True)
    thread = serve_in_thread(server)
    yield server
    server.shutdown()
    server.server_close()
    thread.join(10)


def call(server, path, body=None, method=None, headers=None):
    """(status, headers, parsed JSON body or None) of one HTTP request; errors are answers too."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, response.headers, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, error.headers, json.loads(raw) if raw else None


def test_health_names_the_model(server):
    status, headers, body = call(server, "/health")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert body["status"] == "ok" and body["variant"] == "tapa" and body["plies"] == 1
    assert body["bot"].startswith("net:") and body["bot"].endswith("@1ply")
    assert "hint" in body["commands"] and body["outcomes"][0] == "win_single"
    assert body["bot"] == "net:tiny.pt@1ply"  # the file's name, not where it lies
    assert "Access-Control-Allow-Origin" not in headers  # no cross-origin access by default


def test_get_root_is_the_web_board_and_health_is_json(server):
    with urllib.request.urlopen(server.url + "/", timeout=30) as response:
        assert response.status == 200 and response.headers["Content-Type"].startswith("text/html")
        assert b"web/app.js" in response.read()
    status, headers, body = call(server, "/health")
    assert status == 200 and headers["Content-Type"].startswith("application/json") and body["status"] == "ok"


def test_post_root_and_post_v1_command_answer_as_the_engine_does(server):
    engine = server.engine
    request = {"cmd": "evaluate", "position": START, "id": 9}
    expected = json.loads(engine.handle_line(json.dumps(request)))
    status, _, body = call(server, "/", request)
    assert status == 200 and body == expected and "equity" in body
    status, _, body = call(server, "/v1/evaluate", {"position": START, "id": 9})
    assert status == 200 and body == expected
    status, _, body = call(server, "/v1/evaluate", {"cmd": "evaluate", "position": START, "id": 9})
    assert status == 200 and body == expected
    status, _, best = call(server, "/v1/best_move", {"position": START, "dice": [6, 5], "plies": 0})
    status, _, hint = call(server, "/v1/hint", {"position": START, "dice": [6, 5], "plies": 0, "count": 3})
    assert status == 200 and len(hint["moves"]) == 3 and hint["moves"][0]["move"] == best["move"]
    status, _, start = call(server, "/v1/start", b"")  # an empty body is an empty request
    assert status == 200 and start["position"] == START
    status, _, moves = call(server, "/v1/legal_moves", {"position": START, "dice": [6, 5]})
    assert status == 200 and best["move"] in {m["move"] for m in moves["moves"]}


def test_preflight_and_cors_headers(server, bare_server):
    preflight = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
    status, headers, body = call(server, "/v1/hint", method="OPTIONS", headers=preflight)
    assert status == 403 and "--allow-origin http://localhost:3000" in body["error"]
    assert "Access-Control-Allow-Origin" not in headers
    status, headers, body = call(bare_server, "/v1/hint", method="OPTIONS",
                                 headers={**preflight, "Origin": "https://example.org"})
    assert status == 204 and body is None
    assert headers["Access-Control-Allow-Origin"] == "https://example.org"
    assert "POST" in headers["Access-Control-Allow-Methods"]
    assert "Content-Type" in headers["Access-Control-Allow-Headers"]
    status, headers, _ = call(bare_server, "/v1/nothing", {}, headers={"Origin": "https://example.org"})
    assert status == 404 and headers["Access-Control-Allow-Origin"] == "https://example.org"
    assert headers["Vary"] == "Origin"


@pytest.mark.parametrize("path,body,method,status,fragment", [
    ("/", b"{not json", None, 400, "not valid JSON"),
    ("/", b"\xff\xfe", None, 400, "not UTF-8"),
    ("/", [1, 2], None, 400, "JSON object"),
    ("/", {"cmd": "fly"}, None, 400, "unknown cmd"),
    ("/v1/evaluate", {"position": {**START, "variant": "plakoto"}}, None, 400, "position"),
    ("/v1/evaluate", {"cmd": "hint", "position": START}, None, 400, "differs from the path"),
    ("/v1/evaluate", "a string", None, 400, "JSON object"),
    ("/v1/hint", {"position": START, "dice": [1, 2], "count": 10 ** 6}, None, 400, "count: must be an integer 1..100"),
    ("/v1/fly", {}, None, 404, "no such path"),
    ("/nope", None, None, 404, "no such path"),
    ("/v1/evaluate", None, "GET", 405, "takes POST"),
    ("/health", {}, None, 405, "takes GET"),
    ("/", None, "DELETE", 405, "method DELETE"),
    ("/", None, "PUT", 405, "method PUT"),
])
def test_bad_requests_get_a_json_error_with_the_right_status(server, path, body, method, status, fragment):
    got, headers, answer = call(server, path, body, method)
    assert got == status and fragment in answer["error"], answer
    assert headers["Content-Type"].startswith("application/json")
    assert call(server, "/health")[0] == 200  # and the server goes on


def test_an_oversized_body_gets_413_in_json(server):
    status, headers, answer = call(server, "/", b" " * (MAX_REQUEST_BYTES + 1))
    assert status == 413 and "more than the limit" in answer["error"]
    status, _, answer = call(server, "/v1/evaluate", b"[" * (4 * MAX_REQUEST_BYTES))
    assert status == 413


def test_missing_or_bad_content_length(server):
    host, port = server.server_address[:2]
    for headers, status in (({}, 411), ({"Content-Length": "-5"}, 400), ({"Content-Length": "abc"}, 400),
                            ({"Transfer-Encoding": "chunked"}, 411)):
        connection = http.client.HTTPConnection(host, port, timeout=30)
        connection.putrequest("POST", "/v1/start")
        connection.putheader("Content-Type", "application/json")
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        assert response.status == status and "error" in json.loads(response.read())
        connection.close()


def test_without_a_model_the_server_says_how_to_start_one(bare_server):
    status, _, health = call(bare_server, "/health")
    assert status == 200 and health["bot"] is None and health["variant"] is None
    status, _, answer = call(bare_server, "/v1/evaluate", {"position": START})
    assert status == 400 and "--bot net:PATH" in answer["error"]
    status, _, answer = call(bare_server, "/v1/encode", {"position": START})
    assert status == 200 and len(answer["features"]) == 259


def test_concurrent_requests_get_the_same_answers_as_one_at_a_time(server):
    requests = [{"cmd": "hint", "position": START, "dice": [a, b], "plies": 1, "count": 3}
                for a in range(1, 7) for b in range(1, 7)][:16]
    expected = [json.loads(server.engine.handle_line(json.dumps(r))) for r in requests]
    results = [None] * len(requests)

    def worker(index):
        results[index] = call(server, "/", requests[index])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [result[0] for result in results] == [200] * len(requests)
    assert [result[2] for result in results] == expected


def test_the_server_listens_on_localhost_by_default():
    from tapa_ai.cli import build_parser

    assert DEFAULT_HOST == "127.0.0.1"
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.bot) == ("127.0.0.1", 8080, None)
    server = make_server(port=0, engine=Engine("reference"), quiet=True)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()


def test_serve_command_runs_as_a_process(tiny_path):
    process = subprocess.Popen([sys.executable, "-m", "tapa_ai.cli", "serve", "--port", "0", "--quiet",
                                "--bot", f"net:{tiny_path}"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        assert "listening on http://127.0.0.1:" in line, line
        url = line.split("listening on ")[1].split()[0]
        with urllib.request.urlopen(url + "/health", timeout=30) as response:
            assert json.loads(response.read())["variant"] == "tapa"
        request = urllib.request.Request(url + "/v1/best_move", method="POST",
                                         data=json.dumps({"position": START, "dice": [3, 1]}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.loads(response.read())["move"]
    finally:
        process.terminate()
        process.wait(30)
        process.stderr.close()


def test_serve_command_refuses_a_bad_bot_or_port(capsys):
    from tapa_ai.cli import main

    assert main(["serve", "--port", "0", "--bot", "random"]) == 2
    assert "need a network" in capsys.readouterr().err
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port must be 0..65535" in capsys.readouterr().err


def test_the_cube_command_over_http(server):
    status, _, body = call(server, "/v1/cube", {"position": START, "match": {"length": 5,
                                                                              "score": {"X": 1, "O": 3}}})
    assert status == 200 and body["units"] == "mwc" and body["action"] in ("double", "no_double")
    status, _, body = call(server, "/v1/cube", {"position": START, "cube": {"value": 5, "owner": "X"}})
    assert status == 400 and "cube.value: must be one of 1, 2, 4" in body["error"]
