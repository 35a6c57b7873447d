"""TorchScript export: a scripted module ``features -> (probabilities, equity)`` with the metadata inside.

The file loads without ``tapa_ai`` (``torch.jit.load`` in Python, or
``torch::jit::load`` in C++ through libtorch). The metadata is stored twice:
as the archive's extra file ``metadata.json`` (readable without running the
module: ``torch.jit.load(path, _extra_files={"metadata.json": ""})``) and as
the module attributes ``metadata_json`` (str) and ``outcome_names`` (list of str).

torch 2.13 marks TorchScript deprecated in favour of ``torch.export``; it still
works, and its warnings are silenced while exporting. ``torch.export`` files
(``.pt2``) cannot yet be loaded by a plain C++ program without compiling them.
"""

# No ``from __future__ import annotations``: torch.jit.script reads the class annotations as types.
import copy
import io
import json
import warnings
from typing import Any, Dict, List, Tuple

import torch
from torch import nn

from ..net.encoding import (MOVER_SCALARS, OPPONENT_POINTS, OPPONENT_SCALARS, PARALLEL_COLUMN, POINT_UNITS,
                            RUNNING_COLUMNS, SIDE_SCALARS)
from ..net.model import EvaluatorNet

__all__ = ["ExportedEvaluator", "torchscript_bytes", "EXTRA_FILE"]

EXTRA_FILE = "metadata.json"
"""Name of the archive's extra file holding the metadata JSON."""


class ExportedEvaluator(nn.Module):
    """``features (batch, N) -> probabilities (batch, K), equity (batch,)``: what every export format computes."""

    metadata_json: str
    outcome_names: List[str]
    has_race_network: bool
    # The input columns the race test reads, from the encoding's layout (set in __init__).
    point_columns: int
    units: int
    free1: int
    pinned: int
    mover_bar: int
    opponent_bar: int
    parallel_column: int

    def __init__(self, net: EvaluatorNet, metadata: Dict[str, Any]) -> None:
        super().__init__()
        self.layers = copy.deepcopy(net.layers).cpu().eval()
        # A race network: the rows race_rows marks go through race_layers (nn.Identity, never called, without one).
        self.has_race_network = net.race_layers is not None
        self.race_layers = (copy.deepcopy(net.race_layers).cpu().eval() if net.race_layers is not None
                            else nn.Identity())
        self.point_columns = OPPONENT_POINTS.stop  # both sides' point blocks
        self.units = len(POINT_UNITS)
        self.free1 = POINT_UNITS.index("free1")
        self.pinned = POINT_UNITS.index("pinned")
        self.mover_bar = MOVER_SCALARS.start + SIDE_SCALARS.index("bar")
        self.opponent_bar = OPPONENT_SCALARS.start + SIDE_SCALARS.index("bar")
        # rules.parallel (encoding version 4): its rows are races by the running games' test; -1 without it.
        self.parallel_column = PARALLEL_COLUMN if net.num_features >= RUNNING_COLUMNS.stop else -1
        self.register_buffer("outcome_points", torch.tensor(metadata["outcome_points"], dtype=torch.float32))
        self.metadata_json = json.dumps(metadata, sort_keys=True)
        self.outcome_names = list(metadata["outcome_names"])

    def race_rows(self, features: torch.Tensor) -> torch.Tensor:
        """(batch,) bool: no contact left (as ``tapa_ai.net.model.race_rows``: rearmost points add up to <= 25;
        in the running games, rows with ``rules.parallel`` set, both rearmost points <= 12)."""
        points = features[:, 0:self.point_columns].reshape(-1, 2, 24, self.units)
        occupied = (points[:, :, :, self.free1] > 0) | (points[:, :, :, self.pinned] > 0)
        numbers = torch.arange(1, 25, dtype=torch.int64, device=features.device)
        rearmost = torch.where(occupied, numbers, torch.zeros_like(numbers)).amax(dim=2)
        on_bar = torch.stack([features[:, self.mover_bar], features[:, self.opponent_bar]], dim=1) > 0
        rearmost = torch.where(on_bar, torch.full_like(rearmost, 25), rearmost)
        race = rearmost.sum(dim=1) <= 25
        if self.parallel_column >= 0:
            race = torch.where(features[:, self.parallel_column] > 0, rearmost.amax(dim=1) <= 12, race)
        return race

    def forward(self, features: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        if self.has_race_network:
            race = self.race_rows(features)
            logits = torch.where(race.unsqueeze(1), self.race_layers(features), self.layers(features))
        else:
            logits = self.layers(features)
        probabilities = torch.softmax(logits, dim=-1)
        return probabilities, probabilities @ self.outcome_points


def torchscript_bytes(net: EvaluatorNet, metadata: Dict[str, Any]) -> bytes:
    """The saved TorchScript archive of ``net`` (``torch.jit.save`` output)."""
    module = ExportedEvaluator(net, metadata).eval()
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=r".*torch\.jit.*deprecated")
        scripted = torch.jit.script(module)
        torch.jit.save(scripted, buffer, _extra_files={EXTRA_FILE: json.dumps(metadata, sort_keys=True)})
    return buffer.getvalue()
