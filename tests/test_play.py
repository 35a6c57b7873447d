"""``tapa-ai play``: the board, move entry, and whole sessions driven as a person drives them."""

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tapa_ai.bots.basic import RandomBot, RunnerBot
from tapa_ai.notation import MoveTextError, board, format_move, position_to_json
from tapa_ai.play import Advisor, BoardInfo, Palette, PlaySession, load_game, read_file, render_board
from tapa_ai.play.board import colour_wanted
from tapa_ai.play.moves import TurnInProgress, illegal_reason
from tapa_ai.rules import legal_moves, start_position, variant_rules

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_TAPA = ROOT / "checkpoints" / "tapa.pt"
TAPA = variant_rules("tapa")


def near_end(dice=None, turn="X"):
    """X has two checkers left, on its 6- and 1-points; O has borne off none (so X wins a gammon).

    With 6-5, X can bear both off (6/off 1/off) or not (6/1 1/off): a choice, so the move is asked for.
    """
    position = board("tapa", "1:X 6:X 20:OOO 21:OOO 22:OOO 23:OOO 24:OOO", turn=turn)
    data = {"format": "tapa-ai/play", "version": 1, "position": position_to_json(position)}
    if dice:
        data["dice"] = list(dice)
    return data


def write(path, data):
    path.write_text(json.dumps(data))
    return path


def responses(screen, typed_lines):
    """(line typed, what the session answered) for every line, in order (input is echoed after the prompt)."""
    answers, position = [], 0
    for typed in typed_lines:
        start = screen.index(f" {typed}\n", position) + len(typed) + 2
        prompt_end = [screen.find(mark, start) for mark in ("> ", "] ")]
        end = min([p for p in prompt_end if p >= 0], default=len(screen))
        end = screen.rfind("\n", start, end) + 1 or len(screen)
        answers.append((typed, screen[start:end]))
        position = start
    return answers


def session_for(script, rules=TAPA, bot=None, **options):
    out = io.StringIO()
    options.setdefault("advisor", Advisor(None, rules, why_none="no advisor in this test"))
    session = PlaySession(rules, bot or RunnerBot(), input=io.StringIO(script), output=out, colour=False, **options)
    return session, out


def runner():
    bot = RunnerBot()
    bot.name = "runner"
    return bot


@pytest.fixture(scope="module")
def advisor():
    """The shipped tapa network at 0 ply behind hint and eval (loaded once)."""
    return Advisor(f"net:{SHIPPED_TAPA}", TAPA)


# --------------------------------------------------------------------------
# The board
# --------------------------------------------------------------------------

def test_board_shows_pins_under_stacks_mothers_off_and_pips():
    position = board("tapa", "1:OXX 2:OOOOOOO 24:XO 20:XXXXXXXXXXX 6:OOOO 5:OO", turn="X")
    text = render_board(position, BoardInfo("X", "runner", dice=(3, 1), cube_value=2, cube_owner="O",
                                            match_length=5, score=(2, 3), game_number=3))
    lines = text.splitlines()
    assert lines[0].split() == [str(p) for p in range(13, 25)]
    assert lines[-4].split() == [str(p) for p in range(12, 0, -1)]
    # Top right is X's 24-point: the pinned X (lower case) at the edge, the O pinning it next.
    assert lines[2].rstrip().endswith("x |") and lines[3].split("|")[3].split()[-1] == "O"
    # Bottom right is X's 1-point: the pinned O at the edge, then two X above it.
    assert lines[12].split("|")[3].split()[-1] == "o" and lines[11].split("|")[3].split()[-1] == "X"
    # 11 X on the 20-point: four drawn, then the count.
    assert lines[6].split("|")[3].split() == ["11"] and lines[5].split("|")[3].split() == ["X"]
    assert "O runner: off  0, pips" in lines[1] and "X you: off  1, pips 246" in lines[13]
    assert "cube: 2 (owned by O)" in text and "game 3, match to 5: you 2, O 3 | dice 3-1 (you)" in text
    assert "pinned: X on 24 under 1 O; O on 1 under 2 X" in text
    assert "your mother is PINNED by O" in text and "O's mother is PINNED by X (on your 1-point)" in text
    assert "\033[" not in text


def test_board_is_drawn_from_the_humans_side_and_shows_the_bar():
    start = start_position("backgammon")
    position = start.with_changes(bar=(0, 1), points=("O",) + start.points[1:])
    text = render_board(position, BoardInfo("O", "gnubg:0"))
    lines = text.splitlines()
    # O's 24-point (X's 1) is top right from O's view; O has one checker there, one on the bar.
    assert lines[2].split("|")[3].split()[-1] == "O"
    assert "BAR" in lines[1] and "O1" in text
    assert "O you: off  0, pips 168" in text and "X gnubg:0: off  0, pips 167" in text


def test_colour_only_on_a_terminal_without_no_color(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert colour_wanted(Terminal()) and not colour_wanted(io.StringIO())
    assert not colour_wanted(Terminal(), no_color=True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(Terminal())
    coloured = render_board(start_position("tapa"), BoardInfo("X"), Palette(True))
    assert "\033[1;33m X \033[0m" in coloured


# --------------------------------------------------------------------------
# Entering moves
# --------------------------------------------------------------------------

def turn(position, dice):
    return TurnInProgress(position, dice, tuple(legal_moves(position, dice)))


def test_one_checker_over_both_dice_and_repeats_are_whole_moves():
    start = start_position("tapa")
    assert format_move(turn(start, (4, 3)).enter("24/20/17")) in ("24/20 20/17", "24/21 21/17")
    assert format_move(turn(start, (3, 3)).enter("24/21(2) 23/20(2)")).count("/") == 4
    position = board("backgammon", "bar:X 6:XXXXX 8:XXX 13:XXXX 19:OO 12:OOOOO 17:OOO 1:OOOOO", turn="X")
    assert format_move(turn(position, (3, 1)).enter("bar/22 6/5")) == "bar/22 6/5"
    home = board("tapa", "6:XX 5:X 20:OOO", turn="X")
    assert format_move(turn(home, (6, 5)).enter("6/off 5/off")) == "6/off 5/off"


def test_a_move_can_be_entered_in_parts_and_restarted():
    entry = turn(start_position("tapa"), (4, 3))
    assert entry.enter("24/20") == "partial" and entry.dice_left == [3]
    assert entry.shown_position.stack("X", 20) == "X"
    entry.reset()
    assert entry.dice_left == [4, 3] and entry.shown_position == entry.position
    assert entry.enter("23/20") == "partial" and entry.entered == "23/20"
    assert format_move(entry.enter("20/16")) == "23/20 20/16"


def test_a_start_that_cannot_be_completed_is_refused():
    # 6-1 with the 7-point blocked: the only legal move is 13/12/6, so 2/1 (which would leave the 6
    # unplayable) is no start of a move, and 24/10 is nothing at all.
    position = board("tapa", "13:X 2:XXXXXXXXXXXXXX 7:OO 24:OOOOOOOOOOOOO", turn="X")
    entry = turn(position, (6, 1))
    for text in ("2/1", "24/10"):
        with pytest.raises(MoveTextError):
            entry.enter(text)
        assert entry.entered == ""
    assert "play as many dice as you can" in illegal_reason(position, (6, 1), "2/1")
    assert entry.enter("13/12") == "partial" and format_move(entry.enter("12/6")) == "13/12 12/6"


@pytest.mark.parametrize("layout, dice, text, reason", [
    ("24:XXXXX 23:XXXXX 22:XXXXX 18:OO 3:OOOOOOOOOOOOO", (6, 2), "24/18 24/22", "your 18-point is blocked (2 O"),
    ("24:XXXXX 23:XXXXX 22:XXXX 19:XO 1:OOOOOOOOOOOOOO", (3, 2), "19/16 22/20", "your checker on 19 is pinned"),
    ("24:XXXXX 23:XXXXX 22:XXXXX 1:OOOOOOOOOOOOOOO", (3, 2), "13/10 24/22", "no checker on your 13-point"),
    ("24:XXXXX 23:XXXXX 22:XXXXX 1:OOOOOOOOOOOOOOO", (3, 2), "24/16", "24/16 is 8 pips; your dice are 3-2"),
    ("7:X 6:XXXX 1:O", (6, 1), "6/off 7/6", "bear off only when all your checkers are in your home board"),
    ("24:XXXXX 23:XXXXX 22:XXXXX 1:OOOOOOOOOOOOOOO", (4, 3), "24/21(2)", "24/21(2) does not fit your dice"),
])
def test_illegal_moves_get_a_short_reason(layout, dice, text, reason):
    position = board("tapa", layout, turn="X")
    assert reason in illegal_reason(position, dice, text)


def test_entering_from_the_bar_comes_first_in_backgammon():
    position = board("backgammon", "bar:X 6:XXXXX 8:XXX 13:XXXXXX 19:OO 12:OOOOO 17:OOO 1:OOOOO", turn="X")
    assert "enter it first" in illegal_reason(position, (3, 1), "13/10 6/5")
    assert "no checker on the bar" in illegal_reason(start_position("backgammon"), (3, 1), "bar/22 6/5")


@pytest.mark.parametrize("variant, reason", [
    ("plakoto", "plakoto has no bar: checkers are pinned, not hit"),
    ("tapa", "tapa has no bar: checkers are pinned, not hit"),
    ("fevga", "fevga has no bar: no checker is ever hit (a single checker holds its point)"),
    ("narde", "narde has no bar: no checker is ever hit (a single checker holds its point)"),
])
def test_bar_in_a_game_without_a_bar_says_the_variant_has_none(variant, reason):
    """Before: "you have no checker on the bar", as if the game had one (docs/rules.md 3, 8.2: no hits)."""
    rules = variant_rules(variant)
    data = {"format": "tapa-ai/play", "version": 1, "position": position_to_json(start_position(variant)
                                                                                   .with_changes(turn="X")),
            "dice": [6, 5]}
    session, out = session_for("bar/20\nquit\n", rules=rules, seed=3)
    session.start_notes = session.load(load_game(data, "test"))
    session.run()
    answer = dict(responses(out.getvalue(), ["bar/20"]))["bar/20"]
    assert answer.startswith(f"Illegal move 'bar/20': {reason}.\nLegal moves: "), answer
    assert "no checker on the bar" not in answer


@pytest.mark.parametrize("variant, bar_shown", [("tapa", False), ("plakoto", False), ("backgammon", True),
                                                ("portes", True)])
def test_move_examples_show_bar_only_in_games_with_hits(variant, bar_shown):
    """The greeting and help taught tapa and plakoto players to type bar/22, a move their game cannot have."""
    session, out = session_for("help\nquit\n", rules=variant_rules(variant), seed=2)
    session.run()
    greeting = out.getvalue().splitlines()[1]
    assert greeting.startswith("Enter moves like 24/21 13/11, 6/off") and "13/11(2)" in greeting
    assert ("bar/22" in greeting) == bar_shown and ("bar/22" in out.getvalue()) == bar_shown


@pytest.mark.parametrize("variant", ["plakoto", "portes", "fevga", "narde"])
def test_hint_and_eval_do_not_mention_a_cube_in_a_game_without_one(variant):
    """Before: "equity for you (points per game, before the cube)" in fevga, which has no cube."""
    rules = variant_rules(variant)
    net = "backgammon" if variant == "portes" else variant  # Portes is played by the backgammon model
    advisor = Advisor(f"net:{ROOT / 'checkpoints' / (net + '.pt')}", rules)
    position = start_position(variant).with_changes(turn="X")
    hint = advisor.hint(position, (6, 5), 3)
    evaluation = advisor.evaluation(position, "X")
    assert hint[0].endswith("equity for you (points per game):") and len(hint) >= 2, hint
    assert evaluation[-1].startswith("  equity ") and evaluation[-1].endswith(" points per game"), evaluation
    assert not any("cube" in line for line in hint + evaluation)


def test_hint_and_eval_say_the_equity_is_before_the_cube_where_there_is_one(advisor):
    position = start_position("tapa").with_changes(turn="X")
    assert advisor.hint(position, (6, 5), 2)[0].endswith("equity for you (points per game, before the cube):")
    assert advisor.evaluation(position, "X")[-1].endswith(" points per game before the cube")


# --------------------------------------------------------------------------
# A scripted session, as a person types it
# --------------------------------------------------------------------------

def test_scripted_session_typo_illegal_hint_undo_save_load_to_the_end(tmp_path, advisor):
    opening = write(tmp_path / "opening.json", {"format": "tapa-ai/play", "version": 1,
                                                "position": position_to_json(start_position("tapa")),
                                                "dice": [4, 3]})
    ending = write(tmp_path / "ending.json", near_end(dice=(6, 5)))
    saved = tmp_path / "saved.json"
    script = "\n".join([
        f"load {opening}",
        "hnit",                 # a typo
        "24/16",                # an illegal move
        "hint 2",
        "24/20",                # the first part of a move
        "undo",
        "24/20/17",             # one checker over both dice
        "eval",
        f"save {saved}",
        "undo",                 # back to 4-3
        f"load {saved}",        # forward again
        f"load {ending}",
        "3/off",
        "6/off 1/off",
        "n",                    # no other game
    ]) + "\n"
    session, out = session_for(script, bot=runner(), seed=5, advisor=advisor)
    assert session.run() == 0
    screen = out.getvalue()

    answers = responses(screen, script.splitlines())

    def after(command, occurrence=0):
        return [text for typed, text in answers if typed == command][occurrence]

    assert "Unknown command 'hnit'. Did you mean 'hint'?" in after("hnit")
    illegal = after("24/16").splitlines()
    assert illegal[0] == "Illegal move '24/16': 24/16 is 8 pips; your dice are 4-3."
    assert illegal[1].startswith("Legal moves: 24/20 24/21, ") and illegal[1].count("/") == 24
    hint = after("hint 2").splitlines()
    assert hint[0].startswith("12 legal moves with 4-3; the best by net:")
    equities = [float(line.split()[3]) for line in hint[1:3]]
    assert hint[1].lstrip().startswith("1. ") and hint[2].lstrip().startswith("2. ") and equities[0] >= equities[1]
    assert after("24/20").startswith("So far: 24/20. Still to play: 3")
    assert after("undo").startswith("Took back 24/20.")
    played = after("24/20/17")
    assert played.startswith("You play 24/20 20/17.") or played.startswith("You play 24/21 21/17.")
    assert "\nO rolls " in played and "(on your board: " in played
    evaluation = after("eval")
    assert evaluation.startswith("evaluation by net:") and "equity " in evaluation and "O's move " in evaluation
    assert after(f"save {saved}").startswith(f"Saved to {saved}.")
    assert after("undo", 1).startswith("Took back your last move and O's reply.")
    assert "game 1, money play: you 0, O 0 | dice 4-3 (you)" in after("undo", 1)
    assert after(f"load {saved}").startswith(f"Loaded {saved}: game 1, X to roll.")
    assert after(f"load {ending}").startswith(f"Loaded {ending}: game 1, X to move with 6-5.")
    assert "you have no checker on your 3-point" in after("3/off")
    end = after("6/off 1/off")
    assert end.startswith("You play 6/off 1/off.")
    assert "Game over: you win 2 points, a gammon." in end and "Score: you 2, O 0" in end
    assert screen.endswith("Another game? [y/N] n\nBye.\n")
    assert session.done and session.match.game.is_over


def test_the_save_file_holds_the_game_and_loads_to_the_same_state(tmp_path):
    saved = tmp_path / "game.json"
    session, out = session_for(f"save {saved}\n", seed=9, match_length=5)
    session.run()
    data = json.loads(saved.read_text())
    for key in ("variant", "rules", "bot", "human", "position", "turn", "dice", "score", "history", "match"):
        assert key in data
    assert data["variant"] == "tapa" and data["match_length"] == 5 and data["score"] == {"X": 0, "O": 0}
    assert data["position"]["points"] == list(session.match.game.position.points)
    assert data["history"][0]["action"] == "opening"
    loaded = load_game(read_file(saved))
    assert loaded.match == session.match and loaded.bot == session.bot.name
    # The same dice come after loading, because the generators are saved too.
    other, _ = session_for("", seed=123, match_length=5)
    other.load(loaded)
    assert other.dice_rng.integers(1, 7, 10).tolist() == session.dice_rng.integers(1, 7, 10).tolist()


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not valid JSON"),
    (json.dumps({"format": "something-else"}), "expected 'tapa-ai/play'"),
    (json.dumps({"format": "tapa-ai/play", "version": 1,
                 "position": position_to_json(start_position("plakoto"))}), "it is a plakoto game"),
    (json.dumps({**near_end(), "position": {**near_end()["position"], "points": ["XXX"] * 24}}), "checkers"),
])
def test_a_bad_file_gets_a_clear_message_and_the_game_goes_on(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    session, out = session_for(f"load {bad}\nboard\n", seed=2)
    session.run()
    screen = out.getvalue()
    assert f"Cannot load {bad}: " in screen and message in screen and "The game goes on." in screen
    assert screen.count("13 14 15 16 17 18") >= 2  # the board again after the failed load
    assert "End of input: leaving." in screen


def test_a_save_whose_summary_disagrees_with_its_state_is_refused(tmp_path):
    saved = tmp_path / "game.json"
    session, _ = session_for(f"save {saved}\n", seed=9)
    session.run()
    data = json.loads(saved.read_text())
    data["position"]["points"][0] = "O" * 4 + data["position"]["points"][0][4:]
    data["score"] = {"X": 3, "O": 0}
    (tmp_path / "edited.json").write_text(json.dumps(data))
    session, out = session_for(f"load {tmp_path / 'edited.json'}\n", seed=9)
    session.run()
    assert "disagrees with file.match" in out.getvalue()


def test_undo_after_a_whole_move_replays_the_same_dice(tmp_path):
    opening = write(tmp_path / "opening.json", {"format": "tapa-ai/play", "version": 1,
                                                "position": position_to_json(start_position("tapa")),
                                                "dice": [4, 3]})
    session, out = session_for(f"load {opening}\n24/20 24/21\nundo\n24/20 24/21\n", seed=8)
    session.run()
    screen = out.getvalue()
    replies = [line for line in screen.splitlines() if line.startswith("O rolls")]
    assert len(replies) == 2 and replies[0] == replies[1]
    assert session.match.game.history[-1].side == "O"


def test_end_of_input_leaves_cleanly_and_bad_lines_never_crash():
    script = "\n".join(["", "   ", "help", "take", "pass", "roll", "double", "resign", "", "hint x", "save",
                        "load", "moves", "bar/", "25/20", "24/x", "13/11(9)", "?", "eval", "quit now"])
    session, out = session_for(script, seed=1)
    assert session.run() == 0
    screen = out.getvalue()
    assert "Cancelled: you did not resign." in screen and "save FILE: say where" in screen and "hint N" in screen
    assert "Leaving; the game was not saved." in screen or "End of input" in screen


def test_resigning_scores_the_game_at_what_the_position_is_worth(tmp_path):
    ending = write(tmp_path / "ending.json", near_end(turn="X"))
    session, out = session_for(f"load {ending}\nresign\ny\nn\n", seed=1)
    session.run()
    screen = out.getvalue()
    # X has borne off 13: resigning gives O a single game.
    assert "Resign, giving O a single game (1 point)? [y/N] y" in screen
    assert "Game over: O wins 1 point, you resigned: a single game." in screen
    assert session.match.score == (0, 1)


# --------------------------------------------------------------------------
# The cube and matches
# --------------------------------------------------------------------------

class DoublingBot(RunnerBot):
    """Doubles whenever it may and passes every double."""

    name = "doubler"

    def offer_double(self, positions, situation, rng):
        return np.ones(len(positions), dtype=bool)

    def accept_double(self, positions, situation, rng):
        return np.zeros(len(positions), dtype=bool)


def test_the_bot_doubles_the_human_passes_and_the_crawford_game_follows(tmp_path):
    bot_to_roll = write(tmp_path / "o.json", {**near_end(turn="O"), "match_length": 2})
    session, out = session_for(f"load {bot_to_roll}\nhint\npass\ndouble\n", bot=DoublingBot(), seed=3)
    session.run()
    screen = out.getvalue()
    assert "O doubles: the cube would go to 2." in screen and "O doubles to 2: take or pass?> hint" in screen
    assert "Game over: O wins 1 point, the double was passed." in screen
    assert "Game 2. Score: you 0, O 1 (match to 2). This is the Crawford game: no doubling." in screen
    assert "cube: none (Crawford game)" in screen
    assert "You cannot double: no doubling in the Crawford game." in screen


def test_taking_a_double_turns_the_cube(tmp_path):
    bot_to_roll = write(tmp_path / "o.json", near_end(turn="O"))
    session, out = session_for(f"load {bot_to_roll}\ntake\ndouble\n", bot=DoublingBot(), seed=3)
    session.run()
    screen = out.getvalue()
    assert "You take: the cube is at 2, and you own it." in screen and "cube: 2 (owned by you)" in screen
    assert session.match.game.cube_value == 2 and session.match.game.cube_owner == "X"


def test_the_human_doubles_and_the_bot_passes(tmp_path):
    human_to_roll = write(tmp_path / "x.json", near_end(turn="X"))
    session, out = session_for(f"load {human_to_roll}\ndouble\nn\n", bot=DoublingBot(), seed=3)
    session.run()
    screen = out.getvalue()
    assert "You double: the cube would go to 2.\nO passes the double." in screen
    assert "Game over: you win 1 point, the double was passed." in screen


def test_a_variant_without_cube_refuses_to_double():
    session, out = session_for("double\nhelp\n", rules=variant_rules("plakoto"), seed=4)
    session.run()
    screen = out.getvalue()
    assert "You cannot double: the rule set 'plakoto' has no cube" in screen
    assert "(plakoto has no doubling cube)" in screen and "cube:" not in screen


@pytest.mark.parametrize("variant, length, human", [("tapa", 3, "X"), ("plakoto", 2, "O"), ("backgammon", 1, "O")])
def test_a_whole_match_is_played_to_its_end(variant, length, human):
    rules = variant_rules(variant)
    session, out = session_for("", rules=rules, bot=RandomBot(), seed=17, match_length=length, human=human)
    session.start()
    choose = np.random.default_rng(0)
    for _ in range(5000):
        if not session.waiting:
            break
        game = session.match.game
        line = format_move(game.moves[choose.integers(len(game.moves))]) if game.phase == "move" else ""
        session.handle_line(line)
    screen = out.getvalue()
    assert session.done and session.match.is_over and "Internal error" not in screen
    winner_points = max(session.match.score)
    assert winner_points >= length
    assert re.fullmatch(r"(You win|X wins|O wins) the match \d+-\d+[.!]", screen.splitlines()[-1])
    assert screen.count("Game over:") + screen.count("the game is a draw") == len(session.match.results)


# --------------------------------------------------------------------------
# The command itself
# --------------------------------------------------------------------------

def test_tapa_ai_play_runs_as_a_process_to_the_end_of_a_game(tmp_path):
    ending = write(tmp_path / "ending.json", near_end(dice=(6, 5)))
    script = "hnit\n6/off 1/off\nn\n"
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "play", "--variant", "tapa", "--bot", "runner",
                           "--seed", "4", "--advisor", "none", "--load", str(ending)],
                          input=script, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    screen = done.stdout
    assert "You are X, the bot (runner) is O. Seed 4." in screen
    assert f"Loaded {ending}: game 1, X to move with 6-5." in screen
    assert "13 14 15 16 17 18" in screen and "X you: off 13, pips   7" in screen
    assert "Your move (6-5)> hnit\nUnknown command 'hnit'." in screen
    assert "You play 6/off 1/off." in screen and "Game over: you win 2 points, a gammon." in screen
    assert screen.endswith("Another game? [y/N] n\nBye.\n")
    assert "\033[" not in screen  # not a terminal: no colour


def test_tapa_ai_play_refuses_bad_options_with_a_message(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "play", "--bot", "gnubg:0", "--variant", "tapa"],
                          input="", capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2 and "tapa-ai play: bot 'gnubg:0' plays only backgammon" in done.stderr


@pytest.mark.skipif(os.name != "posix", reason="pseudo terminals are POSIX")
def test_on_a_terminal_the_board_is_in_colour(tmp_path):
    import pty
    import select

    ending = write(tmp_path / "ending.json", near_end(dice=(6, 5)))
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "tapa_ai.cli", "play", "--bot", "runner", "--seed", "1",
                                "--advisor", "none", "--load", str(ending)],
                               stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, close_fds=True)
    os.close(slave)
    screen = b""

    def read_until(token):
        nonlocal screen
        while token not in screen:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                return False
            try:
                screen += os.read(master, 65536)
            except OSError:
                return False
        return True

    try:
        assert read_until(b"Your move (6-5)> ")
        os.write(master, b"6/off 1/off\n")
        assert read_until(b"Another game? [y/N] ")
        os.write(master, b"n\n")
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    assert b"\033[1;33m" in screen and b"Game over: you win 2 points, a gammon." in screen


def test_a_network_bot_answers_the_cube_in_a_match(advisor):
    """The human doubles whenever it may and takes every double; the net decides its own cube actions."""
    net_bot = advisor.analyzer().bot
    session, out = session_for("", bot=net_bot, seed=21, match_length=3, advisor=advisor, show_eval=True)
    session.start()
    choose = np.random.default_rng(1)
    for _ in range(5000):
        if not session.waiting:
            break
        game = session.match.game
        if game.phase == "move":
            line = format_move(game.moves[choose.integers(len(game.moves))])
        elif game.phase == "roll":
            line = "double"
        elif game.phase == "double":
            line = "take"
        else:
            line = ""
        session.handle_line(line)
    screen = out.getvalue()
    assert session.done and session.match.is_over and "Internal error" not in screen
    assert "You double: the cube would go to 2." in screen
    assert re.search(r"O's move \S.* with \d-\d: equity [+-]\d\.\d{3} for O; by net:", screen)  # --show-eval
    assert ("O takes: the cube is at 2" in screen) or ("O passes the double." in screen)
    cubes = [record.cube for record in session.match.results]
    assert max(cubes) >= 2 or any(record.dropped for record in session.match.results)


def test_moves_are_shown_with_repeats_counted_and_in_the_other_numbering():
    from tapa_ai.play.moves import display_move, in_other_view

    assert display_move("24/22 24/22 13/11 24/22") == "24/22(3) 13/11"
    assert in_other_view("24/22(3) 13/11 bar/22 6/off") == "1/3(3) 12/14 bar/3 19/off"


# --------------------------------------------------------------------------
# The running games (fevga, narde: docs/rules.md 8)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("human", ["X", "O"])
def test_the_running_games_board_has_no_bar_and_names_each_sides_start_and_home(human):
    """Both sides travel the same way: the human's 24 top right, the bot's start (the human's 12) bottom left,
    the corners named on the frame, the paths said below it, no bar."""
    from tapa_ai.play.board import path_text

    bot = "O" if human == "X" else "X"
    lines = render_board(start_position("fevga"), BoardInfo(human=human, dice=(6, 5), cube_in_use=False)).splitlines()
    assert lines[0].split() == [str(p) for p in range(13, 25)]
    assert lines[14].split() == [str(p) for p in range(12, 0, -1)]
    top, bottom = lines[1], lines[13]
    assert "BAR" not in "\n".join(lines)
    assert f"-- {bot}'s home --" in top.split("+")[1] and "-- your start --" in top.split("+")[3]
    assert f"-- {bot}'s start --" in bottom.split("+")[1] and "-- your home --" in bottom.split("+")[3]
    # The human's 15 on its 24 (top right), the bot's on the human's 12 (bottom left): diagonally opposite.
    assert lines[2].rstrip().endswith(f"{human} |") and lines[6].split("|")[3].strip() == "15"
    assert lines[12].split("|")[1].split()[0] == bot and lines[8].split("|")[1].strip() == "15"
    assert [line.strip() for line in lines[-2:]] == path_text(human)
    assert path_text(human)[1].startswith(f"{bot} from your 12 (its 24, bottom left)")


def test_the_bots_move_in_a_running_game_is_shown_in_the_humans_numbering():
    from tapa_ai.play.moves import in_other_view

    assert in_other_view("24/18 18/13 13/7(2) 6/off", parallel=True) == "12/6 6/1 1/19(2) 18/off"
    assert in_other_view("24/18", parallel=False) == "1/7"


def test_an_illegal_move_in_fevga_names_the_restriction_it_breaks():
    """Fevga's start rule (docs/rules.md 8.4 a): a second checker may not leave the 24-point before the first has
    passed the opponent's start. Typed at the terminal, the refusal names it."""
    position = board("fevga", "24:XXXXXXXXXXXXXX 16:X 12:OOOOOOOOOOOOOO 5:O", turn="X")
    data = {"format": "tapa-ai/play", "version": 1, "position": position_to_json(position), "dice": [6, 4]}
    session, out = session_for("24/20 24/18\n16/10 10/6\nquit\ny\n", rules=variant_rules("fevga"), seed=3)
    session.start_notes = session.load(load_game(data, "test"))
    session.run()
    answers = dict(responses(out.getvalue(), ["24/20 24/18", "16/10 10/6"]))
    refused = answers["24/20 24/18"]
    assert refused.startswith("Illegal move '24/20 24/18': a second checker may not leave the 24-point until the "
                              "first has passed the opponent's starting point"), refused
    assert "Legal moves: 16/10 24/20, 16/10 10/6" in refused
    assert "You play 16/10 10/6." in answers["16/10 10/6"]


@pytest.mark.parametrize("variant, bot_spec, human", [("fevga", "heuristic", "X"), ("fevga", "runner", "O"),
                                                      ("fevga", "random", "X"), ("narde", "heuristic", "O"),
                                                      ("narde", "runner", "X")])
def test_a_whole_running_game_is_played_against_each_bot(variant, bot_spec, human):
    """A whole game typed as a person types it, against the bots that play the running games (no network
    yet): every move the human makes is one of the legal ones, the bot answers, the game ends with a result."""
    from tapa_ai.bots.spec import make_bot

    rules = variant_rules(variant)
    session, out = session_for("", rules=rules, bot=make_bot(bot_spec, rules), seed=5, match_length=1, human=human)
    session.start()
    choose = np.random.default_rng(1)
    for _ in range(2000):
        if not session.waiting:
            break
        game = session.match.game
        line = format_move(game.moves[choose.integers(len(game.moves))]) if game.phase == "move" else ""
        session.handle_line(line)
    screen = out.getvalue()
    assert session.done and session.match.is_over, screen[-2000:]
    assert "Internal error" not in screen and "Illegal move" not in screen and "BAR" not in screen
    assert f"tapa-ai play: {variant}, a match to 1 point. You are {human}, the bot ({bot_spec})" in screen
    assert re.search(r"Game over: (you win|[XO] wins) [12] points?, (a single game|a gammon)\.", screen), screen[-500:]
    bot_moves = re.findall(r"[XO] rolls \d-\d and plays (\S.*?)  \(on your board: (.*?)\)\.", screen)
    assert bot_moves
    from tapa_ai.play.moves import in_other_view

    assert all(in_other_view(theirs, parallel=True) == yours for theirs, yours in bot_moves)


def test_tapa_ai_play_variant_fevga_defaults_to_the_shipped_network_and_hint_ranks_with_it(tmp_path):
    """``tapa-ai play --variant fevga`` plays the shipped fevga network at 1 ply, and hint ranks the legal moves
    by it; a move, help and quit work as a person types them."""
    script = "help\nhint 2\nquit\ny\n"
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "play", "--variant", "fevga", "--seed", "3"],
                          input=script, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    screen = done.stdout
    # From the checkout the default is its checkpoints/ file (docs/play.md).
    assert "tapa-ai play: fevga, money play. You are X, the bot (net:checkpoints/fevga.pt@1ply) is O. Seed 3." in screen, \
        screen[:400]
    assert "There is no fevga network" not in screen
    assert "Enter moves like 24/18 18/13, 24/13 (one checker, both dice)" in screen and "bar/22" not in screen
    assert "-- your start --" in screen and "-- O's start --" in screen and "BAR" not in screen
    assert "(fevga has no doubling cube)" in screen
    assert re.search(r"\d+ legal moves? with \d-\d; the best by net:", screen), screen[-800:]
    assert "No advice" not in screen
    assert "Internal error" not in screen
