"""Bots: policies that choose one afterstate per position (vectorized over batches)."""

from .basic import choose_pipcount, pip_counts

__all__ = ["choose_pipcount", "pip_counts"]
