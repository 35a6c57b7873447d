"""The levels of play on the web board (docs/web.md "Levels", docs/levels.md): the page offers a Level for the bot
where the served model carries its variant's calibrated levels (``metadata.levels``), plays a 0-ply level in the page
with levels.js and a per-game noise seed, exactly as the Python bot ``net:<variant>,level=NAME,noise_seed=SEED,
nobearoff`` (bear-offs valued by the network, as the page does), in money play and at a Tavli score, and asks the
server's ``best_move`` with ``"level"`` for world-class. Headless Chromium as in tests/test_web.py (skipped with the
install line where it is missing)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.servers import serving
from tests.test_web import browser, console_errors, get, message_of, open_board, wait_for  # noqa: F401

SHIPPED_LEVELS = Path(__file__).resolve().parent.parent / "tapa_ai" / "models" / "levels.json"
LEVELLED = ("tapa", "plakoto", "backgammon", "fevga", "narde", "gulbara")
"""The variants calibrated in tapa_ai/models/levels.json."""
NOISY = ("beginner", "casual", "intermediate", "advanced", "expert")
"""The 0-ply levels, played in the page."""


@pytest.fixture(scope="module")
def server():
    """The board's server with the shipped tapa model: tapa's world-class level is the server's 2-ply search."""
    with serving(bot="net:checkpoints/tapa.pt") as server:
        yield server


def served_levels(server, variant):
    status, _, body = get(server, f"/model/{variant}.json")
    assert status == 200, body[:200]
    return json.loads(body)["metadata"].get("levels")


def level_state(driver):
    return driver.execute_script(
        "const s = document.getElementById('level');"
        "return {disabled: s.disabled, value: s.value, note: document.getElementById('level-note').textContent,"
        " seed: document.getElementById('level-note').dataset.seed,"
        " options: Array.from(s.options).map(o => [o.value, o.disabled, o.title]),"
        " strength: document.getElementById('strength').disabled}")


def test_the_level_choice_is_offered_where_the_model_has_levels(browser, server):
    """The calibrated variants offer the six levels (world-class only where the server has the model, else
    disabled saying how to get it); a model the levels were not calibrated for has none: the list is disabled
    with the reason. ?level=NAME
    chooses one, which then sets the bot (the Bot list is disabled) and shows the game's noise seed."""
    from tapa_ai.bots.levels import LEVEL_NAMES

    console_errors(browser)
    for variant in LEVELLED:
        levels = served_levels(server, variant)
        assert levels is not None, f"the served {variant} model carries no levels (metadata.levels)"
        shipped = json.loads(SHIPPED_LEVELS.read_text())["variants"][variant]["levels"]  # read here, not by find_level
        for name in LEVEL_NAMES:
            assert levels[name] == {"plies": shipped[name]["plies"], "noise": shipped[name]["noise"]}
        open_board(browser, server, variant=variant, seed=3)
        state = level_state(browser)
        assert not state["disabled"] and state["value"] == "" and state["note"] == "", state
        assert [o[0] for o in state["options"]] == ["", *LEVEL_NAMES]
        world_class = state["options"][-1]
        if variant == "tapa":  # the server's model
            assert not world_class[1]
        else:
            assert world_class[1] and f"--bot net:checkpoints/{variant}.pt" in world_class[2], world_class
    # A server whose tapa model is another network (generation 1): the levels were calibrated for the shipped
    # one, so its model carries none and the list is disabled with the reason.
    with serving(bot="net:tapa-g1") as other:
        assert served_levels(other, "tapa") is None
        open_board(browser, other, variant="tapa", seed=3, level="casual")
        state = level_state(browser)
        assert state["disabled"], state
        assert state["note"] == "No levels: tapa's model has no calibrated levels (docs/levels.md).", state
        assert not state["strength"]  # no level plays: the Bot list chooses
    # ?level= and ?noise_seed=: the level plays, the Bot list is disabled, the note shows the game's noise seed (study mode).
    open_board(browser, server, variant="plakoto", seed=3, level="casual", noise_seed=41, mode="study")
    state = level_state(browser)
    assert state["value"] == "casual" and state["strength"] and state["seed"] == "41", state
    assert "casual: 0-ply in the page, noise " in state["note"] and "noise seed 41 (game 1)" in state["note"], state
    assert "casual level, 0-ply, in the page, noise seed 41" in json.dumps(
        browser.execute_script("return tapaWeb.record().games[0].players"))
    # World-class without the server's plakoto model: expert plays, and the note says why.
    open_board(browser, server, variant="plakoto", seed=3, level="world-class")
    state = level_state(browser)
    assert state["note"].startswith("world-class searches 2 plies on the server, which has no plakoto model") and \
        state["note"].endswith("; expert plays."), state
    assert console_errors(browser) == []


def benchmark_cases(count=8):
    """(variant, position json, dice, level, seed) from the shipped benchmark sets, the 0-ply levels in turn; a
    set with cascade stages gives one of them."""
    from tapa_ai.arena.benchmark.file import read_set, resolve_set

    cases = []
    for v, variant in enumerate(LEVELLED):
        records = read_set(resolve_set(variant)[0]).records
        step = max(1, len(records) // count)
        chosen = records[::step][:count]
        stages = [record for record in records if record["position"].get("cascade")]
        if stages and not any(record["position"].get("cascade") for record in chosen):
            chosen[-1] = stages[0]  # a Gul Bara cascade's stage: a decision of the same side without a roll
        for i, record in enumerate(chosen):
            cases.append((variant, record["position"], list(record["dice"]), NOISY[(i + v) % len(NOISY)],
                          1000 + 37 * i + v))
    return cases


def python_choice(spec, rules, position_json, dice, score=None):
    """(afterstates, the Python bot's row, the bot)."""
    from tapa_ai.bots.base import one_position_afterstates
    from tapa_ai.bots.spec import make_bot
    from tapa_ai.notation.json_position import position_from_json

    bot = make_bot(spec, rules)
    afterstates = one_position_afterstates(position_from_json(position_json), tuple(dice))
    rng = np.random.default_rng(0)
    row = bot.choose(afterstates, rng) if score is None else bot.choose_at_score(afterstates, rng, score)
    return afterstates, int(row[0]), bot


def near_tie(afterstates, bot, row, chosen, score=None):
    """Whether the page's ``chosen`` move and the Python bot's ``row`` have the same value, noise included, to
    float32 rounding (the page's network runs in float64 on float32 weights)."""
    from tapa_ai.notation.json_position import position_from_json

    class_values = None if score is None else score.class_values(bot.evaluator.points)
    rows, _, values = bot.ranked(afterstates, class_values=class_values)
    values = values + bot.move_noise(afterstates, rows, np.random.default_rng(0), class_values)
    target = position_from_json(chosen)
    page_row = [r for r in range(len(afterstates)) if afterstates.position(r) == target]
    assert page_row, "the page's move is not a legal move"
    return abs(values[page_row[0]] - values[row]) < 1e-5


def page_level_moves(driver, cases):
    answers = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "(async () => { const out = []; for (const c of arguments[0]) {"
        " out.push(await tapaWeb.levelMove(c.position, c.dice, c.level, c.seed, c.context || null)); }"
        " return out; })().then(done, e => done({error: String(e)}));", cases)
    assert not isinstance(answers, dict), answers
    return answers


def test_a_0_ply_level_plays_the_python_bots_moves_with_the_same_noise_seed(browser, server):
    """On positions of the shipped benchmark sets of the calibrated variants, each 0-ply level with a noise seed
    plays in the page (the function the bot plays with) the move of the Python bot
    ``net:<variant>,level=NAME,noise_seed=SEED,nobearoff``."""
    from tapa_ai.notation.json_position import position_from_json
    from tapa_ai.rules import variant_rules

    open_board(browser, server, variant="tapa", seed=1)
    cases = benchmark_cases()
    answers = page_level_moves(browser, [{"position": p, "dice": d, "level": n, "seed": s}
                                         for _, p, d, n, s in cases])
    ties = same = 0
    for (variant, position, dice, name, seed), answer in zip(cases, answers, strict=True):
        afterstates, row, bot = python_choice(f"net:{variant},level={name},noise_seed={seed},nobearoff",
                                              variant_rules(variant), position, dice)
        if position_from_json(answer["position"]) == afterstates.position(row):
            same += 1
        else:
            assert near_tie(afterstates, bot, row, answer["position"]), (variant, name, seed, answer["move"])
            ties += 1
    assert ties <= 1 and same == len(cases) - ties
    # The noise matters: on some positions a noisy level's move is not the expert's.
    experts = page_level_moves(browser, [{"position": p, "dice": d, "level": "expert", "seed": s}
                                         for _, p, d, n, s in cases])
    assert sum(a["position"] != e["position"] for a, e in zip(answers, experts)) >= 3


def test_a_0_ply_level_at_a_tavli_score_plays_the_python_bots_choose_at_score(browser, server):
    """In a Tavli match the page's level values the moves by the match-winning chance at the score, with the noise
    in the match-winning chance of a point there, as the Python bot's choose_at_score (Portes with the backgammon
    model's levels, Plakoto with plakoto's)."""
    from tapa_ai.cube.rotation_met import RotationScore, rotation_met
    from tapa_ai.movegen.random_positions import mixed_positions
    from tapa_ai.notation import position_from_json
    from tapa_ai.rules import variant_rules

    open_board(browser, server, variant="tavli", length=5, seed=2, level="casual")
    cases = []
    for variant, model, game in (("portes", "backgammon", 1), ("plakoto", "plakoto", 2)):
        rng = np.random.default_rng(11)
        for i, data in enumerate(mixed_positions(variant, 60, rng).to_json()):
            if data.get("result") or len(cases) >= (6 if variant == "portes" else 12):
                continue
            dice = [int(d) for d in rng.integers(1, 7, 2)]
            score = [(4, 2), (0, 3), (2, 2)][i % 3]
            cases.append({"variant": variant, "model": model, "position": data, "dice": dice,
                          "level": ("beginner", "casual")[i % 2], "seed": 500 + i,
                          "context": {"length": 5, "score": {"X": score[0], "O": score[1]}, "game": game}})
    answers = page_level_moves(browser, cases)
    ties = 0
    for case, answer in zip(cases, answers, strict=True):
        mover = 0 if case["position"]["turn"] == "X" else 1
        score = case["context"]["score"]
        away = 5 - (score["X"], score["O"])[mover]
        opponent_away = 5 - (score["X"], score["O"])[1 - mover]
        tavli = RotationScore(rotation_met("tavli"), [away], [opponent_away], case["context"]["game"] - 1)
        afterstates, row, bot = python_choice(
            f"net:{case['model']},level={case['level']},noise_seed={case['seed']},nobearoff",
            variant_rules(case["variant"]), case["position"], case["dice"], tavli)
        assert answer["mwc"] is not None
        if position_from_json(answer["position"]) != afterstates.position(row):
            assert near_tie(afterstates, bot, row, answer["position"], tavli), (case, answer["move"])
            ties += 1
    assert ties <= 1


def drive(driver, moves):
    """Let the bot play both sides (Let the bot play on your turns) until ``moves`` moves are made or the game is
    over; the game's record."""
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1], limit = arguments[0];"
        "const sleep = (ms) => new Promise(r => setTimeout(r, ms));"
        "const $ = (id) => document.getElementById(id);"
        "const made = () => tapaWeb.record().games[0].history.filter(e => e.action === 'move').length;"
        "(async () => { while (made() < limit) {"
        "  const phase = document.body.dataset.phase;"
        "  if (phase === 'error') return {error: $('message').textContent};"
        "  if (phase === 'over') break;"
        "  if (phase === 'human' && !$('bot-plays').disabled) { const turn = document.body.dataset.turns;"
        "   $('bot-plays').click();"
        "   while (document.body.dataset.turns === turn && !['over', 'error'].includes(document.body.dataset.phase))"
        "    await sleep(2);"
        "   continue; }"
        "  await sleep(5); }"
        " return tapaWeb.record().games[0]; })().then(done, e => done({error: String(e)}));", moves)


@pytest.mark.parametrize(("variant", "level", "noise_seed", "moves"),
                         [("plakoto", "intermediate", 2024, 24), ("gulbara", "casual", 77, 60)])
def test_a_game_at_a_level_replays_as_the_python_bot_with_the_games_noise_seed(browser, server, variant, level,
                                                                              noise_seed, moves):
    """A game at a level with ?noise_seed=N, the bot playing both sides: every move of the record is the Python
    level bot's with noise seed N, and the log says the level and the seed. In Gul Bara each stage of a cascade
    is a move of its own, played by the same side with no roll (the engine's ``next``)."""
    from tapa_ai.notation.json_position import position_from_json
    from tapa_ai.rules import variant_rules

    console_errors(browser)
    open_board(browser, server, variant=variant, seed=9, level=level, noise_seed=noise_seed, mode="study")
    record = drive(browser, moves)
    assert "error" not in record, record
    log = browser.execute_script("return tapaWeb.state.log")
    assert any(f"{level} level: 0-ply in the page, noise " in line and f"noise seed {noise_seed}" in line
               for line in log), log
    assert f"{level} level, 0-ply, in the page, noise seed {noise_seed}" in record["players"]["O"]
    rules = variant_rules(variant)
    opener = next(e for e in record["history"] if e["action"] == "opening")
    status, start = server.engine.respond({"cmd": "start", "variant": variant,
                                           "turn": "X" if opener["dice"][0] > opener["dice"][1] else "O"})
    assert status == 200
    position, checked, ties, stages = start["position"], 0, 0, 0
    for event in (e for e in record["history"] if e["action"] == "move"):
        assert event["side"] == position["turn"]
        stages += bool(position.get("cascade"))
        status, applied = server.engine.respond({"cmd": "apply", "position": position, "dice": event["dice"],
                                                 "move": event["move"]})
        assert status == 200, applied
        afterstates, row, bot = python_choice(f"net:{variant},level={level},noise_seed={noise_seed},nobearoff",
                                              rules, position, event["dice"])
        if position_from_json(applied["position"]) != afterstates.position(row):
            assert near_tie(afterstates, bot, row, applied["position"]), event
            ties += 1
        checked += 1
        if applied["position"].get("result"):
            break
        after = {key: value for key, value in applied["position"].items() if key != "next"}
        position = {**after, "turn": applied["position"].get("next", "O" if event["side"] == "X" else "X")}
    assert checked >= 20 and ties <= 1
    if variant == "gulbara":
        assert stages, "no cascade stage in the game: choose another seed"
    assert console_errors(browser) == []


def test_world_class_asks_the_servers_best_move_with_the_level(browser, server, monkeypatch):
    """Tapa at world-class, the server holding the tapa model: the bot's moves are the server's best_move answers
    to requests that name the level (and the game's noise seed), played as the server chose them."""
    requests = []
    respond = server.engine.respond

    def spy(request):
        status, answer = respond(request)
        if request.get("cmd") == "best_move":
            requests.append((request, answer))
        return status, answer

    monkeypatch.setattr(server.engine, "respond", spy)
    open_board(browser, server, variant="tapa", seed=6, level="world-class", noise_seed=5)
    state = level_state(browser)
    assert state["value"] == "world-class" and state["note"] == "world-class: 2 plies on the server.", state
    record = drive(browser, 2)
    assert "error" not in record, record
    moves = [e for e in record["history"] if e["action"] == "move"]
    assert len(moves) >= 2 and len(requests) >= 2
    for event, (request, answer) in zip(moves, requests):
        assert request["level"] == "world-class" and request["noise_seed"] == 5 and "plies" not in request
        assert answer["level"]["name"] == "world-class" and answer["level"]["plies"] == 2 and answer["plies"] == 2
        assert event["move"] == answer["move"] and event["dice"] == request["dice"]
    assert "world-class level, 2-ply, server" in record["players"]["O"]
    # The hint at a level is its depth without noise: the server's 2-ply best_move, no level asked.
    wait_for(browser, "document.body.dataset.phase === 'human' || document.body.dataset.phase === 'over'")
    if browser.execute_script("return document.body.dataset.phase") == "human":
        count = len(requests)
        browser.find_element("id", "hint").click()
        wait_for(browser, "document.getElementById('message').textContent.startsWith('Hint')")
        request, answer = requests[count]
        assert request["plies"] == 2 and "level" not in request
        assert f"2-ply (server): {answer['move'] or 'no move (pass)'}" in message_of(browser)
