"""Ray, the optional cluster engine: importing it with a clear message, and connecting to a cluster.

Only distributed training (``tapa-ai train --ray-address``) and the arena
(``tapa-ai match --ray-address``) use Ray; ``pip install 'tapa-ai[ray]'``
installs it. Every machine of the cluster needs the same ``tapa_ai``
installed (the actors import it).
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any, Optional

from .errors import TapaError

LOCAL = "local"
"""``--ray-address local``: start a new Ray instance on this machine for this command alone."""


class RayUnavailable(TapaError, RuntimeError):
    """Ray is asked for but is not installed, or the cluster cannot be reached."""


def require_ray() -> Any:
    """The ``ray`` module, or :class:`RayUnavailable` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("Ray is not installed: pip install 'tapa-ai[ray]' (or pip install 'ray>=2.9')") from None
    return ray


def connect(address: str, num_cpus: Optional[int] = None) -> bool:
    """Connect this process to the Ray cluster at ``address``; True if this call did it (and should shut down).

    ``address``: ``auto`` (the cluster started on this machine with ``ray
    start``), ``host:port`` or ``ray://host:port``, or ``local`` for a new
    single-machine instance with ``num_cpus`` CPUs. Already connected: nothing
    is done (False).
    """
    ray = require_ray()
    if ray.is_initialized():
        return False
    # Our actors and tasks return everything they produce; their logs only add noise to the driver's output.
    options: dict[str, Any] = {"log_to_driver": False}
    if address == LOCAL:
        options.update(num_cpus=num_cpus, include_dashboard=False)
        # Usage statistics would be reported from a throw-away instance; keep them off unless asked for.
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with _keep_signal_handlers():
        try:
            ray.init(address=address, **options)
        except Exception as error:  # noqa: BLE001 - Ray raises plain Exception when a local instance fails to start
            raise RayUnavailable(f"cannot connect to the Ray cluster at {address!r}: {error}") from None
    return True


class _keep_signal_handlers:
    """``with _keep_signal_handlers():``: SIGINT's and SIGTERM's handlers as they were before, after the block.

    ``ray.init`` sets a Python SIGTERM handler (``sys.exit``) and its core
    worker a C++ one (a "SIGTERM received" stack dump, then death); either
    would skip the checkpoint :class:`~tapa_ai.training.stopping.StopSignals`
    writes on SIGTERM. Installing the previous Python handler again also
    installs Python's own C-level handler, which replaces the C++ one. Only a
    handler that was set (not ``SIG_DFL``) is put back: with none, Ray's
    ``sys.exit`` at least shuts Ray down. Main thread only (Python's rule for
    signal handlers).
    """

    def __enter__(self) -> "_keep_signal_handlers":
        self._previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                handler = signal.getsignal(number)
                if handler not in (signal.SIG_DFL, None):
                    self._previous[number] = handler
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)


def disconnect(connected: bool) -> None:
    """Shut Ray down in this process if :func:`connect` connected it."""
    if connected:
        require_ray().shutdown()
