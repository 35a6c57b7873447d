"""``tapa-ai play --tabla N`` and ``--rotation GAMES --length N``: any rotation's match in the terminal, driven as a
person drives it, saved, loaded and analysed (issue 64).

Tabla (docs/rules.md 10.4) rotates backgammon, Gul Bara and Tapa without the cube; the first game opens with an
opening roll and the winner of each game opens the next; the bot plays by the score through Tabla's own match
equity table (:func:`tapa_ai.cube.rotation_met.rotation_met`); a save holds the whole match under
``rotation_match`` with its rotation.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tapa_ai.analysis import read_record
from tapa_ai.analysis.analyzer import Analyzer
from tapa_ai.analysis.cli_analyse import analyse_command, rotation_bots
from tapa_ai.bots.rotation import make_rotation_player
from tapa_ai.cube.rotation_met import rotation_met
from tapa_ai.flow import GameState, MatchState
from tapa_ai.flow.match import GameRecord
from tapa_ai.flow.rotation import RotationMatch
from tapa_ai.notation import format_move
from tapa_ai.play import PlaySession, load_game, read_file
from tapa_ai.play import cli_play
from tapa_ai.play.cli_play import LaunchError, launch, rotation_advisors
from tapa_ai.rules.rotations import ROTATIONS

ROOT = Path(__file__).resolve().parent.parent
TABLA = ROTATIONS["tabla"]


class Person:
    """The input of a session started by :func:`launch`: what a person types, decided when the prompt comes (the
    first legal move, else Enter), with ``extra`` lines typed once ``when(session)`` holds."""

    def __init__(self, extra=(), when=lambda session: False) -> None:
        self.session = None
        self.extra = list(extra)
        self.when = when

    def readline(self) -> str:
        session = self.session
        if session.match.is_over:
            return ""
        if self.extra and self.when(session):
            return self.extra.pop(0) + "\n"
        game = session.match.game
        return (format_move(game.moves[0]) if game.phase == "move" and session.turn is not None else "") + "\n"

    def isatty(self) -> bool:
        return False


def launched(monkeypatch, person: Person, **options) -> tuple[int, str, PlaySession]:
    """``launch(**options)`` with ``person`` typing; (exit code, screen, the session)."""
    seen = []
    original = cli_play._run

    def run(session, saved, load, notes):
        person.session = session
        seen.append(session)
        return original(session, saved, load, notes)

    monkeypatch.setattr(cli_play, "_run", run)
    out = io.StringIO()
    code = launch(input=person, output=out, no_color=True, **options)
    return code, out.getvalue(), seen[0]


@pytest.fixture(scope="module")
def tabla_match(tmp_path_factory):
    """A Tabla match to 3 played through ``launch(tabla=3)`` (runner, seed 5: four games, the rotation wraps
    round to backgammon), saved in its second game (Gul Bara) and at its end."""
    folder = tmp_path_factory.mktemp("tabla")
    middle, end = folder / "middle.json", folder / "end.json"
    person = Person([f"save {middle}"], lambda s: s.match.game_number == 2 and len(s.match.game.history) > 6)
    with pytest.MonkeyPatch.context() as monkeypatch:
        code, screen, session = launched(monkeypatch, person, tabla=3, bot="runner", advisor="none", seed=5)
    from tapa_ai.play.saves import save_game

    save_game(end, session.saved_game())  # the end, as 'save FILE' writes it
    return code, screen, session, middle, end


def test_a_whole_tabla_match_through_tapa_ai_play_tabla(tabla_match):
    code, screen, session, _, _ = tabla_match
    match = session.match
    assert code == 0 and match.is_over and isinstance(match, RotationMatch) and match.rotation == TABLA
    assert "Internal error" not in screen and "Illegal" not in screen
    assert screen.startswith("tapa-ai play: a Tabla match to 3 points (backgammon, gulbara, tapa in turn, no cube). "
                             "You are X, the bot (runner) is O. Seed 5.")
    games = match.played + (match.game,)
    assert [game.rules.name for game in games] == ["backgammon", "gulbara", "tapa", "backgammon"]
    assert all(game.rules == TABLA.rules(number) and not game.rules.cube for number, game in enumerate(games, 1))
    score = [0, 0]
    for number, (game, (variant, record)) in enumerate(zip(games, match.results), start=1):
        assert variant == game.rules.name and (record.winner, record.points) == (game.winner, game.points_won)
        score["XO".index(record.winner)] += record.points
        line = f"Game {number} of the Tabla match: {variant} (the next game is {TABLA.variant(number + 1)})."
        assert line in screen
        if number == 1:
            assert game.history[0].action == "opening"
        else:  # the winner of the game before opens, rolling both dice (in Gul Bara too: no reroll of its own)
            before = match.results[number - 2][1].winner
            assert game.history[0].action == "move" and game.history[0].side == before
            opens = "You open" if before == "X" else "O opens"
            assert re.search(rf"{re.escape(line)} Score: [^\n]*\. {opens}, rolling both dice", screen)
    assert tuple(score) == match.score and max(score) >= 3
    # the board's footer names the rotation, the game and the next
    assert "game 1 backgammon (next gulbara), Tabla match to 3: you 0, O 0" in screen
    assert "game 3 tapa (next backgammon), Tabla match to 3: " in screen
    lines = screen.splitlines()
    assert lines[-2].startswith("Games: 1 backgammon: ") and "; 2 gulbara: " in lines[-2]
    winner = "You win" if match.winner == "X" else "O wins"
    assert lines[-1].startswith(f"{winner} the Tabla match {max(score)}-{min(score)}")


def test_the_tabla_save_holds_the_rotation_and_loads_and_plays_on_to_the_same_end(tabla_match, monkeypatch):
    _, screen, session, middle, _ = tabla_match
    assert f"Saved to {middle}." in screen
    data = json.loads(middle.read_text())
    assert data["variant"] == "gulbara" and data["match_length"] == 3 and data["game_number"] == 2
    assert "tavli" not in data
    rotation_match = data["rotation_match"]
    assert rotation_match["format"] == "tapa-ai/rotation" and rotation_match["rotation"] == "tabla"
    assert [(g["number"], g["variant"]) for g in rotation_match["played"]] == [(1, "backgammon")]
    saved = load_game(read_file(middle))
    assert saved.is_rotation and saved.match.rotation == TABLA and saved.match.game_number == 2
    assert saved.match.played == session.match.played[:1]
    # tapa-ai play --load FILE: the file says it is a Tabla match; the same dice and bot choices to the same end
    code, again, other = launched(monkeypatch, Person(), load=str(middle), advisor="none")
    assert code == 0 and other.match == session.match
    assert "tapa-ai play: a Tabla match to 3 points (backgammon, gulbara, tapa in turn, no cube)." in again
    assert re.search(rf"Loaded {re.escape(str(middle))}: game 2 \(gulbara\) of a Tabla match to 3, ", again)
    # a Tabla save is not a Tavli match, nor a match to another length
    with pytest.raises(LaunchError, match=r"^--tavli 3 but .* holds a Tabla match to 3 \(tabla \(backgammon, "
                                          r"gulbara, tapa\)\)$"):
        launch(tavli=3, load=str(middle), input=io.StringIO(""), output=io.StringIO())
    with pytest.raises(LaunchError, match=r"^--tabla 5 but .* holds a Tabla match to 3$"):
        launch(tabla=5, load=str(middle), input=io.StringIO(""), output=io.StringIO())
    tavli = PlaySession.rotation_match(make_rotation_player("runner", ROTATIONS["tavli"]), 3, seed=1,
                                       input=io.StringIO(f"load {middle}\nquit\n"), output=io.StringIO(),
                                       colour=False)
    tavli.run()
    assert (f"Cannot load {middle}: it is a match of the rotation tabla (backgammon, gulbara, tapa) and this "
            "session plays tavli (portes, plakoto, fevga); start tapa-ai play --load FILE.") in tavli.output.getvalue()


def test_tapa_ai_analyse_rates_a_saved_tabla_match_by_the_tabla_table(tabla_match, tmp_path):
    _, _, session, _, end = tabla_match
    record = read_record(end)
    assert record.rotation == TABLA and record.length == 3
    assert record.source == "a Tabla match to 3 saved by tapa-ai play"
    assert [game.rules.name for game in record.games] == ["backgammon", "gulbara", "tapa", "backgammon"]
    assert [game.score for game in record.games] == [(0, 0)] + [
        tuple(sum(r.points for _, r in session.match.results[:n] if r.winner == side) for side in "XO")
        for n in (1, 2, 3)]
    out = io.StringIO()
    target = tmp_path / "analysis.json"
    assert analyse_command(str(end), bot="net:tabla@0ply", json_path=str(target), quiet=True, output=out) == 0
    report = out.getvalue()
    assert report.splitlines()[0] == (f"{end}: a Tabla match to 3 saved by tapa-ai play (Tabla: backgammon, gulbara, "
                                      "tapa in turn)")
    assert report.splitlines()[1].startswith("analysed by net:backgammon@0ply (backgammon), net:gulbara@0ply "
                                             "(gulbara), net:tapa@0ply (tapa) at 0 plies")
    assert "Game 1, backgammon (Tabla match to 3, score X 0 O 0): X human, O runner." in report
    assert "(the Tabla match equity table)" in report
    data = json.loads(target.read_text())
    assert data["variant"] == "tabla" and data["units"] == "mwc"
    assert data["rotation_match"] == {"rotation": "tabla", "length": 3}
    assert [game["variant"] for game in data["games"]] == ["backgammon", "gulbara", "tapa", "backgammon"]
    # each move's match-winning chance is the engine's ranking of the position at the score by Tabla's table
    from tapa_ai.analysis import analyse_rotation_record

    bots = rotation_bots("net:tabla@0ply", record)
    analysis = analyse_rotation_record(record, bots)
    table = rotation_met(TABLA)
    checked = 0
    for game in analysis.games:
        rec = game.game
        analyzer = Analyzer(bots[rec.rules.name])
        for entry in [entry for entry in game.entries if not entry.forced][:3]:
            index = "XO".index(entry.side)
            away, opponent = 3 - rec.score[index], 3 - rec.score[1 - index]
            values = table.class_values(analyzer.points, [away], [opponent], (rec.number - 1) % 3)[0]
            ranked, _ = analyzer.rank(entry.position, entry.dice, plies=0, class_values=values)
            played = next(move for move in ranked if move.move == entry.move)
            assert entry.equity == pytest.approx(played.match_winning_chance, abs=1e-9)
            assert entry.best_equity == pytest.approx(ranked[0].match_winning_chance, abs=1e-9)
            checked += 1
    assert checked >= 8
    # Tabla's table is not Tavli's: the same score values the outcomes otherwise
    tavli = rotation_met(ROTATIONS["tavli"])
    assert not np.allclose(table.class_values(np.array([1.0, -1.0]), [3], [2], 0),
                           tavli.class_values(np.array([1.0, -1.0]), [3], [2], 0))


def test_the_net_bot_plays_a_tabla_game_by_the_tabla_table_and_hint_ranks_by_it():
    player = make_rotation_player("net:tabla@0ply", TABLA)
    try:
        out = io.StringIO()
        session = PlaySession.rotation_match(player, 3, advisors=rotation_advisors(player, None), seed=4,
                                             input=io.StringIO(""), output=out, colour=False)
        assert set(session.advisors) == {"backgammon", "gulbara", "tapa"}
        # game 3 (Tapa) at X 1, O 1: the winner of game 2, X, opens it
        records = (GameRecord(1, "X", "single", 1, 1), GameRecord(2, "O", "single", 1, 1))
        session.match = RotationMatch(MatchState(GameState.new(TABLA.rules(3), opener="O"), 3, (1, 1), 3,
                                                 results=records), TABLA)
        bot = player.bot("tapa")
        seen = []
        original = bot.choose_at_score

        def spy(afterstates, rng, score):
            seen.append((score.table, int(score.away[0]), int(score.opponent_away[0]), int(score.game[0])))
            return original(afterstates, rng, score)

        bot.choose_at_score = spy
        try:
            session.start()
            for _ in range(200):
                if session.last_bot_move is not None and session.turn is not None:
                    break
                game = session.match.game
                session.handle_line(format_move(game.moves[0]) if game.phase == "move" else "")
        finally:
            del bot.choose_at_score
        assert seen and {entry[1:] for entry in seen} == {(2, 2, 2)} and seen[0][0] is rotation_met(TABLA)
        before = len(out.getvalue())
        session.handle_line("hint 2")
        hint = out.getvalue()[before:]
        assert "at the score (game 3 of a Tabla match to 3, you need 2, the other side 2)" in hint
    finally:
        player.close()


# --------------------------------------------------------------------------
# --rotation GAMES --length N: any rotation
# --------------------------------------------------------------------------

def test_a_custom_rotation_through_play_rotation_is_played_saved_and_loaded(monkeypatch, tmp_path):
    path = tmp_path / "custom.json"
    person = Person([f"save {path}"], lambda s: s.match.game_number == 2 and len(s.match.game.history) > 2)
    code, screen, session = launched(monkeypatch, person, rotation="tapa,fevga", length=3, bot="runner",
                                     advisor="none", seed=2)
    match = session.match
    assert code == 0 and match.is_over and match.rotation.variants == ("tapa", "fevga")
    assert screen.startswith("tapa-ai play: a rotation match to 3 points (tapa, fevga in turn, no cube). You are X, "
                             "the bot (runner) is O. Seed 2.")
    assert "Game 1 of the rotation match: tapa (the next game is fevga). Score: you 0, O 0 (rotation match to 3). " \
           "It opens with an opening roll." in screen
    assert "game 1 tapa (next fevga), rotation match to 3: you 0, O 0" in screen
    assert [game.rules.name for game in match.played + (match.game,)][:2] == ["tapa", "fevga"]
    data = json.loads(path.read_text())
    assert data["rotation_match"]["rotation"] == ["tapa", "fevga"] and data["variant"] == "fevga"
    saved = load_game(data)
    assert saved.match.rotation == match.rotation and saved.match.game_number == 2
    code, again, other = launched(monkeypatch, Person(), load=str(path), advisor="none")
    assert code == 0 and other.match == match  # the same dice after the load
    assert re.search(r"Loaded .*custom.json: game 2 \(fevga\) of a rotation match to 3, ", again)
    record = read_record(path)
    assert record.rotation == match.rotation and record.source == "a rotation match to 3 saved by tapa-ai play"
    # the games of Tabla named one by one are the Tabla rotation
    code, screen, session = launched(monkeypatch, Person(["quit"], lambda s: True),
                                     rotation="backgammon,gulbara,tapa", length=2, bot="runner", advisor="none")
    assert session.match.rotation is TABLA and "a Tabla match to 2 points" in screen


@pytest.mark.parametrize("arguments, line", [
    (["--rotation", "backgammon,shesh-besh,tapa", "--length", "3"],
     "--rotation backgammon,shesh-besh,tapa: unknown variant 'shesh-besh' in the rotation; known variants: "),
    (["--rotation", "", "--length", "3"], "--rotation '': an empty rotation: name a preset (tabla, tavli) or the "
                                          "games, comma-separated (backgammon,gulbara,tapa)"),
    (["--rotation", "tapa,,fevga", "--length", "3"], "--rotation tapa,,fevga: rotation 'tapa,,fevga': an empty game "
                                                     "name between commas"),
    (["--rotation", "tabla"], "--rotation tabla: give the match's points with --length N"),
    (["--length", "5"], "--length 5 is the points of a --rotation match (--tavli N and --tabla N take theirs)"),
    (["--tabla", "30"], "--tabla 30: a rotation's match (Tavli, Tabla) is to 1 to 25 points"),
    (["--rotation", "tapa,fevga", "--length", "26"], "--rotation tapa,fevga --length 26: a rotation's match (Tavli, "
                                                     "Tabla) is to 1 to 25 points"),
    (["--tabla", "0"], "--tabla 0: a rotation's match (Tavli, Tabla) is to 1 to 25 points"),
    (["--tabla", "3", "--tavli", "3"], "--tavli and --tabla: give one rotation"),
    (["--tabla", "3", "--variant", "tapa"], "--tabla 3 plays Backgammon, Gul Bara and Tapa in turn to 3 points: it "
                                            "takes no --variant"),
    (["--tabla", "3", "--bot", "tavli:runner,runner,runner"], "player 'tavli:runner,runner,runner' plays the tavli "
                                                             "rotation"),
])
def test_bad_rotation_input_is_one_line(arguments, line):
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "play", *arguments, "--advisor", "none"], input="",
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith(f"tapa-ai play: {line}"), \
        done.stderr


def test_tapa_ai_play_tabla_as_a_process():
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "play", "--tabla", "1", "--bot", "tabla:runner,"
                           "random,heuristic", "--advisor", "none", "--seed", "4"], input="board\nhint\nquit\n",
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    screen = done.stdout
    assert ("tapa-ai play: a Tabla match to 1 point (backgammon, gulbara, tapa in turn, no cube). You are X, the bot "
            "(tabla:runner,random,heuristic) is O. Seed 4.") in screen
    assert "Game 1 of the Tabla match: backgammon (the next game is gulbara). Score: you 0, O 0 (Tabla match to " \
           "1). It opens with an opening roll." in screen
    assert "No advice: advice is off (--advisor none)." in screen
