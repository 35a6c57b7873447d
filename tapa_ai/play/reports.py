"""What the session tells the player: the board, advice lines, the end of a game and of a match, the score."""

from __future__ import annotations

from typing import Callable, Optional

from ..flow import GameState
from ..rules.options import RulesError
from .advice import AdviceUnavailable
from .board import BoardInfo, render_board

__all__ = ["Reports", "dice_text", "kind_words"]


class Reports:
    """What the session (:class:`~tapa_ai.play.session.PlaySession`) tells the player, and what it has shown."""

    def __init__(self, session) -> None:
        self.session = session
        self.board_shown: Optional[tuple] = None
        """(match, move entered so far, human side) of the board shown last: it is not drawn twice alike."""
        self.reported: Optional[GameState] = None
        """The game whose end was reported."""

    def forget(self) -> None:
        """After an undo or a load: the board and the game's end are shown again."""
        self.reported = None
        self.board_shown = None

    # ------------------------------------------------------------------ the board and the end
    def show_board(self, force: bool = False) -> None:
        session = self.session
        turn, match = session.turn, session.match
        entered = turn.entered if turn else None
        shown = self.board_shown
        if not force and shown is not None and shown[0] is match and shown[1:] == (entered, session.human):
            return
        self.board_shown = (match, entered, session.human)
        game = match.game
        position = turn.shown_position if turn is not None else game.position
        info = BoardInfo(
            human=session.human, bot_name=session.bot.name, dice=game.dice,
            dice_left=turn.dice_left if turn is not None else None,
            cube_value=game.cube_value, cube_owner=game.cube_owner, cube_in_use=session.rules.cube,
            crawford=game.crawford, score=match.score, match_length=match.length,
            game_number=match.game_number, rotation=match.rotation if session.is_rotation else None)
        session.say()
        session.say(render_board(position, info, session.palette))

    def game_end(self) -> None:
        session = self.session
        game = session.match.game
        self.reported = game
        session.turn = None
        self.show_board(force=True)
        result = game.result
        points = game.points_won
        if result.winner is None:
            line = "Both mothers are pinned: the game is a draw. Nobody scores."
        else:
            winner = session.name_of(result.winner)
            verb = "win" if result.winner == session.human else "wins"
            cube = f" (cube {game.cube_value})" if game.cube_value > 1 else ""
            if game.dropped:
                how = "the double was passed"
            elif session.match.game_number in session.resigned:
                how = f"you resigned: {kind_words(result.kind)}"
            else:
                how = kind_words(result.kind)
            line = f"Game over: {winner} {verb} {points} point{'s' if points != 1 else ''}{cube}, {how}."
        style = session.palette.good if result.winner == session.human else session.palette.bold
        session.say(style(line))
        session.say(self.score_text() + ".")

    def match_end(self) -> None:
        session = self.session
        winner = session.match.winner
        x, o = session.match.score
        what = f"the {session.match_name}"
        if session.is_rotation:
            session.say("Games: " + "; ".join(self._rotation_result(variant, record)
                                              for variant, record in session.match.results) + ".")
        text = (f"You win {what} {max(x, o)}-{min(x, o)}!" if winner == session.human else
                f"{winner} wins {what} {max(x, o)}-{min(x, o)}.")
        session.say(session.palette.bold(text))

    def _rotation_result(self, variant: str, record) -> str:
        """``2 plakoto: O +2 (a mother win)``: one finished game of a rotation's match."""
        if record.winner is None:
            return f"{record.number} {variant}: a draw"
        return (f"{record.number} {variant}: {self.session.name_of(record.winner)} +{record.points} "
                f"({kind_words(record.kind)})")

    def rotation_game_text(self) -> str:
        """The game of a rotation's match being played: its variant, the next one, the score and who opens it."""
        session = self.session
        match = session.match
        number = match.game_number
        line = (f"Game {number} of the {session.match_name}: {match.variant} (the next game is {match.next_variant}). "
                f"{self.score_text()}.")
        previous = match.match.results[number - 2] if number > 1 and len(match.match.results) >= number - 1 \
            else None
        if previous is None:
            return line + " It opens with an opening roll."
        if previous.winner is None:
            return line + f" It opens with an opening roll: game {number - 1} was a draw."
        opener = session.name_of(previous.winner)
        verb = "open" if previous.winner == session.human else "opens"
        return line + f" {opener.capitalize() if opener == 'you' else opener} {verb}, rolling both dice " \
                      f"({opener} won game {number - 1})."

    def score_text(self) -> str:
        session = self.session
        match = session.match
        x, o = match.score
        mine, theirs = (x, o) if session.human == "X" else (o, x)
        if session.is_rotation:
            return f"Score: you {mine}, {session.bot_side} {theirs} ({session.match_name} to {match.length})"
        if match.length:
            return f"Score: you {mine}, {session.bot_side} {theirs} (match to {match.length})"
        return f"Score: you {mine}, {session.bot_side} {theirs} (money play, after {len(match.results)} " \
               f"game{'s' if len(match.results) != 1 else ''})"

    # ------------------------------------------------------------------ advice
    def advice(self, make_lines: Callable[[], list[str]], note: str = "") -> None:
        """The lines ``make_lines`` gives (``note`` added to the first), or why there is no advice."""
        session = self.session
        try:
            lines = make_lines()
        except AdviceUnavailable as error:
            session.error(f"No advice: {error}.")
            return
        except RulesError as error:
            session.error(f"No advice: {error}")
            return
        if note and lines:
            lines[0] += note
        for line in lines:
            session.say(line)


def dice_text(dice: tuple[int, int]) -> str:
    """Dice as the session writes them, e.g. ``6-5``."""
    return f"{dice[0]}-{dice[1]}"


def kind_words(kind: str) -> str:
    """A result kind in words, e.g. ``a gammon``."""
    return {"single": "a single game", "gammon": "a gammon", "backgammon": "a backgammon",
            "mother": "a mother win", "draw": "a draw"}[kind]
