"""Portes (docs/rules.md 9) played by the bots: the backgammon model plays it from its outcome probabilities with
Portes' points (one mechanism, :class:`tapa_ai.net.evaluator.RulesEvaluator`, behind every net-like bot: 0-ply,
the n-ply search, ``onnx:``, the engine protocol, analysis, ``tapa-ai play``), ``heuristic`` plays it, and a net
of another board game is refused in one line. (``gnubg:N`` playing Portes: tests/test_bots_gnubg.py.)"""

from __future__ import annotations

import io
import re
import json
import random
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace

import numpy as np
import pytest

from tapa_ai.bots.base import BotError
from tapa_ai.bots.search import NetBot
from tapa_ai.rules.rolls import ROLL_WEIGHTS, ROLLS
from tapa_ai.bots.spec import make_bot
from tapa_ai.flow import GameState
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.movegen.choice import segment_argmax
from tapa_ai.movegen.random_positions import mixed_positions, random_dice
from tapa_ai.net.encoding import RULES_COLUMNS, encode
from tapa_ai.net.evaluator import (KernelEvaluator, RulesEvaluator, TorchEvaluator, check_same_board_game,
                                   playing_rules)
from tapa_ai.notation import board, position_to_json
from tapa_ai.rules.options import BACKGAMMON, PLAKOTO, PORTES
from tapa_ai.rules.outcomes import RESULT_BACKGAMMON, WIN_GAMMON, WIN_TOP, outcome_points, swap_sides

PORTES_POINTS = [1.0, 2.0, 2.0, -1.0, -2.0, -2.0]
BACKGAMMON_POINTS = [1.0, 2.0, 3.0, -1.0, -2.0, -3.0]


@pytest.fixture(scope="module")
def portes_bot():
    return make_bot("net:backgammon", PORTES)


@pytest.fixture(scope="module")
def backgammon_bot():
    return make_bot("net:backgammon", BACKGAMMON)


@pytest.fixture(scope="module")
def positions():
    """Random backgammon positions with dice, and the same boards as Portes positions, with their afterstates."""
    rng = np.random.default_rng(52)
    batch = mixed_positions(BACKGAMMON, 150, rng)
    dice = random_dice(len(batch), rng)
    portes = replace(batch, rules=(PORTES,))
    return generate(batch, dice), generate(portes, dice)


def as_portes(batch: PositionBatch) -> PositionBatch:
    return replace(batch, rules=tuple(PORTES if rules == BACKGAMMON else rules for rules in batch.rules))


def test_the_backgammon_model_plays_portes_valuing_a_backgammon_as_a_gammon(portes_bot):
    assert isinstance(portes_bot, NetBot) and portes_bot.rules == PORTES
    assert portes_bot.evaluator.model_rules == BACKGAMMON
    assert portes_bot.points.tolist() == PORTES_POINTS
    assert isinstance(portes_bot.evaluator.model, RulesEvaluator) and portes_bot.bearoff
    portes_bot.check_rules(PORTES)
    with pytest.raises(BotError, match="trained for rule set 'backgammon' and plays 'portes'; it cannot play "
                                       "'backgammon'"):
        portes_bot.check_rules(BACKGAMMON)


def test_portes_positions_are_shown_to_the_model_as_backgammon_positions(portes_bot, backgammon_bot, positions):
    # The same board, the rule flags the model was trained with: exactly the backgammon bot's probabilities.
    backgammon, portes = positions
    want = backgammon_bot.evaluator.afterstate_distributions(backgammon)
    got = portes_bot.evaluator.afterstate_distributions(portes)
    going_on = ~backgammon.game_over
    assert np.array_equal(got[going_on], want[going_on])
    # A finished game is its exact result under Portes: a backgammon is a gammon.
    won_backgammons = backgammon.result_kind == RESULT_BACKGAMMON
    assert np.all(want[won_backgammons, WIN_TOP] == 1) and np.all(got[won_backgammons, WIN_GAMMON] == 1)
    # Shown with Portes' own flags (backgammons 0, never seen in training), the model would answer otherwise.
    model = portes_bot.evaluator.model
    assert not np.allclose(model.inner.evaluate_flipped(portes.positions), model.evaluate_flipped(portes.positions))
    flags = encode(model.model_batch(portes.positions))[:, RULES_COLUMNS]
    assert np.all(flags == encode(backgammon.positions)[:, RULES_COLUMNS])
    assert np.all(encode(portes.positions)[:, RULES_COLUMNS][:, 1] == 0) and np.all(flags[:, 1] == 1)


def test_portes_equities_use_portes_points_and_the_baseline_backgammons(portes_bot, positions):
    _, portes = positions
    baseline = make_bot("net:backgammon,points=backgammon", PORTES)
    assert baseline.rules == PORTES and baseline.points.tolist() == BACKGAMMON_POINTS
    rows, values, equities = portes_bot.ranked(portes)
    rows_b, values_b, equities_b = baseline.ranked(portes)
    assert np.array_equal(values, values_b)  # the same probabilities, other points
    assert np.allclose(equities, values @ np.array(PORTES_POINTS))
    assert np.allclose(equities_b, values @ np.array(BACKGAMMON_POINTS))
    assert np.allclose(equities_b - equities, values[:, WIN_TOP] - values[:, 5])


def test_the_search_chooses_the_replies_by_portes_points(positions):
    _, portes = positions
    bot = make_bot("net:backgammon@1ply,nobearoff", PORTES)
    evaluator = bot.evaluator
    going_on = np.flatnonzero(~portes.game_over)[[0, 7, 30]]
    searched = bot.evaluate(portes, going_on)
    for row, value in zip(going_on.tolist(), searched):
        # By hand: each of the 21 rolls of the opponent, its best reply by Portes' equity, averaged.
        after = portes.positions.take([row]).flipped()
        replies = generate(after.take(np.zeros(len(ROLLS), dtype=np.int64)), ROLLS)
        reply_values = evaluator.afterstate_distributions(replies)
        best = segment_argmax(reply_values @ np.array(PORTES_POINTS), replies.offsets)
        expected = np.einsum("rk,r->k", swap_sides(reply_values[best]), ROLL_WEIGHTS)
        assert value == pytest.approx(expected, abs=1e-6)


def test_the_torch_and_kernel_evaluators_play_portes_alike(portes_bot, positions):
    _, portes = positions
    net = portes_bot.net
    torch_values = RulesEvaluator(TorchEvaluator(net), PORTES).afterstate_distributions(portes)
    kernel_values = RulesEvaluator(KernelEvaluator(net), PORTES).afterstate_distributions(portes)
    assert np.allclose(torch_values, kernel_values, atol=2e-5)


@pytest.mark.requires("onnx", "onnxruntime")  # tests/requires.py: skips without them, fails under CI=true
def test_an_onnx_model_of_backgammon_plays_portes_as_the_net_does(portes_bot, positions, tmp_path):
    from tapa_ai.export import export_checkpoint

    path = export_checkpoint("backgammon", "onnx", tmp_path / "backgammon.onnx")
    bot = make_bot(f"onnx:{path}", PORTES)
    assert bot.rules == PORTES and bot.points.tolist() == PORTES_POINTS
    _, portes = positions
    assert np.allclose(bot.evaluator.afterstate_distributions(portes),
                       portes_bot.evaluator.afterstate_distributions(portes), atol=2e-5)


def test_a_net_of_another_board_game_is_refused_in_one_line():
    with pytest.raises(BotError) as error:
        make_bot("net:plakoto", PORTES)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("bot 'net:plakoto' was trained for rule set 'plakoto'; it cannot play 'portes', "
                              "another board game: contact='hit' (the model's 'pin')")
    assert "may differ only in backgammons, cube, crawford, opening, next_game_opener" in message
    with pytest.raises(BotError, match="points=plakoto: .*it cannot play 'plakoto', another board game"):
        make_bot("net:backgammon,points=plakoto", PORTES)
    with pytest.raises(BotError, match="unknown variant 'nope'"):
        make_bot("net:backgammon,points=nope", PORTES)
    with pytest.raises(BotError, match="points= is an option of net: bots"):
        make_bot("heuristic,points=backgammon", PORTES)
    with pytest.raises(ValueError, match="another board game"):
        check_same_board_game(PLAKOTO, PORTES)


def test_playing_rules_gives_the_model_itself_for_its_own_rules(backgammon_bot):
    evaluator = backgammon_bot.evaluator
    assert playing_rules(evaluator, BACKGAMMON).model is evaluator.model
    assert backgammon_bot.playing(BACKGAMMON) is backgammon_bot
    back = backgammon_bot.playing(PORTES).playing(BACKGAMMON)
    assert back.evaluator.model is evaluator.model and back.points.tolist() == BACKGAMMON_POINTS
    # net:backgammon,points=portes playing backgammon: a backgammon valued 2 in backgammon games.
    assert make_bot("net:backgammon,points=portes", BACKGAMMON).points.tolist() == PORTES_POINTS
    # Points set by ,points= stay when the bot is set to play another rule set (the engine's Analyzer.playing).
    baseline = make_bot("net:backgammon,points=backgammon")
    assert baseline is not None and baseline.points.tolist() == BACKGAMMON_POINTS
    assert baseline.playing(PORTES).points.tolist() == BACKGAMMON_POINTS
    assert baseline.playing(PORTES).rules == PORTES
    assert make_bot("net:backgammon,points=backgammon", PORTES).playing(PORTES, PORTES).points.tolist() == \
        PORTES_POINTS


def test_the_portes_bot_and_the_backgammon_bot_each_play_the_best_move_by_their_points(portes_bot, backgammon_bot,
                                                                                    positions):
    # Backgammon risk: the same probabilities, a backgammon worth 2 instead of 3, and some choices change.
    backgammon, portes = positions
    values = portes_bot.evaluator.afterstate_distributions(portes)
    rng = np.random.default_rng(0)
    mine, theirs = portes_bot.choose(portes, rng), backgammon_bot.choose(backgammon, rng)
    changed = 0
    for index in range(len(portes.offsets) - 1):
        lo, hi = int(portes.offsets[index]), int(portes.offsets[index + 1])
        by_portes = values[lo:hi] @ np.array(PORTES_POINTS)
        by_backgammon = values[lo:hi] @ np.array(BACKGAMMON_POINTS)
        assert by_portes[mine[index] - lo] == by_portes.max()
        if portes.game_over[lo:hi].any():
            continue  # a finished game is a backgammon in one and a gammon in the other
        assert by_backgammon[theirs[index] - lo] == pytest.approx(by_backgammon.max(), abs=1e-12)
        changed += by_portes[theirs[index] - lo] < by_portes.max() - 1e-9
    assert changed >= 1  # measured: a few of these 150 positions


def test_the_terminal_shows_a_portes_backgammon_inside_the_gammon_it_is_worth(portes_bot, backgammon_bot):
    """tapa-ai play's eval and hints (play/advice.py) show the outcomes as the game scores them: in Portes the
    backgammon model's backgammon class is added to the gammon; backgammon keeps it apart, plakoto its mother."""
    from tapa_ai.analysis.analyzer import Analyzer
    from tapa_ai.play.advice import scored_named, summarize

    probabilities = np.array([0.30, 0.10, 0.05, 0.35, 0.15, 0.05])
    portes = scored_named(Analyzer(portes_bot), probabilities)
    assert list(portes) == ["win_single", "win_gammon", "lose_single", "lose_gammon"]
    assert portes["win_gammon"] == pytest.approx(0.15) and portes["lose_gammon"] == pytest.approx(0.20)
    assert summarize(portes) == "win 45.0% (gammon 15.0%) | lose 55.0% (gammon 20.0%)"
    assert scored_named(Analyzer(backgammon_bot), probabilities) == Analyzer(backgammon_bot).named(probabilities)
    plakoto = Analyzer(make_bot("net:plakoto", PLAKOTO))
    seven = np.array([0.3, 0.1, 0.05, 0.3, 0.1, 0.05, 0.1])
    assert list(scored_named(plakoto, seven)) == list(plakoto.named(seven)) and "win_mother" in plakoto.named(seven)


def test_heuristic_plays_portes_games_to_the_end_without_backgammons():
    from tapa_ai.arena.duels import duel

    bot = make_bot("heuristic", PORTES)
    assert bot.rules == PORTES
    result = duel(PORTES, bot, make_bot("random", PORTES), 4, seed=3)
    assert result.games == 8 and result.unfinished == 0
    assert set(result.kinds) <= {"single", "gammon"} and result.ppg > 0


# -- the engine protocol ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def engine():
    from tapa_ai.engine.protocol import Engine

    return Engine(bot="net:backgammon")


def ask(engine, request):
    status, answer = engine.respond(request)
    return status, json.loads(json.dumps(answer))


def test_the_engine_with_the_backgammon_model_answers_portes_with_portes_points(engine):
    layout = "1:XX 2:O 3:X 8:XX 20:" + "O" * 9 + " 22:OOOO 23:O"
    portes, backgammon = board(PORTES, layout), board(BACKGAMMON, layout)
    status, start = ask(engine, {"cmd": "start", "variant": "portes"})
    assert status == 200 and start["position"]["variant"] == "portes"
    status, mine = ask(engine, {"cmd": "evaluate", "position": position_to_json(portes)})
    _, theirs = ask(engine, {"cmd": "evaluate", "position": position_to_json(backgammon)})
    assert status == 200 and mine["probabilities"] == theirs["probabilities"]
    classes = np.array(list(mine["probabilities"].values()))
    assert mine["equity"] == pytest.approx(float(classes @ PORTES_POINTS))
    assert theirs["equity"] == pytest.approx(float(classes @ BACKGAMMON_POINTS))
    status, hint = ask(engine, {"cmd": "hint", "position": position_to_json(portes), "dice": [2, 1], "count": 3})
    assert status == 200 and len(hint["moves"]) == 3
    for move in hint["moves"]:
        assert move["equity"] == pytest.approx(float(np.array(list(move["probabilities"].values())) @ PORTES_POINTS))
    status, best = ask(engine, {"cmd": "best_move", "position": position_to_json(portes), "dice": [2, 1]})
    assert status == 200 and best["move"] == hint["moves"][0]["move"] and best["position"]["variant"] == "portes"
    status, encoded = ask(engine, {"cmd": "encode", "position": position_to_json(portes)})
    assert status == 200 and encoded["features"][RULES_COLUMNS.start + 1] == 1.0  # the model's backgammons flag
    status, cube = ask(engine, {"cmd": "cube", "position": position_to_json(portes)})
    assert status == 400 and "has no cube" in cube["error"]
    status, refused = ask(engine, {"cmd": "evaluate", "position": position_to_json(board(PLAKOTO, "24:XO 1:O"))})
    assert status == 400 and "plays 'backgammon'" in refused["error"]


def portes_record_file(seed: int = 5, moves: int = 8) -> dict:
    from tapa_ai.arena.recorded_games import games_document

    rng = random.Random(seed)
    state = GameState.new(PORTES)
    while not state.is_over and sum(e.action == "move" for e in state.history) < moves:
        state = state.roll(rng) if state.phase in ("opening", "roll") else state.play(rng.choice(state.moves))
    game = {"number": 1, "players": {"X": "X", "O": "O"}, "match_length": 0, "score": {"X": 0, "O": 0},
            "history": [event.to_dict() for event in state.history], "result": None}
    return games_document(PORTES, {}, [game], "a test")


def test_portes_games_are_analysed_by_the_backgammon_model_with_portes_points(engine, tmp_path):
    from tapa_ai.analysis import analyse_record, analysis_bot, record_from_json
    from tapa_ai.cli import main

    document = portes_record_file()
    record = record_from_json(document)
    bot = analysis_bot("net:backgammon", record)
    assert bot.rules == PORTES and bot.points.tolist() == PORTES_POINTS
    analysis = analyse_record(record, bot)
    status, answer = ask(engine, {"cmd": "analyse", "record": document})
    assert status == 200
    assert answer["games"] == json.loads(json.dumps(analysis.to_dict()))["games"]
    path = tmp_path / "portes.json"
    path.write_text(json.dumps(document))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["analyse", str(path), "--quiet"])  # the default bot: the backgammon model at 1 ply
    assert code == 0, err.getvalue()
    assert "backgammon.pt@1ply" in out.getvalue() or "net:backgammon@1ply" in out.getvalue()


# -- the commands ------------------------------------------------------------------------------------------------

def test_tapa_ai_play_variant_portes_uses_the_backgammon_model_and_the_opening_reroll():
    from tapa_ai.play.cli_play import launch

    out = io.StringIO()
    assert launch(variant="portes", seed=3, input=io.StringIO("quit\n"), output=out) == 0
    screen = out.getvalue()
    assert screen.startswith("tapa-ai play: portes, money play.")
    assert "backgammon.pt@1ply" in screen.splitlines()[0]
    assert "Opening roll: you 5, O 1: you go first, rolling both dice.\nYou roll 2-2." in screen
    assert "cube" not in screen.split("Your move")[0].lower()


def test_tapa_ai_match_plays_portes(capsys):
    from tapa_ai.cli import main

    assert main(["match", "net:backgammon", "net:backgammon,points=backgammon", "--variant", "portes",
                 "--games", "4", "--workers", "1", "--quiet", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "portes" in out and "net:backgammon,points=backgammon" in out


def test_the_script_finding_the_positions_runs_and_reports_them():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "scripts/portes_positions.py", "--games", "64", "--turns", "120",
                           "--show", "1"], cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    first, *rest = done.stdout.splitlines()
    assert re.match(r"^\d+ of [\d,]+ decisions differ .* 0-ply, 64 games x 120 turns \([\d,]+ games finished\), "
                    r"seed 52; the Portes moves' gains sum to [\d.]+ points", first), first
    if not first.startswith("0 of"):
        assert any(line.startswith("**1.** X to play ") for line in rest)
        assert any(line.startswith("| Portes | `") for line in rest)


def test_a_portes_benchmark_set_is_built_with_the_backgammon_model_by_default():
    """``tapa-ai benchmark build --variant portes`` samples, ranks and rolls out with net:backgammon (the model
    that plays Portes); pubeval, which scores backgammons at 3, is no reference."""
    from tapa_ai.arena.benchmark.sample import default_references, default_sources

    references = default_references("portes")
    assert references[:2] == ["net:backgammon", "net:backgammon@1ply"] and "heuristic" in references
    assert "pubeval" not in references and not any(spec.startswith("net:portes") for spec in references)
    assert all(not spec.startswith("net:") or spec.startswith("net:backgammon") for spec, _ in default_sources("portes"))
    assert "pubeval" not in default_references("tapa") and default_references("tapa")[0] == "net:tapa"
