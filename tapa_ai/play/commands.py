"""The typed commands of ``tapa-ai play`` (``help``, ``hint``, ``undo``, ``save`` ...) and their handlers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..flow import GameRecord
from ..rules.position import SIDES, GameResult, Position
from ..rules.reference import mother_is_pinned, normal_win
from .advice import AdviceUnavailable
from .moves import legal_moves_text
from .reports import kind_words
from .saves import SaveError, SavedGame, game_summary, load_game, read_file, save_game
from .turns import UndoSnapshot

__all__ = ["COMMANDS", "ALIASES", "MOVE_EXAMPLES", "QuitSession", "CommandsMixin"]

COMMANDS = {
    "help": "this list",
    "board": "show the board again",
    "moves": "list your legal moves",
    "hint": "the best moves with their equities (hint N: the best N); before a roll, cube advice",
    "eval": "the engine's evaluation of the position and of the bot's last move",
    "undo": "take back the move being entered, or your last move",
    "roll": "roll the dice (Enter does the same) when you could double first",
    "double": "offer the cube before your roll",
    "take": "accept the bot's double",
    "pass": "refuse the bot's double and lose the game at the current cube",
    "save": "save FILE: write the game to a JSON file",
    "load": "load FILE: continue a saved game (or start from a JSON position)",
    "resign": "give up this game",
    "quit": "leave",
}
ALIASES = {"?": "help", "h": "help", "b": "board", "r": "roll", "d": "double", "t": "take", "p": "pass",
           "drop": "pass", "q": "quit", "exit": "quit", "e": "eval", "m": "moves", "u": "undo"}
MOVE_EXAMPLES = "24/21 13/11, 6/off, bar/22, 24/21/18 (one checker, both dice), 13/11(2)"


class QuitSession(Exception):
    """Raised by ``quit`` (and a "no" to another game) to end the session."""


class CommandsMixin:
    """:class:`~tapa_ai.play.session.PlaySession`'s ``_cmd_*`` handlers; uses the state its ``__init__`` sets."""

    # ------------------------------------------------------------------ looking: help, board, moves, hint, eval
    def _cmd_help(self, _: str) -> None:
        self.say("Moves: " + MOVE_EXAMPLES + ", in your own numbering (the board's).")
        cube = self.rules.cube
        for name, text in COMMANDS.items():
            if not cube and name in ("double", "take", "pass"):
                continue
            self.say(f"  {name:<7} {text}")
        if not cube:
            self.say(f"  ({self.rules.name} has no doubling cube)")

    def _cmd_board(self, _: str) -> None:
        self._show_board(force=True)

    def _cmd_moves(self, _: str) -> None:
        if self.turn is None:
            self._error("You have no dice to move now.")
            return
        self.say(f"Legal moves ({len(self.turn.moves)}): {legal_moves_text(self.turn.moves, limit=1000)}")

    def _cmd_hint(self, argument: str) -> None:
        count = 5
        if argument:
            if not (argument.isascii() and argument.isdigit() and len(argument) <= 6) or int(argument) < 1:
                self._error("hint N: N is how many moves to show, e.g. hint 3")
                return
            count = int(argument)
        game = self.match.game
        if game.phase == "move" and self.turn is not None:
            note = " (for the whole turn, from its start)" if self.turn.entered else ""
            self._show_advice(lambda: self.advisor.hint(self.turn.position, self.turn.dice, count), note)
        elif game.phase == "roll" and game.side_to_act == self.human and game.may_double:
            self._show_advice(lambda: self.advisor.cube(game.position, game.cube_value, game.cube_owner,
                                                        self._match_score(), self.human))
        elif game.phase == "double" and game.side_to_act == self.human:
            self._show_advice(lambda: self.advisor.cube(game.position, game.cube_value, game.cube_owner,
                                                        self._match_score(), self.human))
        else:
            self.say("Nothing to hint now.")

    def _cmd_eval(self, _: str) -> None:
        game = self.match.game
        try:
            self.advisor.analyzer()
        except AdviceUnavailable as error:
            self._error(f"No evaluation: {error}.")
            return
        if game.is_over:
            self.say("The game is over.")
        else:
            self._show_advice(lambda: self.advisor.evaluation(game.position, self.human))
        last = self.last_bot_move
        if last is not None and last.text:
            self._show_advice(lambda: self.advisor.review(last.position, last.dice, last.played, self.bot_side))

    def _match_score(self):
        """The score as :class:`~tapa_ai.rules.cube.MatchScore`, None in money play."""
        return self.match.match_score

    # ------------------------------------------------------------------ undo
    def _cmd_undo(self, _: str) -> None:
        if self.turn is not None and self.turn.entered:
            self.say(f"Took back {self.turn.entered}.")
            self.turn.reset()
            self._show_board(force=True)
            return
        if self.undo_stack and self.undo_stack[-1].match is self.match:
            current = self.undo_stack.pop()
        else:
            current = None
        if not self.undo_stack:
            if current is not None:
                self.undo_stack.append(current)
            self._error("Nothing to undo.")
            return
        target = self.undo_stack.pop()
        replies = 0
        if target.match.game_number == self.match.game_number:
            since = self.match.game.history[len(target.match.game.history):]
            replies = sum(event.action == "move" and event.side == self.bot_side for event in since)
        self._restore(target)
        self.say("Took back your last move" + (f" and {self.bot_side}'s reply." if replies else "."))

    def _restore(self, snapshot: UndoSnapshot) -> None:
        self.match = snapshot.match
        self.dice_rng.bit_generator.state = snapshot.dice_state
        self.bot_rng.bit_generator.state = snapshot.bot_state
        self.last_bot_move = snapshot.last_bot_move
        self.turn = None
        self.asking_another = False
        self.resigned.discard(self.match.game_number)
        self._reported = None
        self._board_shown = None

    # ------------------------------------------------------------------ the dice and the cube
    def _cmd_roll(self, _: str) -> None:
        game = self.match.game
        if game.phase != "roll" or game.side_to_act != self.human:
            self._error("You cannot roll now." if game.phase != "move" else "You have rolled: enter your move.")
            return
        self._roll()

    def _cmd_double(self, _: str) -> None:
        game = self.match.game
        if game.is_over:
            self._error("The game is over.")
            return
        reason = game.double_refusal(self.human)
        if reason:
            self._error(f"You cannot double: {reason}.")
            return
        self.match = self.match.double(self.human)
        self.say(f"You double: the cube would go to {self.match.game.offered_value}.")

    def _cmd_take(self, _: str) -> None:
        game = self.match.game
        if game.phase != "double" or game.side_to_act != self.human:
            self._error("There is no double to take.")
            return
        value = game.offered_value
        self.match = self.match.take(self.human)
        self.say(f"You take: the cube is at {value}, and you own it.")

    def _cmd_pass(self, _: str) -> None:
        game = self.match.game
        if game.phase != "double" or game.side_to_act != self.human:
            self._error("There is no double to pass." + (" (An empty move is played for you when you cannot "
                                                         "move.)" if game.phase == "move" else ""))
            return
        self.match = self.match.drop(self.human)
        self.say("You pass the double.")

    # ------------------------------------------------------------------ resigning
    def _cmd_resign(self, _: str) -> None:
        game = self.match.game
        if game.is_over:
            self._error("The game is over already.")
            return
        result = self._resignation_result(game.position)
        points = result.points * game.cube_value
        self.confirm = (f"Resign, giving {self.bot_side} {kind_words(result.kind)} ({points} "
                        f"point{'s' if points != 1 else ''})?", lambda: self._resign(result))

    def _resignation_result(self, position: Position) -> GameResult:
        bot = self.bot_side
        rules = position.rules
        if rules.pins and rules.mother_points and mother_is_pinned(position, self.human):
            return GameResult(bot, "mother", rules.mother_points)
        return normal_win(position, bot)

    def _resign(self, result: GameResult) -> None:
        match = self.match
        game = match.game
        over = replace(game, position=game.position.with_changes(result=result), phase="over", dice=None,
                       result=result)
        score = list(match.score)
        score[SIDES.index(result.winner)] += over.points_won
        record = GameRecord(match.game_number, result.winner, result.kind, over.cube_value, over.points_won,
                            False, over.crawford)
        self.match = replace(match, game=over, score=(score[0], score[1]), results=match.results + (record,))
        self.resigned.add(match.game_number)
        self.turn = None

    # ------------------------------------------------------------------ saving and loading
    def _cmd_save(self, argument: str) -> None:
        if not argument:
            self._error("save FILE: say where, e.g. save game.json")
            return
        path = save_game(argument, self._saved_game())
        self._saved = self.match
        self.say(f"Saved to {path}.")

    def _saved_game(self) -> SavedGame:
        rng = {"dice": self.dice_rng.bit_generator.state, "bot": self.bot_rng.bit_generator.state}
        return SavedGame(self.match, self.human, self.bot.name, self.seed, rng)

    def _cmd_load(self, argument: str) -> None:
        if not argument:
            self._error("load FILE: say which file, e.g. load game.json")
            return
        try:
            saved = load_game(read_file(argument), "file")
            notes = self.load(saved)
        except SaveError as error:
            self._error(f"Cannot load {argument}: {error}. The game goes on.")
            return
        self.say(f"Loaded {argument}: game {self.match.game_number}, {game_summary(self.match.game)}.")
        for note in notes:
            self.say(note)

    def load(self, saved: SavedGame) -> list[str]:
        """Continue from a saved game; :class:`SaveError` when it cannot be played here.

        Returns notes for the player (another bot, another side).
        """
        if saved.rules != self.rules:
            if saved.rules.name != self.rules.name:
                raise SaveError(f"it is a {saved.rules.name} game and this session plays {self.rules.name}; "
                                f"start tapa-ai play --variant {saved.rules.name} --load FILE")
            raise SaveError(f"its rule options differ from this session's {self.rules.name} rules")
        try:
            self.bot.check_rules(saved.rules)
        except ValueError as error:
            raise SaveError(str(error)) from None
        rng = saved.rng or {}
        try:
            dice_state = dict(rng["dice"]) if "dice" in rng else None
            bot_state = dict(rng["bot"]) if "bot" in rng else None
            probe = np.random.default_rng()
            for state in (dice_state, bot_state):
                if state is not None:
                    probe.bit_generator.state = state
        except (TypeError, ValueError, KeyError) as error:
            raise SaveError(f"rng: not a generator state ({error})") from None
        notes = []
        if saved.bot is not None and saved.bot != self.bot.name:
            notes.append(f"(The game was saved against {saved.bot}; you now play {self.bot.name}.)")
        if saved.human is not None and saved.human != self.human:
            self.human = saved.human
            notes.append(f"(You play {self.human} in this game, as saved.)")
        if dice_state is not None:
            self.dice_rng.bit_generator.state = dice_state
        if bot_state is not None:
            self.bot_rng.bit_generator.state = bot_state
        self.match = saved.match
        self.turn = None
        self.undo_stack.clear()
        self.last_bot_move = None
        self.confirm = None
        self.asking_another = False
        self._reported = None
        self._board_shown = None
        self._saved = self.match
        return notes

    # ------------------------------------------------------------------ leaving
    def _cmd_quit(self, _: str) -> None:
        if not self.match.game.is_over and self._saved is not self.match:
            self.say("Leaving; the game was not saved.")
        else:
            self.say("Bye.")
        raise QuitSession()

