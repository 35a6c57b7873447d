"""A line typed in ``tapa-ai play``: the answer to a question, a move, or a command (``help``, ``hint``,
``undo``, ``save`` ...) and its handler."""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Callable

from ..flow import GameRecord
from ..rules.position import SIDES, GameResult, Position
from ..quoting import quoted
from ..rules.reference import mother_is_pinned, normal_win
from .advice import AdviceUnavailable
from .moves import legal_moves_text
from .reports import kind_words
from .saves import SaveError, game_summary, load_game, read_file, save_game

__all__ = ["COMMANDS", "ALIASES", "MOVE_EXAMPLES", "RUNNING_MOVE_EXAMPLES", "move_examples", "QuitSession",
           "Commands"]

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
RUNNING_MOVE_EXAMPLES = "24/18 18/13, 24/13 (one checker, both dice), 13/11(2), 6/off"
"""The running games' examples (fevga, narde: no bar, docs/rules.md 8)."""


def move_examples(rules) -> str:
    """How moves are written, for the rule set's help lines."""
    return RUNNING_MOVE_EXAMPLES if rules.parallel else MOVE_EXAMPLES


def loaded_variant(session) -> str:
    """`` (plakoto) of a Tavli match to 3``: what game of a Tavli match a loaded file is at ("" for others)."""
    if not session.is_tavli:
        return ""
    return f" ({session.match.variant}) of a Tavli match to {session.match.length}"


class QuitSession(Exception):
    """Raised by ``quit`` (and a "no" to another game) to end the session."""


class Commands:
    """Reads a line of the session (:class:`~tapa_ai.play.session.PlaySession`) and answers it: a yes or no to
    the question asked, a typed command (one method each, :attr:`handlers`), or a move."""

    def __init__(self, session) -> None:
        self.session = session
        self.handlers: dict[str, Callable[[str], None]] = {
            "help": self.help, "board": self.board, "moves": self.moves, "hint": self.hint, "eval": self.eval,
            "undo": self.undo, "roll": self.roll, "double": self.double, "take": self.take, "pass": self.pass_,
            "save": self.save, "load": self.load, "resign": self.resign, "quit": self.quit}
        """The handler of each command of :data:`COMMANDS`, given the rest of the line."""

    # ------------------------------------------------------------------ one line
    def handle(self, text: str) -> None:
        """Act on one line (stripped); the session then plays on."""
        session = self.session
        if session.confirm is not None:
            question, action = session.confirm
            session.confirm = None
            if text.lower() in ("y", "yes"):
                action()
            else:
                session.say("Cancelled.")
            return
        word, _, rest = text.partition(" ")
        command = ALIASES.get(word.lower(), word.lower())
        if session.asking_another and command not in ("save", "load", "help", "board", "eval", "undo", "quit"):
            if text.lower() in ("y", "yes"):
                session.asking_another = False
                session.turns.start_next_game()
            else:
                session.say("Bye.")
                raise QuitSession()
            return
        if not text:
            self._empty_line()
            return
        if command in COMMANDS:
            self.handlers[command](rest.strip())
            return
        if "/" in text or text[0].isdigit() or text.lower().startswith("bar"):
            session.turns.enter_move(text)
            return
        guess = difflib.get_close_matches(word.lower(), list(COMMANDS) + list(ALIASES), n=1, cutoff=0.6)
        suggestion = f" Did you mean '{ALIASES.get(guess[0], guess[0])}'?" if guess else ""
        session.error(f"Unknown command {quoted(word)}.{suggestion} Type 'help' for the commands; "
                      f"moves are written like {move_examples(session.rules)}.")

    def _empty_line(self) -> None:
        session = self.session
        game = session.match.game
        if game.phase == "roll" and game.side_to_act == session.human:
            self.roll("")
        elif game.phase == "move":
            session.say(f"Enter your move, e.g. {move_examples(session.rules)}; 'moves' lists them, 'hint' suggests "
                        "one.")
        elif game.phase == "double":
            session.say("Type take or pass.")

    # ------------------------------------------------------------------ looking: help, board, moves, hint, eval
    def help(self, _: str) -> None:
        session = self.session
        session.say("Moves: " + move_examples(session.rules) + ", in your own numbering (the board's).")
        cube = session.rules.cube
        for name, text in COMMANDS.items():
            if not cube and name in ("double", "take", "pass"):
                continue
            session.say(f"  {name:<7} {text}")
        if not cube:
            session.say(f"  ({session.rules.name} has no doubling cube)")

    def board(self, _: str) -> None:
        self.session.reports.show_board(force=True)

    def moves(self, _: str) -> None:
        session = self.session
        if session.turn is None:
            session.error("You have no dice to move now.")
            return
        session.say(f"Legal moves ({len(session.turn.moves)}): {legal_moves_text(session.turn.moves, limit=1000)}")

    def hint(self, argument: str) -> None:
        session = self.session
        advisor, advice = session.advisor, session.reports.advice
        count = 5
        if argument:
            if not (argument.isascii() and argument.isdigit() and len(argument) <= 6) or int(argument) < 1:
                session.error("hint N: N is how many moves to show, e.g. hint 3")
                return
            count = int(argument)
        game = session.match.game
        turn = session.turn
        if game.phase == "move" and turn is not None:
            note = " (for the whole turn, from its start)" if turn.entered else ""
            context = session.tavli_context()
            advice(lambda: advisor.hint(turn.position, turn.dice, count, context), note)
        elif game.phase == "roll" and game.side_to_act == session.human and game.may_double:
            advice(lambda: advisor.cube(game.position, game.cube_value, game.cube_owner, session.match.match_score,
                                        session.human))
        elif game.phase == "double" and game.side_to_act == session.human:
            advice(lambda: advisor.cube(game.position, game.cube_value, game.cube_owner, session.match.match_score,
                                        session.human))
        else:
            session.say("Nothing to hint now.")

    def eval(self, _: str) -> None:
        session = self.session
        game = session.match.game
        context = session.tavli_context()
        try:
            session.advisor.analyzer()
        except AdviceUnavailable as error:
            session.error(f"No evaluation: {error}.")
            return
        if game.is_over:
            session.say("The game is over.")
        else:
            session.reports.advice(lambda: session.advisor.evaluation(game.position, session.human, context))
        last = session.last_bot_move
        if last is not None and last.text and last.position.rules == session.rules:
            session.reports.advice(lambda: session.advisor.review(last.position, last.dice, last.played,
                                                                  session.bot_side, context))

    # ------------------------------------------------------------------ undo
    def undo(self, _: str) -> None:
        session = self.session
        if session.turn is not None and session.turn.entered:
            session.say(f"Took back {session.turn.entered}.")
            session.turn.reset()
            session.reports.show_board(force=True)
            return
        stack = session.undo_stack
        if stack and stack[-1].match is session.match:
            current = stack.pop()
        else:
            current = None
        if not stack:
            if current is not None:
                stack.append(current)
            session.error("Nothing to undo.")
            return
        target = stack.pop()
        replies = 0
        if target.match.game_number == session.match.game_number:
            since = session.match.game.history[len(target.match.game.history):]
            replies = sum(event.action == "move" and event.side == session.bot_side for event in since)
        session.restore(target)
        session.say("Took back your last move" + (f" and {session.bot_side}'s reply." if replies else "."))

    # ------------------------------------------------------------------ the dice and the cube
    def roll(self, _: str) -> None:
        session = self.session
        game = session.match.game
        if game.phase != "roll" or game.side_to_act != session.human:
            session.error("You cannot roll now." if game.phase != "move" else "You have rolled: enter your move.")
            return
        session.turns.roll()

    def double(self, _: str) -> None:
        session = self.session
        game = session.match.game
        if game.is_over:
            session.error("The game is over.")
            return
        reason = game.double_refusal(session.human)
        if reason:
            session.error(f"You cannot double: {reason}.")
            return
        session.match = session.match.double(session.human)
        session.say(f"You double: the cube would go to {session.match.game.offered_value}.")

    def take(self, _: str) -> None:
        session = self.session
        game = session.match.game
        if game.phase != "double" or game.side_to_act != session.human:
            session.error("There is no double to take.")
            return
        value = game.offered_value
        session.match = session.match.take(session.human)
        session.say(f"You take: the cube is at {value}, and you own it.")

    def pass_(self, _: str) -> None:
        session = self.session
        game = session.match.game
        if game.phase != "double" or game.side_to_act != session.human:
            session.error("There is no double to pass." + (" (An empty move is played for you when you cannot "
                                                           "move.)" if game.phase == "move" else ""))
            return
        session.match = session.match.drop(session.human)
        session.say("You pass the double.")

    # ------------------------------------------------------------------ resigning
    def resign(self, _: str) -> None:
        session = self.session
        game = session.match.game
        if game.is_over:
            session.error("The game is over already.")
            return
        result = self._resignation_result(game.position)
        points = result.points * game.cube_value
        session.confirm = (f"Resign, giving {session.bot_side} {kind_words(result.kind)} ({points} "
                           f"point{'s' if points != 1 else ''})?", lambda: self._resign(result))

    def _resignation_result(self, position: Position) -> GameResult:
        session = self.session
        bot = session.bot_side
        rules = position.rules
        if rules.pins and rules.mother_points and mother_is_pinned(position, session.human):
            return GameResult(bot, "mother", rules.mother_points)
        return normal_win(position, bot)

    def _resign(self, result: GameResult) -> None:
        session = self.session
        match = session.match
        game = match.game
        over = replace(game, position=game.position.with_changes(result=result), phase="over", dice=None,
                       result=result)
        score = list(match.score)
        score[SIDES.index(result.winner)] += over.points_won
        record = GameRecord(match.game_number, result.winner, result.kind, over.cube_value, over.points_won,
                            False, over.crawford)
        state = match.match if session.is_tavli else match  # a Tavli match's MatchState
        state = replace(state, game=over, score=(score[0], score[1]), results=state.results + (record,))
        session.match = match.with_match(state) if session.is_tavli else state
        session.resigned.add(match.game_number)
        session.turn = None

    # ------------------------------------------------------------------ saving and loading
    def save(self, argument: str) -> None:
        session = self.session
        if not argument:
            session.error("save FILE: say where, e.g. save game.json")
            return
        path = save_game(argument, session.saved_game())
        session.saved_match = session.match
        session.say(f"Saved to {path}.")

    def load(self, argument: str) -> None:
        session = self.session
        if not argument:
            session.error("load FILE: say which file, e.g. load game.json")
            return
        try:
            saved = load_game(read_file(argument), "file")
            notes = session.load(saved)
        except SaveError as error:
            session.error(f"Cannot load {argument}: {error}. The game goes on.")
            return
        session.say(f"Loaded {argument}: game {session.match.game_number}{loaded_variant(session)}, "
                    f"{game_summary(session.match.game)}.")
        for note in notes:
            session.say(note)

    # ------------------------------------------------------------------ leaving
    def quit(self, _: str) -> None:
        session = self.session
        if not session.match.game.is_over and session.saved_match is not session.match:
            session.say("Leaving; the game was not saved.")
        else:
            session.say("Bye.")
        raise QuitSession()
