"""The engine protocol: commands, id echo, errors as JSON, and fuzzing."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tapa_ai.engine.protocol import Engine, serve
from tapa_ai.notation import board, position_to_json
from tapa_ai.rules import start_position


@pytest.fixture(scope="module")
def engine():
    return Engine("reference")


def ask(engine, request):
    line = request if isinstance(request, (str, bytes)) else json.dumps(request)
    return json.loads(engine.handle_line(line))


def test_start_returns_the_start_position(engine):
    response = ask(engine, {"cmd": "start", "variant": "plakoto", "id": 7})
    assert response["id"] == 7
    assert response["position"]["points"][23] == "X" * 15 and response["position"]["points"][0] == "O" * 15


def test_legal_moves_lists_one_entry_per_resulting_position(engine):
    position = position_to_json(start_position("plakoto"))
    response = ask(engine, {"cmd": "legal_moves", "position": position, "dice": [6, 5]})
    assert sorted(m["move"] for m in response["moves"]) == ["24/18 18/13", "24/18 24/19"]
    for entry in response["moves"]:
        assert entry["position"]["turn"] == "X" and "result" not in entry["position"]


def test_passed_turn_is_one_entry_with_empty_move(engine):
    position = position_to_json(board("tapa", "20:X 17:OO 15:OO"))
    response = ask(engine, {"cmd": "legal_moves", "position": position, "dice": [5, 3]})
    assert response["moves"] == [{"move": "", "position": position}]


def test_game_ending_move_carries_the_result(engine):
    position = position_to_json(board("tapa", "3:X 20:XX 1:O 13:OOOO"))
    response = ask(engine, {"cmd": "apply", "position": position, "dice": [2, 1], "move": "3/1"})
    assert response["position"]["result"] == {"winner": "X", "points": 3, "kind": "mother"}


def test_apply_returns_the_resulting_position(engine):
    position = position_to_json(start_position("backgammon"))
    response = ask(engine, {"cmd": "apply", "position": position, "dice": [6, 5], "move": "24/13"})
    assert response["move"] == "24/18 18/13"
    assert response["position"]["points"][12] == "XXXXXX" and response["position"]["turn"] == "X"


@pytest.mark.parametrize("request_,fragment", [
    ("this is not json", "not valid JSON"),
    (b"\xff\xfe", "not UTF-8"),
    ("[1, 2]", "JSON object"),
    ({"cmd": "fly"}, "unknown cmd"),
    ({"cmd": "start", "variant": "chess"}, "variant: must be one of \"tapa\""),
    ({"cmd": "legal_moves", "dice": [1, 2]}, "missing 'position'"),
    ({"cmd": "legal_moves", "position": {"variant": "tapa"}, "dice": [1, 2]}, "position: missing 'points'"),
    ({"cmd": "legal_moves", "position": "START", "dice": [7, 2]}, "dice"),
    ({"cmd": "legal_moves", "position": "START", "dice": [0, 2]}, "dice"),
    ({"cmd": "legal_moves", "position": "START", "dice": [1.5, 2]}, "dice"),
    ({"cmd": "legal_moves", "position": "START", "dice": [1, 2, 3]}, "dice"),
    ({"cmd": "legal_moves", "position": "START", "dice": "12"}, "dice"),
    ({"cmd": "legal_moves", "position": "START", "dice": [1, 2], "generator": "magic"}, "generator: must be one of \"reference\", \"vectorized\", got 'magic'"),
    ({"cmd": "apply", "position": "START", "dice": [1, 2], "move": "24/20"}, "legal moves"),
    ({"cmd": "apply", "position": "START", "dice": [1, 2], "move": "24-20"}, "24-20"),
    ({"cmd": "apply", "position": "START", "dice": [1, 2]}, "missing 'move'"),
    ({"cmd": "legal_moves", "position": "OVER", "dice": [1, 2]}, "already over"),
    ({"cmd": "legal_moves", "position": "IMPOSSIBLE", "dice": [1, 2]}, "checkers"),
])
def test_bad_requests_get_an_error_and_the_engine_keeps_serving(engine, request_, fragment):
    if isinstance(request_, dict) and isinstance(request_.get("position"), str):
        request_ = dict(request_, position={
            "START": position_to_json(start_position("tapa")),
            "OVER": {**position_to_json(board("tapa", "1:X 13:OO")), "off": {"X": 15, "O": 13}, "points": ["", *[""] * 11, "OO", *[""] * 11]},
            "IMPOSSIBLE": {**position_to_json(start_position("tapa")), "off": {"X": 3, "O": 0}},
        }[request_["position"]])
    response = ask(engine, request_)
    assert set(response) <= {"error", "id"} and fragment in response["error"], response
    assert "moves" in ask(engine, {"cmd": "legal_moves", "position": position_to_json(start_position("tapa")),
                                    "dice": [3, 1]})


def test_errors_echo_the_request_id(engine):
    assert ask(engine, {"cmd": "nope", "id": "abc"}) == {"id": "abc", "error": "unknown cmd 'nope' (commands: "
                                                        "start, legal_moves, apply, bearoff, bot_move, read_match, encode, "
                                                        "evaluate, best_move, hint, cube, rollout, analyse)"}


def test_serve_answers_one_line_per_request_and_skips_blank_lines():
    requests = b'{"cmd": "start", "variant": "tapa", "id": 1}\n\n garbage \n{"cmd": "start", "id": 2}\n'
    out = io.StringIO()
    assert serve(io.BytesIO(requests), out, generator="reference") == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line.get("id") for line in lines] == [1, None, 2]
    assert "error" in lines[1]


def test_engine_command_runs_as_a_process():
    requests = "\n".join([
        json.dumps({"cmd": "start", "variant": "backgammon", "id": 1}),
        "{oops",
        json.dumps({"cmd": "legal_moves", "position": position_to_json(start_position("backgammon")),
                    "dice": [3, 1], "id": 2, "generator": "reference"}),
    ]) + "\n"
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "engine", "--generator", "reference"],
                          input=requests, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["id"] == 1 and "error" in lines[1] and len(lines[2]["moves"]) == 16


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 30) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_fuzz_random_bytes_never_crash(data):
    response = json.loads(Engine("reference").handle_line(data))
    assert isinstance(response, dict)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command=st.sampled_from(["start", "legal_moves", "apply", "x"]), position=json_values, dice=json_values,
       move=json_values, variant=json_values)
def test_fuzz_random_json_requests_get_json_answers(command, position, dice, move, variant):
    request = {"cmd": command, "position": position, "dice": dice, "move": move, "variant": variant}
    response = json.loads(Engine("reference").handle_line(json.dumps(request)))
    assert isinstance(response, dict)
    assert "internal error" not in response.get("error", ""), response


@settings(max_examples=200, deadline=None)
@given(points=st.lists(st.sampled_from(["", "X", "O", "XX", "OO", "XO", "OX", "XOO", "OXX", "XXX" * 2, "O" * 7]),
                       min_size=24, max_size=24),
       off_x=st.integers(0, 15), off_o=st.integers(0, 15), dice=st.tuples(st.integers(1, 6), st.integers(1, 6)),
       variant=st.sampled_from(["tapa", "plakoto", "backgammon"]))
def test_fuzz_random_positions_get_moves_or_a_clear_error(points, off_x, off_o, dice, variant):
    request = {"cmd": "legal_moves", "dice": list(dice), "position": {
        "variant": variant, "points": points, "off": {"X": off_x, "O": off_o}, "turn": "X"}}
    response = json.loads(Engine("reference").handle_line(json.dumps(request)))
    assert ("moves" in response) != ("error" in response)
    assert "internal error" not in response.get("error", ""), response


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_both_generators_give_the_same_moves_through_the_protocol(variant):
    import random

    from tapa_ai.rules import legal_moves, next_turn

    engine = Engine()
    assert engine.default_generator == "vectorized"
    rng = random.Random(7)
    position = start_position(variant)
    for _ in range(40):
        dice = [rng.randint(1, 6), rng.randint(1, 6)]
        answers = {}
        for generator in ("reference", "vectorized"):
            response = ask(engine, {"cmd": "legal_moves", "position": position_to_json(position), "dice": dice,
                                    "generator": generator})
            answers[generator] = sorted(json.dumps(m["position"], sort_keys=True) for m in response["moves"])
        assert answers["reference"] == answers["vectorized"]
        move = rng.choice(legal_moves(position, dice))
        if move.position.result is not None:
            position = start_position(variant)
        else:
            position = next_turn(move.position)


# -- the cube command ----------------------------------------------------------------------------
RACE = position_to_json(board("backgammon", "6:X 24:O"))
BACKGAMMON_START = position_to_json(start_position("backgammon"))


@pytest.fixture(scope="module")
def cube_engine(tmp_path_factory):
    from .test_engine_model import save_tiny_net

    return Engine(bot=f"net:{save_tiny_net('backgammon', tmp_path_factory.mktemp('cube') / 'tiny.pt')}")


def test_cube_answers_the_action_the_response_and_three_equities(cube_engine):
    response = ask(cube_engine, {"cmd": "cube", "position": RACE, "id": 3})
    assert response["id"] == 3 and response["action"] in ("double", "no_double")
    assert response["response"] in ("take", "pass") and response["may_double"] is True
    equities = response["equities"]
    assert set(equities) == {"no_double", "double_take", "double_pass"} and equities["double_pass"] == 1.0
    best = max(equities["no_double"], min(equities["double_take"], equities["double_pass"]))
    assert response["equity"] == pytest.approx(best) and response["units"] == "points"
    assert (response["side"], response["receiver"]) == ("X", "O") and response["cube"] == {"value": 1, "owner": None}
    assert sum(response["probabilities"].values()) == pytest.approx(1.0, abs=1e-5)


def test_cube_in_a_match_answers_in_match_winning_chances(cube_engine):
    request = {"cmd": "cube", "position": RACE, "cube": {"value": 2, "owner": "X"},
               "match": {"length": 7, "score": {"X": 3, "O": 5}, "crawford": False}}
    response = ask(cube_engine, request)
    assert response["units"] == "mwc" and 0 <= response["equity"] <= 1
    assert response["match"]["away"] == {"X": 4, "O": 2} and not response["match"]["post_crawford"]
    # A pass gives X 2 points: 2-away against 2-away, an even match.
    assert response["equities"]["double_pass"] == pytest.approx(0.5)


def test_in_the_crawford_game_nobody_may_double(cube_engine):
    request = {"cmd": "cube", "position": RACE, "match": {"length": 7, "score": {"X": 2, "O": 6}, "crawford": True}}
    response = ask(cube_engine, request)
    assert response["may_double"] is False and response["action"] == "no_double" and response["response"] is None
    assert response["reason"] == "no doubling in the Crawford game" and set(response["equities"]) == {"no_double"}


def test_the_owner_of_a_cube_at_64_may_not_double(cube_engine):
    response = ask(cube_engine, {"cmd": "cube", "position": RACE, "cube": {"value": 64, "owner": "X"}})
    assert response["may_double"] is False and "64" in response["reason"]


@pytest.mark.parametrize("extra,fragment", [
    ({"cube": {"value": 3, "owner": "X"}}, "cube.value: must be one of 1, 2, 4, 8, 16, 32, 64, got 3"),
    ({"cube": {"value": 128, "owner": "X"}}, "cube.value: must be one of 1, 2, 4, 8, 16, 32, 64, got 128"),
    ({"cube": {"value": 2, "owner": "Z"}}, "cube.owner: must be one of \"X\", \"O\" or null, got 'Z'"),
    ({"cube": {"value": 2, "owner": None}}, "a turned cube is owned"),
    ({"cube": {"value": 1, "owner": "X"}}, "the cube at 1 is centred"),
    ({"cube": {"value": 2, "owner": "O"}}, "O owns the cube, so X (to move) may not double and O cannot be offered"),
    ({"cube": 2}, "cube: must be an object"),
    ({"cube": {"value": 2, "owner": "X", "size": 1}}, "cube: unknown key 'size' (known: owner, value)"),
    ({"match": {"length": 7, "score": {"X": 7, "O": 5}}}, "match.score.X: 7 has reached the match length 7"),
    ({"match": {"length": 7, "score": {"X": 3, "O": 5}, "crawford": True}}, "nobody is at 6"),
    ({"match": {"length": 7, "score": {"X": 6, "O": 6}, "crawford": True}}, "both sides are at 6"),
    ({"match": {"length": 7, "score": {"X": 6, "O": 2}, "crawford": True}, "cube": {"value": 2, "owner": "X"}},
     "no doubling in the Crawford game, but the cube is at 2"),
    ({"match": {"length": 30, "score": {"X": 0, "O": 0}}}, "match.length: must be an integer 1..25, got 30"),
    ({"match": {"length": "7"}}, "match.length: must be an integer 1..25, got '7'"),
    ({"cube_life": 2}, "cube_life: must be a number 0..1, got 2"),
    ({"dice": [1, 2]}, "unknown key 'dice' (known: cmd, cube, cube_life, id, match, plies, position)"),
])
def test_a_bad_cube_state_is_a_clear_error(cube_engine, extra, fragment):
    response = ask(cube_engine, {"cmd": "cube", "position": RACE, "id": 9, **extra})
    assert set(response) == {"id", "error"} and fragment in response["error"], response


def test_cube_needs_a_model_and_a_variant_with_the_cube(cube_engine):
    response = ask(Engine("reference"), {"cmd": "cube", "position": RACE})
    assert "'cube' needs a model" in response["error"]
    response = ask(cube_engine, {"cmd": "cube", "position": position_to_json(start_position("tapa"))})
    assert "plays 'backgammon', the position is 'tapa'" in response["error"]


@pytest.mark.skipif(not (Path(__file__).resolve().parent.parent / "checkpoints" / "backgammon.pt").is_file(),
                    reason="shipped checkpoint absent")
def test_the_shipped_backgammon_model_doubles_a_won_race_out_and_not_the_opening():
    engine = Engine(bot=f"net:{Path(__file__).resolve().parent.parent / 'checkpoints' / 'backgammon.pt'}")
    won = position_to_json(board("backgammon", "1:XX 24:OO 23:OOOO"))
    response = ask(engine, {"cmd": "cube", "position": won})
    assert response["action"] == "double" and response["response"] == "pass"
    response = ask(engine, {"cmd": "cube", "position": BACKGAMMON_START})
    assert response["action"] == "no_double" and response["response"] == "take"


@pytest.mark.parametrize("variant, bot", [("fevga", "heuristic"), ("narde", "runner"), ("fevga", "random"),
                                          ("tapa", "heuristic")])
def test_bot_move_plays_a_fixed_bots_legal_move_without_a_model(variant, bot):
    """``bot_move``: the web board's opponent in the variants without a model; any generator, running games too."""
    engine = Engine("reference")
    start = ask(engine, {"cmd": "start", "variant": variant})["position"]
    legal = ask(engine, {"cmd": "legal_moves", "position": start, "dice": [4, 2]})["moves"]
    answer = ask(engine, {"cmd": "bot_move", "bot": bot, "position": start, "dice": [4, 2], "seed": 3})
    assert answer["bot"] == bot and {"move": answer["move"], "position": answer["position"]} in legal
    again = ask(engine, {"cmd": "bot_move", "bot": bot, "position": start, "dice": [4, 2], "seed": 3})
    assert again == answer  # the seed replays the random tie-breaks
    assert "fixed_bots" in engine.describe() and bot in engine.describe()["fixed_bots"]


def test_bot_move_refuses_other_bots_and_bad_seeds():
    engine = Engine("reference")
    start = ask(engine, {"cmd": "start", "variant": "fevga"})["position"]
    for extra, fragment in (({"bot": "net:tapa"}, "bot: must be one of \"heuristic\", \"runner\", \"random\", got 'net:tapa'"),
                            ({"bot": "random", "seed": -1}, "seed: must be an integer 0..9223372036854775807, got -1"),
                            ({"bot": "random", "seed": "x"}, "seed: must be an integer 0..9223372036854775807, got 'x'")):
        status, answer = engine.respond({"cmd": "bot_move", "position": start, "dice": [4, 2], **extra})
        assert status == 400 and fragment in answer["error"], answer


# -- best_move and hint at a Tavli match's score ----------------------------------------------------------------
@pytest.fixture(scope="module")
def plakoto_engine():
    return Engine(bot="net:plakoto")


def tavli_random_positions(count: int, seed: int):
    """Plakoto positions a few random plies into a game, with a roll each."""
    import numpy as np

    from tapa_ai.rules import reference, variant_rules

    rng = np.random.default_rng(seed)
    positions = []
    while len(positions) < count:
        position = start_position(variant_rules("plakoto"), "XO"[len(positions) % 2])
        for _ in range(int(rng.integers(4, 20))):
            moves = reference.legal_moves(position, tuple(int(d) for d in rng.integers(1, 7, 2)))
            following = moves[int(rng.integers(len(moves)))].position
            if following.result is not None:
                break
            position = reference.next_turn(following)
        else:
            positions.append((position, tuple(int(d) for d in rng.integers(1, 7, 2))))
    return positions


def test_best_move_and_hint_at_a_tavli_score_rank_by_the_match_winning_chance(plakoto_engine):
    import numpy as np

    from tapa_ai.bots.spec import make_bot
    from tapa_ai.bots.base import one_position_afterstates
    from tapa_ai.cube.rotation_met import RotationScore, rotation_met
    from tapa_ai.rules import variant_rules

    bot = make_bot("net:plakoto", variant_rules("plakoto"))
    changed = 0
    for (position, dice), score in zip(tavli_random_positions(40, 3), [(3, 4), (4, 3), (0, 0), (2, 4)] * 10):
        request = {"cmd": "best_move", "position": position_to_json(position), "dice": list(dice),
                   "tavli": {"length": 5, "score": {"X": score[0], "O": score[1]}, "game": 2}}
        answer = ask(plakoto_engine, request)
        mover = 0 if position.turn == "X" else 1
        away, other = 5 - score[mover], 5 - score[1 - mover]
        afterstates = one_position_afterstates(position, dice)
        row = int(bot.choose_at_score(afterstates, np.random.default_rng(0),
                                      RotationScore(rotation_met("tavli"), [away], other, 1))[0])
        values = rotation_met("tavli").class_values(bot.evaluator.points, [away], [other], 1)[0]
        rows_value = bot.evaluate(afterstates) @ values
        # The engine's move is the bot's at the score (or one of equal value: a tie).
        assert answer["match_winning_chance"] == pytest.approx(rows_value.max(), abs=1e-6)
        assert answer["match_winning_chance"] == pytest.approx(float(rows_value[row]), abs=1e-6)
        money = ask(plakoto_engine, {key: value for key, value in request.items() if key != "tavli"})
        changed += money["move"] != answer["move"]
        hint = ask(plakoto_engine, {**request, "cmd": "hint", "count": 3})
        assert hint["moves"][0]["move"] == answer["move"] and hint["moves"][0]["difference"] == 0
        chances = [m["match_winning_chance"] for m in hint["moves"]]
        assert chances == sorted(chances, reverse=True)
        assert [m["difference"] for m in hint["moves"]] == pytest.approx([c - chances[0] for c in chances])
    assert changed, "the score never changed the move in 40 positions"


@pytest.mark.parametrize("tavli,fragment", [
    ({"length": 5, "score": {"X": 0, "O": 0}, "game": 1}, "game 1 of the tavli match is portes"),
    ({"length": 5, "score": {"X": 5, "O": 0}, "game": 2}, "the match is over"),
    ({"length": 5, "score": {"X": 0}, "game": 2}, "tavli.score"),
    ({"length": "5", "game": 2}, "tavli.length"),
    ({"length": 5, "game": 2, "cube": 2}, "unknown key"),
    ([5, 2], "must be an object"),
])
def test_a_bad_tavli_context_is_a_clear_error(plakoto_engine, tavli, fragment):
    request = {"cmd": "best_move", "position": position_to_json(start_position("plakoto")), "dice": [6, 5],
               "tavli": tavli}
    assert fragment in ask(plakoto_engine, request)["error"]
