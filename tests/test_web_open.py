"""The web board's *Open* (docs/web.md "Open"): a match file chosen in the page's file input is read by the server's
``read_match`` (the project's one reader, replayed through the rules) and the page shows the match: its games in
the page's record (what *Save game* writes), the score, and play goes on where the file ends; a bad file is said
in the message line and changes nothing. Headless Chromium as in tests/test_web.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tapa_ai.analysis.match_state import match_file_state
from tapa_ai.analysis.records import read_saved
from tapa_ai.matchfiles import from_record, match_text, parse_match_text, to_document
from tapa_ai.rules.rotations import ROTATIONS, Rotation
from tests.servers import serving
from tests.test_web import browser, let_the_bot_play_to_the_end, message_of, open_board, wait_for  # noqa: F401

DATA = Path(__file__).parent / "data" / "matchfiles"
GNUBG_MAT = (DATA / "gnubg_match3.mat").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def server():
    """The board's server with the shipped backgammon model: the files' games are backgammon, analysed by it."""
    with serving(bot="net:checkpoints/backgammon.pt") as server:
        yield server


def watch_confirm(driver, answer: bool) -> None:
    """Replace the page's confirm(): it answers ``answer`` and keeps the question in window.asked."""
    driver.execute_script("window.asked = null; window.confirm = (text) => { window.asked = text; return %s; };"
                          % ("true" if answer else "false"))


def open_file(driver, path: Path, done: str) -> str:
    """Choose ``path`` in the page's file input (as the Open button's dialog does) and wait until the message
    begins with ``done``; the message."""
    driver.execute_script("document.getElementById('message').textContent = ''")
    driver.find_element("id", "open-file").send_keys(str(path.resolve()))
    return wait_for(driver, f"document.getElementById('message').textContent.startsWith({json.dumps(done)}) && "
                            "document.getElementById('message').textContent")


def games_of(text: str, name: str):
    """The games of a match file as the project's reader reads them (the histories of its document)."""
    return [game["history"] for game in to_document(parse_match_text(text, name), name)["games"]]


def test_gnubgs_analysed_sgf_opens_as_the_finished_match_and_its_last_game_is_analysed(browser, server):
    open_board(browser, server, variant="backgammon", seed=5)
    assert browser.find_element("id", "open-game").is_displayed()
    assert browser.find_element("id", "open-file").get_attribute("accept") == ".sgf,.mat,.txt,.json"
    watch_confirm(browser, True)
    path = DATA / "gnubg_match3.sgf"  # 113,649 bytes with gnubg's analysis: the page sends it without
    message = open_file(browser, path, "Opened ")
    assert message == ("Opened gnubg_match3.sgf: backgammon match to 3, 2 games, score X 3 – O 0. The match is over: "
                       "X won it 3–0. New game starts a new match.")
    record = browser.execute_script("return tapaWeb.record()")
    assert record["format"] == "tapa-ai/games" and record["variant"] == "backgammon"
    assert [game["history"] for game in record["games"]] == games_of(path.read_text(encoding="utf-8"), path.name)
    assert [game["result"] for game in record["games"]] == [{"winner": "X", "kind": "single", "points": 1}] * 2
    assert [game["players"] for game in record["games"]] == [{"X": "root", "O": "gnubg"}] * 2
    state = match_file_state(record, "the page's record")  # Save game's file reads back to the same match
    assert (state.score, state.length, state.is_over) == ((3, 0), 3, True)
    assert browser.find_element("id", "score").text == "match to 3: X 3 – O 0 · cube 2 (X owns it)"
    assert browser.execute_script("return [document.body.dataset.phase, document.getElementById('variant').value, "
                                  "document.getElementById('match-length').value]") == ["over", "backgammon", "3"]
    # the finished last game is analysed by the server, as the engine's analyse rates it
    assert browser.find_element("id", "analyse").is_enabled()
    browser.find_element("id", "analyse").click()
    wait_for(browser, "tapaWeb.state.analysis !== null")
    status, expected = server.engine.respond({"cmd": "analyse", "record": {**record, "games": record["games"][-1:]},
                                              "positions": False})
    assert status == 200
    assert browser.execute_script("return tapaWeb.state.analysis")["games"] == expected["games"]
    # and a new match begins
    browser.find_element("id", "new-game").click()
    wait_for(browser, "['human', 'bot'].includes(document.body.dataset.phase) && tapaWeb.record().games.length === 1")


def test_an_unfinished_game_goes_on_from_its_position_with_its_cube_to_its_end(browser, server, tmp_path):
    open_board(browser, server, variant="backgammon", seed=7)
    watch_confirm(browser, True)
    cut = GNUBG_MAT[:GNUBG_MAT.index(" 13) 65")]  # game 2 stops with O to roll, X owning the cube at 2
    path = tmp_path / "cut.mat"
    path.write_text(cut)
    open_file(browser, path, "Opened ")
    wait_for(browser, "document.body.dataset.phase === 'human'")
    assert message_of(browser).startswith(
        "Opened cut.mat: backgammon match to 3, 2 games, score X 1 – O 0. Game 2 goes on from its last position "
        "(O to roll, cube 2 owned by X). The bot played ")
    record = browser.execute_script("return tapaWeb.record()")
    read = games_of(cut, "cut.mat")
    assert record["games"][0]["history"] == read[0]
    history = record["games"][1]["history"]
    assert history[:len(read[1])] == read[1]
    assert history[len(read[1])]["side"] == "O" and history[len(read[1])]["action"] == "move"  # the bot's roll
    assert browser.find_element("id", "score").text == "match to 3: X 1 – O 0 · cube 2 (X owns it)"
    let_the_bot_play_to_the_end(browser, 300)
    record = browser.execute_script("return tapaWeb.record()")
    result = record["games"][1]["result"]
    score = browser.execute_script("return tapaWeb.state.match.score")
    expected = {"X": 1, "O": 0}
    expected[result["winner"]] += 2 * result["points"]  # played for the cube's 2
    assert score == expected
    saved = read_saved(record, "the page's record").record  # tapa-ai analyse's reader: the game replays to its end
    assert saved.games[1].result.winner == result["winner"] and saved.games[1].cube == 2


def test_a_finished_game_is_followed_by_the_next_at_its_score(browser, server):
    open_board(browser, server, variant="tapa", seed=3)
    watch_confirm(browser, True)
    open_file(browser, DATA / "fibs_style.mat", "Opened ")
    wait_for(browser, "document.body.dataset.phase === 'human'")
    assert message_of(browser).startswith("Opened fibs_style.mat: backgammon match to 3, 1 game, score X 1 – O 0. "
                                          "Game 2 begins.")
    record = browser.execute_script("return tapaWeb.record()")
    assert record["variant"] == "backgammon" and len(record["games"]) == 2
    assert record["games"][0]["history"] == games_of((DATA / "fibs_style.mat").read_text(), "fibs_style.mat")[0]
    new = record["games"][1]
    assert (new["number"], new["score"], new["match_length"], new["history"][0]["action"]) == \
        (2, {"X": 1, "O": 0}, 3, "opening")
    assert browser.find_element("id", "score").text == "match to 3: X 1 – O 0 · cube 1"


def test_a_tabla_match_opens_as_the_rotations_match_and_its_game_goes_on(browser, server, tmp_path):
    from tests.test_matchfiles import _rotation_record

    record = _rotation_record(ROTATIONS["tabla"], seed=5)
    text = match_text(from_record(record), "mat")
    open_board(browser, server, variant="backgammon", seed=9)
    watch_confirm(browser, True)
    path = tmp_path / "tabla.mat"
    path.write_text(text)
    open_file(browser, path, "Opened ")
    wait_for(browser, "document.body.dataset.phase === 'human'")
    assert message_of(browser).startswith("Opened tabla.mat: Tabla match to 3, 3 games, score X 1 – O 1. "
                                          "Game 3 goes on from its last position (X to roll).")
    assert browser.execute_script("return [tapaWeb.state.match.rotation, tapaWeb.state.variant, "
                                  "document.getElementById('variant').value]") == ["tabla", "tapa", "tabla"]
    saved = browser.execute_script("return tapaWeb.rotationRecord()")
    assert saved["format"] == "tapa-ai/rotation-match" and saved["rotation"] == "tabla" and saved["length"] == 3
    read = games_of(text, path.name)
    assert [game["variant"] for game in saved["games"]] == ["backgammon", "gulbara", "tapa"]
    assert [game["history"] for game in saved["games"][:2]] == read[:2]
    assert saved["games"][2]["history"][:len(read[2])] == read[2]
    assert browser.find_element("id", "rotation-info").is_displayed()
    # a rotation of other games: the page's "custom" entry, its games from the server (GET v1/rotation-met)
    custom = tmp_path / "tf.sgf"
    custom.write_text(match_text(from_record(_rotation_record(Rotation.of(["tapa", "fevga"]), seed=5)), "sgf"))
    open_file(browser, custom, "Opened ")
    wait_for(browser, "document.body.dataset.phase === 'human'")
    assert message_of(browser).startswith("Opened tf.sgf: Rotation match to 3, 3 games, score X 0 – O 2. Game 3 "
                                          "goes on from its last position (X to roll).")
    assert browser.execute_script("return [tapaWeb.state.match.rotation, tapaWeb.state.variant, "
                                  "document.getElementById('variant').value, "
                                  "document.getElementById('variant').selectedOptions[0].textContent]") == \
        ["custom", "tapa", "custom", "Rotation match (Tapa, Fevga)"]
    saved = browser.execute_script("return tapaWeb.rotationRecord()")
    assert saved["rotation"] == ["tapa", "fevga"] and [g["variant"] for g in saved["games"]] == ["tapa", "fevga", "tapa"]


def test_a_bad_file_is_said_and_the_game_in_progress_stays(browser, server, tmp_path):
    open_board(browser, server, variant="backgammon", seed=11)
    watch_confirm(browser, False)
    wait_for(browser, "document.body.dataset.phase === 'human'")
    browser.find_element("id", "bot-plays").click()  # a move of yours: the game is under way
    wait_for(browser, "document.body.dataset.phase === 'human' && tapaWeb.record().games[0].history.length > 2")
    before = browser.execute_script("return [tapaWeb.record(), tapaWeb.state.match, tapaWeb.state.position]")
    bad = tmp_path / "bad.mat"
    bad.write_text(GNUBG_MAT.replace("  4) 66: 24/18 24/18 13/7 13/7", "  4) 66: 24/18 24/18 13/7 13/1"))
    message = open_file(browser, bad, "Cannot open ")
    assert message == ("Cannot open bad.mat: the server says: bad.mat: game 2, move 4 (O 6-6 '24/18 24/18 13/7 "
                       "13/1'): an illegal move: move text '24/18 24/18 13/7 13/1' is not a legal move with dice "
                       "[6, 6] (8 legal moves, e.g. '24/18 24/18 13/7 13/7')")
    assert browser.find_element("id", "message").get_attribute("class") == "error"
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    assert open_file(browser, notes, "Cannot open ") == (
        "Cannot open notes.txt: the server says: notes.txt: not a match file or a saved game: neither GNU "
        "Backgammon's SGF (a game tree '(;...'), a .mat match (a 'N point match' or 'Game 1' line) nor a JSON "
        "record (docs/match-files.md)")
    empty = tmp_path / "empty.sgf"
    empty.write_text("")
    assert open_file(browser, empty, "Cannot open ") == \
        "Cannot open empty.sgf: the server says: empty.sgf: the text is empty: nothing to open"
    assert browser.execute_script("return window.asked") is None  # nothing was read: nothing asked
    # a good file, refused at the question: the game in progress goes on
    message = open_file(browser, DATA / "gnubg_match3.mat", "Not opened")
    assert message == "Not opened: gnubg_match3.mat would replace the game in progress, which goes on."
    assert re.match(r"Replace the game in progress by the match of gnubg_match3\.mat\?",
                    browser.execute_script("return window.asked"))
    after = browser.execute_script("return [tapaWeb.record(), tapaWeb.state.match, tapaWeb.state.position]")
    assert after == before
    assert browser.execute_script("return document.body.dataset.phase") == "human"


def test_a_gul_bara_game_opened_inside_a_cascade_goes_on_with_its_stage(browser, server, tmp_path):
    from tests.test_protocol_match_file import gulbara_cut_in_a_cascade

    text, history = gulbara_cut_in_a_cascade(tmp_path)
    path = tmp_path / "gulbara-cascade.json"
    path.write_text(text)
    open_board(browser, server, variant="tapa", seed=2)
    watch_confirm(browser, True)
    open_file(browser, path, "Opened ")
    wait_for(browser, "document.body.dataset.phase === 'human'")
    assert message_of(browser).startswith(
        "Opened gulbara-cascade.json: gulbara games (no match length), 1 game, score X 0 – O 0. Game 1 goes on from "
        "its last position (X to move with 6-6). You play 6-6 with no roll (cascade: 6s now, the last stage).")
    assert browser.execute_script("return [tapaWeb.state.variant, tapaWeb.state.stage.number, "
                                  "document.getElementById('cascade-info').textContent]") == \
        ["gulbara", 6, "cascade: 6s now, the last stage"]
    browser.find_element("id", "bot-plays").click()
    wait_for(browser, f"tapaWeb.record().games[0].history.length > {len(history)}")
    record = browser.execute_script("return tapaWeb.record()")
    assert record["variant"] == "gulbara" and record["games"][0]["history"][:len(history)] == history
    assert record["games"][0]["history"][len(history)]["dice"] == [6, 6]
    assert record["games"][0]["history"][len(history)]["side"] == "X"
