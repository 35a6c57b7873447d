"""Reading a checkpoint file safely: archive checks first, then ``torch.load(weights_only=True)``.

Before torch reads anything: the file must be a zip archive whose members are
all stored uncompressed (as ``torch.save`` writes them; a compressed member
could unpack into far more memory than the file's size) and pass their CRCs
(torch does not check them). ``weights_only=True`` then refuses any object but
tensors and plain data, so no code in the file can run. torch's error text is
cut to what it says about the file: its advice about ``torch.load`` (such as
re-running it with ``weights_only=False``, which would run the file's code) is
never repeated to a user holding an untrusted file.
"""

from __future__ import annotations

import pickle
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

import torch


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, unsafe, or does not fit what the caller expects."""


def read_payload(path: Path, map_location: str | torch.device = "cpu") -> Any:
    """What ``torch.load(path, weights_only=True)`` reads, after the archive checks; :class:`CheckpointError` if not."""
    if not path.exists():
        raise CheckpointError(f"no checkpoint at {path}: the file does not exist")
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}: not a regular file")
    # save_checkpoint always writes torch's zip format; refusing anything else up front also
    # keeps torch.load off its legacy raw-pickle path.
    if not zipfile.is_zipfile(path):
        raise CheckpointError(
            f"{path} is not a tapa-ai checkpoint: not a torch zip archive (corrupt, truncated, or another kind of file)"
        )
    # torch.load does not verify the archive's CRCs, so damaged tensor bytes would load silently.
    try:
        with zipfile.ZipFile(path) as archive:
            # torch.save stores every member uncompressed; a compressed one could unpack into far more
            # memory than the file's size (a zip bomb), so refuse it before anything is unpacked.
            packed = [member.filename for member in archive.infolist() if member.compress_type != zipfile.ZIP_STORED]
            damaged = None if packed else archive.testzip()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError, zlib.error) as error:
        raise CheckpointError(f"{path} is not a tapa-ai checkpoint or is damaged (corrupt or truncated): {error}") \
            from None
    if packed:
        raise CheckpointError(f"{path} is not a tapa-ai checkpoint: archive member {packed[0]} is compressed "
                              "(torch.save writes none), so it was not unpacked")
    if damaged is not None:
        raise CheckpointError(f"{path} is damaged: archive member {damaged} fails its checksum")
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        # weights_only refuses every global that is not a tensor or plain data; such a
        # file was not written by save_checkpoint and may try to run code.
        raise CheckpointError(
            f"{path} is not a safe tapa-ai checkpoint: it holds objects other than tensors and plain "
            f"data ({_unpickler_reason(error)}), so it was not loaded and none of its code ran; "
            "load only checkpoints written by tapa-ai"
        ) from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile, KeyError, IndexError,
            TypeError, AttributeError, UnicodeDecodeError, MemoryError) as error:
        raise CheckpointError(f"{path} is not a tapa-ai checkpoint or is damaged (corrupt or truncated): "
                              f"{_torch_detail(error)}") from None


_UNSAFE_ADVICE = re.compile(r"weights.only|trusted source|arbitrary code|will likely succeed|add_safe_globals"
                            r"|safe_globals|torch\.load|documentation", re.IGNORECASE)
"""Sentences of torch's load errors that are advice about torch.load (such as re-running it with
``weights_only=False``, which would run the file's code): never repeated to a user holding the file."""


def _unpickler_reason(error: Exception) -> str:
    """What torch's long weights_only error says the file asked for ("it refers to posix.system"), no advice."""
    text = str(error)
    match = re.search(r"GLOBAL\s+([\w.]+)", text)
    if match:
        return f"it refers to {match.group(1)}"
    return _torch_detail(error, default="it is not plain data")


def _torch_detail(error: Exception, default: str | None = None) -> str:
    """The first sentence of a torch load error that is a fact about the file, not advice about torch.load."""
    for line in str(error).splitlines():
        for sentence in re.split(r"(?<=\.)\s+", line.strip()):
            if sentence and not _UNSAFE_ADVICE.search(sentence):
                return sentence
    return default or type(error).__name__
