"""The Tabla match on the web board (docs/web.md, docs/rules.md 10.4): games rotating backgammon, Gul Bara and Tapa
to N points, no cube (not even in backgammon and Tapa, whose own games have one), the first game opened by an
opening roll and the winner opening the next; the page's bots play by the score with the Tabla match equity table
the server serves (GET /model/tabla-met.json). Headless Chromium as in tests/test_web.py (skipped with the install
line where it is missing)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.servers import serving
from tests.test_web import browser, console_errors, message_of, open_board, wait_for  # noqa: F401
from tests.test_web_tavli import drive_match

TABLA = ("backgammon", "gulbara", "tapa")
TITLES = {"backgammon": "Backgammon", "gulbara": "Gul Bara", "tapa": "Tapa"}


@pytest.fixture(scope="module")
def server():
    with serving(bot="net:checkpoints/backgammon.pt") as server:
        yield server


def test_the_pages_class_values_in_a_tabla_match_are_the_tabla_tables(browser, server):
    """What each outcome class is worth at a Tabla score in the page: the Python table's values, exactly; and not
    the Tavli table's (the rotation's own table is read)."""
    from tapa_ai.cube.rotation_met import rotation_met
    from tapa_ai.rules.outcomes import outcome_points
    from tapa_ai.rules.rotations import ROTATIONS

    open_board(browser, server, variant="tabla", length=7, seed=3)
    table = rotation_met(ROTATIONS["tabla"])
    for game, side, score in ((1, "X", (2, 3)), (2, "O", (5, 1)), (3, "X", (0, 6)), (5, "O", (4, 4))):
        context = {"rotation": "tabla", "length": 7, "score": {"X": score[0], "O": score[1]}, "game": game}
        variant = TABLA[(game - 1) % 3]
        values = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "tapaWeb.classValues(arguments[0], arguments[1], arguments[2]).then(done, e => done({error: String(e)}));",
            variant, side, context)
        assert not isinstance(values, dict), values
        mover = 0 if side == "X" else 1
        points = np.asarray(outcome_points(ROTATIONS["tabla"].rules(game)), dtype=np.float64)
        expected = table.class_values(points, [7 - score[mover]], [7 - score[1 - mover]], game - 1)[0]
        assert values == expected.tolist(), context
        tavli = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "tapaWeb.classValues(arguments[0], arguments[1], arguments[2]).then(done, e => done({error: String(e)}));",
            variant, side, {**context, "rotation": "tavli"})
        assert tavli != values


def test_a_tabla_match_plays_backgammon_then_gul_bara_then_tapa_by_the_score(browser, server, tmp_path):
    """A match to 7 played by the page's bots for both sides through its first two games: game 1 is backgammon with
    no cube (its position's rules say so) opened by an opening roll, game 2 Gul Bara opened by the winner of game 1,
    game 3 Tapa opened by the winner of game 2; each game's points are added; the save is a tapa-ai/rotation-match
    file naming the rotation "tabla"."""
    console_errors(browser)
    open_board(browser, server, variant="tabla", length=7, seed=5)
    assert browser.execute_script("return document.getElementById('variant').value") == "tabla"
    assert browser.execute_script("return document.getElementById('variant').selectedOptions[0].textContent") == \
        "Tabla match (Backgammon, Gul Bara, Tapa)"
    info = browser.find_element("id", "rotation-info")
    assert info.is_displayed()
    assert re.match(r"^Game 1 of the Tabla match: Backgammon\. [XO] opens: won the opening roll \d-\d\. ", info.text), \
        info.text
    assert "Next: game 2, Gul Bara, opened by the winner of this game." in info.text
    assert browser.find_element("id", "score").text == "Tabla match to 7: X 0 – O 0"  # no cube in a Tabla match
    state = browser.execute_script("const s = tapaWeb.state; return [s.variant, s.position.rules, s.match.rotation]")
    assert state == ["backgammon", {"cube": False, "crawford": False}, "tabla"]
    wait_for(browser, "['human', 'bot'].includes(document.body.dataset.phase) && tapaWeb.state.met")
    assert browser.execute_script("return tapaWeb.state.met.name") == "tabla"
    if browser.execute_script("return document.body.dataset.phase") == "human":  # the panel: by the score
        assert browser.find_element("id", "moves-value").text == "match win"
        assert "Tabla match equity table" in browser.find_element("id", "analysis-note").text
    games = drive_match(browser, limit=2)
    assert not isinstance(games, dict), games
    assert len(games) == 2, [game["match"] for game in games]
    score = {"X": 0, "O": 0}
    for number, game in enumerate(games, start=1):
        variant = TABLA[number - 1]
        assert game["variant"] == game["board"] == game["record"]["variant"] == variant
        assert game["info"].startswith(f"Game {number} of the Tabla match: {TITLES[variant]}. ")
        history = game["record"]["history"]
        if number == 1:
            assert history[0]["action"] == "opening"
        else:  # the winner of game 1 opens game 2, rolling both dice (backgammon has no draw)
            winner = games[0]["record"]["result"]["winner"]
            assert history[0]["action"] == "move" and history[0]["side"] == winner
            assert f"{winner} won the last game and opens this one." in game["log"]
        assert game["record"]["score"] == score
        result = game["record"]["result"]
        if result["kind"] != "draw":
            score[result["winner"]] += result["points"]
        assert game["match"]["score"] == score and not game["match"]["over"]
        assert game["score"] == f"Tabla match to 7: X {score['X']} – O {score['O']}"
        following = TABLA[number % 3]
        assert game["next"] == f"Next game: {TITLES[following]}"
        opener = "an opening roll" if result["kind"] == "draw" else \
            ("X (you)" if result["winner"] == "X" else "O (the bot)")
        assert f"Next: game {number + 1}, {TITLES[following]}, opened by {opener}" in game["text"]
    # Gul Bara's cascades were played in game 2 by the page's bots (doubles from a side's fourth turn), or none came.
    moves = [event for event in games[1]["record"]["history"] if event["action"] == "move"]
    assert len(moves) > 10
    # Game 3 (drive_match pressed Next game after game 2): Tapa, no cube, opened by the winner of game 2.
    wait_for(browser, "tapaWeb.state.games.length === 3 && ['human', 'bot'].includes(document.body.dataset.phase)")
    state = browser.execute_script("const s = tapaWeb.state; return [s.variant, s.position.rules, s.games[2].score,"
                                   " document.getElementById('rotation-info').textContent]")
    assert state[0] == "tapa" and state[1] == {"cube": False, "crawford": False} and state[2] == score
    second = games[1]["record"]["result"]
    if second["kind"] != "draw":
        assert state[3].startswith(f"Game 3 of the Tabla match: Tapa. {second['winner']} opens: the winner of the last "
                                   "game."), state[3]
    # The saved match: tapa-ai/rotation-match, the fields of tapa-ai/tavli-match with the rotation as data.
    record = browser.execute_script("return tapaWeb.rotationRecord()")
    assert set(record) == {"format", "version", "source", "rotation", "length", "score", "winner", "players", "games"}
    assert record["format"] == "tapa-ai/rotation-match" and record["version"] == 1 and record["rotation"] == "tabla"
    assert record["length"] == 7 and record["score"] == score and record["winner"] is None
    assert [g["variant"] for g in record["games"]] == list(TABLA)
    assert record["players"]["X"] == "human"
    # The one reader of saved files (tapa-ai analyse) reads the page's file whole: each game by the Tabla rotation's
    # rules (backgammon and Tapa without the cube), the score checked. The current game (unfinished) is left out,
    # as a saved match's games are its finished ones and the one in play.
    from tapa_ai.analysis import read_record
    from tapa_ai.rules.rotations import ROTATIONS

    path = tmp_path / "tabla-match.json"
    path.write_text(json.dumps(record))
    read = read_record(path)
    assert len(read.games) == 3 and read.rules == ROTATIONS["tabla"].rules(1)
    assert [game.rules for game in read.games] == list(ROTATIONS["tabla"].games)
    assert [game.result.winner for game in read.games[:2]] == [g["record"]["result"]["winner"] for g in games]
    browser.find_element("id", "save-game").click()  # the download itself is the browser's
    assert message_of(browser).startswith("Saved tabla-match.json: the Tabla match to 7, 3 games, score X "
                                          f"{score['X']} – O {score['O']}.")
    assert console_errors(browser) == []


def test_choosing_the_tabla_match_in_the_menu_after_a_tavli_match_reads_the_tabla_table(browser, server):
    open_board(browser, server, variant="tavli", length=5, seed=2)
    wait_for(browser, "tapaWeb.state.met && ['human', 'bot'].includes(document.body.dataset.phase)")
    assert browser.execute_script("return [tapaWeb.state.met.name, tapaWeb.state.variant]") == ["tavli", "portes"]
    game = browser.execute_script("return tapaWeb.state.game")
    browser.execute_script("const menu = document.getElementById('variant'); menu.value = 'tabla';"
                           "menu.dispatchEvent(new Event('change'));")
    wait_for(browser, f"tapaWeb.state.game !== {game} && tapaWeb.state.met && "
                      "['human', 'bot'].includes(document.body.dataset.phase)")
    state = browser.execute_script("const s = tapaWeb.state; return [s.met.name, s.variant, s.match.rotation, "
                                   "s.match.length, document.getElementById('score').textContent]")
    assert state == ["tabla", "backgammon", "tabla", 5, "Tabla match to 5: X 0 – O 0"]
    assert browser.find_element("id", "rotation-info").text.startswith("Game 1 of the Tabla match: Backgammon.")
    browser.execute_script("const menu = document.getElementById('variant'); menu.value = 'backgammon';"
                           "menu.dispatchEvent(new Event('change'));")
    wait_for(browser, "tapaWeb.state.match.rotation === null && ['human', 'bot'].includes(document.body.dataset.phase)")
    assert browser.execute_script("return [tapaWeb.state.met, tapaWeb.state.position.rules || null]") == [None, None]
    assert not browser.find_element("id", "rotation-info").is_displayed()
