"""What the learner needs of a transport of self-play actors, shared by the process and the Ray transports."""

from __future__ import annotations

import signal
import sys
from typing import Optional, Protocol

import numpy as np

from .actor import ActorBatch
from .trainer import TrainingError

Weights = tuple[int, dict[str, np.ndarray], float]
"""A publication: (version, state_dict as numpy arrays, exploration rate epsilon)."""


class ActorPool(Protocol):
    """What the learner needs of a transport: start actors, publish weights, receive batches, stop."""

    restarts: int
    """Actors replaced so far (dead, hung or lost)."""
    stopping: bool
    """Set by the learner when it stops (Ctrl-C, SIGTERM): actors lost from then on are not replaced."""

    def start(self, weights: Weights) -> None: ...

    def publish(self, weights: Weights) -> None: ...

    def receive(self, timeout: float) -> list[ActorBatch]: ...

    def close(self) -> None: ...


class ActorFailed(TrainingError):
    """An actor raised an error (not a crash): it would fail again, so training stops with its traceback."""


def failures_allowed(workers: int) -> int:
    """Actor losses in a row (no batch received in between) after which the learner gives up."""
    return 2 * workers + 2


def report_replacement(slot: int, why: str, in_a_row: int, workers: int) -> None:
    """Say in one line on stderr that actor ``slot`` was lost (``why``) and replaced, and how many replacements in
    a row (no batch received in between) training allows before it gives up; through ``tqdm.write``, so that a
    progress bar is redrawn below the line, not broken by it."""
    from tqdm import tqdm

    tqdm.write(f"self-play actor {slot} lost: {why}; replaced ({in_a_row} of {failures_allowed(workers)} "
               "replacements in a row allowed)", file=sys.stderr)


def exit_status(code: Optional[int]) -> str:
    """A process's exit code as a user reads it: ``exit code 1``, ``killed by SIGKILL``."""
    if code is None:
        return "exit code unknown"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
