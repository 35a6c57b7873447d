"""Export an :class:`~tapa_ai.net.model.EvaluatorNet` (or a checkpoint) to ONNX, TorchScript or ``.npz``.

The metadata of :func:`export_metadata` goes into every format; the numbers
come from the network's weights unchanged (float32). Files are written to a
temporary file beside the target and renamed over it, so a failed export
never leaves a half-written model behind.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import Any, Callable, Optional

import torch

from .. import __version__
from ..config import ConfigError, ModelConfig
from ..net.atomic_files import atomic_write
from ..net.checkpoint import CheckpointError, load_checkpoint, load_network
from ..net.encoding import ENCODING_NAME
from ..net.model import EvaluatorNet, network_arrays
from ..rules.outcomes import outcome_points
from ..net.shipped import UnknownModelError, resolve_model_path
from ..rules.options import RuleOptions, RulesError
from . import FORMATS, ExportError
from . import numpy_model

__all__ = ["export_metadata", "export_network", "export_checkpoint", "load_npz_network", "rotations_metadata"]

OUTPUT_MEANINGS = {
    "probabilities": "(batch, K) float32: probability of each outcome class (outcome_names, in order) for the side "
                     "to move; rows sum to 1",
    "equity": "(batch,) float32: expected points for the side to move before the cube, "
              "sum_k probabilities[:, k] * outcome_points[k]",
}
"""What the two outputs mean, as stored in the metadata (``outputs``)."""


def export_metadata(net: EvaluatorNet, *, games: int = 0, source: str = "", source_sha256: str = "",
                    source_tapa_ai_version: str = "") -> dict[str, Any]:
    """The metadata every exported model carries (JSON types; ``docs/export.md`` lists the keys).

    ``games`` is the number of self-play games the network was trained on;
    ``source`` the checkpoint's file name, ``source_sha256`` its SHA-256 and
    ``source_tapa_ai_version`` the tapa_ai version that wrote it ("" when not
    exported from a checkpoint).
    """
    if isinstance(games, bool) or not isinstance(games, int) or games < 0:
        raise ExportError(f"training games {games!r}: must be an integer >= 0")
    rules = net.rules
    return {
        "format": numpy_model.METADATA_FORMAT,
        # Version 2 only where it is needed (a race network), so one-network files stay readable by older readers.
        "format_version": numpy_model.METADATA_FORMAT_VERSION if net.race_layers is not None else 1,
        "tapa_ai_version": __version__,
        "variant": rules.name,
        "rule_options": rules.to_dict(),
        "encoding": ENCODING_NAME,
        "encoding_version": net.encoding_version,
        "num_features": net.num_features,
        "model": net.config.to_dict(),
        "input": "features",
        "outputs": dict(OUTPUT_MEANINGS),
        "outcome_names": list(net.outcome_names),
        "outcome_points": [float(value) for value in outcome_points(rules)],
        "training_games": games,
        "source_checkpoint": source,
        "source_sha256": source_sha256,
        "source_tapa_ai_version": source_tapa_ai_version,
        **_levels_metadata(rules.name, source_sha256),
        **rotations_metadata(rules.name),
    }


def rotations_metadata(variant: str) -> dict[str, Any]:
    """``{"rotations": {name: {...}}}``: the preset rotations (docs/rules.md 9, 10.4;
    :data:`tapa_ai.rules.rotations.ROTATIONS`) with a game this network plays (its own variant, or one the
    registry plays by it: Portes by backgammon's), so that an app can play their matches by the score; nothing
    for a network no rotation needs. Each: ``title``; ``games``, the variants in turn; ``rules``, each game's
    options changed from its variant's (no cube); ``rates``, each game's measured result rates with their
    ``source`` (:class:`~tapa_ai.cube.met.ResultRates`, what the table is built from); ``max_away``,
    ``openers`` and ``table``, the match equity table (:meth:`~tapa_ai.cube.rotation_met.RotationMatchEquityTable.
    to_dict`: ``table[g][o][a - 1][b - 1]``, 6 decimals, the chance of the side needing ``a`` against ``b``
    before game ``g`` opened by ``o``; docs/export.md)."""
    from ..cube.met import MAX_MATCH_LENGTH
    from ..cube.rotation_met import rotation_met
    from ..rules.options import REGISTRY, variant_rules
    from ..rules.rotations import ROTATIONS

    def played_by(game: str) -> str:
        entry = REGISTRY.get(game)
        return entry.model if entry is not None and entry.model else game

    found: dict[str, Any] = {}
    for name, rotation in ROTATIONS.items():
        if not any(played_by(game) == variant for game in rotation.variants):
            continue
        table = rotation_met(rotation).to_dict(MAX_MATCH_LENGTH)
        found[name] = {"title": rotation.title(), "games": list(rotation.variants),
                       "rules": [rules.changes_from(variant_rules(rules.name)) for rules in rotation.games],
                       "rates": table["rates"], "max_away": table["max_away"], "openers": table["openers"],
                       "table": table["table"]}
    return {"rotations": found} if found else {}


def _levels_metadata(variant: str, source_sha256: str) -> dict[str, Any]:
    """``{"levels": {name: {"plies", "noise"}, ...}}``: the variant's levels of play (docs/levels.md) when they were
    calibrated with this very network (the file's sha256), else nothing (another network's noise would not give
    the levels' strengths). The levels file is read by its one reader,
    :func:`tapa_ai.bots.levels.read_levels_file` (its schema, finite noises): an entry it finds unusable exports
    no levels (the variant's levels are unavailable, with its error where a level is asked for)."""
    from ..bots.levels import LEVELS_FILE, LevelError, read_levels_file

    if not source_sha256 or not LEVELS_FILE.is_file():
        return {}
    try:
        levels = read_levels_file(LEVELS_FILE, check_models=False)
    except LevelError:
        return {}
    entry = levels.variants.get(variant)
    if entry is None or entry.sha256 != source_sha256:
        return {}
    return {"levels": {name: {"plies": level.plies, "noise": level.noise} for name, level in entry.levels.items()}}


def _write(path: Path, write: Callable[[Any], None]) -> Path:
    if path.is_dir():
        raise ExportError(f"--out {path}: is a directory; give the path of the file to write")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, write)
        # The temporary file was created private (0600); a model is an ordinary file, readable as umask allows.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(path, 0o666 & ~umask)
    except OSError as error:
        raise ExportError(f"cannot write {path}: {error.strerror or error}") from None
    return path


def _export_npz(net: EvaluatorNet, path: Path, metadata: dict[str, Any]) -> Path:
    weights, biases = network_arrays(net)
    race = network_arrays(net, "race_layers") if net.race_layers is not None else None
    buffer = io.BytesIO()
    numpy_model.save_npz(buffer, weights, biases, metadata, race=race)
    return _write(path, lambda handle: handle.write(buffer.getvalue()))


def _export_onnx(net: EvaluatorNet, path: Path, metadata: dict[str, Any]) -> Path:
    from .onnx import onnx_model_bytes

    data = onnx_model_bytes(net, metadata)
    return _write(path, lambda handle: handle.write(data))


def _export_torchscript(net: EvaluatorNet, path: Path, metadata: dict[str, Any]) -> Path:
    from .torchscript import torchscript_bytes

    data = torchscript_bytes(net, metadata)
    return _write(path, lambda handle: handle.write(data))


_EXPORTERS = {"onnx": _export_onnx, "torchscript": _export_torchscript, "npz": _export_npz}


def _check_format(format: str) -> str:
    if format not in FORMATS:
        raise ExportError(f"format {format!r}: unknown; choose one of {', '.join(FORMATS)}")
    return format


def export_network(net: EvaluatorNet, format: str, out: str | Path, *, metadata: Optional[dict[str, Any]] = None,
                   games: int = 0) -> Path:
    """Write ``net`` in ``format`` (``onnx``, ``torchscript`` or ``npz``) to ``out``; returns the path.

    ``metadata`` defaults to :func:`export_metadata` ``(net, games=games)``.
    Raises :class:`ExportError` for an unknown format, a missing exporter
    package (naming the extra to install) or an unwritable path.
    """
    _check_format(format)
    if metadata is None:
        metadata = export_metadata(net, games=games)
    return _EXPORTERS[format](net, Path(out), metadata)


def export_checkpoint(checkpoint: str | Path, format: str, out: str | Path) -> Path:
    """Load a training checkpoint's network and export it (see :func:`export_network`); returns the path.

    ``checkpoint``: a file, or a shipped model's name (``tapa``, ``plakoto``, ``backgammon``, also written
    ``net:tapa``; :func:`tapa_ai.net.shipped.resolve_model_path`). A missing, corrupt or mismatched checkpoint
    raises :class:`ExportError` with the checkpoint loader's one-line reason.
    """
    _check_format(format)
    text = str(checkpoint)
    if isinstance(checkpoint, str) and text.startswith("net:") and not Path(text).is_file():
        text = text[len("net:"):]
    try:
        checkpoint = resolve_model_path(text)
    except UnknownModelError as error:
        raise ExportError(str(error)) from None
    try:
        net = load_network(checkpoint)
    except CheckpointError as error:
        raise ExportError(str(error)) from None
    digest = hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    version = load_checkpoint(checkpoint).tapa_ai_version  # loaded and checked already: cannot fail here
    metadata = export_metadata(net, games=int(net.games_trained), source=checkpoint.name, source_sha256=digest,
                               source_tapa_ai_version=str(version))
    return export_network(net, format, out, metadata=metadata)


def load_npz_network(path: str | Path) -> EvaluatorNet:
    """A torch :class:`EvaluatorNet` (eval mode) holding the weights of an exported ``.npz`` model.

    ``net.export_metadata`` is the file's metadata and ``net.games_trained``
    its training games. Raises :class:`ExportError` when the file is not a
    model of this program's encoding.
    """
    try:
        model = numpy_model.load(str(path))
    except numpy_model.ModelFileError as error:
        raise ExportError(str(error)) from None
    metadata = model.metadata
    try:
        net = EvaluatorNet(ModelConfig.from_dict(metadata["model"]), RuleOptions.from_dict(metadata["rule_options"]))
        stored = list(zip(model.weights, model.biases)) + list(zip(model.race_weights or [], model.race_biases or []))
        linears = net.linear_layers()
        if len(linears) != len(stored):
            raise ValueError(f"{len(stored)} layers in the file, {len(linears)} in its model config")
        with torch.no_grad():
            for module, (weight, bias) in zip(linears, stored):
                module.weight.copy_(torch.from_numpy(weight))
                module.bias.copy_(torch.from_numpy(bias))
    except (KeyError, TypeError, ValueError, RuntimeError, RulesError, ConfigError) as error:
        raise ExportError(f"{path}: cannot rebuild the network: {error}") from None
    if list(net.outcome_names) != list(model.outcome_names):
        raise ExportError(f"{path}: outcome names {list(model.outcome_names)} differ from the rule set's "
                          f"{list(net.outcome_names)}")
    net.eval()
    net.export_metadata = metadata
    net.games_trained = metadata.get("training_games", 0)
    return net
