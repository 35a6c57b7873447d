"""The snapshot format's version, :class:`SnapshotError`, and the checks that load snapshot dicts.

The loaders (:func:`expect_object`, :func:`check_format`, :func:`load_dice`,
:func:`load_bool`) serve the ``from_dict`` methods of the flow classes; each
raises :class:`SnapshotError` naming where in the snapshot the problem is.
"""

from __future__ import annotations

from typing import Any

from ..rules.options import RulesError
from ..rules.reference import check_dice
from .errors import FlowError

__all__ = ["SNAPSHOT_VERSION", "SnapshotError", "expect_object", "check_format", "load_dice", "load_bool"]

SNAPSHOT_VERSION = 1
"""Bumped when the snapshot format changes."""


class SnapshotError(FlowError):
    """A saved game or match that cannot be loaded; the message says where."""


def expect_object(data: Any, where: str, required: set[str], optional: set[str]) -> None:
    if not isinstance(data, dict):
        raise SnapshotError(f"{where}: must be a JSON object, got {type(data).__name__}")
    missing = sorted(required - set(data))
    if missing:
        raise SnapshotError(f"{where}: missing key(s) {missing}")
    unknown = sorted(set(data) - required - optional)
    if unknown:
        raise SnapshotError(f"{where}: unknown key(s) {unknown}; known: {sorted(required | optional)}")


def check_format(data: dict, where: str, expected: str) -> None:
    if data["format"] != expected:
        raise SnapshotError(f"{where}.format: expected {expected!r}, got {data['format']!r}")
    if data["version"] != SNAPSHOT_VERSION:
        raise SnapshotError(f"{where}.version: this code reads version {SNAPSHOT_VERSION}, got {data['version']!r}")


def load_dice(data: Any, where: str) -> tuple[int, int]:
    try:
        return check_dice(data)
    except RulesError as error:
        raise SnapshotError(f"{where}: {error}") from None


def load_bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise SnapshotError(f"{where}: must be true or false, got {value!r}")
    return value
