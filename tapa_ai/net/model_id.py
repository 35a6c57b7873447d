"""Naming a model file the way the docs do: its path, its generation and the first 12 hex digits of its sha256.

Every table that quotes results of a model names the file it was measured
with in one form (docs/strength.md, *Naming the model a table was measured
with*)::

    checkpoints/tapa.pt (generation 3, sha256 cfcfbfdd9162)

The generation of a shipped file ``<dir>/<variant>.pt`` is one more than the
number of earlier generations kept as ``<dir>/generations/<variant>-g<N>.pt``
(as ``tapa_ai.arena.strength.promote`` numbers them); a kept file
``.../<variant>-g<N>.pt`` is generation ``N``. Other files (a run's
``latest.pt``) have no generation and are named by their hash alone.

``python -m tapa_ai.net.model_id FILE...`` prints the name of each file, one a
line (the report scripts print it beside their output).
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Optional

SHORT_HASH = 12
"""Hex digits of the sha256 quoted in the docs."""

_KEPT = re.compile(r"^(?P<variant>[a-z0-9_]+)-g(?P<generation>[0-9]+)\.pt$")


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file, 64 hex digits."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def short_sha256(path: str | Path) -> str:
    """The first :data:`SHORT_HASH` hex digits of the file's sha256."""
    return file_sha256(path)[:SHORT_HASH]


def model_generation(path: str | Path) -> Optional[int]:
    """The generation of a shipped model file or of a kept earlier generation; None for any other file."""
    path = Path(path)
    kept = _KEPT.match(path.name)
    if kept and path.parent.name == "generations":
        return int(kept.group("generation"))
    generations = path.parent / "generations"
    if path.suffix == ".pt" and generations.is_dir():
        return 1 + len(list(generations.glob(f"{path.stem}-g*.pt")))
    return None


def model_label(path: str | Path, name: Optional[str] = None, markdown: bool = False) -> str:
    """``NAME (generation N, sha256 HEX12)`` (or ``NAME (sha256 HEX12)`` without a generation).

    ``name``: how to write the path (default: as given); ``markdown``: the name in backticks.
    """
    generation = model_generation(path)
    prefix = f"generation {generation}, " if generation is not None else ""
    name = str(path) if name is None else name
    return f"{f'`{name}`' if markdown else name} ({prefix}sha256 {short_sha256(path)})"


def main(argv: Optional[list[str]] = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python -m tapa_ai.net.model_id FILE...", file=sys.stderr)
        return 2
    for path in paths:
        try:
            print(model_label(path))
        except OSError as error:
            print(f"model_id: {path}: {error.strerror or error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
