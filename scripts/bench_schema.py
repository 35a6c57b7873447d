"""What checking a request against its declared schema costs (tapa_ai/schema.py, docs/schemas.md).

    python scripts/bench_schema.py                  # table
    python scripts/bench_schema.py --rounds 7 --json

For a few typical requests, side by side in one run (rounds interleaved, so the machine's drift falls on all
alike; the best round of each is reported): the schema check alone (``tapa_ai.schema.check``), and the whole
answer of the engine (``Engine.respond_text``, which parses the JSON, checks the schema and answers) with the
shipped tapa model at 0 ply. The schema's share of a request is the first over the second.
"""

from __future__ import annotations

import argparse
import json
import time

from tapa_ai.engine.protocol import Engine
from tapa_ai.notation.json_position import position_to_json
from tapa_ai.rules.position import start_position
from tapa_ai.schema import check

TAPA = position_to_json(start_position("tapa"))
REQUESTS = {
    "start": {"cmd": "start", "variant": "tapa"},
    "legal_moves": {"cmd": "legal_moves", "position": TAPA, "dice": [6, 5]},
    "evaluate": {"cmd": "evaluate", "position": TAPA},
    "best_move": {"cmd": "best_move", "position": TAPA, "dice": [6, 5], "plies": 0},
    "hint (level)": {"cmd": "hint", "position": TAPA, "dice": [6, 5], "count": 5, "level": "casual", "noise_seed": 7},
}


def per_call(function, seconds: float) -> float:
    """Seconds a call, over as many calls as fit in about ``seconds``."""
    calls, began = 0, time.perf_counter()
    while True:
        function()
        calls += 1
        took = time.perf_counter() - began
        if took >= seconds:
            return took / calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.3, help="time per measurement")
    parser.add_argument("--json", action="store_true", help="also print one JSON line of the results")
    args = parser.parse_args()
    engine = Engine(bot="net:tapa@0ply")
    engine._warm_thread.join()
    for request in REQUESTS.values():  # compile the validators and warm the model
        check(request, "protocol", f"request_{request['cmd']}")
        engine.respond_text(json.dumps(request))
    best: dict[str, dict[str, float]] = {name: {"schema": float("inf"), "answer": float("inf")} for name in REQUESTS}
    for _ in range(args.rounds):
        for name, request in REQUESTS.items():
            text = json.dumps(request)
            schema = per_call(lambda: check(request, "protocol", f"request_{request['cmd']}"), args.seconds)
            answer = per_call(lambda: engine.respond_text(text), args.seconds)
            best[name]["schema"] = min(best[name]["schema"], schema)
            best[name]["answer"] = min(best[name]["answer"], answer)
    print(f"{'request':<14} {'schema check':>13} {'whole answer':>13} {'share':>7}")
    for name, times in best.items():
        print(f"{name:<14} {times['schema'] * 1e6:>10.0f} us {times['answer'] * 1e6:>10.0f} us "
              f"{times['schema'] / times['answer']:>6.1%}")
    if args.json:
        print(json.dumps({name: {key: round(value * 1e6, 1) for key, value in times.items()}
                          for name, times in best.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
