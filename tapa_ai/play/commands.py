"""A line typed in ``tapa-ai play``: the answer to a question, a move, or a command (``help``, ``hint``,
``undo``, ``save`` ...) and its handler."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from ..flow import GameRecord
from ..rules.position import SIDES, GameResult, Position
from ..quoting import quoted
from ..rules.reference import mother_is_pinned
from .advice import AdviceUnavailable
from .moves import legal_moves_text
from .reports import kind_words
from .saves import SaveError, game_summary, load_game, read_file, save_game

__all__ = ["COMMANDS", "ALIASES", "MOVE_EXAMPLES", "PINNING_MOVE_EXAMPLES", "RUNNING_MOVE_EXAMPLES", "move_examples",
           "QuitSession", "Commands", "Question", "resignation_kinds"]

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
    "save": "save FILE: write the game to a JSON file (FILE.sgf, FILE.mat: GNU Backgammon's SGF, the .mat text)",
    "load": "load FILE: continue a saved game or match (a tapa-ai save, a GNU Backgammon .sgf, a .mat; or start from a JSON position)",
    "resign": "resign [single|gammon|...]: offer the bot the game at that value (it may refuse)",
    "quit": "leave",
}
ALIASES = {"?": "help", "h": "help", "b": "board", "r": "roll", "d": "double", "t": "take", "p": "pass",
           "drop": "pass", "q": "quit", "exit": "quit", "e": "eval", "m": "moves", "u": "undo"}
ANOTHER_GAME_COMMANDS = ("save", "load", "help", "board", "eval", "undo", "quit")
"""The commands that work at "Another game?" (others are refused; y plays on, n or Enter leaves)."""
MOVE_EXAMPLES = "24/21 13/11, 6/off, bar/22, 24/21/18 (one checker, both dice), 13/11(2)"
PINNING_MOVE_EXAMPLES = "24/21 13/11, 6/off, 24/21/18 (one checker, both dice), 13/11(2)"
"""The pinning games' examples (tapa, plakoto: no bar, docs/rules.md 3)."""
RUNNING_MOVE_EXAMPLES = "24/18 18/13, 24/13 (one checker, both dice), 13/11(2), 6/off"
"""The running games' examples (fevga, narde: no bar, docs/rules.md 8)."""


def move_examples(rules) -> str:
    """How moves are written, for the rule set's help lines (``bar/22`` only where checkers are hit)."""
    if rules.parallel:
        return RUNNING_MOVE_EXAMPLES
    return MOVE_EXAMPLES if rules.hits else PINNING_MOVE_EXAMPLES


def loaded_variant(session) -> str:
    """`` (plakoto) of a Tavli match to 3``: what game of a rotation's match a loaded file is at ("" for
    others)."""
    if not session.is_rotation:
        return ""
    return f" ({session.match.variant}) of a {session.match_name} to {session.match.length}"


RESIGN_WORDS = {"single": "single", "normal": "single", "1": "single", "gammon": "gammon", "2": "gammon",
                "backgammon": "backgammon", "3": "backgammon", "mother": "mother"}
"""What ``resign WORD`` (and the answer to "resign how much?") may say, and the result kind it means."""


def resignation_kinds(rules) -> list[str]:
    """The result kinds a game of ``rules`` scores, which a player may resign: a single game and a gammon in every
    variant, a backgammon where the rules have backgammons (tapa, backgammon), a mother win in the pinning games
    with mother points (tapa, plakoto); docs/rules.md."""
    kinds = ["single", "gammon"]
    if rules.backgammons:
        kinds.append("backgammon")
    if rules.pins and rules.mother_points:
        kinds.append("mother")
    return kinds


@dataclass
class Question:
    """A question on the prompt that only its answers close: each answer word and what it does; ``n``, ``no`` or
    an empty line cancels (saying :attr:`cancelled`); anything else is refused and the question asked again."""

    text: str
    answers: dict[str, Callable[[], None]]
    choices: str
    """How to answer, shown in the prompt's brackets, e.g. ``y/N``."""
    cancelled: str = "Cancelled."
    words: list[str] = field(default_factory=list)
    """The answers as said when a line is refused (e.g. ``y``)."""

    @property
    def prompt(self) -> str:
        return f"{self.text} [{self.choices}] "


def _find_offer(word: str, offers: list[GameResult]) -> Optional[GameResult]:
    """The offer ``word`` names: its kind (``normal`` for a single game) or its points (``2``: what is worth 2)."""
    word = word.lower()
    if word.isascii() and word.isdigit() and len(word) == 1:
        return next((result for result in offers if result.points == int(word)), None)
    return next((result for result in offers if result.kind == RESIGN_WORDS.get(word)), None)


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
            self._answer(session.confirm, text)
            return
        word, _, rest = text.partition(" ")
        command = ALIASES.get(word.lower(), word.lower())
        if session.asking_another and command not in ANOTHER_GAME_COMMANDS:
            if text.lower() in ("y", "yes"):
                session.asking_another = False
                session.turns.start_next_game()
            elif text.lower() in ("", "n", "no"):
                session.say("Bye.")
                raise QuitSession()
            else:  # a command typed here is not taken as a "no": say so, and ask again
                session.error(f"{quoted(text)} is no answer to \"Another game?\": type y for another game, n (or "
                              f"Enter) to leave; {', '.join(ANOTHER_GAME_COMMANDS)} work too.")
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

    def _answer(self, question: Question, text: str) -> None:
        """A line typed while ``question`` is open: one of its answers, a no, or (anything else, a command
        included) refused without being run, the question staying open."""
        session = self.session
        answer = text.lower()
        if answer in question.answers:
            session.confirm = None
            question.answers[answer]()
        elif answer in ("", "n", "no"):
            session.confirm = None
            session.say(question.cancelled)
        else:
            words = " or ".join(question.words or list(question.answers))
            session.error(f"{quoted(text)} is no answer, and was not run: type {words}, or n (or Enter) to cancel.")

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
            if name == "resign":  # the values this variant scores
                text = text.replace("single|gammon|...", "|".join(resignation_kinds(session.rules)))
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
            context = session.rotation_context()
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
        context = session.rotation_context()
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
    def resign(self, argument: str) -> None:
        """``resign [KIND]``: offer the bot the game as a single game, a gammon, a backgammon or a mother win
        (those the variant scores and the bot can still win); with no KIND, asked when there is a choice."""
        session = self.session
        game = session.match.game
        if game.is_over:
            session.error("The game is over already.")
            return
        offers = self._resignation_offers(game.position)
        if argument:
            chosen = _find_offer(argument, offers)
            if chosen is None:
                why = self._not_offered(RESIGN_WORDS.get(argument.lower()), offers)
                session.error(f"resign {quoted(argument)}: {why}")
                return
            self._ask_to_resign(chosen, offers)
            return
        if len(offers) == 1:
            self._ask_to_resign(offers[0], offers)
            return
        answers = {word: (lambda result=_find_offer(word, offers): self._offer(result, offers))
                   for word in RESIGN_WORDS if _find_offer(word, offers) is not None}
        session.confirm = Question(f"Resign how much: {self._offers_text(offers)}?", answers,
                                  f"{'/'.join(result.kind for result in offers)}, N: cancel",
                                  cancelled="Cancelled: you did not resign.",
                                  words=[result.kind for result in offers])

    def _offers_text(self, offers: list[GameResult]) -> str:
        cube = self.session.match.game.cube_value
        texts = [f"{kind_words(result.kind)} ({result.points * cube} point{'s' if result.points * cube != 1 else ''})"
                 for result in offers]
        return ", ".join(texts[:-1]) + " or " + texts[-1] if len(texts) > 1 else texts[0]

    def _not_offered(self, kind: Optional[str], offers: list[GameResult]) -> str:
        """Why ``resign KIND`` is refused, and what may be resigned instead."""
        rules = self.session.rules
        choices = f"resign {' or resign '.join(result.kind for result in offers)}"
        if kind is None:
            return f"say how much: {choices}"
        if kind not in resignation_kinds(rules):
            return f"{rules.name} has no {kind_words(kind)[2:]}s; {choices}"
        if kind == "mother":
            return f"{self.session.bot_side} has not pinned your mother; {choices}"
        return (f"you have borne off a checker, so {self.session.bot_side} can win only a single game; {choices}"
                if len(offers) == 1 else f"{self.session.bot_side} cannot win {kind_words(kind)} here; {choices}")

    def _ask_to_resign(self, result: GameResult, offers: list[GameResult]) -> None:
        session = self.session

        def offer() -> None:
            self._offer(result, offers)

        session.confirm = Question(f"Resign, giving {session.bot_side} {self._offers_text([result])}?",
                                   {"y": offer, "yes": offer}, "y/N", cancelled="Cancelled: you did not resign.",
                                   words=["y"])

    def _resignation_offers(self, position: Position) -> list[GameResult]:
        """The results the human may resign, fewest points first: those the variant scores
        (:func:`resignation_kinds`) that the bot can still win. A single game always; a gammon and a
        backgammon only while the human has borne off no checker; a mother win when the bot has pinned the
        human's mother (it takes the place of the kind worth as much: the gammon in plakoto, the backgammon
        in tapa)."""
        session = self.session
        bot, rules = session.bot_side, position.rules
        kinds = resignation_kinds(rules)
        offers = [GameResult(bot, "single", 1)]
        if position.off_count(session.human) == 0:
            offers.append(GameResult(bot, "gammon", 2))
            if "backgammon" in kinds:
                offers.append(GameResult(bot, "backgammon", 3))
        if "mother" in kinds and mother_is_pinned(position, session.human):
            offers = [result for result in offers if result.points != rules.mother_points]
            offers.append(GameResult(bot, "mother", rules.mother_points))
        return sorted(offers, key=lambda result: result.points)

    def _offer(self, result: GameResult, offers: list[GameResult]) -> None:
        """The bot accepts a resignation worth the most it can still win; a smaller one when it is worth at least
        the points per game its evaluation expects (the advisor's network, the bot's own for a net bot), else it
        refuses and the game goes on."""
        session = self.session
        bot = session.bot_side
        offered = self._offers_text([result])
        if result.points >= max(offer.points for offer in offers):
            session.say(f"{bot} accepts {offered}: it cannot win more.")
            self._resign(result)
            return
        try:
            expected = self._bot_expects()
        except AdviceUnavailable as error:
            session.say(f"{bot} refuses {offered}: with no evaluation to judge it by ({error}), it accepts only "
                        f"{self._offers_text(offers[-1:])}. The game goes on.")
            return
        cube = session.match.game.cube_value
        per_game = f"it expects {expected * cube:+.3f} points from this game"
        if result.points >= expected:
            session.say(f"{bot} accepts {offered}: {per_game}.")
            self._resign(result)
        else:
            session.say(f"{bot} refuses {offered}: {per_game}. The game goes on.")

    def _bot_expects(self) -> float:
        """The points per game the bot expects from here (cubeless), by the advisor's evaluation: before the
        human's move, the best of the human's moves with the dice; :class:`AdviceUnavailable` without one."""
        session = self.session
        analyzer = session.advisor.analyzer()
        turn = session.turn
        if turn is not None:
            ranked, _ = analyzer.rank(turn.position, turn.dice, limit=1)
            if ranked:
                return -ranked[0].equity
        position = session.match.game.position
        _, equity, _ = analyzer.evaluate(position)
        return equity if position.turn == session.bot_side else -equity

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
        state = match.match if session.is_rotation else match  # a rotation's match's MatchState
        state = replace(state, game=over, score=(score[0], score[1]), results=state.results + (record,))
        session.match = match.with_match(state) if session.is_rotation else state
        session.resigned.add(match.game_number)
        session.turn = None

    # ------------------------------------------------------------------ saving and loading
    def save(self, argument: str) -> None:
        session = self.session
        if not argument:
            session.error("save FILE: say where, e.g. save game.json")
            return
        try:
            path = save_game(argument, session.saved_game())
        except SaveError as error:
            session.error(f"Not saved: {error}. The game goes on.")
            return
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
            message = str(error)  # a match file's errors begin with its path already
            shown = message if message.startswith(f"{argument}:") else f"{argument}: {message}"
            session.error(f"Cannot load {shown}. The game goes on.")
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
