"""``tapa-ai analyse FILE`` on a Tavli match saved by ``tapa-ai play --tavli N``: every game with the network of
its own variant, each move by the match-winning chance at its game's score, the totals over the match.

The numbers are checked against the engine's :class:`~tapa_ai.analysis.analyzer.Analyzer` ranking the same
position at the same score by the Tavli match equity table (the engine protocol's ``"tavli"`` path).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from tapa_ai.analysis import AnalysisError, RecordError, analyse_record, analyse_rotation_record, read_record
from tapa_ai.analysis import record_from_json
from tapa_ai.analysis.analyzer import Analyzer
from tapa_ai.analysis.cli_analyse import analyse_command, rotation_bots
from tapa_ai.bots.rotation import make_rotation_player
from tapa_ai.cube.rotation_met import rotation_met
from tapa_ai.notation import format_move
from tapa_ai.play import PlaySession
from tapa_ai.rules.rotations import ROTATIONS

SPEC = "net:tavli@0ply"
TAVLI = ROTATIONS["tavli"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A Tavli match to 3 of a person (the first legal move) against runner, saved in its second game."""
    path = tmp_path_factory.mktemp("tavli") / "match.json"
    out = io.StringIO()
    session = PlaySession.rotation_match(make_rotation_player("runner", TAVLI), 3, seed=6, input=io.StringIO(""),
                                         output=out, colour=False)
    session.start()
    for _ in range(5000):
        game = session.match.game
        if session.match.game_number == 2 and session.turn is not None and len(game.history) > 8:
            break
        session.handle_line(format_move(game.moves[0]) if game.phase == "move" else "")
    session.handle_line(f"save {path}")
    assert path.is_file() and session.match.game_number == 2
    return path, session.match


@pytest.fixture(scope="module")
def analysed(saved):
    path, _ = saved
    record = read_record(path)
    bots = rotation_bots(SPEC, record)
    return record, bots, analyse_rotation_record(record, bots)


def test_every_game_of_a_saved_tavli_match_is_read_with_its_own_rules_and_score(saved):
    path, match = saved
    record = read_record(path)
    assert record.rotation == TAVLI and record.length == 3
    assert record.source == "a Tavli match to 3 saved by tapa-ai play"
    first, second = record.games
    assert [game.rules.name for game in record.games] == ["portes", "plakoto"]
    assert [game.number for game in record.games] == [1, 2]
    assert first.players == second.players == {"X": "human", "O": "runner"}
    assert first.score == (0, 0) and first.match_length == second.match_length == 3
    assert second.score == match.score  # the score before game 2 is game 1's points
    assert first.result == match.played[0].result and first.ending == "move" and second.ending == "unfinished"
    moves = [sum(event.action == "move" for event in game.history) for game in (match.played[0], match.game)]
    assert [len(game.moves) for game in record.games] == moves


def test_each_move_is_rated_by_the_match_winning_chance_at_its_games_score(analysed):
    record, bots, analysis = analysed
    assert bots["portes"].rules.name == "portes"  # the backgammon model playing Portes' points
    assert bots["plakoto"].rules.name == "plakoto" and "fevga" not in bots  # no fevga game in the file
    assert analysis.units == "mwc" and [game.game.number for game in analysis.games] == [1, 2]
    table = rotation_met(TAVLI)
    checked = 0
    for game in analysis.games:
        rec = game.game
        analyzer = Analyzer(bots[rec.rules.name])
        rated = [entry for entry in game.entries if not entry.forced]
        for entry in rated[:6] + rated[-3:]:
            index = "XO".index(entry.side)
            away, opponent = 3 - rec.score[index], 3 - rec.score[1 - index]
            values = table.class_values(analyzer.points, [away], [opponent], rec.number - 1)[0]
            ranked, _ = analyzer.rank(entry.position, entry.dice, plies=0, class_values=values)
            played = next(move for move in ranked if move.move == entry.move)
            assert entry.units == "mwc"
            assert entry.equity == pytest.approx(played.match_winning_chance, abs=1e-9)
            assert entry.best_equity == pytest.approx(ranked[0].match_winning_chance, abs=1e-9)
            assert entry.error == pytest.approx(ranked[0].match_winning_chance - played.match_winning_chance,
                                                abs=1e-9)
            single = table.class_values(np.array([1.0, -1.0]), [away], [opponent], rec.number - 1)[0]
            scale = (single[0] - single[1]) / 2
            assert entry.scale == pytest.approx(scale)
            normalized = 1000 * entry.error / scale
            assert entry.mark == ("blunder" if normalized > 80 else "error" if normalized > 20 else "")
            checked += 1
    assert checked >= 12
    # the totals over the match are the sums of the moves of both games, per player
    for name, totals in analysis.players.items():
        entries = [entry for game in analysis.games for entry in game.entries if entry.player == name]
        assert totals.units == "mwc" and totals.moves == len(entries)
        assert totals.error == pytest.approx(sum(entry.error for entry in entries if not entry.forced))
        assert totals.luck == pytest.approx(sum(entry.luck for entry in entries))
        assert totals.blunders == sum(entry.mark == "blunder" for entry in entries)
    assert set(analysis.players) == {"human", "runner"}


def test_the_command_reports_match_winning_chances_and_writes_the_json(saved, tmp_path):
    path, match = saved
    out = io.StringIO()
    target = tmp_path / "analysis.json"
    assert analyse_command(str(path), bot=SPEC, json_path=str(target), quiet=True, output=out) == 0
    report = out.getvalue()
    lines = report.splitlines()
    assert lines[0] == f"{path}: a Tavli match to 3 saved by tapa-ai play (Tavli: portes, plakoto, fevga in turn)"
    assert lines[1].startswith("analysed by net:backgammon@0ply (portes), net:plakoto@0ply (plakoto) at 0 plies; "
                               "moves by the match-winning chance (MWC) at each game's score")
    assert "Game 1, portes (Tavli match to 3, score X 0 O 0): X human, O runner." in report
    x, o = match.score
    assert f"Game 2, plakoto (Tavli match to 3, score X {x} O {o}): X human, O runner. not finished." in report
    assert "MWC lost" in report and "%" in report
    data = json.loads(target.read_text())
    assert data["variant"] == "tavli" and data["units"] == "mwc"
    assert data["rotation_match"] == {"rotation": "tavli", "length": 3}
    assert [(game["number"], game["variant"]) for game in data["games"]] == [(1, "portes"), (2, "plakoto")]
    move = next(turn for turn in data["games"][0]["turns"] if not turn["forced"])
    assert {"match_winning_chance", "best_match_winning_chance", "error_mwc", "luck_mwc"} <= set(move)
    assert "equity" not in move
    players = {player["player"]: player for player in data["players"]}
    assert players["human"]["units"] == "mwc" and players["human"]["rated_moves"] > 0


def test_a_tavli_match_needs_the_network_of_each_variant_and_a_well_formed_file(saved, tmp_path):
    path, _ = saved
    record = read_record(path)
    with pytest.raises(AnalysisError, match="the record is portes, and the analysing bot .* plays tapa"):
        analyse_command(str(path), bot="net:tapa@0ply", quiet=True, output=io.StringIO())
    with pytest.raises(AnalysisError, match="more than one variant"):
        analyse_record(record, rotation_bots(SPEC, record)["portes"])
    data = json.loads(path.read_text())
    broken = json.loads(json.dumps(data))
    broken["rotation_match"]["played"][0]["variant"] = "fevga"
    with pytest.raises(RecordError, match=r"^file.rotation_match.played\[0\].variant: game 1 of the tavli match is "
                                          "portes, got 'fevga'$"):
        record_from_json(broken, "file")
    broken = json.loads(json.dumps(data))
    broken["rotation_match"] = "three"
    with pytest.raises(RecordError, match=r"^file.rotation_match: must be an object"):
        record_from_json(broken, "file")
    broken = json.loads(json.dumps(data))
    broken["variant"] = "portes"
    with pytest.raises(RecordError, match=r"^file.variant: 'portes' disagrees with file.match \(game 2 of the "
                                          r"tavli match, plakoto\)$"):
        record_from_json(broken, "file")


def web_tavli_file(match) -> dict:
    """The Tavli match as the web board's *Save game* wrote it before rotations were data (format
    tapa-ai/tavli-match, docs/web.md): the rotation-match file's games under the older format and rotation."""
    from tests.test_analyse_tabla import web_file

    return {**web_file(match), "format": "tapa-ai/tavli-match", "rotation": ["portes", "plakoto", "fevga"],
            "winner": None}


def test_the_web_boards_saved_tavli_match_is_read_as_the_same_match(saved):
    """The web board's Tavli file reads through the one reader (tapa-ai analyse, the engine's analyse) as the
    same games, variants, scores and moves as tapa-ai play's save of the same match; a file whose scores or
    rotation the games do not make is refused in one line."""
    path, match = saved
    played = read_record(path)
    web = web_tavli_file(match)
    record = record_from_json(web)
    assert record.rotation == TAVLI and record.length == 3
    assert record.source == "a Tavli match to 3 saved by the web board"
    assert [g.rules.name for g in record.games] == [g.rules.name for g in played.games] == ["portes", "plakoto"]
    assert [g.score for g in record.games] == [g.score for g in played.games]
    assert [g.match_length for g in record.games] == [3, 3]
    assert [[t.move for t in g.moves] for g in record.games] == [[t.move for t in g.moves] for g in played.games]
    assert [g.result for g in record.games] == [g.result for g in played.games]
    for damage, words in (
            (lambda f: f["games"][1].__setitem__("score", {"X": 2, "O": 2}), "but the games before it make"),
            (lambda f: f["games"][1].__setitem__("variant", "fevga"), "game 2 of the Tavli match is plakoto"),
            (lambda f: f["score"].__setitem__("X", 2), "but the games make"),
            (lambda f: f.__setitem__("length", 26), "length: must be an integer 1..25, got 26"),
            (lambda f: f.__setitem__("lenght", 3), "unknown key 'lenght'; did you mean 'length'?")):
        damaged = json.loads(json.dumps(web))
        damage(damaged)
        with pytest.raises(RecordError, match=words):
            record_from_json(damaged)


def test_a_play_save_of_a_tavli_match_from_before_rotations_were_data_is_analysed():
    """tests/data/old_tavli_save.json: the ``tavli`` key of older saves (format ``tapa-ai/tavli``), read as the
    Tavli rotation's match, rated by the Tavli table like a new save."""
    from pathlib import Path

    path = Path(__file__).resolve().parent / "data" / "old_tavli_save.json"
    record = read_record(path)
    assert record.rotation == TAVLI and record.length == 3
    assert record.source == "a Tavli match to 3 saved by tapa-ai play"
    assert [game.rules.name for game in record.games] == ["portes", "plakoto"]
    out = io.StringIO()
    assert analyse_command(str(path), bot=SPEC, quiet=True, output=out) == 0
    report = out.getvalue()
    assert report.splitlines()[0].endswith("a Tavli match to 3 saved by tapa-ai play (Tavli: portes, plakoto, fevga "
                                           "in turn)")
    assert "Game 1, portes (Tavli match to 3, score X 0 O 0): X human, O runner." in report
