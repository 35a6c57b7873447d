"""What the session tells the player: the board, advice lines, the end of a game and of a match, the score."""

from __future__ import annotations

from typing import Callable

from ..rules.options import RulesError
from .advice import AdviceUnavailable
from .board import BoardInfo, render_board

__all__ = ["ReportsMixin", "dice_text", "kind_words"]


class ReportsMixin:
    """:class:`~tapa_ai.play.session.PlaySession`'s reports; uses the state its ``__init__`` sets."""

    # ------------------------------------------------------------------ the board and the end
    def _show_board(self, force: bool = False) -> None:
        entered = self.turn.entered if self.turn else None
        shown = self._board_shown
        if not force and shown is not None and shown[0] is self.match and shown[1:] == (entered, self.human):
            return
        self._board_shown = (self.match, entered, self.human)
        game = self.match.game
        position = self.turn.shown_position if self.turn is not None else game.position
        info = BoardInfo(
            human=self.human, bot_name=self.bot.name, dice=game.dice,
            dice_left=self.turn.dice_left if self.turn is not None else None,
            cube_value=game.cube_value, cube_owner=game.cube_owner, cube_in_use=self.rules.cube,
            crawford=game.crawford, score=self.match.score, match_length=self.match.length,
            game_number=self.match.game_number)
        self.say()
        self.say(render_board(position, info, self.palette))

    def _report_game_end(self) -> None:
        game = self.match.game
        self._reported = game
        self.turn = None
        self._show_board(force=True)
        result = game.result
        points = game.points_won
        if result.winner is None:
            line = "Both mothers are pinned: the game is a draw. Nobody scores."
        else:
            winner = self._name(result.winner)
            verb = "win" if result.winner == self.human else "wins"
            cube = f" (cube {game.cube_value})" if game.cube_value > 1 else ""
            if game.dropped:
                how = "the double was passed"
            elif self.match.game_number in self.resigned:
                how = f"you resigned: {kind_words(result.kind)}"
            else:
                how = kind_words(result.kind)
            line = f"Game over: {winner} {verb} {points} point{'s' if points != 1 else ''}{cube}, {how}."
        style = self.palette.good if result.winner == self.human else self.palette.bold
        self.say(style(line))
        self.say(self._score_text() + ".")

    def _report_match_end(self) -> None:
        winner = self.match.winner
        x, o = self.match.score
        text = (f"You win the match {max(x, o)}-{min(x, o)}!" if winner == self.human else
                f"{winner} wins the match {max(x, o)}-{min(x, o)}.")
        self.say(self.palette.bold(text))

    def _score_text(self) -> str:
        x, o = self.match.score
        mine, theirs = (x, o) if self.human == "X" else (o, x)
        if self.match.length:
            return f"Score: you {mine}, {self.bot_side} {theirs} (match to {self.match.length})"
        return f"Score: you {mine}, {self.bot_side} {theirs} (money play, after {len(self.match.results)} " \
               f"game{'s' if len(self.match.results) != 1 else ''})"

    # ------------------------------------------------------------------ advice
    def _show_advice(self, make_lines: Callable[[], list[str]], note: str = "") -> None:
        try:
            lines = make_lines()
        except AdviceUnavailable as error:
            self._error(f"No advice: {error}.")
            return
        except RulesError as error:
            self._error(f"No advice: {error}")
            return
        if note and lines:
            lines[0] += note
        for line in lines:
            self.say(line)


def dice_text(dice: tuple[int, int]) -> str:
    """Dice as the session writes them, e.g. ``6-5``."""
    return f"{dice[0]}-{dice[1]}"


def kind_words(kind: str) -> str:
    """A result kind in words, e.g. ``a gammon``."""
    return {"single": "a single game", "gammon": "a gammon", "backgammon": "a backgammon",
            "mother": "a mother win", "draw": "a draw"}[kind]
