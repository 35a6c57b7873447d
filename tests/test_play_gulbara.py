"""``tapa-ai play`` plays Gul Bara (docs/rules.md 10): a cascade's stages are said as stages, not rolls, the
person enters each stage's move (in parts too), and a whole session runs to its end."""

from __future__ import annotations

import io

from tapa_ai.bots.basic import RunnerBot
from tapa_ai.notation import format_move
from tapa_ai.play import Advisor, PlaySession
from tapa_ai.rules.options import GULBARA


class Typist:
    """The person: types the last legal move of each of its decisions (split in two parts where it has more than
    two steps, as a person entering a long move may), Enter for everything else."""

    def __init__(self):
        self.session = None
        self.lines = 0
        self.pending = []

    def readline(self):
        self.lines += 1
        if self.lines > 4000:
            return "quit\n"
        if self.pending:
            return self.pending.pop(0)
        game = self.session.match.game
        if not game.is_over and game.phase == "move" and game.side_to_act == "X":
            text = format_move(game.moves[-1])
            parts = text.split()
            if len(parts) > 2:
                self.pending = [" ".join(parts[1:]) + "\n"]
                return parts[0] + "\n"
            return text + "\n"
        return "\n"

    def isatty(self):
        return False


def play_session(seed: int) -> tuple[int, str]:
    out, typist = io.StringIO(), Typist()
    bot = RunnerBot()
    bot.name = "runner"
    session = PlaySession(GULBARA, bot, input=typist, output=out, colour=False, seed=seed,
                          advisor=Advisor(None, GULBARA, why_none="no advisor in this test"))
    typist.session = session
    return session.run(), out.getvalue()


def test_a_gul_bara_session_says_cascade_stages_as_stages_and_runs_to_the_end():
    code, text = play_session(4)
    assert code == 0 and "Game over:" in text and "Traceback" not in text
    # The bot's cascade: its first stage is a roll, each later one a stage with no roll, named with what follows.
    assert "O's cascade goes on, 4 steps of 3, then 4s, 5s, 6s: plays" in text
    assert "O's cascade goes on, 4 steps of 6: plays" in text
    # The person's cascade: announced, shown on the board's line, entered stage by stage.
    assert "Your cascade goes on: 4 steps of 4, then 5s, 6s, with no roll." in text
    assert "| cascade (you): 4 steps of 4, then 5s, 6s" in text
    assert "Illegal move" not in text  # every stage's move was taken, the parts entered too
