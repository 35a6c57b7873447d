"""A training config names a preset of the registry with its rule options changed (``run.rules``, issue 62): the
run trains on that custom rule set, its checkpoints record it, and a resume cannot change it."""

from __future__ import annotations

import pytest

from tapa_ai.config import ConfigError, config_to_toml, load_config, loads_config
from tapa_ai.net.checkpoint import load_checkpoint
from tapa_ai.rules.options import variant_rules
from tapa_ai.training.runs import TrainingError, check_same_network, run_rules
from tapa_ai.training.trainer import Trainer, new_run_directory

TINY = ["run.total_games=8", "selfplay.parallel_games=4", "model.hidden=16", "learning.batch_size=32",
        "eval.every_games=8", "eval.games=4", "checkpoint.every_games=8", "logging.log_every_games=4",
        "logging.tensorboard=false"]


def tiny(tmp_path, *extra):
    return load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}", *extra])


def test_a_config_names_a_preset_with_its_options_changed(tmp_path):
    config = tiny(tmp_path, "run.variant=tapa", "run.rules={mother_points = 2, backgammons = false, name = 'tapa2'}")
    assert config.run.rules == {"mother_points": 2, "backgammons": False, "name": "tapa2"}
    rules = run_rules(config)
    assert rules == variant_rules("tapa").replace(mother_points=2, backgammons=False, name="tapa2")
    # The TOML a run writes reads back as the same config, its rules table included.
    assert loads_config(config_to_toml(config)) == config
    # No changes: the preset itself.
    assert run_rules(tiny(tmp_path, "run.variant=fevga")) is variant_rules("fevga")


def test_a_bad_rules_table_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"run.rules = 5: expected a table of options"):
        tiny(tmp_path, "run.rules=5")
    with pytest.raises(TrainingError, match=r"^run.rules: unknown rule option|^run.rules: .*mother_points"):
        run_rules(tiny(tmp_path, "run.rules={motherpoints = 2}"))
    with pytest.raises(TrainingError, match=r"^run.rules: rule option mother_points: the mother rules need "
                                            r"contact='pin'"):
        run_rules(tiny(tmp_path, "run.variant=backgammon", "run.rules={mother_points = 2}"))


def test_a_run_trains_on_its_custom_rule_set_and_a_resume_keeps_it(tmp_path):
    config = tiny(tmp_path, "run.variant=tapa", "run.rules={mother_points = 2, backgammons = false}")
    trainer = Trainer(config, new_run_directory(config))
    assert trainer.rules == variant_rules("tapa").replace(mother_points=2, backgammons=False)
    assert trainer.selfplay.rules == trainer.rules
    trainer.train(progress=False)
    checkpoint = load_checkpoint(trainer.run_dir / "latest.pt")
    assert checkpoint.rules() == trainer.rules and checkpoint.train_config().run.rules == config.run.rules
    check_same_network(checkpoint.train_config(), checkpoint)  # the same rules: a resume may go on
    plain = checkpoint.train_config()
    plain.run.rules = {}
    with pytest.raises(TrainingError, match=r"a resume cannot change run.rules \(mother_points 2 -> 3, "
                                            r"backgammons False -> True"):
        check_same_network(plain, checkpoint)
