"""The engine protocol's ``"rotation_match"`` context (docs/protocol.md): ``best_move`` and ``hint`` on a game of any
rotation's match (Tabla here: backgammon, Gul Bara, Tapa) rank the moves by the mover's match-winning chance with
the rotation's match equity table; ``"tavli"`` stays the Tavli rotation's short form; every bad context is one
line. And the server's side of it: the preset rotations of ``GET /v1/variants`` and any rotation's table."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pytest

from tapa_ai.cube.rotation_met import OPENING_ROLL, OPENS, RECEIVES, rotation_met
from tapa_ai.engine.protocol import Engine
from tapa_ai.notation import position_to_json
from tapa_ai.rules import reference, start_position
from tapa_ai.rules.rotations import ROTATIONS, parse_rotation

TABLA = ROTATIONS["tabla"]


def ask(engine, request):
    return json.loads(engine.handle_line(json.dumps(request)))


@pytest.fixture(scope="module")
def backgammon_engine():
    return Engine(bot="net:backgammon")


def random_positions(rules, count: int, seed: int):
    """Positions of ``rules`` a few random plies into a game, with a roll each."""
    rng = np.random.default_rng(seed)
    positions = []
    while len(positions) < count:
        position = start_position(rules, "XO"[len(positions) % 2])
        for _ in range(int(rng.integers(4, 24))):
            moves = reference.legal_moves(position, tuple(int(d) for d in rng.integers(1, 7, 2)))
            following = moves[int(rng.integers(len(moves)))].position
            if following.result is not None:
                break
            position = reference.next_turn(following)
        else:
            positions.append((position, tuple(int(d) for d in rng.integers(1, 7, 2))))
    return positions


def by_hand(table, points, away: int, opponent_away: int, game_index: int) -> np.ndarray:
    """Each outcome class's worth to the mover, read off the table cell by cell (docs/protocol.md): a win by p
    leads to the next game opened by the mover p points nearer, a loss to the next game opened by the opponent,
    a draw to one opened by an opening roll."""
    after = game_index + 1
    values = []
    for value in points:
        size = int(round(abs(float(value))))
        if value > 0:
            values.append(1.0 if away - size <= 0 else table.equity(away - size, opponent_away, after, OPENS))
        elif value < 0:
            values.append(0.0 if opponent_away - size <= 0 else table.equity(away, opponent_away - size, after,
                                                                              RECEIVES))
        else:
            values.append(table.equity(away, opponent_away, after, OPENING_ROLL))
    return np.asarray(values)


@pytest.mark.parametrize("game", [1, 4])
def test_best_move_and_hint_in_a_tabla_match_rank_by_the_tabla_tables_match_winning_chance(backgammon_engine, game):
    from tapa_ai.bots.base import one_position_afterstates
    from tapa_ai.bots.spec import make_bot

    rules = TABLA.rules(game)
    assert rules.name == "backgammon" and not rules.cube
    bot = make_bot("net:backgammon", rules)
    table = rotation_met(TABLA)
    assert table.variants == ("backgammon", "gulbara", "tapa")
    changed = 0
    scores = [(3, 4), (4, 3), (0, 0), (2, 4), (4, 4), (1, 0)] * 5
    for (position, dice), score in zip(random_positions(rules, 30, game), scores):
        context = {"rotation": "tabla", "length": 5, "score": {"X": score[0], "O": score[1]}, "game": game}
        request = {"cmd": "best_move", "position": position_to_json(position), "dice": list(dice),
                   "rotation_match": context}
        answer = ask(backgammon_engine, request)
        mover = 0 if position.turn == "X" else 1
        away, other = 5 - score[mover], 5 - score[1 - mover]
        values = by_hand(table, bot.evaluator.points, away, other, game - 1)
        afterstates = one_position_afterstates(position, dice)
        chances = bot.evaluate(afterstates) @ values  # each legal move's expected match-winning chance
        assert answer["match_winning_chance"] == pytest.approx(float(chances.max()), abs=1e-6)
        money = ask(backgammon_engine, {key: value for key, value in request.items() if key != "rotation_match"})
        assert "match_winning_chance" not in money
        changed += money["move"] != answer["move"]
        hint = ask(backgammon_engine, {**request, "cmd": "hint", "count": 4})
        assert hint["moves"][0]["move"] == answer["move"] and hint["moves"][0]["difference"] == 0
        listed = [m["match_winning_chance"] for m in hint["moves"]]
        assert listed == sorted(listed, reverse=True)
        assert [m["difference"] for m in hint["moves"]] == pytest.approx([c - listed[0] for c in listed])
        assert sorted(chances, reverse=True)[:len(listed)] == pytest.approx(listed, abs=1e-6)
    assert changed, "the score never changed the move in 30 positions"


def test_the_rotation_as_a_list_of_games_is_the_same_rotation(backgammon_engine):
    position, dice = random_positions(TABLA.rules(1), 1, 11)[0]
    base = {"cmd": "hint", "position": position_to_json(position), "dice": list(dice), "count": 3}
    context = {"length": 7, "score": {"X": 2, "O": 5}, "game": 1}
    named = ask(backgammon_engine, {**base, "rotation_match": {**context, "rotation": "tabla"}})
    listed = ask(backgammon_engine, {**base, "rotation_match": {**context, "rotation": ["backgammon", "gulbara",
                                                                                        "tapa"]}})
    assert named == listed and "match_winning_chance" in named["moves"][0]
    # A rotation of backgammon alone is another table: game 2 is backgammon again, not Gul Bara.
    alone = ask(backgammon_engine, {**base, "rotation_match": {**context, "rotation": ["backgammon"], "game": 2}})
    assert "error" not in alone and alone["moves"][0]["match_winning_chance"] != named["moves"][0][
        "match_winning_chance"]


def test_the_tavli_key_is_the_tavli_rotations_short_form():
    engine = Engine(bot="net:plakoto")
    position = start_position(ROTATIONS["tavli"].rules(2), "O")
    base = {"cmd": "hint", "position": position_to_json(position), "dice": [6, 3], "count": 5}
    context = {"length": 5, "score": {"X": 3, "O": 1}, "game": 2}
    short = ask(engine, {**base, "tavli": context})
    long = ask(engine, {**base, "rotation_match": {**context, "rotation": "tavli"}})
    assert short == long and "match_winning_chance" in short["moves"][0]
    assert ask(engine, {**base, "tavli": {**context, "rotation": "tavli"}})["error"].startswith("tavli: unknown key")


@pytest.mark.parametrize("context,expected", [
    ({"rotation": "tablaa", "length": 5}, "rotation_match.rotation: must be one of \"tavli\", \"tabla\""),
    ({"rotation": [], "length": 5}, "rotation_match.rotation: a rotation needs at least one game"),
    ({"rotation": ["backgammon", "gul"], "length": 5}, "rotation_match.rotation[1]: must be one of"),
    ({"rotation": [{"variant": "backgammon", "rules": {"cube": True}}], "length": 5},
     "rotation_match.rotation: game backgammon of the rotation: cube must be false"),
    ({"rotation": "tabla", "length": 5, "game": 2},
     "rotation_match.game: game 2 of the tabla match is gulbara (the rotation backgammon, gulbara, tapa), but the "
     "position is backgammon"),
    ({"rotation": "tavli", "length": 5, "game": 1}, "rotation_match.game: game 1 of the tavli match is portes"),
    ({"rotation": "tabla", "length": 5, "score": {"X": 5, "O": 0}},
     "rotation_match.score.X: 5 has reached the match length 5"),
    ({"rotation": "tabla", "length": 26}, "rotation_match.length: must be an integer 1..25, got 26"),
    ({"length": 5}, "rotation_match: missing 'rotation'"),
    ({"rotation": "tabla", "length": 5, "cube": 2}, "rotation_match: unknown key 'cube'"),
    ("tabla", "rotation_match: must be"),
])
def test_a_bad_rotation_context_is_one_clear_line(backgammon_engine, context, expected):
    request = {"cmd": "best_move", "position": position_to_json(start_position(TABLA.rules(1), "X")),
               "dice": [6, 5], "rotation_match": context}
    error = ask(backgammon_engine, request)["error"]
    assert error.startswith(expected) and "\n" not in error and len(error) < 400, error


def test_rotation_match_and_tavli_at_once_is_one_error(backgammon_engine):
    request = {"cmd": "hint", "position": position_to_json(start_position(TABLA.rules(1), "X")), "dice": [6, 5],
               "rotation_match": {"rotation": "tabla", "length": 5}, "tavli": {"length": 5}}
    assert ask(backgammon_engine, request)["error"] == \
        "give \"rotation_match\" or \"tavli\" (its short form for the Tavli rotation), not both"


# -- the server: the preset rotations and any rotation's table -----------------------------------------------
@pytest.fixture(scope="module")
def server():
    from tests.servers import serving

    with serving() as server:
        yield server


def get(server, path):
    try:
        with urllib.request.urlopen(server.url + path, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_variants_answer_lists_the_preset_rotations(server):
    status, answer = get(server, "/v1/variants")
    assert status == 200 and "tavli_rotation" not in answer
    no_cube = {"cube": False, "crawford": False}
    assert answer["rotations"] == {
        "tavli": {"title": "Tavli (Portes, Plakoto, Fevga)", "games": ["portes", "plakoto", "fevga"],
                  "rules": [{}, {}, {}], "met": "/model/tavli-met.json"},
        "tabla": {"title": "Tabla (Backgammon, Gul Bara, Tapa)", "games": ["backgammon", "gulbara", "tapa"],
                  "rules": [no_cube, {}, no_cube], "met": "/model/tabla-met.json"}}


@pytest.mark.parametrize("path", ["/model/tabla-met.json", "/v1/rotation-met?rotation=tabla",
                                  "/v1/rotation-met?rotation=backgammon,gulbara,tapa"])
def test_the_tabla_table_is_served_whole(server, path):
    status, served = get(server, path)
    table = rotation_met(TABLA)
    assert status == 200 and served["format"] == "tapa-ai-rotation-met" and served["format_version"] == 1
    assert served["name"] == "tabla" and served["rotation"] == "tabla"
    assert served["games"] == ["backgammon", "gulbara", "tapa"] and served["title"] == TABLA.title()
    assert np.array_equal(np.asarray(served["table"]), table.table)  # every double, exactly
    assert [rates["variant"] for rates in served["rates"]] == served["games"]
    assert [rates["first_mover"] for rates in served["rates"]] == [r.first_mover for r in table.rates]
    assert [rates["top_points"] for rates in served["rates"]] == [r.top_points for r in table.rates]
    assert all(rates["source"] for rates in served["rates"])


def test_a_custom_rotations_table_and_bad_queries(server):
    status, served = get(server, "/v1/rotation-met?rotation=tapa,fevga")
    assert status == 200 and served["rotation"] == ["tapa", "fevga"] and served["name"] == "custom"
    assert np.array_equal(np.asarray(served["table"]), rotation_met(parse_rotation("tapa,fevga")).table)
    status, served = get(server, "/model/tavli-met.json")
    assert status == 200 and served["games"] == ["portes", "plakoto", "fevga"]
    assert get(server, "/model/tablaa-met.json") == (404, {"error": "no match equity table: unknown rotation "
                                                                    "'tablaa'; presets: ['tabla', 'tavli'], or name "
                                                                    "the games comma-separated (backgammon,gulbara,"
                                                                    "tapa)"})
    status, answer = get(server, "/v1/rotation-met?rotation=tapa,chess")
    assert status == 400 and answer["error"].startswith("rotation-met: unknown variant 'chess' in the rotation")
    status, answer = get(server, "/v1/rotation-met")
    assert status == 400 and answer["error"].startswith("rotation-met: give one ?rotation=")
