"""Self-describing training checkpoints, written atomically and loaded safely.

A checkpoint is one ``torch.save`` file holding a single dict of plain data:
tensors, dicts, lists, tuples, str, int, float, bool and None. It therefore
loads with ``torch.load(path, weights_only=True)``, which refuses to build any
other object, so a checkpoint file cannot run code. The dict (format version 1):

=====================  =======================================================
key                    value
=====================  =======================================================
``format``             ``"tapa-ai-checkpoint"``
``format_version``     ``1`` (:data:`FORMAT_VERSION`)
``tapa_ai_version``    ``tapa_ai.__version__`` of the writer
``model_config``       the model architecture, a dict (``layers``, ``hidden``, ...)
``encoding``           ``{"name": str, "version": int}`` of the input encoding
``rules_version``      :data:`tapa_ai.rules.options.RULES_VERSION` of the writer
``rule_options``       ``RuleOptions.to_dict()`` of the trained rule set
``config``             the whole training config as nested dicts
``counters``           ``{"games": int, "steps": int, "decisions": int}``
``model_state``        the model ``state_dict`` (name -> tensor)
``optimizer_state``    the optimizer ``state_dict``, or None
``rng``                ``{"torch": ByteTensor | None, "numpy": dict | None, "python": list | None}``
``extra``              free dict of plain data (best evaluation score, ...)
=====================  =======================================================

The numpy state is ``bit_generator.state`` with each array written as
``{"__ndarray__": list, "dtype": str}``; the Python state is
``[version, list of ints, gauss_next]``. Every reader loads through
:func:`load_checkpoint`, which checks every field's type and range
(:func:`~tapa_ai.net.checkpoint_read.validate_payload`), so each command
refuses a damaged file with the same line.

Random generators are passed in, never taken from global state, except that
``torch_generator=None`` means torch's global generator (which initialises
weights unless told otherwise)::

    save_checkpoint(path, model_state=model.state_dict(), model_config=model_config,
                    encoding=("tapa-td", 1), rule_options=rules, config=config,
                    games=games, optimizer_state=optimizer.state_dict(),
                    numpy_generator=rng, python_random=py_random)
    checkpoint = load_checkpoint(path, expect_encoding=("tapa-td", 1), expect_rules_version=RULES_VERSION)
    checkpoint.restore_rng(numpy_generator=rng, python_random=py_random)
"""

from __future__ import annotations

import io
import random
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import torch

from .. import __version__
from ..config import ConfigError, TrainConfig, config_from_dict, config_to_dict
from ..rules.options import RULES_VERSION, RuleOptions, RulesError
from .atomic_files import WriteError, atomic_write
from .checkpoint_read import (FORMAT_NAME, FORMAT_VERSION, CheckpointError, numpy_state_from_plain,
                              python_state_from_plain, read_payload as _read, validate_payload)


@dataclass
class Checkpoint:
    """The contents of one checkpoint file, as read back by :func:`load_checkpoint`."""

    model_state: dict[str, torch.Tensor]
    """The model ``state_dict``."""
    model_config: dict[str, Any]
    """The model architecture as given to :func:`save_checkpoint`."""
    encoding: tuple[str, int]
    """Name and version of the input encoding the model was trained on."""
    rules_version: int
    """``RULES_VERSION`` of the program that wrote the checkpoint."""
    rule_options: dict[str, Any]
    """``RuleOptions.to_dict()`` of the trained rule set."""
    config: dict[str, Any]
    """The whole training config as nested dicts (see :meth:`train_config`)."""
    games: int
    """Self-play games played when the checkpoint was written."""
    steps: int
    """Optimizer steps taken."""
    decisions: int
    """Moves chosen in self-play."""
    optimizer_state: dict[str, Any] | None
    """The optimizer ``state_dict``, or None."""
    torch_rng_state: torch.Tensor | None
    """State of the torch generator (``Generator.get_state()``), or None."""
    numpy_rng_state: dict[str, Any] | None
    """``bit_generator.state`` of the numpy Generator, or None."""
    python_rng_state: tuple | None
    """``random.Random.getstate()`` of the Python generator, or None."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Free plain data stored by the trainer."""
    format_version: int = FORMAT_VERSION
    """Layout version of the file."""
    tapa_ai_version: str = __version__
    """``tapa_ai.__version__`` of the writer."""
    path: Path | None = None
    """The file it was read from."""

    def rules(self) -> RuleOptions:
        """The trained rule set."""
        try:
            return RuleOptions.from_dict(self.rule_options)
        except RulesError as error:
            raise CheckpointError(f"{self.path}: bad rule options: {error}") from None

    def train_config(self) -> TrainConfig:
        """The training config, checked like a config file."""
        try:
            return config_from_dict(self.config, source=f"config stored in {self.path}")
        except ConfigError as error:
            raise CheckpointError(str(error)) from None

    def restore_rng(self, *, torch_generator: torch.Generator | None = None,
                    numpy_generator: np.random.Generator | None = None,
                    python_random: random.Random | None = None) -> None:
        """Put the saved states back into these generators (``torch_generator=None``: torch's global one).

        A generator whose state was not saved is left alone; numpy and Python
        generators are only touched when passed.
        """
        if self.torch_rng_state is not None:
            if torch_generator is None:
                torch.set_rng_state(self.torch_rng_state)
            else:
                torch_generator.set_state(self.torch_rng_state)
        if numpy_generator is not None and self.numpy_rng_state is not None:
            try:
                numpy_generator.bit_generator.state = self.numpy_rng_state
            except (ValueError, TypeError, KeyError) as error:
                raise CheckpointError(f"{self.path}: cannot restore the numpy generator: {error}") from None
        if python_random is not None and self.python_rng_state is not None:
            python_random.setstate(self.python_rng_state)


def save_checkpoint(path: str | Path, **fields: Any) -> Path:
    """Write a checkpoint atomically: a reader sees the old file or the complete new one, never a part.

    ``fields`` are the keyword arguments of :func:`make_payload`. Raises
    :class:`CheckpointError` before writing anything if a value is not plain data.
    """
    return write_payload(path, make_payload(**fields))


def make_payload(
    *,
    model_state: Mapping[str, torch.Tensor],
    model_config: Mapping[str, Any],
    encoding: tuple[str, int],
    rule_options: RuleOptions | Mapping[str, Any],
    config: TrainConfig | Mapping[str, Any],
    games: int,
    steps: int = 0,
    decisions: int = 0,
    optimizer_state: Mapping[str, Any] | None = None,
    torch_generator: torch.Generator | None = None,
    save_torch_rng: bool = True,
    numpy_generator: np.random.Generator | None = None,
    python_random: random.Random | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The checkpoint dict that :func:`save_checkpoint` writes (see the module docstring).

    ``model_config`` and ``extra`` must be plain data; ``rule_options`` and
    ``config`` may be the objects or their dicts. ``torch_generator=None``
    stores torch's global generator (unless ``save_torch_rng=False``); numpy
    and Python generator states are stored only when passed.
    """
    encoding_name, encoding_version = _check_encoding(encoding, "encoding")
    for name, value in (("games", games), ("steps", steps), ("decisions", decisions)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CheckpointError(f"checkpoint counter {name}={value!r}: must be an integer >= 0")
    if isinstance(rule_options, RuleOptions):
        rule_options = rule_options.to_dict()
    if isinstance(config, TrainConfig):
        config = config_to_dict(config)
    torch_state = None
    if save_torch_rng:
        torch_state = (torch.get_rng_state() if torch_generator is None else torch_generator.get_state()).clone()
    numpy_state = None if numpy_generator is None else _numpy_state_to_plain(numpy_generator.bit_generator.state)
    python_state = None if python_random is None else _python_state_to_plain(python_random.getstate())
    payload = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "tapa_ai_version": __version__,
        "model_config": dict(model_config),
        "encoding": {"name": encoding_name, "version": encoding_version},
        "rules_version": RULES_VERSION,
        "rule_options": dict(rule_options),
        "config": dict(config),
        "counters": {"games": games, "steps": steps, "decisions": decisions},
        "model_state": dict(model_state),
        "optimizer_state": None if optimizer_state is None else dict(optimizer_state),
        "rng": {"torch": torch_state, "numpy": numpy_state, "python": python_state},
        "extra": dict(extra or {}),
    }
    _check_plain(payload, "checkpoint")
    return payload


def write_payload(path: str | Path, payload: Mapping[str, Any]) -> Path:
    """``torch.save`` into memory, then write the bytes to a temporary file beside ``path``, fsync it and rename
    it over ``path``.

    :class:`~tapa_ai.net.atomic_files.WriteError` (one line naming the path) if the disk is full, over quota,
    read-only or the directory not writable; the temporary file is then removed and the old file at ``path``
    is untouched. (Serialised in memory first: torch's zip writer, handed a file that fails, reports the
    OSError as a RuntimeError of its own, "unexpected pos", that no longer says the disk is full.)
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteError(path.parent, error) from error
    buffer = io.BytesIO()
    try:
        torch.save(dict(payload), buffer)
    except OSError as error:
        raise WriteError(path, error) from error
    atomic_write(path, lambda handle: handle.write(buffer.getbuffer()))
    return path


def load_checkpoint(
    path: str | Path,
    *,
    expect_encoding: tuple[str, int] | None = None,
    expect_rules_version: int | None = None,
    map_location: str | torch.device = "cpu",
) -> Checkpoint:
    """Read and check a checkpoint with ``torch.load(weights_only=True)``: every command that reads one does so here.

    Raises :class:`CheckpointError` (one line naming the file and what is
    wrong) when the file is missing, is not a checkpoint (corrupt, truncated,
    or holding anything but plain data), has another format version, lacks
    keys or has a field of the wrong type or out of range
    (:func:`~tapa_ai.net.checkpoint_read.validate_payload`), or when its
    encoding or rules version differs from the expected one.
    """
    path = Path(path)
    data = _read(path, map_location)
    validate_payload(path, data)
    encoding = (data["encoding"]["name"], data["encoding"]["version"])
    if expect_encoding is not None:
        wanted = _check_encoding(expect_encoding, "expect_encoding")
        if encoding != wanted:
            raise CheckpointError(
                f"{path} was trained on encoding {encoding[0]!r} version {encoding[1]}, "
                f"but this program uses {wanted[0]!r} version {wanted[1]}; retrain or use a matching tapa_ai"
            )
    if expect_rules_version is not None and data["rules_version"] != expect_rules_version:
        raise CheckpointError(
            f"{path} was trained under rules version {data['rules_version']}, "
            f"but this program has rules version {expect_rules_version}; retrain or use a matching tapa_ai"
        )
    rng = data["rng"]
    counters = data["counters"]
    return Checkpoint(
        model_state=data["model_state"],
        model_config=data["model_config"],
        encoding=encoding,
        rules_version=data["rules_version"],
        rule_options=data["rule_options"],
        config=data["config"],
        games=counters["games"],
        steps=counters["steps"],
        decisions=counters["decisions"],
        optimizer_state=data["optimizer_state"],
        torch_rng_state=rng.get("torch"),
        numpy_rng_state=None if rng.get("numpy") is None else numpy_state_from_plain(rng["numpy"]),
        python_rng_state=None if rng.get("python") is None else python_state_from_plain(rng["python"]),
        extra=data["extra"],
        format_version=data["format_version"],
        tapa_ai_version=data["tapa_ai_version"],
        path=path,
    )


# ---------------------------------------------------------------------------
# Plain-data conversion


_PLAIN_SCALARS = (str, int, float, bool, type(None))


def _check_plain(value: Any, where: str) -> None:
    """Raise unless ``value`` is made only of what ``torch.load(weights_only=True)`` accepts."""
    if isinstance(value, _PLAIN_SCALARS) or isinstance(value, (torch.Tensor, torch.Size, torch.dtype, torch.device)):
        if isinstance(value, torch.Tensor) and type(value) not in (torch.Tensor, torch.nn.Parameter):
            raise CheckpointError(f"{where}: tensor subclass {type(value).__name__} cannot be stored safely")
        return
    if type(value) in (list, tuple):
        for index, item in enumerate(value):
            _check_plain(item, f"{where}[{index}]")
        return
    if type(value) in (dict, OrderedDict):
        for key, item in value.items():
            if not isinstance(key, _PLAIN_SCALARS):
                raise CheckpointError(f"{where}: key {key!r} of type {type(key).__name__} cannot be stored safely")
            _check_plain(item, f"{where}[{key!r}]")
        return
    raise CheckpointError(
        f"{where}: a {type(value).__module__}.{type(value).__qualname__} cannot be stored safely; "
        "a checkpoint holds only tensors, dicts, lists, str, int, float, bool and None"
    )


def _numpy_state_to_plain(value: Any) -> Any:
    """``bit_generator.state`` with arrays and numpy scalars turned into lists and Python numbers."""
    if isinstance(value, dict):
        return {key: _numpy_state_to_plain(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _python_state_to_plain(state: tuple) -> list:
    version, internal, gauss_next = state
    return [version, list(internal), gauss_next]


def _check_encoding(encoding: Any, what: str) -> tuple[str, int]:
    try:
        name, version = encoding
    except (TypeError, ValueError):
        raise CheckpointError(f"{what}={encoding!r}: want a (name, version) pair") from None
    if not isinstance(name, str) or not name or isinstance(version, bool) or not isinstance(version, int):
        raise CheckpointError(f"{what}={encoding!r}: want a (name: str, version: int) pair")
    return name, version


def load_network(path: str | Path, map_location: str | torch.device = "cpu"):
    """The trained :class:`~tapa_ai.net.model.EvaluatorNet` of a checkpoint, in eval mode.

    Raises :class:`CheckpointError` for a missing, corrupt or mismatched file
    (another encoding, or weights that do not fit the stored architecture).
    """
    from .model import EvaluatorNet

    checkpoint = load_checkpoint(path, map_location=map_location)
    check_network(checkpoint)  # before building: a file cannot make us allocate what it does not hold
    try:
        net = EvaluatorNet.from_architecture(checkpoint.model_config)
        net.load_state_dict(checkpoint.model_state)
    except (KeyError, TypeError, ValueError, RuntimeError, RulesError, ConfigError) as error:
        raise CheckpointError(f"{path}: the network cannot be rebuilt from this checkpoint: {error}") from None
    net.eval()
    net.games_trained = checkpoint.games
    net.checkpoint_path = Path(path)
    return net


def check_network(checkpoint: Checkpoint) -> None:
    """Refuse a checkpoint whose network is not what it says or is unusable, before anything is built.

    See :func:`tapa_ai.net.network_check.check_network_state`; the rule set the
    network was built for must also be the checkpoint's ``rule_options`` (the
    variant a resumed run keeps). Raises :class:`CheckpointError` with one line
    saying what is wrong.
    """
    from .network_check import check_network_state

    try:
        check_network_state(checkpoint.model_config, checkpoint.model_state)
    except ValueError as error:
        raise CheckpointError(f"{checkpoint.path}: {error}") from None
    built_for = RuleOptions.from_dict(checkpoint.model_config["rules"])  # checked above: the network was laid out
    if built_for != checkpoint.rules():
        raise CheckpointError(f"{checkpoint.path} is damaged: its network was built for the {built_for.name} rules, "
                              f"its rule_options are {checkpoint.rules().name}'s"
                              + (" (other options)" if built_for.name == checkpoint.rules().name else ""))


RESUME_ONLY = ("selfplay", "pending", "play_weights", "replay")
"""Keys of a checkpoint's ``extra`` that only resuming a run needs (:func:`slim_checkpoint` drops them)."""


def slim_checkpoint(source: str | Path, target: str | Path, *, model_state: Mapping[str, torch.Tensor] | None = None,
                    extra: Mapping[str, Any] | None = None) -> Path:
    """Copy a checkpoint without what only resuming needs: optimizer, RNG states, running games, the games
    waiting to be learned, self-play's copy of the weights and expert iteration's replay buffer (whose count of
    search labels stays, as ``extra["search_labels"]``).

    The slim file plays, evaluates and exports exactly like the source (same
    network, config, counters, CPU time and evaluation history) at about a
    third of its size; ``tapa-ai train --resume`` refuses it. Used to keep
    earlier generations of the shipped models. With ``model_state`` (new
    weights of the same architecture) and ``extra`` (plain data added to the
    source's), it is a network derived from the source, such as a distilled
    student (:mod:`tapa_ai.training.distill`).
    """
    load_checkpoint(source)  # the same checks as any load: a damaged source is refused here
    data = _read(Path(source), "cpu")
    data["optimizer_state"] = None
    data["rng"] = {"torch": None, "numpy": None, "python": None}
    replay = data["extra"].get("replay")
    data["extra"] = {key: value for key, value in data["extra"].items() if key not in RESUME_ONLY}
    if isinstance(replay, Mapping) and "labels" in replay:
        data["extra"]["search_labels"] = int(replay["labels"])
    data["extra"]["slim_of"] = str(source)
    if extra is not None:
        _check_plain(dict(extra), "extra")
        data["extra"].update(extra)
    if model_state is not None:
        shapes = {name: tuple(value.shape) for name, value in model_state.items()}
        if shapes != {name: tuple(value.shape) for name, value in data["model_state"].items()}:
            raise CheckpointError(f"{source}: the new weights do not fit its network ({shapes})")
        data["model_state"] = {name: value.detach().cpu() for name, value in model_state.items()}
    return write_payload(target, data)
