"""The flow's base error, :class:`FlowError`, owned here so every flow module can raise it."""

from __future__ import annotations

from ..rules.options import RulesError

__all__ = ["FlowError"]


class FlowError(RulesError):
    """An action at the wrong time in the game or match flow, with the reason."""
