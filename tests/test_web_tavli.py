"""The Tavli match on the web board (docs/web.md, docs/rules.md 9): games rotating Portes, Plakoto, Fevga to N points,
no cube, the first game opened by an opening roll and the winner opening the next; the in-page bot plays by the
score, valuing each outcome class by the Tavli rotation's match equity table the server serves (GET
/model/tavli-met.json),
and chooses as the Python bot's ``choose_at_score`` does. Headless Chromium as in tests/test_web.py (skipped with
the install line where it is missing)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.servers import serving
from tests.test_web import browser, console_errors, get, message_of, open_board, wait_for  # noqa: F401

ROTATION = ("portes", "plakoto", "fevga")
MODELS = {"portes": "backgammon", "plakoto": "plakoto", "fevga": "fevga"}


@pytest.fixture(scope="module")
def server():
    """The board's server with the shipped backgammon model: Portes' n-ply bot is the server's."""
    with serving(bot="net:checkpoints/backgammon.pt") as server:
        yield server


def test_the_tavli_table_is_served_next_to_the_models(server):
    from tapa_ai.cube.rotation_met import rotation_met

    status, kind, body = get(server, "/model/tavli-met.json")
    assert status == 200 and kind.startswith("application/json")
    served = json.loads(body)
    assert served["format"] == "tapa-ai-rotation-met" and served["rotation"] == "tavli"
    assert served["games"] == list(ROTATION)
    table = rotation_met("tavli")
    assert served["max_away"] == table.max_away
    assert np.array_equal(np.asarray(served["table"]), table.table)  # every double, exactly
    # Not only the table round-tripped: its values, by the match flow played out with the measured rates
    # (tests/test_rotation_met.py's oracle) and by hand (1-away each with an opening roll: a coin toss; index 0 of
    # the side's away: the match won, of the opponent's: lost).
    from tapa_ai.cube.met import VARIANT_RATES
    from tests.test_rotation_met import flow_equities

    cells = np.asarray(served["table"])  # [opener: side opens, receives, opening roll][game][away][opponent away]
    assert np.allclose(cells[2, :, 1, 1], 0.5)
    assert (cells[:, :, 0, 1:] == 1.0).all() and (cells[:, :, 1:, 0] == 0.0).all()
    openers = {"X": 0, "O": 1, None: 2}
    for (x, o, number, opener), chance in flow_equities({v: VARIANT_RATES[v] for v in ROTATION}, 3).items():
        assert cells[openers[opener], number - 1, 3 - x, 3 - o] == pytest.approx(chance, abs=1e-9)


def page_class_values(driver, variant, side, context):
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "tapaWeb.classValues(arguments[0], arguments[1], arguments[2]).then(done, e => done({error: String(e)}));",
        variant, side, context)


def score_cases():
    """Positions of each game of the rotation at Tavli scores, from the Python bot: (variant, game, position json,
    dice, context, the bot's move's resulting position at the score, its money-play one, the bot's values)."""
    from tapa_ai.bearoff.evaluate import bearoff_mask
    from tapa_ai.bots.base import one_position_afterstates
    from tapa_ai.bots.spec import make_bot
    from tapa_ai.cube.rotation_met import RotationScore, rotation_met
    from tapa_ai.movegen.random_positions import mixed_positions
    from tapa_ai.notation import position_from_json, position_to_json
    from tapa_ai.rules import variant_rules

    scores = [(5, (4, 0)), (5, (0, 4)), (5, (4, 3)), (7, (0, 5)), (3, (1, 2)), (5, (2, 2))]
    cases = []
    for index, variant in enumerate(ROTATION):
        bot = make_bot("net:" + MODELS[variant], variant_rules(variant))
        bot.bearoff = False  # the page values bear-offs with the network too
        rng = np.random.default_rng(5)
        changed = same = 0
        for i, data in enumerate(mixed_positions(variant, 160, rng).to_json()):
            position = position_from_json(data)
            dice = tuple(int(d) for d in rng.integers(1, 7, 2))
            if position.result is not None:
                continue
            length, score = scores[i % len(scores)]
            mover = 0 if position.turn == "X" else 1
            away, opponent_away = length - score[mover], length - score[1 - mover]
            afterstates = one_position_afterstates(position, dice)
            if len(afterstates) < 2:
                continue
            game = index + 1 + 3 * (i % 2)  # game 1 or 4 is Portes, 2 or 5 Plakoto, 3 or 6 Fevga
            rng_bot = np.random.default_rng(0)
            at_score = int(bot.choose_at_score(afterstates, rng_bot, RotationScore(rotation_met("tavli"), [away],
                                                                                     [opponent_away], game - 1))[0])
            money = int(bot.choose(afterstates, rng_bot)[0])
            differs = at_score != money
            if (changed if differs else same) >= 3:
                continue
            changed += differs
            same += not differs
            values = rotation_met("tavli").class_values(bot.evaluator.points, [away], [opponent_away], game - 1)[0]
            cases.append({"variant": variant, "position": data, "dice": list(dice), "differs": bool(differs),
                          "bearoff": bool(bearoff_mask(afterstates.positions).any()),
                          "context": {"length": length, "score": {"X": score[0], "O": score[1]}, "game": game},
                          "at_score": position_to_json(afterstates.position(at_score)),
                          "money": position_to_json(afterstates.position(money)),
                          "values": values.tolist(), "points": bot.evaluator.points.tolist()})
            if changed >= 3 and same >= 3:
                break
    return cases


def board(position):
    return position["points"], position.get("bar"), position["off"]


def test_the_pages_choice_at_a_tavli_score_is_the_python_bots_choose_at_score(browser, server):
    """Over positions of Portes, Plakoto and Fevga at Tavli scores, some where the score changes the Python bot's
    move from its money-play move: the page values each outcome class as the table does (its class values are the
    Python table's) and plays the same move as ``Bot.choose_at_score`` (the engine's ``best_move`` with ``tavli``,
    the Tavli rotation's short form of ``rotation_match``, too); without the score, the page plays the money move."""
    open_board(browser, server, variant="tavli", length=5, seed=1)
    cases = score_cases()
    assert {case["variant"] for case in cases} == set(ROTATION)
    assert {case["variant"] for case in cases if case["differs"]} == set(ROTATION), "the score never changed a move"
    for case in cases:
        mover = case["position"]["turn"]
        values = page_class_values(browser, case["variant"], mover, case["context"])
        assert values == case["values"], case["context"]  # the same doubles
    answers = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "(async () => { const out = []; for (const c of arguments[0]) {"
        " const atScore = await tapaWeb.rankAtScore(c.position, c.dice, c.context);"
        " const money = await tapaWeb.rankAtScore(c.position, c.dice, null);"
        " out.push([atScore, money[0].position]); } return out; })().then(done, e => done({error: String(e)}));",
        cases)
    assert not isinstance(answers, dict), answers
    changed = engine = same = 0
    for case, (ranked, money) in zip(cases, answers, strict=True):
        best = ranked[0]
        assert [m["mwc"] for m in ranked] == sorted((m["mwc"] for m in ranked), reverse=True)
        assert best["mwc"] == pytest.approx(float(np.dot(best["probabilities"], case["values"])), abs=1e-12)
        same += board(best["position"]) == board(case["at_score"]) and board(money) == board(case["money"])
        if board(best["position"]) != board(case["at_score"]):  # only a tie within the page's precision
            python_value = next(m["mwc"] for m in ranked if board(m["position"]) == board(case["at_score"]))
            assert best["mwc"] - python_value < 1e-5, (case["context"], best["move"])
        if board(money) != board(case["money"]):
            money_values = {json.dumps(board(m["position"]), sort_keys=True): m["equity"] for m in ranked}
            page_money, python_money = (json.dumps(board(p), sort_keys=True) for p in (money, case["money"]))
            assert page_money in money_values and python_money in money_values, (page_money, python_money,
                                                                                  list(money_values))
            assert abs(money_values[page_money] - money_values[python_money]) < 1e-5
        changed += case["differs"] and board(best["position"]) != board(money)
        # The engine protocol's best_move at the score agrees (it is the Python bot's ranking at 0 plies; the
        # engine values bear-offs by the database).
        if case["variant"] == "portes" and not case["bearoff"]:
            status, answer = server.engine.respond({"cmd": "best_move", "position": case["position"],
                                                    "dice": case["dice"], "plies": 0, "tavli": case["context"]})
            assert status == 200
            assert answer["match_winning_chance"] == pytest.approx(best["mwc"], abs=1e-5)
            engine += 1
    assert changed >= 6, "the page's move at the score seldom differed from its money move"
    assert engine >= 2
    assert same >= len(cases) - 2, f"near-ties broken otherwise on {len(cases) - same} of {len(cases)} positions"


def drive_match(driver, limit=12):
    """Let the bot play both sides of a Tavli match in the page (Let the bot play on your turns); at each game's
    end note what the page shows, then press Next game; until the match is over. The games' notes."""
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1], limit = arguments[0];"
        "const sleep = (ms) => new Promise(r => setTimeout(r, ms));"
        "const $ = (id) => document.getElementById(id);"
        "(async () => { const games = [];"
        " while (games.length < limit) {"
        "  const phase = document.body.dataset.phase;"
        "  if (phase === 'error') return {error: $('message').textContent};"
        "  if (phase === 'human' && !$('bot-plays').disabled) { const turn = document.body.dataset.turns;"
        "   $('bot-plays').click();"
        "   while (document.body.dataset.turns === turn && !['over', 'error'].includes(document.body.dataset.phase))"
        "    await sleep(2);"
        "   continue; }"
        "  if (phase !== 'over') { await sleep(5); continue; }"
        "  const s = tapaWeb.state, record = s.games[s.games.length - 1];"
        "  games.push({variant: s.variant, board: document.body.dataset.variant, paths: $('board').dataset.paths || '',"
        "   info: $('rotation-info').textContent, score: $('score').textContent, title: $('game-over-title').textContent,"
        "   text: $('game-over-text').textContent, next: $('next-game').textContent, log: s.log.slice(),"
        "   record: JSON.parse(JSON.stringify(record)), match: JSON.parse(JSON.stringify(s.match)),"
        "   header: $('moves-value').textContent, label: $('chances-label').textContent});"
        "  if (s.match.over) return games;"
        "  const game = s.game; $('next-game').click();"
        "  while (tapaWeb.state.game === game ||"
        "   !['human', 'bot', 'over', 'error'].includes(document.body.dataset.phase))"
        "   await sleep(5);"
        " } return games; })().then(done, e => done({error: String(e)}));", limit)


def test_a_tavli_match_rotates_the_games_scores_them_and_ends_with_the_winner(browser, server, tmp_path):
    """A match to 3 played through by the bot for both sides: game n is the rotation's (drawn as its variant: the
    Fevga board runs both sides the same way), the first opens with an opening roll and the winner of each opens
    the next (a draw: an opening roll), each game's points are added, no cube, the match ends when a side reaches
    3 and says who won; the page's record is the match: each game with its variant, readable by tapa-ai analyse."""
    from tapa_ai.analysis import read_record

    console_errors(browser)
    open_board(browser, server, variant="tavli", length=3, seed=4)
    assert browser.execute_script("return document.getElementById('variant').value") == "tavli"
    assert browser.execute_script("return document.getElementById('match-length').value") == "3"
    info = browser.find_element("id", "rotation-info")
    assert info.is_displayed()
    opened = r"^Game 1 of the Tavli match: Portes\. [XO] opens: won the opening roll \d-\d\. "
    assert re.match(opened, info.text), info.text
    assert "Next: game 2, Plakoto, opened by the winner of this game." in info.text
    assert browser.find_element("id", "score").text == "Tavli match to 3: X 0 – O 0"  # no cube
    wait_for(browser, "['human', 'bot'].includes(document.body.dataset.phase)")
    # The panel: match-winning chances at the score, the moves ranked by them (on the human's turns).
    if browser.execute_script("return document.body.dataset.phase") == "human":
        assert browser.find_element("id", "moves-value").text == "match win"
        assert "match-winning chance" in browser.find_element("id", "chances-label").text
        ranked = browser.execute_script("return tapaWeb.state.ranked.map(m => m.mwc)")
        assert ranked == sorted(ranked, reverse=True) and all(0 <= v <= 1 for v in ranked)
    games = drive_match(browser)
    assert not isinstance(games, dict), games
    score = {"X": 0, "O": 0}
    for number, game in enumerate(games, start=1):
        variant = ROTATION[(number - 1) % 3]
        assert game["variant"] == game["board"] == game["record"]["variant"] == variant
        assert (game["paths"] == "parallel") == (variant == "fevga")
        assert game["info"].startswith(f"Game {number} of the Tavli match: {variant.capitalize()}. ")
        assert f"Game {number} of the Tavli match: {variant.capitalize()}." in game["log"]
        history = game["record"]["history"]
        previous = games[number - 2]["record"]["result"] if number > 1 else None
        if previous is None or previous["kind"] == "draw":  # the first game, or after a draw: an opening roll
            assert history[0]["action"] == "opening"
        else:  # the winner of the last game opens, rolling both dice
            assert history[0]["action"] == "move" and history[0]["side"] == previous["winner"]
            assert f"{previous['winner']} won the last game and opens this one." in game["log"]
        assert game["record"]["score"] == score  # the score before the game
        result = game["record"]["result"]
        if result["kind"] != "draw":
            score[result["winner"]] += result["points"]
        assert game["match"]["score"] == score
        assert "cube" not in game["score"] and game["score"] == f"Tavli match to 3: X {score['X']} – O {score['O']}"
        if not game["match"]["over"]:
            following = ROTATION[number % 3].capitalize()
            assert game["next"] == f"Next game: {following}"
            opener = "an opening roll" if result["kind"] == "draw" else \
                ("X (you)" if result["winner"] == "X" else "O (the bot)")
            assert f"Next: game {number + 1}, {following}, opened by {opener}" in game["text"]
    assert len(games) >= 2
    last = games[-1]
    assert last["match"]["over"] and max(score.values()) >= 3 > min(score.values())
    winner = "X" if score["X"] >= 3 else "O"
    assert last["match"]["winner"] == winner
    assert ("You win the Tavli match!" if winner == "X" else "The bot wins the Tavli match.") in last["text"]
    assert "The match is over: " + ("you win" if winner == "X" else "the bot wins") in last["info"]
    assert last["next"] == "New Tavli match"
    # The saved match: its length, score, winner and games with their variants; each game a tapa-ai/games record.
    record = browser.execute_script("return tapaWeb.rotationRecord()")
    assert record["format"] == "tapa-ai/rotation-match" and record["version"] == 1
    assert record["length"] == 3 and record["score"] == score
    assert record["winner"] == winner and record["rotation"] == "tavli"  # Rotation.to_data: the preset's name
    assert [game["variant"] for game in record["games"]] == [ROTATION[i % 3] for i in range(len(games))]
    for game in record["games"]:
        path = tmp_path / f"game{game['number']}.json"
        path.write_text(json.dumps({"format": "tapa-ai/games", "version": 1, "variant": game["variant"],
                                    "games": [game]}))
        read = read_record(path)
        assert read.rules.name == game["variant"] and read.games[0].result.winner == game["result"]["winner"]
    browser.find_element("id", "close-summary").click()
    browser.find_element("id", "save-game").click()  # the download itself is the browser's
    assert message_of(browser).startswith(f"Saved tavli-match.json: the Tavli match to 3, {len(games)} game")
    assert console_errors(browser) == []


def next_game(driver):
    game = driver.execute_script("return tapaWeb.state.game")
    driver.find_element("id", "next-game").click()
    wait_for(driver, f"tapaWeb.state.game !== {game} && ['human', 'bot'].includes(document.body.dataset.phase)")


def test_a_drawn_game_scores_nothing_and_the_next_game_opens_with_an_opening_roll(browser, server):
    """docs/rules.md 9 on a draw (both mothers pinned in Plakoto), games ended by the page's test hook: game 1 won by O,
    so O opens game 2 (Plakoto) rolling both dice; game 2 drawn: the score stays, the rotation moves on, and game 3
    (Fevga) opens with an opening roll."""
    open_board(browser, server, variant="tavli", length=5, seed=6)
    assert browser.execute_script("return tapaWeb.endGame({winner: 'O', kind: 'single', points: 1})")
    assert "Next: game 2, Plakoto, opened by O (the bot)." in browser.find_element("id", "game-over-text").text
    next_game(browser)
    state = browser.execute_script("const s = tapaWeb.state; return [s.variant, s.games[1].history, s.log]")
    assert state[0] == "plakoto" and "O won the last game and opens this one." in state[2]
    assert browser.find_element("id", "rotation-info").text.startswith(
        "Game 2 of the Tavli match: Plakoto. O opens: the winner of the last game.")
    assert browser.execute_script("return tapaWeb.endGame({winner: null, kind: 'draw', points: 0})")
    text = browser.find_element("id", "game-over-text").text
    assert text.startswith("Both mothers are pinned: nobody scores. Score: X 0, O 1 (Tavli match to 5).")
    assert "Next: game 3, Fevga, opened by an opening roll (this game was drawn)." in text
    assert browser.find_element("id", "next-game").text == "Next game: Fevga"
    next_game(browser)
    state = browser.execute_script("const s = tapaWeb.state; return [s.variant, s.games[2].history, s.match.score,"
                                   " s.games[2].score]")
    assert state[0] == "fevga" and state[1][0]["action"] == "opening"
    assert state[2] == state[3] == {"X": 0, "O": 1}
    assert browser.execute_script("return document.getElementById('board').dataset.paths") == "parallel"


def test_the_servers_n_ply_bot_plays_portes_by_the_tavli_score(browser, server):
    """Game 1 (Portes) with the server's backgammon model at 1 ply: the hint is the engine's best_move with the
    match's context (the page sends "rotation_match"; "tavli" is its short form: the same answer), and says its
    match-winning chance."""
    open_board(browser, server, variant="tavli", length=5, seed=3, strength=1)
    phase = wait_for(browser, "['human', 'over'].includes(document.body.dataset.phase) && document.body.dataset.phase")
    assert phase == "human" and browser.execute_script("return tapaWeb.state.variant") == "portes"
    browser.find_element("id", "hint").click()
    wait_for(browser, "document.getElementById('message').textContent.startsWith('Hint')")
    state = browser.execute_script("return {position: tapaWeb.state.position, dice: tapaWeb.state.dice}")
    status, best = server.engine.respond({"cmd": "best_move", **state, "plies": 1,
                                          "tavli": {"length": 5, "score": {"X": 0, "O": 0}, "game": 1}})
    assert status == 200
    message = message_of(browser)
    assert message.startswith(f"Hint, 1-ply (server): {best['move'] or 'no move (pass)'} (match-winning chance "
                              f"{100 * best['match_winning_chance']:.1f}%)"), message


def test_any_length_up_to_25_is_a_tavli_match_and_the_other_variants_stay_single_games(browser, server):
    open_board(browser, server, variant="tavli", length=11, seed=2)
    assert browser.execute_script("return [document.getElementById('match-length').value, tapaWeb.state.match.length,"
                                  " tapaWeb.state.match.rotation]") == ["11", 11, "tavli"]
    assert browser.find_element("id", "score").text == "Tavli match to 11: X 0 – O 0"
    assert browser.find_element("css selector", "#match-length option[value='1']").text == "1 point"
    open_board(browser, server, variant="portes", seed=2)
    assert not browser.find_element("id", "rotation-info").is_displayed()
    assert browser.find_element("id", "score").text == "single game"
    assert browser.find_element("id", "moves-value").text == "equity"
