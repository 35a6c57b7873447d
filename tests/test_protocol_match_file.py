"""The engine's ``read_match`` command (docs/protocol.md, ``read_match``): a match file's text (GNU Backgammon's
SGF, the .mat text) or a saved record (JSON) read by the project's one reader, replayed, and answered as the web
board's own record with where the match stands (the same state as ``tapa-ai play --load``); bad input is one
line."""

from __future__ import annotations

import io
import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tapa_ai.analysis.match_state import match_file_state
from tapa_ai.analysis.records import read_record, read_saved
from tapa_ai.arena.match import run_match
from tapa_ai.engine.protocol import Engine, serve
from tapa_ai.matchfiles import from_record, match_text, parse_match_text, replay_match, to_document
from tapa_ai.notation.json_position import position_to_json
from tapa_ai.play.saves import read_match_save
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.position import start_position
from tapa_ai.rules.rotations import ROTATIONS, Rotation
from tapa_ai.schema import check
from tests.servers import serving

DATA = Path(__file__).parent / "data" / "matchfiles"
GNUBG_MAT = (DATA / "gnubg_match3.mat").read_text(encoding="utf-8")
GNUBG_SGF = (DATA / "gnubg_match3.sgf").read_text(encoding="utf-8")
ANALYSIS = re.compile(r"(?<=[;\]\s])(?:A|DA|MR|GS|LU|C)(?:\s*\[(?:[^\]\\]|\\.)*\])+", re.S)
"""gnubg's analysis and comments in an SGF file: what the reader skips, and the web board leaves out of a file
over the request limit (app.js stripSgfAnalysis)."""


@pytest.fixture(scope="module")
def engine():
    return Engine(generator="reference")


def ask(engine, **request):
    """The engine's (status, answer) to a read_match request; a 200's answer checked against its schema."""
    status, answer = engine.respond({"cmd": "read_match", **request})
    if status == 200:
        check(answer, "protocol", "response_read_match")
    return status, answer


def error_of(engine, **request):
    status, answer = ask(engine, **request)
    assert status == 400, answer
    assert "\n" not in answer["error"]
    return answer["error"]


def turns_of(record_document):
    """Each game's turns as the one replay reads them (side, action, dice, move)."""
    record = read_saved(record_document, "record").record
    return [[(t.side, t.action, t.dice, t.move) for t in game.turns] for game in record.games]


def board_games(document):
    """The games of a reader's document as the web board records them (app.js newGame's entry)."""
    games = []
    for item in document["games"]:
        entry = {"number": item["number"], "players": item["players"]}
        if "variant" not in item:
            entry["match_length"] = item["match_length"]
        entry.update({"score": item["score"], "history": item["history"], "result": item.get("result")})
        if "variant" in item:
            entry["variant"] = item["variant"]
        elif item.get("crawford"):
            entry["crawford"] = True
        games.append(entry)
    return games


def game_of(state):
    """The answer's ``game`` of the last game of ``state`` (a MatchState)."""
    game = state.game
    return {"number": state.game_number, "variant": game.rules.name, "over": game.is_over, "phase": game.phase,
            "turn": None if game.is_over else game.side_to_act, "dice": list(game.dice) if game.dice else None,
            "cube": {"value": game.cube_value, "owner": game.cube_owner}, "crawford": game.crawford,
            "result": None if game.result is None else {"winner": game.result.winner, "kind": game.result.kind,
                                                        "points": game.result.points},
            "position": position_to_json(game.position)}


def test_gnubgs_mat_is_the_boards_record_at_the_match_end(engine, tmp_path):
    status, answer = ask(engine, name="gnubg_match3.mat", text=GNUBG_MAT)
    assert status == 200
    document = to_document(parse_match_text(GNUBG_MAT, "gnubg_match3.mat"), "m")
    without_result = [{k: v for k, v in game.items() if k != "result"} for game in answer["record"]["games"]]
    assert {**answer["record"], "games": without_result} == {
        "format": "tapa-ai/games", "version": 1, "variant": "backgammon", "source": "the web board", "players": {},
        "games": [{k: v for k, v in game.items() if k != "result"} for game in board_games(document)]}
    assert list(answer["record"]["games"][0]) == ["number", "players", "match_length", "score", "history", "result"]
    assert [g["players"] for g in answer["record"]["games"]] == [{"X": "root", "O": "gnubg"}] * 2
    assert [g["score"] for g in answer["record"]["games"]] == [{"X": 0, "O": 0}, {"X": 1, "O": 0}]
    # the results as the replay finds them: game 1 ends by a drop (none in the file), game 2 by its moves
    assert [g["result"] for g in answer["record"]["games"]] == [{"winner": "X", "kind": "single", "points": 1}] * 2
    assert [g.get("result") for g in document["games"]] == [None, {"winner": "X", "kind": "single", "points": 1}]
    # where the match stands: tapa-ai play --load's state of the same file, exactly
    (tmp_path / "m.mat").write_text(GNUBG_MAT)
    loaded = read_match_save(tmp_path / "m.mat").match
    assert {key: value for key, value in answer.items() if key != "record"} == {
        "name": "gnubg_match3.mat", "kind": "mat", "variant": "backgammon", "rotation": None, "length": 3,
        "score": {"X": 3, "O": 0}, "games": 2, "post_crawford": False, "match_over": True, "winner": "X",
        "game": game_of(loaded), "next": None}
    assert answer["game"]["cube"] == {"value": 2, "owner": "X"} and answer["game"]["phase"] == "over"
    # the record is what Save game writes: read back by the one reader to the same match
    again = match_file_state(answer["record"], "saved")
    assert (again.score, again.length, again.game_number, again.is_over) == ((3, 0), 3, 2, True)


def test_gnubgs_sgf_without_its_analysis_is_the_same_match_and_the_whole_file_is_too_large(engine):
    assert len(GNUBG_SGF.encode()) == len(GNUBG_SGF) == 113_649
    assert error_of(engine, name="gnubg_match3.sgf", text=GNUBG_SGF).startswith(
        "text: must be a string of at most 65536 characters, got '(;FF[4]GM[6]")
    text = ANALYSIS.sub("", GNUBG_SGF)
    assert len(text) < 2000 and not re.search(r"(?<=[;\]\s])(?:A|DA|MR|GS|LU|C)\[", text)
    status, answer = ask(engine, name="gnubg_match3.sgf", text=text)
    assert status == 200 and answer["kind"] == "sgf"
    _, from_mat = ask(engine, name="gnubg_match3.mat", text=GNUBG_MAT)
    assert {k: v for k, v in answer.items() if k not in ("record", "name", "kind")} == \
        {k: v for k, v in from_mat.items() if k not in ("record", "name", "kind")}
    assert turns_of(answer["record"]) == turns_of(from_mat["record"])  # the same games, move by move
    assert answer["record"]["games"][0]["history"][2] == {"action": "move", "side": "O", "dice": [6, 6],
                                                          "move": "13/7 13/7 8/2 8/2"}


def test_an_unfinished_last_game_goes_on_from_its_position_with_its_cube(engine, tmp_path):
    cut = GNUBG_MAT[:GNUBG_MAT.index(" 13) 65")]  # game 2 stops in the middle: O to roll, X owns the cube at 2
    status, answer = ask(engine, name="cut.mat", text=cut)
    assert status == 200
    (tmp_path / "cut.mat").write_text(cut)
    loaded = read_match_save(tmp_path / "cut.mat").match
    assert answer["game"] == game_of(loaded)
    assert (answer["game"]["over"], answer["game"]["phase"], answer["game"]["turn"], answer["game"]["dice"],
            answer["game"]["cube"]) == (False, "roll", "O", None, {"value": 2, "owner": "X"})
    assert (answer["score"], answer["match_over"], answer["next"], answer["games"]) == \
        ({"X": 1, "O": 0}, False, None, 2)
    assert answer["record"]["games"][1]["result"] is None
    assert [e["action"] for e in answer["record"]["games"][1]["history"]][8:12] == ["move", "double", "take", "move"]


def test_a_finished_game_is_followed_by_the_next_at_the_score(engine):
    text = (DATA / "fibs_style.mat").read_text(encoding="utf-8")
    status, answer = ask(engine, name="fibs_style.mat", text=text)
    assert status == 200
    assert (answer["length"], answer["score"], answer["games"], answer["match_over"]) == (3, {"X": 1, "O": 0}, 1, False)
    assert answer["game"]["over"] and answer["game"]["result"] == {"winner": "X", "kind": "single", "points": 1}
    assert answer["next"] == {"number": 2, "variant": "backgammon", "crawford": False, "opener": None}


@pytest.fixture(scope="module")
def plakoto_games(tmp_path_factory):
    """Two arena games of plakoto, as tapa-ai match --record-games writes them (JSON), and the project's .mat and
    SGF of them."""
    folder = tmp_path_factory.mktemp("plakoto")
    rules = variant_rules("plakoto")
    run_match("heuristic", "random", rules, 2, seed=3, progress=False, record_games=2).write_games(
        folder / "pl.json", rules)
    record = read_record(folder / "pl.json")
    return (folder / "pl.json").read_text(), match_text(from_record(record), "mat"), match_text(from_record(record),
                                                                                                 "sgf")


def test_a_plakoto_file_of_the_projects_writer_in_every_format(engine, plakoto_games):
    games_json, mat, sgf = plakoto_games
    answers = {}
    for name, text in (("pl.json", games_json), ("pl.mat", mat), ("pl.sgf", sgf), ("pl.txt", mat)):
        status, answer = ask(engine, name=name, text=text)
        assert status == 200, answer
        answers[name] = answer
    assert [answers[n]["kind"] for n in answers] == ["json", "mat", "sgf", "mat"]
    first = answers["pl.mat"]
    assert first["record"]["variant"] == "plakoto" and first["record"]["format"] == "tapa-ai/games"
    assert (first["variant"], first["rotation"], first["length"], first["games"], first["score"]) == \
        ("plakoto", None, 0, 2, {"X": 0, "O": 2})
    assert first["game"]["result"] == {"winner": "O", "kind": "mother", "points": 2}
    assert first["next"] == {"number": 3, "variant": "plakoto", "crawford": False, "opener": "O"}  # the winner opens
    for name, answer in answers.items():
        assert {k: v for k, v in answer.items() if k not in ("record", "name", "kind")} == \
            {k: v for k, v in first.items() if k not in ("record", "name", "kind")}, name
        assert turns_of(answer["record"]) == turns_of(first["record"]), name
    assert turns_of(first["record"]) == turns_of(json.loads(games_json))


def _rotation_file(rotation, kind):
    from tests.test_matchfiles import _rotation_record

    return match_text(from_record(_rotation_record(rotation, seed=5)), kind)


def test_a_tabla_match_is_the_boards_rotation_match_record(engine):
    text = _rotation_file(ROTATIONS["tabla"], "mat")
    status, answer = ask(engine, name="tabla.mat", text=text)
    assert status == 200
    match = replay_match(parse_match_text(text, "tabla.mat"), "tabla.mat", match_file_state)
    record = answer["record"]
    assert record["format"] == "tapa-ai/rotation-match" and record["rotation"] == "tabla"
    assert (record["length"], record["score"], record["winner"]) == (3, {"X": 1, "O": 1}, None)
    assert [g["variant"] for g in record["games"]] == ["backgammon", "gulbara", "tapa"]
    assert all("match_length" not in g for g in record["games"])
    assert (answer["variant"], answer["rotation"], answer["length"], answer["score"], answer["games"]) == \
        (None, "tabla", 3, {"X": 1, "O": 1}, 3)
    assert answer["game"] == game_of(match.match)
    assert answer["game"]["position"]["rules"] == {"cube": False, "crawford": False}
    assert (answer["game"]["variant"], answer["game"]["phase"], answer["game"]["turn"]) == ("tapa", "roll", "X")
    again = match_file_state(record, "saved")  # Save game's file of it reads back to the same match
    assert (again.score, again.game_number, again.rotation) == (match.score, 3, ROTATIONS["tabla"])
    # the games of a custom rotation are a list
    status, answer = ask(engine, name="tf.sgf", text=_rotation_file(Rotation.of(["tapa", "fevga"]), "sgf"))
    assert status == 200 and answer["rotation"] == ["tapa", "fevga"] and answer["record"]["rotation"] == ["tapa", "fevga"]


def test_matches_the_board_cannot_play_are_refused_naming_them(engine, tmp_path):
    changed = Rotation.of(["tapa", "fevga"], changes={"tapa": {"backgammons": False}})
    assert error_of(engine, name="custom.sgf", text=_rotation_file(changed, "sgf")) == (
        "custom.sgf: a rotation match of games with rule options changed ([{\"variant\": \"tapa\", \"rules\": "
        "{\"backgammons\": false}}, \"fevga\"]): the board plays a preset rotation or a list of the family's games, "
        "each with its variant's options")
    rules = variant_rules("backgammon").replace(cube=False, crawford=False)
    run_match("heuristic", "random", rules, 2, seed=3, progress=False, record_games=2).write_games(
        tmp_path / "bg.json", rules)
    assert error_of(engine, name="bg.json", text=(tmp_path / "bg.json").read_text()) == (
        "bg.json: a backgammon match with rule options other than backgammon's (crawford, cube): the board plays "
        "each variant with its own options only")
    assert error_of(engine, name="long.mat", text=GNUBG_MAT.replace(" 3 point match", " 31 point match")) == \
        "long.mat: game 1.match_length: must be an integer 0..25, got 31"


def test_bad_input_is_one_line(engine):
    illegal = GNUBG_MAT.replace("  4) 66: 24/18 24/18 13/7 13/7", "  4) 66: 24/18 24/18 13/7 13/1")
    assert error_of(engine, name="bad.mat", text=illegal) == (
        "bad.mat: game 2, move 4 (O 6-6 '24/18 24/18 13/7 13/1'): an illegal move: move text '24/18 24/18 13/7 "
        "13/1' is not a legal move with dice [6, 6] (8 legal moves, e.g. '24/18 24/18 13/7 13/7')")
    sgf = ANALYSIS.sub("", GNUBG_SGF).replace(";B[11lmlmmnmn]", ";B[11lmlmmnmo]", 1)
    assert re.fullmatch(r"bad\.sgf: game 1, move 17 \(X 1-1 .*\): an illegal move: .*",
                        error_of(engine, name="bad.sgf", text=sgf))
    assert error_of(engine, name="notes.txt", text="hello\nworld") == (
        "notes.txt: not a match file or a saved game: neither GNU Backgammon's SGF (a game tree '(;...'), a .mat "
        "match (a 'N point match' or 'Game 1' line) nor a JSON record (docs/match-files.md)")
    assert error_of(engine, name="e.sgf", text="  \n") == "e.sgf: the text is empty: nothing to open"
    assert error_of(engine, text="") == "file: the text is empty: nothing to open"
    assert error_of(engine, name="n.sgf", text="(;FF[4]GM[1])") == \
        "n.sgf: game tree 1 is GM['1'], not a backgammon game (GM[6])"
    assert error_of(engine, name="a.json", text="{") == \
        "a.json: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    assert error_of(engine, name="x.json", text='{"format": "chess"}').startswith(
        "x.json.format: 'chess' is not a game record; expected 'tapa-ai/play'")
    assert error_of(engine, name="p.json", text=json.dumps(position_to_json(start_position("tapa")))) == (
        "p.json: a position, not a game: there are no moves to analyse: nothing to open on the board, which opens "
        "games and matches")
    assert error_of(engine, name="x.sgf", text="x" * 70_000) == ("text: must be a string of at most 65536 characters, "
                                                                 "got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... "
                                                                 "(70,000 characters)")
    assert error_of(engine, name="x.sgf", text="é" * 40_000) == (
        "x.sgf: the text is 80,000 bytes, more than the 65,536 one request may send (a match file without gnubg's "
        "analysis is a few kilobytes)")
    # the request's shape: its declared schema
    assert error_of(engine, name="a.mat", text=5) == "text: must be a string of at most 65536 characters, got 5"
    assert error_of(engine, name=7, text="x") == "name: must be a string of at most 255 characters, got 7"
    assert error_of(engine, name="a.mat") == "missing 'text': a string of at most 65536 characters"
    assert error_of(engine, text="x", txt="y") == \
        "unknown key 'txt'; did you mean 'text'? (known: cmd, id, name, text)"


def test_the_stdin_engine_and_http_answer_it_with_the_servers_body_limit():
    line = json.dumps({"cmd": "read_match", "name": "gnubg_match3.mat", "text": GNUBG_MAT, "id": 4}) + "\n"
    out = io.StringIO()
    serve(io.BytesIO(line.encode()), out, generator="reference")
    answer = json.loads(out.getvalue())
    assert answer["id"] == 4 and answer["score"] == {"X": 3, "O": 0} and answer["winner"] == "X"
    with serving() as server:
        def post(body: bytes):
            request = urllib.request.Request(server.url + "/v1/read_match", data=body,
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as error:
                return error.code, json.loads(error.read())

        status, answer = post(json.dumps({"name": "gnubg_match3.sgf", "text": ANALYSIS.sub("", GNUBG_SGF)}).encode())
        assert status == 200 and answer["score"] == {"X": 3, "O": 0} and answer["kind"] == "sgf"
        body = json.dumps({"name": "gnubg_match3.sgf", "text": GNUBG_SGF}).encode()
        status, answer = post(body)
        assert status == 413 and answer == {"error": f"request body is {len(body)} bytes, more than the limit of "
                                                     "65536 (a position takes about 400)"}
        status, answer = post(json.dumps({"name": "bad.mat", "text": "Game 1\n 1) 99: 1/2"}).encode())
        assert status == 400 and "\n" not in answer["error"] and answer["error"].startswith("bad.mat: ")


def gulbara_cut_in_a_cascade(folder: Path) -> tuple[str, list]:
    """A Gul Bara record of the arena (tapa-ai/games JSON) cut after the first stage of a cascade: the same side
    plays the next stage with no roll. Its text and the history kept."""
    rules = variant_rules("gulbara")
    run_match("heuristic", "random", rules, 2, seed=3, progress=False, record_games=2).write_games(
        folder / "gulbara.json", rules)
    document = json.loads((folder / "gulbara.json").read_text())
    history = document["games"][0]["history"]
    cut = next(i for i in range(1, len(history)) if history[i]["action"] == history[i - 1]["action"] == "move" and
               history[i]["side"] == history[i - 1]["side"])
    game = {**document["games"][0], "history": history[:cut], "result": None}
    return json.dumps({**document, "games": [game]}), history[:cut]


def test_a_gul_bara_game_cut_inside_a_cascade_goes_on_with_its_next_stage(engine, tmp_path):
    text, history = gulbara_cut_in_a_cascade(tmp_path)
    status, answer = ask(engine, name="gulbara.json", text=text)
    assert status == 200
    assert history[-1] == {"action": "move", "side": "X", "dice": [5, 5], "move": "24/19 20/15 15/10 10/5"}
    game = answer["game"]
    assert (game["variant"], game["over"], game["phase"], game["turn"], game["dice"]) == \
        ("gulbara", False, "move", "X", [6, 6])
    assert game["position"]["cascade"] == {"number": 6, "steps": 4, "remainder": False}
    assert game["position"]["turns"] == {"X": 3, "O": 3}
    assert answer["record"]["games"][0]["history"] == history and answer["record"]["games"][0]["result"] is None
    (tmp_path / "gulbara.json").write_text(text)
    assert game == game_of(match_file_state(json.loads(text), "gulbara.json"))


def test_a_tapa_ai_play_save_of_a_tabla_match_opens_where_it_was_saved(engine, tmp_path):
    from tapa_ai.play.saves import SavedGame, save_game
    from tests.test_analyse_tabla import played

    session = played(ROTATIONS["tabla"], 3, seed=5, games=3)
    save_game(tmp_path / "save.json", SavedGame(session.match, human="X", bot="runner"))
    status, answer = ask(engine, name="save.json", text=(tmp_path / "save.json").read_text())
    assert status == 200, answer
    match = session.match
    assert (answer["kind"], answer["rotation"], answer["length"], answer["games"]) == ("json", "tabla", 3, 3)
    assert answer["score"] == {"X": match.score[0], "O": match.score[1]}
    assert answer["game"] == game_of(match.match)
    assert [g["variant"] for g in answer["record"]["games"]] == ["backgammon", "gulbara", "tapa"]
    assert [g["players"] for g in answer["record"]["games"]] == [{"X": "human", "O": "runner"}] * 3
    played_games = match.played + (match.game,)
    assert [[e for e in g["history"] if e["action"] == "move"] for g in answer["record"]["games"]] == \
        [[e.to_dict() for e in game.history if e.action == "move"] for game in played_games]


def test_the_protocol_docs_example_is_the_engines_answer(engine):
    text = (Path(__file__).parent.parent / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = text[text.index("### `read_match`"):]
    request_line, answer_line = re.findall(r"```json\n(.*?)\n```", section, re.S)[:2]
    request = json.loads(request_line)
    status, answer = engine.respond(request)
    assert status == 200
    shown = json.loads(re.sub(r'"position":\{\.\.\.[^{}]*\}', '"position":"POSITION"', answer_line))
    assert shown["game"].pop("position") == "POSITION"
    assert answer["game"].pop("position")["turn"] == "O"
    assert answer == shown
