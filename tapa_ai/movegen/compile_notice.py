"""One line on stderr when numba has to compile the kernels (a cold cache), at most once per process.

The numba kernels (the move generator's here, the fast evaluator's in
:mod:`tapa_ai.net.fast_kernel`) are compiled on their first call in a
process, or loaded from numba's on-disk cache (``cache=True``: the
``__pycache__`` folder next to the module, or ``NUMBA_CACHE_DIR`` when set).
After a fresh install, or a change of the kernels' source, of numba, Python or
the CPU, that first call compiles: tens of seconds without a word (measured in
``docs/startup.md``). So the first-use path of each kernel calls
:func:`notice_compile` with the dispatchers it is about to call: if numba's
cache holds no machine code for one of them that this process could load,
one line says so on stderr (never stdout, the engine protocol's channel). A
warm cache prints nothing; the check reads the cache index only, once per
kernel group and process.

The line never lands on a progress bar's line: it goes through ``tqdm.write``
(which clears this process's bars, writes the line and draws them again), and
on a terminal it first returns to the line's start and clears it, for a bar
another process draws (a match's worker compiling under the main process's
bar, which draws itself again on its next update).
"""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["MESSAGE", "is_cached", "notice_compile", "write_line"]

MESSAGE = ("tapa-ai: compiling the numba kernels once ({what} first): about 20 s each on an idle machine; "
           "later starts load them from the cache in {where}")
"""The line printed (``what``: the kernel group, ``where``: numba's cache folder)."""

_lock = threading.Lock()
_checked: set[str] = set()
_announced = False


def is_cached(dispatcher) -> bool:
    """True when ``dispatcher`` needs no compiling: compiled in this process, or machine code in numba's cache.

    The cache counts when its index is fresh (the source file unchanged) and
    holds an entry for this machine and the function's current bytecode, with
    its data file present: what numba itself checks before loading. A
    dispatcher without a cache, or a numba whose internals differ, counts as
    cached (say nothing rather than something wrong).
    """
    try:
        if dispatcher.overloads:
            return True
        cache = dispatcher._cache
        cache_file = getattr(cache, "_cache_file", None)
        if cache_file is None:  # caching off (a NullCache)
            return True
        codegen = dispatcher.targetctx.codegen()
        for key, data_name in cache_file._load_index().items():
            if cache._index_key(key[0], codegen) == key and os.path.exists(
                    os.path.join(cache_file._cache_path, data_name)):
                return True
        return False
    except Exception:  # noqa: BLE001 - numba internals are not an API; never break a run over a notice
        return True


def cache_folder(dispatcher) -> str:
    """Where numba keeps ``dispatcher``'s cache ('numba's cache' when unknown)."""
    try:
        return str(dispatcher._cache._cache_path)
    except Exception:  # noqa: BLE001
        return "numba's cache"


def notice_compile(what: str, *dispatchers) -> bool:
    """Before the first call of ``dispatchers`` (the kernel group ``what``): one stderr line if any must compile.

    At most one line per process, whatever the group; each group is checked
    once (later calls return at once). Returns True when it printed.
    """
    global _announced
    if what in _checked:
        return False
    with _lock:
        if what in _checked:
            return False
        _checked.add(what)
        if _announced:
            return False
        cold = [dispatcher for dispatcher in dispatchers if not is_cached(dispatcher)]
        if not cold:
            return False
        _announced = True
    try:
        write_line(MESSAGE.format(what=what, where=cache_folder(cold[0])))
    except (OSError, ValueError):  # a closed or broken stderr: the notice is not worth an error
        pass
    return True


CLEAR_LINE = "\r\x1b[K"
"""Back to the start of the line and clear it (on a terminal, before the notice)."""


def write_line(line: str, stream=None) -> None:
    """``line`` on a line of its own on ``stream`` (default stderr), whatever progress bar is drawn there."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        line = CLEAR_LINE + line
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency; a plain line then
        print(line, file=stream, flush=True)
        return
    tqdm.write(line, file=stream)
    stream.flush()
