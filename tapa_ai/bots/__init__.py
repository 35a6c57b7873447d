"""Bots: policies that choose one afterstate per position (vectorized over batches)."""

from .basic import choose_pipcount, choose_random, pip_counts, segment_argmax

__all__ = ["choose_pipcount", "choose_random", "pip_counts", "segment_argmax"]
