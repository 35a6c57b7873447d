"""Fuzzing the engine with a model: random bytes, random JSON, random and mutated positions, long lines.

Every request line gets exactly one JSON object back, never an internal error
and never a hang: each request is timed against :data:`REQUEST_TIME_LIMIT_S`.
The counts and the slowest request are printed (``pytest -s``).
"""

import io
import json
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tapa_ai.engine.protocol import MAX_HINT_COUNT, MAX_REQUEST_BYTES, Engine, serve
from tapa_ai.movegen.random_positions import endgame_positions, playout_positions
from tapa_ai.notation import position_to_json
from tapa_ai.rules import start_position

from .test_engine_model import save_tiny_net

REQUEST_TIME_LIMIT_S = 15.0
"""Generous for a loaded 2-core machine; a request takes milliseconds (2-ply on a busy position: ~1 s)."""
MODEL_COMMANDS = ["encode", "evaluate", "best_move", "hint"]
VARIANTS = ["tapa", "plakoto", "backgammon"]

STATS = {"requests": Counter(), "errors": Counter(), "slowest": (0.0, None)}


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    """One engine per variant, each with a small 1-ply network of its variant."""
    folder = tmp_path_factory.mktemp("fuzz-nets")
    built = {variant: Engine(bot=f"net:{save_tiny_net(variant, folder / f'{variant}.pt', hidden=8)}@1ply")
             for variant in VARIANTS}
    yield built
    slowest, request = STATS["slowest"]
    print(f"\nengine fuzz: {sum(STATS['requests'].values())} requests {dict(STATS['requests'])}, "
          f"errors {dict(STATS['errors'])}, slowest {slowest * 1000:.0f} ms ({request})")


def answer(engine, line, kind):
    """One request line through the engine: one JSON object back, in bounded time, no internal error."""
    began = time.perf_counter()
    text = engine.handle_line(line)
    took = time.perf_counter() - began
    STATS["requests"][kind] += 1
    if took > STATS["slowest"][0]:
        STATS["slowest"] = (took, (line[:120] if isinstance(line, (str, bytes)) else line))
    assert took < REQUEST_TIME_LIMIT_S, (took, line[:300])
    assert "\n" not in text
    response = json.loads(text)
    assert isinstance(response, dict)
    assert "internal error" not in response.get("error", ""), (response, line[:300])
    if "error" in response:
        STATS["errors"][kind] += 1
        assert set(response) <= {"error", "id"}
    return response


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 30) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=20,
)
small_ints = st.integers(-3, 8) | st.sampled_from([10 ** 9, -(10 ** 12), 2 ** 70])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), variant=st.sampled_from(VARIANTS))
def test_fuzz_random_bytes(engines, data, variant):
    answer(engines[variant], data, "random bytes")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(MODEL_COMMANDS + ["start", "x"]), position=json_values, dice=json_values,
       plies=json_values | small_ints, count=json_values | small_ints, variant=st.sampled_from(VARIANTS),
       extra=st.dictionaries(st.sampled_from(["id", "bot", "generator", "move"]), json_values, max_size=2))
def test_fuzz_random_json(engines, command, position, dice, plies, count, variant, extra):
    request = {"cmd": command, "position": position, "dice": dice, "plies": plies, "count": count, **extra}
    answer(engines[variant], json.dumps(request), "random JSON")


def _mutate(position: dict, rng: np.random.Generator) -> dict:
    """A random change to a JSON position: most make it illegal, some keep it legal."""
    position = json.loads(json.dumps(position))
    kind = rng.integers(0, 9)
    points = position["points"]
    if kind == 0:  # move one checker to another point (often still legal)
        source = [i for i, stack in enumerate(points) if stack]
        i, j = rng.choice(source), rng.integers(0, 24)
        moved, points[i] = points[i][-1], points[i][:-1]
        points[j] = points[j] + moved if not points[j] or points[j][-1] == moved else moved
    elif kind == 1:
        position["turn"] = "O" if position["turn"] == "X" else "X"
    elif kind == 2:
        position["off"] = {"X": int(rng.integers(0, 17)), "O": int(rng.integers(0, 17))}
    elif kind == 3:
        points[int(rng.integers(0, 24))] = "".join(rng.choice(["X", "O"], size=int(rng.integers(1, 17))))
    elif kind == 4:
        position["variant"] = str(rng.choice(VARIANTS + ["chess"]))
    elif kind == 5:
        position["bar"] = {"X": int(rng.integers(0, 3)), "O": int(rng.integers(0, 3))}
    elif kind == 6:
        position["rules"] = {str(rng.choice(["mother_points", "cube", "crawford", "pins"])): int(rng.integers(0, 4))}
    elif kind == 7:
        position["points"] = points[::-1]
    else:
        position["result"] = {"winner": str(rng.choice(["X", "O"])), "points": 1, "kind": "single"}
    return position


def _random_request(rng: np.random.Generator, position: dict) -> tuple[str, dict]:
    command = str(rng.choice(MODEL_COMMANDS))
    request = {"cmd": command, "position": position, "id": int(rng.integers(0, 1000))}
    if command in ("best_move", "hint"):
        request["dice"] = [int(d) for d in rng.integers(1, 7, size=2)]
        # 2-ply is the slow one: a fifth of the searches.
        request["plies"] = int(rng.choice([0, 1, 2], p=[0.4, 0.4, 0.2]))
    if command == "hint":
        request["count"] = int(rng.integers(1, MAX_HINT_COUNT + 1))
    return command, request


EXPECTED = {"encode": "features", "evaluate": "equity", "best_move": "move", "hint": "moves"}


@pytest.mark.parametrize("variant", VARIANTS)
def test_fuzz_random_and_mutated_positions(engines, variant):
    rng = np.random.default_rng(VARIANTS.index(variant) + 100)
    positions = (playout_positions(variant, 40, rng, games=8).to_positions()
                 + playout_positions(variant, 20, rng, "contact", games=8).to_positions()
                 + endgame_positions(variant, 20, rng).to_positions())
    answered = Counter()
    for position in positions:
        good = position_to_json(position)
        for mutated, data in ((False, good), (True, _mutate(good, rng))):
            for engine_variant in ([variant] if not mutated else [variant, str(rng.choice(VARIANTS))]):
                command, request = _random_request(rng, data)
                response = answer(engines[engine_variant], json.dumps(request),
                                  "mutated position" if mutated else "random position")
                assert response["id"] == request["id"]
                if not mutated and engine_variant == variant:
                    # A legal position of the model's variant always gets its answer.
                    assert EXPECTED[command] in response, (request, response)
                answered[EXPECTED[command] in response] += 1
    assert answered[True] > 80 and answered[False] > 10  # both paths were exercised


def test_serve_answers_every_line_once_even_over_long_or_binary_ones(engines):
    rng = np.random.default_rng(3)
    start = position_to_json(start_position("tapa"))
    lines = [
        json.dumps({"cmd": "evaluate", "position": start, "id": 1}).encode(),
        b"\xff\xfe\x00garbage",
        b"   ",  # blank: skipped, no answer
        b"x" * (MAX_REQUEST_BYTES + 10),  # too long: one error, the rest of the line is skipped
        b'{"cmd": "hint", "id": 2, "position": ' + b" " * (3 * MAX_REQUEST_BYTES) + json.dumps(start).encode()
        + b', "dice": [1, 2]}',
        json.dumps({"cmd": "hint", "position": start, "dice": [6, 6], "count": 10 ** 9, "id": 3}).encode(),
        json.dumps({"cmd": "best_move", "position": start, "dice": [6, 6], "plies": 2, "id": 4}).encode(),
        json.dumps({"cmd": "start", "id": 5}).encode() + b"\r",
    ]
    lines += [bytes(rng.integers(0, 256, size=int(rng.integers(1, 200)), dtype=np.uint8)).replace(b"\n", b" ")
              for _ in range(40)]
    awkward = [b"1" * 5000, b"[" * 50000, b'{"cmd": "evaluate", "id": NaN}', b'{"cmd": "start", "id": 1e999}',
               b'{"cmd": "hint", "count": ' + b"9" * 4400 + b"}", b'"\\ud800"', b"{" * 900 + b"}" * 900]
    lines += awkward
    out = io.StringIO()
    began = time.perf_counter()
    assert serve(io.BytesIO(b"\n".join(lines) + b"\n"), out, bot=engines["tapa"].analyzer) == 0
    took = time.perf_counter() - began
    STATS["requests"]["serve lines"] += len(lines)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(answers) == sum(1 for line in lines if line.strip())
    assert answers[0]["id"] == 1 and "equity" in answers[0]
    assert "error" in answers[1]
    assert "longer than the limit" in answers[2]["error"] and "longer than the limit" in answers[3]["error"]
    assert answers[4] == {"id": 3, "error": answers[4]["error"]} and "count: must be" in answers[4]["error"]
    assert answers[5]["id"] == 4 and answers[5]["plies"] == 2
    assert answers[6]["id"] == 5 and answers[6]["position"]["variant"] == "tapa"
    assert all(isinstance(a, dict) and "internal error" not in a.get("error", "") for a in answers)
    assert all("error" in a for a in answers[-len(awkward):])
    assert took < REQUEST_TIME_LIMIT_S * 2
