"""``tapa-ai play --tavli N``: a Tavli match (docs/rules.md 9) in the terminal, driven as a person drives it.

The rotation Portes, Plakoto, Fevga; the first game and a game after a draw open with an opening roll, any
other game is opened by the winner of the one before; the bot of each game's variant plays by the match score
and ``hint`` ranks by the match-winning chance; save and load keep the whole match.
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

from tapa_ai.bots.rotation import make_rotation_player
from tapa_ai.cube.rotation_met import rotation_met
from tapa_ai.flow import GameState, MatchState
from tapa_ai.flow.match import GameRecord
from tapa_ai.flow.rotation import RotationMatch
from tapa_ai.notation import board, format_move
from tapa_ai.play import PlaySession, SaveError, load_game, read_file
from tapa_ai.play.cli_play import LaunchError, launch, rotation_advisors
from tapa_ai.rules.rotations import ROTATIONS

ROOT = Path(__file__).resolve().parent.parent
TAVLI = ROTATIONS["tavli"]
PORTES, PLAKOTO, FEVGA = TAVLI.games
OLD_SAVE = ROOT / "tests" / "data" / "old_tavli_save.json"
"""A Tavli match to 3 saved in its second game by tapa-ai play before rotations were data (its ``tavli`` key,
format ``tapa-ai/tavli``), written by that version's code (commit e29df89)."""


def tavli_session(spec="runner", length=2, seed=5, human="X", script="", advisors=None):
    out = io.StringIO()
    player = make_rotation_player(spec, TAVLI)
    session = PlaySession.rotation_match(player, length, advisors=advisors, human=human, seed=seed,
                                         input=io.StringIO(script), output=out, colour=False)
    return session, out


def first_move(session) -> str:
    """What the scripted person types: the first legal move, else Enter (roll)."""
    game = session.match.game
    return format_move(game.moves[0]) if game.phase == "move" else ""


def play_until(session, stop, limit=5000) -> None:
    for _ in range(limit):
        if stop(session):
            return
        assert session.waiting, "the session ended first"
        session.handle_line(first_move(session))
    raise AssertionError("the session did not get there")


def finish(session) -> None:
    play_until(session, lambda s: s.done)


@pytest.mark.parametrize("spec, length, seed, human", [("runner", 3, 5, "X"), ("random", 2, 8, "O"),
                                                       ("heuristic", 1, 3, "X")])
def test_a_whole_tavli_match_rotates_the_games_and_the_winner_opens_the_next(spec, length, seed, human):
    session, out = tavli_session(spec, length, seed, human)
    session.start()
    choose = np.random.default_rng(seed)
    for _ in range(20000):
        if not session.waiting:
            break
        game = session.match.game
        session.handle_line(format_move(game.moves[choose.integers(len(game.moves))]) if game.phase == "move" else "")
    screen = out.getvalue()
    match = session.match
    assert session.done and match.is_over and "Internal error" not in screen and "Illegal" not in screen
    assert screen.startswith(f"tapa-ai play: a Tavli match to {length} point{'s' if length > 1 else ''} (portes, "
                             f"plakoto, fevga in turn, no cube). You are {human}, the bot ({spec}) is ")
    games = match.played + (match.game,)
    assert len(games) == len(match.results) == match.game_number
    score = [0, 0]
    for number, (game, (variant, record)) in enumerate(zip(games, match.results), start=1):
        assert variant == TAVLI.variants[(number - 1) % 3] and game.rules == TAVLI.rules(number)
        assert (record.winner, record.points) == (game.winner, game.points_won)
        score["XO".index(record.winner)] += record.points if record.winner else 0
        line = f"Game {number} of the Tavli match: {variant} (the next game is {TAVLI.variant(number + 1)})."
        assert line in screen
        previous = match.results[number - 2][1] if number > 1 else None
        if previous is None or previous.winner is None:
            assert game.history[0].action == "opening"
        else:  # the winner of the game before opens, rolling both dice
            assert game.history[0].action == "move" and game.history[0].side == previous.winner
            who = "you" if previous.winner == human else previous.winner
            opens = "You open" if who == "you" else who + " opens"
            assert re.search(rf"{re.escape(line)} Score: [^\n]*\. {opens}, rolling both "
                             rf"dice \({who} won game {number - 1}\)\.", screen)
    assert tuple(score) == match.score and max(score) >= length
    lines = screen.splitlines()
    winner = "You win" if match.winner == human else f"{match.winner} wins"
    assert lines[-1] == f"{winner} the Tavli match {max(score)}-{min(score)}" + ("!" if winner == "You win" else ".")
    assert lines[-2].startswith("Games: 1 portes: ")
    # The board's footer names the game, its variant and the next.
    assert f"game 1 portes (next plakoto), Tavli match to {length}: you 0, " in screen


def test_a_drawn_game_scores_nothing_moves_the_rotation_on_and_the_next_opens_with_an_opening_roll():
    session, out = tavli_session("runner", 3, seed=2)
    # Game 2 (Plakoto) at 1-0: O has pinned X's mother, X pins O's with 3/1: both mothers pinned, a draw.
    layout = "24:XO 1:O 3:X 10:" + "X" * 13 + " 15:" + "O" * 13
    game = GameState.new(PLAKOTO, opener="X", position=board(PLAKOTO, layout, turn="X")).rolled((2, 1))
    session.match = RotationMatch(MatchState(game, 3, (1, 0), 2, results=(GameRecord(1, "X", "single", 1, 1),)),
                                  TAVLI)
    session.start()
    assert session.turn is not None  # X has a choice: the move is asked for
    session.handle_line("3/1")
    screen = out.getvalue()
    assert "Both mothers are pinned: the game is a draw. Nobody scores." in screen
    assert ("Game 3 of the Tavli match: fevga (the next game is portes). Score: you 1, O 0 (Tavli match to 3). "
            "It opens with an opening roll: game 2 was a draw.\nOpening roll: ") in screen
    match = session.match
    assert match.score == (1, 0) and match.variant == "fevga" and match.game.history[0].action == "opening"
    assert [(variant, record.winner, record.points) for variant, record in match.results][-1] == ("plakoto", None, 0)


# --------------------------------------------------------------------------
# The bot plays by the score; hint ranks by the match-winning chance
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def net_player():
    player = make_rotation_player("net:tavli@0ply", TAVLI)
    yield player
    player.close()


def test_the_net_bot_plays_by_the_match_score_and_hint_ranks_by_the_match_winning_chance(net_player):
    out = io.StringIO()
    session = PlaySession.rotation_match(net_player, 3, advisors=rotation_advisors(net_player, None), seed=4,
                                         input=io.StringIO(""), output=out, colour=False)
    # Game 4 (Portes again) at X 1, O 2: X needs 2, O 1.
    records = (GameRecord(1, "X", "single", 1, 1), GameRecord(2, "O", "gammon", 1, 2),
               GameRecord(3, None, "draw", 1, 0))
    session.match = RotationMatch(MatchState(GameState.new(PORTES), 3, (1, 2), 4, results=records), TAVLI)
    seen = []
    bot = net_player.bot("portes")
    original = bot.choose_at_score

    def spy(afterstates, rng, score):
        seen.append((int(score.away[0]), int(score.opponent_away[0]), int(score.game[0])))
        return original(afterstates, rng, score)

    bot.choose_at_score = spy
    try:
        session.start()
        play_until(session, lambda s: s.last_bot_move is not None and s.turn is not None)
    finally:
        del bot.choose_at_score
    assert seen and set(seen) == {(1, 2, 0)}  # O (the bot) needs 1, X needs 2, the 4th game: Portes, index 0
    # The bot's move is the best by the match-winning chance at the score (0 ply: the advisor's own ranking).
    analyzer = session.advisor.analyzer()
    last = session.last_bot_move
    values = rotation_met(TAVLI).class_values(analyzer.points, [1], [2], 3)[0]
    ranked, _ = analyzer.rank(last.position, last.dice, plies=0, class_values=values)
    chosen = next(move for move in ranked if move.position.points == last.played.points)
    assert chosen.match_winning_chance == pytest.approx(ranked[0].match_winning_chance, abs=1e-9)
    assert analyzer.rules.name == "portes"  # the backgammon model playing Portes' points

    before = len(out.getvalue())
    session.handle_line("hint 3")
    hint = out.getvalue()[before:]
    turn = session.turn
    assert (f"the best by {session.advisor.name} at the score (game 4 of a Tavli match to 3, you need 2, the other "
            "side 1): your match-winning chance, and the equity (points per game):") in hint
    shown = [float(x) / 100 for x in re.findall(r"match\s+([\d.]+)%", hint)]
    assert len(shown) == min(3, len(turn.moves)) and shown == sorted(shown, reverse=True)
    values = rotation_met(TAVLI).class_values(analyzer.points, [2], [1], 3)[0]
    ranked, _ = analyzer.rank(turn.position, turn.dice, limit=3, class_values=values)
    assert shown == [pytest.approx(move.match_winning_chance, abs=5e-5) for move in ranked]
    assert f"1. {ranked[0].move}" in hint
    # The score changes the values: the same moves at 0-0 of a match to 3 (game 1) are worth other chances.
    level = rotation_met(TAVLI).class_values(analyzer.points, [3], [3], 0)[0]
    assert not np.allclose(values, level)
    before = len(out.getvalue())
    session.handle_line("eval")
    assert re.search(r"match-winning chance [\d.]+% for you \(game 4 of a Tavli match to 3, you need 2",
                     out.getvalue()[before:])


# --------------------------------------------------------------------------
# Save, load, undo
# --------------------------------------------------------------------------

def test_save_and_load_keep_the_whole_match_and_the_same_dice(tmp_path):
    session, out = tavli_session("runner", 3, seed=6)
    session.start()
    play_until(session, lambda s: s.match.game_number == 2 and s.turn is not None and len(s.match.game.history) > 4)
    # undo within a game: back to the previous decision, the finished game kept
    history = len(session.match.game.history)
    session.handle_line(first_move(session))
    session.handle_line("undo")
    assert session.match.game_number == 2 and len(session.match.game.history) == history
    assert isinstance(session.match, RotationMatch) and len(session.match.played) == 1
    path = tmp_path / "tavli.json"
    session.handle_line(f"save {path}")
    data = json.loads(path.read_text())
    assert data["variant"] == "plakoto" and data["match_length"] == 3 and data["bot"] == "runner"
    assert "tavli" not in data  # the key of saves written before rotations were data
    tavli = data["rotation_match"]
    assert tavli["format"] == "tapa-ai/rotation" and tavli["length"] == 3 and tavli["rotation"] == "tavli"
    assert [(g["number"], g["variant"], g["game"]["phase"]) for g in tavli["played"]] == [(1, "portes", "over")]
    assert tavli["played"][0]["game"]["history"][0]["action"] == "opening"
    saved = load_game(read_file(path))
    assert saved.is_rotation and saved.match == session.match

    other, other_out = tavli_session("runner", 3, seed=99)
    notes = other.load(saved)
    assert notes == [] and other.match == session.match
    finish(session)
    finish(other)
    assert other.match == session.match and other.match.is_over  # the same dice and bot choices after the load

    # tapa-ai play --load FILE: the file says it is a Tavli match
    out = io.StringIO()
    assert launch(load=str(path), advisor="none", input=io.StringIO("quit\n"), output=out) == 0
    screen = out.getvalue()
    assert "tapa-ai play: a Tavli match to 3 points (portes, plakoto, fevga in turn, no cube)." in screen
    assert "the bot (runner) is O" in screen
    assert re.search(rf"Loaded {re.escape(str(path))}: game 2 \(plakoto\) of a Tavli match to 3, X to move with "
                     r"\d-\d\.", screen)
    assert "Game 2 of the Tavli match: plakoto (the next game is fevga)." in screen


def tavli_save(tmp_path):
    session, _ = tavli_session("runner", 3, seed=6)
    session.start()
    play_until(session, lambda s: s.match.game_number == 2 and s.turn is not None)
    path = tmp_path / "tavli.json"
    session.handle_line(f"save {path}")
    return json.loads(path.read_text())


def edited(data, change):
    data = json.loads(json.dumps(data))
    change(data)
    return data


def test_a_malformed_tavli_save_gets_one_clear_line(tmp_path):
    data = tavli_save(tmp_path)
    winner = data["rotation_match"]["played"][0]["game"]["result"]["winner"]
    cases = [
        (lambda d: d["rotation_match"].update(played=[]),
         "file.rotation_match.played: 0 finished game(s), but the current game is game 2: want 1"),
        (lambda d: d["rotation_match"]["played"][0].update(variant="fevga"),
         "file.rotation_match.played[0].variant: game 1 of the tavli match is portes, got 'fevga'"),
        (lambda d: d["rotation_match"].update(length=4),
         "file.rotation_match.length: 4 disagrees with file.match.length 3"),
        (lambda d: (d.pop("score"), d["match"]["score"].update({winner: 0})),
         "is not the sum of the games' points"),
        (lambda d: d["rotation_match"]["played"][0]["game"]["result"].update(winner="O" if winner == "X" else "X"),
         "file.rotation_match.played[0].game"),
        (lambda d: d.update(rotation_match=[1, 2]),
         "file.rotation_match: must be an object of the rotation match's format, length, rotation"),
        # another rotation than the games played: game 2 would be fevga
        (lambda d: d["rotation_match"].update(rotation=["portes", "fevga", "plakoto"]),
         "file.match.game: game 2 of the custom match is fevga (the rotation portes, fevga, plakoto), got plakoto"),
        (lambda d: d["rotation_match"].update(rotation="tavla"),
         "file.rotation_match.rotation: must be a preset's name (\"tavli\", \"tabla\") or a list of 1 to 12 games"),
        (lambda d: d["rotation_match"].update(rotation=[]),
         "file.rotation_match.rotation: must be a list of 1 to 12 games"),
        (lambda d: d["rotation_match"].update(rotation=["portes", "shesh-besh"]),
         "file.rotation_match.rotation[1]: must be a variant's name or"),
        (lambda d: d["rotation_match"].update(rotation=[{"variant": "portes", "rules": {"cube": True}}, "plakoto"]),
         "file.rotation_match.rotation: game portes of the rotation: cube must be false"),
        (lambda d: d.update(tavli={**d["rotation_match"], "format": "tapa-ai/tavli",
                                   "rotation": ["portes", "plakoto", "fevga"]}),
         "file: both 'rotation_match' and 'tavli': a save holds one rotation's match"),
    ]
    for change, message in cases:
        broken = edited(data, change)
        with pytest.raises(SaveError) as caught:
            load_game(broken)
        assert message in str(caught.value) and "\n" not in str(caught.value), (message, str(caught.value))
    # A game opened by the wrong side: the first game's loser cannot open the second.
    loser = "O" if winner == "X" else "X"
    assert data["match"]["game"]["history"][0]["side"] == winner
    broken = edited(data, lambda d: d["match"]["game"]["history"][0].update(side=loser))
    with pytest.raises(SaveError, match=rf"^file.match.game.history: game 2 must be opened by {winner}, the winner "
                                        "of game 1$"):
        load_game(broken)


def test_tavli_and_other_sessions_refuse_each_others_saves_and_bad_options(tmp_path):
    data = tavli_save(tmp_path)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    from tapa_ai.bots.basic import RunnerBot
    from tapa_ai.rules import variant_rules

    out = io.StringIO()
    plain = PlaySession(variant_rules("tapa"), RunnerBot(), seed=1, input=io.StringIO(f"load {path}\nquit\n"),
                        output=out, colour=False)
    plain.run()
    assert (f"Cannot load {path}: it is a Tavli match to 3 and this session plays tapa; start tapa-ai play --load "
            "FILE. The game goes on.") in out.getvalue()
    with pytest.raises(LaunchError, match=r"^--tavli 2 but .* holds a Tavli match to 3$"):
        launch(tavli=2, load=str(path), input=io.StringIO(""), output=io.StringIO())
    with pytest.raises(LaunchError, match=r"^--tabla 3 but .* holds a Tavli match to 3 \(tavli \(portes, plakoto, "
                                          r"fevga\)\)$"):
        launch(tabla=3, load=str(path), input=io.StringIO(""), output=io.StringIO())
    with pytest.raises(LaunchError, match="^--tavli 2 plays Portes, Plakoto and Fevga in turn to 2 points: it takes "
                                          "no --variant$"):
        launch(tavli=2, variant="tapa", input=io.StringIO(""), output=io.StringIO())
    with pytest.raises(LaunchError, match="it takes no --match-length$"):
        launch(tavli=2, match_length=3, input=io.StringIO(""), output=io.StringIO())
    for length in (0, 26):
        with pytest.raises(LaunchError, match=rf"^--tavli {length}: a rotation's match \(Tavli, Tabla\) is to 1 to 25 "
                                              "points, its match equity table's"):
            launch(tavli=length, input=io.StringIO(""), output=io.StringIO())
    runner = make_rotation_player("runner", TAVLI)
    for length, shown in ((0, "0"), (26, "26"), (True, "True"), (2.5, "2.5"), ("3", "'3'")):
        with pytest.raises(ValueError, match=rf"^Tavli match length {shown}: a rotation's match \(Tavli, Tabla\) is "
                                             "to 1 to 25 points"):
            PlaySession.rotation_match(runner, length, input=io.StringIO(""), output=io.StringIO())


def test_tapa_ai_play_tavli_as_a_process(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "play", "--tavli", "3", "--match-length", "5"],
                          input="", capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "tapa-ai play: --tavli 3 plays Portes, Plakoto and Fevga in turn to 3 points: it takes no --match-length"]
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "play", "--tavli", "1", "--bot", "tavli:runner,random,"
                           "heuristic", "--advisor", "none", "--seed", "4"], input="board\nhint\nquit\n",
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    screen = done.stdout
    assert ("tapa-ai play: a Tavli match to 1 point (portes, plakoto, fevga in turn, no cube). You are X, the bot "
            "(tavli:runner,random,heuristic) is O. Seed 4.") in screen
    assert "Game 1 of the Tavli match: portes (the next game is plakoto). Score: you 0, O 0 (Tavli match to 1). " \
           "It opens with an opening roll." in screen
    assert "No advice: advice is off (--advisor none)." in screen


def test_resign_gives_up_the_game_not_the_match_and_undo_stays_within_a_game():
    session, out = tavli_session("runner", 3, seed=6)
    session.start()
    play_until(session, lambda s: s.turn is not None)
    session.handle_line("resign gammon")
    session.handle_line("y")
    screen = out.getvalue()
    # at the start nothing is borne off: a gammon is the most the bot can win in Portes (docs/rules.md 9)
    assert "O accepts a gammon (2 points): it cannot win more." in screen
    assert "Game over: O wins 2 points, you resigned: a gammon." in screen
    assert ("Game 2 of the Tavli match: plakoto (the next game is fevga). Score: you 0, O 2 (Tavli match to 3). "
            "O opens, rolling both dice (O won game 1).") in screen
    match = session.match
    assert isinstance(match, RotationMatch) and match.game_number == 2 and match.score == (0, 2)
    assert len(match.played) == 1 and match.played[0].winner == "O" and match.game.history[0].side == "O"
    # The first decision of game 2: nothing of game 1 can be taken back.
    play_until(session, lambda s: s.turn is not None)
    before = len(out.getvalue())
    session.handle_line("undo")
    assert "Nothing to undo." in out.getvalue()[before:] and session.match.game_number == 2
    # The whole match, saved now, loads back (a resigned game has no final move in its history).
    data = session.saved_game()
    assert RotationMatch.from_dict(data.match.to_dict()) == session.match


def test_a_save_of_a_tavli_match_from_before_rotations_were_data_still_loads_and_plays_on(tmp_path):
    """The old ``tavli`` key (format ``tapa-ai/tavli``) reads as the Tavli rotation's match; a save of it now
    writes the ``rotation_match`` key."""
    data = json.loads(OLD_SAVE.read_text())
    assert data["tavli"]["format"] == "tapa-ai/tavli" and "rotation_match" not in data
    saved = load_game(data)
    assert saved.is_rotation and saved.match.rotation == TAVLI and saved.match.game_number == 2
    assert saved.match.played[0].rules == PORTES and saved.match.rules == PLAKOTO and saved.bot == "runner"
    out = io.StringIO()
    path = tmp_path / "again.json"
    assert launch(load=str(OLD_SAVE), advisor="none", input=io.StringIO(f"save {path}\nquit\n"), output=out) == 0
    screen = out.getvalue()
    assert "tapa-ai play: a Tavli match to 3 points (portes, plakoto, fevga in turn, no cube)." in screen
    assert re.search(r"Loaded .*old_tavli_save.json: game 2 \(plakoto\) of a Tavli match to 3, ", screen)
    again = json.loads(path.read_text())
    assert "tavli" not in again and again["rotation_match"]["rotation"] == "tavli"
    assert load_game(again).match == saved.match
    # the old key keeps its old shape: a rotation other than Tavli's is refused in one line
    broken = edited(data, lambda d: d["tavli"].update(rotation="tabla"))
    with pytest.raises(SaveError, match=r"^file.tavli.rotation: must be \["):
        load_game(broken)
