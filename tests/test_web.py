"""The web board (docs/web.md): ``tapa-ai serve`` serves the page and the exported models, and the page,
run in headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium with the
driver's path given: nothing downloads a browser), encodes, evaluates and plays as the engine does.

Without Chromium, or without the ``selenium`` package, the browser tests skip with one line saying what to
install (``scripts/setup_tests.sh``, the README's test set-up, installs both: Chromium with apt-get when run as
root), and fail under ``CI=true`` (``.ci/run`` sets it; tests/requires.py).
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tapa_ai.engine.protocol import Engine
from tapa_ai.engine.web_board import WEB_DIR, model_json, web_files
from tapa_ai.export import numpy_model
from tests.requires import require, skip_or_fail
from tests.servers import serving

ROOT = Path(__file__).resolve().parent.parent
VECTORS = json.loads((ROOT / "tests" / "data" / "encoding_vectors.json").read_text())
VARIANTS = ("tapa", "plakoto", "backgammon", "fevga", "narde", "gulbara")
RUNNING = ("fevga", "narde")
"""The running games (docs/rules.md 8): their models read encoding version 4; the vectors hold feature cases of them."""
CHROMIUM = os.environ.get("TAPA_AI_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TAPA_AI_CHROMEDRIVER", "/usr/bin/chromedriver")
INSTALL = "apt-get install -y --no-install-recommends chromium chromium-driver"
WAIT_S = 60.0


# -- the server -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server():
    """The board's server with the shipped tapa model, so tapa's n-ply bot is the server's."""
    with serving(bot="net:checkpoints/tapa.pt") as server:
        yield server


def get(server, path):
    """(status, content type, body bytes) of a GET."""
    try:
        with urllib.request.urlopen(server.url + path, timeout=60) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def let_the_bot_play_to_the_end(browser, limit: int) -> int:
    """Press *Let the bot play* at each of your decisions until the game is over (at most ``limit`` presses, else
    the test fails); the presses made."""
    for presses in range(limit + 1):
        phase = wait_for(browser, "['human', 'over', 'error'].includes(document.body.dataset.phase)"
                                  " && document.body.dataset.phase")
        assert phase != "error", message_of(browser)
        if phase == "over":
            return presses
        turn = browser.execute_script("return document.body.dataset.turns")
        browser.find_element("id", "bot-plays").click()
        wait_for(browser, f"document.body.dataset.turns !== '{turn}' || document.body.dataset.phase === 'over'")
    raise AssertionError(f"the game did not end in {limit} presses of Let the bot play")


def test_the_page_is_served_at_the_root_with_its_files_and_health_stays(server):
    status, kind, body = get(server, "/")
    assert status == 200 and kind.startswith("text/html")
    page = body.decode()
    referenced = re.findall(r'(?:src|href)="(web/[^"]+)"', page)
    assert {"web/app.js", "web/encoding.js", "web/model.js", "web/steps.js", "web/board.js", "web/style.css"} <= set(referenced)
    for path in referenced:
        status, kind, _ = get(server, "/" + path)
        assert status == 200, path
        assert kind.startswith("text/css" if path.endswith(".css") else "text/javascript"), (path, kind)
    status, kind, body = get(server, "/health")
    assert status == 200 and json.loads(body)["variant"] == "tapa"


def test_the_page_fetches_nothing_from_outside_the_server():
    """Offline: no address of another host in any of the page's files (the SVG namespace names, not fetches)."""
    for name in web_files():
        text = (WEB_DIR / name).read_text()
        addresses = set(re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"')]*", text))
        assert addresses <= {"http://www.w3.org/2000/svg"}, (name, addresses)
        assert "@import" not in text and "import(" not in text, name


def test_page_files_and_models_outside_the_list_are_not_found_with_a_reason(server):
    for path, fragment in (("/web/../engine/http.py", "no page file"), ("/web/secret.py", "no page file"),
                           ("/web/.hidden.js", "no page file"), ("/model/chess.json", "the board plays"),
                           ("/model/tapa.onnx", "no such path")):
        status, kind, body = get(server, path)
        assert status == 404 and kind.startswith("application/json"), path
        assert fragment in json.loads(body)["error"], (path, body)


def test_the_json_model_holds_the_exporters_npz_numbers(server, tmp_path):
    from tapa_ai.export import export_checkpoint

    for variant in VARIANTS:
        status, kind, npz = get(server, f"/model/{variant}.npz")
        assert status == 200 and kind == "application/octet-stream"
        exported = export_checkpoint(ROOT / "checkpoints" / f"{variant}.pt", "npz", tmp_path / f"{variant}.npz")
        assert npz == exported.read_bytes()  # the project's exporter, byte for byte
        status, kind, body = get(server, f"/model/{variant}.json")
        assert status == 200 and kind.startswith("application/json")
        served = json.loads(body)
        assert served == model_json(npz)
        reference = numpy_model.load(str(exported))
        assert served["metadata"] == reference.metadata and served["metadata"]["variant"] == variant
        for layer, weight, bias in zip(served["layers"], reference.weights, reference.biases, strict=True):
            assert (layer["out"], layer["in"]) == weight.shape
            assert np.array_equal(np.frombuffer(base64.b64decode(layer["weight"]), "<f4").reshape(weight.shape), weight)
            assert np.array_equal(np.frombuffer(base64.b64decode(layer["bias"]), "<f4"), bias)


# -- the browser ----------------------------------------------------------------------------------------
def require_chromium(chromium, chromedriver):
    """Skip (fail under ``CI=true``) with one line naming what to install where Chromium or its driver is missing."""
    __tracebackhide__ = True
    for path, what in ((chromium, "headless Chromium"), (chromedriver, "its driver (chromedriver)")):
        if not os.access(path, os.X_OK):
            message = (f"the web board's browser tests need {what} at {path}, which is missing: run `sudo {INSTALL}` "
                       f"(scripts/setup_tests.sh does as root), or point TAPA_AI_CHROMIUM / TAPA_AI_CHROMEDRIVER "
                       f"at them")
            skip_or_fail(message)


def test_a_missing_chromium_skips_with_the_install_line_and_fails_under_ci(tmp_path, monkeypatch):
    missing = str(tmp_path / "chromium")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_chromium(missing, CHROMEDRIVER)
    message = str(skipped.value)
    assert "\n" not in message and f"headless Chromium at {missing}, which is missing" in message
    assert f"`sudo {INSTALL}`" in message and "scripts/setup_tests.sh" in message
    monkeypatch.setenv("CI", "true")
    failure = r"chromedriver\) at .*missing: run `sudo apt-get install .*CI=true"
    with pytest.raises(pytest.fail.Exception, match=failure):
        require_chromium(CHROMIUM if os.access(CHROMIUM, os.X_OK) else sys.executable, missing)


@pytest.fixture(scope="module")
def browser():
    require("selenium")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    require_chromium(CHROMIUM, CHROMEDRIVER)
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1300,900", "--disable-extensions", "--no-first-run"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver's path is given, so Selenium never runs selenium-manager (which would download a browser).
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_script_timeout(120)
    yield driver
    driver.quit()


def console_errors(driver, allowed=()):
    """The page's console errors since the last call, less those matching an ``allowed`` pattern."""
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    return [message for message in errors if not any(re.search(pattern, message) for pattern in allowed)]


def wait_for(driver, script, timeout=WAIT_S):
    """Poll a JavaScript expression until it is truthy; its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script("return " + script)
        if value:
            return value
        if time.monotonic() > deadline:
            state = driver.execute_script("return [document.body.dataset.phase, document.getElementById('message')"
                                          ".textContent]")
            raise AssertionError(f"timed out waiting for {script!r}; page phase and message: {state}")
        time.sleep(0.05)


def open_board(driver, server, **params):
    """Load the page with URL parameters and wait until its first turn is ready."""
    query = "&".join(f"{key}={value}" for key, value in {"delay": 0, **params}.items())
    driver.get(f"{server.url}/?{query}")
    # The first load may wait for numba to compile the server's move generator (cached on disk afterwards).
    wait_for(driver, "window.tapaWeb && ['human', 'bot', 'over', 'error'].includes(document.body.dataset.phase)"
                     " && document.body.dataset.turns", timeout=240)
    assert driver.execute_script("return document.body.dataset.phase") != "error", message_of(driver)


def message_of(driver):
    return driver.execute_script("return document.getElementById('message').textContent")


def test_the_page_loads_without_console_errors(browser, server):
    console_errors(browser)
    for variant in VARIANTS:
        open_board(browser, server, variant=variant, seed=1)
        assert browser.execute_script("return tapaWeb.state.variant") == variant
        assert browser.find_elements("css selector", "#board .checker"), "no checkers drawn"
        assert console_errors(browser) == []


def served_encoding_versions(server):
    """The encoding versions of the models the page gets (the shipped checkpoints')."""
    return {json.loads(server.models.files(variant)[1])["metadata"]["encoding_version"] for variant in VARIANTS}


def test_the_js_encoder_reproduces_the_test_vectors(browser, server):
    """Every case in every version (1-5; Gul Bara's, whose doubles cascade, in version 5 only), and the running
    games' feature cases in version 4, which versions 1-3 refuse (as the Python encoders do)."""
    open_board(browser, server, seed=1)
    widths = {int(version): width for version, width in VECTORS["encoding"]["versions"].items()}
    assert sorted(widths) == [1, 2, 3, 4, 5]
    assert served_encoding_versions(server) <= set(widths), "a shipped model reads an encoding the vectors lack"
    assert browser.execute_script("return TapaEncoding.VERSIONS") == sorted(widths)
    tolerance = VECTORS["tolerance"]["features"]
    positions = [case["position"] for case in VECTORS["cases"]]
    # The running games' model cases in version 4 only (versions 1-3 refuse them: checked below).
    encoded = browser.execute_script(
        "return arguments[0].map(p => (p.variant === 'gulbara' ? [5] : arguments[1].includes(p.variant) ? [4, 5] :"
        " [1, 2, 3, 4, 5]).map(v => [v, tapaWeb.encode(p, v)]))", positions, list(RUNNING))
    assert {case["position"]["variant"] for case in VECTORS["cases"]} == set(VARIANTS)
    for case, by_version in zip(VECTORS["cases"], encoded, strict=True):
        expected = np.asarray(case["features"], dtype=np.float32)
        for version, features in by_version:
            assert len(features) == widths[version], (case["name"], version)
            difference = np.abs(np.asarray(features, dtype=np.float32) - expected[:widths[version]])
            assert difference.max() <= tolerance, (case["name"], version, difference.argmax())
    assert len(encoded) == len(VECTORS["cases"]) >= 30
    running = [case["position"] for case in VECTORS["feature_cases"]]
    answers = browser.execute_script(
        "return arguments[0].map(p => [tapaWeb.encode(p, 4), [1, 2, 3].map(v => {"
        " try { tapaWeb.encode(p, v); return null; } catch (e) { return String(e.message); } })])", running)
    for case, (features, refusals) in zip(VECTORS["feature_cases"], answers, strict=True):
        assert len(features) == widths[4], case["name"]
        stored = np.asarray(case["features"], dtype=np.float32)  # version 5: version 4 and zeros here
        difference = np.abs(np.asarray(features, dtype=np.float32) - stored[:widths[4]])
        assert difference.max() <= tolerance and not stored[widths[4]:].any(), (case["name"], difference.argmax())
        variant = case["position"]["variant"]
        assert refusals == [f'encoding version {v} cannot encode "{variant}" (a running game, paths "parallel"): '
                            "it needs version 4" for v in (1, 2, 3)], (case["name"], refusals)
    assert {case["position"]["variant"] for case in VECTORS["feature_cases"]} == set(RUNNING)
    assert len(answers) >= 30


@pytest.mark.parametrize("variant", RUNNING)
def test_the_in_page_model_of_a_running_game_evaluates_as_numpy_model(browser, server, variant, tmp_path):
    """A version-4 model of a running game (an untrained one, with a race network, which the shipped ones lack): the
    page's TapaModel.evaluatePosition, which encodes with encoding.js, gives numpy_model's answers on random
    positions of both sides to move within 1e-5, the race layers exactly where numpy_model uses them."""
    from tapa_ai.config import ModelConfig
    from tapa_ai.export import export_network
    from tapa_ai.movegen.random_positions import mixed_positions
    from tapa_ai.net.model import EvaluatorNet
    from tapa_ai.rules.options import variant_rules

    open_board(browser, server, seed=1)
    rules = variant_rules(variant)
    net = EvaluatorNet(ModelConfig(hidden=12, encoding_version=4, race_network=True), rules, seed=7)
    path = export_network(net, "npz", tmp_path / f"{variant}.npz")
    positions = mixed_positions(rules, 120, np.random.default_rng(4)).to_json()
    assert {p["turn"] for p in positions} == {"X", "O"}
    answers = browser.execute_script(
        "const model = TapaModel.fromJSON(arguments[0]);"
        "return arguments[1].map(p => { const x = TapaEncoding.encode(p, model.encodingVersion);"
        " const answer = model.evaluatePosition(p);"
        " return [TapaModel.isRace(x), answer.equity, Array.from(answer.probabilities)]; });",
        model_json(path.read_bytes()), positions)
    reference = numpy_model.load(str(path))
    race = numpy_model.race_rows(numpy_model.encode_positions(positions, version=4))
    assert 5 < race.sum() < len(race) - 5
    probabilities, equity = reference.evaluate_positions(positions)
    assert [answer[0] for answer in answers] == race.tolist()
    assert np.abs(np.array([answer[1] for answer in answers]) - equity).max() < 1e-5
    assert np.abs(np.array([answer[2] for answer in answers]) - probabilities).max() < 1e-5


def comparison_positions(variant, count=240, seed=21):
    """Random positions of games in progress (playouts and end games), and which are bear-offs the engine values
    by the databases (none where they are not exact: cascading doubles, docs/bearoff.md)."""
    from tapa_ai.bearoff.evaluate import database_mask
    from tapa_ai.movegen.random_positions import mixed_positions

    batch = mixed_positions(variant, count, np.random.default_rng(seed))
    return batch.to_json(), database_mask(batch)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_in_page_model_equals_the_engines_evaluate(browser, server, variant):
    """>= 200 positions a variant within 1e-5, bear-offs left out: there the engine answers with the bear-off
    database (the page marks them instead, and must find exactly the same ones)."""
    open_board(browser, server, variant=variant, seed=2)
    positions, bearoff = comparison_positions(variant)
    engine = server.engine if variant == "tapa" else Engine(bot=f"net:checkpoints/{variant}.pt")
    answers = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "tapaWeb.evaluate(arguments[0], arguments[1]).then(done, e => done({error: String(e)}));", variant, positions)
    assert not isinstance(answers, dict), answers
    assert [answer["bearoff"] for answer in answers] == bearoff.tolist()
    compared = 0
    worst = 0.0
    for position, answer, is_bearoff in zip(positions, answers, bearoff, strict=True):
        if is_bearoff:
            continue
        status, expected = engine.respond({"cmd": "evaluate", "position": position})
        assert status == 200 and not expected.get("exact"), expected
        probabilities = np.asarray(list(expected["probabilities"].values()))
        worst = max(worst, abs(answer["equity"] - expected["equity"]),
                    float(np.abs(np.asarray(answer["probabilities"]) - probabilities).max()))
        compared += 1
    assert compared >= 200, f"only {compared} positions that are not bear-offs"
    assert worst <= 1e-5, worst


def test_the_in_page_model_of_a_race_network_uses_each_phases_layers(browser, server, tmp_path):
    """A model with a race network (not shipped yet): the page's TapaModel picks the race layers exactly where
    numpy_model's race_rows does, and evaluates like numpy_model within 1e-5."""
    from tapa_ai.config import ModelConfig
    from tapa_ai.export import export_network
    from tapa_ai.export import numpy_model
    from tapa_ai.movegen.random_positions import endgame_positions, mixed_positions
    from tapa_ai.net.encoding import encode
    from tapa_ai.net.model import EvaluatorNet
    from tapa_ai.rules.options import variant_rules

    open_board(browser, server, seed=1)
    rules = variant_rules("backgammon")
    net = EvaluatorNet(ModelConfig(hidden=12, encoding_version=2, race_network=True), rules, seed=5)
    path = export_network(net, "npz", tmp_path / "race.npz")
    rng = np.random.default_rng(3)
    features = np.concatenate([encode(mixed_positions(rules, 60, rng), version=2),
                               encode(endgame_positions(rules, 60, rng), version=2)])
    race = numpy_model.race_rows(features)
    assert 10 < race.sum() < len(race) - 10
    answers = browser.execute_script(
        "const model = TapaModel.fromJSON(arguments[0]);"
        "return arguments[1].map(f => { const x = Float32Array.from(f);"
        " return [TapaModel.isRace(x), model.evaluate(x).equity, Array.from(model.evaluate(x).probabilities)]; });",
        model_json(path.read_bytes()), features.tolist())
    probabilities, equity = numpy_model.load(str(path)).evaluate(features)
    assert [answer[0] for answer in answers] == race.tolist()
    assert np.abs(np.array([answer[1] for answer in answers]) - equity).max() < 1e-5
    assert np.abs(np.array([answer[2] for answer in answers]) - probabilities).max() < 1e-5


def human_turn_by_clicks(driver, rng):
    """Play the human's turn by clicking a highlighted checker, then a highlighted point, until the move is
    complete; then Done. Returns the number of clicks."""
    clicks = 0
    turn = driver.execute_script("return document.body.dataset.turns")
    while True:
        done, sources = driver.execute_script(
            "return [!document.getElementById('done').disabled,"
            " Array.from(document.querySelectorAll('#board rect.hit.source'))]")
        if done:
            break
        if not sources:  # a pass: the page plays it by itself
            wait_for(driver, f"document.body.dataset.turns !== '{turn}' || document.body.dataset.phase === 'over'")
            return clicks
        rng.choice(sources).click()
        targets = driver.find_elements("css selector", "#board rect.hit.target")
        assert targets, f"a source without targets: {message_of(driver)}"
        rng.choice(targets).click()
        clicks += 2
    driver.find_element("id", "done").click()
    wait_for(driver, f"document.body.dataset.turns !== '{turn}' || document.body.dataset.phase !== 'busy'"
                     " && document.body.dataset.phase !== 'human'")
    return clicks + 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_whole_game_is_played_to_the_end_by_clicks_against_the_bot(browser, server, variant):
    console_errors(browser)
    open_board(browser, server, variant=variant, seed=7)
    rng = random.Random(7)
    clicks = turns = 0
    while True:
        phase = wait_for(browser, "['human', 'over', 'error'].includes(document.body.dataset.phase)"
                                   " && document.body.dataset.phase")
        assert phase != "error", message_of(browser)
        if phase == "over":
            break
        clicks += human_turn_by_clicks(browser, rng)
        turns += 1
        assert turns < 400, "the game did not end"
    assert browser.find_element("id", "game-over").is_displayed()
    title = browser.find_element("id", "game-over-title").text
    assert re.match(r"^(You win|The bot wins) (a single game|a gammon|a backgammon)$|^A draw$"
                    r"|^You win by pinning the bot's mother$|^The bot wins by pinning your mother$", title), title
    log = browser.execute_script("return tapaWeb.state.log")
    assert log[-1].startswith("Game over") and clicks > 0
    assert browser.execute_script("return tapaWeb.state.position.result") is not None
    # Analyse greyed (no model of this variant on the server): the reason in words, not only in a tooltip.
    why = browser.find_element("id", "analyse-over-why")
    if variant == "tapa":
        assert browser.find_element("id", "analyse-over").is_enabled() and not why.text
    else:
        assert not browser.find_element("id", "analyse-over").is_enabled() and why.is_displayed()
        assert why.text == f"start tapa-ai serve --bot net:{variant}@1ply to analyse {variant} games"
    # The panel has no move to rate: no empty bar and table, one line instead.
    browser.find_element("id", "close-summary").click()
    assert not browser.find_element("id", "chances").is_displayed()
    assert not browser.find_element("id", "moves").is_displayed()
    note = browser.find_element("id", "analysis-note")
    assert note.is_displayed() and note.text.startswith(f"Game over: {title.lower()}."), note.text
    assert ("Analyse the game" in note.text) == (variant == "tapa")
    assert console_errors(browser) == []


def test_a_greyed_analyse_button_says_why_next_to_it(browser, server):
    open_board(browser, server, variant="plakoto", seed=1)
    why = browser.find_element("id", "analyse-why")
    assert not browser.find_element("id", "analyse").is_enabled() and why.is_displayed()
    assert why.text == "start tapa-ai serve --bot net:plakoto@1ply to analyse plakoto games"
    open_board(browser, server, variant="tapa", seed=1)  # the server's model: only the game is not over yet
    why = browser.find_element("id", "analyse-why")
    assert not browser.find_element("id", "analyse").is_enabled() and why.text == "once the game is over"
    assert browser.find_element("id", "chances").is_displayed() and browser.find_element("id", "moves").is_displayed()


def in_your_numbering(text):
    """The bot's (O's) move text in X's numbering, as the terminal game writes it (tapa_ai.play.moves)."""
    from tapa_ai.play.moves import in_other_view

    return in_other_view(text)


def test_the_bots_move_is_marked_on_the_board_and_logged_in_your_numbering(browser, server):
    """After the bot's move the points its checkers left and reached are marked (until your next action), and
    the log and the message give the move in your numbering too, as the terminal game does."""
    console_errors(browser)
    open_board(browser, server, variant="backgammon", seed=4)
    marked = "return ['from', 'to'].map(k => Array.from(document.querySelectorAll('#board .moved-' + k))" \
             ".map(e => e.dataset.point).sort())"
    seen = 0
    for _ in range(60):
        phase = wait_for(browser, "['human', 'over'].includes(document.body.dataset.phase)"
                                  " && document.body.dataset.phase")
        if phase == "over":
            break
        last = browser.execute_script("return tapaWeb.record().games.slice(-1)[0].history.slice(-1)[0]")
        if last["action"] == "move" and last["side"] == "O" and last["move"]:
            text, yours = last["move"], in_your_numbering(last["move"])
            dice = "-".join(map(str, last["dice"]))
            log = browser.execute_script("return tapaWeb.state.log")
            assert f"O {dice}: {text} (on your board: {yours})" in log, log[-3:]
            message = message_of(browser)
            assert message.startswith(f"The bot played {yours} (your numbering; orange on the board)."), message
            net = {}
            for step in yours.split():
                start, end = step.split("/")
                net[start] = net.get(start, 0) - 1
                net[end] = net.get(end, 0) + 1
            expected = [sorted(p for p, n in net.items() if n < 0), sorted(p for p, n in net.items() if n > 0)]
            assert browser.execute_script(marked) == expected, (text, yours)
            if not browser.find_elements("css selector", "#board rect.hit.source"):
                continue  # no move for you: the page passes for you
            browser.find_element("css selector", "#board rect.hit.source").click()  # your next action
            assert browser.execute_script(marked) == [[], []]
            seen += 1
            if seen == 3:
                break
            browser.find_element("id", "undo").click()
        turn = browser.execute_script("return document.body.dataset.turns")
        browser.find_element("id", "bot-plays").click()
        wait_for(browser, f"document.body.dataset.turns !== '{turn}' || document.body.dataset.phase === 'over'")
    assert seen == 3
    assert console_errors(browser) == []


def test_a_refused_move_shows_the_servers_reason_and_undo_takes_a_step_back(browser, server):
    console_errors(browser)
    open_board(browser, server, variant="plakoto", seed=3)
    wait_for(browser, "document.body.dataset.phase === 'human' || (document.querySelector('#board') &&"
                      " document.body.dataset.phase === 'over')")
    typed = browser.find_element("id", "typed")
    typed.send_keys("1/off")
    browser.find_element("id", "play-typed").click()
    wait_for(browser, "document.getElementById('message').classList.contains('error')")
    message = message_of(browser)
    assert "refused" in message and "is not a legal move with dice" in message and "legal moves:" in message, message
    assert browser.execute_script("return document.body.dataset.phase") == "human"
    # A click that is no step says why, without asking the server.
    browser.find_element("css selector", "#board rect.hit[data-point='1']").click()
    assert "can move now" in message_of(browser)
    # One step, then undo: the board is back where the turn began.
    before = browser.execute_script("return JSON.stringify(tapaWeb.state.plan.position(tapaWeb.state.position).points)")
    browser.find_element("css selector", "#board rect.hit.source").click()
    browser.find_element("css selector", "#board rect.hit.target").click()
    after = browser.execute_script("return JSON.stringify(tapaWeb.state.plan.position(tapaWeb.state.position).points)")
    assert after != before
    browser.find_element("id", "undo").click()
    assert browser.execute_script("return JSON.stringify(tapaWeb.state.plan.position(tapaWeb.state.position).points)") == before
    # The hint names the page's best move, first in the analysis table.
    browser.find_element("id", "hint").click()
    wait_for(browser, "document.getElementById('message').textContent.startsWith('Hint')")
    best = browser.execute_script("return tapaWeb.state.ranked[0].move")
    assert best in message_of(browser)
    assert browser.find_element("css selector", "#moves tbody tr.best td:nth-child(2)").text.startswith(best)
    # The only console errors: the browser's own line for the server's 400 answer to the refused move.
    assert console_errors(browser, allowed=[r"/v1/apply - Failed to load resource: .* 400"]) == []


def test_the_analysis_panel_ranks_moves_as_the_engines_0_ply_hint(browser, server):
    """Over the human's turns of a tapa game the bot plays for both sides: every legal move's equity in the
    page equals the engine's 0-ply ``hint`` (outside bear-offs, where the engine uses the database)."""
    open_board(browser, server, variant="tapa", seed=9)
    checked = 0
    for _ in range(12):
        phase = wait_for(browser, "['human', 'over'].includes(document.body.dataset.phase) && document.body.dataset.phase")
        if phase == "over":
            break
        state = browser.execute_script(
            "const s = tapaWeb.state; return {position: s.position, dice: s.dice,"
            " ranked: s.ranked.map(m => [m.move, m.equity, m.bearoff]), shown: Array.from("
            "document.querySelectorAll('#moves tbody tr td:nth-child(3)')).map(td => td.textContent)}")
        status, hint = server.engine.respond({"cmd": "hint", "position": state["position"], "dice": state["dice"],
                                              "plies": 0, "count": 100})
        assert status == 200 and hint["legal_moves"] == len(state["ranked"])
        engine = {move["move"]: move["equity"] for move in hint["moves"]}
        for move, equity, bearoff in state["ranked"]:
            if not bearoff:
                assert abs(engine[move] - equity) <= 1e-5, (move, engine[move], equity)
                checked += 1
        assert state["shown"][0] == f"{state['ranked'][0][1]:+.3f}"  # the table shows the page's numbers
        turn = browser.execute_script("return document.body.dataset.turns")
        browser.find_element("id", "bot-plays").click()
        wait_for(browser, f"document.body.dataset.turns !== '{turn}' || document.body.dataset.phase === 'over'")
    assert checked >= 50


def test_the_n_ply_bot_is_the_servers_best_move(browser, server):
    """The server holds the tapa model: tapa offers 1- and 2-ply, whose hint is the server's best_move."""
    open_board(browser, server, variant="tapa", seed=5, strength=1)
    assert browser.execute_script("return document.getElementById('strength').value") == "1"
    wait_for(browser, "document.body.dataset.phase === 'human'")
    browser.find_element("id", "hint").click()
    wait_for(browser, "document.getElementById('message').textContent.startsWith('Hint')")
    state = browser.execute_script("return {position: tapaWeb.state.position, dice: tapaWeb.state.dice}")
    status, best = server.engine.respond({"cmd": "best_move", **state, "plies": 1})
    assert status == 200 and f"1-ply (server): {best['move'] or 'no move (pass)'}" in message_of(browser)
    open_board(browser, server, variant="plakoto", seed=5, strength=1)  # no plakoto model on the server
    assert browser.execute_script("return document.getElementById('strength').value") == "0"
    assert browser.execute_script("return document.querySelector('#strength option[value=\"1\"]').disabled")


def test_the_in_page_model_speed_is_measured(browser, server):
    open_board(browser, server, variant="tapa", seed=1)
    result = browser.execute_script("return tapaWeb.measure()")
    assert result["positions"] >= 200 and result["perSecond"] > 0
    assert "positions/s" in browser.find_element("id", "speed").text


def test_a_finished_game_is_analysed_by_the_server_and_saved_as_a_record(browser, server, tmp_path):
    """The bot plays both sides of a tapa game to its end; *Analyse* shows the server's analysis of the page's
    record of the game, move by move, as the engine's ``analyse`` answers it; the record (*Save game*) is read by
    ``tapa-ai analyse`` into the same game."""
    from tapa_ai.analysis import read_record

    console_errors(browser)
    open_board(browser, server, variant="tapa", seed=11)
    let_the_bot_play_to_the_end(browser, 300)
    assert browser.find_element("id", "game-over").is_displayed()
    assert not browser.find_element("id", "game-analysis").is_displayed()
    browser.find_element("id", "analyse-over").click()
    wait_for(browser, "tapaWeb.state.analysis !== null")
    assert browser.find_element("id", "game-analysis").is_displayed()
    record = browser.execute_script("return tapaWeb.record()")
    game = record["games"][-1]
    assert record["format"] == "tapa-ai/games" and game["result"] is not None
    assert game["history"][0]["action"] == "opening"
    status, expected = server.engine.respond({"cmd": "analyse", "record": {**record, "games": [game]},
                                              "positions": False})
    assert status == 200
    shown = browser.execute_script("return tapaWeb.state.analysis")
    assert shown["games"] == expected["games"] and shown["players"] == expected["players"]
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('#analysis-moves tbody tr')).map("
        "r => Array.from(r.cells).map(c => c.textContent))")
    turns = expected["games"][0]["turns"]
    assert len(rows) == len(turns) == sum(event["action"] == "move" for event in game["history"])
    for row, turn in zip(rows, turns):
        assert row[3] == (turn["move"] or "(no move)") and row[6] == f"{turn['luck']:+.3f}"
        assert row[5] == ("-" if turn["forced"] else f"{turn['error_mp']:.1f}")
    players = browser.execute_script(
        "return Array.from(document.querySelectorAll('#analysis-players tbody tr')).map(r => r.cells[0].textContent)")
    assert players == ["human", "the bot (0-ply, in the page)"]
    # The saved record is what tapa-ai analyse reads: the same game, replayed.
    (tmp_path / "web.json").write_text(json.dumps(record))
    read = read_record(tmp_path / "web.json")
    assert read.source == "a game of the web board" and len(read.games[0].moves) == len(turns)
    assert read.games[0].result.winner == game["result"]["winner"]
    browser.find_element("id", "save-game").click()  # the download itself is the browser's
    assert message_of(browser).startswith("Saved tapa-game.json: 1 game")
    assert console_errors(browser) == []


# -- the running games (fevga, narde: docs/rules.md 8) ------------------------------------------------------------
def test_the_running_games_models_are_served_in_encoding_version_4_and_the_fixed_bots_listed(server):
    for variant in RUNNING:
        status, kind, body = get(server, f"/model/{variant}.json")
        assert status == 200 and kind.startswith("application/json")
        metadata = json.loads(body)["metadata"]
        assert metadata["encoding_version"] == 4 and metadata["variant"] == variant, metadata
    assert json.loads(get(server, "/health")[2])["fixed_bots"] == ["heuristic", "runner", "random"]


def checker_centres(driver, side):
    """(cx, cy) of every drawn checker of ``side``."""
    return [tuple(map(float, xy)) for xy in driver.execute_script(
        "return Array.from(document.querySelectorAll('#board .checker." + side + " circle:not(.inner):not(.pin-ring)'))"
        ".map(c => [c.getAttribute('cx'), c.getAttribute('cy')])")]


@pytest.mark.parametrize("variant", RUNNING)
def test_a_running_game_starts_in_diagonally_opposite_corners_and_a_move_is_made_by_clicks(browser, server, variant):
    """Both sides travel the same way: X's 15 on its 24 (top right), O's on X's 12 (bottom left), each side's
    tray where it bears off (O's top left), the corners named, no bar; the bot is the shipped model at 0-ply in
    the page and the panel shows its chances; a move by clicks is played, and the bot's answer is logged and
    marked in your numbering (its point p is your p + 12 or p - 12)."""
    from tapa_ai.play.moves import in_other_view

    console_errors(browser)
    # Seed 3: X wins the opening roll (5-1) and rolls 3-1, whose one legal move (one checker leaves the start,
    # docs/rules.md 8.4) the page plays for you after the pause (20 s here): the start position is on the board till then.
    browser.get(f"{server.url}/?variant={variant}&seed=3&delay=20000")
    wait_for(browser, "window.tapaWeb && document.body.dataset.turns && document.getElementById('message')"
                      ".textContent.includes('forced: 24/21 21/20')", timeout=240)
    assert browser.execute_script("return document.getElementById('board').dataset.paths") == "parallel"
    x, o = checker_centres(browser, "X"), checker_centres(browser, "O")
    assert len(x) == len(o) == 15
    # X's 24 is the rightmost top point (x 620..670, y < 260); X's 12 the leftmost bottom one (x 20..70, y > 260).
    assert all(620 < cx < 670 and cy < 260 for cx, cy in x), x
    assert all(20 < cx < 70 and cy > 260 for cx, cy in o), o
    corners = browser.execute_script("return Object.fromEntries(Array.from(document.querySelectorAll("
                                     "'#board [data-corner]')).map(e => [e.dataset.corner, e.textContent]))")
    assert corners == {"home-O": "O's home ↑", "start-O": "O's start ↓", "start-X": "your start ↑",
                       "home-X": "your home ↓"}
    trays = browser.execute_script("return Object.fromEntries(Array.from(document.querySelectorAll('#board "
                                   "[data-tray]')).map(e => [e.dataset.tray, [Number(e.getAttribute('x')), "
                                   "Number(e.getAttribute('y')), e.textContent]]))")
    assert trays["O"][0] < 20 and trays["O"][1] < 260 and trays["O"][2] == "O off 0"  # left of the board, top
    assert trays["X"][0] > 690 and trays["X"][1] > 260 and trays["X"][2] == "X off 0"  # right, bottom
    assert not browser.find_elements("css selector", "#board [data-point='bar']")
    assert browser.execute_script("return document.getElementById('strength').value") == "0"
    assert not browser.find_element("css selector", "#strength option[value='0']").get_attribute("disabled")
    assert browser.execute_script("return tapaWeb.state.model.encodingVersion") == 4
    assert browser.find_element("id", "chances").is_displayed()
    # A move by clicks on X's first turn with a choice (the forced ones played by the page), then the bot's answer
    # in your numbering.
    open_board(browser, server, variant=variant, seed=3)
    wait_for(browser, "document.body.dataset.phase === 'human'")
    made = len(browser.execute_script("return tapaWeb.record().games[0].history.filter(e => e.action === 'move')"))
    human_turn_by_clicks(browser, random.Random(3))
    wait_for(browser, "['human', 'over'].includes(document.body.dataset.phase)")
    history = browser.execute_script("return tapaWeb.record().games[0].history")
    mine, theirs = [event for event in history if event["action"] == "move"][made:made + 2]
    assert mine["side"] == "X" and mine["move"] and theirs["side"] == "O"
    log = browser.execute_script("return tapaWeb.state.log")
    assert f"X {'-'.join(map(str, mine['dice']))}: {mine['move']}" in log
    if theirs["move"]:
        yours = in_other_view(theirs["move"], parallel=True)
        assert f"O {'-'.join(map(str, theirs['dice']))}: {theirs['move']} (on your board: {yours})" in log, log
    # The bot's last move before your turn now (after a forced move of yours the page played, a later one).
    latest = [event for event in history if event["action"] == "move"][-1]
    if latest["side"] == "O" and latest["move"]:
        yours = in_other_view(latest["move"], parallel=True)
        assert message_of(browser).startswith(f"The bot played {yours} (your numbering"), message_of(browser)
        marked = browser.execute_script("return ['from', 'to'].map(k => Array.from(document.querySelectorAll("
                                        "'#board .moved-' + k)).map(e => e.dataset.point).sort())")
        net = {}
        for step in yours.split():
            start, end = step.split("/")
            net[start], net[end] = net.get(start, 0) - 1, net.get(end, 0) + 1
        assert marked == [sorted(p for p, n in net.items() if n < 0), sorted(p for p, n in net.items() if n > 0)]
    assert browser.execute_script("return tapaWeb.record().games[0].players.O") == "the bot (0-ply, in the page)"
    assert console_errors(browser) == []


def test_an_illegal_move_in_fevga_names_the_restriction_it_breaks(browser, server):
    """Fevga's start rule (docs/rules.md 8.4 a): until X's first checker has passed the opponent's starting point a
    second may not leave the 24-point; with X's runner on its 16 and 6-5 to play, the server refuses the typed move
    24/18 24/19 and the page shows the rule; the click planner offers the 24-point only once the runner has passed;
    a legal typed move is played. (X's first rolls from the start have one legal move, which the page plays for you:
    the position is set by the test hook tapaWeb.turnAt.)"""
    console_errors(browser)
    open_board(browser, server, variant="fevga", seed=3)
    points = [""] * 24
    points[23], points[15] = "X" * 14, "X"  # X: 14 on its 24, its runner on its 16
    points[11], points[3] = "O" * 14, "O"  # O: 14 on X's 12 (its 24), its runner on X's 4 (its 16)
    position = {"variant": "fevga", "points": points, "off": {"X": 0, "O": 0}, "turn": "X"}
    assert browser.execute_script("return tapaWeb.turnAt(arguments[0], [6, 5])", position)
    wait_for(browser, "document.body.dataset.phase === 'human'")
    source_script = "return Array.from(document.querySelectorAll('#board rect.hit.source')).map(e => e.dataset.point)"
    assert browser.execute_script(source_script) == ["16"]  # the 24-point is no source yet
    typed = browser.find_element("id", "typed")
    typed.send_keys("24/18 24/19")
    browser.find_element("id", "play-typed").click()
    wait_for(browser, "document.getElementById('message').classList.contains('error')")
    message = message_of(browser)
    assert message.startswith('Move "24/18 24/19" refused: ') and \
        "a second checker may not leave the 24-point until the first has passed the opponent's starting point" \
        in message, message
    # Once the runner has passed (16/10), a checker may leave the 24-point.
    browser.find_element("css selector", "#board rect.hit[data-point='16']").click()
    browser.find_element("css selector", "#board rect.hit[data-point='10']").click()
    assert sorted(browser.execute_script(source_script)) == ["10", "24"]
    browser.find_element("id", "undo").click()
    typed.clear()
    typed.send_keys("16/11 24/18")
    turn = browser.execute_script("return document.body.dataset.turns")
    browser.find_element("id", "play-typed").click()
    wait_for(browser, f"document.body.dataset.turns !== '{turn}'")
    assert "X 6-5: 16/11 24/18" in browser.execute_script("return tapaWeb.state.log")
    assert console_errors(browser, allowed=[r"/v1/apply - Failed to load resource: .* 400"]) == []


def test_the_pages_step_planner_plays_the_running_games_as_the_reference(browser, server):
    """The click planner (steps.js) offers exactly the first steps of the reference's legal sequences, the
    restrictions of docs/rules.md 8.4 included, over positions of random fevga and narde games, both sides."""
    from tapa_ai.notation import format_move, position_to_json
    from tapa_ai.play.moves import LegalSequences
    from tapa_ai.rules import legal_moves, start_position
    from tapa_ai.rules.reference import next_turn

    rng = np.random.default_rng(8)
    cases = []
    for variant in RUNNING:
        for game in range(2):
            position = start_position(variant, "XO"[game])
            while position.result is None:
                dice = tuple(int(d) for d in rng.integers(1, 7, 2))
                moves = legal_moves(position, dice)
                firsts = sorted({(s[0].from_point, s[0].to_point) for s, _ in LegalSequences(position, dice, moves)
                                 .sequences if s})
                if len(cases) % 3 == 0:
                    cases.append({"position": position_to_json(position), "dice": list(dice), "firsts": firsts,
                                  "legal": [{"move": format_move(m), "position": position_to_json(m.position)}
                                            for m in moves]})
                else:
                    cases.append(None)
                after = moves[int(rng.integers(len(moves)))].position
                position = next_turn(after) if after.result is None else after
    cases = [case for case in cases if case]
    open_board(browser, server, variant="fevga", seed=1)
    answers = browser.execute_script(
        "return arguments[0].map(c => new TapaSteps.Planner(c.position, c.dice, c.legal).options()"
        ".map(o => [o.from, o.to]).sort((a, b) => b[0] - a[0] || b[1] - a[1]))", cases)
    assert len(cases) > 100
    for case, answer in zip(cases, answers):
        assert sorted(map(tuple, answer)) == [tuple(f) for f in case["firsts"]], (case["position"], case["dice"])
