"""A level through the protocol for a variant played by another variant's model: Portes by the backgammon model.

Levels are calibrated per model (tapa_ai/models/levels.json has no ``portes`` entry); the engine looks a
request's ``"level"`` up by the rules of the model it plays with (``--bot net:backgammon``), not by the
variant of the request's position (docs/levels.md). Every other engine level test plays tapa, where the two
are the same; this one fails if the lookup went by the position. The expected levels are read from the data
file itself, not through tapa_ai.bots.levels.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tapa_ai.engine.protocol import Engine
from tapa_ai.notation.json_position import position_to_json
from tapa_ai.rules import variant_rules
from tapa_ai.rules.position import start_position

LEVELS_FILE = Path(__file__).resolve().parent.parent / "tapa_ai" / "models" / "levels.json"


@pytest.fixture(scope="module")
def engine():
    return Engine(bot="net:backgammon")


@pytest.fixture(scope="module")
def backgammon_levels():
    data = json.loads(LEVELS_FILE.read_text())
    assert "portes" not in data["variants"], "portes has its own levels now: this test no longer tells the two apart"
    return data["variants"]["backgammon"]["levels"]


def ask(engine, request):
    response = json.loads(engine.handle_line(json.dumps(request)))
    assert "error" not in response, response
    return response


def portes_start():
    return position_to_json(start_position(variant_rules("portes"), "X"))


@pytest.mark.parametrize("name", ["beginner", "casual", "expert"])
def test_a_portes_best_move_at_a_level_uses_the_backgammon_models_levels(engine, backgammon_levels, name):
    position = portes_start()
    answer = ask(engine, {"cmd": "best_move", "position": position, "dice": [6, 5], "level": name,
                          "noise_seed": 7})
    level = backgammon_levels[name]
    assert answer["level"] == {"name": name, "plies": level["plies"], "noise": level["noise"], "noise_seed": 7}
    assert answer["position"]["variant"] == "portes"
    legal = ask(engine, {"cmd": "legal_moves", "position": position, "dice": [6, 5]})
    assert answer["level_move"] == answer["move"]
    assert answer["move"] in [entry["move"] if isinstance(entry, dict) else entry for entry in legal["moves"]]


def test_a_portes_hint_at_a_level_uses_the_backgammon_models_levels(engine, backgammon_levels):
    answer = ask(engine, {"cmd": "hint", "position": portes_start(), "dice": [3, 1], "level": "casual",
                          "count": 3})
    casual = backgammon_levels["casual"]
    assert (answer["level"]["plies"], answer["level"]["noise"]) == (casual["plies"], casual["noise"])
    assert answer["plies"] == casual["plies"] and len(answer["moves"]) == 3


def test_a_portes_position_with_an_unknown_level_names_the_levels(engine):
    answer = json.loads(engine.handle_line(json.dumps({"cmd": "best_move", "position": portes_start(),
                                                       "dice": [6, 5], "level": "casul"})))
    assert "unknown level" in answer["error"] and "casual" in answer["error"]
