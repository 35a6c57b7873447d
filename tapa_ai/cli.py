"""The ``tapa-ai`` command: the top-level parser, ``--version`` and :func:`main`.

Every command is a module ``cli_<command>.py`` in the package of what it drives (:data:`COMMANDS`), with two
functions: ``add_parser(subparsers)`` adds the command and its options (``func=run``), and ``run(args)`` runs
it and returns the exit code. A command reports bad input by raising a :class:`~tapa_ai.errors.TapaError`;
:func:`main` catches it here, once: ``tapa-ai <command>: <message>`` on stderr, exit code 2. A
:class:`~tapa_ai.errors.UsageError`, like the errors argparse finds itself, prints one line,
``tapa-ai <command>: error: <message> (see tapa-ai <command> --help)`` (exit code 2; no usage block). A
mistyped command, option or choice gets a "did you mean". Only the module of the command run is imported (``analyse`` loads torch, the arena numba).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from typing import Iterable, Optional

from . import __version__
from .errors import TapaError, UsageError
from .quoting import nearest, quoted

COMMANDS = {
    "demo": "tapa_ai.rules.cli_demo",
    "train": "tapa_ai.training.cli_train",
    "match": "tapa_ai.arena.cli_match",
    "tournament": "tapa_ai.arena.cli_tournament",
    "export": "tapa_ai.export.cli_export",
    "play": "tapa_ai.play.cli_play",
    "engine": "tapa_ai.engine.cli_engine",
    "serve": "tapa_ai.engine.cli_serve",
    "rollout": "tapa_ai.arena.cli_rollout",
    "analyse": "tapa_ai.analysis.cli_analyse",
    "bearoff": "tapa_ai.bearoff.cli_bearoff",
    "benchmark": "tapa_ai.arena.benchmark.cli_benchmark",
}
"""Each command's module, in the order of ``tapa-ai --help``."""

DEFAULT_COMMAND = "train"
"""The command a bare ``tapa-ai`` runs."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser with "did you mean": for a mistyped option (``--gmes``: ``--games``), whatever error
    it caused (unrecognized, or a positional it took as its value missing), and for a value that is not one of
    the choices (a benchmark action, a --variant)."""

    _words: list[str] = []

    def parse_known_args(self, args=None, namespace=None):
        self._words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        if not message.startswith("unrecognized arguments: "):
            guesses = self.guesses(self._words)
            if guesses:
                typos = " and ".join(typo for typo, _ in guesses)
                message += f"; {typos} {'is not an option' if len(guesses) == 1 else 'are not options'}: " \
                    + self.did_you_mean(guesses)
        self.exit(2, one_line_error(self.prog, message))

    def guesses(self, words: list[str]) -> list[tuple[str, str]]:
        """(word, nearest option) for each word of ``words`` that looks like an option of this parser's but is
        none (nor the start of one)."""
        options = [option for option in self._option_string_actions if option.startswith("--")]
        found = []
        for word in words:
            typo = word.split("=", 1)[0]
            if typo.startswith("--") and len(typo) > 2 and not any(option.startswith(typo) for option in options):
                close = difflib.get_close_matches(typo, options, n=1)
                if close:
                    found.append((typo, close[0]))
        return found

    @staticmethod
    def did_you_mean(guesses: list[tuple[str, str]]) -> str:
        if len(guesses) == 1:
            return f"did you mean {guesses[0][1]}?"
        return "did you mean " + ", ".join(f"{close} for {typo}" for typo, close in guesses) + "?"

    def _check_value(self, action: argparse.Action, value) -> None:
        if action.choices is not None and value not in action.choices:
            close = difflib.get_close_matches(str(value), [str(choice) for choice in action.choices], n=1)
            if close:
                choices = ", ".join(map(repr, action.choices))
                raise argparse.ArgumentError(action, f"invalid choice: {value!r}; did you mean {close[0]!r}? "
                                                     f"(choose from {choices})")
        super()._check_value(action, value)


ERROR_LIMIT = 600
"""Characters of an argument error's message shown (argparse quotes whole values: a 60 KB argument)."""


def one_line_error(prog: str, message: str) -> str:
    """``tapa-ai match: error: <message> (see tapa-ai match --help)``: an argument error in one line, without
    the usage block, the message bounded (:data:`ERROR_LIMIT`)."""
    message = " ".join(message.split())
    if len(message) > ERROR_LIMIT:
        message = f"{message[:ERROR_LIMIT]}... ({len(message):,} characters)"
    return f"{prog}: error: {message} (see {prog} --help)\n"


def build_parser(commands: Optional[Iterable[str]] = None) -> argparse.ArgumentParser:
    """The ``tapa-ai`` parser with ``commands`` (default: all of :data:`COMMANDS`)."""
    parser = _Parser(prog="tapa-ai", description="Self-play AI toolkit for Tapa and its family: Plakoto, backgammon, Portes, Fevga, Narde.")
    parser.add_argument("--version", action="version", version=f"tapa-ai {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if commands is None else commands:
        importlib.import_module(COMMANDS[name]).add_parser(subparsers)
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    """Run ``tapa-ai`` with ``argv`` (default: the process's arguments); the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = [DEFAULT_COMMAND]
    name, before = _command_of(argv)
    if name is not None and name not in COMMANDS:
        _unknown_command(name)
    wants_help = any(token in ("-h", "--help") for token in before)  # tapa-ai's own help lists every command
    parser = build_parser(None if wants_help else [name] if name is not None else [])
    args, extras = parser.parse_known_args(argv)
    chosen = _chosen_parser(parser, args)
    if extras:
        chosen.error(_unrecognized(chosen, extras))
    if args.command is None:  # only "--" was given: the default command
        return main([DEFAULT_COMMAND])
    try:
        return args.func(args)
    except UsageError as error:
        chosen.error(str(error))
    except TapaError as error:
        print(f"{chosen.prog}: {error}", file=sys.stderr)
        return 2


def _command_of(argv: list[str]) -> tuple[Optional[str], list[str]]:
    """The command named in ``argv`` (its first word that is no option: tapa-ai's own options take no value),
    and the words before it."""
    for index, token in enumerate(argv):
        if token == "--":
            return (argv[index + 1] if index + 1 < len(argv) else None), argv[:index]
        if not token.startswith("-"):
            return token, argv[:index]
    return None, argv


def _unknown_command(name: str) -> None:
    """One line with the nearest command and the list of all; exit code 2."""
    parser = build_parser([])
    close = nearest(name, COMMANDS)
    guess = f"; did you mean {close!r}?" if close else ""
    parser.exit(2, f"tapa-ai: unknown command {quoted(name, 40)}{guess} (commands: {', '.join(COMMANDS)}; see "
                   "tapa-ai --help)\n")


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub-)command ``args`` ran: ``tapa-ai match``'s, ``tapa-ai benchmark score``'s."""
    while True:
        subparsers = next((action for action in parser._actions
                           if isinstance(action, argparse._SubParsersAction)), None)
        if subparsers is None or getattr(args, subparsers.dest, None) not in subparsers.choices:
            return parser
        parser = subparsers.choices[getattr(args, subparsers.dest)]


def _unrecognized(parser: _Parser, extras: list[str]) -> str:
    """argparse's "unrecognized arguments" with the nearest option of ``parser`` for each mistyped one."""
    guesses = parser.guesses(extras)
    shown = " ".join(extra if len(extra) <= 80 else quoted(extra) for extra in extras[:20])
    if len(extras) > 20:
        shown += f" ... ({len(extras)} arguments)"
    return f"unrecognized arguments: {shown}" + (f"; {parser.did_you_mean(guesses)}" if guesses else "")


if __name__ == "__main__":
    sys.exit(main())
