"""A replay buffer of labelled positions for expert iteration (``learning.targets = "search"``).

Self-play adds positions labelled with the net's own n-ply search values
(:func:`tapa_ai.training.distill.search_targets`); learning samples
minibatches from the whole buffer, so each label is fitted several times and
recent ones are mixed with older ones. A ring: once full, the oldest rows are
overwritten. Its contents travel in the checkpoint, so a resumed run learns
from the same buffer as an uninterrupted one.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["ReplayBuffer"]


class ReplayBuffer:
    """``capacity`` rows of (52,) int8 compact positions and (K,) float32 target distributions."""

    def __init__(self, capacity: int, width: int, classes: int) -> None:
        if capacity < 1:
            raise ValueError(f"replay buffer capacity {capacity}: must be at least 1")
        self.states = np.zeros((capacity, width), dtype=np.int8)
        self.targets = np.zeros((capacity, classes), dtype=np.float32)
        self.size = 0
        self.next = 0

    @property
    def capacity(self) -> int:
        return self.states.shape[0]

    def __len__(self) -> int:
        return self.size

    def add(self, states: np.ndarray, targets: np.ndarray) -> None:
        """Append rows (the newest ``capacity`` of them if more are given), overwriting the oldest."""
        if len(states) != len(targets):
            raise ValueError(f"{len(states)} positions but {len(targets)} targets")
        states, targets = states[-self.capacity:], targets[-self.capacity:]
        rows = (self.next + np.arange(len(states))) % self.capacity
        self.states[rows] = states
        self.targets[rows] = targets
        self.next = int((self.next + len(states)) % self.capacity)
        self.size = int(min(self.capacity, self.size + len(states)))

    def sample(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``count`` rows drawn uniformly with replacement: (states, targets)."""
        if self.size == 0:
            raise ValueError("the replay buffer is empty")
        rows = rng.integers(0, self.size, count)
        return self.states[rows], self.targets[rows]

    def state_dict(self) -> dict:
        return {"states": torch.from_numpy(self.states[:self.size].copy()),
                "targets": torch.from_numpy(self.targets[:self.size].copy()),
                "capacity": self.capacity, "next": self.next}

    def load_state_dict(self, state: dict) -> None:
        """Take back :meth:`state_dict`; ValueError unless it is a buffer of this one's shape, its rows and next
        position within its capacity (a checkpoint's is checked so when the file is read: ``checkpoint_read``)."""
        states, targets = state["states"].numpy(), state["targets"].numpy()
        if int(state["capacity"]) != self.capacity or targets.shape[1:] != self.targets.shape[1:]:
            raise ValueError(f"saved replay buffer holds {int(state['capacity'])} rows of {targets.shape[1:]} "
                             f"targets; this run's holds {self.capacity} of {self.targets.shape[1:]} "
                             "(learning.replay_size cannot change on resume)")
        position = int(state["next"])
        if len(states) > self.capacity or len(targets) != len(states) or not 0 <= position < self.capacity:
            raise ValueError(f"saved replay buffer of capacity {self.capacity} holds {len(states)} positions, "
                             f"{len(targets)} targets and its next row is {position}: damaged")
        self.size = len(states)
        self.states[:self.size] = states
        self.targets[:self.size] = targets
        self.next = position
