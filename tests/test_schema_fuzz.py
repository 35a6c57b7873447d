"""A fuzzer over the declared protocol schema (tapa_ai/schemas/protocol.json): every field of a valid request of
every command mutated (its type, its range, its length, an unknown key beside it, the key removed), sent as
JSON text through the engine's one entry (``respond_text``: the stdin lines and the HTTP bodies), and every
answer is either a valid answer of its declared shape or one short JSON error: never ``internal error``, a
traceback, or an answer of more than a few hundred bytes for bad input. Seeded and bounded (1,251
requests at 0 ply, a few seconds)."""

from __future__ import annotations

import json
import math
from typing import Any, Iterator

import numpy as np
import pytest

from tapa_ai.engine.protocol import Engine
from tapa_ai.notation.json_position import position_to_json
from tapa_ai.rules.position import start_position
from tapa_ai.schema import check

ERROR_BYTES = 400
"""The longest error answer allowed for bad input (a request id included)."""

TAPA = position_to_json(start_position("tapa"))
RECORD = {"format": "tapa-ai/games", "version": 1, "variant": "tapa", "games": [{
    "players": {"X": "human", "O": "net:tapa@0ply"},
    "history": [{"action": "opening", "dice": [4, 3]}, {"action": "move", "side": "X", "dice": [4, 3],
                                                         "move": "24/20 24/21"},
                {"action": "move", "side": "O", "dice": [5, 6], "move": "23/17 22/17"}],
    "result": None}]}

VALID = [
    {"cmd": "start", "variant": "tapa", "turn": "O", "rules": {"mother_points": 2}, "id": 1},
    {"cmd": "legal_moves", "position": TAPA, "dice": [6, 5], "generator": "reference", "id": "a"},
    {"cmd": "apply", "position": TAPA, "dice": [6, 5], "move": "24/18 24/19"},
    {"cmd": "bearoff", "home": [0, 0, 0, 0, 0, 2]},
    {"cmd": "bot_move", "bot": "heuristic", "position": TAPA, "dice": [6, 5], "seed": 1},
    {"cmd": "encode", "position": TAPA},
    {"cmd": "evaluate", "position": TAPA},
    {"cmd": "best_move", "position": TAPA, "dice": [6, 5], "level": "casual", "noise_seed": 7},
    {"cmd": "best_move", "position": position_to_json(start_position("plakoto")), "dice": [6, 5],
     "tavli": {"length": 5, "score": {"X": 1, "O": 2}, "game": 2}},
    {"cmd": "hint", "position": TAPA, "dice": [3, 1], "count": 3, "plies": 0},
    {"cmd": "cube", "position": TAPA, "cube": {"value": 2, "owner": "X"},
     "match": {"length": 7, "score": {"X": 3, "O": 5}, "crawford": False}, "cube_life": 0.5},
    {"cmd": "rollout", "position": TAPA, "dice": [3, 1], "candidates": 2, "games": 36, "truncate": 3, "seed": 2},
    {"cmd": "analyse", "record": RECORD, "positions": False, "error_mp": 50},
]

HUGE = 10 ** 30
VALUES: list[Any] = [None, True, False, 0, -1, 7, HUGE, -HUGE, 2 ** 63, 1.5, -0.0, math.inf, "", "x",
                     "X" * 5000, [], [1] * 3000, {}, {"a": 1}, [[[[[]]]]], "24/18" * 400]


def paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every path to a field of a request (a position's 24 points: the first, a middle and the last only)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        indexes = (0, 11, len(value) - 1) if len(value) == 24 else range(len(value))
        for index in sorted(set(indexes)):
            yield prefix + (index,)
            yield from paths(value[index], prefix + (index,))


def with_change(request: dict, path: tuple, change) -> dict:
    copy = json.loads(json.dumps(request))
    parent = copy
    for part in path[:-1]:
        parent = parent[part]
    change(parent, path[-1])
    return copy


def mutations(request: dict, rng: np.random.Generator) -> Iterator[dict]:
    for path in paths(request):
        if path == ("cmd",):
            continue
        picks = rng.choice(len(VALUES), size=4, replace=False)
        for pick in picks:
            yield with_change(request, path, lambda parent, key, v=VALUES[pick]: parent.__setitem__(key, v))
        if isinstance(path[-1], str):
            yield with_change(request, path, lambda parent, key: parent.pop(key))
            yield with_change(request, path, lambda parent, key: parent.__setitem__(key + "x", 1))
            yield with_change(request, path, lambda parent, key: parent.__setitem__("k" * 3000, 1))
        else:
            yield with_change(request, path, lambda parent, key: parent.append(parent[key]))
    yield {**request, "levle": "casual"}


@pytest.fixture(scope="module")
def engines():
    """The engine for each request's variant (a Tavli context needs a Tavli game's model)."""
    return {variant: Engine(bot=f"net:{variant}@0ply", max_rollout_games=200, command_timeout=20)
            for variant in ("tapa", "plakoto")}


def engine_for(engines, request):
    return engines["plakoto" if "tavli" in request else "tapa"]


def test_every_valid_request_is_answered_in_its_declared_shape(engines):
    for request in VALID:
        status, body = engine_for(engines, request).respond_text(json.dumps(request))
        assert status == 200, (request["cmd"], body)
        check(json.loads(body), "protocol", f"response_{request['cmd']}")


def test_every_mutated_field_gets_an_answer_or_one_short_error(engines):
    rng = np.random.default_rng(61)
    seen = {"answers": 0, "errors": 0}
    for request in VALID:
        engine = engine_for(engines, request)
        for mutated in mutations(request, rng):
            text = json.dumps(mutated, allow_nan=True)
            status, line = engine.respond_text(text)
            body = json.loads(line)
            context = (request["cmd"], text[:300], line[:300])
            assert "internal error" not in line and "Traceback" not in line, context
            assert status in (200, 400, 413, 503), context
            if status == 200:
                check(body, "protocol", f"response_{request['cmd']}")
                seen["answers"] += 1
            else:
                assert set(body) <= {"error", "id"} and len(line.encode()) <= ERROR_BYTES, context
                check(body, "protocol", "error")
                seen["errors"] += 1
    # Both outcomes happen: some mutations stay valid (a seed of 7, a count of 7), most are refused.
    assert seen["errors"] > 500 and seen["answers"] > 20, seen
