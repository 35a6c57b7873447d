"""The base class of the errors a user can act on, and the one that asks for a command's usage.

Every error class of the package that a user can meet (a bad config, rule set, position, bot spec,
checkpoint, record, request, option, ...) derives from :class:`TapaError`, beside the built-in class it was
before (``class BotError(TapaError, ValueError)``, so ``except ValueError`` still catches it). ``tapa-ai``
catches it once, in :func:`tapa_ai.cli.main`: ``tapa-ai <command>: <message>`` on stderr and exit code 2,
whichever command raised it.

Internal control flow is not a :class:`TapaError`: a stop by a signal
(:class:`~tapa_ai.training.stopping.TrainingStopped`, :class:`~tapa_ai.training.stopping.Terminated`), the end
of a terminal session (:class:`~tapa_ai.play.commands.QuitSession`), a time limit the engine turns into an
answer (:class:`~tapa_ai.deadline.DeadlineExceeded`, :class:`~tapa_ai.engine.http_limits.RequestTimedOut`) and
an engine bot's private ``_Failure`` (``tests/test_cli.py`` lists them).
"""

from __future__ import annotations

__all__ = ["TapaError", "UsageError"]


class TapaError(Exception):
    """An error the user can act on: ``str()`` is one line saying what is wrong (and what to do)."""


class UsageError(TapaError):
    """Options that do not go together, found after parsing: ``tapa-ai`` prints one line, as for the errors
    argparse finds itself (``tapa-ai match: error: --games must be at least 2 (one duplicate pair) (see tapa-ai
    match --help)``; no usage block), exit code 2."""
