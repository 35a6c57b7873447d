"""A game or a match against a bot at the terminal: the session behind ``tapa-ai play``.

:class:`PlaySession` holds the match (:class:`~tapa_ai.flow.MatchState`,
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
- ``resign [single|gammon|backgammon|mother]`` offers the bot the game at that
  value times the cube (asked when no value is given and there is a choice):
  the kinds the variant scores (docs/rules.md) that the bot can still win. The
  bot accepts the most it can still win; less when it is worth at least what
  the advisor's evaluation expects for the bot, else it refuses and play goes
  on. The question is closed only by its answers: anything else typed is
  refused, not run, and the question is asked again.
- In money play each game is followed by "another game?"; a match goes on to
  the next game by itself until a side reaches the match length.
- A rotation's match (Tavli, Tabla or any list of games, docs/rules.md 9 and
  10.4, :meth:`PlaySession.rotation_match`): :attr:`match` is a
  :class:`~tapa_ai.flow.rotation.RotationMatch` instead of a ``MatchState``
  (they share the game actions); the current game's variant gives
  :attr:`rules`, :attr:`bot` (the rotation player's bot for it, choosing its
  moves by the match score through the rotation's match equity table) and
  :attr:`advisor` (hints ranked by the match-winning chance).

The session holds the state (the match, the dice and the bot's generators,
the move being entered, the undo stack) and the streams with the input loop;
three parts it is composed of act on it, each holding the session:
:class:`~tapa_ai.play.turns.Turns` plays on to the human's next decision (the
dice, the bot, move entry), :class:`~tapa_ai.play.commands.Commands` reads a
line and answers the typed commands (``hint``, ``undo``, ``save`` ...), and
:class:`~tapa_ai.play.reports.Reports` says what happened (the board, advice,
game and match ends, the score).
"""

from __future__ import annotations

import secrets
import sys
from typing import Any, Optional, TextIO

import numpy as np

from ..bots.base import Bot
from ..flow import MatchState
from ..flow.rotation import RotationContext, RotationMatch
from ..rules.options import RuleOptions, RulesError
from ..rules.position import SIDES, other
from ..quoting import quoted
from .advice import AdviceUnavailable, Advisor
from .board import Palette, colour_wanted
from .commands import COMMANDS, Commands, Question, QuitSession, move_examples
from .moves import TurnInProgress
from .reports import Reports
from .saves import SaveError, SavedGame, finished_match
from .turns import BotMove, Turns, UndoSnapshot

__all__ = ["PlaySession", "COMMANDS"]


class PlaySession:
    """One person against one bot: a money session (``match_length`` 0) or a match to ``match_length`` points."""

    def __init__(self, rules: RuleOptions, bot: Bot, *, human: str = "X", match_length: int = 0,
                 seed: Optional[int] = None, advisor: Optional[Advisor] = None,
                 input: Optional[TextIO] = None, output: Optional[TextIO] = None,
                 colour: Optional[bool] = None, echo: Optional[bool] = None, show_eval: bool = False) -> None:
        if human not in SIDES:
            raise ValueError(f"human side {quoted(human)}: must be 'X' or 'O'")
        if isinstance(match_length, bool) or not isinstance(match_length, int) or match_length < 0:
            raise ValueError(f"match length {quoted(match_length)}: must be an integer >= 0 (0: money play)")
        bot.check_rules(rules)
        self._bot = bot
        self.player = None
        """The rotation's player (:class:`~tapa_ai.bots.rotation.RotationPlayer`) of a rotation's match, else
        None."""
        self.human = human
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self.palette = Palette(colour_wanted(self.output) if colour is None else colour)
        interactive = _isatty(self.input)
        self.echo = (not interactive) if echo is None else echo
        self._use_input_builtin = interactive and self.input is sys.stdin and self.output is sys.stdout
        self.show_eval = show_eval
        self.advisors: dict[str, Advisor] = {rules.name: advisor if advisor is not None else Advisor(None, rules)}
        """The advisor of each variant played (one, but for a rotation's match: one per variant of it)."""
        self.seed = int(seed) if seed is not None else secrets.randbelow(2**31)
        self.dice_rng = np.random.default_rng([self.seed, 0])
        self.bot_rng = np.random.default_rng([self.seed, 1])
        self.match: MatchState | RotationMatch = MatchState.new(rules, match_length)
        self.turn: Optional[TurnInProgress] = None
        """The human's move being entered (None while not the human's move)."""
        self.undo_stack: list[UndoSnapshot] = []
        self.last_bot_move: Optional[BotMove] = None
        self.resigned: set[int] = set()
        """Numbers of the games the human resigned."""
        self.confirm: Optional[Question] = None
        """A question on the prompt (resign?) that only its answers close (:class:`~tapa_ai.play.commands.Question`)."""
        self.asking_another = False
        self.done = False
        self.saved_match: Optional[MatchState] = None
        """The match as last saved or loaded (``quit`` and the end of input say when the game is not)."""
        self.loaded_start: Optional[tuple[int, Any]] = None
        """(game number, position) of a game loaded at a position other than its variant's start: saved with it."""
        self.start_notes: list[str] = []
        """Lines said after the greeting (e.g. which file was loaded)."""
        self.reports = Reports(self)
        self.turns = Turns(self)
        self.commands = Commands(self)

    @classmethod
    def rotation_match(cls, player, length: int, *, advisors: Optional[dict[str, Advisor]] = None,
                       **options) -> "PlaySession":
        """A match to ``length`` points of ``player``'s rotation (Tavli, Tabla, ...; docs/rules.md 9) against
        ``player``, a :class:`~tapa_ai.bots.rotation.RotationPlayer`; ``advisors``: an :class:`Advisor` per
        variant of the rotation (default: none). ``options`` as for the constructor (``human``, ``seed``, the
        streams ...)."""
        from ..cube.rotation_met import check_match_length

        rotation = player.rotation
        check_match_length(length, f"{rotation.match_name()} length {quoted(length)}", ValueError)
        first = rotation.rules(1)
        session = cls(first, player.bot(first.name), **options)
        session.player = player
        session.match = RotationMatch.new(length, rotation)
        advisors = advisors or {}
        session.advisors = {variant: advisors.get(variant) or Advisor(None, rotation.rules_of(variant),
                                                                      why_none="no advisor for this game")
                            for variant in rotation.distinct}
        return session

    # ------------------------------------------------------------------ the game being played
    @property
    def is_rotation(self) -> bool:
        """The session plays a rotation's match."""
        return isinstance(self.match, RotationMatch)

    @property
    def match_name(self) -> str:
        """``Tavli match``, ``Tabla match``, ``rotation match`` (a custom rotation's), else ``match``."""
        return self.match.rotation.match_name() if self.is_rotation else "match"

    @property
    def rules(self):
        """The rule set of the game being played."""
        return self.match.rules

    @property
    def bot(self) -> Bot:
        """The bot playing the current game (a rotation player's bot for the game's variant)."""
        return self.player.bot(self.rules.name) if self.player is not None else self._bot

    @property
    def bot_label(self) -> str:
        """The opponent as named to the player: the rotation player's spec, else the bot's name."""
        return self.player.spec if self.player is not None else self.bot.name

    @property
    def advisor(self) -> Advisor:
        """The advisor of the game being played."""
        return self.advisors[self.rules.name]

    def rotation_context(self) -> Optional[RotationContext]:
        """Where the current game stands in the rotation's match (None: not a rotation's match)."""
        return RotationContext.of(self.match) if self.is_rotation else None

    def score_for(self, side: str):
        """The match score as the bot plays by it (a :class:`~tapa_ai.cube.rotation_met.RotationScore` of the
        rotation's table seen from ``side``, the mover), or None outside a rotation's match."""
        context = self.rotation_context()
        if context is None:
            return None
        from ..cube.rotation_met import RotationScore, rotation_met

        away, opponent_away = context.away(side)
        return RotationScore(rotation_met(context.rotation), [away], [opponent_away],
                             context.rotation.index(context.game))

    # ------------------------------------------------------------------ sides and names
    @property
    def bot_side(self) -> str:
        return other(self.human)

    def name_of(self, side: str) -> str:
        """``you`` for the human's side, else the side's letter."""
        return "you" if side == self.human else side

    # ------------------------------------------------------------------ output
    def say(self, text: str = "") -> None:
        self.output.write(text + "\n")

    def error(self, text: str) -> None:
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
        if not self.done and not self.match.game.is_over and self.saved_match is not self.match:
            note = " The game was not saved (save FILE keeps it; tapa-ai play --load FILE resumes it)."
        self.say(f"End of input: leaving.{note}")
        self.done = True

    def start(self) -> None:
        """Say hello and play up to the human's first decision."""
        length = self.match.length
        kind = f"a match to {length} point{'s' if length != 1 else ''}" if length else "money play"
        if self.is_rotation:
            what = f"a {self.match_name} to {length} point{'s' if length != 1 else ''} " \
                   f"({', '.join(self.match.rotation.variants)} in turn, no cube)"
        else:
            what = f"{self.rules.name}, {kind}"
        self.say(self.palette.bold(f"tapa-ai play: {what}. You are {self.human}, "
                                   f"the bot ({self.bot_label}) is {self.bot_side}. Seed {self.seed}."))
        self.say("Enter moves like " + move_examples(self.rules) + "; 'help' lists the commands.")
        for note in self.start_notes:
            self.say(note)
        if self.is_rotation:
            self.say(self.reports.rotation_game_text())
        self.turns.advance()

    @property
    def waiting(self) -> bool:
        """The session waits for a line of input."""
        return not self.done

    def prompt(self) -> str:
        if self.confirm is not None:
            return self.confirm.prompt
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

    def handle_line(self, line: str) -> None:
        """Act on one line of input, then play on to the human's next decision."""
        try:
            self.commands.handle(line.strip())
            self.turns.advance()
        except QuitSession:
            self.done = True
        except (RulesError, SaveError, AdviceUnavailable) as error:
            self.error(str(error))
        except Exception as error:  # noqa: BLE001 - a bug must not end the game: say it, keep the state
            self.error(f"Internal error ({type(error).__name__}: {error}); the game goes on. "
                       "Please report it with the saved game (save FILE).")

    # ------------------------------------------------------------------ the state as a whole
    def snapshot(self) -> UndoSnapshot:
        """The state before one of the human's move decisions (for ``undo``)."""
        return UndoSnapshot(self.match, self.dice_rng.bit_generator.state, self.bot_rng.bit_generator.state,
                            self.last_bot_move)

    def restore(self, snapshot: UndoSnapshot) -> None:
        """Back to ``snapshot`` (``undo``): the match, the dice and the bot's generators, the bot's last move."""
        self.match = snapshot.match
        self.dice_rng.bit_generator.state = snapshot.dice_state
        self.bot_rng.bit_generator.state = snapshot.bot_state
        self.last_bot_move = snapshot.last_bot_move
        self.turn = None
        self.asking_another = False
        self.resigned.discard(self.match.game_number)
        self.reports.forget()

    def saved_game(self) -> SavedGame:
        """The session as a save file holds it."""
        rng = {"dice": self.dice_rng.bit_generator.state, "bot": self.bot_rng.bit_generator.state}
        number, start = self.loaded_start or (0, None)
        return SavedGame(self.match, self.human, self.bot_label, self.seed, rng,
                         start if number == self.match.game_number else None)

    def load(self, saved: SavedGame) -> list[str]:
        """Continue from a saved game; :class:`SaveError` when it cannot be played here.

        Returns notes for the player (another bot, another side).
        """
        if over := finished_match(saved.match):
            raise SaveError(over)
        if saved.is_rotation != self.is_rotation:
            if saved.is_rotation:
                raise SaveError(f"it is a {saved.match.rotation.match_name()} to {saved.match.length} and "
                                f"this session plays {self.rules.name}; start tapa-ai play --load FILE")
            raise SaveError(f"it is a {saved.rules.name} game and this session plays a {self.match_name}; start "
                            "tapa-ai play --load FILE")
        if self.is_rotation and saved.match.rotation != self.match.rotation:  # the player plays this rotation
            raise SaveError(f"it is a match of the rotation {saved.match.rotation.describe()} and this session "
                            f"plays {self.match.rotation.describe()}; start tapa-ai play --load FILE")
        if not self.is_rotation and saved.rules != self.rules:  # a rotation's player plays every game of it
            if saved.rules.name != self.rules.name:
                raise SaveError(f"it is a {saved.rules.name} game and this session plays {self.rules.name}; "
                                f"start tapa-ai play --variant {saved.rules.name} --load FILE")
            raise SaveError(f"its rule options differ from this session's {self.rules.name} rules")
        try:
            if not self.is_rotation:
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
        if saved.bot is not None and saved.bot != self.bot_label:
            notes.append(f"(The game was saved against {saved.bot}; you now play {self.bot_label}.)")
        if saved.human is not None and saved.human != self.human:
            self.human = saved.human
            notes.append(f"(You play {self.human} in this game, as saved.)")
        if dice_state is not None:
            self.dice_rng.bit_generator.state = dice_state
        if bot_state is not None:
            self.bot_rng.bit_generator.state = bot_state
        self.match = saved.match
        game = saved.match.game
        start = saved.start or (game.position if not game.history and game.phase != "opening" else None)
        self.loaded_start = (saved.match.game_number, start) if start is not None else None
        self.turn = None
        self.undo_stack.clear()
        self.last_bot_move = None
        self.confirm = None
        self.asking_another = False
        self.reports.forget()
        self.saved_match = self.match
        return notes


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False
