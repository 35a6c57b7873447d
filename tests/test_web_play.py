"""The web board as a player meets it (docs/web.md "Play and study", "URL parameters", "Forced moves"): play mode keeps
the best move, the equities and the chances hidden during the game (on request, a turn at a time) while study mode
shows them; a mistyped URL parameter is said on the page; a forced move of yours is played for you and said; the
chances line lists only the outcomes the variant scores; a level is shown by its name; the disabled Bot list says
why. Headless Chromium as in tests/test_web.py (skipped with the install line where it is missing)."""

from __future__ import annotations

import numpy as np
import pytest

# server: the board's server with the shipped tapa model (tapa's n-ply bot and Analyse are the server's).
from tests.test_web import browser, console_errors, message_of, open_board, server, wait_for  # noqa: F401

ALL_VARIANTS = ("tapa", "plakoto", "backgammon", "portes", "fevga", "narde")


def human_turn(driver):
    """Wait until it is the human's turn (the bot answering in between); False if the game ended first."""
    return wait_for(driver, "['human', 'over'].includes(document.body.dataset.phase) && document.body.dataset.phase") \
        == "human"


def shown(driver, element_id):
    return driver.find_element("id", element_id).is_displayed()


def panel(driver):
    return driver.execute_script("const $ = (id) => document.getElementById(id); return {mode: $('mode').value,"
                                 " chances: $('chances').hidden, moves: $('moves').hidden, reveal: $('reveal').hidden,"
                                 " label: $('chances-label').textContent, note: $('analysis-note').textContent,"
                                 " level: $('level-note').textContent, levelTitle: $('level-note').title}")


def test_play_mode_hides_the_best_move_equity_and_chances_until_asked(browser, server):
    """A level below world-class plays in play mode: during the game the panel shows no best move, no equity and no
    chances (and the header the level's name, not its noise); Show the analysis shows those of the turn, against the
    engine's 0-ply hint, and the next turn is hidden again; the Mode list's study shows them all along."""
    console_errors(browser)
    open_board(browser, server, variant="tapa", seed=3, level="casual", noise_seed=5)
    assert human_turn(browser)
    state = panel(browser)
    assert state["mode"] == "play" and state["chances"] and state["moves"] and not state["reveal"], state
    assert state["label"] == "" and state["note"].startswith("Play mode: the best move, the equities and the chances "
                                                             "stay hidden during the game."), state
    text = browser.find_element("id", "analysis").text
    assert "%" not in text and "equity" not in text.lower(), text
    # The level's name and depth in the header; its noise and the noise seed only in the tooltip.
    assert state["level"] == "casual: 0-ply in the page." and "noise" not in browser.find_element("tag name",
                                                                                                "header").text
    assert "noise seed 5" in state["levelTitle"] and "noise 0." in state["levelTitle"], state
    # On request: this turn's analysis, the best move the engine's 0-ply hint.
    browser.find_element("id", "reveal").click()
    assert shown(browser, "chances") and shown(browser, "moves") and not shown(browser, "reveal")
    position, dice = browser.execute_script("return [tapaWeb.state.position, tapaWeb.state.dice]")
    status, hint = server.engine.respond({"cmd": "hint", "position": position, "dice": dice, "plies": 0, "count": 1})
    assert status == 200
    first = browser.execute_script("return Array.from(document.querySelectorAll('#moves tbody tr')[0].cells)"
                                   ".map(c => c.textContent)")
    assert first[1].removesuffix(" =").removesuffix(" †") == hint["moves"][0]["move"], (first, hint["moves"][0])
    assert abs(float(first[2]) - hint["moves"][0]["equity"]) <= 1e-3, (first, hint["moves"][0])
    assert "equity" in browser.find_element("id", "chances-label").text
    # The next turn of yours: hidden again.
    turn = browser.execute_script("return document.body.dataset.turns")
    browser.find_element("id", "bot-plays").click()
    wait_for(browser, f"document.body.dataset.turns !== '{turn}' || document.body.dataset.phase === 'over'")
    if human_turn(browser):
        assert not shown(browser, "chances") and not shown(browser, "moves") and shown(browser, "reveal")
        # The Mode list: study shows the answers (and the level's noise), play hides them again.
        browser.find_element("css selector", "#mode option[value='study']").click()
        assert shown(browser, "chances") and shown(browser, "moves") and not shown(browser, "reveal")
        assert "noise seed 5" in browser.find_element("id", "level-note").text
        browser.find_element("css selector", "#mode option[value='play']").click()
        assert not shown(browser, "chances") and not shown(browser, "moves")
    assert console_errors(browser) == []


def test_study_mode_is_the_default_without_a_level_below_world_class_and_mode_chooses(browser, server):
    open_board(browser, server, variant="tapa", seed=3)  # no level: study, as the board always was
    assert human_turn(browser)
    assert panel(browser)["mode"] == "study" and shown(browser, "chances") and shown(browser, "moves")
    open_board(browser, server, variant="tapa", seed=3, level="world-class")
    assert panel(browser)["mode"] == "study"
    open_board(browser, server, variant="tapa", seed=3, level="casual", mode="study", noise_seed=41)
    assert human_turn(browser)
    state = panel(browser)
    assert state["mode"] == "study" and not state["chances"] and not state["moves"] and state["reveal"], state
    assert "noise seed 41 (game 1)" in state["level"], state
    open_board(browser, server, variant="tapa", seed=3, mode="play")  # play without a level
    assert human_turn(browser)
    assert panel(browser)["mode"] == "play" and not shown(browser, "chances") and not shown(browser, "moves")


def notices(driver):
    box = driver.find_element("id", "url-notice")
    return [item.text for item in box.find_elements("tag name", "li")] if box.is_displayed() else []


def test_a_mistyped_url_parameter_is_said_on_the_page_with_what_was_used(browser, server):
    """Each bad value names the parameter, the value and what the board used instead; an unknown name is said and
    ignored; a long value is quoted bounded; a good URL shows no notice."""
    open_board(browser, server, variant="fevgaa", seed=2)
    from tapa_ai.rules.options import REGISTRY

    games = ", ".join([*REGISTRY, "tavli", "tabla"])  # the page's menu: the server's registry, then the rotations
    assert notices(browser) == [f'URL parameter variant="fevgaa" is not a game of the board ({games}): tapa is '
                                'played instead.']
    assert games.startswith("tapa, plakoto, backgammon, portes, fevga, narde, gulbara")
    assert browser.execute_script("return tapaWeb.state.variant") == "tapa"
    open_board(browser, server, variant="plakoto", seed=2, level="casul")
    assert notices(browser) == ['URL parameter level="casul" is not a level of play (beginner, casual, intermediate, '
                                'advanced, expert, world-class): no level (the Bot choice) is played instead.']
    assert browser.execute_script("return document.getElementById('level').value") == ""
    open_board(browser, server, variant="tavli", length=30, seed=2)
    assert notices(browser) == ['URL parameter length="30" is outside 1 to 25 points (the match equity table\'s '
                                'reach): a match to 25 points is played instead.']
    assert browser.execute_script("return tapaWeb.state.match.length") == 25
    open_board(browser, server, variant="tapa", length="x", seed=2, mode="plya", levle="casual", strength=9)
    found = notices(browser)
    assert len(found) == 4, found
    assert 'URL parameter "levle" is not one the board reads (variant, rotation, length, strength, level, seed, noise_seed, ' \
           'delay, mode): ignored.' in found
    assert 'URL parameter length="x" is not a whole number of points from 1 to 25: a single game is played ' \
           'instead.' in found
    assert 'URL parameter mode="plya" is not a mode (play, study): study mode is used instead.' in found
    assert any(line.startswith('URL parameter strength="9" is not a bot of the list (0, 1, 2, heuristic, runner, '
                               'random): the ') for line in found), found
    assert browser.execute_script("return [tapaWeb.state.match.length, document.getElementById('mode').value]") == \
        [1, "study"]
    # A plakoto 1-ply bot needs the server's plakoto model: said, with why.
    open_board(browser, server, variant="plakoto", seed=2, strength=1)
    assert notices(browser) == ['URL parameter strength="1" cannot play here (start tapa-ai serve --bot '
                                'net:checkpoints/plakoto.pt for an n-ply plakoto bot): the 0-ply (in the page) bot '
                                'plays instead.']
    open_board(browser, server, variant="tapa", seed="-4", noise_seed="z" * 5000)
    found = notices(browser)
    assert len(found) == 2 and all(len(line) < 300 for line in found), found
    assert found[0].startswith('URL parameter seed="-4" is not a whole number from 0 to 4294967295: the random seed ')
    assert found[1] == f'URL parameter noise_seed="{"z" * 40}"... (5,000 characters) is not a whole number from 0 to ' \
                       f'4294967295: the dice\'s seed, {browser.execute_script("return tapaWeb.seed")}, is used instead.'
    open_board(browser, server, variant="narde", seed=2, length=3, level="expert", mode="study")
    assert notices(browser) == [] and not shown(browser, "url-notice")


def forced_cases(count_forced=2):
    """Tapa positions with X to move: some with one legal move that does not end the game (the move's text by the
    Python rules), and one where the roll has several."""
    from tapa_ai.movegen.random_positions import mixed_positions
    from tapa_ai.notation import format_move, position_to_json
    from tapa_ai.rules import legal_moves
    from tapa_ai.notation.json_position import position_from_json

    rng = np.random.default_rng(5)
    forced, choice = [], None
    for data in mixed_positions("tapa", 400, rng).to_json():
        if data.get("result") or data["turn"] != "X":
            continue
        position = position_from_json(data)
        for dice in ((a, b) for a in range(1, 7) for b in range(a, 7)):
            moves = legal_moves(position, dice)
            if len(moves) == 1 and format_move(moves[0]) and moves[0].position.result is None:
                if len(forced) < count_forced:
                    forced.append((position_to_json(position), list(dice), format_move(moves[0])))
            elif len(moves) > 3 and choice is None:
                choice = (position_to_json(position), list(dice))
        if len(forced) == count_forced and choice:
            return forced, choice
    raise AssertionError("no forced tapa position found")


def test_a_forced_move_of_yours_is_played_for_you_with_a_note(browser, server):
    """A roll of yours with one legal move is played for you (the terminal does so) and said: "forced: MOVE" in the
    message, the log's line marked; a roll with a choice waits for you."""
    forced, choice = forced_cases()
    console_errors(browser)
    open_board(browser, server, variant="tapa", seed=8, delay=1500)  # the note stays 1.5 s
    for position, dice, move in forced:
        wait_for(browser, "['human', 'bot'].includes(document.body.dataset.phase)")
        moves = browser.execute_script("return tapaWeb.record().games[0].history.length")
        assert browser.execute_script("return tapaWeb.turnAt(arguments[0], arguments[1])", position, dice)
        wait_for(browser, f"document.getElementById('message').textContent.includes('forced: {move} (your only "
                          "legal move), played for you.')")
        event = wait_for(browser, f"tapaWeb.record().games[0].history.length > {moves} && "
                                  "tapaWeb.record().games[0].history.slice(-1)[0]")
        assert event == {"action": "move", "side": "X", "dice": dice, "move": move}
        log = browser.execute_script("return tapaWeb.state.log")
        assert f"X {dice[0]}-{dice[1]}: {move} (forced: your only legal move)" in log, log[-3:]
        assert browser.execute_script("return tapaWeb.state.position.turn") == "O"
    # A roll with a choice: your turn, nothing played.
    wait_for(browser, "['human', 'bot'].includes(document.body.dataset.phase)")
    assert browser.execute_script("return tapaWeb.turnAt(arguments[0], arguments[1])", *choice)
    assert human_turn(browser)
    assert browser.execute_script("return tapaWeb.state.position") == choice[0]
    assert console_errors(browser) == []


def test_the_chances_line_lists_only_the_outcomes_the_variant_scores(browser, server):
    """The draw only where the rules have draws (both mothers pinned), the top class (backgammon, mother win) only
    where the rules score one (tapa_ai/rules: backgammons, or mothers); the bar's parts add up to 100%."""
    from tapa_ai.rules import variant_rules

    for variant in ALL_VARIANTS:
        rules = variant_rules(variant)
        top = rules.backgammons or rules.has_draws
        open_board(browser, server, variant=variant, seed=4, mode="study")
        wait_for(browser, "document.getElementById('chances-legend').textContent")
        legend = browser.find_element("id", "chances-legend").text
        parts = browser.execute_script("return Array.from(document.querySelectorAll('#chances div')).map(d => "
                                       "[d.className, parseFloat(d.style.width)])")
        names = {name for name, _ in parts}
        assert ("draw" in legend) == rules.has_draws == ("c-draw" in names), (variant, legend, names)
        assert (("backgammon" in legend) or ("mother" in legend)) == top, (variant, legend)
        assert ({"c-win-top", "c-lose-top"} <= names) == top and bool({"c-win-top", "c-lose-top"} & names) == top
        assert {"c-win-single", "c-win-gammon", "c-lose-single", "c-lose-gammon"} <= names
        assert abs(sum(width for _, width in parts) - 100) < 1e-3, (variant, parts)
        assert legend.startswith("win ") and " · lose " in legend and "gammon" in legend, legend


def test_a_disabled_bot_list_says_why(browser, server):
    open_board(browser, server, variant="plakoto", seed=3, level="casual")
    state = browser.execute_script("const s = document.getElementById('strength'), w = document.getElementById("
                                   "'strength-why'); return [s.disabled, s.title, w.textContent, w.title]")
    assert state[0] and state[2] == "set by the level" and shown(browser, "strength-why"), state
    assert state[1] == state[3] == "the casual level sets the bot: choose Level none to choose the bot here", state
    open_board(browser, server, variant="plakoto", seed=3)
    state = browser.execute_script("const s = document.getElementById('strength'); return [s.disabled, "
                                   "document.getElementById('strength-why').textContent]")
    assert state == [False, ""]
    # Choosing a level in the page disables it with the reason; none gives it back.
    browser.find_element("css selector", "#level option[value='advanced']").click()
    assert browser.find_element("id", "strength-why").text == "set by the level"
    assert not browser.find_element("id", "strength").is_enabled()
    browser.find_element("css selector", "#level option[value='']").click()
    assert browser.find_element("id", "strength").is_enabled() and browser.find_element("id", "strength-why").text == ""
    assert notices(browser) == []
