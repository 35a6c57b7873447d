"""``tapa-ai analyse`` (tapa_ai.analysis): game records of every source, each move's error, each roll's luck.

The numbers are checked against the bot's own API computed another way: the engine's
:class:`~tapa_ai.analysis.analyzer.Analyzer` ranking each position's moves, and the luck from its
definition over the 21 rolls on the reference move generator.
"""

from __future__ import annotations

import copy
import io
import json
import random

import numpy as np
import pytest

from tapa_ai.analysis import RecordError, analyse_record, analysis_bot, read_record, record_from_json
from tapa_ai.analysis.cli_analyse import analyse_command
from tapa_ai.arena.recorded_games import games_document
from tapa_ai.analysis.analyzer import Analyzer
from tapa_ai.flow import GameState, MatchState
from tapa_ai.movegen.batch import PositionBatch
from tapa_ai.movegen.generate import generate
from tapa_ai.rules.rolls import DISTINCT_ROLLS

TAPA = "net:checkpoints/tapa.pt"


@pytest.fixture(scope="module")
def bot():
    """The shipped tapa network at 0 ply, loaded once."""
    return analysis_bot(TAPA)


def bot_game(bot, seed: int, mistakes: dict[int, int] | None = None, moves: int = 1000) -> GameState:
    """A tapa game from the opening roll in which both sides play ``bot``'s best move, except that move
    number k of ``mistakes`` plays the bot's n-th best instead (n >= 2); stops after ``moves`` moves."""
    rng = random.Random(seed)
    mistakes = mistakes or {}
    analyzer = Analyzer(bot)
    state = GameState.new("tapa")
    played = 0
    while not state.is_over and played < moves:
        if state.phase == "opening":
            state = state.roll(rng)
            continue
        if state.phase == "roll":
            state = state.roll(rng)
        ranked, _ = analyzer.rank(state.position, state.dice, plies=0)
        choice = ranked[min(mistakes.get(played + 1, 1), len(ranked)) - 1]
        state = state.play(choice.move)
        played += 1
    return state


def random_game(variant: str, seed: int, moves: int = 6) -> GameState:
    """A game of ``variant`` with random moves, stopped after ``moves`` moves."""
    rng = random.Random(seed)
    state = GameState.new(variant)
    while not state.is_over and sum(e.action == "move" for e in state.history) < moves:
        state = state.roll(rng) if state.phase in ("opening", "roll") else state.play(rng.choice(state.moves))
    return state


def games_file(state: GameState, source="the web board", players=None) -> dict:
    """The game's ``tapa-ai/games`` record as the web board and the arena write it."""
    game = {"number": 1, "players": players or {"X": "X", "O": "O"}, "match_length": 0, "score": {"X": 0, "O": 0},
            "history": [event.to_dict() for event in state.history],
            "result": None if state.result is None else {"winner": state.result.winner, "kind": state.result.kind,
                                                         "points": state.result.points}}
    return games_document(state.rules, {}, [game], source)


def play_save(state: GameState) -> dict:
    """The game as ``tapa-ai play``'s ``save FILE`` writes it (X the person, O the bot)."""
    from tapa_ai.play.saves import SavedGame, save_game

    match = MatchState(state)
    if state.is_over and state.winner:
        score = [0, 0]
        score["XO".index(state.winner)] = state.points_won
        from tapa_ai.flow import GameRecord

        record = GameRecord(1, state.winner, state.result.kind, state.cube_value, state.points_won)
        match = MatchState(state, 0, (score[0], score[1]), 1, False, (record,))
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as directory:
        path = save_game(Path(directory) / "game.json", SavedGame(match, human="X", bot="net:tapa@1ply", seed=1))
        return json.loads(path.read_text())


# -- errors ------------------------------------------------------------------------------------------------
def test_a_game_of_the_bots_best_moves_has_no_error(bot):
    state = bot_game(bot, seed=1)
    analysis = analyse_record(record_from_json(games_file(state)), bot)
    moves = analysis.moves
    assert state.is_over and len(moves) == len([e for e in state.history if e.action == "move"]) > 20
    assert all(move.error == 0.0 and move.best == move.move and move.mark == "" for move in moves)
    totals = analysis.players
    assert sum(t.moves for t in totals.values()) == len(moves) and all(t.error == 0 for t in totals.values())


def test_a_worse_move_has_exactly_its_error_against_the_bots_ranking(bot):
    """Move 6 plays the bot's third choice: its error is the bot's best equity minus that move's, as the engine's
    Analyzer ranks them; marks follow the thresholds."""
    state = bot_game(bot, seed=2, mistakes={6: 3}, moves=8)
    analysis = analyse_record(record_from_json(games_file(state)), bot, error_mp=0.0, blunder_mp=1e9)
    sixth = analysis.moves[5]
    ranked, _ = Analyzer(bot).rank(sixth.position, sixth.dice, plies=0)
    assert sixth.move == ranked[2].move and sixth.best == ranked[0].move
    assert sixth.error == pytest.approx(ranked[0].equity - ranked[2].equity, abs=1e-9) and sixth.error > 0
    assert sixth.equity == pytest.approx(ranked[2].equity, abs=1e-9) and sixth.mark == "error"
    assert [m.error for i, m in enumerate(analysis.moves) if i != 5] == [0.0] * 7
    assert analysis.players["X"].error + analysis.players["O"].error == pytest.approx(sixth.error)


def test_a_rated_moves_candidates_are_the_bots_five_best_and_the_move_played(bot):
    """Move 6 plays the bot's third choice and move 8 its tenth: each rated move lists the analyzer's five best
    moves, best first, with their equities and cubeless chances (the top class a mother win here), and the move
    played last where it is not among them."""
    from tapa_ai.rules.outcomes import cumulative_probabilities

    state = bot_game(bot, seed=2, mistakes={6: 3, 8: 10}, moves=8)
    analysis = analyse_record(record_from_json(games_file(state)), bot)
    for index in (5, 7):
        move = analysis.moves[index]
        ranked, _ = Analyzer(bot).rank(move.position, move.dice, plies=0)
        assert len(ranked) > 10
        listed = [(c.move, c.equity) for c in move.candidates]
        expected = [(r.move, r.equity) for r in ranked[:5]] + ([(move.move, move.equity)] if index == 7 else [])
        assert [m for m, _ in listed] == [m for m, _ in expected]
        assert [e for _, e in listed] == pytest.approx([e for _, e in expected], abs=1e-9)
        for candidate, rank in zip(move.candidates[:5], ranked):
            assert candidate.chances == pytest.approx(tuple(cumulative_probabilities(
                np.asarray(rank.probabilities, dtype=np.float64))), abs=1e-6)
        turn = move.to_dict(positions=False)
        assert turn["candidates"][0] == {"move": ranked[0].move, "equity": pytest.approx(ranked[0].equity),
                                         "chances": pytest.approx(dict(zip(("win", "win_gammon", "win_backgammon",
                                         "lose_gammon", "lose_backgammon", "draw"), move.candidates[0].chances)))}
    forced = [m for m in analysis.moves if m.forced]
    assert all(m.candidates == () for m in forced)


def test_at_one_ply_the_move_played_is_valued_at_one_ply_too(bot):
    """At 1 ply the played move is searched as deep as the best, even when the move filter left it out."""
    state = bot_game(bot, seed=3, mistakes={2: 12}, moves=2)
    one_ply = analysis_bot(TAPA + "@1ply")
    second = analyse_record(record_from_json(games_file(state)), one_ply).moves[1]
    afterstates = generate(PositionBatch.from_positions([second.position]), np.array([second.dice], dtype=np.int8))
    values = one_ply.evaluate(afterstates) @ one_ply.points  # every move at 1 ply
    texts = [afterstates.move_text(row) for row in range(len(afterstates))]
    assert second.equity == pytest.approx(values[texts.index(second.move)], abs=1e-9)
    assert second.best_equity <= values.max() + 1e-9 and second.error > 0


def test_the_analyzer_ranks_as_the_bot_plays_its_refined_search_included(bot):
    """The analyzer's ranking is the bot's own (NetBot.ranked): with ``refine`` the moves the 1-ply refinement
    drops are not searched at 2 plies but shown at 0 ply below those searched, and the best is the bot's move."""
    from tapa_ai.bots.search import filter_candidates

    refined = analysis_bot(TAPA + "@2ply,refine=2:0.02")
    position, dice = bot_game(bot, seed=6, moves=6).position, (3, 1)
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    rows, _, equities = refined.ranked(afterstates)
    searched = list(rows[np.argsort(-equities, kind="stable")])
    base = refined.evaluator.afterstate_distributions(afterstates) @ refined.points
    filtered = filter_candidates(base, afterstates.offsets, refined.candidates, refined.margin)
    assert 2 <= len(searched) < len(filtered)  # the refinement dropped some of the filter's candidates
    ranked, count = Analyzer(refined).rank(position, dice)
    assert count == len(afterstates)
    assert [move.row for move in ranked[:len(searched)]] == searched
    assert [move.plies for move in ranked] == [2] * len(searched) + [0] * (count - len(searched))
    assert ranked[0].row == int(refined.choose(afterstates, np.random.default_rng(0))[0])


# -- luck --------------------------------------------------------------------------------------------------
def best_0ply(analyzer, position, dice) -> float:
    return analyzer.rank(position, dice, plies=0, limit=1)[0][0].equity


def test_the_luck_of_a_roll_is_its_best_value_minus_the_mean_over_the_rolls(bot):
    state = bot_game(bot, seed=4, moves=5)
    moves = analyse_record(record_from_json(games_file(state)), bot).moves
    analyzer = Analyzer(bot)
    for move in (moves[0], moves[3]):
        doubles = not move.opening  # the opening roll is never a double: the mean of the other 15
        rolls = [(a, b, n) for a, b, n in DISTINCT_ROLLS if doubles or a != b]
        total = sum(n for _, _, n in rolls)
        mean = sum(n * best_0ply(analyzer, move.position, (a, b)) for a, b, n in rolls) / total
        assert move.luck == pytest.approx(best_0ply(analyzer, move.position, move.dice) - mean, abs=1e-6)
    assert moves[0].opening and not moves[3].opening
    assert analyse_record(record_from_json(games_file(state)), bot).players["X"].luck == pytest.approx(
        sum(m.luck for m in moves if m.side == "X"))


# -- the sources ---------------------------------------------------------------------------------------------
def test_the_three_sources_read_into_the_same_model(bot, tmp_path):
    """A play save, a games record (the web board's) and the arena's recorded games replay to the same turns."""
    from tapa_ai.arena.match import run_match
    from tapa_ai.rules.options import variant_rules

    state = bot_game(bot, seed=5)
    save = record_from_json(play_save(state), "save")
    web = record_from_json(games_file(state), "web")
    assert save.games[0].turns == web.games[0].turns and save.games[0].result == web.games[0].result == state.result
    assert save.games[0].players == {"X": "human", "O": "net:tapa@1ply"} and save.source.startswith("a game saved")
    # the arena: the moves of its first games, written and read back; the results agree with its own
    rules = variant_rules("tapa")
    plain = run_match("runner", "random", rules, 4, seed=3, progress=False)
    result = run_match("runner", "random", rules, 4, seed=3, progress=False, record_games=3)
    assert np.array_equal(plain.records.points_for_a, result.records.points_for_a)
    assert result.write_games(tmp_path / "arena.json", rules) == 3
    arena = read_record(tmp_path / "arena.json")
    assert [g.number for g in arena.games] == [1, 2, 3] and arena.source == "games of tapa-ai match"
    for number, game in enumerate(arena.games):
        assert len(game.moves) == result.records.turns[number]
        a_side = "X" if number % 2 == 0 else "O"
        assert game.players[a_side] == "A runner" and game.ending == "move"
        assert (game.result.winner == a_side) == bool(result.records.a_won[number])


def test_per_player_totals_and_the_report(bot, tmp_path):
    state = bot_game(bot, seed=6, mistakes={3: 4, 4: 2, 7: 5}, moves=9)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(play_save(state)))
    out, err = io.StringIO(), io.StringIO()
    assert analyse_command(str(path), bot=TAPA, json_path=str(tmp_path / "a.json"), quiet=True, output=out,
                           errors=err) == 0
    data = json.loads((tmp_path / "a.json").read_text())
    turns = data["games"][0]["turns"]
    for player in data["players"]:
        mine = [t for t in turns if t["player"] == player["player"]]
        rated = [t for t in mine if not t["forced"]]
        assert player["moves"] == len(mine) and player["rated_moves"] == len(rated)
        assert player["error_total_mp"] == pytest.approx(sum(t["error_mp"] for t in rated))
        assert player["blunders"] == sum(t["mark"] == "blunder" for t in mine)
        assert player["luck"] == pytest.approx(sum(t["luck"] for t in mine))
    text = out.getvalue()
    assert "X human, O net:tapa@1ply" in text and "written: " in text
    assert len([line for line in text.splitlines() if line[:4].strip().isdigit()]) == len(turns) == 9


# -- cube decisions ----------------------------------------------------------------------------------------------
def sure_gammon_record(response: str, match_length: int = 0, score: tuple[int, int] = (0, 0)):
    """X, to roll with two checkers left on its 1 point, doubles and O answers ``response``: every roll bears
    both off, a gammon (O has none off, none in X's home), so a 1-ply analysis knows every equity exactly."""
    from tapa_ai.notation.json_position import position_from_json, position_to_json

    points = [""] * 24
    points[0], points[12] = "XX", "O" * 15
    start = position_from_json({"variant": "tapa", "points": points, "off": {"X": 13, "O": 0}, "turn": "X"})
    state = getattr(GameState.new("tapa", opener="X", position=start).double("X"), response)("O")
    if not state.is_over:
        state = state.rolled((3, 1), "X")
        state = state.play(state.moves[0])
    game = {"number": 1, "players": {"X": "X", "O": "O"}, "match_length": match_length,
            "score": {"X": score[0], "O": score[1]}, "start": position_to_json(start),
            "history": [event.to_dict() for event in state.history]}
    return record_from_json(games_document(start.rules, {}, [game], "a test"))


def test_a_cube_decision_is_rated_against_the_bots_cubeful_equities_where_they_are_exact(bot):
    """Money play: no double 2 (a sure gammon), double/pass 1, double/take 4. Doubling is too good (it gives away
    1 point of 2); taking gives away 3 (a cube of 2 on a sure gammon) where passing loses 1."""
    take = analyse_record(sure_gammon_record("take"), bot, plies=1)
    double, answer = take.games[0].entries[:2]
    assert (double.rating.no_double, double.rating.double_take, double.rating.double_pass) == \
        pytest.approx((2.0, 4.0, 1.0), abs=1e-9)
    assert double.rating.best == "no_double" and double.rating.error_mp == pytest.approx(1000.0)
    assert answer.action == "take" and answer.rating.best == "drop" and answer.rating.error_mp == pytest.approx(3000.0)
    assert double.rating.mark == answer.rating.mark == "blunder"
    assert take.moves[0].cube is None  # X no longer has access to the cube it turned
    assert (take.players["X"].cube_decisions, take.players["O"].cube_decisions) == (1, 1)
    assert take.players["O"].cube_error == pytest.approx(3.0) and take.players["O"].cube_blunders == 1
    passed = analyse_record(sure_gammon_record("drop"), bot, plies=1)
    assert passed.games[0].entries[1].rating.best == "drop" and passed.games[0].entries[1].rating.error == 0.0
    data = take.to_dict(positions=False)["games"][0]["turns"][1]
    assert data["rated"] and data["best"] == "drop" and data["error_mp"] == pytest.approx(3000.0)
    text = take.report()
    assert "doubles to 2             no double                  1000.0" in text and "3000.0" in text


def test_a_match_cube_error_is_the_lost_match_chance_over_half_the_spread_of_the_cube_now(bot):
    """To 3 points at 0-0 the same position: no double leaves X 1-away (the Crawford game next), double/pass
    2-away, double/take wins the match; the errors are in match-winning chance over half the spread of winning
    or losing the cube's 1 point."""
    from tapa_ai.cube.met import variant_met

    met = variant_met("tapa").equity
    analysis = analyse_record(sure_gammon_record("take", match_length=3), bot, plies=1)
    double, answer = analysis.games[0].entries[:2]
    nd, dt, dp = met(1, 3), 1.0, met(2, 3)
    assert double.rating.units == "mwc"
    assert (double.rating.no_double, double.rating.double_take, double.rating.double_pass) == \
        pytest.approx((nd, dt, dp), abs=1e-9)
    unit = (met(2, 3) - met(3, 2)) / 2
    assert double.rating.best == "no_double" and double.rating.error == pytest.approx((nd - dp) / unit)
    assert answer.rating.best == "drop" and answer.rating.error == pytest.approx((dt - dp) / unit)


def test_every_roll_without_a_double_where_one_was_allowed_is_a_no_double_decision(bot):
    """A game snapshot (played with the cube): a side doubles before move 7 and the other takes; every move
    before it but the opening roll's was made without doubling by a side that could have, each rated against
    the bot's cube equities; after it only the taker, owning the cube at 2, could double, and its errors are
    per cube of 1. The same moves in a games
    file without cube actions (the arena's, the web board's) were not cube decisions."""
    from tapa_ai.cube.decisions import CubeSituation
    from tapa_ai.rules.cube import Cube

    rng = random.Random(7)
    analyzer = Analyzer(bot)
    state, could = GameState.new("tapa"), []
    while len(could) < 12:
        if state.phase == "opening":
            state = state.roll(rng)
            continue
        may = state.phase == "roll" and state.may_double
        if len(could) == 6:
            doubler = state.position.turn
            state = state.double(doubler).take("O" if doubler == "X" else "X")
            may = False
        if state.phase == "roll":
            state = state.roll(rng)
        could.append((may, state.cube_value, state.cube_owner))
        state = state.play(analyzer.rank(state.position, state.dice, plies=0)[0][0].move)
    analysis = analyse_record(record_from_json(state.to_dict()), bot)
    moves = analysis.moves
    assert [move.cube is not None for move in moves] == [may for may, _, _ in could]
    # the opening roll's move comes with no cube decision; after the double only the taker may redouble
    assert [may for may, _, _ in could] == [False] + [True] * 5 + [False, True, False, True, False, True]
    for move, (may, value, owner) in zip(moves, could):
        if not may:
            continue
        situation = CubeSituation.single(bot.net.rules, Cube(value, owner), move.side)
        found = bot.cube_equities(PositionBatch.from_positions([move.position]), situation)
        assert move.cube.no_double == pytest.approx(float(found.no_double[0]))
        assert move.cube.error == pytest.approx((float(found.equity[0]) - float(found.no_double[0])) / value)
        assert move.cube.best == ("double" if found.double[0] else "no_double")
    cube_entries = [entry for entry in analysis.games[0].entries if entry.action != "move"]
    assert [entry.action for entry in cube_entries] == ["double", "take"]
    assert all(entry.rating is not None for entry in cube_entries)
    for side, totals in analysis.players.items():
        assert totals.cube_decisions == 1 + sum(may for (may, _, _), m in zip(could, moves) if m.side == side)
    cubeless = [event.to_dict() for event in state.history if event.action in ("opening", "move")]
    document = games_document(state.rules, {}, [{"number": 1, "history": cubeless}], "the arena")
    assert all(move.cube is None for move in analyse_record(record_from_json(document), bot).moves)


def test_a_game_after_the_match_was_won_is_refused():
    document = games_document(GameState.new("tapa").rules, {}, [{"number": 1, "match_length": 3,
                                                                  "score": {"X": 3, "O": 1}, "history": []}], "a test")
    with pytest.raises(RecordError, match="has won the match"):
        record_from_json(document)


# -- bad input ------------------------------------------------------------------------------------------------
def run(path, **options):
    """``tapa-ai analyse PATH --quiet`` with ``options`` (bot=, game=): (exit code, stderr)."""
    from contextlib import redirect_stderr, redirect_stdout

    from tapa_ai.cli import main

    flags = [word for name, value in options.items() for word in (f"--{name}", str(value))]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["analyse", str(path), "--quiet", *flags])
    return code, err.getvalue()


def test_bad_input_gets_one_clear_line(bot, tmp_path):
    state = bot_game(bot, seed=7, moves=6)
    good = games_file(state)
    cases = {}
    (tmp_path / "truncated.json").write_text(json.dumps(good)[:-40])
    cases["truncated.json"] = ({}, "truncated")
    bad = copy.deepcopy(good)
    bad["games"][0]["history"][3]["move"] = "24/1"
    (tmp_path / "illegal.json").write_text(json.dumps(bad))
    cases["illegal.json"] = ({}, "illegal")
    (tmp_path / "good.json").write_text(json.dumps(good))
    cases["good.json"] = ({"bot": "net:checkpoints/plakoto.pt"}, "--bot net:tapa@1ply")
    (tmp_path / "plakoto.json").write_text(json.dumps(games_file(random_game("plakoto", 1))))
    cases["plakoto.json"] = ({"bot": TAPA}, "the record is plakoto")
    (tmp_path / "position.json").write_text(json.dumps(state.to_dict()["position"]))
    cases["position.json"] = ({}, "no moves to analyse")
    (tmp_path / "other.json").write_text('{"format": "tapa-ai/web-model"}')
    cases["other.json"] = ({}, "is not a game record")
    cases["missing.json"] = ({}, "no file")
    for name, (options, words) in cases.items():
        code, message = run(tmp_path / name, **options)
        assert code == 2 and message.count("\n") == 1 and words in message, (name, message)
        assert message.startswith("tapa-ai analyse: ") and "Traceback" not in message
    for spec, words in (("net:nosuchmodel", "nosuchmodel"), ("heuristic", "needs a network bot")):
        code, message = run(tmp_path / "good.json", bot=spec)
        assert code == 2 and message.count("\n") == 1 and words in message, message
    code, message = run(tmp_path / "good.json", game=4)
    assert code == 2 and "holds game 1" in message


def test_the_command_line_says_one_line_and_exits_2(tmp_path):
    """As a process: a corrupt file gets one line on stderr, exit 2, no traceback."""
    import subprocess
    import sys

    (tmp_path / "bad.json").write_text('{"format": "tapa-ai/games", "version": 1, "variant": "tapa", "games": [')
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "analyse", str(tmp_path / "bad.json")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "truncated" in done.stderr, done.stderr


def test_a_record_replays_only_legal_events(bot):
    state = bot_game(bot, seed=8, moves=4)
    good = games_file(state)
    for change, words in (
            (lambda h: h.insert(2, {"action": "take", "side": "O"}), "no double has been offered"),
            (lambda h: h[1].update(dice=[6, 6]), "the opening roll gave"),
            (lambda h: h.append({"action": "opening", "dice": [3, 1]}), "opening roll after the game began")):
        data = copy.deepcopy(good)
        change(data["games"][0]["history"])
        with pytest.raises(RecordError, match=words):
            record_from_json(data)


# -- the engine's analyse ------------------------------------------------------------------------------------
def test_the_engines_analyse_is_the_commands_analysis(bot):
    from tapa_ai.engine.protocol import Engine

    state = bot_game(bot, seed=9, mistakes={2: 3}, moves=6)
    engine = Engine(bot=bot)
    status, answer = engine.respond({"cmd": "analyse", "record": games_file(state), "id": 4})
    assert status == 200 and answer["id"] == 4
    expected = analyse_record(record_from_json(games_file(state)), bot).to_dict()
    assert json.loads(json.dumps(answer))["games"] == json.loads(json.dumps(expected))["games"]
    status, answer = engine.respond({"cmd": "analyse", "record": games_file(state), "positions": False})
    assert status == 200 and "position" not in answer["games"][0]["turns"][0]
    for request, words in (({}, "missing 'record'"), ({"record": {"format": "x"}}, "not a game record"),
                           ({"record": games_file(state), "plies": 5}, "plies: must be an integer 0..2"),
                           ({"record": games_file(state), "extra": 1}, "unknown key"),
                           ({"record": games_file(random_game("backgammon", 2))},
                            "start a server with a backgammon model")):
        status, answer = engine.respond({"cmd": "analyse", **request})
        assert status == 400 and words in answer["error"], (request, answer)


def test_tapa_ai_match_records_games_for_analyse(tmp_path, capsys):
    from tapa_ai.cli import main

    path = tmp_path / "games.json"
    assert main(["match", "runner", "random", "--variant", "plakoto", "--games", "4", "--workers", "1", "--quiet",
                 "--record-games", str(path), "--record-count", "3"]) == 0
    assert f"recorded               3 games in {path}" in capsys.readouterr().out
    record = read_record(path)
    assert record.rules.name == "plakoto" and len(record.games) == 3 and record.players == {"A": "runner",
                                                                                              "B": "random"}
    assert record.games[0].turns[0].opening is False  # plakoto rolls afresh: the first roll is an ordinary one
    for options, words in ((["--cube"], "single games"), (["--record-count", "2"], "needs --record-games")):
        extra = [] if "--record-count" in options else ["--record-games", str(path)]
        assert main(["match", "runner", "random", "--games", "2", "--quiet", *options, *extra]) == 2
        assert words in capsys.readouterr().err


def test_hostile_records_get_an_error_never_a_fault(bot):
    """Mutated records (random values in random places, deep nesting, huge numbers): the engine's analyse
    answers 200 or 400 with a reason, never an internal error."""
    from tapa_ai.engine.protocol import Engine

    engine = Engine(bot=bot)
    good = games_file(bot_game(bot, seed=10, moves=6))
    rng = random.Random(10)
    values = [None, True, -1, 0, 7, 2**70, 1e308, "", "X", "24/18", [], [1, 2], [6, 6], {}, {"X": 1}, [[[[[]]]]],
              {"action": "move"}, {"action": "double", "side": "X"}, "tapa-ai/games", "plakoto"]

    def places(node, path=()):
        yield path
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            yield from places(child, path + (key,))

    paths = [path for path in places(good) if path]
    for _ in range(120):
        data = copy.deepcopy(good)
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(paths)
            node = data
            try:
                for key in path[:-1]:
                    node = node[key]
                node[path[-1]] = copy.deepcopy(rng.choice(values))
            except (KeyError, IndexError, TypeError):
                continue
        status, answer = engine.respond({"cmd": "analyse", "record": data, "positions": False})
        assert status in (200, 400), (status, answer)
        assert status == 200 or answer["error"] and "\n" not in answer["error"]
    nested = {"format": "tapa-ai/games", "version": 1, "variant": "tapa", "games": [{"history": []}]}
    deep = nested["games"][0]
    for _ in range(100):
        deep["x"] = {}
        deep = deep["x"]
    status, answer = engine.respond({"cmd": "analyse", "record": nested})
    assert status == 400 and "nests" in answer["error"]


def test_the_luck_of_a_bear_off_roll_is_measured_on_the_bear_off_database_as_the_bot_ranks_moves(bot):
    """In a bear-off the bot values moves by the database, not the network (they differ by several hundredths
    here), and the luck of the roll is measured on the same values: the best move's database value minus the
    mean over the 21 rolls of each roll's best."""
    from tapa_ai.bearoff.evaluate import exact_mask
    from tapa_ai.notation.json_position import position_from_json, position_to_json

    points = [""] * 24
    points[5], points[4], points[18], points[21] = "XX", "X", "O", "OO"  # X: 6- and 5-points; O: its 6- and 3-points
    start = position_from_json({"variant": "tapa", "points": points, "off": {"X": 12, "O": 12}, "turn": "X"})
    assert exact_mask(PositionBatch.from_positions([start])).all()
    state = GameState.new("tapa", opener="X", position=start).rolled((2, 1))
    state = state.play(state.moves[0])
    document = games_file(state)
    document["games"][0]["start"] = position_to_json(start)
    move = analyse_record(record_from_json(document), bot).moves[0]
    assert move.dice == (2, 1) and not move.opening and move.position == start
    analyzer = Analyzer(bot)
    mean = sum(n * best_0ply(analyzer, start, (a, b)) for a, b, n in DISTINCT_ROLLS) / 36
    assert move.luck == pytest.approx(best_0ply(analyzer, start, (2, 1)) - mean, abs=1e-6)
    # the network alone values these moves otherwise, by more than the test's tolerance
    afterstates = generate(PositionBatch.from_positions([start]), np.array([[2, 1]], dtype=np.int8))
    database, network = (evaluator.afterstate_distributions(afterstates) @ bot.points
                         for evaluator in (bot.evaluator, bot.evaluator.model))
    assert np.abs(database - network).max() > 0.01


# -- found by mutation testing of tapa_ai/analysis/analyse.py ---------------------------------------------------
def two_move_bear_off_record():
    """X, with checkers on its 6- and 1-points, rolls 6-5: 6/off 1/off wins, 6/1 1/off leaves a checker and O,
    with one checker on its 1-point, bears it off next (the only two legal moves). Game 1 plays the first, game 2
    the second, both from that position."""
    from tapa_ai.notation.json_position import position_from_json, position_to_json

    points = [""] * 24
    points[5], points[0], points[23] = "X", "X", "O"
    start = position_from_json({"variant": "tapa", "points": points, "off": {"X": 13, "O": 14}, "turn": "X"})
    games = []
    for number, wins in ((1, True), (2, False)):
        state = GameState.new("tapa", opener="X", position=start).rolled((6, 5))
        state = state.play(next(m for m in state.moves if (m.position.result is not None) == wins))
        games.append({"number": number, "players": {"X": "X", "O": "O"}, "start": position_to_json(start),
                      "history": [event.to_dict() for event in state.history]})
    return record_from_json(games_document(start.rules, {}, games, "a test"))


def test_a_move_with_two_legal_moves_is_rated_and_a_move_with_one_is_forced(bot):
    analysis = analyse_record(two_move_bear_off_record(), bot)
    best, worse = analysis.moves
    assert (best.legal, worse.legal) == (2, 2) and not best.forced and not worse.forced
    assert best.error == 0.0 and best.mark == "" and best.best == best.move
    assert worse.best == best.move and worse.error_mp > 80.0 and worse.mark == "blunder"
    totals = analysis.players["X"]
    assert (totals.moves, totals.rated, totals.errors, totals.blunders) == (2, 2, 0, 1)
    assert totals.to_dict()["error_rate_mp"] == pytest.approx(worse.error_mp / 2)
    # A single legal move is forced: not rated, no error rate.
    take = analyse_record(sure_gammon_record("take"), bot, plies=1)
    assert take.moves[0].legal == 1 and take.moves[0].forced
    assert take.players["X"].rated == 0 and take.players["X"].to_dict()["error_rate_mp"] == 0.0


def test_a_move_or_cube_decision_losing_exactly_a_threshold_is_not_marked_above_it(bot):
    record = two_move_bear_off_record()
    loss = analyse_record(record, bot).moves[1].error_mp
    at_error = analyse_record(record, bot, error_mp=loss, blunder_mp=loss + 100)
    at_blunder = analyse_record(record, bot, error_mp=0.0, blunder_mp=loss)
    assert at_error.moves[1].mark == "" and at_error.players["X"].errors == 0
    assert at_blunder.moves[1].mark == "error"
    assert (at_blunder.players["X"].errors, at_blunder.players["X"].blunders) == (1, 0)
    # The double of the sure gammon loses 1 point (1000 mp) against no double.
    cube_loss = analyse_record(sure_gammon_record("take"), bot, plies=1).games[0].entries[0].rating.error_mp
    assert cube_loss == pytest.approx(1000.0)
    at_error = analyse_record(sure_gammon_record("take"), bot, plies=1, error_mp=cube_loss, blunder_mp=5000.0)
    at_blunder = analyse_record(sure_gammon_record("take"), bot, plies=1, error_mp=0.0, blunder_mp=cube_loss)
    assert at_error.games[0].entries[0].rating.mark == "" and at_error.players["X"].cube_errors == 0
    assert at_blunder.games[0].entries[0].rating.mark == "error"
    assert (at_blunder.players["X"].cube_errors, at_blunder.players["X"].cube_blunders) == (1, 0)


def test_the_analysis_json_is_cubeless_version_1_and_scores_the_result_times_the_cube(bot):
    data = analyse_record(sure_gammon_record("take"), bot, plies=1).to_dict(positions=False)
    assert (data["format"], data["version"], data["cubeless"]) == ("tapa-ai/analysis", 1, True)
    game = data["games"][0]
    assert game["cube"] == 2 and game["result"]["points"] == 2 and game["result"]["score_points"] == 4
    assert [player["cube_error_total_mp"] for player in data["players"]] == pytest.approx([1000.0, 3000.0])


def test_a_match_cube_decision_after_the_crawford_game_is_rated_on_the_post_crawford_match_chances(bot):
    """To 3 points at 0-2, after the Crawford game: X doubles its sure gammon. No double leaves both 1-away
    (0.5), double/pass X 2-away against 1-away after the Crawford game (0.5: X doubles at once next game, a
    single game for the match), double/take wins the match."""
    from tapa_ai.cube.met import variant_met

    met = variant_met("tapa")
    analysis = analyse_record(sure_gammon_record("take", match_length=3, score=(0, 2)), bot, plies=1)
    double = analysis.games[0].entries[0]
    assert double.rating.units == "mwc"
    assert (double.rating.no_double, double.rating.double_take, double.rating.double_pass) == pytest.approx(
        (met.equity(1, 1, True), 1.0, met.equity(2, 1, True)), abs=1e-9)
    assert met.equity(2, 1, True) != pytest.approx(met.equity(2, 1, False))  # before the Crawford game: otherwise
    assert analysis.to_dict(positions=False)["games"][0]["score"] == {"X": 0, "O": 2}


def test_a_move_as_good_as_the_best_is_its_own_best_move(bot):
    """X, with checkers on its 2- and 1-points and O unable to finish in one roll, rolls 2-1: 2/off 1/off wins
    now and 2/1 1/off wins next roll for sure; the bear-off database values both at exactly 1 point."""
    from tapa_ai.notation.json_position import position_from_json, position_to_json

    points = [""] * 24
    points[1], points[0], points[18] = "X", "X", "OOOOO"
    start = position_from_json({"variant": "tapa", "points": points, "off": {"X": 13, "O": 10}, "turn": "X"})
    games = []
    for number in (1, 2):
        state = GameState.new("tapa", opener="X", position=start).rolled((2, 1))
        state = state.play(state.moves[number - 1])
        games.append({"number": number, "players": {"X": "X", "O": "O"}, "start": position_to_json(start),
                      "history": [event.to_dict() for event in state.history]})
    moves = analyse_record(record_from_json(games_document(start.rules, {}, games, "a test")), bot).moves
    assert sorted(move.move for move in moves) == ["2/1 1/off", "2/off 1/off"]
    assert all(move.equity == move.best_equity == 1.0 and move.best == move.move and move.error == 0.0
               for move in moves)
