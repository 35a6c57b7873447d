"""Atomic file writes: a private temporary file beside the target, fsynced, then renamed over it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..errors import TapaError

TEMP_PREFIX = ".tapa-ai-checkpoint-"
TEMP_SUFFIX = ".tmp"
"""A temporary file is ``TEMP_PREFIX + <target name> + "." + <random> + TEMP_SUFFIX`` in the target's directory."""


class WriteError(TapaError, OSError):
    """A file that could not be written (disk full, no permission, ...); whatever was at its path is untouched.

    ``str()`` is one line naming the path: ``cannot write runs/x/latest.pt: No space left on device``.
    """

    def __init__(self, path: Path, error: OSError) -> None:
        reason = error.strerror or str(error) or type(error).__name__
        super().__init__(error.errno, reason, str(path))
        self.path = Path(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"cannot write {self.path}: {self.reason}"


def atomic_write(path: Path, write: Any) -> None:
    """Call ``write(handle)`` on a temporary file in ``path``'s directory, then rename it to ``path``.

    Raises :class:`WriteError` (an ``OSError``) when the file system refuses (``ENOSPC``...); on any
    failure or interruption the temporary file is removed and ``path`` keeps its old contents.
    """
    # Same directory, so os.replace is a rename within one file system (atomic on POSIX and Windows).
    try:
        descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX + path.name + ".",
                                                 suffix=TEMP_SUFFIX)
    except OSError as error:
        raise WriteError(path, error) from error
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException as error:
        try:
            os.unlink(temp_name)
        except OSError:  # gone already, or the file system refuses even this: the error to report is the first
            pass
        if isinstance(error, OSError) and not isinstance(error, WriteError):
            raise WriteError(path, error) from error
        raise
    fsync_directory(path.parent)


def atomic_copy(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` through :func:`atomic_write`."""
    def write(handle: Any) -> None:
        with open(source, "rb") as original:
            shutil.copyfileobj(original, handle, length=1 << 20)

    atomic_write(target, write)


def fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); not possible on Windows, where it is skipped."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
