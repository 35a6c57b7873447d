"""The ``tapa-ai`` command: the top-level parser, ``--version`` and :func:`main`.

Every command is a module ``cli_<command>.py`` in the package of what it drives (:data:`COMMANDS`), with two
functions: ``add_parser(subparsers)`` adds the command and its options (``func=run``), and ``run(args)`` runs
it and returns the exit code. A command reports bad input by raising a :class:`~tapa_ai.errors.TapaError`;
:func:`main` catches it here, once: ``tapa-ai <command>: <message>`` on stderr, exit code 2. A
:class:`~tapa_ai.errors.UsageError`, like the errors argparse finds itself, prints the command's usage and
``tapa-ai <command>: error: <message>`` (exit code 2). A mistyped command, option or choice gets a "did you
mean". Only the module of the command run is imported (``analyse`` loads torch, the arena numba).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from typing import Iterable, Optional

from . import __version__
from .errors import TapaError, UsageError

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
    "benchmark": "tapa_ai.arena.cli_benchmark",
}
"""Each command's module, in the order of ``tapa-ai --help``."""

DEFAULT_COMMAND = "train"
"""The command a bare ``tapa-ai`` runs."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with a "did you mean" for a value that is not one of the choices (a benchmark action,
    a --variant)."""

    def _check_value(self, action: argparse.Action, value) -> None:
        if action.choices is not None and value not in action.choices:
            close = difflib.get_close_matches(str(value), [str(choice) for choice in action.choices], n=1)
            if close:
                choices = ", ".join(map(repr, action.choices))
                raise argparse.ArgumentError(action, f"invalid choice: {value!r}; did you mean {close[0]!r}? "
                                                     f"(choose from {choices})")
        super()._check_value(action, value)


def build_parser(commands: Optional[Iterable[str]] = None) -> argparse.ArgumentParser:
    """The ``tapa-ai`` parser with ``commands`` (default: all of :data:`COMMANDS`)."""
    parser = _Parser(prog="tapa-ai", description="Self-play AI toolkit for Tapa, Plakoto and backgammon.")
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
    """Usage and one line with the nearest command and the list of all; exit code 2."""
    parser = build_parser([])
    close = difflib.get_close_matches(name, COMMANDS, n=1)
    guess = f"; did you mean {close[0]!r}?" if close else ""
    parser.print_usage(sys.stderr)
    parser.exit(2, f"tapa-ai: unknown command {name!r}{guess} (commands: {', '.join(COMMANDS)})\n")


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub-)command ``args`` ran: ``tapa-ai match``'s, ``tapa-ai benchmark score``'s."""
    while True:
        subparsers = next((action for action in parser._actions
                           if isinstance(action, argparse._SubParsersAction)), None)
        if subparsers is None or getattr(args, subparsers.dest, None) not in subparsers.choices:
            return parser
        parser = subparsers.choices[getattr(args, subparsers.dest)]


def _unrecognized(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """argparse's "unrecognized arguments" with the nearest option of ``parser`` for each mistyped one."""
    options = [option for option in parser._option_string_actions if option.startswith("--")]
    guesses = []
    for word in extras:
        if word.startswith("--") and len(word) > 2:
            close = difflib.get_close_matches(word.split("=", 1)[0], options, n=1)
            if close:
                guesses.append((word.split("=", 1)[0], close[0]))
    message = f"unrecognized arguments: {' '.join(extras)}"
    if len(guesses) == 1:
        message += f"; did you mean {guesses[0][1]}?"
    elif guesses:
        message += "; did you mean " + ", ".join(f"{close} for {word}" for word, close in guesses) + "?"
    return message


if __name__ == "__main__":
    sys.exit(main())
