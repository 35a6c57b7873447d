"""Levels of play: named settings of a network bot's search depth and noise, per variant (docs/levels.md).

A level is a depth (plies) and a noise (points of equity added to each
move's value before the best is taken, :mod:`tapa_ai.bots.noise`). The
levels of each variant, calibrated on its shipped benchmark set by
``scripts/calibrate_levels.py`` (:mod:`tapa_ai.arena.levels`), are package
data in :data:`LEVELS_FILE`; a bot spec picks one with ``,level=NAME``
(``net:tapa,level=intermediate``), the engine protocol's ``best_move`` and
``hint`` with ``"level"``, and an exported model carries its variant's
levels (docs/frontends.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import TapaError
from .noise import MAX_NOISE

LEVEL_NAMES = ("beginner", "casual", "intermediate", "advanced", "expert", "world-class")
"""The levels, weakest first."""

LEVELS_FILE = Path(__file__).resolve().parent.parent / "models" / "levels.json"
"""The calibrated levels of every variant (package data), written by ``scripts/calibrate_levels.py``."""


class LevelError(TapaError, ValueError):
    """An unknown level, a variant without levels, or a malformed levels file."""


@dataclass(frozen=True)
class Level:
    """One level of one variant."""

    name: str
    plies: int
    noise: float
    """Points of noise (0: none)."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "plies": self.plies, "noise": self.noise}


def read_levels(path: str | Path = LEVELS_FILE) -> dict[str, dict[str, Level]]:
    """variant -> level name -> :class:`Level`, from ``path``; LevelError naming the file when it is malformed."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise LevelError(f"{path}: missing (python scripts/calibrate_levels.py writes it)") from None
    except (OSError, ValueError) as error:
        raise LevelError(f"{path}: cannot read the levels: {error}") from None
    variants = data.get("variants") if isinstance(data, dict) else None
    if not isinstance(variants, dict):
        raise LevelError(f"{path}: malformed: want an object with 'variants'")
    levels: dict[str, dict[str, Level]] = {}
    for variant, entry in variants.items():
        table = entry.get("levels") if isinstance(entry, dict) else None
        if not isinstance(table, dict) or list(table) != list(LEVEL_NAMES):
            raise LevelError(f"{path}: variants.{variant}.levels: want the levels {', '.join(LEVEL_NAMES)} in order")
        levels[variant] = {}
        for name, setting in table.items():
            where = f"{path}: variants.{variant}.levels.{name}"
            plies = setting.get("plies") if isinstance(setting, dict) else None
            noise = setting.get("noise") if isinstance(setting, dict) else None
            if isinstance(plies, bool) or not isinstance(plies, int) or not 0 <= plies <= 3:
                raise LevelError(f"{where}.plies: want 0 to 3, got {plies!r}")
            if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise <= MAX_NOISE:
                raise LevelError(f"{where}.noise: want 0 to {MAX_NOISE} points, got {noise!r}")
            levels[variant][name] = Level(name, plies, float(noise))
    return levels


@lru_cache(maxsize=1)
def _shipped_levels() -> dict[str, dict[str, Level]]:
    return read_levels()


def variant_levels(variant: str) -> dict[str, Level]:
    """The levels of ``variant`` (the shipped file's); LevelError, one line, when it has none."""
    levels = _shipped_levels()
    if variant not in levels:
        raise LevelError(f"the variant {variant!r} has no levels of play (levels exist for "
                         f"{', '.join(sorted(levels)) or 'no variant yet'}; docs/levels.md)")
    return levels[variant]


def find_level(variant: str, name: str) -> Level:
    """The level ``name`` of ``variant``; LevelError naming the known levels for an unknown name."""
    if name not in LEVEL_NAMES:
        import difflib

        close = difflib.get_close_matches(name, LEVEL_NAMES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise LevelError(f"unknown level {name!r}{hint}; the levels are {', '.join(LEVEL_NAMES)}")
    return variant_levels(variant)[name]
