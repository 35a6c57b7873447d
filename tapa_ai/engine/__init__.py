"""The engine protocol: JSON requests and responses, one per line (docs/protocol.md)."""

from .protocol import Engine, serve

__all__ = ["Engine", "serve"]
