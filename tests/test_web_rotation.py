"""Any rotation's match on the web board (docs/web.md "A rotation's match", issue 64): ``?rotation=tapa,fevga`` (a
preset's name, or any games comma-separated) makes the page offer and play "Rotation match (Tapa, Fevga)", its
games, each game's rules (no cube) and its match equity table all from the server (GET
/v1/rotation-met?rotation=...); a rotation the server refuses is said in one line and the page plays its default
game. Headless Chromium as in tests/test_web.py (skipped with the install line where it is missing)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.servers import serving
from tests.test_web import browser, console_errors, get, message_of, open_board, wait_for  # noqa: F401
from tests.test_web_tavli import drive_match

NO_CUBE = {"cube": False, "crawford": False}


@pytest.fixture(scope="module")
def server():
    with serving(bot="net:checkpoints/backgammon.pt") as server:
        yield server


def notices(driver):
    box = driver.find_element("id", "url-notice")
    return [item.text for item in box.find_elements("tag name", "li")] if box.is_displayed() else []


def test_the_rotation_met_answer_names_each_games_rules(server):
    """The server's answer carries what the page starts each game with: its options changed from its variant's (no
    cube), as GET /v1/variants gives them for the presets."""
    status, _, body = get(server, "/v1/rotation-met?rotation=tapa,fevga")
    served = json.loads(body)
    assert status == 200 and served["name"] == "custom" and served["rotation"] == ["tapa", "fevga"]
    assert served["games"] == ["tapa", "fevga"] and served["rules"] == [NO_CUBE, {}]
    assert served["title"] == "Rotation (Tapa, Fevga)"
    _, _, body = get(server, "/v1/variants")
    presets = json.loads(body)["rotations"]
    for name in ("tavli", "tabla"):
        _, _, body = get(server, f"/model/{name}-met.json")
        assert json.loads(body)["rules"] == presets[name]["rules"]


def test_a_tapa_fevga_rotation_from_the_url_plays_tapa_then_fevga_with_its_own_table(browser, server, tmp_path):
    """?rotation=tapa,fevga: the menu offers and selects "Rotation match (Tapa, Fevga)"; game 1 is Tapa with no cube
    opened by an opening roll; the page's bots play it to its end; the score is shown; game 2 is Fevga opened by
    the winner of game 1 (an opening roll after a draw); the page's table is the Python table of that rotation; the
    saved match names the rotation by its games and tapa-ai's reader reads it."""
    from tapa_ai.analysis.records import record_from_json
    from tapa_ai.cube.rotation_met import rotation_met
    from tapa_ai.rules.outcomes import outcome_points
    from tapa_ai.rules.rotations import parse_rotation

    rotation = parse_rotation("tapa,fevga")
    console_errors(browser)
    open_board(browser, server, rotation="tapa,fevga", length=7, seed=6)
    assert notices(browser) == []
    assert browser.execute_script("return document.getElementById('variant').value") == "custom"
    assert browser.execute_script("return document.getElementById('variant').selectedOptions[0].textContent") == \
        "Rotation match (Tapa, Fevga)"
    state = browser.execute_script("const s = tapaWeb.state; return [s.variant, s.position.rules, s.match.rotation,"
                                   " s.match.length]")
    assert state == ["tapa", NO_CUBE, "custom", 7]
    info = browser.find_element("id", "rotation-info")
    assert re.match(r"^Game 1 of the Rotation match: Tapa\. [XO] opens: won the opening roll \d-\d\. ", info.text), \
        info.text
    assert "Next: game 2, Fevga, opened by the winner of this game" in info.text
    assert browser.find_element("id", "score").text == "Rotation match to 7: X 0 – O 0"
    wait_for(browser, "tapaWeb.state.met && ['human', 'bot'].includes(document.body.dataset.phase)")

    # The page's table is the Python table of this rotation, cell for cell where looked at, and the class values
    # the page's bot plays by are the table's.
    table = rotation_met(rotation)
    page = browser.execute_script("const m = tapaWeb.state.met; return [m.name, m.rotation, m.games, m.max_away,"
                                  " m.table[0][1][3][5], m.table[1][0][2][7], m.table[2][1][6][6], m.table[2][0][1][1]]")
    assert page[:4] == ["custom", ["tapa", "fevga"], ["tapa", "fevga"], table.max_away]
    assert page[4:] == [table.table[0, 1, 3, 5], table.table[1, 0, 2, 7], table.table[2, 1, 6, 6],
                        table.table[2, 0, 1, 1]]
    assert table.table[0, 1, 3, 5] != rotation_met(parse_rotation("tabla")).table[0, 1, 3, 5]
    for game, side, score in ((1, "X", (2, 3)), (2, "O", (5, 1))):
        context = {"rotation": "custom", "length": 7, "score": {"X": score[0], "O": score[1]}, "game": game}
        values = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "tapaWeb.classValues(arguments[0], arguments[1], arguments[2]).then(done, e => done({error: String(e)}));",
            rotation.variant(game), side, context)
        assert not isinstance(values, dict), values
        mover = 0 if side == "X" else 1
        points = np.asarray(outcome_points(rotation.rules(game)), dtype=np.float64)
        assert values == table.class_values(points, [7 - score[mover]], [7 - score[1 - mover]], game - 1)[0].tolist()

    # Game 1 played to its end by the page's bots (Let the bot play on your turns too), then Next game.
    games = drive_match(browser, limit=1)
    assert not isinstance(games, dict), games
    first = games[0]
    assert first["variant"] == first["record"]["variant"] == "tapa"
    assert first["record"]["history"][0]["action"] == "opening"
    result = first["record"]["result"]
    score = {"X": 0, "O": 0}
    if result["kind"] != "draw":
        score[result["winner"]] += result["points"]
    assert first["match"]["score"] == score and not first["match"]["over"]
    assert first["score"] == f"Rotation match to 7: X {score['X']} – O {score['O']}"
    assert f"Score: X {score['X']}, O {score['O']} (Rotation match to 7)." in first["text"]
    assert first["next"] == "Next game: Fevga"
    wait_for(browser, "tapaWeb.state.games.length === 2 && ['human', 'bot'].includes(document.body.dataset.phase)")
    state = browser.execute_script("const s = tapaWeb.state; return [s.variant, s.position.rules || null, "
                                   "s.games[1].score, s.games[1].history[0] || null, document.getElementById("
                                   "'rotation-info').textContent, document.getElementById('score').textContent]")
    assert state[0] == "fevga" and state[1] is None and state[2] == score  # Fevga's own rules: it has no cube
    assert state[5] == f"Rotation match to 7: X {score['X']} – O {score['O']}"
    if result["kind"] == "draw":
        assert state[4].startswith("Game 2 of the Rotation match: Fevga. "), state[4]
    else:  # the winner opens, rolling both dice: no opening roll in the record
        assert state[4].startswith(f"Game 2 of the Rotation match: Fevga. {result['winner']} opens: the winner of the "
                                   "last game."), state[4]
        assert state[3] is None or state[3]["action"] == "move"

    # Save game: tapa-ai/rotation-match with the rotation as Rotation.to_data writes it (the list of games).
    record = browser.execute_script("return tapaWeb.rotationRecord()")
    assert record["format"] == "tapa-ai/rotation-match" and record["version"] == 1
    assert record["rotation"] == ["tapa", "fevga"] == rotation.to_data()
    assert record["length"] == 7 and record["score"] == score and record["winner"] is None
    assert [g["variant"] for g in record["games"]] == ["tapa", "fevga"]
    read = record_from_json(record)
    assert read.rotation == rotation and read.length == 7
    assert [game.rules for game in read.games][:1] == [rotation.rules(1)]
    assert read.games[0].result.winner == result["winner"]
    path = tmp_path / "rotation-match.json"
    path.write_text(json.dumps(record))
    assert record_from_json(json.loads(path.read_text())).rotation == rotation
    browser.find_element("id", "save-game").click()  # the download itself is the browser's
    assert message_of(browser).startswith("Saved rotation-match.json: the Rotation match to 7, 2 games, score X "
                                          f"{score['X']} – O {score['O']}.")
    assert console_errors(browser) == []


def test_a_rotation_of_a_presets_games_is_the_preset(browser, server):
    """?rotation=backgammon,gulbara,tapa is the Tabla rotation (as parse_rotation reads it): its own menu entry,
    no extra one; ?rotation=tavli, the Tavli match; ?rotation= wins over ?variant=, with a notice."""
    open_board(browser, server, rotation="backgammon,gulbara,tapa", length=3, seed=1)
    assert notices(browser) == []
    state = browser.execute_script("const m = document.getElementById('variant'); return [m.value, "
                                   "Array.from(m.options).map(o => o.value).includes('custom'), tapaWeb.state.variant,"
                                   " tapaWeb.state.position.rules]")
    assert state == ["tabla", False, "backgammon", NO_CUBE]
    open_board(browser, server, rotation="tavli", seed=1)
    assert browser.execute_script("return [document.getElementById('variant').value, tapaWeb.state.variant, "
                                  "tapaWeb.state.match.length]") == ["tavli", "portes", 5]
    assert notices(browser) == []
    open_board(browser, server, variant="plakoto", rotation="fevga,tapa", seed=1)  # ?rotation= chooses, and says so
    assert notices(browser) == ['URL parameter variant="plakoto" is not used: rotation="fevga,tapa" chooses the game, '
                                'the Rotation match (Fevga, Tapa).']
    assert browser.execute_script("return [document.getElementById('variant').value, tapaWeb.state.variant, "
                                  "tapaWeb.state.match.rotation]") == ["custom", "fevga", "custom"]


@pytest.mark.parametrize("query, line", [
    ("tapa,chess", "rotation-met: unknown variant 'chess' in the rotation"),
    ("", "rotation-met: an empty rotation"),
])
def test_a_bad_rotation_is_said_in_one_line_and_the_default_game_is_played(browser, server, query, line):
    console_errors(browser)
    open_board(browser, server, rotation=query, seed=2)
    found = notices(browser)
    assert len(found) == 1, found
    assert found[0].startswith(f'URL parameter rotation="{query}" is not a rotation the board can play ({line}'), found
    assert found[0].endswith("): Tapa is played instead."), found
    state = browser.execute_script("const m = document.getElementById('variant'); return [m.value, "
                                   "Array.from(m.options).map(o => o.value).includes('custom'), tapaWeb.state.variant,"
                                   " tapaWeb.state.match.rotation, document.body.dataset.phase]")
    assert state[:4] == ["tapa", False, "tapa", None] and state[4] in ("human", "bot")
    # The page plays on: the bot plays a few turns of its default game.
    turns = int(browser.execute_script("return document.body.dataset.turns"))
    for _ in range(3):
        if browser.execute_script("return document.body.dataset.phase") == "human":
            browser.find_element("id", "bot-plays").click()
        wait_for(browser, f"Number(document.body.dataset.turns) > {turns} || document.body.dataset.phase === 'over'")
        assert browser.execute_script("return document.body.dataset.phase") != "error", message_of(browser)
        turns = int(browser.execute_script("return document.body.dataset.turns"))
    assert turns >= 4 and browser.execute_script("return tapaWeb.state.games[0].history.length") >= 3
    assert console_errors(browser, allowed=(r"rotation-met",)) == []
