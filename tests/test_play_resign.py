"""Resigning in ``tapa-ai play`` and the questions on its prompt (issue 61, "found when tried as a new user would").

A resignation offers the kinds of result the variant scores (docs/rules.md 3.4, 3.5, 4, 8.5, 9) that the bot can
still win; the bot accepts the most it can win, and less when that is worth at least what its evaluation expects.
A question on the prompt is closed only by its answers: a command typed there is refused, never taken as a "no".
"""

import io
import re
from types import SimpleNamespace

import pytest

from tapa_ai.bots.basic import RunnerBot
from tapa_ai.notation import board, position_to_json
from tapa_ai.play import Advisor, PlaySession, load_game
from tapa_ai.rules import start_position, variant_rules

from .test_play import ROOT, near_end, responses, session_for, write


def loaded(variant, position, dice, script, advisor=None, **options):
    """A session of ``variant`` continuing ``position`` with the human (X) to move with ``dice``, fed ``script``."""
    rules = variant_rules(variant)
    data = {"format": "tapa-ai/play", "version": 1, "position": position_to_json(position), "dice": list(dice)}
    options.setdefault("advisor", advisor or Advisor(None, rules, why_none="no advisor in this test"))
    out = io.StringIO()
    session = PlaySession(rules, RunnerBot(), input=io.StringIO(script), output=out, colour=False, seed=3, **options)
    session.start_notes = session.load(load_game(data, "test"))
    session.run()
    return session, out.getvalue()


# --------------------------------------------------------------------------
# A question is answered, never silently closed by a command
# --------------------------------------------------------------------------

def test_a_command_typed_at_the_resign_question_is_refused_and_the_question_stays_open(tmp_path):
    """Before: the command was taken as "no" and the resignation silently cancelled."""
    ending = write(tmp_path / "ending.json", near_end(dice=(6, 5)))
    session, out = session_for(f"load {ending}\nresign\nhint\ny\nn\n", seed=1)
    session.run()
    screen = out.getvalue()
    answers = dict(responses(screen, ["hint", "y"]))
    assert answers["hint"].startswith("'hint' is no answer, and was not run: type y, or n (or Enter) to cancel.")
    assert "Resign, giving O a single game (1 point)? [y/N] hint\n" in screen
    assert "Resign, giving O a single game (1 point)? [y/N] y\n" in screen  # asked again
    assert "Nothing to hint" not in screen and "No advice" not in screen  # the hint was not run
    assert "Game over: O wins 1 point, you resigned: a single game." in answers["y"]
    assert session.match.score == (0, 1)


@pytest.mark.parametrize("answer", ["", "n", "no", "N"])
def test_no_or_an_empty_line_cancels_the_resignation_and_the_game_goes_on(tmp_path, answer):
    ending = write(tmp_path / "ending.json", near_end(dice=(6, 5)))
    session, out = session_for(f"load {ending}\nresign\n{answer}\n6/off 1/off\nn\n", seed=1)
    session.run()
    screen = out.getvalue()
    assert "Cancelled: you did not resign." in screen
    assert "Game over: you win 2 points, a gammon." in screen and session.match.score == (2, 0)


def test_a_command_typed_at_another_game_is_refused_not_taken_as_no(tmp_path):
    """Before: any line but y at "Another game?" (a move, hint) ended the session."""
    ending = write(tmp_path / "ending.json", near_end(dice=(6, 5)))
    session, out = session_for(f"load {ending}\n6/off 1/off\nhint\nroll\ny\nquit\n", seed=1)
    session.run()
    screen = out.getvalue()
    answers = dict(responses(screen, ["hint", "roll", "y"]))
    assert answers["hint"].startswith("'hint' is no answer to \"Another game?\": type y for another game, n (or "
                                      "Enter) to leave")
    assert answers["roll"].startswith("'roll' is no answer")
    assert "Bye." not in answers["hint"] + answers["roll"]
    assert session.match.game_number == 2  # the y started the next game


# --------------------------------------------------------------------------
# What may be resigned
# --------------------------------------------------------------------------

@pytest.mark.parametrize("variant, offered", [
    ("backgammon", "a single game (1 point), a gammon (2 points) or a backgammon (3 points)"),
    ("tapa", "a single game (1 point), a gammon (2 points) or a backgammon (3 points)"),
    ("plakoto", "a single game (1 point) or a gammon (2 points)"),   # no backgammons (3.5)
    ("portes", "a single game (1 point) or a gammon (2 points)"),    # a backgammon counts as a gammon (9)
    ("fevga", "a single game (1 point) or a gammon (2 points)"),     # running games: no backgammons (8.5)
    ("narde", "a single game (1 point) or a gammon (2 points)"),
])
def test_resign_offers_each_result_the_variant_scores(variant, offered):
    """Before: only the value the position had "if the bot bore off now" (in backgammon: a backgammon) was offered."""
    position = start_position(variant).with_changes(turn="X")
    session, screen = loaded(variant, position, (6, 5), "resign\n\nquit\n")
    kinds = "/".join(re.findall(r"a (single|gammon|backgammon)", offered))
    assert f"Resign how much: {offered}? [{kinds}, N: cancel] \n" in screen, screen[-600:]
    assert "Cancelled: you did not resign." in screen and not session.match.game.is_over


@pytest.mark.parametrize("variant, layout, offered", [
    # X's mother (its lone checker on its 24-point) is pinned by O: a mother win takes the place of the kind
    # worth as much (3.4: 2 points in plakoto, 3 in tapa).
    ("plakoto", "24:XO 23:XXXXXXXXXXXXXX 1:OOOOOOOOOOOOOO", "a single game (1 point) or a mother win (2 points)"),
    ("tapa", "24:XO 23:XXXXXXXXXXXXXX 1:OOOOOOOOOOOOOO",
     "a single game (1 point), a gammon (2 points) or a mother win (3 points)"),
    # X has borne off a checker: the bot can win only a single game (3.5).
    ("backgammon", "6:XXXXXXXXXXXXXX 24:OOOOOOOOOOOOOOO", None),
])
def test_resign_offers_only_what_the_bot_can_still_win(variant, layout, offered):
    position = board(variant, layout, turn="X")
    session, screen = loaded(variant, position, (2, 1), "resign\n\nresign gammon\nquit\n")
    if offered:
        assert f"Resign how much: {offered}?" in screen, screen[-600:]
    else:
        assert "Resign, giving O a single game (1 point)? [y/N] \n" in screen
        assert ("resign 'gammon': you have borne off a checker, so O can win only a single game; resign single"
                in screen)


@pytest.mark.parametrize("variant, usage", [("fevga", "resign [single|gammon]"),
                                            ("plakoto", "resign [single|gammon|mother]"),
                                            ("tapa", "resign [single|gammon|backgammon|mother]"),
                                            ("backgammon", "resign [single|gammon|backgammon]")])
def test_help_names_the_values_the_variant_may_resign(variant, usage):
    session, out = session_for("help\nquit\n", rules=variant_rules(variant), seed=2)
    session.run()
    assert f"  resign  {usage}: offer the bot the game at that value (it may refuse)\n" in out.getvalue()


def test_resigning_a_kind_the_variant_does_not_score_is_refused_in_one_line():
    position = start_position("fevga").with_changes(turn="X")
    session, screen = loaded("fevga", position, (6, 5), "resign backgammon\nresign lots\nquit\n")
    answers = dict(responses(screen, ["resign backgammon", "resign lots"]))
    assert answers["resign backgammon"] == ("resign 'backgammon': fevga has no backgammons; resign single or "
                                            "resign gammon\n")
    assert answers["resign lots"] == "resign 'lots': say how much: resign single or resign gammon\n"
    assert not session.match.game.is_over


# --------------------------------------------------------------------------
# The bot accepts or refuses
# --------------------------------------------------------------------------

def test_the_bot_accepts_the_most_it_can_win_and_the_game_is_scored_at_it():
    position = start_position("backgammon").with_changes(turn="X")
    session, screen = loaded("backgammon", position, (6, 5), "resign\nbackgammon\n")
    assert "O accepts a backgammon (3 points): it cannot win more." in screen
    assert "Game over: O wins 3 points, you resigned: a backgammon." in screen
    assert session.match.score == (0, 3)


def test_without_an_evaluation_the_bot_refuses_less_than_the_most_it_can_win():
    position = start_position("backgammon").with_changes(turn="X")
    session, screen = loaded("backgammon", position, (6, 5), "resign gammon\ny\nquit\n")
    assert ("O refuses a gammon (2 points): with no evaluation to judge it by (no advisor in this test), it accepts "
            "only a backgammon (3 points). The game goes on.") in screen
    assert not session.match.game.is_over and session.match.score == (0, 0)


class ExpectingAnalyzer:
    """An evaluation that says the bot (O) expects ``bot_expects`` points from the game, X to move."""

    name = "stub"

    def __init__(self, bot_expects):
        self.bot_expects = bot_expects

    def rank(self, position, dice, limit=None, **_):
        return [SimpleNamespace(equity=-self.bot_expects)], 1

    def evaluate(self, position):
        equity = self.bot_expects if position.turn == "O" else -self.bot_expects
        return None, equity, False


@pytest.mark.parametrize("expects, cube, single, gammon", [
    (1.5, 1, "refuses", "accepts"),   # a single is worth less than 1.5 to O, a gammon more
    (0.4, 1, "accepts", "accepts"),
    (2.2, 1, "refuses", "refuses"),   # only the backgammon (the most O can win) would do
    (1.5, 2, "refuses", "accepts"),   # the cube multiplies both sides of the comparison
])
def test_the_bot_accepts_a_smaller_resignation_worth_at_least_what_it_expects(expects, cube, single, gammon):
    rules = variant_rules("backgammon")
    position = start_position("backgammon").with_changes(turn="X")
    for kind, verdict in (("single", single), ("gammon", gammon)):
        advisor = Advisor(None, rules)
        advisor.analyzer = lambda: ExpectingAnalyzer(expects)
        data = {"format": "tapa-ai/play", "version": 1, "position": position_to_json(position), "dice": [6, 5],
                "cube": {"value": cube, "owner": "X" if cube > 1 else None}}
        out = io.StringIO()
        session = PlaySession(rules, RunnerBot(), input=io.StringIO(f"resign {kind}\ny\nquit\n"), output=out,
                              colour=False, seed=3, advisor=advisor)
        session.start_notes = session.load(load_game(data, "test"))
        session.run()
        screen = out.getvalue()
        points = {"single": 1, "gammon": 2}[kind] * cube
        said = re.search(rf"O (accepts|refuses) a (?:single game|gammon) \({points} points?\): it expects "
                         rf"([+-][\d.]+) points from this game", screen)
        assert said, screen[-600:]
        assert said.group(1) == verdict and float(said.group(2)) == pytest.approx(expects * cube, abs=1e-3)
        assert session.match.game.is_over == (verdict == "accepts")
        if verdict == "accepts":
            assert session.match.score == (0, points)


@pytest.fixture(scope="module")
def backgammon_advisor():
    return Advisor(f"net:{ROOT / 'checkpoints' / 'backgammon.pt'}", variant_rules("backgammon"))


def test_the_network_bot_refuses_a_single_game_when_its_gammon_is_certain(backgammon_advisor):
    """O bears off its last checker next turn; X's checkers are all outside O's home board, none off, with no
    contact: O wins a gammon whatever happens (docs/rules.md 4), so the network expects about 2 points and a
    single game is refused."""
    position = board("backgammon", "24:O 13:XXX 14:XXX 15:XXX 16:XXX 17:XXX", turn="X")
    session, screen = loaded("backgammon", position, (2, 1), "resign single\ny\nquit\n", advisor=backgammon_advisor)
    refused = re.search(r"O refuses a single game \(1 point\): it expects ([+-][\d.]+) points", screen)
    assert refused and 1.5 < float(refused.group(1)) < 2.5, screen[-800:]
    assert not session.match.game.is_over
