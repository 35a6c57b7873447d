"""Stopping a training run from outside: Ctrl-C (SIGINT) and SIGTERM become a request to stop cleanly.

While :meth:`Trainer.train` runs in the main thread, the first SIGINT or
SIGTERM only sets :attr:`StopSignals.signal`; the loop finishes the step in
flight (a ply of self-play and any learning and evaluation it triggered), so
that everything it holds is consistent, writes a checkpoint (with the finished
games not learned from yet, so a resumed run is bit-identical to one that never
stopped) and raises :class:`TrainingStopped`. A second Ctrl-C quits at once
with ``KeyboardInterrupt``: a stopping checkpoint not yet written is not
written, the last one written stands (checkpoints are written atomically);
``tapa-ai train`` reads ``latest.pt`` to say which. A second SIGTERM is
ignored; the checkpoint is on its way.

Exit codes of ``tapa-ai train``: 130 after Ctrl-C and 143 after SIGTERM
(128 + the signal number, the shell's convention for a process ended by a
signal), with the checkpoint written and the resume command printed.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any, Callable, Optional

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a run cleanly."""


class TrainingStopped(Exception):
    """A run stopped by a signal after writing its checkpoint; ``exit_code`` is 128 + the signal number."""

    def __init__(self, signal_number: int, games: int, checkpoint: Path) -> None:
        self.signal_number = signal_number
        self.games = games
        self.checkpoint = Path(checkpoint)
        super().__init__(f"stopped by {describe(signal_number)} at {games} games; checkpoint {checkpoint} written")

    @property
    def exit_code(self) -> int:
        return 128 + self.signal_number


class Terminated(BaseException):
    """SIGTERM outside the training loop (:func:`terminate_raises`): nothing to checkpoint, quit now."""


def describe(signal_number: int) -> str:
    """``Ctrl-C (SIGINT)``, ``SIGTERM``: the signal as a user knows it."""
    if signal_number == signal.SIGINT:
        return "Ctrl-C (SIGINT)"
    try:
        return signal.Signals(signal_number).name
    except ValueError:
        return f"signal {signal_number}"


def _in_main_thread() -> bool:
    # Python lets only the main thread install signal handlers.
    return threading.current_thread() is threading.main_thread()


class StopSignals:
    """``with StopSignals() as stop:``: SIGINT and SIGTERM set ``stop.signal`` instead of ending the process.

    ``on_request`` callbacks run (in the handler) at the first request, e.g.
    to tell self-play actors not to be replaced any more. Outside the main
    thread it installs nothing (``stop.signal`` stays None). The previous
    handlers come back on exit.
    """

    def __init__(self) -> None:
        self.signal: Optional[int] = None
        self.on_request: list[Callable[[], None]] = []
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signal is not None

    def _handle(self, signal_number: int, frame: Any) -> None:
        if self.signal is None:
            self.signal = signal_number
            for callback in self.on_request:
                callback()
        elif signal_number == signal.SIGINT:
            raise KeyboardInterrupt  # the second Ctrl-C: quit now, the stopping checkpoint written or not

    def __enter__(self) -> "StopSignals":
        if _in_main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous = {}


class terminate_raises:
    """``with terminate_raises():``: SIGTERM raises :class:`Terminated` (not a silent death), in the main thread."""

    def __enter__(self) -> "terminate_raises":
        self._previous = signal.signal(signal.SIGTERM, self._raise) if _in_main_thread() else None
        return self

    @staticmethod
    def _raise(signal_number: int, frame: Any) -> None:
        raise Terminated()

    def __exit__(self, *exc_info: Any) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
