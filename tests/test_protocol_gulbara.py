"""The engine protocol and HTTP on Gul Bara's stage positions (docs/rules.md 10.3, docs/protocol.md).

A position inside a cascade carries ``cascade`` (and each side's ``turns``); the commands that play take it with
no dice or the stage's ``[k, k]``, a move's resulting position says who plays ``next``, and every malformed
piece is one line naming it. With a model, ``best_move``, ``hint`` and ``evaluate`` answer on stage positions
from the side to move's view, as they do on any position.
"""

from __future__ import annotations

import http.client
import json

import pytest

from tapa_ai.engine.protocol import Engine
from tapa_ai.notation import position_to_json
from tapa_ai.rules.options import GULBARA
from tapa_ai.rules.position import start_position
from tapa_ai.rules.reference import legal_moves, next_turn
from tapa_ai.rules.turns import Cascade
from tests.servers import serving
from tests.test_engine_model import save_tiny_net

START = position_to_json(start_position(GULBARA, "X"))
IN_CASCADE = dict(START, turns={"X": 3, "O": 1}, cascade={"number": 4, "steps": 4, "remainder": False})


def ask(engine, request):
    status, text = engine.respond_text(json.dumps(request))
    return status, json.loads(text)


@pytest.fixture(scope="module")
def engine():
    return Engine()


def test_a_cascades_first_stage_leads_to_the_same_sides_next_stage(engine):
    position = dict(START, turns={"X": 3, "O": 3})
    status, answer = ask(engine, {"cmd": "legal_moves", "position": position, "dice": [5, 5]})
    assert status == 200
    expected = legal_moves(start_position(GULBARA, "X").with_changes(turns=(3, 3)), (5, 5))
    assert len(answer["moves"]) == len(expected)
    after = answer["moves"][0]["position"]
    assert after["turn"] == "X" and after["next"] == "X"
    assert after["cascade"] == {"number": 6, "steps": 4, "remainder": False} and after["turns"] == {"X": 3, "O": 3}


def test_a_stage_is_played_with_no_dice_or_its_own(engine):
    plain = ask(engine, {"cmd": "legal_moves", "position": IN_CASCADE})
    named = ask(engine, {"cmd": "legal_moves", "position": IN_CASCADE, "dice": [4, 4]})
    assert plain == named and plain[0] == 200
    position = start_position(GULBARA, "X").with_changes(turns=(3, 1), cascade=Cascade(4))
    assert {json.dumps(m["position"], sort_keys=True) for m in plain[1]["moves"]} == \
        {json.dumps(position_to_json(m.position), sort_keys=True) for m in legal_moves(position)}
    move = plain[1]["moves"][0]["move"]
    status, applied = ask(engine, {"cmd": "apply", "position": IN_CASCADE, "move": move})
    assert status == 200 and applied["position"]["next"] == "X" and applied["position"]["cascade"]["number"] == 5


@pytest.mark.parametrize("request_change, message", [
    ({"dice": [3, 3]}, "dice [3, 3]: X is inside a cascade and plays 4 steps of 4 with no roll; give no dice or "
                       "[4, 4]"),
    ({"position": dict(IN_CASCADE, cascade={"number": 7})}, "position.cascade"),
    ({"position": dict(IN_CASCADE, cascade={"number": 4, "steps": 0})}, "position.cascade"),
    ({"position": dict(IN_CASCADE, cascade={"number": 4, "stage": 1})}, "position.cascade"),
    ({"position": dict(IN_CASCADE, turns={"X": 9, "O": 0})}, "turns"),
    ({"position": dict(IN_CASCADE, turns={"X": 1, "O": 0})}, "its doubles are still plain"),
    ({"position": dict(START, cascade={"number": 4}, turns={"X": 3, "O": 0}, variant="fevga")}, "cascade"),
    ({"position": dict(IN_CASCADE, next="X")}, "position.next: this is a move's resulting position; to play on, "
                                               "set 'turn' to 'X' and drop 'next'"),
    ({"position": dict(START, turns={"X": 3, "O": 3})}, "dice: X is to roll; give two dice 1..6"),
])
def test_a_malformed_stage_request_is_one_line_naming_what_is_wrong(engine, request_change, message):
    request = {"cmd": "legal_moves", "position": IN_CASCADE, **request_change}
    status, answer = ask(engine, request)
    assert status == 400 and message in answer["error"] and "\n" not in answer["error"], answer
    assert len(answer["error"]) < 400


def test_http_serves_a_stage_like_the_engine():
    with serving(engine=Engine("reference")) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        body = json.dumps({"cmd": "legal_moves", "position": IN_CASCADE})
        connection.request("POST", "/v1/legal_moves", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
    assert response.status == 200, answer
    assert answer == ask(Engine("reference"), {"cmd": "legal_moves", "position": IN_CASCADE})[1]


@pytest.fixture(scope="module")
def model_engine(tmp_path_factory):
    path = save_tiny_net("gulbara", tmp_path_factory.mktemp("nets") / "tiny-gulbara.pt", encoding_version=5)
    return Engine(bot=f"net:{path}@1ply")


def test_a_model_answers_on_stage_positions_from_the_side_to_moves_view(model_engine):
    status, best = ask(model_engine, {"cmd": "best_move", "position": IN_CASCADE, "plies": 1})
    assert status == 200, best
    legal = {m["move"] for m in ask(model_engine, {"cmd": "legal_moves", "position": IN_CASCADE})[1]["moves"]}
    assert best["move"] in legal
    status, hint = ask(model_engine, {"cmd": "hint", "position": IN_CASCADE, "dice": [4, 4], "plies": 0})
    assert status == 200 and hint["moves"][0]["move"] in legal
    status, value = ask(model_engine, {"cmd": "evaluate", "position": IN_CASCADE})
    assert status == 200 and abs(sum(value["probabilities"].values()) - 1) < 1e-5
    # The first stage's best move, followed by the same side's stage: its resulting position says so.
    status, first = ask(model_engine, {"cmd": "best_move", "position": dict(START, turns={"X": 3, "O": 3}),
                                       "dice": [5, 5], "plies": 0})
    assert status == 200 and first["position"]["next"] == "X", first
    follow = next_turn(legal_moves(start_position(GULBARA, "X").with_changes(turns=(3, 3)), (5, 5))[0].position)
    assert follow.cascade == Cascade(6)
