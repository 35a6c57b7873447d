"""Playing on to the human's next decision: the opening roll, the dice, the bot's turns and entering a move."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..flow import FlowError, MatchState
from ..flow.rotation import RotationMatch
from ..notation.move_text import MoveTextError, broken_rule, format_move
from ..rules.position import Position
from ..quoting import quoted
from .moves import TurnInProgress, display_move, illegal_reason, in_other_view, legal_moves_text
from ..rules.turns import describe_stage
from .reports import dice_text

__all__ = ["UndoSnapshot", "BotMove", "Turns"]


@dataclass
class UndoSnapshot:
    """The state before one of the human's move decisions (for ``undo``)."""

    match: MatchState | RotationMatch
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


class Turns:
    """Plays the session (:class:`~tapa_ai.play.session.PlaySession`) on to the human's next decision."""

    def __init__(self, session) -> None:
        self.session = session

    # ------------------------------------------------------------------ playing on
    def advance(self) -> None:
        """Play everything that needs no decision from the human; stop where one is needed."""
        session, reports = self.session, self.session.reports
        while not session.done and session.confirm is None and not session.asking_another:
            game = session.match.game
            if game.is_over:
                if reports.reported is not game:
                    reports.game_end()
                if session.match.is_over:
                    reports.match_end()
                    session.done = True
                    return
                if session.match.length:
                    self.start_next_game()
                    continue
                session.asking_another = True
                return
            if game.phase == "opening":
                self._opening_roll()
                continue
            if game.side_to_act == session.bot_side:
                self._bot_act()
                continue
            if game.phase == "roll":
                if game.may_double:
                    reports.show_board()
                    return
                self.roll()
                continue
            if game.phase == "double":
                reports.show_board()
                return
            # The human's move.
            moves = game.moves
            cascade = game.position.cascade
            if cascade is not None and (session.turn is None or session.turn.position is not game.position):
                session.say(("You play what your opponent could not: " if cascade.remainder else
                             "Your cascade goes on: ") + describe_stage(cascade) + ", with no roll.")
            if len(moves) == 1:
                with_what = dice_text(game.dice) if cascade is None else f"this stage ({cascade.number}s)"
                if moves[0].steps:
                    session.say(f"You have only one legal move with {with_what}: "
                                f"{display_move(format_move(moves[0]))}.")
                else:
                    session.say(f"You cannot move with {with_what}: your turn passes.")
                session.turn = None
                session.match = session.match.play(moves[0])
                continue
            turn = session.turn
            if turn is None or turn.position is not game.position or turn.dice != game.dice:
                session.turn = TurnInProgress(game.position, game.dice, tuple(moves))
                if not session.undo_stack or session.undo_stack[-1].match is not session.match:
                    session.undo_stack.append(session.snapshot())
            reports.show_board()
            return

    def _die(self) -> int:
        return int(self.session.dice_rng.integers(1, 7))

    def _opening_roll(self) -> None:
        session = self.session
        before = len(session.match.game.history)
        session.match = session.match.roll(self._die)
        game = session.match.game
        for event in game.history[before:]:
            x_die, o_die = event.dice
            mine, theirs = (x_die, o_die) if session.human == "X" else (o_die, x_die)
            line = f"Opening roll: you {mine}, {session.bot_side} {theirs}"
            if mine == theirs:
                session.say(line + ": a tie, roll again.")
            elif game.phase == "move":
                session.say(line + f": {session.name_of(game.position.turn)} "
                            f"{'play' if game.position.turn == session.human else 'plays'} {dice_text(game.dice)} "
                            "first.")
            else:
                session.say(line + f": {session.name_of(game.position.turn)} "
                            f"{'go' if game.position.turn == session.human else 'goes'} first, rolling both dice.")

    def roll(self) -> None:
        """The human rolls."""
        session = self.session
        session.match = session.match.roll(self._die)
        session.say(f"You roll {dice_text(session.match.game.dice)}.")

    def start_next_game(self) -> None:
        session = self.session
        session.match = session.match.start_next_game()
        session.turn = None
        session.undo_stack.clear()
        if session.is_rotation:
            session.last_bot_move = None  # eval reviews a move of this game, at its score
            session.say(session.palette.bold(session.reports.rotation_game_text()))
            return
        crawford = " This is the Crawford game: no doubling." if session.match.game.crawford else ""
        session.say(session.palette.bold(f"Game {session.match.game_number}. {session.reports.score_text()}.")
                    + crawford)

    # ------------------------------------------------------------------ the bot
    def _bot_act(self) -> None:
        session = self.session
        game = session.match.game
        bot = session.bot_side
        if game.phase == "roll":
            if game.may_double and self._bot_cube_decision("double"):
                session.match = session.match.double()
                session.say(f"{bot} doubles: the cube would go to {session.match.game.offered_value}.")
                return
            session.match = session.match.roll(self._die)
            return
        if game.phase == "double":
            value = game.offered_value
            if self._bot_cube_decision("take"):
                session.match = session.match.take()
                session.say(f"{bot} takes: the cube is at {value}, owned by {bot}.")
            else:
                session.match = session.match.drop()
                session.say(f"{bot} passes the double.")
            return
        position, dice = game.position, game.dice
        moves = game.moves
        if len(moves) == 1:
            move = moves[0]
        else:
            chosen = session.bot.choose_position(position, dice, session.bot_rng, session.score_for(position.turn))
            move = _move_reaching(moves, chosen)
        text = format_move(move)
        session.match = session.match.play(move)
        # A cascade's later stage is played with no roll (docs/rules.md 10.2).
        how = (f"{bot} rolls {dice_text(dice)}" if position.cascade is None else
               f"{bot}'s cascade goes on, {describe_stage(position.cascade)}:")
        if not text:
            session.say(f"{how} and cannot move." if position.cascade is None
                        else f"{how} it cannot move; the cascade stops.")
        else:
            shown = display_move(text)
            session.say(f"{how}{' and' if position.cascade is None else ''} plays {session.palette.side(bot, shown)}  "
                        f"(on your board: {in_other_view(shown, session.rules.parallel)}).")
        session.last_bot_move = BotMove(position, dice, move.position, text)
        if session.show_eval and len(moves) > 1:
            context = session.rotation_context()
            session.reports.advice(lambda: session.advisor.review(position, dice, move.position, bot, context))

    def _bot_cube_decision(self, question: str) -> bool:
        """The bot's cube decision: ``"double"`` (double now?) or ``"take"`` (take the double on offer?).

        The one place where the session asks the bot about the cube, through
        :class:`tapa_ai.cube.decisions.BotCubePolicy` (``Bot.offer_double`` /
        ``Bot.accept_double``): network bots answer from their cubeful
        equities (money play or the match equity table), the other bots play
        the passive cube (never double, always take).
        """
        from ..cube.decisions import BotCubePolicy

        session = self.session
        policy = BotCubePolicy({session.bot_side: session.bot}, session.bot_rng)
        if question == "double":
            return policy.offer_double(session.match.game, session.match)
        return policy.accept_double(session.match.game, session.match)

    # ------------------------------------------------------------------ the human's move
    def enter_move(self, text: str) -> None:
        """A move (or a part of one) the human typed."""
        session = self.session
        game = session.match.game
        if game.phase != "move" or game.side_to_act != session.human or session.turn is None:
            if game.phase == "roll":
                session.error("Roll first: type roll (or press Enter), or double.")
            elif game.phase == "double":
                session.error("A double is on offer: take or pass first.")
            else:
                session.error("It is not your move now.")
            return
        turn = session.turn
        try:
            outcome = turn.enter(text)
        except MoveTextError as error:
            message = str(error)
            if "ambiguous" in message or "more than one way" in message:
                session.error(f"Ambiguous: {message}")
                return
            try:
                reason = broken_rule(turn.position, turn.dice, f"{turn.entered} {text}".strip())
            except MoveTextError:
                reason = None
            reason = reason or illegal_reason(turn.shown_position, turn.dice_left, text)
            session.error(f"Illegal move {quoted(text)}: {reason}.")
            session.say(f"Legal moves: {legal_moves_text(turn.moves)}")
            return
        if outcome == "partial":
            session.say(f"So far: {turn.entered}. Still to play: {' '.join(map(str, turn.dice_left))} "
                        f"('undo' starts the move again).")
            session.reports.show_board()
            return
        session.turn = None
        session.match = session.match.play(outcome)
        session.say(f"You play {session.palette.side(session.human, display_move(format_move(outcome)))}.")


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
