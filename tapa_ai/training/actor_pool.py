"""What the learner needs of a transport of self-play actors, shared by the process and the Ray transports."""

from __future__ import annotations

from typing import Protocol

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
