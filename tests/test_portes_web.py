"""Portes on the web board (docs/web.md, docs/rules.md 9): the page plays it with the backgammon model, shown every
position as a backgammon position and valued with Portes' points, no cube, the opener rolling both dice afresh.
Headless Chromium as in tests/test_web.py (skipped with the install line where it is missing)."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from tests.servers import serving
from tests.test_web import (browser, comparison_positions, console_errors, human_turn_by_clicks,  # noqa: F401
                            message_of, open_board, wait_for)

PORTES_POINTS = [1, 2, 2, -1, -2, -2]


@pytest.fixture(scope="module")
def server():
    """The board's server with the shipped backgammon model: the n-ply bot and the analysis of Portes."""
    with serving(bot="net:checkpoints/backgammon.pt") as server:
        yield server


def test_the_in_page_portes_model_is_the_backgammon_model_with_portes_points(browser, server):
    open_board(browser, server, variant="portes", seed=2)
    model = browser.execute_script("const m = tapaWeb.state.model; return [m.variant, m.outcomePoints]")
    assert model == ["backgammon", PORTES_POINTS]
    positions, bearoff = comparison_positions("portes", count=120)
    assert all(position["variant"] == "portes" for position in positions)
    answers = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "tapaWeb.evaluate('portes', arguments[0]).then(done, e => done({error: String(e)}));", positions)
    assert not isinstance(answers, dict), answers
    worst, compared = 0.0, 0
    for position, answer, is_bearoff in zip(positions, answers, bearoff, strict=True):
        if is_bearoff:
            continue
        status, expected = server.engine.respond({"cmd": "evaluate", "position": position})
        assert status == 200, expected
        probabilities = np.asarray(list(expected["probabilities"].values()))
        assert answer["equity"] == pytest.approx(float(np.asarray(answer["probabilities"]) @ PORTES_POINTS))
        worst = max(worst, abs(answer["equity"] - expected["equity"]),
                    float(np.abs(np.asarray(answer["probabilities"]) - probabilities).max()))
        compared += 1
    assert compared >= 100 and worst <= 1e-5, (compared, worst)


def test_a_portes_game_opens_by_rerolling_has_no_cube_and_is_played_to_the_end(browser, server):
    console_errors(browser)
    open_board(browser, server, variant="portes", seed=7)
    log = browser.execute_script("return tapaWeb.state.log")
    assert re.match(r"^Opening roll: X \d, O \d: [XO] starts and rolls \d-\d\.$", log[0]), log[0]
    assert "cube" not in browser.find_element("id", "score").text
    # The server's model is the backgammon model: its n-ply bot plays Portes too.
    assert browser.execute_script("return document.querySelector('#strength option[value=\"1\"]').disabled") is False
    rng = random.Random(7)
    turns = 0
    while True:
        phase = wait_for(browser, "['human', 'over', 'error'].includes(document.body.dataset.phase)"
                                   " && document.body.dataset.phase")
        assert phase != "error", message_of(browser)
        if phase == "over":
            break
        human_turn_by_clicks(browser, rng)
        turns += 1
        assert turns < 400, "the game did not end"
    title = browser.find_element("id", "game-over-title").text
    assert re.match(r"^(You win|The bot wins) (a single game|a gammon)$", title), title  # never a backgammon
    result = browser.execute_script("return tapaWeb.state.position.result")
    assert result["kind"] in ("single", "gammon") and result["points"] == {"single": 1, "gammon": 2}[result["kind"]]
    assert browser.find_element("id", "analyse-over").is_enabled()  # the backgammon model analyses Portes
    assert console_errors(browser) == []
