"""The web board's saved rotation match (format ``tapa-ai/rotation-match``, docs/analysis.md) read and analysed
(issue 64): the fields of ``tapa-ai/tavli-match`` with ``rotation`` as :meth:`Rotation.to_data` writes it (a
preset's name, or the games, each a variant's name or ``{"variant": name, "rules": {...}}``), each game's variant
that game's of the rotation. Old ``tapa-ai/tavli-match`` files still read (tests/test_analyse_tavli.py).
"""

from __future__ import annotations

import io
import json

import pytest

from tapa_ai.analysis import RecordError, record_from_json
from tapa_ai.analysis.cli_analyse import analyse_command
from tapa_ai.bots.rotation import make_rotation_player
from tapa_ai.notation import format_move
from tapa_ai.notation.json_position import result_to_json
from tapa_ai.play import PlaySession
from tapa_ai.play.saves import save_game
from tapa_ai.rules.rotations import ROTATIONS, Rotation

TABLA = ROTATIONS["tabla"]
CUSTOM = Rotation.of(["tapa", "fevga"], changes={"tapa": {"backgammons": False}})
"""A rotation of other games, one with an option changed: written as a list in files."""


def played(rotation: Rotation, length: int, seed: int, games: int):
    """A match of ``rotation`` (runner against the first legal move) played until game ``games`` has begun."""
    session = PlaySession.rotation_match(make_rotation_player("runner", rotation), length, seed=seed,
                                         input=io.StringIO(""), output=io.StringIO(), colour=False)
    session.start()
    for _ in range(20000):
        match = session.match
        if match.is_over or match.game_number == games and len(match.game.history) > 4:
            return session
        game = match.game
        session.handle_line(format_move(game.moves[0]) if game.phase == "move" else "")
    raise AssertionError("the match did not get there")


def web_file(match) -> dict:
    """The match as the web board's *Save game* writes it (``tapaWeb.rotationRecord``, tapa_ai/web/app.js)."""
    games, score = [], {"X": 0, "O": 0}
    for number, game in enumerate(match.played + (match.game,), start=1):
        games.append({"number": number, "players": {"X": "human", "O": "runner"}, "match_length": match.length,
                      "score": dict(score), "history": [event.to_dict() for event in game.history],
                      "result": result_to_json(game.result) if game.is_over else None, "variant": game.rules.name})
        if game.is_over and game.winner is not None:
            score[game.winner] += game.points_won
    winner = match.winner
    return {"format": "tapa-ai/rotation-match", "version": 1, "source": "the web board",
            "rotation": match.rotation.to_data(), "length": match.length, "score": score, "winner": winner,
            "players": {"X": "human", "O": "runner"}, "games": games}


@pytest.fixture(scope="module")
def tabla():
    return played(TABLA, 3, seed=5, games=4).match  # four games: backgammon, gulbara, tapa, backgammon


@pytest.fixture(scope="module")
def custom():
    return played(CUSTOM, 3, seed=2, games=2).match


def test_the_web_boards_tabla_match_reads_as_the_same_games_as_the_play_save(tabla, tmp_path):
    web = web_file(tabla)
    assert web["rotation"] == "tabla"
    record = record_from_json(web, "file")
    assert record.rotation == TABLA and record.length == 3
    assert record.source == "a Tabla match to 3 saved by the web board"
    assert [game.rules for game in record.games] == [TABLA.rules(n) for n in (1, 2, 3, 4)]
    # the same games, scores and moves as tapa-ai play's save of the same match
    path = tmp_path / "save.json"
    session = PlaySession.rotation_match(make_rotation_player("runner", TABLA), 3, input=io.StringIO(""),
                                         output=io.StringIO(), colour=False)
    session.match = tabla
    save_game(path, session.saved_game())
    saved = record_from_json(json.loads(path.read_text()), "save")
    assert [g.score for g in record.games] == [g.score for g in saved.games]
    assert [[t.move for t in g.moves] for g in record.games] == [[t.move for t in g.moves] for g in saved.games]
    assert [g.result for g in record.games] == [g.result for g in saved.games]


def test_tapa_ai_analyse_rates_the_web_boards_tabla_match(tabla, tmp_path):
    path = tmp_path / "tabla-match.json"
    path.write_text(json.dumps(web_file(tabla)))
    out = io.StringIO()
    assert analyse_command(str(path), bot="net:tabla@0ply", quiet=True, output=out) == 0
    report = out.getvalue()
    assert report.splitlines()[0] == (f"{path}: a Tabla match to 3 saved by the web board (Tabla: backgammon, "
                                      "gulbara, tapa in turn)")
    assert "Game 2, gulbara (Tabla match to 3, score X " in report and "MWC lost" in report
    # a Tavli player cannot analyse a Tabla match: one line
    from tapa_ai.analysis import AnalysisError

    with pytest.raises(AnalysisError, match=r"^--bot: player 'net:tavli@0ply' plays the tavli rotation"):
        analyse_command(str(path), bot="net:tavli@0ply", quiet=True, output=io.StringIO())


def test_a_custom_rotation_with_changed_options_is_written_as_a_list_and_read_with_those_rules(custom, tmp_path):
    web = web_file(custom)
    assert web["rotation"] == [{"variant": "tapa", "rules": {"backgammons": False}}, "fevga"]
    record = record_from_json(web, "file")
    assert record.rotation == CUSTOM and record.source == "a rotation match to 3 saved by the web board"
    assert record.games[0].rules == CUSTOM.rules(1) and not record.games[0].rules.backgammons
    assert record.games[1].rules.name == "fevga"
    path = tmp_path / "custom.json"
    path.write_text(json.dumps(web))
    out = io.StringIO()
    assert analyse_command(str(path), bot="rotation:net:tapa@0ply,net:fevga@0ply", quiet=True, output=out) == 0
    assert "(Rotation: tapa, fevga in turn)" in out.getvalue().splitlines()[0]
    assert "Game 1, tapa (rotation match to 3, score X 0 O 0)" in out.getvalue()


@pytest.mark.parametrize("damage, words", [
    (lambda f: f.pop("rotation"), "file: missing 'rotation': a preset's name"),
    (lambda f: f.update(rotation="tablaa"), "file.rotation: must be a preset's name (\"tavli\", \"tabla\") or a list"),
    (lambda f: f.update(rotation=[]), "file.rotation: must be a list of 1 to 12 games"),
    (lambda f: f.update(rotation=["backgammon", "gulbara", "tapa", "shesh-besh"]),
     "file.rotation[3]: must be a variant's name or"),
    (lambda f: f.update(rotation=[{"variant": "tapa", "rules": {"cube": True}}]),
     "file.rotation: game tapa of the rotation: cube must be false"),
    (lambda f: f.update(rotation="tavli"), "file.games[0]: game 1 of the Tavli match is portes (the rotation portes, "
                                           "plakoto, fevga), got game 1 of 'backgammon'"),
    (lambda f: f.update(rotation=["backgammon", "tapa", "gulbara"]),
     "file.games[1]: game 2 of the rotation match is tapa (the rotation backgammon, tapa, gulbara), got game 2 of "
     "'gulbara'"),
    (lambda f: f["games"][2].update(variant="fevga"), "file.games[2]: game 3 of the Tabla match is tapa"),
    (lambda f: f["score"].update(X=f["score"]["X"] + 1), "but the games make"),
    (lambda f: f.update(format="tapa-ai/rotation-matches"), "is not a game record"),
    (lambda f: f.update(length=0), "file.length: must be an integer 1..25, got 0"),
    (lambda f: f.update(rotaton="tabla"), "unknown key 'rotaton'; did you mean 'rotation'?"),
])
def test_a_malformed_rotation_match_file_is_one_clear_line(tabla, damage, words):
    data = json.loads(json.dumps(web_file(tabla)))
    damage(data)
    with pytest.raises(RecordError) as caught:
        record_from_json(data, "file")
    message = str(caught.value)
    assert words in message and "\n" not in message, message


def test_an_old_tavli_match_file_keeps_its_own_shape(tabla):
    """``tapa-ai/tavli-match`` is the Tavli rotation's; a rotation given as data is the new format's."""
    data = web_file(tabla)
    old = {**data, "format": "tapa-ai/tavli-match"}
    with pytest.raises(RecordError, match=r"^file.rotation: must be a list of 3 items, got 'tabla'"):
        record_from_json(old, "file")
    old["rotation"] = ["portes", "plakoto", "fevga"]
    with pytest.raises(RecordError, match=r"^file.games\[0\]: game 1 of the Tavli match is portes"):
        record_from_json(old, "file")
    old["rotation"] = ["fevga", "plakoto", "portes"]
    with pytest.raises(RecordError, match=r"^file.rotation: a tapa-ai/tavli-match file is of \['portes', 'plakoto', "
                                          r"'fevga'\], got \['fevga', 'plakoto', 'portes'\]$"):
        record_from_json(old, "file")


def test_the_engine_analyses_the_games_of_a_tabla_match_its_model_plays(tabla):
    """The engine protocol's ``analyse`` of a rotation's match: the games of the engine's own board game (or the one
    ``game`` names), each move by the match-winning chance at its game's score; none of its games is one line."""
    from tapa_ai.engine.protocol import Engine

    record = web_file(tabla)
    status, answer = Engine(bot="net:tapa@0ply").respond({"cmd": "analyse", "record": record, "positions": False})
    assert status == 200, answer
    assert [game["number"] for game in answer["games"]] == [3]  # the Tapa game of four
    assert answer["source"].endswith("its tapa games") and answer["units"] == "mwc"
    status, answer = Engine(bot="net:backgammon@0ply").respond({"cmd": "analyse", "record": record, "game": 4,
                                                                 "positions": False})
    assert status == 200, answer
    assert [game["number"] for game in answer["games"]] == [4]
    status, answer = Engine(bot="net:fevga@0ply").respond({"cmd": "analyse", "record": record})
    assert status != 200 and "plays none of its games" in answer["error"] and "\n" not in answer["error"]
