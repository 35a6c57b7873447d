"""One reader of saved games and matches (issue 61, found 2 and 6), with the same verdict everywhere.

``tapa-ai play --load``, the play session's ``load``, ``tapa-ai analyse`` and the engine's ``analyse`` all read a
file through :func:`tapa_ai.analysis.records.read_saved`: its shape by the schema
``tapa_ai/schemas/saved_game.json``, then every game replayed through the rules (docs/rules.md). Before, a
Tavli save with lengths of 26 or 10**6 or a bad generator state was a traceback, and each reader had its own
checks: ``play`` took an illegal or repeated history that ``analyse`` refused, ``analyse`` took a score that
disagreed with the match (or ``score X: -4``, ``dice: "abc"``) that ``play`` refused.
"""

from __future__ import annotations

import copy
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tapa_ai.analysis import RecordError, read_record, record_from_json
from tapa_ai.bots.rotation import make_rotation_player
from tapa_ai.cli import main
from tapa_ai.flow import GameState
from tapa_ai.notation import format_move
from tapa_ai.notation.json_position import position_to_json
from tapa_ai.play import Advisor, PlaySession, SaveError, load_game, read_file
from tapa_ai.play.cli_play import launch
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.rotations import ROTATIONS

TAPA = variant_rules("tapa")


# -- real saves, made as a person makes them -------------------------------------------------------------------
def drive(session, stop, limit=5000) -> None:
    """Type what a person types (the first legal move, else Enter) until ``stop(session)``."""
    for _ in range(limit):
        if stop(session):
            return
        game = session.match.game
        session.handle_line(format_move(game.moves[0]) if game.phase == "move" else "")
    raise AssertionError("the session did not get there")


def tapa_session(seed=3, script=""):
    from tapa_ai.bots.basic import RunnerBot

    bot = RunnerBot()
    bot.name = "runner"
    session = PlaySession(TAPA, bot, seed=seed, input=io.StringIO(script), output=io.StringIO(), colour=False,
                          advisor=Advisor(None, TAPA, why_none="no advisor in this test"))
    return session


def tavli_session(seed=6):
    return PlaySession.rotation_match(make_rotation_player("runner", ROTATIONS["tavli"]), 5, human="X", seed=seed,
                                      input=io.StringIO(""),
                             output=io.StringIO(), colour=False)


@pytest.fixture(scope="module")
def saves(tmp_path_factory):
    """{"tavli": a Tavli match to 5 saved in its second game, "finished": a finished tapa game, "old_tavli": a
    Tavli match to 3 saved by an older tapa-ai (its ``tavli`` key, tests/data/old_tavli_save.json)} as JSON."""
    folder = tmp_path_factory.mktemp("saves")
    tavli = tavli_session()
    tavli.start()
    drive(tavli, lambda s: s.match.game_number == 2 and s.turn is not None and len(s.match.game.history) > 4)
    tavli.handle_line(f"save {folder / 'tavli.json'}")
    finished = tapa_session()
    finished.start()
    drive(finished, lambda s: s.match.game.is_over)
    finished.handle_line(f"save {folder / 'finished.json'}")
    files = {name: folder / f"{name}.json" for name in ("tavli", "finished")}
    files["old_tavli"] = Path(__file__).resolve().parent / "data" / "old_tavli_save.json"
    return {name: json.loads(path.read_text()) for name, path in files.items()}


def write(tmp_path, data, name="save.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def run_cli(argv):
    """``tapa-ai ARGV`` in process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def refused_by_both(path):
    """``tapa-ai play --load`` and ``tapa-ai analyse`` on ``path``: each exits 2 with one line and no traceback;
    the line (its place named from the file, ``file.``) is the same from both."""
    lines = []
    for argv, command in ((["play", "--load", str(path), "--advisor", "none"], "play"),
                          (["analyse", str(path), "--quiet"], "analyse")):
        code, out, err = run_cli(argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (argv, code, err)
        assert err.startswith(f"tapa-ai {command}: "), err
        lines.append(err[len(f"tapa-ai {command}: "):].replace(str(path), "file"))
    assert lines[0] == lines[1], lines
    assert len(lines[0]) < 400, lines[0]
    return lines[0].rstrip("\n")


def refused_by_the_session(path, tavli: bool):
    """The play session's ``load FILE``: one line saying why, the game goes on unchanged."""
    session = tavli_session(seed=11) if tavli else tapa_session(seed=11)
    session.start()
    before = session.match
    session.handle_line(f"load {path}")
    screen = session.output.getvalue()
    assert f"Cannot load {path}: " in screen and "The game goes on." in screen, screen[-500:]
    assert session.match is before
    line = next(line for line in screen.splitlines() if line.startswith(f"Cannot load {path}: "))
    return line[len(f"Cannot load {path}: "):-len(". The game goes on.")]


def edited(data, change):
    data = copy.deepcopy(data)
    change(data)
    return data


def set_all_lengths(value):
    def change(data):
        data["match_length"] = data["match"]["length"] = data["rotation_match"]["length"] = value
    return change


# -- found 2: tracebacks from saved files ------------------------------------------------------------------------
@pytest.mark.parametrize("length", [26, 10**6])
def test_a_tavli_save_with_its_lengths_out_of_range_is_one_line_everywhere(saves, tmp_path, length):
    path = write(tmp_path, edited(saves["tavli"], set_all_lengths(length)))
    line = refused_by_both(path)
    assert line == f"file.match_length: must be an integer 0..25, got {length}"
    assert refused_by_the_session(path, tavli=True) == line
    # each length alone is refused at its place
    for place, change, wanted in (
            ("rotation_match.length", lambda d: d["rotation_match"].update(length=length), "an integer 1..25"),
            ("match.length", lambda d: d["match"].update(length=length), "an integer 0..25")):
        path = write(tmp_path, edited(saves["tavli"], change), "one.json")
        assert refused_by_both(path) == f"file.{place}: must be {wanted}, got {length}"


def test_a_bad_generator_state_is_one_line_not_an_overflow(saves, tmp_path):
    data = edited(saves["tavli"], lambda d: d["rng"]["dice"].update(state={"state": -1, "inc": "x"}))
    path = write(tmp_path, data)
    line = refused_by_both(path)
    assert line.startswith("file.rng.dice.state.") and "an integer 0..2^128-1" in line
    assert refused_by_the_session(path, tavli=True) == line
    for state, place in (({"state": 2**128, "inc": 1}, "state.state"), ({"state": 1, "inc": 1.5}, "state.inc")):
        path = write(tmp_path, edited(saves["tavli"], lambda d: d["rng"]["bot"].update(state=state)), "one.json")
        assert refused_by_both(path).startswith(f"file.rng.bot.{place}: must be an integer 0..2^128-1")


# -- found 6: two readers, two verdicts ----------------------------------------------------------------------------
def both_histories(change):
    """Apply ``change`` to the saved game's history and to its readable copy alike."""
    def apply(data):
        change(data["match"]["game"]["history"])
        data["history"] = copy.deepcopy(data["match"]["game"]["history"])
    return apply


def first_move_index(history):
    return next(i for i, event in enumerate(history) if event["action"] == "move" and event["move"])


def test_a_finished_game_with_an_illegal_history_move_is_refused_by_every_reader(saves, tmp_path):
    history = saves["finished"]["match"]["game"]["history"]
    index = first_move_index(history)
    data = edited(saves["finished"], both_histories(lambda h: h[index].update(move="24/1")))
    path = write(tmp_path, data)
    line = refused_by_both(path)
    assert line.startswith(f"file.match.game.history[{index}] (") and "'24/1'): an illegal move" in line
    assert refused_by_the_session(path, tavli=False) == line


@pytest.mark.parametrize("times, words", [(2, "an opening roll after the game began"), (500, "a list of at most 10000 items")])
def test_a_repeated_history_is_refused_by_every_reader(saves, tmp_path, times, words):
    data = edited(saves["finished"], both_histories(lambda h: h.extend(copy.deepcopy(h) * (times - 1))))
    path = write(tmp_path, data)
    line = refused_by_both(path)
    assert line.startswith("file.") and words in line, line
    assert refused_by_the_session(path, tavli=False) == line
    # the readable copy alone repeated: it disagrees with the saved state
    data = edited(saves["finished"], lambda d: d["history"].extend(copy.deepcopy(d["history"])))
    assert refused_by_both(write(tmp_path, data)).startswith("file.history: ")


@pytest.mark.parametrize("change, wanted", [
    (lambda d: d.update(score={"X": d["score"]["X"] + 3, "O": d["score"]["O"]}), "file.score: "),
    (lambda d: d["score"].update(X=-4), "file.score.X: must be an integer 0..1000000000, got -4"),
    (lambda d: d.update(dice="abc"), "file.dice: must be two integers 1..6 (e.g. [5, 2]) or null, got 'abc'"),
])
def test_a_score_or_dice_that_play_refused_is_refused_by_analyse_too(saves, tmp_path, change, wanted):
    path = write(tmp_path, edited(saves["finished"], change))
    line = refused_by_both(path)
    assert line.startswith(wanted), line
    if wanted == "file.score: ":
        assert "disagrees with file.match" in line
    assert refused_by_the_session(path, tavli=False) == line


# -- every damaged save: the same verdict from both readers ----------------------------------------------------------
MUTATIONS = [
    ("tavli", lambda d: d.update(format="tapa-ai/plya"), "is not a game record"),
    ("tavli", lambda d: d.update(version=2), "file.version: must be 1, got 2"),
    ("tavli", lambda d: d.update(version="1"), "file.version: must be 1"),
    ("tavli", lambda d: d.update(levle=1), "unknown key 'levle'"),
    ("tavli", lambda d: d.update(human="Z"), "file.human: "),
    ("tavli", lambda d: d.update(bot=5), "file.bot: "),
    ("tavli", lambda d: d.update(bot="x" * 5000), "file.bot: "),
    ("tavli", lambda d: d.update(seed=-1), "file.seed: must be an integer 0..2^64-1"),
    ("tavli", lambda d: d.update(seed=2**64), "file.seed: must be an integer 0..2^64-1"),
    ("tavli", lambda d: d.update(seed=5.0), "file.seed: "),
    ("tavli", lambda d: d["match"].update(game_number=0), "file.match.game_number: must be an integer 1.."),
    ("tavli", lambda d: d["match"]["score"].update(X=True), "file.match.score.X: "),
    ("tavli", lambda d: d["match"]["game"].update(phase="flying"), "file.match.game.phase: "),
    ("tavli", lambda d: d["match"]["game"]["cube"].update(value=3), "file.match.game.cube.value: "),
    ("tavli", lambda d: d["match"]["game"]["history"][1].update(dice=[7, 1]), "file.match.game.history[1].dice"),
    ("tavli", lambda d: d["match"]["game"]["history"][1].update(side="Q"), "file.match.game.history[1].side"),
    ("tavli", lambda d: d["match"]["game"].update(foo=1), "file.match.game: unknown key 'foo'"),
    ("tavli", lambda d: d["match"].update(results="none"), "file.match.results: "),
    ("tavli", lambda d: d["rotation_match"].update(rotation=["fevga", "plakoto", "portes"]),
     "file.rotation_match.played[0].variant: game 1 of the custom match is fevga, got 'portes'"),
    ("tavli", lambda d: d["rotation_match"].update(rotation="tavlo"), "file.rotation_match.rotation: must be a "),
    ("tavli", lambda d: d["rotation_match"].update(format="tapa-ai/tavli"), "file.rotation_match.format: "),
    ("tavli", lambda d: d["rotation_match"].pop("rotation"), "file.rotation_match: missing 'rotation'"),
    ("tavli", lambda d: d["rotation_match"]["played"][0]["game"]["history"][1].update(move="24/1"),
     "file.rotation_match.played[0].game"),
    ("old_tavli", lambda d: d["tavli"].update(rotation=["fevga", "plakoto", "portes"]), "file.tavli.rotation: "),
    ("old_tavli", lambda d: d["tavli"].update(format="tapa-ai/rotation"), "file.tavli.format: "),
    ("old_tavli", lambda d: d["tavli"]["played"][0]["game"]["history"][1].update(move="24/1"),
     "file.tavli.played[0].game"),
    ("old_tavli", lambda d: d.pop("match"), "file.tavli: a saved rotation match needs 'match'"),
    ("tavli", lambda d: d.update(start=d["position"]), "file.start: "),
    ("tavli", lambda d: d["rng"]["bot"].update(bit_generator="MT19937"), "file.rng.bot.bit_generator: "),
    ("tavli", lambda d: d["rng"]["dice"].update(has_uint32=2), "file.rng.dice.has_uint32: "),
    ("finished", lambda d: d["position"].update(points=["X"] * 24), "file.position"),
    ("finished", lambda d: d.update(game_number=2), "file.game_number: "),
    ("finished", lambda d: d["match"]["game"].update(result=None, phase="move", dice=[6, 5]), "file.match.game"),
    ("finished", lambda d: d["match"].pop("game"), "file.match: missing 'game'"),
    ("finished", lambda d: d.update(rules={**d["rules"], "cube": False}), "file.rules: "),
]


@pytest.mark.parametrize("index", range(len(MUTATIONS)))
def test_each_damaged_save_gets_the_same_one_line_verdict_from_every_reader(saves, index):
    which, change, words = MUTATIONS[index]
    data = edited(saves[which], change)
    with pytest.raises(SaveError) as played:
        load_game(data, "file")
    with pytest.raises(RecordError) as analysed:
        record_from_json(data, "file")
    message = str(played.value)
    assert message == str(analysed.value) and words in message, (message, str(analysed.value))
    assert "\n" not in message and len(message) < 400, message


def test_the_engines_analyse_gives_the_same_verdict(saves):
    from tapa_ai.engine.protocol import Engine

    engine = Engine(bot="net:tapa@0ply")
    for change in (both_histories(lambda h: h.extend(copy.deepcopy(h))),
                   lambda d: d.update(score={"X": d["score"]["X"] + 3, "O": d["score"]["O"]})):
        data = edited(saves["finished"], change)
        with pytest.raises(RecordError) as caught:
            record_from_json(data, "record")
        status, answer = engine.respond({"cmd": "analyse", "record": data})
        assert status == 400 and answer["error"] == str(caught.value), answer


# -- good saves: still loaded and analysed ---------------------------------------------------------------------------
def test_good_saves_still_load_and_analyse(saves, tmp_path):
    for name, bot, tavli in (("tavli", "net:tavli@0ply", True), ("finished", "net:tapa@0ply", False),
                             ("old_tavli", "net:tavli@0ply", True)):
        path = write(tmp_path, saves[name], f"{name}.json")
        saved = load_game(read_file(path))
        assert saved.is_rotation == tavli and saved.bot == "runner" and saved.human == "X"
        out = io.StringIO()
        assert launch(load=str(path), advisor="none", input=io.StringIO(""), output=out) == 0
        assert f"Loaded {path}: game {saved.match.game_number}" in out.getvalue()
        record = read_record(path)
        assert sum(len(game.moves) for game in record.games) > 0
        code, report, err = run_cli(["analyse", str(path), "--quiet", "--bot", bot])
        assert code == 0 and "Traceback" not in err and report.strip(), err


def test_a_game_begun_from_a_loaded_position_is_saved_with_its_start_and_replays_from_it(tmp_path):
    state = GameState.new(TAPA, opener="X").rolled([6, 5])
    for _ in range(6):  # a position well inside a game, not the variant's start
        state = state.play(state.moves[0])
        if state.phase == "roll":
            state = state.rolled([4, 2])
    start = state.position
    position = tmp_path / "position.json"
    position.write_text(json.dumps(position_to_json(start)))
    session = tapa_session(seed=4)
    session.start()
    session.handle_line(f"load {position}")
    drive(session, lambda s: len(s.match.game.history) >= 4)
    save = tmp_path / "from-position.json"
    session.handle_line(f"save {save}")
    data = json.loads(save.read_text())
    assert data["start"] == position_to_json(start)
    assert load_game(data).match == session.match
    record = record_from_json(data, "file")
    assert record.games[0].turns[0].position == start
    other = tapa_session(seed=5)
    other.start()
    other.handle_line(f"load {save}")
    assert other.match == session.match and other.saved_game().start == start  # and it is saved again
    # Without its start the history cannot be replayed: both readers refuse it alike.
    path = write(tmp_path, edited(data, lambda d: d.pop("start")))
    assert "'start'" in refused_by_both(path)


@pytest.mark.parametrize("option, value, words", [("--match-length", "26", "must be 0 (money play) to 25"),
                                                  ("--match-length", "-1", "must be 0 (money play) to 25"),
                                                  ("--seed", "-1", "must be an integer 0 to 2^64-1"),
                                                  ("--seed", str(2**64), "must be an integer 0 to 2^64-1")])
def test_play_starts_no_game_its_save_could_not_hold(option, value, words):
    """A match longer than 25 or a seed outside 64 bits would make a save that no reader loads (and a negative
    seed was a numpy traceback): refused before the game, one line."""
    code, out, err = run_cli(["play", option, value, "--bot", "runner", "--advisor", "none"])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"tapa-ai play: {option} {value}: {words}"), err
