"""A game or a match against a bot at the terminal: the session behind ``tapa-ai play``.

:class:`PlaySession` holds the match (:class:`~tapa_ai.rules.flow.MatchState`,
which enforces the rules, the cube and the Crawford game), the dice and the
bot, and talks through injected text streams, so tests drive it exactly as a
person does::

    session = PlaySession(rules, make_bot("runner", rules), seed=7, input=io.StringIO(script), output=out)
    session.run()

or line by line: :meth:`PlaySession.start`, then :meth:`PlaySession.handle_line`
for each line while :attr:`PlaySession.waiting` is true.

The human acts only where there is a choice: a move with more than one legal
option, double or roll when the cube may be turned, take or pass. Everything
else (the bot, forced moves, passes, rolls without a cube decision) happens by
itself and is reported in one line. Dice come from
``numpy.random.default_rng([seed, 0])`` and the bot's random choices from
``default_rng([seed, 1])``, so a seed replays a session.

Decisions:

- ``undo`` first takes back the steps of a move being entered; otherwise it
  goes back to the previous decision of the human's moves (the bot's replies
  and the dice after it are rewound too, so the same dice come again).
- ``resign`` gives up the game at the value it would have if the bot bore off
  now (single, gammon or backgammon by the rules of RULES.md 3.5), or a mother
  win when the bot has pinned the human's mother; times the cube.
- In money play each game is followed by "another game?"; a match goes on to
  the next game by itself until a side reaches the match length.
"""

from __future__ import annotations

import difflib
import secrets
import sys
from dataclasses import dataclass, replace
from typing import Callable, Optional, TextIO

import numpy as np

from ..bots.base import Bot
from ..notation.move_text import MoveTextError, format_move
from ..rules.flow import FlowError, GameRecord, GameState, MatchState
from ..rules.options import RuleOptions, RulesError
from ..rules.position import SIDES, GameResult, Position, other
from ..rules.reference import mother_is_pinned, normal_win
from .advice import AdviceUnavailable, Advisor
from .board import BoardInfo, Palette, colour_wanted, render_board
from .moves import TurnInProgress, display_move, illegal_reason, in_other_view, legal_moves_text
from .saves import SaveError, SavedGame, game_summary, load_game, read_file, save_game

__all__ = ["PlaySession", "COMMANDS"]

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


@dataclass
class _Snapshot:
    """The state before one of the human's move decisions (for ``undo``)."""

    match: MatchState
    dice_state: dict
    bot_state: dict
    last_bot_move: Optional["_BotMove"]


@dataclass
class _BotMove:
    """The bot's last move, kept for ``eval``."""

    position: Position
    dice: tuple[int, int]
    played: Position
    text: str


class _Quit(Exception):
    pass


class PlaySession:
    """One person against one bot: a money session (``match_length`` 0) or a match to ``match_length`` points."""

    def __init__(self, rules: RuleOptions, bot: Bot, *, human: str = "X", match_length: int = 0,
                 seed: Optional[int] = None, advisor: Optional[Advisor] = None,
                 input: Optional[TextIO] = None, output: Optional[TextIO] = None,
                 colour: Optional[bool] = None, echo: Optional[bool] = None, show_eval: bool = False) -> None:
        if human not in SIDES:
            raise ValueError(f"human side {human!r}: must be 'X' or 'O'")
        if isinstance(match_length, bool) or not isinstance(match_length, int) or match_length < 0:
            raise ValueError(f"match length {match_length!r}: must be an integer >= 0 (0: money play)")
        bot.check_rules(rules)
        self.rules = rules
        self.bot = bot
        self.human = human
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self.palette = Palette(colour_wanted(self.output) if colour is None else colour)
        interactive = _isatty(self.input)
        self.echo = (not interactive) if echo is None else echo
        self._use_input_builtin = interactive and self.input is sys.stdin and self.output is sys.stdout
        self.show_eval = show_eval
        self.advisor = advisor if advisor is not None else Advisor(None, rules)
        self.seed = int(seed) if seed is not None else secrets.randbelow(2**31)
        self.dice_rng = np.random.default_rng([self.seed, 0])
        self.bot_rng = np.random.default_rng([self.seed, 1])
        self.match = MatchState.new(rules, match_length)
        self.turn: Optional[TurnInProgress] = None
        self.undo_stack: list[_Snapshot] = []
        self.last_bot_move: Optional[_BotMove] = None
        self.resigned: set[int] = set()
        """Numbers of the games the human resigned."""
        self.confirm: Optional[tuple[str, Callable[[], None]]] = None
        self.asking_another = False
        self.done = False
        self._reported: Optional[GameState] = None
        self._board_shown: Optional[tuple] = None
        self._saved: Optional[MatchState] = None
        self.start_notes: list[str] = []
        """Lines said after the greeting (e.g. which file was loaded)."""

    # ------------------------------------------------------------------ sides and names
    @property
    def bot_side(self) -> str:
        return other(self.human)

    def _name(self, side: str) -> str:
        return "you" if side == self.human else side

    # ------------------------------------------------------------------ output
    def say(self, text: str = "") -> None:
        self.output.write(text + "\n")

    def _error(self, text: str) -> None:
        self.say(self.palette.error(text))

    def flush(self) -> None:
        try:
            self.output.flush()
        except (OSError, ValueError):  # pragma: no cover - a closed stream
            pass

    # ------------------------------------------------------------------ the loop
    def run(self) -> int:
        """Play until the session ends (match over, quit, no more games, end of input). Returns the exit code."""
        self.start()
        while not self.done:
            line = self._read_line(self.prompt())
            if line is None:
                self._end_of_input()
                break
            self.handle_line(line)
        self.flush()
        return 0

    def _read_line(self, prompt: str) -> Optional[str]:
        self.flush()
        if self._use_input_builtin:
            try:
                return input(prompt)
            except EOFError:
                self.say()
                return None
        self.output.write(prompt)
        line = self.input.readline()
        if not line:
            if self.echo:
                self.say()
            return None
        if self.echo:
            self.output.write(line if line.endswith("\n") else line + "\n")
        return line.rstrip("\r\n")

    def _end_of_input(self) -> None:
        note = ""
        if not self.done and not self.match.game.is_over and self._saved is not self.match:
            note = " The game was not saved (save FILE keeps it; tapa-ai play --load FILE resumes it)."
        self.say(f"End of input: leaving.{note}")
        self.done = True

    def start(self) -> None:
        """Say hello and play up to the human's first decision."""
        length = self.match.length
        kind = f"a match to {length} point{'s' if length != 1 else ''}" if length else "money play"
        self.say(self.palette.bold(f"tapa-ai play: {self.rules.name}, {kind}. You are {self.human}, "
                                   f"the bot ({self.bot.name}) is {self.bot_side}. Seed {self.seed}."))
        self.say("Enter moves like " + MOVE_EXAMPLES + "; 'help' lists the commands.")
        for note in self.start_notes:
            self.say(note)
        self._advance()

    @property
    def waiting(self) -> bool:
        """The session waits for a line of input."""
        return not self.done

    def prompt(self) -> str:
        if self.confirm is not None:
            return f"{self.confirm[0]} [y/N] "
        if self.asking_another:
            return "Another game? [y/N] "
        game = self.match.game
        if game.phase == "move" and self.turn is not None:
            left = self.turn.dice_left
            dice = f"{game.dice[0]}-{game.dice[1]}"
            if self.turn.entered:
                dice += f", still to play {' '.join(map(str, left))}"
            return f"Your move ({dice})> "
        if game.phase == "roll":
            return "Roll or double? [roll]> "
        if game.phase == "double":
            return f"{self.bot_side} doubles to {game.offered_value}: take or pass?> "
        return "> "

    # ------------------------------------------------------------------ one line of input
    def handle_line(self, line: str) -> None:
        """Act on one line of input, then play on to the human's next decision."""
        try:
            self._dispatch(line.strip())
            self._advance()
        except _Quit:
            self.done = True
        except (RulesError, SaveError, AdviceUnavailable) as error:
            self._error(str(error))
        except Exception as error:  # noqa: BLE001 - a bug must not end the game: say it, keep the state
            self._error(f"Internal error ({type(error).__name__}: {error}); the game goes on. "
                        "Please report it with the saved game (save FILE).")

    def _dispatch(self, text: str) -> None:
        if self.confirm is not None:
            question, action = self.confirm
            self.confirm = None
            if text.lower() in ("y", "yes"):
                action()
            else:
                self.say("Cancelled.")
            return
        word, _, rest = text.partition(" ")
        command = ALIASES.get(word.lower(), word.lower())
        if self.asking_another and command not in ("save", "load", "help", "board", "eval", "undo", "quit"):
            if text.lower() in ("y", "yes"):
                self.asking_another = False
                self._start_next_game()
            else:
                self.say("Bye.")
                raise _Quit()
            return
        if not text:
            self._empty_line()
            return
        if command in COMMANDS:
            getattr(self, f"_cmd_{command}")(rest.strip())
            return
        if "/" in text or text[0].isdigit() or text.lower().startswith("bar"):
            self._enter_move(text)
            return
        guess = difflib.get_close_matches(word.lower(), list(COMMANDS) + list(ALIASES), n=1, cutoff=0.6)
        suggestion = f" Did you mean '{ALIASES.get(guess[0], guess[0])}'?" if guess else ""
        self._error(f"Unknown command {word!r}.{suggestion} Type 'help' for the commands; "
                    f"moves are written like {MOVE_EXAMPLES}.")

    def _empty_line(self) -> None:
        game = self.match.game
        if game.phase == "roll" and game.side_to_act == self.human:
            self._cmd_roll("")
        elif game.phase == "move":
            self.say(f"Enter your move, e.g. {MOVE_EXAMPLES}; 'moves' lists them, 'hint' suggests one.")
        elif game.phase == "double":
            self.say("Type take or pass.")

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
                    self.say(f"You have only one legal move with {_dice(game.dice)}: "
                             f"{display_move(format_move(moves[0]))}.")
                else:
                    self.say(f"You cannot move with {_dice(game.dice)}: your turn passes.")
                self.turn = None
                self.match = self.match.play(moves[0])
                continue
            if self.turn is None or self.turn.position is not game.position or self.turn.dice != game.dice:
                self.turn = TurnInProgress(game.position, game.dice, tuple(moves))
                if not self.undo_stack or self.undo_stack[-1].match is not self.match:
                    self.undo_stack.append(_Snapshot(self.match, self.dice_rng.bit_generator.state,
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
                         f"{'play' if game.position.turn == self.human else 'plays'} {_dice(game.dice)} first.")
            else:
                self.say(line + f": {self._name(game.position.turn)} "
                         f"{'go' if game.position.turn == self.human else 'goes'} first, rolling both dice.")

    def _roll(self) -> None:
        self.match = self.match.roll(self._die)
        self.say(f"You roll {_dice(self.match.game.dice)}.")

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
            self.say(f"{bot} rolls {_dice(dice)} and cannot move.")
        else:
            shown = display_move(text)
            self.say(f"{bot} rolls {_dice(dice)} and plays {self.palette.side(bot, shown)}  "
                     f"(on your board: {in_other_view(shown)}).")
        self.last_bot_move = _BotMove(position, dice, move.position, text)
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

    def _match_score(self):
        """The score as :class:`~tapa_ai.rules.cube.MatchScore`, None in money play."""
        return self.match.match_score

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
            self._error(f"Illegal move {text!r}: {reason}.")
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

    # ------------------------------------------------------------------ commands
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
            if not argument.isdigit() or int(argument) < 1:
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

    def _restore(self, snapshot: _Snapshot) -> None:
        self.match = snapshot.match
        self.dice_rng.bit_generator.state = snapshot.dice_state
        self.bot_rng.bit_generator.state = snapshot.bot_state
        self.last_bot_move = snapshot.last_bot_move
        self.turn = None
        self.asking_another = False
        self.resigned.discard(self.match.game_number)
        self._reported = None
        self._board_shown = None

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

    def _cmd_resign(self, _: str) -> None:
        game = self.match.game
        if game.is_over:
            self._error("The game is over already.")
            return
        result = self._resignation_result(game.position)
        points = result.points * game.cube_value
        self.confirm = (f"Resign, giving {self.bot_side} {_kind_words(result.kind)} ({points} "
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

    def _cmd_quit(self, _: str) -> None:
        if not self.match.game.is_over and self._saved is not self.match:
            self.say("Leaving; the game was not saved.")
        else:
            self.say("Bye.")
        raise _Quit()

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
                how = f"you resigned: {_kind_words(result.kind)}"
            else:
                how = _kind_words(result.kind)
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


# ---------------------------------------------------------------------- helpers

def _dice(dice: tuple[int, int]) -> str:
    return f"{dice[0]}-{dice[1]}"


def _kind_words(kind: str) -> str:
    return {"single": "a single game", "gammon": "a gammon", "backgammon": "a backgammon",
            "mother": "a mother win", "draw": "a draw"}[kind]


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


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False
