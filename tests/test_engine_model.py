"""The engine's model commands (encode, evaluate, best_move, hint), checked against the network computed here."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tapa_ai.bots.base import BotError
from tapa_ai.bots.search import NetBot
from tapa_ai.net.checkpoint import load_network, save_checkpoint
from tapa_ai.config import ModelConfig, TrainConfig
from tapa_ai.net.encoding import ENCODING_NAME, ENCODING_VERSION, NUM_FEATURES, encode_positions
from tapa_ai.engine.protocol import MAX_HINT_COUNT, Engine
from tapa_ai.net.model import EvaluatorNet
from tapa_ai.rules.outcomes import outcome_class, outcome_names, outcome_points
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.movegen.random_positions import endgame_positions, playout_positions
from tapa_ai.notation import position_to_json
from tapa_ai.notation.json_position import position_from_json
from tapa_ai.notation.mini import board
from tapa_ai.rules import start_position, variant_rules
from tapa_ai.rules.reference import legal_moves, next_turn

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {variant: ROOT / "checkpoints" / f"{variant}.pt" for variant in ("tapa", "plakoto", "backgammon", "fevga", "narde")}


def save_tiny_net(variant: str, path: Path, seed: int = 3, hidden: int | list[int] = 16,
                  encoding_version: int = 1) -> Path:
    """A small random network of ``variant`` saved as a checkpoint (fast to search, exact to check)."""
    layers = 1 if isinstance(hidden, int) else len(hidden)
    net = EvaluatorNet(ModelConfig(layers=layers, hidden=hidden, encoding_version=encoding_version),
                       variant_rules(variant), seed=seed).eval()
    return save_checkpoint(path, model_state=net.state_dict(), model_config=net.architecture(),
                           encoding=(ENCODING_NAME, encoding_version), rule_options=net.rules, config=TrainConfig(),
                           games=0)


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    return save_tiny_net("tapa", tmp_path_factory.mktemp("nets") / "tiny-tapa.pt")


@pytest.fixture(scope="module")
def engine(tiny_path):
    return Engine(bot=f"net:{tiny_path}@1ply")


@pytest.fixture(scope="module")
def net(tiny_path):
    return load_network(tiny_path)


def ask(engine, request):
    response = json.loads(engine.handle_line(json.dumps(request)))
    assert "internal error" not in response.get("error", ""), response
    return response


def tapa_positions(count=12, seed=5):
    rng = np.random.default_rng(seed)
    positions = playout_positions("tapa", count - 4, rng, games=16).to_positions()
    return positions + endgame_positions("tapa", 4, rng).to_positions()


def net_probabilities(net, features):
    """The network's class probabilities for feature rows, computed with torch directly."""
    with torch.no_grad():
        return torch.softmax(net(torch.tensor(np.asarray(features, dtype=np.float32))), dim=-1).double().numpy()


def mover_equity(net, after):
    """Equity of an afterstate (``turn`` = the mover) from the mover's view: exact if over, the bear-off
    database's value in a bear-off (as the bots value it), else -net(opponent)."""
    from tapa_ai.bearoff.evaluate import bearoff_distributions
    from tapa_ai.movegen.batch import PositionBatch

    points = outcome_points(net.rules).astype(np.float64)
    if after.result is not None:
        return float(points[outcome_class(after.result, after.turn)])
    rows, known = bearoff_distributions(PositionBatch.from_positions([next_turn(after)]))
    if rows.size:
        return -float(known[0] @ points)
    return -float(net_probabilities(net, encode_positions([next_turn(after)]))[0] @ points)


# -- encode and evaluate -------------------------------------------------------------------------
def test_encode_is_the_encoding_of_the_side_to_move(engine):
    for position in tapa_positions():
        response = ask(engine, {"cmd": "encode", "position": position_to_json(position), "id": 4})
        assert response["id"] == 4 and response["encoding"] == ENCODING_NAME
        features = np.array(response["features"], dtype=np.float32)
        assert features.shape == (NUM_FEATURES,)
        assert np.array_equal(features, encode_positions([position])[0])  # the JSON numbers read back exactly


@pytest.mark.parametrize("hidden", [16, [24, 12]])
def test_encode_and_evaluate_follow_the_models_encoding_version(tmp_path, hidden):
    path = save_tiny_net("tapa", tmp_path / "v2.pt", encoding_version=2, hidden=hidden)
    engine = Engine(bot=f"net:{path}")
    net = load_network(path)
    for position in tapa_positions()[:5]:
        request = {"position": position_to_json(position)}
        response = ask(engine, {"cmd": "encode", **request})
        features = np.array(response["features"], dtype=np.float32)
        assert response["encoding_version"] == 2 and features.shape == (309,)
        assert np.array_equal(features, encode_positions([position], version=2)[0])
        answer = ask(engine, {"cmd": "evaluate", **request})
        assert np.allclose(list(answer["probabilities"].values()), net_probabilities(net, [features])[0], atol=1e-6)


def test_encode_needs_no_model_but_a_model_refuses_other_variants(engine):
    plakoto = position_to_json(start_position("plakoto", "O"))
    plain = ask(Engine("reference"), {"cmd": "encode", "position": plakoto})
    assert np.array_equal(np.array(plain["features"], dtype=np.float32),
                          encode_positions([start_position("plakoto", "O")])[0])
    assert "plays 'tapa', the position is 'plakoto'" in ask(engine, {"cmd": "encode", "position": plakoto})["error"]


def test_evaluate_equals_the_network_on_the_encoded_features(engine, net):
    points = outcome_points(net.rules).astype(np.float64)
    for position in tapa_positions():
        request = {"position": position_to_json(position)}
        features = ask(engine, {"cmd": "encode", **request})["features"]
        answer = ask(engine, {"cmd": "evaluate", **request})
        expected = net_probabilities(net, [features])[0]
        assert list(answer["probabilities"]) == list(outcome_names(net.rules))
        assert np.allclose(list(answer["probabilities"].values()), expected, atol=1e-6)
        assert answer["equity"] == pytest.approx(float(expected @ points), abs=1e-6)
        assert "exact" not in answer


def test_evaluate_is_from_the_side_to_move(engine, net):
    """The same board with the other side to move is the colour-swapped position: a different evaluation."""
    position = tapa_positions(4, seed=9)[1]
    mine = ask(engine, {"cmd": "evaluate", "position": position_to_json(position)})["equity"]
    theirs = ask(engine, {"cmd": "evaluate", "position": position_to_json(next_turn(position))})["equity"]
    features = encode_positions([next_turn(position)])
    assert theirs == pytest.approx(float(net_probabilities(net, features)[0] @ outcome_points(net.rules)), abs=1e-6)
    assert mine != pytest.approx(theirs, abs=1e-9)


def test_evaluate_of_a_finished_game_is_its_exact_outcome(engine):
    over = {**position_to_json(board("tapa", "13:OO")), "off": {"X": 15, "O": 13}}
    over["result"] = {"winner": "X", "points": 1, "kind": "single"}
    for turn, equity in (("X", 1.0), ("O", -1.0)):
        answer = ask(engine, {"cmd": "evaluate", "position": {**over, "turn": turn}})
        assert answer["exact"] is True and answer["equity"] == equity
        assert answer["probabilities"]["win_single" if turn == "X" else "lose_single"] == 1.0


# -- best_move and hint ----------------------------------------------------------------------------
def test_best_move_at_zero_plies_is_the_argmax_over_all_legal_moves(engine, net):
    rng = np.random.default_rng(11)
    for position in tapa_positions(10, seed=13):
        dice = [int(d) for d in rng.integers(1, 7, size=2)]
        request = {"position": position_to_json(position), "dice": dice, "plies": 0}
        best = ask(engine, {"cmd": "best_move", **request})
        values = {json.dumps(position_to_json(move.position), sort_keys=True): mover_equity(net, move.position)
                  for move in legal_moves(position, dice)}
        assert best["plies"] == 0
        assert best["equity"] == pytest.approx(max(values.values()), abs=1e-5)
        assert values[json.dumps(best["position"], sort_keys=True)] == pytest.approx(max(values.values()), abs=1e-5)
        # The move text is the move to the position given.
        applied = ask(engine, {"cmd": "apply", "move": best["move"], "position": request["position"], "dice": dice})
        assert applied["position"] == best["position"]


def test_hint_ranks_every_move_and_its_first_is_best_move(engine, net):
    rng = np.random.default_rng(17)
    for position in tapa_positions(8, seed=19):
        dice = [int(d) for d in rng.integers(1, 7, size=2)]
        request = {"position": position_to_json(position), "dice": dice, "plies": 0}
        hint = ask(engine, {"cmd": "hint", "count": MAX_HINT_COUNT, **request})
        moves = legal_moves(position, dice)
        assert hint["legal_moves"] == len(moves) == len(hint["moves"])  # fewer than MAX_HINT_COUNT here
        equities = [entry["equity"] for entry in hint["moves"]]
        assert equities == sorted(equities, reverse=True)
        for entry in hint["moves"]:
            assert entry["difference"] == pytest.approx(entry["equity"] - equities[0], abs=1e-12)
            assert entry["equity"] == pytest.approx(mover_equity(net, position_from_json(entry["position"])), abs=1e-5)
            assert sum(entry["probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
        best = ask(engine, {"cmd": "best_move", **request})
        assert (best["move"], best["position"], best["equity"]) == (
            hint["moves"][0]["move"], hint["moves"][0]["position"], hint["moves"][0]["equity"])
        assert len(ask(engine, {"cmd": "hint", "count": 1, **request})["moves"]) == 1
        assert len(ask(engine, {"cmd": "hint", **request})["moves"]) == min(5, len(moves))  # the default count


@pytest.mark.parametrize("plies", [1, 2])
def test_searching_moves_are_valued_as_the_bot_values_them(engine, net, plies):
    """At 1 and 2 plies the candidates are NetBot's, at NetBot's values (NetBot equals brute force: test_search)."""
    position, dice = board("tapa", "7:X 2:X 3:O 21:O", "X"), (4, 2)  # few moves: 2-ply stays fast
    bot = NetBot(net, plies)
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    rows, _, values = bot.ranked(afterstates)
    request = {"position": position_to_json(position), "dice": list(dice), "plies": plies}
    hint = ask(engine, {"cmd": "hint", "count": MAX_HINT_COUNT, **request})
    deep = [entry for entry in hint["moves"] if entry["plies"] == plies]
    assert sorted(e["equity"] for e in deep) == pytest.approx(sorted(values.tolist()), abs=1e-9)
    assert all(entry["plies"] == 0 for entry in hint["moves"][len(deep):])  # the rest: the filter's 0-ply values
    assert [e["equity"] for e in deep] == sorted((e["equity"] for e in deep), reverse=True)
    best = ask(engine, {"cmd": "best_move", **request})
    assert best["equity"] == pytest.approx(values.max(), abs=1e-9) and best["plies"] == plies
    assert best["move"] == hint["moves"][0]["move"]


def test_plies_defaults_to_the_bots(engine):
    request = {"position": position_to_json(start_position("tapa")), "dice": [3, 1]}
    assert ask(engine, {"cmd": "best_move", **request})["plies"] == 1
    assert ask(engine, {"cmd": "hint", **request})["plies"] == 1


def test_a_passed_turn_is_the_empty_move(engine):
    position = board("tapa", "20:X 17:OO 15:OO")
    answer = ask(engine, {"cmd": "best_move", "position": position_to_json(position), "dice": [5, 3]})
    assert answer["move"] == "" and answer["position"] == position_to_json(position)


def test_start_defaults_to_the_models_variant(engine):
    assert ask(engine, {"cmd": "start"})["position"]["variant"] == "tapa"


# -- errors ------------------------------------------------------------------------------------------
START = position_to_json(start_position("tapa"))
OVER = {**position_to_json(board("tapa", "13:OO")), "off": {"X": 15, "O": 13},
        "result": {"winner": "X", "points": 1, "kind": "single"}}


@pytest.mark.parametrize("request_,fragment", [
    ({"cmd": "evaluate", "position": position_to_json(start_position("plakoto"))},
     "model (net:"),
    ({"cmd": "evaluate", "position": {**START, "rules": {"mother_points": 2}}}, "the position changes"),
    ({"cmd": "best_move", "position": position_to_json(start_position("backgammon")), "dice": [1, 2]},
     "plays 'tapa', the position is 'backgammon'"),
    ({"cmd": "evaluate"}, "missing 'position'"),
    ({"cmd": "evaluate", "position": {**START, "points": START["points"][:23]}}, "position.points"),
    ({"cmd": "best_move", "position": START}, "dice: X is to roll; give two dice 1..6"),
    ({"cmd": "best_move", "position": START, "dice": [0, 7]}, "dice"),
    ({"cmd": "best_move", "position": START, "dice": [1, 2], "plies": 3}, "plies: must be an integer 0..2"),
    ({"cmd": "best_move", "position": START, "dice": [1, 2], "plies": -1}, "plies"),
    ({"cmd": "best_move", "position": START, "dice": [1, 2], "plies": True}, "plies"),
    ({"cmd": "best_move", "position": START, "dice": [1, 2], "plies": "2"}, "plies"),
    ({"cmd": "hint", "position": START, "dice": [1, 2], "count": 0}, "count: must be an integer 1..100"),
    ({"cmd": "hint", "position": START, "dice": [1, 2], "count": 10 ** 12}, "count: must be"),
    ({"cmd": "hint", "position": START, "dice": [1, 2], "count": 2.5}, "count: must be"),
    ({"cmd": "best_move", "position": OVER, "dice": [1, 2]}, "already over"),
    ({"cmd": "hint", "position": START, "dice": [1, 2], "bot": "net:other.pt"}, "cannot be chosen per request"),
])
def test_bad_model_requests_get_a_clear_error(engine, request_, fragment):
    response = ask(engine, {**request_, "id": "r"})
    assert set(response) == {"id", "error"} and fragment in response["error"], response


def test_without_a_model_the_model_commands_say_how_to_start_one():
    engine = Engine("reference")
    for command in ("evaluate", "best_move", "hint"):
        response = ask(engine, {"cmd": command, "position": START, "dice": [1, 2]})
        assert "needs a model: start the engine with --bot net:PATH" in response["error"]


@pytest.mark.parametrize("spec,fragment", [
    ("heuristic", "need a network; use net:PATH or net:PATH@Nply"),
    ("net:", "Valid forms"),
    ("net:no/such/file.pt", "no checkpoint file"),
    ("net:checkpoints/tapa.pt@7ply", "Valid forms"),
])
def test_a_bad_bot_spec_is_refused_at_start_with_the_valid_forms(spec, fragment, capsys):
    from tapa_ai.cli import main

    with pytest.raises(BotError, match="bot spec"):
        Engine(bot=spec)
    assert main(["engine", "--bot", spec]) == 2
    error = capsys.readouterr().err
    assert error.startswith("tapa-ai engine: bot spec") and fragment in error and "Traceback" not in error


# -- the shipped models ------------------------------------------------------------------------------
@pytest.mark.skipif(not all(path.is_file() for path in SHIPPED.values()), reason="shipped checkpoints absent")
@pytest.mark.parametrize("variant", list(SHIPPED))
def test_the_shipped_models_answer_for_their_own_variant_only(variant):
    engine = Engine(bot=f"net:{SHIPPED[variant]}")
    start = ask(engine, {"cmd": "start"})["position"]
    assert start["variant"] == variant
    answer = ask(engine, {"cmd": "evaluate", "position": start})
    assert list(answer["probabilities"]) == list(outcome_names(variant_rules(variant)))
    assert sum(answer["probabilities"].values()) == pytest.approx(1.0, abs=1e-5) and abs(answer["equity"]) < 1.0
    best = ask(engine, {"cmd": "best_move", "position": start, "dice": [6, 5]})
    assert best["position"]["variant"] == variant and best["move"]
    other = "tapa" if variant != "tapa" else "plakoto"
    assert "the position is" in ask(engine, {"cmd": "evaluate",
                                             "position": position_to_json(start_position(other))})["error"]


def test_engine_command_with_a_bot_runs_as_a_process(tiny_path):
    lines = [
        {"cmd": "start", "id": 1},
        {"cmd": "evaluate", "position": START, "id": 2},
        {"cmd": "best_move", "position": START, "dice": [6, 5], "id": 3},
        {"cmd": "hint", "position": START, "dice": [6, 5], "count": 3, "id": 4},
        {"cmd": "evaluate", "position": position_to_json(start_position("plakoto")), "id": 5},
    ]
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "engine", "--bot", f"net:{tiny_path}"],
                          input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4, 5]
    assert answers[0]["position"] == START and "equity" in answers[1] and "move" in answers[2]
    assert len(answers[3]["moves"]) == 3 and answers[3]["moves"][0]["move"] == answers[2]["move"]
    assert "plays 'tapa'" in answers[4]["error"]
