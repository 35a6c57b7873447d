"""Load test of ``tapa-ai serve`` on 127.0.0.1: many clients, mixed valid and invalid requests, a few slow ones.

    python scripts/http_load.py --requests 2000 --clients 50 --slow 4 --json docs/protocol/load.json

Starts ``tapa-ai serve --port 0 --quiet --bot net:checkpoints/tapa.pt`` (default limits) as a process,
waits for the first answer, then ``--clients`` threads send ``--requests`` requests in all, in a fixed
seeded mix: start, legal_moves, evaluate and 0-ply best_move (valid), and broken JSON, an unknown command, a
text/plain body and a foreign Host (invalid: 400, 400, 415, 403). Meanwhile ``--slow`` clients trickle a
request one byte every second (they must be cut off with 408 at the read limit without holding up the
others). Reports every status seen, connection errors, latency percentiles, and the server's thread count
(from /proc) before, during and after: a fixed pool means no growth.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tapa_ai.notation import position_to_json  # noqa: E402
from tapa_ai.rules import start_position  # noqa: E402

START = position_to_json(start_position("tapa"))
JSON = "application/json"
MIX = [  # (name, path, body, content type, Host override, expected status)
    ("start", "/v1/start", b"{}", JSON, None, 200),
    ("legal_moves", "/v1/legal_moves", json.dumps({"position": START, "dice": [6, 5]}).encode(), JSON, None, 200),
    ("evaluate", "/v1/evaluate", json.dumps({"position": START}).encode(), JSON, None, 200),
    ("best_move", "/v1/best_move", json.dumps({"position": START, "dice": [3, 1], "plies": 0}).encode(), JSON, None,
     200),
    ("bad_json", "/", b"{not json", JSON, None, 400),
    ("unknown_cmd", "/", b'{"cmd": "fly"}', JSON, None, 400),
    ("text_plain", "/", b'{"cmd": "start"}', "text/plain", None, 415),
    ("foreign_host", "/v1/start", b"{}", JSON, "evil.example", 403),
]


def threads_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise RuntimeError("no thread count")


def one_request(host: str, port: int, kind: tuple) -> tuple[str, object, float]:
    name, path, body, content_type, host_header, _ = kind
    start = time.perf_counter()
    connection = http.client.HTTPConnection(host, port, timeout=60)
    try:
        connection.putrequest("POST", path, skip_host=host_header is not None)
        if host_header is not None:
            connection.putheader("Host", host_header)
        connection.putheader("Content-Type", content_type)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        response.read()
        status: object = response.status
    except OSError as error:
        status = f"{type(error).__name__}"
    finally:
        connection.close()
    return name, status, time.perf_counter() - start


def slow_client(host: str, port: int, results: list) -> None:
    request = b'POST / HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"cmd":"start"}'
    start = time.perf_counter()
    reply = b""
    try:
        with socket.create_connection((host, port), timeout=60) as sock:
            for byte in request:
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    break
                time.sleep(1.0)
                if time.perf_counter() - start > 60:
                    break
            try:
                while chunk := sock.recv(4096):
                    reply += chunk
            except OSError:
                pass
    except OSError as error:
        reply = f"{type(error).__name__}".encode()
    results.append((reply.split(b"\r\n", 1)[0].decode(errors="replace"), time.perf_counter() - start))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--slow", type=int, default=4, help="slow clients trickling one byte a second")
    parser.add_argument("--bot", default="net:checkpoints/tapa.pt")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args()

    process = subprocess.Popen([sys.executable, "-m", "tapa_ai.cli", "serve", "--port", "0", "--quiet",
                                "--bot", args.bot], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        if "listening on" not in line:
            raise SystemExit(f"the server did not start: {line}{process.stderr.read()}")
        host, port = line.split("listening on http://")[1].split()[0].rsplit(":", 1)
        port = int(port)
        drain = threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True)
        drain.start()
        warm = one_request(host, port, MIX[3])  # the first answer compiles / loads the kernels
        threads_before = threads_of(process.pid)

        rng = random.Random(args.seed)
        plan = [MIX[rng.randrange(len(MIX))] for _ in range(args.requests)]
        results: list[tuple[str, object, float]] = []
        slow_results: list[tuple[str, float]] = []
        lock = threading.Lock()
        next_index = [0]
        peak = [threads_before]

        def client() -> None:
            while True:
                with lock:
                    if next_index[0] >= len(plan):
                        return
                    kind = plan[next_index[0]]
                    next_index[0] += 1
                result = one_request(host, port, kind)
                with lock:
                    results.append(result)

        def watch() -> None:
            while any(worker.is_alive() for worker in workers):
                peak[0] = max(peak[0], threads_of(process.pid))
                time.sleep(0.05)

        slow = [threading.Thread(target=slow_client, args=(host, port, slow_results)) for _ in range(args.slow)]
        for each in slow:
            each.start()
        time.sleep(0.5)
        workers = [threading.Thread(target=client) for _ in range(args.clients)]
        start = time.perf_counter()
        for each in workers:
            each.start()
        watcher = threading.Thread(target=watch)
        watcher.start()
        for each in workers:
            each.join()
        wall = time.perf_counter() - start
        watcher.join()
        for each in slow:
            each.join()
        time.sleep(0.5)
        threads_after = threads_of(process.pid)
    finally:
        process.terminate()
        process.wait(30)

    expected = {kind[0]: kind[5] for kind in MIX}
    statuses = Counter(str(status) for _, status, _ in results)
    wrong = Counter(f"{name}->{status}" for name, status, _ in results if status != expected[name])
    latencies = [seconds for _, status, seconds in results if isinstance(status, int)]
    report = {
        "command": "python scripts/http_load.py " + " ".join(sys.argv[1:]),
        "bot": args.bot, "requests": len(results), "clients": args.clients, "slow_clients": args.slow,
        "cpus": os.cpu_count(), "wall_seconds": round(wall, 2), "requests_per_second": round(len(results) / wall, 1),
        "first_answer_seconds": round(warm[2], 3),
        "statuses": dict(sorted(statuses.items())), "unexpected": dict(wrong),
        "answered": len(latencies), "connection_errors": len(results) - len(latencies),
        "latency_ms": {q: round(1000 * percentile(latencies, p), 1)
                       for q, p in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))},
        "server_threads": {"before": threads_before, "peak": peak[0], "after": threads_after},
        "slow": [{"reply": reply, "seconds": round(seconds, 1)} for reply, seconds in slow_results],
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    return 0 if not wrong and report["connection_errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
