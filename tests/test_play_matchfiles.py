"""``tapa-ai play --load FILE.sgf|FILE.mat`` and ``load FILE``: a match file's match continued from where the file
ends (issue 65; docs/play.md, Saved games; docs/match-files.md).

The files: GNU Backgammon's own SGF and .mat of a 3-point match (``tests/data/matchfiles/``), cut in the middle
of its second game as a match saved while being played; the FIBS-style .mat of one game; a Tabla match written by
``tapa-ai analyse SAVE --export-only --export FILE.mat``. The state at the file's end is compared with what
:func:`tapa_ai.analysis.records.read_record` (``tapa-ai analyse``'s reader) replays of the same file.
"""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tapa_ai.analysis.records import read_record
from tapa_ai.cli import main
from tapa_ai.flow.rotation import RotationMatch
from tapa_ai.play import PlaySession, SaveError, load_game, read_file, save_game
from tapa_ai.play import cli_play
from tapa_ai.play.advice import Advisor
from tapa_ai.play.cli_play import LaunchError, launch
from tapa_ai.play.saves import SavedGame
from tapa_ai.bots.basic import RunnerBot
from tapa_ai.rules import variant_rules
from tapa_ai.rules.rotations import ROTATIONS

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "matchfiles"
TABLA = ROTATIONS["tabla"]


def launched(monkeypatch, script: str = "quit\n", **options) -> tuple[int, str, PlaySession]:
    """``launch(**options)`` with ``script`` typed; (exit code, screen, the session as loaded, before playing)."""
    seen = []
    original = cli_play._run

    def run(session, saved, load, notes):
        seen.append(session)
        code = original(session, saved, load, notes)
        return code

    monkeypatch.setattr(cli_play, "_run", run)
    out = io.StringIO()
    code = launch(input=io.StringIO(script), output=out, no_color=True, advisor="none", bot="runner", seed=3,
                  **options)
    return code, out.getvalue(), seen[0]


@pytest.fixture(scope="module")
def cut(tmp_path_factory):
    """gnubg's .mat and .sgf of its 3-point match, both cut after move 6 of game 2 (O 53, X 51, the cube at 2 on
    X's side: O to roll at X 1, O 0), as a match saved while being played."""
    folder = tmp_path_factory.mktemp("cut")
    mat = (DATA / "gnubg_match3.mat").read_text()
    head, found, _ = mat.partition("  7) 54: 18/14")
    assert found
    (folder / "cut.mat").write_text(head)
    sgf = (DATA / "gnubg_match3.sgf").read_text()
    second = sgf.index("(;FF", 1)
    nodes = sgf[second:].split("\n;")
    root = re.sub(r"RE\[[^\]]*\]", "", nodes[0])  # no result: the game goes on
    assert nodes[12].startswith("B[51nsst]")
    (folder / "cut.sgf").write_text(sgf[:second] + "\n;".join([root] + nodes[1:13]) + ")\n")
    return folder


@pytest.mark.parametrize("name", ["cut.sgf", "cut.mat"])
def test_gnubg_match_cut_in_game_2_continues_at_its_score_and_position(cut, name, monkeypatch, tmp_path):
    path = cut / name
    record = read_record(path)  # what tapa-ai analyse replays of the file
    last = record.games[-1]
    assert (len(record.games), last.ending, last.score, last.match_length, last.cube) == (2, "unfinished", (1, 0),
                                                                                          3, 2)
    saved = load_game(read_file(path))
    match = saved.match
    assert not saved.is_rotation and saved.rules == variant_rules("backgammon")
    assert (match.length, match.score, match.game_number) == (3, (1, 0), 2)
    assert (match.game.phase, match.game.position.turn) == ("roll", "O")
    assert (match.game.cube_value, match.game.cube_owner) == (2, "X")
    assert not match.game.crawford and not match.post_crawford
    assert match.game.position == last.turns[-1].after.with_changes(turn="O")
    assert [(r.number, r.winner, r.points, r.dropped) for r in match.results] == [(1, "X", 1, True)]
    assert match.game.history[0].action == "opening"  # gnubg's first roll is the opening roll
    assert [(event.action, event.side, event.dice, event.move) for event in match.game.history[1:]] == \
        [(turn.action, turn.side, turn.dice, turn.move) for turn in last.turns]
    # the SGF and the .mat of the same match continue at the same state
    other = load_game(read_file(cut / ("cut.mat" if name == "cut.sgf" else "cut.sgf"))).match
    assert other == match

    # tapa-ai play --load FILE: backgammon, the match to 3, game 2 at the file's end; the bot (O) rolls on
    code, screen, session = launched(monkeypatch, load=str(path))
    assert code == 0 and "Internal error" not in screen
    assert screen.startswith("tapa-ai play: backgammon, a match to 3 points. You are X, the bot (runner) is O.")
    assert f"Loaded {path}: game 2, O to roll.\n" in screen
    assert "cube: 2 (owned by you)" in screen and "game 2, match to 3: you 1, O 0" in screen
    assert session.match.game_number == 2 and session.match.score == (1, 0)

    # what the session saves of it is a save like any other: it loads (every check of read_saved) to the same state
    again = PlaySession(variant_rules("backgammon"), RunnerBot(), input=io.StringIO(f"load {path}\n"
                                                                                    f"save {tmp_path / 's.json'}\n"
                                                                                    "quit\n"),
                        output=io.StringIO(), colour=False, advisor=Advisor(None, variant_rules("backgammon")))
    again.run()
    said = again.output.getvalue()
    assert f"Loaded {path}: game 2, O to roll." in said and "Cannot load" not in said
    resaved = load_game(read_file(tmp_path / "s.json")).match
    assert resaved == again.match and resaved.score == (1, 0) and resaved.results == match.results


@pytest.mark.parametrize("kind", ["sgf", "mat"])
def test_a_session_saves_as_a_match_file_and_loads_it_to_the_same_state(cut, kind, tmp_path):
    """``save FILE.sgf`` / ``save FILE.mat`` in a session writes the match file (the games played, the score, the
    cube), which ``load`` reads back to the same match; a save that cannot be written is one line, and the game
    goes on."""
    target, blocked = tmp_path / f"again.{kind}", tmp_path / "a-file"
    blocked.write_text("")
    session = PlaySession(variant_rules("backgammon"), RunnerBot(), input=io.StringIO(
        f"load {cut / 'cut.sgf'}\nsave {target}\nsave {blocked / f'x.{kind}'}\nquit\n"),
        output=io.StringIO(), colour=False, advisor=Advisor(None, variant_rules("backgammon")))
    session.run()
    said = session.output.getvalue()
    assert f"Saved to {target}." in said
    assert f"Not saved: cannot write '{blocked / f'x.{kind}'}'" in said  # its folder is a file
    assert "The game goes on." in said and "Internal error" not in said
    text = target.read_text()
    assert text.startswith("(;FF[4]GM[6]") if kind == "sgf" else " 3 point match" in text
    back = load_game(read_file(target)).match
    assert (back.length, back.score, back.game_number) == (3, (1, 0), 2)
    assert back.game.position == session.match.game.position
    assert (back.game.cube_value, back.game.cube_owner) == (2, "X")
    assert [(e.action, e.side, e.dice, e.move) for e in back.game.history] == \
        [(e.action, e.side, e.dice, e.move) for e in session.match.game.history]


def test_a_finished_match_is_one_line(tmp_path):
    for path in (DATA / "gnubg_match3.sgf", DATA / "gnubg_match3.mat"):
        assert load_game(read_file(path)).match.is_over
        with pytest.raises(LaunchError) as caught:
            launch(load=str(path), bot="runner", advisor="none", input=io.StringIO(""), output=io.StringIO())
        assert str(caught.value) == (f"{path}: the match to 3 is over: X won it 3-0 in 2 games; there is nothing to "
                                     "play on (tapa-ai analyse FILE rates its games)")
    # the same for a save of a finished match; and 'load FILE' in a session says so, and the game goes on
    finished = load_game(read_file(DATA / "gnubg_match3.mat"))
    save_game(tmp_path / "over.json", finished)
    with pytest.raises(LaunchError, match=r"over\.json: the match to 3 is over: X won it 3-0"):
        launch(load=str(tmp_path / "over.json"), bot="runner", advisor="none", input=io.StringIO(""),
               output=io.StringIO())
    rules = variant_rules("backgammon")
    session = PlaySession(rules, RunnerBot(), input=io.StringIO(f"load {DATA / 'gnubg_match3.sgf'}\nquit\n"),
                          output=io.StringIO(), colour=False, advisor=Advisor(None, rules), seed=1)
    session.run()
    lines = [line for line in session.output.getvalue().splitlines() if "Cannot load" in line]
    assert len(lines) == 1 and lines[0].endswith(
        f"Cannot load {DATA / 'gnubg_match3.sgf'}: the match to 3 is over: X won it 3-0 in 2 games; there is nothing "
        "to play on (tapa-ai analyse FILE rates its games). The game goes on.")
    assert session.match.game_number == 1 and session.match.score == (0, 0)


@pytest.mark.parametrize("length,crawford", [(3, False), (2, True)])
def test_a_finished_game_of_an_unfinished_match_goes_on_with_the_next(tmp_path, monkeypatch, length, crawford):
    """The FIBS-style .mat: one game, X wins a point (O passed the double); the next game starts at 1-0, the
    Crawford game in a match to 2."""
    text = (DATA / "fibs_style.mat").read_text()
    assert re.search(r"^ ?3 point match", text, re.M)
    path = tmp_path / "one.mat"
    path.write_text(re.sub(r"^( ?)3 point match", rf"\g<1>{length} point match", text, flags=re.M))
    match = load_game(read_file(path)).match
    assert (match.length, match.score, match.game_number, match.game.is_over, match.is_over) == (length, (1, 0), 1,
                                                                                                  True, False)
    assert match.start_next_game().game.crawford is crawford
    code, screen, session = launched(monkeypatch, load=str(path))
    assert code == 0 and "Internal error" not in screen
    assert f"Loaded {path}: game 1, the game is over." in screen
    assert "Game over: you win 1 point, the double was passed." in screen
    assert f"game 2, match to {length}: you 1, O 0" in screen
    assert session.match.game_number == 2 and session.match.game.crawford is crawford
    assert not session.match.game.history or session.match.game.history[0].action == "opening"


def tabla_save(path: Path) -> RotationMatch:
    """A Tabla match to 3 played by the first legal moves with seeded dice into its second game (Gul Bara), saved
    as ``tapa-ai play``'s save would."""
    dice = random.Random(4)
    match = RotationMatch.new(3, TABLA)
    while not (match.game_number == 2 and len(match.game.history) > 8):
        game = match.game
        if game.is_over:
            match = match.start_next_game()
        elif game.phase == "opening":
            match = match.rolled(dice.sample(range(1, 7), 2))
        elif game.phase == "roll":
            match = match.rolled([dice.randint(1, 6), dice.randint(1, 6)])
        else:
            match = match.play(game.moves[0])
    save_game(path, SavedGame(match, "X", "runner"))
    return match


@pytest.mark.parametrize("suffix", ["mat", "sgf"])
def test_a_tabla_match_exported_by_tapa_ai_analyse_loads_as_a_tabla_match(tmp_path, monkeypatch, capsys, suffix):
    played = tabla_save(tmp_path / "tabla.json")
    exported = tmp_path / f"tabla.{suffix}"
    assert main(["analyse", str(tmp_path / "tabla.json"), "--export-only", "--export", str(exported)]) == 0
    capsys.readouterr()
    text = exported.read_text()
    assert ("; [Rotation \"tabla\"]" if suffix == "mat" else "Rotation=tabla") in text
    saved = load_game(read_file(exported))
    assert saved.is_rotation and saved.match.rotation == TABLA
    assert saved.match == played  # every game, the score, the position: what was saved
    code, screen, session = launched(monkeypatch, load=str(exported))
    assert code == 0 and "Internal error" not in screen
    assert screen.startswith("tapa-ai play: a Tabla match to 3 points (backgammon, gulbara, tapa in turn, no cube).")
    assert re.search(rf"Loaded {re.escape(str(exported))}: game 2 \(gulbara\) of a Tabla match to 3, ", screen)
    assert isinstance(session.match, RotationMatch) and session.match.played == played.played
    # not into a session of another game, and --tavli is not the file's rotation
    with pytest.raises(LaunchError, match=r"^--tavli 3 but .* holds a Tabla match to 3"):
        launch(tavli=3, load=str(exported), input=io.StringIO(""), output=io.StringIO())


def test_a_backgammon_file_names_the_command_that_plays_it(cut):
    rules = variant_rules("tapa")
    session = PlaySession(rules, RunnerBot(), input=io.StringIO(f"load {cut / 'cut.mat'}\nquit\n"),
                          output=io.StringIO(), colour=False, advisor=Advisor(None, rules), seed=1)
    session.run()
    assert (f"Cannot load {cut / 'cut.mat'}: it is a backgammon game and this session plays tapa; start tapa-ai "
            "play --variant backgammon --load FILE. The game goes on.") in session.output.getvalue()
    with pytest.raises(LaunchError, match="--variant tapa but the file to load is a backgammon game"):
        launch(variant="tapa", load=str(cut / "cut.sgf"), input=io.StringIO(""), output=io.StringIO())


def test_a_damaged_match_file_is_one_line(cut, tmp_path):
    illegal = tmp_path / "illegal.mat"
    illegal.write_text((cut / "cut.mat").read_text().replace("53: 6/3 8/3", "53: 6/3 8/1"))
    broken = tmp_path / "broken.sgf"
    broken.write_text((cut / "cut.sgf").read_text()[:3000])
    other = tmp_path / "go.sgf"
    other.write_text("(;FF[4]GM[1]SZ[19];B[pd])")
    for path, words in ((illegal, "game 2, move 6"), (broken, ""), (other, "")):
        with pytest.raises(SaveError) as caught:
            read_file(path)
        message = str(caught.value)
        assert "\n" not in message and str(path) in message and words in message
        # tapa-ai play --load: that line, exit code 2, no traceback
        done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "play", "--bot", "runner", "--advisor", "none",
                               "--load", str(path)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              cwd=ROOT, timeout=300)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr == f"tapa-ai play: {message}\n"
        # load FILE in a session: one line, and the game goes on
        rules = variant_rules("backgammon")
        session = PlaySession(rules, RunnerBot(), input=io.StringIO(f"load {path}\nquit\n"), output=io.StringIO(),
                              colour=False, advisor=Advisor(None, rules), seed=1)
        session.run()
        said = [line for line in session.output.getvalue().splitlines() if "Cannot load" in line]
        shown = message if message.startswith(f"{path}:") else f"{path}: {message}"  # the file named once
        assert len(said) == 1 and said[0].endswith(f"Cannot load {shown}. The game goes on.")
        assert said[0].count(str(path)) == 1
