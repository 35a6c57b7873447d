"""Reading a checkpoint file safely: archive checks first, then ``torch.load(weights_only=True)``.

Before torch reads anything: the file must be a zip archive whose members are
all stored uncompressed (as ``torch.save`` writes them; a compressed member
could unpack into far more memory than the file's size) and pass their CRCs
(torch does not check them). ``weights_only=True`` then refuses any object but
tensors and plain data, so no code in the file can run. torch's error text is
cut to what it says about the file: its advice about ``torch.load`` (such as
re-running it with ``weights_only=False``, which would run the file's code) is
never repeated to a user holding an untrusted file.

:func:`validate_payload` is then the one check of what the file holds, which
every command that reads a checkpoint relies on (they all load through
:func:`tapa_ai.net.checkpoint.load_checkpoint`): the format, every key, and
every field's type and range (counters are integers >= 0, the replay buffer's
position lies within its capacity, random generator states restore, the stored
config is a valid typed config, ...). A file that fails is refused with one
line naming the file and the field, the same line whichever command read it.
"""

from __future__ import annotations

import math
import pickle
import random
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import torch

from .. import __version__
from ..config import ConfigError, config_from_dict
from ..errors import TapaError
from ..rules.options import RuleOptions, RulesError


class CheckpointError(TapaError, ValueError):
    """A checkpoint that is missing, unreadable, unsafe, or does not fit what the caller expects."""


FORMAT_NAME = "tapa-ai-checkpoint"
#: Bumped whenever the layout of the checkpoint dict changes.
FORMAT_VERSION = 1

REQUIRED_KEYS = (
    "format", "format_version", "tapa_ai_version", "model_config", "encoding", "rules_version",
    "rule_options", "config", "counters", "model_state", "optimizer_state", "rng", "extra",
)


def read_payload(path: Path, map_location: str | torch.device = "cpu") -> Any:
    """What ``torch.load(path, weights_only=True)`` reads, after the archive checks; :class:`CheckpointError` if not."""
    if not path.exists():
        raise CheckpointError(f"no checkpoint at {path}: the file does not exist")
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}: not a regular file")
    # save_checkpoint always writes torch's zip format; refusing anything else up front also
    # keeps torch.load off its legacy raw-pickle path.
    if not zipfile.is_zipfile(path):
        raise CheckpointError(
            f"{path} is not a tapa-ai checkpoint: not a torch zip archive (corrupt, truncated, or another kind of file)"
        )
    # torch.load does not verify the archive's CRCs, so damaged tensor bytes would load silently.
    try:
        with zipfile.ZipFile(path) as archive:
            # torch.save stores every member uncompressed; a compressed one could unpack into far more
            # memory than the file's size (a zip bomb), so refuse it before anything is unpacked.
            packed = [member.filename for member in archive.infolist() if member.compress_type != zipfile.ZIP_STORED]
            damaged = None if packed else archive.testzip()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError, zlib.error) as error:
        raise CheckpointError(f"{path} is not a tapa-ai checkpoint or is damaged (corrupt or truncated): {error}") \
            from None
    if packed:
        raise CheckpointError(f"{path} is not a tapa-ai checkpoint: archive member {packed[0]} is compressed "
                              "(torch.save writes none), so it was not unpacked")
    if damaged is not None:
        raise CheckpointError(f"{path} is damaged: archive member {damaged} fails its checksum")
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        # weights_only refuses every global that is not a tensor or plain data; such a
        # file was not written by save_checkpoint and may try to run code.
        raise CheckpointError(
            f"{path} is not a safe tapa-ai checkpoint: it holds objects other than tensors and plain "
            f"data ({_unpickler_reason(error)}), so it was not loaded and none of its code ran; "
            "load only checkpoints written by tapa-ai"
        ) from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile, KeyError, IndexError,
            TypeError, AttributeError, UnicodeDecodeError, MemoryError) as error:
        raise CheckpointError(f"{path} is not a tapa-ai checkpoint or is damaged (corrupt or truncated): "
                              f"{_torch_detail(error)}") from None


_UNSAFE_ADVICE = re.compile(r"weights.only|trusted source|arbitrary code|will likely succeed|add_safe_globals"
                            r"|safe_globals|torch\.load|documentation", re.IGNORECASE)
"""Sentences of torch's load errors that are advice about torch.load (such as re-running it with
``weights_only=False``, which would run the file's code): never repeated to a user holding the file."""


def _unpickler_reason(error: Exception) -> str:
    """What torch's long weights_only error says the file asked for ("it refers to posix.system"), no advice."""
    text = str(error)
    match = re.search(r"GLOBAL\s+([\w.]+)", text)
    if match:
        return f"it refers to {match.group(1)}"
    return _torch_detail(error, default="it is not plain data")


def _torch_detail(error: Exception, default: str | None = None) -> str:
    """The first sentence of a torch load error that is a fact about the file, not advice about torch.load."""
    for line in str(error).splitlines():
        for sentence in re.split(r"(?<=\.)\s+", line.strip()):
            if sentence and not _UNSAFE_ADVICE.search(sentence):
                return sentence
    return default or type(error).__name__


# ---------------------------------------------------------------------------
# The one validation of a checkpoint's contents


def validate_payload(path: Path, data: Any) -> None:
    """Raise :class:`CheckpointError` (one line naming ``path`` and the field) unless ``data`` is a checkpoint.

    Checks the format marker and version, that every key is there, and every
    field's type and range: the counters, encoding and rules version, the rule
    options and the stored config (as :class:`~tapa_ai.rules.options.RuleOptions`
    and the typed :class:`~tapa_ai.config.TrainConfig` read them), the tensors of
    the model state, the optimizer state's layout, that each random generator
    state restores into a generator of its kind, and the known entries of
    ``extra`` (the running self-play games and their counters, which must agree
    with ``counters``; the games waiting to be learned; the replay buffer, whose
    rows and position lie within its capacity; the CPU time, the best score and
    the evaluation history). Whether the network's weights fit its architecture
    is :func:`tapa_ai.net.checkpoint.check_network`'s part, for the files that
    hold an :class:`~tapa_ai.net.model.EvaluatorNet`.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise CheckpointError(f"{path} is not a tapa-ai checkpoint (no format marker {FORMAT_NAME!r})")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has checkpoint format version {_shown(version)}; this tapa_ai "
            f"({__version__}) reads format version {FORMAT_VERSION}"
        )
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        raise CheckpointError(f"{path} is damaged: missing key(s) {', '.join(missing)}")
    fields = _Fields(path)
    fields.string("tapa_ai_version", data["tapa_ai_version"])
    for key in ("model_config", "rule_options", "config", "model_state", "extra", "counters", "encoding", "rng"):
        fields.mapping(key, data[key])
    counters = data["counters"]
    for key in ("games", "steps", "decisions"):
        fields.integer(f"counters.{key}", counters.get(key), minimum=0)
    fields.string("encoding.name", data["encoding"].get("name"))
    fields.integer("encoding.version", data["encoding"].get("version"), minimum=0)
    fields.integer("rules_version", data["rules_version"], minimum=0)
    try:
        RuleOptions.from_dict(data["rule_options"])
    except (RulesError, TypeError, ValueError, KeyError, AttributeError) as error:
        raise CheckpointError(f"{path} is damaged: rule_options: {error}") from None
    try:
        config_from_dict(data["config"], source=f"config stored in {path}")
    except ConfigError as error:
        raise CheckpointError(str(error)) from None
    fields.tensors("model_state", data["model_state"])
    _check_optimizer(fields, data["optimizer_state"])
    _check_rng(fields, data["rng"])
    _check_extra(fields, data["extra"], counters)


class _Fields:
    """Type and range checks of one file's fields; each failure is one line naming the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field: str, want: str, got: str) -> NoReturn:
        raise CheckpointError(f"{self.path} is damaged: {field} should be {want}, got {got}")

    def wrong_type(self, field: str, want: str, value: Any) -> NoReturn:
        self.fail(field, want, type(value).__name__)

    def mapping(self, field: str, value: Any) -> dict:
        if not isinstance(value, dict):
            self.wrong_type(field, "a dict", value)
        return value

    def sequence(self, field: str, value: Any) -> list | tuple:
        if not isinstance(value, (list, tuple)):
            self.wrong_type(field, "a list", value)
        return value

    def string(self, field: str, value: Any) -> str:
        if not isinstance(value, str):
            self.wrong_type(field, "a string", value)
        return value

    def integer(self, field: str, value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.wrong_type(field, "an integer", value)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.fail(field, _range("an integer", minimum, maximum), _shown(value))
        return value

    def number(self, field: str, value: Any, minimum: float | None = None, maximum: float | None = None) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.wrong_type(field, "a number", value)
        if not math.isfinite(value):
            self.fail(field, "a finite number", _shown(value))
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.fail(field, _range("a number", minimum, maximum), _shown(value))
        return float(value)

    def tensor(self, field: str, value: Any, dims: int, kind: str) -> torch.Tensor:
        """A tensor of ``dims`` dimensions whose dtype is ``kind``: "floating", "integer" or a dtype's name."""
        if not isinstance(value, torch.Tensor):
            self.wrong_type(field, "a tensor", value)
        if value.dim() != dims:
            self.fail(field, f"a {dims}-dimensional tensor", f"shape {tuple(value.shape)}")
        fits = {"floating": value.is_floating_point(),
                "integer": not value.is_floating_point() and not value.is_complex() and value.dtype != torch.bool}
        if not fits.get(kind, str(value.dtype) == f"torch.{kind}"):
            self.fail(field, f"a tensor of {kind} numbers" if kind in fits else f"a {kind} tensor", str(value.dtype))
        return value

    def tensors(self, field: str, value: Any) -> None:
        for name, tensor in self.mapping(field, value).items():
            if not isinstance(tensor, torch.Tensor):
                self.fail(field, "a dict of tensors", f"{type(tensor).__name__} at {name!r}")

    def rows(self, field: str, value: torch.Tensor, rows: int, what: str) -> None:
        if value.shape[0] != rows:
            self.fail(field, f"{rows} rows ({what})", f"{value.shape[0]}")


def _range(what: str, minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{what} from {minimum} to {maximum}"
    return f"{what} >= {minimum}" if maximum is None else f"{what} <= {maximum}"


def _shown(value: Any) -> str:
    """``value`` as an error message shows it: short, whatever its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_optimizer(fields: _Fields, state: Any) -> None:
    """None, or ``{"state": {index: {name: value}}, "param_groups": [{"params": [int, ...], ...}]}``."""
    if state is None:
        return
    fields.mapping("optimizer_state", state)
    for key in ("state", "param_groups"):
        if key not in state:
            raise CheckpointError(f"{fields.path} is damaged: optimizer_state lacks {key!r}")
    for index, entry in fields.mapping("optimizer_state.state", state["state"]).items():
        fields.integer(f"optimizer_state.state key {_shown(index)}", index, minimum=0)
        fields.mapping(f"optimizer_state.state[{index}]", entry)
    for number, group in enumerate(fields.sequence("optimizer_state.param_groups", state["param_groups"])):
        group = fields.mapping(f"optimizer_state.param_groups[{number}]", group)
        for position, index in enumerate(fields.sequence(f"optimizer_state.param_groups[{number}].params",
                                                         group.get("params"))):
            fields.integer(f"optimizer_state.param_groups[{number}].params[{position}]", index, minimum=0)


_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
"""The numpy bit generators whose state a checkpoint may hold (``bit_generator.state["bit_generator"]``)."""
_STATE_DTYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")
"""The dtypes of the arrays in a numpy generator's state."""


def _check_rng(fields: _Fields, rng: dict) -> None:
    """Each stored generator state restores into a fresh generator of its kind."""
    torch_state = rng.get("torch")
    if torch_state is not None:
        fields.tensor("rng.torch", torch_state, 1, "uint8")
        try:
            torch.Generator().set_state(torch_state.cpu())
        except (RuntimeError, TypeError, ValueError):
            fields.fail("rng.torch", "the state of a torch CPU generator", f"{torch_state.numel()} bytes")
    numpy_state = rng.get("numpy")
    if numpy_state is not None:
        name = fields.mapping("rng.numpy", numpy_state).get("bit_generator")
        if name not in _BIT_GENERATORS:
            fields.fail("rng.numpy.bit_generator", f"one of {', '.join(_BIT_GENERATORS)}", _shown(name))
        try:
            getattr(np.random, name)().state = numpy_state_from_plain(numpy_state)
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError):
            fields.fail("rng.numpy", f"the state of a numpy {name} generator", "a state it does not accept")
    python_state = rng.get("python")
    if python_state is not None:
        try:
            random.Random().setstate(python_state_from_plain(python_state))
        except (ValueError, TypeError, OverflowError):
            fields.fail("rng.python", "the state of a Python random.Random", "a state it does not accept")


def numpy_state_from_plain(value: Any) -> Any:
    """A numpy ``bit_generator.state`` from its plain form (arrays as ``{"__ndarray__": list, "dtype": str}``).

    ValueError for an array of another dtype than an integer one.
    """
    if isinstance(value, dict):
        if set(value) == {"__ndarray__", "dtype"}:
            if value["dtype"] not in _STATE_DTYPES or not isinstance(value["__ndarray__"], list):
                raise ValueError(f"a generator state's array of dtype {_shown(value['dtype'])}")
            return np.array(value["__ndarray__"], dtype=value["dtype"])
        return {key: numpy_state_from_plain(item) for key, item in value.items()}
    return value


def python_state_from_plain(plain: Any) -> tuple:
    """``random.Random.getstate()`` from its plain form ``[version, list of ints, gauss_next]``; ValueError if not."""
    if not isinstance(plain, (list, tuple)) or len(plain) != 3 or not isinstance(plain[1], (list, tuple)):
        raise ValueError("want [version, list of ints, gauss_next]")
    version, internal, gauss_next = plain
    return (version, tuple(internal), gauss_next)


def _check_extra(fields: _Fields, extra: dict, counters: dict) -> None:
    """The entries of ``extra`` that the trainer writes and reads back (other keys are free plain data)."""
    for key in ("cpu_seconds", "wall_seconds"):
        if key in extra:
            fields.number(f"extra.{key}", extra[key], minimum=0)
    for key in ("learner_updates", "search_labels"):
        if key in extra:
            fields.integer(f"extra.{key}", extra[key], minimum=0)
    for key in ("slim_of", "distilled_from"):
        if key in extra:
            fields.string(f"extra.{key}", extra[key])
    if extra.get("best_score") is not None:
        fields.number("extra.best_score", extra["best_score"])
    if "best_opponents" in extra:
        for index, name in enumerate(fields.sequence("extra.best_opponents", extra["best_opponents"])):
            fields.string(f"extra.best_opponents[{index}]", name)
    for index, record in enumerate(fields.sequence("extra.evaluations", extra.get("evaluations", []))):
        where = f"extra.evaluations[{index}]"
        record = fields.mapping(where, record)
        fields.integer(f"{where}.games_trained", record.get("games_trained"), minimum=0)
        fields.string(f"{where}.opponent", record.get("opponent"))
        # An evaluation plays at least one game a side (training/evaluation.py): none or fewer is a damaged file.
        fields.integer(f"{where}.games", record.get("games"), minimum=1)
        fields.number(f"{where}.ppg", record.get("ppg"))
        interval = fields.sequence(f"{where}.ppg_ci95", record.get("ppg_ci95"))
        if len(interval) != 2:
            fields.fail(f"{where}.ppg_ci95", "a pair of numbers", f"{len(interval)} items")
        for bound in interval:
            fields.number(f"{where}.ppg_ci95", bound)
        fields.number(f"{where}.win_rate", record.get("win_rate"), minimum=0, maximum=1)
    if extra.get("play_weights") is not None:
        fields.tensors("extra.play_weights", extra["play_weights"])
    if extra.get("selfplay") is not None:
        _check_selfplay(fields, fields.mapping("extra.selfplay", extra["selfplay"]), counters)
    for index, game in enumerate(fields.sequence("extra.pending", extra.get("pending", []))):
        where = f"extra.pending[{index}]"
        game = fields.mapping(where, game)
        states = fields.tensor(f"{where}.states", game.get("states"), 2, "integer")
        values = fields.tensor(f"{where}.next_values", game.get("next_values"), 2, "floating")
        fields.rows(f"{where}.next_values", values, states.shape[0], "one a turn, as its states")
        fields.string(f"{where}.kind", game.get("kind"))
        fields.integer(f"{where}.turns", game.get("turns"), minimum=0)
        if game.get("outcome") is not None:
            fields.tensor(f"{where}.outcome", game["outcome"], 1, "floating")
    if extra.get("replay") is not None:
        _check_replay(fields, fields.mapping("extra.replay", extra["replay"]))


def _check_selfplay(fields: _Fields, selfplay: dict, counters: dict) -> None:
    """The running self-play games (:meth:`tapa_ai.training.selfplay.SelfPlay.state_dict`) and their counters."""
    batch = fields.tensor("extra.selfplay.batch", selfplay.get("batch"), 2, "integer")
    games = batch.shape[0]
    fields.rows("extra.selfplay.turn", fields.tensor("extra.selfplay.turn", selfplay.get("turn"), 1, "integer"),
                games, "one a running game")
    fields.rows("extra.selfplay.turns", fields.tensor("extra.selfplay.turns", selfplay.get("turns"), 1, "integer"),
                games, "one a running game")
    lengths = fields.sequence("extra.selfplay.lengths", selfplay.get("lengths"))
    if len(lengths) != games:
        fields.fail("extra.selfplay.lengths", f"{games} lengths (one a running game)", f"{len(lengths)}")
    for index, length in enumerate(lengths):
        fields.integer(f"extra.selfplay.lengths[{index}]", length, minimum=0)
    states = fields.tensor("extra.selfplay.states", selfplay.get("states"), 2, "integer")
    fields.rows("extra.selfplay.states", states, sum(lengths), "the running games' turns")
    values = fields.tensor("extra.selfplay.values", selfplay.get("values"), 2, "floating")
    fields.rows("extra.selfplay.values", values, sum(lengths), "the running games' turns")
    stats = fields.mapping("extra.selfplay.stats", selfplay.get("stats"))
    for key in ("games", "decisions", "abandoned", "turns_of_finished"):
        fields.integer(f"extra.selfplay.stats.{key}", stats.get(key), minimum=0)
    for kind, count in fields.mapping("extra.selfplay.stats.kinds", stats.get("kinds")).items():
        fields.integer(f"extra.selfplay.stats.kinds[{kind!r}]", count, minimum=0)
    for key in ("games", "decisions"):  # the trainer counts both by its self-play's counters
        if stats[key] != counters[key]:
            fields.fail(f"extra.selfplay.stats.{key}", f"counters.{key} ({counters[key]})", _shown(stats[key]))


def _check_replay(fields: _Fields, replay: dict) -> None:
    """Expert iteration's replay buffer (:meth:`tapa_ai.training.replay.ReplayBuffer.state_dict`): a ring of
    ``capacity`` rows, its rows and its next position within that."""
    capacity = fields.integer("extra.replay.capacity", replay.get("capacity"), minimum=1)
    states = fields.tensor("extra.replay.states", replay.get("states"), 2, "int8")
    targets = fields.tensor("extra.replay.targets", replay.get("targets"), 2, "floating")
    if states.shape[0] > capacity:
        fields.fail("extra.replay.states", f"at most {capacity} rows (its capacity)", f"{states.shape[0]}")
    fields.rows("extra.replay.targets", targets, states.shape[0], "one a position")
    fields.integer("extra.replay.next", replay.get("next"), minimum=0, maximum=capacity - 1)
    fields.number("extra.replay.credit", replay.get("credit"), minimum=0)
    if "labels" in replay:
        fields.integer("extra.replay.labels", replay["labels"], minimum=0)
