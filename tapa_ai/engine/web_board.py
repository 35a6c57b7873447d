"""The web board's files for ``tapa-ai serve``: the static page and the exported models (docs/web.md).

=================================  ===========================================================================
``GET /``                          ``tapa_ai/web/index.html``, the board
``GET /web/<file>``                the page's scripts and style sheet: files of ``tapa_ai/web/`` only, by name
``GET /model/<variant>.json``      the network of that variant as JSON (:func:`model_json`): weights in base64
``GET /model/<variant>.npz``       the same network as the exporter writes it (``tapa-ai export --format npz``)
``GET /model/<name>-met.json``     the match equity table of a preset rotation (``tavli-met.json``,
                                   ``tabla-met.json``; :func:`rotation_met_json`): the page's bot plays a
                                   rotation's match (Tavli, Tabla) by the score with it
``GET /v1/rotation-met``           ``?rotation=tabla`` or ``?rotation=backgammon,gulbara,tapa``: the same for
                                   any rotation (:func:`rotation_met_json`)
``GET /v1/variants``               the family and the preset rotations (:func:`variants_json`)
=================================  ===========================================================================

Every model is made by the project's exporter (:func:`tapa_ai.export.export_checkpoint`) from
``checkpoints/<variant>.pt`` in the current directory when there is one, else the shipped model installed with
the package (``tapa_ai/models/<variant>.pt``, :mod:`tapa_ai.net.shipped`; a checkout's ``checkpoints/`` is a link
to it), or, for the engine's own variant, from the engine's ``--bot`` checkpoint, so that the page and the
server's n-ply search read the same network. Each is built once, on first request, and kept in memory.

The page needs nothing else from the server but the engine's ``/v1/...`` commands: it works offline.
"""

from __future__ import annotations

import base64
import json
import re
import tempfile
import threading
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from ..errors import TapaError
from ..quoting import quoted
from ..rules.options import shipped_models

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
"""The page's files (package data)."""

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
"""The kinds of file ``GET /web/<file>`` serves; anything else is not found."""

WEB_MODEL_FORMAT = "tapa-ai-web-model"
"""``format`` of the JSON model (:func:`model_json`)."""
WEB_MODEL_FORMAT_VERSION = 1

MODEL_VARIANTS = shipped_models()
"""The variants whose models ``GET /model/<variant>.json`` serves (one checkpoint each: the registry's shipped
models, :data:`tapa_ai.rules.options.REGISTRY`)."""

ROTATION_MET_FORMAT = "tapa-ai-rotation-met"
"""``format`` of a rotation's match equity table as the page reads it (:func:`rotation_met_json`)."""
ROTATION_MET_QUERY_PATH = "/v1/rotation-met"
"""Where any rotation's table is served: ``?rotation=`` a preset's name or the games, comma-separated."""
_MET_PATH = re.compile(r"^/model/(?P<rotation>[a-z]+)-met\.json$")

_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_MODEL_PATH = re.compile(r"^/model/(?P<variant>[a-z]+)\.(?P<kind>json|npz)$")


class WebFileError(TapaError, LookupError):
    """A page file or model that cannot be served; ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def static_file(name: str) -> tuple[bytes, str]:
    """(bytes, content type) of ``tapa_ai/web/<name>``; :class:`WebFileError` (404) for anything else."""
    suffix = Path(name).suffix
    path = WEB_DIR / name
    if not _FILE_NAME.match(name) or suffix not in CONTENT_TYPES or not path.is_file():
        raise WebFileError(404, f"no page file {quoted(name)} (the board's files are "
                                f"{', '.join(sorted(web_files())) or 'missing: reinstall tapa-ai'})")
    return path.read_bytes(), CONTENT_TYPES[suffix]


def web_files() -> list[str]:
    """The names of the files the page is made of (``tapa_ai/web/``)."""
    if not WEB_DIR.is_dir():
        return []
    return sorted(p.name for p in WEB_DIR.iterdir() if p.is_file() and p.suffix in CONTENT_TYPES)


def model_path_of(path: str) -> Optional[tuple[str, str]]:
    """(variant, ``json`` or ``npz``) of a ``/model/<variant>.<kind>`` path, else None."""
    match = _MODEL_PATH.match(path)
    return (match.group("variant"), match.group("kind")) if match else None


def _base64_float32(array: np.ndarray) -> str:
    """Little-endian float32 bytes of ``array`` (row-major), as base64 text."""
    return base64.b64encode(np.ascontiguousarray(array, dtype="<f4").tobytes()).decode("ascii")


def model_json(npz_bytes: bytes) -> dict[str, Any]:
    """The JSON form of an exported ``.npz`` model, as the page reads it.

    ``{"format": "tapa-ai-web-model", "format_version": 1, "metadata": {...the npz metadata...},
    "layers": [{"in": 309, "out": 128, "weight": "<base64>", "bias": "<base64>"}, ...]}`` (and ``"race_layers"``,
    the same form, for a race network's: the page evaluates a position with no contact left by them): each
    ``weight`` is the (out, in) float32 matrix of ``x @ W.T + b``, row-major, and each ``bias`` the (out,)
    vector, as little-endian float32 bytes in base64: exactly the exported numbers, in less than half the text
    of their shortest decimal forms. The metadata is the exporter's, so it carries the variant's levels of play
    (``"levels"``, docs/levels.md) where they were calibrated with this network: the page's Level choice.
    """
    from ..export import numpy_model

    with tempfile.NamedTemporaryFile(suffix=".npz") as handle:
        handle.write(npz_bytes)
        handle.flush()
        model = numpy_model.load(handle.name)
    def layers(weights, biases) -> list[dict[str, Any]]:
        return [{"in": int(weight.shape[1]), "out": int(weight.shape[0]), "weight": _base64_float32(weight),
                 "bias": _base64_float32(bias)} for weight, bias in zip(weights, biases)]

    web = {
        "format": WEB_MODEL_FORMAT,
        "format_version": WEB_MODEL_FORMAT_VERSION,
        "metadata": model.metadata,
        "layers": layers(model.weights, model.biases),
    }
    if model.race_weights is not None:  # the layers of the positions with no contact left (docs/web.md)
        web["race_layers"] = layers(model.race_weights, model.race_biases)
    return web


def met_path_of(path: str) -> Optional[str]:
    """The preset rotation's name of a ``/model/<name>-met.json`` path, else None."""
    match = _MET_PATH.match(path)
    return match.group("rotation") if match else None


def rotation_met_json(rotation: Any = "tavli") -> dict[str, Any]:
    """A rotation's match equity table as the page reads it (:func:`tapa_ai.cube.rotation_met.rotation_met`);
    ``rotation``: a :class:`~tapa_ai.rules.rotations.Rotation` or a preset's name.

    ``{"format": "tapa-ai-rotation-met", "format_version": 1, "name": "tabla", "title": "Tabla (Backgammon, Gul
    Bara, Tapa)", "rotation": "tabla" (:meth:`~tapa_ai.rules.rotations.Rotation.to_data`), "games": ["backgammon",
    "gulbara", "tapa"], "rules": [{"cube": false, "crawford": false}, {}, {"cube": false, "crawford": false}] (each
    game's options changed from its variant's preset, as :func:`rotations_json` gives them: what ``start`` takes as
    ``"rules"`` to begin that game; the page plays any rotation by them), "rates": [{variant, single, gammon, top,
    top_points, draw, first_mover, source}, ...],
    "max_away": 25, "openers": [...], "table": T}``: ``T[o][g][a][b]`` is the chance that the side needing ``a``
    points wins the match against a side needing ``b``, before game ``g`` of the rotation (an index of ``games``)
    opened by ``o`` (0 the side, 1 its opponent, 2 an opening roll); ``a`` and ``b`` run from 0 (``a`` 0: already
    won, 1; ``b`` 0: already lost, 0) to ``max_away``, every number as Python's float (the JSON text reads back as
    exactly the same double). What each outcome class of game ``g`` at ``(a, b)`` is worth to the mover, as
    :meth:`~tapa_ai.cube.rotation_met.RotationMatchEquityTable.class_values` computes it, with ``n =
    (g + 1) % len(games)``: a win by ``p`` ``T[0][n][max(a - p, 0)][b]``, a loss by ``p``
    ``T[1][n][a][max(b - p, 0)]``, a draw ``T[2][n][a][b]``.
    """
    from ..cube.rotation_met import OPENER_NAMES, rotation_met
    from ..rules.options import variant_rules
    from ..rules.rotations import rotation_named

    if isinstance(rotation, str):
        rotation = rotation_named(rotation)
    table = rotation_met(rotation)
    rates = table.to_dict(1)["rates"]
    return {"format": ROTATION_MET_FORMAT, "format_version": 1, "name": rotation.name, "title": rotation.title(),
            "rotation": rotation.to_data(), "games": list(rotation.variants),
            "rules": [rules.changes_from(variant_rules(rules.name)) for rules in rotation.games], "rates": rates,
            "max_away": table.max_away, "openers": list(OPENER_NAMES),
            "table": [[[[float(x) for x in row] for row in game] for game in opener] for opener in table.table]}


def rotations_json() -> dict[str, Any]:
    """The preset rotations (:data:`tapa_ai.rules.rotations.ROTATIONS`) by name: ``{"tabla": {"title": "Tabla
    (Backgammon, Gul Bara, Tapa)", "games": ["backgammon", "gulbara", "tapa"], "rules": [{"cube": false,
    "crawford": false}, {}, {"cube": false, "crawford": false}], "met": "/model/tabla-met.json"}, ...}``: ``rules``,
    each game's options changed from its variant's preset (what ``start`` takes as ``"rules"`` to begin that game:
    a rotation's games have no cube); ``met``, where its match equity table is (:func:`rotation_met_json`)."""
    from ..rules.options import variant_rules
    from ..rules.rotations import ROTATIONS

    return {name: {"title": rotation.title(), "games": list(rotation.variants),
                   "rules": [rules.changes_from(variant_rules(rules.name)) for rules in rotation.games],
                   "met": f"/model/{name}-met.json"}
            for name, rotation in ROTATIONS.items()}


VARIANTS_PATH = "/v1/variants"
"""Where the page gets the family: every variant's rules and what it plays by (:func:`variants_json`)."""


def variants_json() -> dict[str, Any]:
    """The registry of variants (:data:`tapa_ai.rules.options.REGISTRY`) as the page and other frontends read it.

    ``{"variants": [{"name", "title", "summary", "rules": {every rule option}, "model": the shipped network that
    plays it or null, "ships_model", "outcomes": {"names": [...], "points": [...], "scored": [...]},
    "draws", "opponents"}, ...], "rotations": {name: {"title", "games", "rules", "met"}, ...}}`` (the preset rotations,
    :func:`rotations_json`): ``outcomes`` are the network's outcome classes of
    the variant in class order with their points, ``scored`` the classes its own games can end in (a running
    game has no backgammon, only Tapa and Plakoto draw); ``draws`` whether a game can be drawn.
    """
    from ..rules.options import REGISTRY
    from ..rules.outcomes import outcome_names, outcome_points

    def scored(rules, name: str) -> bool:
        if name == "draw":
            return rules.has_draws
        if name.endswith(("_backgammon", "_mother", "_backgammon_or_mother")):
            return rules.backgammons or rules.mother_points > 0
        return True

    entries = []
    for entry in REGISTRY.values():
        rules = entry.rules
        names = outcome_names(rules)
        entries.append({
            "name": entry.name, "title": entry.title, "summary": entry.summary, "rules": rules.to_dict(),
            "model": entry.model, "ships_model": entry.ships_model,
            "outcomes": {"names": list(names), "points": [float(p) for p in outcome_points(rules)],
                         "scored": [name for name in names if scored(rules, name)]},
            "draws": rules.has_draws, "opponents": list(entry.opponents)})
    return {"variants": entries, "rotations": rotations_json()}


class ModelFiles:
    """The exported models of the page, built on first request and kept (thread-safe).

    ``checkpoint_dirs``: where ``<variant>.pt`` is looked for, in order (default: ``./checkpoints``, then the
    shipped models, :data:`tapa_ai.net.shipped.MODELS_DIR`). ``engine_checkpoint``: the engine's own model
    (variant name, checkpoint path), served for that variant instead.
    """

    def __init__(self, checkpoint_dirs: Optional[Sequence[Path]] = None,
                 engine_checkpoint: Optional[tuple[str, Path]] = None) -> None:
        if checkpoint_dirs is None:
            from ..net.shipped import MODELS_DIR

            checkpoint_dirs = [Path.cwd() / "checkpoints", MODELS_DIR]
        self.checkpoint_dirs = [Path(d) for d in checkpoint_dirs]
        self.engine_checkpoint = engine_checkpoint
        self._built: dict[str, tuple[bytes, bytes]] = {}
        self._locks = {variant: threading.Lock() for variant in MODEL_VARIANTS}
        self._mets: dict[Any, bytes] = {}
        self._met_lock = threading.Lock()

    def rotation_met(self, rotation: Any) -> bytes:
        """The JSON bytes of :func:`rotation_met_json` of ``rotation`` (a preset's name or a
        :class:`~tapa_ai.rules.rotations.Rotation`; built once each); :class:`WebFileError` (404) for an unknown
        preset."""
        from ..rules.rotations import ROTATIONS, RotationError, rotation_named

        if isinstance(rotation, str):
            try:
                rotation = rotation_named(rotation)
            except RotationError as error:
                raise WebFileError(404, f"no match equity table: {error}") from None
        key = rotation.to_data() if rotation.name in ROTATIONS else tuple(rotation.games)
        key = key if isinstance(key, (str, tuple)) else json.dumps(key)
        with self._met_lock:
            if key not in self._mets:
                if len(self._mets) >= 32:
                    self._mets.clear()  # a bound on what custom rotations keep
                text = json.dumps(rotation_met_json(rotation), separators=(",", ":"), allow_nan=False)
                self._mets[key] = text.encode("utf-8")
            return self._mets[key]

    def checkpoint(self, variant: str) -> Path:
        """The checkpoint of ``variant``'s model; :class:`WebFileError` (404) naming where it looked."""
        if variant not in MODEL_VARIANTS:
            raise WebFileError(404, f"no model for {quoted(variant, 40)}: the board plays {', '.join(MODEL_VARIANTS)}")
        if self.engine_checkpoint is not None and self.engine_checkpoint[0] == variant:
            return self.engine_checkpoint[1]
        looked = []
        for directory in self.checkpoint_dirs:
            path = directory / f"{variant}.pt"
            if path.is_file():
                return path
            looked.append(str(path))
        raise WebFileError(404, f"no model for {variant}: no checkpoint at {' or '.join(dict.fromkeys(looked))} "
                                f"(reinstall tapa-ai, or start tapa-ai serve with --bot net:PATH for this variant)")

    def files(self, variant: str) -> tuple[bytes, bytes]:
        """(npz bytes, JSON bytes) of ``variant``'s model, exporting it on first use."""
        path = self.checkpoint(variant)
        with self._locks[variant]:
            if variant not in self._built:
                from ..export import ExportError, export_checkpoint

                with tempfile.TemporaryDirectory() as directory:
                    out = Path(directory) / f"{variant}.npz"
                    try:
                        export_checkpoint(path, "npz", out)
                    except ExportError as error:
                        raise WebFileError(500, f"cannot export the {variant} model from {path}: {error}") from None
                    npz = out.read_bytes()
                text = json.dumps(model_json(npz), separators=(",", ":"), allow_nan=False)
                self._built[variant] = (npz, text.encode("utf-8"))
            return self._built[variant]


def engine_checkpoint_of(engine: Any) -> Optional[tuple[str, Path]]:
    """(variant, checkpoint path) of an engine's ``--bot net:PATH`` model, or None (no model, or no file)."""
    from ..bots.spec import net_checkpoint_path

    analyzer = getattr(engine, "analyzer", None)
    if analyzer is None:
        return None
    from ..rules.options import RulesError, variant_rules

    path = net_checkpoint_path(analyzer.name)
    if path is None or not path.is_file():
        return None
    try:
        if variant_rules(analyzer.rules.name) != analyzer.rules:
            return None  # a custom rule set: the page plays the named variants only
    except RulesError:
        return None
    return analyzer.rules.name, path
