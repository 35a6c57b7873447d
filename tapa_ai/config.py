"""Typed training configuration, loaded from TOML files in ``configs/``.

A :class:`TrainConfig` is a tree of small dataclasses, one per TOML section,
with a one-line docstring under every field (those docstrings also become the
comments of :func:`config_to_toml`). Files may leave out any key (the default
is used) but may not add one: an unknown key or a value of the wrong type is a
:class:`ConfigError` naming the file, the section and the key::

    config = load_config("configs/quick.toml", overrides=["model.hidden=128"])
    text = config_to_toml(config)          # loads back to an equal config

Overrides are ``section.key=value`` with ``value`` read as a TOML literal
(``0.5``, ``true``, ``["random", "pipcount"]``); strings may go unquoted
(``run.variant=plakoto``) and string lists may drop the quotes
(``eval.opponents=[random,pipcount]``).

Kept whole: the sections' dataclasses and the one parser and checker that
reads them all belong together, so a new field is added in one place.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import inspect
import math
import textwrap
import tomllib
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Sequence

from .errors import TapaError

ENCODING_VERSIONS = (1, 2, 3, 4, 5)
"""The encoding versions a config may name (a copy of ``tapa_ai.net.encoding.ENCODING_VERSIONS``: the foundation
layer sits below the network; tests/test_variant_registry.py ties the two)."""
Variant = Literal["tapa", "plakoto", "backgammon", "portes", "fevga", "narde", "gulbara"]
Activation = Literal["relu", "tanh", "sigmoid", "gelu", "silu"]
LearningMethod = Literal["lambda-return", "online-traces"]
Targets = Literal["sampled", "expected", "search"]
LrSchedule = Literal["constant", "linear", "cosine"]
Optimizer = Literal["adam", "sgd"]


class ConfigError(TapaError, ValueError):
    """A configuration file, dict or override that does not fit :class:`TrainConfig`."""


# Upper bounds of the sizes that allocate memory or processes: far above any useful run, low enough
# that a typo (one zero too many) is refused at once instead of after minutes of swapping.
MAX_WIDTH = 65_536
"""Most units in one hidden layer."""
MAX_LAYERS = 64
"""Most hidden layers."""
MAX_HIDDEN_WEIGHTS = 100_000_000
"""Most weights between consecutive hidden layers, all together (400 MB a copy in float32)."""


def _bounded(default: Any, *, minimum: float | None = None, maximum: float | None = None,
             above: float | None = None) -> Any:
    """A dataclass field with inclusive ``minimum``/``maximum`` or an exclusive lower bound ``above``."""
    bounds = {key: value for key, value in (("minimum", minimum), ("maximum", maximum), ("above", above))
              if value is not None}
    return field(default=default, metadata=bounds)


@dataclass
class RunConfig:
    """What is trained, for how long, and where it runs."""

    name: str = "default"
    """Experiment name; the run directory is ``<variant>__<name>__<seed>__<time>``."""
    seed: int = _bounded(1, minimum=0)
    """Seed of every random generator of the run (self-play dice, exploration, initial weights)."""
    variant: Variant = "tapa"
    """The variant to train on, a preset of the registry (``tapa``, ``plakoto``, ``backgammon``, ``portes``,
    ``fevga``, ``narde``; docs/rules.md section 6)."""
    rules: dict[str, Any] = field(default_factory=dict)
    """Rule options changed from the variant's preset (``{mother_points = 2, cube = false, crawford = false}``;
    docs/rules.md section 6): a custom rule set, named ``name`` if given; empty: the preset itself. Checked by the
    rules when the run starts (an unknown option or value is one error line)."""
    total_games: int = _bounded(100_000, minimum=1)
    """Self-play games to train for, counted over the whole run including resumed parts."""
    torch_threads: int = _bounded(2, minimum=1, maximum=1024)
    """Threads torch may use (``torch.set_num_threads``)."""
    device: str = "cpu"
    """Torch device for the network (``cpu``, ``cuda``, ``cuda:1``, ...)."""


@dataclass
class ModelConfig:
    """The evaluator network: an MLP from the encoded position to the result distribution.

    The one model configuration of the project: ``tapa_ai.net.model.EvaluatorNet``
    takes it, checkpoints store it (``to_dict``).
    """

    layers: int = _bounded(1, minimum=0, maximum=MAX_LAYERS)
    """Hidden layers of the MLP (0 = a linear softmax model on the features, at most 64); with a list of widths
    in ``hidden``, its length."""
    hidden: int | list[int] = _bounded(128, minimum=1, maximum=MAX_WIDTH)
    """Units in each hidden layer (at most 65,536), or a list of widths, input side first (``[256, 128]``: two
    layers); at most 100,000,000 weights between hidden layers."""
    activation: Activation = "relu"
    """Activation after each hidden layer: ``relu``, ``tanh``, ``sigmoid``, ``gelu`` or ``silu``."""
    encoding_version: int = 1
    """Input encoding ``tapa-td`` version: 1 (259 columns), 2 (+ 50 exposure columns), 3 (+ 6 contact
    columns), 4 (+ 3 running-game columns; the running games fevga and narde need it) or 5 (+ 11 cascade
    columns; Gul Bara's cascading doubles need it); ``docs/encoding.md``."""
    race_network: bool = False
    """A second network of the same shape for **races** (positions where no checker can meet an opposing one
    again), as GNU Backgammon has: each position is evaluated, and learned, by the network of its phase, chosen
    from its inputs (``tapa_ai.net.model.race_rows``). False: one network for every position."""

    def __post_init__(self) -> None:
        if isinstance(self.layers, bool) or not isinstance(self.layers, int) or not 0 <= self.layers <= MAX_LAYERS:
            raise ConfigError(f"model.layers={self.layers!r}: must be an integer from 0 to {MAX_LAYERS}")
        if isinstance(self.hidden, list):
            if not self.hidden or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in self.hidden):
                raise ConfigError(f"model.hidden={self.hidden!r}: a list of widths must hold integers >= 1")
            if self.layers != len(self.hidden):
                raise ConfigError(f"model.layers={self.layers} but model.hidden={self.hidden!r} lists "
                                  f"{len(self.hidden)} widths: set model.layers={len(self.hidden)}")
        elif isinstance(self.hidden, bool) or not isinstance(self.hidden, int) or self.hidden < 1:
            raise ConfigError(f"model.hidden={self.hidden!r}: must be an integer >= 1 or a list of them")
        widest = max(self.widths, default=0)
        if widest > MAX_WIDTH:
            raise ConfigError(f"model.hidden={self.hidden!r}: a hidden layer of {widest:,} units; at most "
                              f"{MAX_WIDTH:,}")
        between = sum(a * b for a, b in zip(self.widths, self.widths[1:]))
        if between > MAX_HIDDEN_WEIGHTS:
            raise ConfigError(f"model.hidden={self.hidden!r}, model.layers={self.layers}: {between:,} weights between "
                              f"hidden layers; at most {MAX_HIDDEN_WEIGHTS:,}")
        if self.activation not in typing.get_args(Activation):
            raise ConfigError(f"model.activation={self.activation!r}: must be one of {list(typing.get_args(Activation))}")
        if isinstance(self.encoding_version, bool) or self.encoding_version not in ENCODING_VERSIONS:
            raise ConfigError(f"model.encoding_version={self.encoding_version!r}: must be one of "
                              f"{list(ENCODING_VERSIONS)}")
        if not isinstance(self.race_network, bool):
            raise ConfigError(f"model.race_network={self.race_network!r}: must be true or false")

    @property
    def widths(self) -> tuple[int, ...]:
        """The units of every hidden layer, input side first (empty for a linear model)."""
        if isinstance(self.hidden, list):
            return tuple(self.hidden)
        return (self.hidden,) * self.layers

    def describe(self) -> str:
        """The shape in words, e.g. ``2 x 128 relu`` or ``256-128 relu`` (``linear`` without hidden layers)."""
        widths = self.widths
        if not widths:
            return "linear"
        shape = f"{len(widths)} x {widths[0]}" if len(set(widths)) == 1 else "-".join(map(str, widths))
        return f"{shape} {self.activation}" + (" + race network" if self.race_network else "")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict; ``race_network`` only when set, so a one-network model's files stay as they were."""
        data = dataclasses.asdict(self)
        if not self.race_network:
            del data["race_network"]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> "ModelConfig":
        """A model config from a dict; unknown keys are refused with their names."""
        if not isinstance(data, dict):
            raise ConfigError(f"model config must be a dict, got {type(data).__name__}")
        known = {item.name for item in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown model option(s) {unknown}; known: {sorted(known)}")
        return cls(**data)


@dataclass
class SelfPlayConfig:
    """How self-play games are generated."""

    parallel_games: int = _bounded(128, minimum=1, maximum=65_536)
    """Games played side by side; every ply evaluates all their afterstates in one forward pass (at most 65,536;
    about 50 KB of memory each)."""
    epsilon_start: float = _bounded(0.1, minimum=0.0, maximum=1.0)
    """Chance of a uniformly random legal move instead of the greedy one, at the start of training."""
    epsilon_end: float = _bounded(0.0, minimum=0.0, maximum=1.0)
    """Chance of a random move once ``epsilon_decay_games`` games have been played."""
    epsilon_decay_games: int = _bounded(20_000, minimum=0)
    """Games over which exploration falls linearly from ``epsilon_start`` to ``epsilon_end`` (0: at once)."""
    max_turns: int = _bounded(1_000, minimum=1, maximum=1_000_000)
    """Turns after which an unfinished game is abandoned (not used for learning)."""

    def epsilon(self, games_played: int) -> float:
        """Exploration rate after ``games_played`` games (linear decay, then constant)."""
        if self.epsilon_decay_games <= 0 or games_played >= self.epsilon_decay_games:
            return self.epsilon_end
        fraction = max(games_played, 0) / self.epsilon_decay_games
        return self.epsilon_start + fraction * (self.epsilon_end - self.epsilon_start)


@dataclass
class LearningConfig:
    """TD(lambda) learning from the self-play games."""

    method: LearningMethod = "lambda-return"
    """``lambda-return``: batched forward-view targets per finished game; ``online-traces``: traces each ply."""
    lambda_: float = _bounded(0.7, minimum=0.0, maximum=1.0)
    """TD(lambda) decay: 0 bootstraps from the next position only, 1 learns from the final result only."""
    learning_rate: float = _bounded(1e-3, above=0.0)
    """Optimizer step size."""
    optimizer: Optimizer = "adam"
    """``adam`` or ``sgd``."""
    batch_size: int = _bounded(512, minimum=1, maximum=1_048_576)
    """Positions per gradient step (lambda-return method)."""
    weight_decay: float = _bounded(0.0, minimum=0.0)
    """L2 weight decay of the optimizer (0: none)."""
    grad_clip: float = _bounded(1.0, minimum=0.0)
    """Largest gradient norm per step; larger gradients are scaled down (0: no clipping)."""
    targets: Targets = "sampled"
    """What a turn's value is learned from: ``sampled``, the chosen move's value after the roll that was played
    (TD-Gammon); ``expected``, the average over all 21 rolls of the best move's value (a 1-ply expectation, exact
    where the move ends the game; each ply generates and evaluates 21 rolls, about 20 times the self-play cost).
    Mixed with the next turn's target by ``lambda_`` as the sampled values are; lambda-return method only.
    ``search``: expert iteration, the net's own ``search_plies``-ply search value of a sampled roll (the move its
    search plays, that move's value) for a ``search_fraction`` of the positions played, kept in a replay buffer of
    ``replay_size`` rows that minibatches are drawn from (``replay_ratio`` draws per new row); lambda-return only."""
    search_plies: int = _bounded(2, minimum=0, maximum=3)
    """``targets = "search"``: plies of the search that labels positions (0 is the TD(0) control)."""
    search_fraction: float = _bounded(0.1, above=0.0, maximum=1.0)
    """``targets = "search"``: chance that a played position is labelled by search and added to the buffer."""
    search_refine: int = _bounded(2, minimum=0)
    """``targets = "search"``: candidates the second move filter keeps (0: none; NetBot ``refine``)."""
    search_refine_margin: float = _bounded(0.04, minimum=0.0)
    """``targets = "search"``: equity margin of the second move filter."""
    search_last_ply_dice: int = _bounded(0, minimum=0, maximum=36)
    """``targets = "search"``: the label's last ply averages over this many of the 36 dice, drawn at random
    (an unbiased estimate, about 21 / n times cheaper at that ply); 0: all 21 rolls, exact. Needs
    ``search_plies >= 2`` and ``search_refine = 1`` (the move is chosen before the last ply is searched)."""
    replay_size: int = _bounded(50_000, minimum=1, maximum=100_000_000)
    """``targets = "search"``: labelled positions kept (the oldest are replaced); fixed for a run."""
    replay_ratio: float = _bounded(4.0, above=0.0)
    """``targets = "search"``: positions drawn from the buffer for gradient steps per newly labelled position."""
    bearoff_targets: bool = False
    """Value bear-off afterstates (no contact left, :mod:`tapa_ai.bearoff`) by the exact databases instead of the
    network, in self-play (so the learned targets of those turns are the databases' values, and self-play plays
    bear-offs by them) and in ``targets = "search"`` labels; False: the network's own values, as TD-Gammon."""
    lr_schedule: LrSchedule = "constant"
    """Learning rate over the run: ``constant``, or falling from ``learning_rate`` to ``learning_rate_final``
    over ``lr_decay_games`` games from ``lr_decay_start_games`` on, ``linear`` or ``cosine``, then staying there."""
    learning_rate_final: float = _bounded(1e-4, above=0.0)
    """The learning rate at the end of the decay (``lr_schedule`` linear or cosine)."""
    lr_decay_start_games: int = _bounded(0, minimum=0)
    """Games trained before the learning rate starts to fall."""
    lr_decay_games: int = _bounded(1_000_000, minimum=1)
    """Games over which the learning rate falls to ``learning_rate_final``."""
    overlap: bool = False
    """Learn beside self-play (single-process trainer): each learning pass runs in a thread of its own while
    self-play goes on with the weights from before that pass (one pass behind, as an actor of distributed
    training is), so the two use both cores. The same run on any thread count, resumed exactly; False: self-play
    waits for every pass and plays with its result. Needs ``method = "lambda-return"``."""

    def __post_init__(self) -> None:
        if self.targets != "sampled" and self.method != "lambda-return":
            raise ConfigError(f"learning.targets={self.targets!r} needs learning.method='lambda-return' "
                              f"(got {self.method!r}): online traces learn from the sampled next position")
        sampled = self.targets == "search" and self.search_last_ply_dice
        if sampled and (self.search_plies < 2 or self.search_refine != 1):
            raise ConfigError(f"learning.search_last_ply_dice={self.search_last_ply_dice} needs "
                              f"learning.search_plies >= 2 and learning.search_refine = 1 (got {self.search_plies} "
                              f"and {self.search_refine}): the move must be chosen before the sampled last ply "
                              "values it")
        if self.overlap and self.method != "lambda-return":
            raise ConfigError(f"learning.overlap=true needs learning.method='lambda-return' (got {self.method!r}): "
                              "online traces learn inside every ply of self-play")

    def rate(self, games: int) -> float:
        """The learning rate after ``games`` games of the run (:attr:`lr_schedule`)."""
        if self.lr_schedule == "constant" or games <= self.lr_decay_start_games:
            return self.learning_rate
        fraction = min(1.0, (games - self.lr_decay_start_games) / self.lr_decay_games)
        if self.lr_schedule == "cosine":
            fraction = (1.0 - math.cos(math.pi * fraction)) / 2.0
        return self.learning_rate + fraction * (self.learning_rate_final - self.learning_rate)


@dataclass
class EvalConfig:
    """Periodic evaluation against fixed opponents."""

    every_games: int = _bounded(5_000, minimum=1)
    """Self-play games between evaluations."""
    games: int = _bounded(400, minimum=1)
    """Games against each opponent per evaluation (each deal played from both sides)."""
    opponents: list[str] = field(default_factory=lambda: ["random", "pipcount"])
    """Bots to evaluate against, by name."""


@dataclass
class CheckpointConfig:
    """When and where checkpoints are written."""

    every_games: int = _bounded(1_000, minimum=1)
    """Self-play games between checkpoints; an interrupted run loses at most these."""
    keep_last: int = _bounded(3, minimum=1)
    """Numbered checkpoints kept; older ones are deleted (``best.pt`` and ``latest.pt`` always stay)."""
    directory: str = "runs"
    """Directory holding one subdirectory per run (logs and checkpoints)."""


@dataclass
class LoggingConfig:
    """Progress output and TensorBoard logs."""

    tensorboard: bool = True
    """Write TensorBoard event files into the run directory."""
    log_every_games: int = _bounded(100, minimum=1)
    """Self-play games between logged training scalars."""


@dataclass
class DistributedConfig:
    """Self-play actors in other processes (or on a Ray cluster) and one learner; see docs/training.md."""

    workers: int = _bounded(1, minimum=1, maximum=4096)
    """Self-play actor processes; 1 is the single-process trainer (exactly reproducible), more run actors + learner."""
    games_per_batch: int = _bounded(32, minimum=1, maximum=1_000_000)
    """Finished games an actor plays with one weights version before sending them to the learner."""
    publish_every: int = _bounded(1, minimum=1)
    """Learner updates (one per batch of games learned) between two publications of the weights to the actors."""
    max_staleness: int = _bounded(0, minimum=0)
    """Batches played with weights more than this many updates older than the learner's are dropped (0: none are)."""
    actor_threads: int = _bounded(1, minimum=1, maximum=1024)
    """Threads of each actor's move generation and evaluation (one core per actor is the efficient choice)."""
    actor_timeout: float = _bounded(600.0, above=0.0)
    """Seconds without a batch after which a live actor counts as hung and is replaced."""


@dataclass
class TrainConfig:
    """Everything a training run needs; with the seed it reproduces the run."""

    run: RunConfig = field(default_factory=RunConfig)
    """What is trained, for how long, and where it runs."""
    model: ModelConfig = field(default_factory=ModelConfig)
    """The evaluator network."""
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    """How self-play games are generated."""
    learning: LearningConfig = field(default_factory=LearningConfig)
    """TD(lambda) learning."""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """Periodic evaluation against fixed opponents."""
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    """When and where checkpoints are written."""
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    """Progress output and TensorBoard logs."""
    distributed: DistributedConfig = field(default_factory=DistributedConfig)
    """Actor processes and the learner (``workers = 1``: everything in one process)."""



# ---------------------------------------------------------------------------
# Loading


PACKAGE_CONFIGS = Path(__file__).resolve().parent / "configs"
"""The shipped configs, installed with the package (``configs/`` of a checkout is a link to them)."""


def resolve_config_path(path: str | Path) -> Path:
    """``path``, or the shipped copy for a bare ``configs/<name>.toml`` that the current directory lacks.

    So ``--config configs/tapa.toml`` (and the default ``configs/quick.toml``)
    work from any directory, not only from a checkout of the repository; a
    file of that name in the current directory still comes first.
    """
    path = Path(path)
    if not path.exists() and not path.is_absolute() and len(path.parts) == 2 and path.parts[0] == "configs":
        shipped = PACKAGE_CONFIGS / path.name
        if shipped.is_file():
            return shipped
    return path


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> TrainConfig:
    """Read a TOML config file, then apply ``section.key=value`` overrides.

    A bare ``configs/<name>.toml`` missing from the current directory is the
    shipped config of that name (:func:`resolve_config_path`).
    """
    path = resolve_config_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"config file {path} cannot be read: {error}") from None
    return loads_config(text, source=str(path), overrides=overrides)


def loads_config(text: str, source: str = "<string>", overrides: Sequence[str] = ()) -> TrainConfig:
    """A config from TOML text; ``source`` names it in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    config = config_from_dict(data, source=source)
    return apply_overrides(config, overrides)


def config_from_dict(data: dict[str, Any], source: str = "<dict>") -> TrainConfig:
    """A config from nested dicts (as in TOML or a checkpoint); missing keys keep their defaults."""
    return _build(TrainConfig, data, section="", source=source)


def config_to_dict(config: TrainConfig) -> dict[str, Any]:
    """Nested plain dicts of str, int, float, bool and lists (fit for TOML, JSON and checkpoints)."""
    return dataclasses.asdict(config)


def apply_overrides(config: TrainConfig, overrides: Sequence[str]) -> TrainConfig:
    """A copy of ``config`` with each ``section.key=value`` override applied in order."""
    if isinstance(overrides, str):
        raise ConfigError("overrides must be a list of 'section.key=value' strings, not one string")
    data = config_to_dict(config)
    for override in overrides:
        section, key, value = _parse_override(override)
        data[section][key] = value
    return config_from_dict(data, source="overrides")


def _parse_override(override: str) -> tuple[str, str, Any]:
    where = f"override {override!r}"
    if not isinstance(override, str) or "=" not in override:
        raise ConfigError(f"{where}: want 'section.key=value', e.g. 'model.hidden=128'")
    dotted, raw = (part.strip() for part in override.split("=", 1))
    parts = dotted.split(".")
    if len(parts) != 2 or not all(parts):
        raise ConfigError(f"{where}: want 'section.key=value' with one dot in the name, e.g. 'model.hidden=128'")
    section, key = parts
    section_types = _field_types(TrainConfig)
    if section not in section_types:
        raise ConfigError(f"{where}: unknown section [{section}]{_suggest(section, section_types)}")
    key_types = _field_types(section_types[section])
    if key not in key_types:
        raise ConfigError(f"{where}: unknown key {key!r} in section [{section}]{_suggest(key, key_types)}")
    if raw == "":
        raise ConfigError(f"{where}: no value after '='")
    value = _parse_override_value(raw, key_types[key])
    metadata = {item.name: item.metadata for item in dataclasses.fields(section_types[section])}[key]
    return section, key, _check_value(value, key_types[key], metadata, dotted, where)


def _parse_override_value(raw: str, expected: Any) -> Any:
    try:
        value = tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        value = None
        parsed = False
    else:
        parsed = True
    if _is_string_type(expected) and not (parsed and isinstance(value, str)):
        # Unquoted text for a string field: 'run.name=2024' means the name "2024".
        return raw
    if typing.get_origin(expected) is list and not parsed and raw.startswith("[") and raw.endswith("]"):
        # Shells eat quotes: '[random,pipcount]' means ["random", "pipcount"].
        inner = raw[1:-1].strip()
        return [item.strip().strip("\"'") for item in inner.split(",")] if inner else []
    if not parsed:
        return raw  # reported by the type check with the expected type
    return value


# ---------------------------------------------------------------------------
# Type checking


def _build(cls: type, data: Any, section: str, source: str) -> Any:
    where = f"{source}: section [{section}]" if section else source
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a table, got {_describe(data)}")
    types = _field_types(cls)
    unknown = [key for key in data if key not in types]
    if unknown:
        key = unknown[0]
        if section:
            message = f"{source}: unknown key {key!r} in section [{section}]"
        else:
            message = f"{source}: unknown section [{key}]"
        raise ConfigError(message + _suggest(key, types))
    values = {}
    for item in dataclasses.fields(cls):
        if item.name not in data:
            continue
        expected = types[item.name]
        name = f"{section}.{item.name}" if section else item.name
        if dataclasses.is_dataclass(expected):
            values[item.name] = _build(expected, data[item.name], name, source)
        else:
            values[item.name] = _check_value(data[item.name], expected, item.metadata, name, source)
    try:
        return cls(**values)
    except ConfigError as error:
        # A check across keys (``__post_init__``): say which file it is about.
        message = str(error)
        raise ConfigError(message if message.startswith(source) else f"{source}: {message}") from None


def _check_value(value: Any, expected: Any, bounds: Any, name: str, source: str) -> Any:
    def fail(why: str) -> typing.NoReturn:
        raise ConfigError(f"{source}: {name} = {_show(value)}: {why}")

    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        # One of several types (``int | list[int]``): a list is checked as the list member, anything else as the
        # first other member, so its error message is the familiar one ("expected an integer, ...").
        members = typing.get_args(expected)
        lists = [member for member in members if typing.get_origin(member) is list]
        others = [member for member in members if typing.get_origin(member) is not list]
        if isinstance(value, list) and lists:
            return _check_value(value, lists[0], bounds, name, source)
        return _check_value(value, others[0], bounds, name, source)
    if origin is Literal:
        choices = typing.get_args(expected)
        if value not in choices or not isinstance(value, str):
            fail(f"must be one of {', '.join(repr(choice) for choice in choices)}")
        return value
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(key, str) and key for key in value):
            fail(f"expected a table of options, e.g. {{mother_points = 2}}, got {_describe(value)}")
        return dict(value)
    if origin is list:
        (item_type,) = typing.get_args(expected)
        if not isinstance(value, list) or not all(isinstance(item, item_type) for item in value):
            fail(f"expected a list of {_type_name(item_type)}, got {_describe(value)}")
        return list(value)
    if expected is bool:
        if not isinstance(value, bool):
            fail(f"expected true or false, got {_describe(value)}")
        return value
    if expected is int:
        if isinstance(value, bool) or not isinstance(value, int):
            fail(f"expected an integer, got {_describe(value)}")
    elif expected is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail(f"expected a number, got {_describe(value)}")
        value = float(value)
        if not math.isfinite(value):
            fail("expected a finite number")
    elif expected is str:
        if not isinstance(value, str):
            fail(f"expected a string, got {_describe(value)}")
        if not value:
            fail("must not be empty")
        return value
    else:  # pragma: no cover - a field type this module does not handle yet
        raise TypeError(f"config field {name} has unsupported type {expected!r}")
    if "minimum" in bounds and value < bounds["minimum"]:
        fail(f"must be at least {bounds['minimum']}")
    if "maximum" in bounds and value > bounds["maximum"]:
        fail(f"must be at most {bounds['maximum']}")
    if "above" in bounds and value <= bounds["above"]:
        fail(f"must be greater than {bounds['above']}")
    return value


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {item.name: hints[item.name] for item in dataclasses.fields(cls)}


def _is_string_type(expected: Any) -> bool:
    return expected is str or typing.get_origin(expected) is Literal


def _type_name(expected: Any) -> str:
    return {bool: "booleans", int: "integers", float: "numbers", str: "strings"}.get(expected, repr(expected))


def _describe(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    """``value`` as it would be written in TOML (``true``, ``"text"``), or its repr."""
    try:
        return _toml_value(value)
    except TypeError:
        return repr(value)


def _suggest(name: str, known: dict[str, Any]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{hint} Known: {', '.join(known)}."


# ---------------------------------------------------------------------------
# Writing


def config_to_toml(config: TrainConfig) -> str:
    """TOML text for ``config``, each key commented with its docstring; :func:`loads_config` reads it back equal."""
    lines: list[str] = []
    for section in dataclasses.fields(TrainConfig):
        section_value = getattr(config, section.name)
        if lines:
            lines.append("")
        section_doc = field_docs(TrainConfig).get(section.name)
        if section_doc:
            lines.append(f"# {section_doc}")
        lines.append(f"[{section.name}]")
        docs = field_docs(type(section_value))
        for item in dataclasses.fields(section_value):
            doc = docs.get(item.name)
            if doc:
                lines.extend(f"# {line}" for line in textwrap.wrap(doc, 100))
            lines.append(f"{item.name} = {_toml_value(getattr(section_value, item.name))}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key} = {_toml_value(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _toml_string(text: str) -> str:
    escapes = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
    out = []
    for char in text:
        if char in escapes:
            out.append(escapes[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of a config dataclass, joined into one line."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # no source (frozen application): no comments
        return {}
    body = ast.parse(source).body[0].body
    docs = {}
    for statement, following in zip(body, body[1:]):
        if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def run_name(config: TrainConfig, when: datetime | None = None) -> str:
    """The run directory name ``<variant>__<name>__<seed>__<YYYYmmdd-HHMMSS>``.

    Raises :class:`ConfigError` when ``run.name`` holds a path separator
    (``/``, ``\\``) or a control character: the run directory is one entry of
    ``checkpoint.directory``, never a path out of it.
    """
    name = config.run.name
    bad = next((char for char in name if char in "/\\" or ord(char) < 0x20 or ord(char) == 0x7F), None)
    if bad is not None:
        raise ConfigError(f"run.name = {_toml_string(name)}: must not hold {_toml_string(bad)} (it names one directory "
                          "inside checkpoint.directory; use letters, digits, '-', '_' or '.')")
    stamp = (when or datetime.now()).strftime("%Y%m%d-%H%M%S")
    return f"{config.run.variant}__{config.run.name}__{config.run.seed}__{stamp}"
