"""Gul Bara on the web board (docs/web.md "Gul Bara"; docs/rules.md 10.2-10.3): the page follows the server's
``next`` / ``turns`` / ``cascade`` instead of assuming the sides alternate and a double is four steps. A cascade's
stages are played one decision at a time by the same side with no roll, each shown as its dice (k-k) with the later
stages' numbers; a remainder stage has fewer steps; the bot plays its stages too; the positions the page sends
carry the turn counts and the stage. Headless Chromium as in tests/test_web.py (skipped with the install line where
it is missing)."""

from __future__ import annotations

import json

import pytest

from tapa_ai.analysis.records import record_from_json
from tapa_ai.engine.protocol import Engine
from tests.servers import serving
from tests.test_web import (browser, console_errors, let_the_bot_play_to_the_end, message_of,  # noqa: F401
                            open_board, wait_for)


@pytest.fixture(scope="module")
def server():
    """The board's server with no model of its own, its registry naming no Gul Bara model (as before net:gulbara
    shipped, and as a server without it says): the page's values stay out and the server's heuristic bot plays O.
    The page with the shipped model is tested by tests/test_web.py's games of every variant."""
    import copy

    import tapa_ai.engine.http as http
    from tapa_ai.engine.web_board import variants_json

    served = copy.deepcopy(variants_json())
    for entry in served["variants"]:
        if entry["name"] == "gulbara":
            entry["model"], entry["ships_model"] = None, False
    real = http.variants_json
    http.variants_json = lambda: served
    try:
        with serving() as server:
            yield server
    finally:
        http.variants_json = real


SPY = ("window.sent = []; if (!window.realFetch) window.realFetch = window.fetch;"
       "window.fetch = function (url, init) { if (init && init.body) window.sent.push([String(url),"
       " JSON.parse(init.body)]); return window.realFetch.apply(this, arguments); };")
"""Keeps every request body the page sends to the server (window.sent: [url, body])."""


def start_position(turn, **extra):
    status, answer = Engine().respond({"cmd": "start", "variant": "gulbara", "turn": turn})
    assert status == 200, answer
    return {**answer["position"], **extra}


def go_on(driver, position, dice):
    """The page's game goes on from ``position`` with ``dice``; waits for the next decision the human takes."""
    turn = driver.execute_script("return document.body.dataset.turns")
    assert driver.execute_script("return tapaWeb.turnAt(arguments[0], arguments[1])", position, dice)
    wait_for(driver, f"document.body.dataset.turns !== '{turn}' && ['human', 'over', 'error']"
                     ".includes(document.body.dataset.phase)")
    assert driver.execute_script("return document.body.dataset.phase") == "human", message_of(driver)


def click(driver, point):
    driver.find_element("css selector", f"#board rect.hit[data-point='{point}']").click()


def play_by_clicks(driver, steps):
    """Click each (from, to) step, then Done; waits for the next decision (or the game's end)."""
    turn = driver.execute_script("return document.body.dataset.turns")
    for start, end in steps:
        click(driver, start)
        click(driver, end)
    assert driver.find_element("id", "done").is_enabled(), message_of(driver)
    driver.find_element("id", "done").click()
    wait_for(driver, f"document.body.dataset.turns !== '{turn}' && ['human', 'over', 'error']"
                     ".includes(document.body.dataset.phase)")
    assert driver.execute_script("return document.body.dataset.phase") != "error", message_of(driver)


def stage_view(driver):
    """What the page shows of the decision: [dice text, cascade line, dice drawn, dice left to play]."""
    return driver.execute_script(
        "return [document.getElementById('dice-text').textContent,"
        " document.getElementById('cascade-info').hidden ? null : document.getElementById('cascade-info').textContent,"
        " Array.from(document.querySelectorAll('#board g.die')).map(g => Number(g.dataset.die)),"
        " tapaWeb.state.plan ? tapaWeb.state.plan.current().remaining : null]")


def sent(driver, command):
    return [body for url, body in driver.execute_script("return window.sent") if url.endswith("v1/" + command)]


def test_a_cascade_is_played_stage_by_stage_by_the_same_side_with_no_roll(browser, server):
    console_errors(browser)
    open_board(browser, server, variant="gulbara", seed=5)
    assert browser.execute_script("return tapaWeb.state.variant") == "gulbara"
    # No Gul Bara model yet (the registry's model is null): the page asks for none, and says who plays.
    assert browser.find_element("id", "analysis-note").text == \
        "No chances or move values here: the server's registry names no model for gulbara (GET /v1/variants: " \
        "model null). The bot is heuristic, server."
    browser.execute_script(SPY)
    # X's fourth turn (three begun each): its 4-4 cascades, 4s, then 5s, then 6s.
    position = start_position("X", turns={"X": 3, "O": 3})
    go_on(browser, position, [4, 4])
    assert stage_view(browser) == ["X rolled 4-4", "cascade: 4s now, then 5s, 6s", [4, 4, 4, 4], [4, 4, 4, 4]]
    assert message_of(browser) == "You rolled 4-4 (cascade: 4s now, then 5s, 6s). Click a checker, then a green " \
                                  "point (or type the move)."
    [request] = sent(browser, "legal_moves")
    assert request["position"]["turns"] == {"X": 3, "O": 3} and request["dice"] == [4, 4]
    rolls = browser.execute_script("return tapaWeb.state.rolls")

    play_by_clicks(browser, [(24, 20)] * 4)
    state = browser.execute_script("return tapaWeb.state.position")
    assert state["turn"] == "X" and "next" not in state
    assert state["cascade"] == {"number": 5, "steps": 4, "remainder": False} and state["turns"] == {"X": 3, "O": 3}
    assert browser.execute_script("return tapaWeb.state.rolls") == rolls, "a cascade's stage rolled the dice"
    assert stage_view(browser) == ["X plays 5-5 (no roll)", "cascade: 5s now, then 6s", [5, 5, 5, 5], [5, 5, 5, 5]]
    assert message_of(browser) == "You play 5-5 with no roll (cascade: 5s now, then 6s). Click a checker, then a " \
                                  "green point (or type the move)."
    # The position the page sends for the stage carries the turns and the stage, and no "next".
    applied = sent(browser, "apply")[-1]
    assert applied["position"]["turns"] == {"X": 3, "O": 3} and applied["move"] == "24/20 24/20 24/20 24/20"
    request = sent(browser, "legal_moves")[-1]
    assert request["position"]["cascade"] == {"number": 5, "steps": 4, "remainder": False}
    assert request["position"]["turns"] == {"X": 3, "O": 3} and request["position"]["turn"] == "X"
    assert request["dice"] == [5, 5] and "next" not in request["position"]

    play_by_clicks(browser, [(20, 15)] * 4)
    assert stage_view(browser) == ["X plays 6-6 (no roll)", "cascade: 6s now, the last stage", [6] * 4, [6] * 4]
    assert browser.execute_script("return tapaWeb.state.rolls") == rolls
    assert sent(browser, "legal_moves")[-1]["position"]["cascade"] == {"number": 6, "steps": 4, "remainder": False}

    # The last stage played: O rolls (the bot), then X rolls its fifth turn.
    play_by_clicks(browser, [(15, 9)] * 4)
    assert browser.execute_script("return tapaWeb.state.rolls") >= rolls + 4
    log = browser.execute_script("return tapaWeb.state.log")
    assert "X 4-4 (cascade, 4s): 24/20 24/20 24/20 24/20" in log
    assert "X 5-5 (cascade, 5s): 20/15 20/15 20/15 20/15" in log
    assert "X 6-6 (cascade, 6s): 15/9 15/9 15/9 15/9" in log
    history = browser.execute_script("return tapaWeb.record().games.slice(-1)[0].history")
    stages = [event for event in history if event.get("side") == "X" and event["dice"][0] == event["dice"][1]]
    assert [event["dice"] for event in stages[-3:]] == [[4, 4], [5, 5], [6, 6]]
    bot = [body for body in sent(browser, "bot_move")]
    assert bot and bot[0]["position"]["turn"] == "O" and bot[0]["position"]["turns"] == {"X": 3, "O": 3}
    assert "cascade" not in bot[0]["position"]
    assert console_errors(browser) == []


def test_the_bot_plays_its_own_stages_and_its_moves_are_marked_together(browser, server):
    console_errors(browser)
    open_board(browser, server, variant="gulbara", seed=6)
    browser.execute_script(SPY)
    position = start_position("O", turns={"X": 3, "O": 3})
    rolls = browser.execute_script("return tapaWeb.state.rolls")
    go_on(browser, position, [5, 5])
    log = browser.execute_script("return tapaWeb.state.log")
    o5 = [line for line in log if line.startswith("O 5-5 (cascade, 5s): ")]
    o6 = [line for line in log if line.startswith("O 6-6 (cascade, 6s): ")]
    assert len(o5) == 1 and len(o6) == 1, log[-4:]
    # The bot's stages: its 5s with the roll, its 6s with no roll; then your roll (the only one).
    assert browser.execute_script("return tapaWeb.state.rolls") == rolls + 2
    moves = sent(browser, "bot_move")
    assert [m["dice"] for m in moves] == [[5, 5], [6, 6]]
    assert moves[1]["position"]["cascade"] == {"number": 6, "steps": 4, "remainder": False}
    assert moves[1]["position"]["turn"] == "O" and moves[1]["position"]["turns"] == {"X": 3, "O": 3}
    message = message_of(browser)
    assert message.startswith("The bot played ") and ", then " in message, message
    position = browser.execute_script("return tapaWeb.state.position")
    assert position["turn"] == "X" and "cascade" not in position and position["turns"] == {"X": 3, "O": 3}
    assert browser.find_element("id", "cascade-info").text.startswith(
        "cascade: " if browser.execute_script("return !!tapaWeb.state.stage") else
        "doubles cascade from a side's turn 4 on; turns begun: X 3 (its doubles cascade), O 3 (its doubles cascade)")
    assert console_errors(browser) == []


def test_a_remainder_stage_has_its_own_number_of_steps(browser, server):
    """cascade_remainder "opponent": X plays O's unplayed steps, 2 steps of 3s, then 4s, 5s and 6s, before its roll."""
    console_errors(browser)
    open_board(browser, server, variant="gulbara", seed=8)
    browser.execute_script(SPY)
    position = start_position("X", turns={"X": 3, "O": 3}, rules={"cascade_remainder": "opponent"},
                              cascade={"number": 3, "steps": 2, "remainder": True})
    go_on(browser, position, [3, 3])
    assert stage_view(browser) == ["X plays 3-3 (no roll)",
                                   "cascade remainder: 2 steps of 3s now (O's unplayed steps), then 4s, 5s, 6s",
                                   [3, 3], [3, 3]]
    play_by_clicks(browser, [(24, 21), (21, 18)])
    state = browser.execute_script("return tapaWeb.state.position")
    assert state["turn"] == "X" and state["cascade"] == {"number": 4, "steps": 4, "remainder": True}
    assert state["rules"] == {"cascade_remainder": "opponent"}
    assert stage_view(browser)[1] == "cascade remainder: 4s now (O's unplayed steps), then 5s, 6s"
    assert sent(browser, "legal_moves")[-1]["position"]["cascade"] == {"number": 4, "steps": 4, "remainder": True}
    assert console_errors(browser) == []


def test_a_whole_gul_bara_game_is_played_by_the_pages_bots_to_the_end(browser, server):
    """Both sides by the server's bots (yours by Let the bot play): cascades reached, the game ends, no errors, and
    the page's record replays in the game flow (tapa-ai analyse reads it)."""
    console_errors(browser)
    open_board(browser, server, variant="gulbara", seed=11)
    let_the_bot_play_to_the_end(browser, 399)
    assert browser.execute_script("return tapaWeb.state.position.result") is not None
    log = browser.execute_script("return tapaWeb.state.log")
    assert any("(cascade, " in line for line in log), "no cascade in the game"
    assert log[-1].startswith("Game over")
    record = browser.execute_script("return tapaWeb.record()")
    replayed = record_from_json(json.loads(json.dumps(record)))
    assert len(replayed.games) == 1 and replayed.games[0].result is not None
    assert console_errors(browser) == []


def test_the_pages_0_ply_values_take_the_next_deciders_view(browser, server, tmp_path):
    """An untrained Gul Bara model (encoding version 5): the page's ranking and the levels' move values value a move
    followed by the mover's own stage from the mover's view and a move that passes the turn from the opponent's,
    each from the position of the next decision (``turn`` = ``next``, with its ``turns`` and ``cascade``), as the
    numpy model does."""
    import numpy as np

    from tapa_ai.config import ModelConfig
    from tapa_ai.engine.web_board import model_json
    from tapa_ai.export import export_network, numpy_model
    from tapa_ai.net.model import EvaluatorNet
    from tapa_ai.rules.options import variant_rules

    net = EvaluatorNet(ModelConfig(hidden=12, encoding_version=5), variant_rules("gulbara"), seed=7)
    path = export_network(net, "npz", tmp_path / "gulbara.npz")
    reference = numpy_model.load(str(path))
    open_board(browser, server, variant="gulbara", seed=3)
    engine = Engine()
    moves = []
    for extra, dice in (({"turns": {"X": 3, "O": 3}}, [4, 4]),  # the cascade's first stage: X plays on
                        ({"turns": {"X": 3, "O": 3}, "cascade": {"number": 6, "steps": 4, "remainder": False}},
                         [6, 6]),  # its last stage: O rolls next
                        ({"turns": {"X": 1, "O": 2}}, [3, 1])):  # an ordinary roll
        status, answer = engine.respond({"cmd": "legal_moves", "position": start_position("X", **extra),
                                         "dice": dice})
        assert status == 200, answer
        moves += answer["moves"]
    nexts = [move["position"]["next"] for move in moves]
    assert "X" in nexts and "O" in nexts
    seen = [{**move["position"], "turn": move["position"]["next"]} for move in moves]
    for position in seen:
        del position["next"]
    _, equity = reference.evaluate_positions(seen)
    expected = {move["move"]: float(value if nxt == "X" else -value)
                for move, nxt, value in zip(moves, nexts, equity, strict=True)}
    ranked = browser.execute_script("return tapaWeb.rankWith(arguments[0], arguments[1])",
                                    model_json(path.read_bytes()), moves)
    assert sorted(m["move"] for m in ranked) == sorted(expected)
    assert max(abs(m["equity"] - expected[m["move"]]) for m in ranked) < 1e-5
    values = browser.execute_script(
        "const model = TapaModel.fromJSON(arguments[0]);"
        "return arguments[1].map(m => TapaLevels.moveValue(model, m.position, 'X'));",
        model_json(path.read_bytes()), moves)
    assert np.abs(np.array(values) - np.array([expected[m["move"]] for m in moves])).max() < 1e-5
    assert console_errors(browser) == []
