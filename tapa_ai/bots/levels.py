"""Levels of play: named settings of a network bot's search depth and noise, per variant (docs/levels.md).

A level is a depth (plies) and a noise (points of equity added to each
move's value before the best is taken, :mod:`tapa_ai.bots.noise`). The
levels of each variant, calibrated on its shipped benchmark set by
``scripts/calibrate_levels.py`` (:mod:`tapa_ai.arena.levels`), are package
data in :data:`LEVELS_FILE` (its shape declared in ``tapa_ai/schemas/levels.json``, read by
:func:`read_levels_file` alone); a bot spec picks one with ``,level=NAME``
(``net:tapa,level=intermediate``), the engine protocol's ``best_move`` and
``hint`` with ``"level"``, and an exported model carries its variant's
levels (docs/frontends.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import TapaError
from ..quoting import nearest, quoted

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

    def apply(self, settings):
        """A network bot's :class:`~tapa_ai.bots.settings.NetBotSettings` playing at this level: ``settings`` with
        its depth (``search.plies``) and noise (``noise.noise``); the rest (the noise seed, the cube ...) kept."""
        return settings.with_values("search", plies=self.plies).with_values("noise", noise=self.noise)


@dataclass(frozen=True)
class VariantLevels:
    """One variant's entry of the levels file, checked: its levels and the sha256 of the network they were
    calibrated with."""

    variant: str
    sha256: str
    levels: dict[str, Level]


@dataclass(frozen=True)
class LevelsFile:
    """The levels file, read and checked (:func:`read_levels_file`): each variant's entry alone."""

    path: Path
    variants: dict[str, VariantLevels]
    """The usable entries."""
    errors: dict[str, str]
    """variant -> why its levels are unavailable (one line naming the file and the field)."""
    claimed_sha256: dict[str, str]
    """variant -> the sha256 its entry names (where it names one), usable or not."""

    def variant(self, variant: str) -> VariantLevels:
        """The usable entry of ``variant``; LevelError saying why not (its error, or that it has none)."""
        if variant in self.errors:
            raise LevelError(self.errors[variant])
        if variant not in self.variants:
            raise LevelError(f"the variant {quoted(variant, 40)} has no levels of play (levels exist for "
                             f"{', '.join(sorted(self.variants)) or 'no variant yet'}; docs/levels.md)")
        return self.variants[variant]


def read_levels_file(path: str | Path = LEVELS_FILE, check_models: bool = True) -> LevelsFile:
    """The levels file at ``path``, checked against ``tapa_ai/schemas/levels.json`` (docs/schemas.md): the one
    reader of :data:`LEVELS_FILE` (play, the engine protocol and the exporter's metadata all read it here).

    A missing or unreadable file, or one without ``variants``, is a LevelError. Each variant's entry is checked
    alone: a bad entry (a missing ``plies``, a NaN noise, a malformed sha256), or with ``check_models`` a
    sha256 other than that of the variant's shipped model file, makes that variant's levels unavailable with its
    error (:attr:`LevelsFile.errors`); the other variants stay usable.
    """
    from ..schema import SchemaError, check, loads

    path = Path(path)
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LevelError(f"{path}: missing (python scripts/calibrate_levels.py writes it)") from None
    except (OSError, ValueError) as error:
        raise LevelError(f"{path}: cannot read the levels: {error}") from None
    try:
        check(data, "levels", where="", error=SchemaError)
    except SchemaError as error:
        raise LevelError(f"{path}: {error} (python scripts/calibrate_levels.py writes it)") from None
    variants: dict[str, VariantLevels] = {}
    errors: dict[str, str] = {}
    claimed: dict[str, str] = {}
    for variant, entry in data["variants"].items():
        if isinstance(entry.get("sha256"), str):
            claimed[variant] = entry["sha256"]
        try:
            check(entry, "levels", "variant", where=f"variants.{variant}", error=SchemaError)
        except SchemaError as error:
            errors[variant] = f"{path}: {error}; the {variant} levels are unavailable (docs/levels.md)"
            continue
        if check_models:
            mismatch = _model_mismatch(variant, entry["sha256"])
            if mismatch:
                errors[variant] = f"{path}: variants.{variant}.sha256: {mismatch}"
                continue
        table = entry["levels"]
        variants[variant] = VariantLevels(variant, entry["sha256"], {
            name: Level(name, table[name]["plies"], float(table[name]["noise"])) for name in LEVEL_NAMES})
    return LevelsFile(path, variants, errors, claimed)


def _model_mismatch(variant: str, expected: str) -> str:
    """Why the levels of ``variant`` do not fit its shipped model (the file's sha256 differs), else empty."""
    from ..net.model_id import SHORT_HASH, file_sha256
    from ..net.shipped import UnknownModelError, shipped_model

    try:
        model = shipped_model(variant)
    except UnknownModelError:
        return (f"no shipped {variant} model to check the levels against (tapa_ai/models/{variant}.pt); "
                f"the {variant} levels are unavailable")
    actual = file_sha256(model)
    if actual == expected:
        return ""
    return (f"the {variant} levels were calibrated for the network with sha256 {expected[:SHORT_HASH]}, but the "
            f"shipped {variant} model has {actual[:SHORT_HASH]}: the {variant} levels are unavailable until they "
            f"are recalibrated (python scripts/calibrate_levels.py --variants {variant})")


def read_levels(path: str | Path = LEVELS_FILE) -> dict[str, dict[str, Level]]:
    """variant -> level name -> :class:`Level`, from ``path`` (:func:`read_levels_file`); LevelError with the
    first bad variant's error when any entry is unusable (the calibration's and the tests' strict view)."""
    levels = read_levels_file(path)
    if levels.errors:
        raise LevelError(next(iter(levels.errors.values())))
    return {variant: entry.levels for variant, entry in levels.variants.items()}


@lru_cache(maxsize=1)
def shipped_levels_file() -> LevelsFile:
    """The shipped :data:`LEVELS_FILE`, read once."""
    return read_levels_file(LEVELS_FILE)


def _shipped_levels() -> dict[str, dict[str, Level]]:
    return {variant: entry.levels for variant, entry in shipped_levels_file().variants.items()}


def variant_levels(variant: str) -> dict[str, Level]:
    """The levels of ``variant`` (the shipped file's); LevelError, one line, when it has none or its entry is
    unusable (that entry's error: the other variants keep theirs)."""
    errors = shipped_levels_file().errors
    if variant in errors:
        raise LevelError(errors[variant])
    levels = _shipped_levels()
    if variant not in levels:
        raise LevelError(f"the variant {quoted(variant, 40)} has no levels of play (levels exist for "
                         f"{', '.join(sorted(levels)) or 'no variant yet'}; docs/levels.md)")
    return levels[variant]


def find_level(variant: str, name: str) -> Level:
    """The level ``name`` of ``variant``; LevelError naming the known levels for an unknown name."""
    if name not in LEVEL_NAMES:
        close = nearest(name, LEVEL_NAMES)
        hint = f" (did you mean {close!r}?)" if close else ""
        raise LevelError(f"unknown level {quoted(name, 40)}{hint}; the levels are {', '.join(LEVEL_NAMES)}")
    return variant_levels(variant)[name]
