"""Where the web board gets the family (docs/web.md "Variants"): the page keeps no list of its own. It loads the
server's registry once at start (``GET /v1/variants``, tapa_ai/engine/web_board.py ``variants_json``, from
tapa_ai/rules/options.py ``REGISTRY``) and derives from it the Variant menu (by the registry's titles, the Tavli
match last), its table of each variant (cube, mothers, opening, scored outcomes, points, draws, the model that plays
it), the Tavli rotation and the rules its step planner and encoder read; a server without ``/v1/variants`` (an older
one) is said in one line. Headless Chromium as in tests/test_web.py (skipped with the install line where it is
missing)."""

from __future__ import annotations

import copy
import json

import pytest

import tapa_ai.engine.http as http
from tapa_ai.engine.web_board import variants_json
from tests.servers import serving
from tests.test_web import browser, get, message_of, open_board, wait_for  # noqa: F401

TOP = {"tapa": "backgammon or mother", "plakoto": "mother", "backgammon": "backgammon", "portes": None,
       "fevga": None, "narde": None, "gulbara": None}
"""The outcome each variant scores above a gammon (the chances line's top class), as the page showed it before it
read the registry: a backgammon counts as a gammon in Portes, the running games have none."""


@pytest.fixture(scope="module")
def server():
    """The board's server with no model of its own (the page's 0-ply bot plays)."""
    with serving() as server:
        yield server


def menu(driver):
    """The Variant menu as [(value, text)]."""
    return driver.execute_script("return Array.from(document.getElementById('variant').options)"
                                 ".map(o => [o.value, o.textContent])")


def test_the_variant_menu_and_the_pages_table_are_the_servers_registry(browser, server):
    status, _, body = get(server, "/v1/variants")
    assert status == 200
    served = json.loads(body)
    assert served == variants_json()
    open_board(browser, server, variant="portes", seed=3)
    titles = [(entry["name"], entry["title"]) for entry in served["variants"]]
    assert [name for name, _ in titles] == list(TOP)
    assert menu(browser) == [list(pair) for pair in titles] + [["tavli", "Tavli match (Portes, Plakoto, Fevga)"],
                                                               ["tabla", "Tabla match (Backgammon, Gul Bara, Tapa)"]]
    table = browser.execute_script("return tapaWeb.variants")
    assert browser.execute_script("return Object.keys(tapaWeb.variants)") == list(TOP)
    for entry in served["variants"]:
        mine, rules = table[entry["name"]], entry["rules"]
        assert mine["title"] == entry["title"] and mine["rules"] == rules, entry["name"]
        assert (mine["cube"], mine["mothers"], mine["opening"], mine["nextOpener"], mine["parallel"]) == \
            (rules["cube"], rules["mother_points"] > 0, rules["opening"], rules["next_game_opener"],
             rules["paths"] == "parallel"), entry["name"]
        assert (mine["model"], mine["points"], mine["draws"], mine["top"]) == \
            (entry["model"], entry["outcomes"]["points"], entry["draws"], TOP[entry["name"]]), entry["name"]
    assert table["portes"]["model"] == "backgammon" and table["portes"]["points"] == [1, 2, 2, -1, -2, -2]
    rotations = browser.execute_script("return tapaWeb.rotations")
    assert {name: rotation["games"] for name, rotation in rotations.items()} == \
        {name: rotation["games"] for name, rotation in served["rotations"].items()}
    assert rotations["tabla"]["rules"] == served["rotations"]["tabla"]["rules"]
    assert rotations["tabla"]["met"] == "model/tabla-met.json"
    assert browser.execute_script("return Object.keys(TapaSteps.RULES)") == list(TOP)


def changed_registry():
    """The server's registry with Tapa retitled, a new entry (Tapa with no cube, played by the tapa model) and the
    Tavli rotation in another order: what a registry edit on the Python side alone makes the page show."""
    served = copy.deepcopy(variants_json())
    by_name = {entry["name"]: entry for entry in served["variants"]}
    by_name["tapa"]["title"] = "Tapa (the registry's title)"
    extra = copy.deepcopy(by_name["tapa"])
    extra.update(name="tapa-nocube", title="Tapa without the cube", model="tapa", ships_model=False)
    extra["rules"].update(name="tapa-nocube", cube=False, crawford=False)
    served["variants"].append(extra)
    served["rotations"]["tavli"]["games"] = ["fevga", "portes", "plakoto"]
    return served


def test_a_registry_edit_alone_changes_the_menu_titles_rotation_and_rules(browser, server, monkeypatch):
    served = changed_registry()
    monkeypatch.setattr(http, "variants_json", lambda: served)
    open_board(browser, server, variant="tapa", seed=4)
    names = [entry["name"] for entry in served["variants"]]
    assert menu(browser) == [[entry["name"], entry["title"]] for entry in served["variants"]] + \
        [["tavli", "Tavli match (Fevga, Portes, Plakoto)"],
         ["tabla", "Tabla match (Backgammon, Gul Bara, Tapa (the registry's title))"]]
    assert browser.execute_script("return tapaWeb.variants['tapa-nocube']") | {"summary": None} == {
        "title": "Tapa without the cube", "summary": None, "rules": served["variants"][-1]["rules"], "cube": False,
        "mothers": True, "opening": "use-opening-dice", "nextOpener": "opening-roll", "parallel": False,
        "model": "tapa", "points": [1, 2, 3, -1, -2, -3, 0], "draws": True, "top": "backgammon or mother"}
    # The new variant's rules reach the encoder and the step planner: encoded as the tapa position it plays as.
    position = browser.execute_script("return tapaWeb.state.position")
    same = browser.execute_script("const p = arguments[0]; return [tapaWeb.encode(p, 3), "
                                  "tapaWeb.encode(Object.assign({}, p, {variant: 'tapa-nocube'}), 3)]", position)
    assert same[0] == same[1]
    assert browser.execute_script("return TapaSteps.RULES['tapa-nocube']") == {
        "pins": True, "mother_points": 3, "backgammons": True, "parallel": False, "start_rule": "none",
        "prime_rule": False, "full_start_quarter_allowed": True}
    # A variant the registry lacks is said with the registry's names.
    open_board(browser, server, variant="fevgaa", seed=4)
    notice = browser.execute_script("return document.getElementById('url-notice').textContent")
    assert notice == f'URL parameter variant="fevgaa" is not a game of the board ({", ".join(names)}, tavli, tabla): ' \
                     'tapa is played instead.'
    # The Tavli match rotates as the registry says, and names its games by the registry's titles.
    open_board(browser, server, variant="tavli", seed=4)
    assert browser.execute_script("return tapaWeb.state.variant") == "fevga"
    info = browser.execute_script("return document.getElementById('rotation-info').textContent")
    assert info.startswith("Game 1 of the Tavli match: Fevga.") and "Next: game 2, Portes, " in info, info


def test_an_older_server_without_the_variants_is_said_in_one_line(browser, server, monkeypatch):
    monkeypatch.setattr(http, "VARIANTS_PATH", "/v1/no-variants-here")
    status, _, _ = get(server, "/v1/variants")
    assert status == 404
    browser.get(f"{server.url}/?variant=tapa&seed=1&delay=0")
    wait_for(browser, "document.body.dataset.phase === 'error'")
    message = message_of(browser)
    assert message.startswith("This server does not publish its variants (GET /v1/variants: 404 ") and \
        message.endswith("): it is an older tapa-ai serve than this page. Start the board with this version's "
                         "tapa-ai serve."), message
    assert "\n" not in message and menu(browser) == []
    assert browser.execute_script("return tapaWeb.state.position") is None


def test_a_variants_answer_the_page_cannot_read_is_said_in_one_line(browser, server, monkeypatch):
    monkeypatch.setattr(http, "variants_json", lambda: {"variants": [{"name": "tapa"}], "rotations": {}})
    browser.get(f"{server.url}/?seed=1&delay=0")
    wait_for(browser, "document.body.dataset.phase === 'error'")
    assert message_of(browser) == "The server's variants (GET /v1/variants) are not in the form this page reads: " \
                                  "entry 1 lacks title, rules, outcomes."
