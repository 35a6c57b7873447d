"""Fast, exact whole-turn move generation over batches of positions (numba kernels).

- :class:`PositionBatch`: positions as a struct of int8 arrays, seen from the side to move.
- :func:`generate`: all legal afterstates of a batch, deduplicated, as one flat batch plus offsets.
- :func:`legal_moves_fast`: the same, for one ``Position``, shaped like the reference's ``legal_moves``.

``docs/movegen.md`` describes the design and its measurements.
"""

from .batch import PositionBatch, concatenate
from .generate import Afterstates, generate, legal_moves_fast

__all__ = ["PositionBatch", "concatenate", "Afterstates", "generate", "legal_moves_fast"]
