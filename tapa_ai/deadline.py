"""Time limits for long computations, checked cooperatively (``with time_limit(30): ...``).

A served request (``tapa-ai serve``) runs its command under :func:`time_limit`; the long loops (each ply of
the n-ply search, each ply of a rollout, waiting for the model's lock) call :func:`check_deadline`, which
raises :class:`DeadlineExceeded` once the limit has passed. Nothing is interrupted between two checks, so
a limit is kept to within one step of the work (a search ply's batch, a rollout ply). The limit belongs to
the thread (a :class:`contextvars.ContextVar`): other threads, and code run outside any limit, never see it.
"""

from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from typing import Iterator, Optional

__all__ = ["DeadlineExceeded", "time_limit", "check_deadline", "remaining", "acquire"]

_DEADLINE: contextvars.ContextVar[Optional[tuple[float, float]]] = contextvars.ContextVar("tapa_ai_deadline",
                                                                                           default=None)


class DeadlineExceeded(RuntimeError):
    """The work ran past its time limit; ``seconds`` is the limit."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran past its time limit of {seconds:g} s")
        self.seconds = seconds


@contextmanager
def time_limit(seconds: Optional[float]) -> Iterator[None]:
    """Run the block under a limit of ``seconds`` (None: no limit; an enclosing limit still applies)."""
    if seconds is None:
        yield
        return
    if not seconds > 0:
        raise ValueError(f"a time limit must be a positive number of seconds, got {seconds!r}")
    outer = _DEADLINE.get()
    end = time.monotonic() + float(seconds)
    if outer is not None and outer[0] < end:
        end, seconds = outer
    token = _DEADLINE.set((end, float(seconds)))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining() -> Optional[float]:
    """Seconds left of the current limit (may be negative), or None when no limit applies."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline[0] - time.monotonic()


def check_deadline() -> None:
    """Raise :class:`DeadlineExceeded` if the current limit has passed (nothing when none applies)."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline[0]:
        raise DeadlineExceeded(deadline[1])


def acquire(lock) -> None:
    """``lock.acquire()``, waiting at most the time left of the current limit (DeadlineExceeded past it)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        lock.acquire()
    elif not lock.acquire(timeout=max(deadline[0] - time.monotonic(), 0.0)):
        raise DeadlineExceeded(deadline[1])
