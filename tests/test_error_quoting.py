"""Issue 49, item 8: errors quote hostile input by a bounded prefix and its length, never whole
(tapa_ai.quoting.quoted, used by every layer's errors)."""

import http.client
import io
import json

import pytest

from tapa_ai.bots.basic import RunnerBot
from tapa_ai.engine.http import make_server, serve_in_thread
from tapa_ai.engine.protocol import Engine
from tapa_ai.notation import position_to_json
from tapa_ai.play import Advisor, PlaySession
from tapa_ai.rules import start_position, variant_rules

START = position_to_json(start_position("tapa"))
SHORT = 330
"""Bytes an error line may take, whatever the input (an unknown command's line lists the 12 commands)."""


def test_quoted_keeps_short_input_whole_and_cuts_long_input_with_its_length():
    from tapa_ai.quoting import quoted

    assert quoted("24/20") == "'24/20'" and quoted([6, 5]) == "[6, 5]" and quoted(None) == "None"
    long = quoted("24/20 " * 100_000)
    assert long.startswith("'24/20 24/20") and long.endswith("... (600,000 characters)") and len(long) < 120
    escaped = quoted('\\"' * 30_000)  # characters the repr escapes count against the limit too
    assert escaped.endswith("(60,000 characters)") and len(escaped) < 120
    assert quoted([7] * 20_000) == "[7, 7, 7, 7, 7, 7, 7, 7, ...] (20,000 items)"
    assert len(quoted({"k" * 60_000: 1})) < 120 and len(quoted(["x" * 60_000] * 100)) < 120


def test_quoted_keeps_up_to_the_limit_whole_and_cuts_at_the_last_character_that_fits():
    # Found by mutation testing of tapa_ai/quoting.py: the edges of the limit.
    from tapa_ai.quoting import QUOTE_LIMIT, quoted

    assert QUOTE_LIMIT == 80
    assert quoted("x" * 80) == repr("x" * 80)
    assert quoted("x" * 81) == repr("x" * 80) + "... (81 characters)"
    # A cut string's repr takes at most limit + 2 characters (its quotes); a backslash takes 2 of them.
    assert quoted("x" + "\\" * 100) == repr("x" + "\\" * 39) + "... (101 characters)"  # 81 characters of repr
    assert quoted("xx" + "\\" * 100) == repr("xx" + "\\" * 39) + "... (102 characters)"  # 82 characters of repr
    # At least one character is quoted, however small the limit.
    assert quoted("\x00" * 10, limit=2) == "'\\x00'... (10 characters)"


def test_quoted_shortens_a_repr_longer_than_the_limit_and_keeps_one_of_exactly_the_limit():
    from tapa_ai.quoting import quoted

    assert quoted([1, 2, 3], limit=9) == "[1, 2, 3]"
    assert quoted([1, 2, 3], limit=8) == "[1, 2, 3... (3 items)"


@pytest.mark.parametrize("move, says", [
    ("24/20 " * 100_000, "more than four checker moves"),  # 600 KB
    ("x" * 600_000, "expected from/to"),
    ("24/" + "2" * 600_000, "is not a point (1-24 or off)"),  # was an internal error: int() of 600,000 digits
], ids=["six-moves-repeated", "one-word", "600000-digits"])
def test_a_600_kb_move_text_gets_a_short_error_through_the_engine_protocol(move, says):
    # The protocol's schema refuses it first (a move text is at most 200 characters) ...
    status, answer = Engine("reference").respond({"cmd": "apply", "position": START, "dice": [4, 3], "move": move})
    line = json.dumps(answer)
    assert status == 400 and len(line) < SHORT, line[:400]
    assert answer["error"].startswith("move: must be move text") and "at most 200 characters" in answer["error"]
    assert f"({len(move):,} characters)" in answer["error"]
    # ... and the move text reader, which tapa-ai play and the saved files use, says what is wrong, as short.
    from tapa_ai.notation.move_text import MoveTextError, find_move
    from tapa_ai.notation.json_position import position_from_json
    from tapa_ai.rules.reference import legal_moves

    position = position_from_json(START)
    with pytest.raises(MoveTextError) as caught:
        find_move(position, (4, 3), move, legal_moves(position, (4, 3)))
    assert says in str(caught.value) and len(str(caught.value)) < SHORT
    assert f"({len(move):,} characters)" in str(caught.value)


HOSTILE = "\\abc" * 12_500  # 50,000 characters, 62,500 bytes of JSON: the repr and JSON both escape "\\"


@pytest.mark.parametrize("request_, says", [
    ({"cmd": "apply", "position": START, "dice": [4, 3], "move": HOSTILE}, "move text"),
    ({"cmd": "q" * 60_000}, "unknown cmd"),
    ({"cmd": "legal_moves", "position": START, "dice": "7" * 60_000}, "dice: must be two integers 1..6"),
    ({"cmd": "legal_moves", "position": START, "dice": [7] * 20_000}, "dice: must be two integers 1..6"),
    ({"cmd": "legal_moves", "position": START, "dice": [4, 3], "generator": HOSTILE}, "generator: must be one of"),
    ({"cmd": "legal_moves", "position": {**START, "turn": HOSTILE}, "dice": [4, 3]}, "position.turn"),
    ({"cmd": "legal_moves", "position": {**START, "points": [HOSTILE] + START["points"][1:]}, "dice": [4, 3]},
     "points[0]"),
    ({"cmd": "start", "turn": HOSTILE}, "turn: must be one of \"X\", \"O\""),
    ({"cmd": "start", "variant": HOSTILE}, "variant: must be one of"),
    ({"cmd": "start", "rules": {HOSTILE: 1}}, "rules: unknown key"),
    ({"cmd": "bearoff", "home": HOSTILE}, "home: must be a list of 6 items"),
], ids=["move", "cmd", "dice-text", "dice-list", "generator", "position.turn", "position.points", "turn", "variant",
        "rules", "home"])
def test_60_kb_fields_get_short_errors_that_say_what_is_wrong(request_, says):
    line = Engine("reference").handle_line(json.dumps(request_))
    assert len(line) < SHORT and says in json.loads(line)["error"], line[:400]


def test_a_60_kb_http_body_gets_a_short_error_body():
    server = make_server("127.0.0.1", 0, engine=Engine("reference"), quiet=True)
    thread = serve_in_thread(server)
    try:
        for path, request in (("/v1/apply", {"position": START, "dice": [4, 3], "move": HOSTILE}),
                              ("/", {"cmd": HOSTILE})):
            body = json.dumps(request).encode()
            assert 60_000 < len(body) < 65_536
            connection = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
            connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            data = response.read()
            connection.close()
            error = json.loads(data)["error"]
            assert response.status == 400 and len(data) < SHORT, data[:400]
            assert ("move text" in error or "unknown cmd" in error) and "(50,000 characters)" in error
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_a_600_kb_move_typed_in_tapa_ai_play_gets_a_short_error(tmp_path):
    rules = variant_rules("tapa")
    game = tmp_path / "game.json"
    game.write_text(json.dumps({"format": "tapa-ai/play", "version": 1, "position": START, "dice": [4, 3]}))
    for typed, says in (("24/20 " * 100_000, "Illegal move"), ("24/" + "2" * 600_000, "Illegal move"),
                        ("hint " + "9" * 600_000, "hint N")):
        out = io.StringIO()
        session = PlaySession(rules, RunnerBot(), input=io.StringIO(f"load {game}\n{typed}\nquit\ny\n"),
                              output=out, colour=False, seed=1, advisor=Advisor(None, rules, why_none="none"))
        session.run()
        errors = [line for line in out.getvalue().splitlines() if says in line and "> " not in line[:40]]
        assert errors and all(len(line) < 2 * SHORT for line in errors), [line[:300] for line in errors]
        assert "Internal error" not in out.getvalue()
