"""The engine protocol: JSON requests and responses, one per line, or over HTTP (docs/protocol.md).

- :mod:`.protocol`: the commands and the JSON-lines loop (``tapa-ai engine``);
- :mod:`.analysis`: the model behind ``encode``, ``evaluate``, ``best_move`` and ``hint`` (``--bot``);
- :mod:`.http`: the same commands as JSON over HTTP (``tapa-ai serve``).
"""

from .protocol import Engine, serve

__all__ = ["Engine", "serve"]
