"""Playing on to the human's next decision: the opening roll, the dice, the bot's turns and entering a move."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..flow import FlowError, MatchState
from ..notation.move_text import MoveTextError, format_move
from ..rules.position import Position
from ..rules.quoting import quoted
from .moves import TurnInProgress, display_move, illegal_reason, in_other_view, legal_moves_text
from .reports import dice_text

__all__ = ["UndoSnapshot", "BotMove", "TurnsMixin"]


@dataclass
class UndoSnapshot:
    """The state before one of the human's move decisions (for ``undo``)."""

    match: MatchState
    dice_state: dict
    bot_state: dict
    last_bot_move: Optional["BotMove"]


@dataclass
class BotMove:
    """The bot's last move, kept for ``eval``."""

    position: Position
    dice: tuple[int, int]
    played: Position
    text: str


class TurnsMixin:
    """:class:`~tapa_ai.play.session.PlaySession`'s game driving; uses the state its ``__init__`` sets."""

    # ------------------------------------------------------------------ playing on
    def _advance(self) -> None:
        """Play everything that needs no decision from the human; stop where one is needed."""
        while not self.done and self.confirm is None and not self.asking_another:
            game = self.match.game
            if game.is_over:
                if self._reported is not game:
                    self._report_game_end()
                if self.match.is_over:
                    self._report_match_end()
                    self.done = True
                    return
                if self.match.length:
                    self._start_next_game()
                    continue
                self.asking_another = True
                return
            if game.phase == "opening":
                self._opening_roll()
                continue
            if game.side_to_act == self.bot_side:
                self._bot_act()
                continue
            if game.phase == "roll":
                if game.may_double:
                    self._show_board()
                    return
                self._roll()
                continue
            if game.phase == "double":
                self._show_board()
                return
            # The human's move.
            moves = game.moves
            if len(moves) == 1:
                if moves[0].steps:
                    self.say(f"You have only one legal move with {dice_text(game.dice)}: "
                             f"{display_move(format_move(moves[0]))}.")
                else:
                    self.say(f"You cannot move with {dice_text(game.dice)}: your turn passes.")
                self.turn = None
                self.match = self.match.play(moves[0])
                continue
            if self.turn is None or self.turn.position is not game.position or self.turn.dice != game.dice:
                self.turn = TurnInProgress(game.position, game.dice, tuple(moves))
                if not self.undo_stack or self.undo_stack[-1].match is not self.match:
                    self.undo_stack.append(UndoSnapshot(self.match, self.dice_rng.bit_generator.state,
                                                     self.bot_rng.bit_generator.state, self.last_bot_move))
            self._show_board()
            return

    def _die(self) -> int:
        return int(self.dice_rng.integers(1, 7))

    def _opening_roll(self) -> None:
        before = len(self.match.game.history)
        self.match = self.match.roll(self._die)
        game = self.match.game
        for event in game.history[before:]:
            x_die, o_die = event.dice
            mine, theirs = (x_die, o_die) if self.human == "X" else (o_die, x_die)
            line = f"Opening roll: you {mine}, {self.bot_side} {theirs}"
            if mine == theirs:
                self.say(line + ": a tie, roll again.")
            elif game.phase == "move":
                self.say(line + f": {self._name(game.position.turn)} "
                         f"{'play' if game.position.turn == self.human else 'plays'} {dice_text(game.dice)} first.")
            else:
                self.say(line + f": {self._name(game.position.turn)} "
                         f"{'go' if game.position.turn == self.human else 'goes'} first, rolling both dice.")

    def _roll(self) -> None:
        self.match = self.match.roll(self._die)
        self.say(f"You roll {dice_text(self.match.game.dice)}.")

    def _start_next_game(self) -> None:
        self.match = self.match.start_next_game()
        self.turn = None
        self.undo_stack.clear()
        crawford = " This is the Crawford game: no doubling." if self.match.game.crawford else ""
        self.say(self.palette.bold(f"Game {self.match.game_number}. {self._score_text()}.") + crawford)

    # ------------------------------------------------------------------ the bot
    def _bot_act(self) -> None:
        game = self.match.game
        bot = self.bot_side
        if game.phase == "roll":
            if game.may_double and self._bot_cube_decision("double"):
                self.match = self.match.double()
                self.say(f"{bot} doubles: the cube would go to {self.match.game.offered_value}.")
                return
            self.match = self.match.roll(self._die)
            return
        if game.phase == "double":
            value = game.offered_value
            if self._bot_cube_decision("take"):
                self.match = self.match.take()
                self.say(f"{bot} takes: the cube is at {value}, owned by {bot}.")
            else:
                self.match = self.match.drop()
                self.say(f"{bot} passes the double.")
            return
        position, dice = game.position, game.dice
        moves = game.moves
        if len(moves) == 1:
            move = moves[0]
        else:
            chosen = self.bot.choose_position(position, dice, self.bot_rng)
            move = _move_reaching(moves, chosen)
        text = format_move(move)
        self.match = self.match.play(move)
        if not text:
            self.say(f"{bot} rolls {dice_text(dice)} and cannot move.")
        else:
            shown = display_move(text)
            self.say(f"{bot} rolls {dice_text(dice)} and plays {self.palette.side(bot, shown)}  "
                     f"(on your board: {in_other_view(shown)}).")
        self.last_bot_move = BotMove(position, dice, move.position, text)
        if self.show_eval and len(moves) > 1:
            self._show_advice(lambda: self.advisor.review(position, dice, move.position, bot))

    def _bot_cube_decision(self, question: str) -> bool:
        """The bot's cube decision: ``"double"`` (double now?) or ``"take"`` (take the double on offer?).

        The one place where the session asks the bot about the cube, through
        :class:`tapa_ai.bots.cube.BotCubePolicy` (``Bot.offer_double`` /
        ``Bot.accept_double``): network bots answer from their cubeful
        equities (money play or the match equity table), the other bots play
        the passive cube (never double, always take).
        """
        from ..bots.cube import BotCubePolicy

        policy = BotCubePolicy({self.bot_side: self.bot}, self.bot_rng)
        if question == "double":
            return policy.offer_double(self.match.game, self.match)
        return policy.accept_double(self.match.game, self.match)

    # ------------------------------------------------------------------ the human's move
    def _enter_move(self, text: str) -> None:
        game = self.match.game
        if game.phase != "move" or game.side_to_act != self.human or self.turn is None:
            if game.phase == "roll":
                self._error("Roll first: type roll (or press Enter), or double.")
            elif game.phase == "double":
                self._error("A double is on offer: take or pass first.")
            else:
                self._error("It is not your move now.")
            return
        turn = self.turn
        try:
            outcome = turn.enter(text)
        except MoveTextError as error:
            message = str(error)
            if "ambiguous" in message or "more than one way" in message:
                self._error(f"Ambiguous: {message}")
                return
            reason = illegal_reason(turn.shown_position, turn.dice_left, text)
            self._error(f"Illegal move {quoted(text)}: {reason}.")
            self.say(f"Legal moves: {legal_moves_text(turn.moves)}")
            return
        if outcome == "partial":
            self.say(f"So far: {turn.entered}. Still to play: {' '.join(map(str, turn.dice_left))} "
                     f"('undo' starts the move again).")
            self._show_board()
            return
        self.turn = None
        self.match = self.match.play(outcome)
        self.say(f"You play {self.palette.side(self.human, display_move(format_move(outcome)))}.")


def _move_reaching(moves, position: Position):
    """The legal move that reaches ``position`` (a bot's chosen afterstate)."""
    for move in moves:
        if move.position == position:
            return move
    for move in moves:
        if (move.position.points, move.position.off, move.position.bar) == (position.points, position.off,
                                                                              position.bar):
            return move
    raise FlowError("the bot chose a position that no legal move reaches")  # pragma: no cover
