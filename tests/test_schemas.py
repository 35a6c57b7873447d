"""The declared schemas (tapa_ai/schemas/, tapa_ai/schema.py, docs/schemas.md): the files themselves, the
engine's requests read through them, the cases the fault probe of issue 61 found, the protocol docs' examples
and the engine's answers checked against them."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from tapa_ai.engine.protocol import Engine
from tapa_ai.notation.json_position import position_to_json
from tapa_ai.rules.options import VARIANTS, RuleOptions
from tapa_ai.rules.position import start_position
from tapa_ai.schema import SCHEMA_DIR, SchemaError, check, load_schema, schema_names

ROOT = Path(__file__).resolve().parent.parent
PLAKOTO = position_to_json(start_position("plakoto"))
TAPA = position_to_json(start_position("tapa"))


def walk(schema, path="$"):
    """Every sub-schema of a schema document, with its path."""
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            yield from walk(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from walk(value, f"{path}[{index}]")


# -- the files ---------------------------------------------------------------------------------------------------
def test_every_schema_file_is_a_valid_draft_2020_12_schema_with_its_own_id():
    from jsonschema import Draft202012Validator

    assert "protocol" in schema_names()
    for name in schema_names():
        document = load_schema(name)
        Draft202012Validator.check_schema(document)
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert document["$id"].endswith(f"/schemas/{name}.json"), name


def test_every_string_and_list_is_bounded_and_every_object_closed():
    """What the probe found (60 KB echoes, ignored keys) cannot come back through a schema: every string has
    a length bound (or is one of a list), every list a size bound, every object says which keys it takes."""
    for name in schema_names():
        for path, schema in walk(load_schema(name)):
            if path.endswith(".properties") or path.endswith("$defs"):
                continue  # maps of names to schemas, not schemas
            if any(part in path for part in (".$defs.response_", ".$defs.level_answer", ".$defs.error")):
                continue  # what the engine writes, not what it reads
            kind = schema.get("type")
            if kind == "string" and "enum" not in schema and "const" not in schema:
                assert "maxLength" in schema or "pattern" in schema, f"{name} {path}: unbounded string"
            if kind == "object" and "properties" in schema:
                assert "additionalProperties" in schema, f"{name} {path}: keys not declared closed or open"


def test_the_protocol_schema_agrees_with_the_code_it_declares():
    from tapa_ai.analysis.analyzer import MAX_REQUEST_PLIES
    from tapa_ai.cube.met import MAX_MATCH_LENGTH
    from tapa_ai.engine.bot_move_command import FIXED_BOTS
    from tapa_ai.engine.move_command import MAX_HINT_COUNT
    from tapa_ai.engine.rollout_command import MAX_ROLLOUT_CANDIDATES
    from tapa_ai.rules.cube import CUBE_VALUES

    defs = load_schema("protocol")["$defs"]
    assert set(defs["variant"]["enum"]) == set(VARIANTS)
    assert set(defs["rule_overrides"]["properties"]) == {f.name for f in fields(RuleOptions)}
    assert defs["plies"]["maximum"] == MAX_REQUEST_PLIES
    assert defs["tavli_context"]["properties"]["length"]["maximum"] == MAX_MATCH_LENGTH
    from tapa_ai.rules.rotations import MAX_ROTATION_GAMES, ROTATIONS

    rotation = defs["rotation_context"]["properties"]["rotation"]["anyOf"]
    assert defs["rotation_context"]["properties"]["length"]["maximum"] == MAX_MATCH_LENGTH
    assert set(rotation[0]["enum"]) == set(ROTATIONS) and rotation[1]["maxItems"] == MAX_ROTATION_GAMES
    assert defs["match"]["anyOf"][0]["properties"]["length"]["maximum"] == MAX_MATCH_LENGTH
    assert defs["request_hint"]["properties"]["count"]["maximum"] == MAX_HINT_COUNT
    assert defs["request_rollout"]["properties"]["candidates"]["maximum"] == MAX_ROLLOUT_CANDIDATES
    assert defs["request_rollout"]["properties"]["moves"]["maxItems"] == MAX_ROLLOUT_CANDIDATES
    assert tuple(defs["request_bot_move"]["properties"]["bot"]["enum"]) == FIXED_BOTS
    assert tuple(defs["cube"]["properties"]["value"]["enum"]) == CUBE_VALUES
    from tapa_ai.bots.noise import check_noise_seed

    seeds = defs["noise_seed"]
    assert check_noise_seed(seeds["maximum"]) == seeds["maximum"] and check_noise_seed(seeds["minimum"]) == 0
    for outside in (seeds["maximum"] + 1, seeds["minimum"] - 1):
        with pytest.raises(ValueError):
            check_noise_seed(outside)
    assert {name[len("request_"):] for name in defs if name.startswith("request_")} == set(Engine.COMMANDS)
    assert {name[len("response_"):] for name in defs if name.startswith("response_")} == set(Engine.COMMANDS)


def test_the_saved_game_schema_agrees_with_the_reader():
    from tapa_ai.analysis.records import MAX_GAMES

    defs = load_schema("saved_game")["$defs"]
    assert defs["games_file"]["properties"]["games"]["maxItems"] == MAX_GAMES
    assert defs["games_file"]["properties"]["games"]["minItems"] == 1
    # every format the reader knows has its definition; a rotation is a preset's name or at most as many games
    # as a Rotation holds, and a rotation's match is as long as its match equity table reaches
    from tapa_ai.analysis.records import _DEFINITIONS
    from tapa_ai.cube.met import MAX_MATCH_LENGTH
    from tapa_ai.flow.saved_state import ROTATION_KEYS
    from tapa_ai.rules.rotations import MAX_ROTATION_GAMES, ROTATIONS

    assert set(_DEFINITIONS.values()) <= set(defs)
    presets, games = defs["rotation"]["anyOf"]
    assert sorted(presets["enum"]) == sorted(ROTATIONS) and games["maxItems"] == MAX_ROTATION_GAMES
    assert set(ROTATION_KEYS) <= set(defs["play_save"]["properties"])
    assert defs["tavli_length"]["maximum"] == MAX_MATCH_LENGTH
    for name in ("rotation_match", "rotation_match_file"):
        assert defs[name]["properties"]["rotation"] == {"$ref": "#/$defs/rotation"}
        assert "rotation" in defs[name]["required"]


def test_a_schema_error_is_one_bounded_line_saying_where_and_what():
    with pytest.raises(SchemaError) as caught:
        check({"cmd": "best_move", "position": {**PLAKOTO, "points": ["X" * 5000] + PLAKOTO["points"][1:]},
               "dice": [6, 5]}, "protocol", "request_best_move")
    text = str(caught.value)
    assert text.startswith("position.points[0]: must be a string matching ^[XO]*$ of at most 15 characters")
    assert "\n" not in text and len(text) < 300 and "(5,000 characters)" in text
    with pytest.raises(SchemaError, match=r"^dice\[1\]: must be an integer 1\.\.6, got 5\.0$"):
        check({"cmd": "legal_moves", "position": TAPA, "dice": [6, 5.0]}, "protocol", "request_legal_moves")
    with pytest.raises(SchemaError, match=r"^dice\[0\]: must be an integer 1\.\.6, got True$"):
        check({"cmd": "legal_moves", "position": TAPA, "dice": [True, 5]}, "protocol", "request_legal_moves")


# -- the probe's cases, each refused by the engine in one line ---------------------------------------------------
@pytest.fixture(scope="module")
def plakoto_engine():
    return Engine(bot="net:plakoto@0ply")


@pytest.fixture(scope="module")
def narde_engine():
    return Engine(bot="net:narde@0ply")


def answer(engine, request):
    status, body = engine.respond(request)
    line = json.dumps(body)
    assert "internal error" not in line and "Traceback" not in line
    return status, body


@pytest.mark.parametrize("tavli, fragment", [
    ({"length": 26, "score": {"X": 0, "O": 0}, "game": 2}, "tavli.length: must be an integer 1..25, got 26"),
    ({"length": 5, "score": {"X": 0, "O": 0}, "game": 9223372036854775808},
     "tavli.game: must be an integer 1..10000, got 9223372036854775808"),
    ({"length": 5, "score": {"X": 0, "O": 0}, "game": 2, "round": 1}, "tavli: unknown key 'round'"),
    ({"length": 5, "score": {"X": 5, "O": 0}, "game": 2}, "has reached the match length 5"),
])
def test_found_1_a_tavli_context_out_of_range_is_a_clear_error_not_an_internal_one(plakoto_engine, tavli, fragment):
    status, body = answer(plakoto_engine, {"cmd": "best_move", "position": PLAKOTO, "dice": [6, 5], "tavli": tavli})
    assert status == 400 and fragment in body["error"], body


def test_found_1_over_http_the_status_is_400(plakoto_engine):
    import http.client

    from tests.servers import serving

    with serving(engine=plakoto_engine) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        body = json.dumps({"position": PLAKOTO, "dice": [6, 5], "tavli": {"length": 26, "score": {"X": 0, "O": 0},
                                                                           "game": 2}})
        connection.request("POST", "/v1/best_move", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        reply = json.loads(response.read())
        assert response.status == 400 and reply["error"].startswith("tavli.length: must be an integer 1..25")
        # The server publishes the schemas its clients are generated from.
        connection.request("GET", "/v1/schemas/protocol.json")
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read()) == load_schema("protocol")
        connection.request("GET", "/v1/schemas/nope.json")
        response = connection.getresponse()
        assert response.status == 404 and "protocol.json" in json.loads(response.read())["error"]


@pytest.mark.parametrize("field, value", [
    ("level", "c" * 60_000), ("noise_seed", 10 ** 4000), ("tavli", {"length": 5, "score": {"X": 0, "O": 0},
                                                                    "game": 10 ** 4000}),
    ("tavli", {"length": 5, "score": {"X": 10 ** 4000, "O": 0}, "game": 2}), ("id", "i" * 60_000),
], ids=["level", "noise_seed", "tavli.game", "tavli.score", "id"])
def test_found_4_no_answer_echoes_a_long_value(plakoto_engine, field, value):
    request = {"cmd": "best_move", "position": PLAKOTO, "dice": [6, 5], field: value}
    if field == "noise_seed":
        request["level"] = "casual"
    status, body = answer(plakoto_engine, request)
    assert status == 400 and len(json.dumps(body)) < 300, body


@pytest.mark.parametrize("command, extra", [
    ("best_move", {"dice": [6, 5]}), ("hint", {"dice": [6, 5]}), ("evaluate", {}), ("legal_moves", {"dice": [6, 5]}),
])
def test_found_5_an_unknown_key_is_refused_with_did_you_mean(plakoto_engine, command, extra):
    status, body = answer(plakoto_engine, {"cmd": command, "position": PLAKOTO, **extra, "levle": "casual"})
    assert status == 400 and body["error"].startswith("unknown key 'levle'"), body
    if command in ("best_move", "hint"):
        assert "did you mean 'level'?" in body["error"]


def test_found_8_a_result_that_contradicts_the_board_is_refused(narde_engine):
    start = position_to_json(start_position("narde"))
    status, body = answer(narde_engine, {"cmd": "evaluate", "position": {
        **start, "result": {"winner": "X", "points": 2, "kind": "gammon"}}})
    assert status == 400 and "position.result contradicts the board" in body["error"], body
    assert "the board shows no finished game" in body["error"]
    status, body = answer(narde_engine, {"cmd": "evaluate", "position": {
        **start, "result": {"winner": "X", "points": 10 ** 20, "kind": "gammon"}}})
    assert status == 400 and "position.result.points: must be an integer 0..3" in body["error"], body


def test_found_8_a_result_the_board_shows_is_answered_exactly(narde_engine):
    from tapa_ai.rules import reference
    from tapa_ai.notation.json_position import position_from_json

    won = {**position_to_json(start_position("narde")), "points": [""] * 24}
    won["points"][0] = "O" * 15   # O still has every checker; X has borne them all off
    won["off"] = {"X": 15, "O": 0}
    board = reference.finished_result(position_from_json(won))
    assert board is not None and board.winner == "X" and board.kind == "gammon"  # the board's own result
    status, body = answer(narde_engine, {"cmd": "evaluate", "position": {
        **won, "result": {"winner": "X", "points": board.points, "kind": "gammon"}}})
    assert status == 200 and body["exact"] is True and body["equity"] == board.points
    status, body = answer(narde_engine, {"cmd": "evaluate", "position": {
        **won, "result": {"winner": "X", "points": 1, "kind": "single"}}})
    assert status == 400 and "the board shows X won gammon" in body["error"], body


def test_found_9_a_levels_move_costs_one_search_at_its_depth(monkeypatch):
    """``level=world-class`` (2 plies) searched once: the ranking and the level's choice share the search."""
    from tapa_ai.bots.search import NetBot

    engine = Engine(bot="net:tapa@0ply")
    engine._warm_thread.join()
    calls = []
    original = NetBot.ranked

    def counted(self, afterstates, *args, **kwargs):
        calls.append(kwargs.get("plies", self.plies))
        return original(self, afterstates, *args, **kwargs)

    monkeypatch.setattr(NetBot, "ranked", counted)
    for command in ("best_move", "hint"):
        calls.clear()
        status, body = answer(engine, {"cmd": command, "position": TAPA, "dice": [6, 5], "level": "world-class"})
        assert status == 200, body
        assert calls.count(2) == 1, (command, calls)  # one search at the level's depth (was two)


# -- the docs' examples and the engine's answers against the schemas --------------------------------------------
def protocol_doc_requests():
    """Every request of docs/protocol.md's examples, with its ``{...}`` placeholders filled by a start position."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    requests = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        if not line.startswith('{"cmd"'):
            continue
        while line.count("{") > line.count("}") and index < len(lines):
            line += " " + lines[index].strip()
            index += 1
        variant = next((v for v in ("plakoto", "fevga", "narde", "backgammon", "portes") if f"{v} " in line
                        or f"a {v}" in line), "tapa")
        filled = re.sub(r"\{\.\.\.[^{}]*\}", json.dumps(position_to_json(start_position(variant))), line)
        requests.append(json.loads(filled))
    return requests


def test_every_request_in_the_protocol_docs_has_its_declared_shape():
    requests = protocol_doc_requests()
    assert len(requests) >= 15 and {r["cmd"] for r in requests} >= set(Engine.COMMANDS) - {"bearoff"} | {"bearoff"}
    for request in requests:
        check(request, "protocol", f"request_{request['cmd']}")


def test_the_engines_answers_have_their_declared_shape():
    engine = Engine(bot="net:tapa@0ply")
    asks = [
        {"cmd": "start", "variant": "tapa", "id": 1},
        {"cmd": "legal_moves", "position": TAPA, "dice": [6, 5]},
        {"cmd": "apply", "position": TAPA, "dice": [6, 5], "move": "24/18 24/19"},
        {"cmd": "bot_move", "bot": "heuristic", "position": TAPA, "dice": [6, 5], "seed": 1},
        {"cmd": "encode", "position": TAPA},
        {"cmd": "evaluate", "position": TAPA, "id": "e"},
        {"cmd": "best_move", "position": TAPA, "dice": [6, 5]},
        {"cmd": "best_move", "position": TAPA, "dice": [6, 5], "level": "casual", "noise_seed": 3},
        {"cmd": "hint", "position": TAPA, "dice": [6, 5], "count": 3, "level": "expert"},
        {"cmd": "rollout", "position": TAPA, "games": 36, "truncate": 5},
        {"cmd": "rollout", "position": TAPA, "dice": [3, 1], "candidates": 2, "games": 36, "truncate": 3},
        {"cmd": "bearoff", "home": [0, 0, 0, 1, 0, 2]},
        {"cmd": "bearoff", "position": {**TAPA, "points": ["XX", "X"] + [""] * 20 + ["O", "OOO"],
                                        "off": {"X": 12, "O": 11}}},
    ]
    for request in asks:
        status, body = engine.respond(request)
        assert status == 200, (request, body)
        check(body, "protocol", f"response_{request['cmd']}")
    for bad in ({"cmd": "evaluate"}, {"cmd": "nope", "id": 3}, {"cmd": "hint", "position": TAPA, "dice": [9, 9]}):
        status, body = engine.respond(bad)
        assert status == 400
        check(body, "protocol", "error")


def test_the_schema_files_ship_as_package_data():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"schemas/*.json"' in text
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == [f"{n}.json" for n in schema_names()]


def test_the_schemas_page_names_every_schema_file():
    page = (ROOT / "docs" / "schemas.md").read_text(encoding="utf-8")
    for name in schema_names():
        assert f"(../tapa_ai/schemas/{name}.json)" in page, name
