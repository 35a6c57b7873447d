"""Training configs: files in configs/, unknown keys and bad types rejected clearly, overrides, TOML round trips."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tapa_ai.config import (
    ConfigError,
    TrainConfig,
    apply_overrides,
    config_from_dict,
    config_to_dict,
    config_to_toml,
    field_docs,
    load_config,
    loads_config,
    run_name,
)

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
CONFIG_FILES = sorted(CONFIGS.glob("*.toml"))


def write(tmp_path: Path, text: str, name: str = "run.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def config_error(call, *args, **kwargs) -> str:
    with pytest.raises(ConfigError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


# --- the shipped configs -----------------------------------------------------


def test_configs_directory_has_one_file_per_variant_and_a_quick_one():
    assert {path.stem for path in CONFIG_FILES} >= {"tapa", "plakoto", "backgammon", "quick"}


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda path: path.name)
def test_every_config_file_loads_and_round_trips(path):
    config = load_config(path)
    assert loads_config(config_to_toml(config)) == config
    if path.stem in ("tapa", "plakoto", "backgammon"):
        assert config.run.variant == path.stem


def test_quick_config_is_a_small_tapa_run():
    config = load_config(CONFIGS / "quick.toml")
    assert config.run.variant == "tapa"
    assert config.run.total_games <= 10_000
    assert config.selfplay.parallel_games <= 256
    assert config.run.torch_threads == 1  # one torch thread: two spin-wait against the evaluator (docs/training.md, Speed)
    assert config.eval.opponents == ["random", "pipcount"]


def test_every_config_field_has_a_one_line_docstring():
    defaults = TrainConfig()
    sections = [TrainConfig] + [type(getattr(defaults, item.name)) for item in dataclasses.fields(TrainConfig)]
    for cls in sections:
        docs = field_docs(cls)
        for item in dataclasses.fields(cls):
            assert docs.get(item.name), f"{cls.__name__}.{item.name} has no docstring"


def test_missing_keys_keep_their_defaults(tmp_path):
    config = load_config(write(tmp_path, "[model]\nhidden = 32\n"))
    assert config.model.hidden == 32
    assert config.model.layers == TrainConfig().model.layers
    assert config.learning == TrainConfig().learning
    assert load_config(write(tmp_path, "")) == TrainConfig()


# --- unknown keys --------------------------------------------------------------


def test_unknown_key_names_file_section_key_suggestion_and_known_keys(tmp_path):
    path = write(tmp_path, "[model]\nhiden = 64\n")
    message = config_error(load_config, path)
    assert str(path) in message
    assert "unknown key 'hiden' in section [model]" in message
    assert "did you mean 'hidden'?" in message
    assert "layers, hidden, activation" in message


def test_unknown_section_is_rejected_with_a_suggestion(tmp_path):
    message = config_error(load_config, write(tmp_path, "[selfply]\nparallel_games = 4\n"))
    assert "unknown section [selfply]" in message
    assert "did you mean 'selfplay'?" in message


def test_unknown_nested_table_is_rejected(tmp_path):
    message = config_error(load_config, write(tmp_path, "[model.extra]\nx = 1\n"))
    assert "unknown key 'extra' in section [model]" in message


def test_unknown_key_without_a_close_match_lists_the_known_keys(tmp_path):
    message = config_error(load_config, write(tmp_path, "[logging]\nzzz = 1\n"))
    assert "did you mean" not in message
    assert "Known: tensorboard, log_every_games." in message


# --- bad types and values ---------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('[model]\nhidden = "big"', 'model.hidden = "big": expected an integer, got a string'),
        ("[model]\nhidden = 1.5", "model.hidden = 1.5: expected an integer, got a number"),
        ("[run]\nseed = true", "run.seed = true: expected an integer, got a boolean"),
        ("[logging]\ntensorboard = 1", "logging.tensorboard = 1: expected true or false, got an integer"),
        ('[learning]\nlearning_rate = "fast"', 'learning.learning_rate = "fast": expected a number, got a string'),
        ("[eval]\nopponents = [1, 2]", "eval.opponents = [1, 2]: expected a list of strings, got a list"),
        ('[eval]\nopponents = "random"', 'eval.opponents = "random": expected a list of strings, got a string'),
        ('[run]\nvariant = "chess"', "run.variant = \"chess\": must be one of 'tapa', 'plakoto', 'backgammon'"),
        ('[learning]\nmethod = "td0"', "learning.method = \"td0\": must be one of 'lambda-return', 'online-traces'"),
        ("[learning]\nlambda_ = 1.5", "learning.lambda_ = 1.5: must be at most 1.0"),
        ("[learning]\nlearning_rate = 0", "learning.learning_rate = 0.0: must be greater than 0.0"),
        ("[selfplay]\nparallel_games = 0", "selfplay.parallel_games = 0: must be at least 1"),
        ("[learning]\nlearning_rate = nan", "learning.learning_rate = nan: expected a finite number"),
        ('[run]\nname = ""', 'run.name = "": must not be empty'),
        ("model = 3", "section [model] must be a table, got an integer"),
    ],
)
def test_wrong_type_or_value_names_section_key_and_expectation(tmp_path, toml, expected):
    path = write(tmp_path, toml + "\n")
    message = config_error(load_config, path)
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_integer_is_accepted_where_a_number_is_expected(tmp_path):
    config = load_config(write(tmp_path, "[learning]\nlearning_rate = 1\n"))
    assert config.learning.learning_rate == 1.0
    assert isinstance(config.learning.learning_rate, float)


def test_invalid_toml_and_missing_file_are_config_errors(tmp_path):
    path = write(tmp_path, "[model\nhidden = 3\n")
    message = config_error(load_config, path)
    assert str(path) in message and "not valid TOML" in message
    assert "does not exist" in config_error(load_config, tmp_path / "missing.toml")


# --- overrides -----------------------------------------------------------------


def test_overrides_parse_toml_literals_and_unquoted_strings():
    config = apply_overrides(TrainConfig(), [
        "model.hidden=32",
        "learning.learning_rate=3e-4",
        "logging.tensorboard=false",
        "run.variant=plakoto",
        'run.name="quoted"',
        "eval.opponents=[random,pipcount,gnubg]",
        "checkpoint.directory = /tmp/runs",
    ])
    assert config.model.hidden == 32
    assert config.learning.learning_rate == 3e-4
    assert config.logging.tensorboard is False
    assert config.run.variant == "plakoto"
    assert config.run.name == "quoted"
    assert config.eval.opponents == ["random", "pipcount", "gnubg"]
    assert config.checkpoint.directory == "/tmp/runs"


def test_string_field_override_keeps_text_that_looks_like_another_type():
    assert apply_overrides(TrainConfig(), ["run.name=2024"]).run.name == "2024"
    assert apply_overrides(TrainConfig(), ["run.name=true"]).run.name == "true"


def test_later_override_wins_and_the_original_is_untouched():
    original = TrainConfig()
    config = apply_overrides(original, ["model.hidden=16", "model.hidden=48"])
    assert config.model.hidden == 48
    assert original.model.hidden == TrainConfig().model.hidden


def test_load_config_applies_overrides(tmp_path):
    config = load_config(CONFIGS / "quick.toml", overrides=["run.seed=7"])
    assert config.run.seed == 7


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("model.hidden=big", "override 'model.hidden=big': model.hidden = \"big\": expected an integer, got a string"),
        ("model.hiden=3", "override 'model.hiden=3': unknown key 'hiden' in section [model]; did you mean 'hidden'?"),
        ("modle.hidden=3", "override 'modle.hidden=3': unknown section [modle]; did you mean 'model'?"),
        ("model.hidden", "want 'section.key=value'"),
        ("hidden=3", "with one dot in the name"),
        ("model.hidden.x=3", "with one dot in the name"),
        ("model.hidden=", "no value after '='"),
        ("selfplay.epsilon_start=2", "selfplay.epsilon_start = 2.0: must be at most 1.0"),
        ("run.variant=chess", "must be one of 'tapa', 'plakoto', 'backgammon'"),
    ],
)
def test_bad_override_is_rejected_with_the_override_text(override, expected):
    assert expected in config_error(apply_overrides, TrainConfig(), [override])


def test_overrides_must_be_a_list_not_one_string():
    assert "list of 'section.key=value' strings" in config_error(apply_overrides, TrainConfig(), "model.hidden=3")


# --- round trips ---------------------------------------------------------------


def test_dict_round_trip_is_plain_json_data():
    config = apply_overrides(TrainConfig(), ["run.name=x", "model.hidden=7"])
    data = config_to_dict(config)
    assert json.loads(json.dumps(data)) == data
    assert config_from_dict(data) == config


def test_config_from_dict_checks_like_a_file():
    message = config_error(config_from_dict, {"model": {"width": 3}}, source="checkpoint")
    assert message.startswith("checkpoint: unknown key 'width' in section [model]")


def test_toml_text_has_every_key_commented_with_its_docstring():
    text = config_to_toml(TrainConfig())
    assert "[learning]\n" in text
    assert "# TD(lambda) decay" in text
    assert "lambda_ = 0.7\n" in text


@settings(max_examples=60, deadline=None)
@given(
    name=st.text(min_size=1, max_size=30),
    learning_rate=st.floats(min_value=1e-12, max_value=1e6, allow_nan=False),
    opponents=st.lists(st.text(max_size=10), max_size=4),
    tensorboard=st.booleans(),
)
def test_toml_round_trip_of_arbitrary_values(name, learning_rate, opponents, tensorboard):
    config = TrainConfig()
    config.run.name = name
    config.learning.learning_rate = learning_rate
    config.eval.opponents = opponents
    config.logging.tensorboard = tensorboard
    assert loads_config(config_to_toml(config)) == config


# --- helpers -----------------------------------------------------------------------


def test_epsilon_falls_linearly_then_stays_at_the_end_value():
    selfplay = TrainConfig().selfplay
    selfplay.epsilon_start, selfplay.epsilon_end, selfplay.epsilon_decay_games = 0.2, 0.0, 100
    assert selfplay.epsilon(0) == pytest.approx(0.2)
    assert selfplay.epsilon(50) == pytest.approx(0.1)
    assert selfplay.epsilon(100) == 0.0
    assert selfplay.epsilon(10_000) == 0.0
    selfplay.epsilon_decay_games = 0
    assert selfplay.epsilon(0) == 0.0


def test_run_name_is_variant_name_seed_time():
    config = apply_overrides(TrainConfig(), ["run.variant=plakoto", "run.name=exp", "run.seed=3"])
    assert run_name(config, datetime(2024, 5, 6, 7, 8, 9)) == "plakoto__exp__3__20240506-070809"


# --- hidden layers of different widths -------------------------------------------


def test_hidden_may_list_one_width_per_layer(tmp_path):
    config = load_config(write(tmp_path, "[model]\nlayers = 2\nhidden = [256, 128]\n"))
    assert config.model.widths == (256, 128)
    assert config.model.describe() == "256-128 relu"
    assert loads_config(config_to_toml(config)) == config
    assert TrainConfig().model.widths == (128,) and TrainConfig().model.describe() == "1 x 128 relu"
    assert apply_overrides(TrainConfig(), ["model.hidden=[64,32,16]", "model.layers=3"]).model.widths == (64, 32, 16)


@pytest.mark.parametrize("text, message", [
    ("layers = 1\nhidden = [256, 128]", "model.layers=1 but model.hidden=[256, 128] lists 2 widths: set model.layers=2"),
    ("layers = 2\nhidden = [256, 0]", "a list of widths must hold integers >= 1"),
    ("layers = 0\nhidden = []", "a list of widths must hold integers >= 1"),
    ("layers = 2\nhidden = [1.5, 2]", "model.hidden = [1.5, 2]: expected a list of integers, got a list"),
])
def test_bad_widths_say_what_is_wrong_and_name_the_file(tmp_path, text, message):
    path = write(tmp_path, f"[model]\n{text}\n")
    error = config_error(load_config, path)
    assert message in error and str(path) in error
