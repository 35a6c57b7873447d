"""Training and checkpoints that never lose work or trust bad files (issue 22, section 2).

Interrupts (Ctrl-C, SIGTERM) checkpoint and resume exactly; a damaged
``latest.pt`` falls back to the newest good checkpoint; a run directory is
locked against a second trainer; a full disk is one line and keeps the last
checkpoint; checkpoint contents are checked before anything is built; config
extremes are refused before anything is created; the shipped configs are found
from any directory; saved games are read with bounds; the engine exits cleanly
when its reader goes away.
"""

from __future__ import annotations

import copy
import zipfile

import pytest
import torch

from tapa_ai.bots.base import BotError
from tapa_ai.bots.spec import make_bot
from tapa_ai.config import ModelConfig, TrainConfig
from tapa_ai.net.checkpoint import CheckpointError, load_checkpoint, load_network, make_payload, save_checkpoint
from tapa_ai.net.encoding import ENCODING_NAME
from tapa_ai.net.model import EvaluatorNet
from tapa_ai.rules.options import variant_rules


def net_checkpoint(path, *, change=None, hidden=8):
    """A checkpoint of a small untrained network; ``change(payload)`` edits the dict before it is written."""
    rules = variant_rules("tapa")
    net = EvaluatorNet(ModelConfig(hidden=hidden), rules, seed=0)
    payload = make_payload(model_state=net.state_dict(), model_config=net.architecture(),
                           encoding=(ENCODING_NAME, net.encoding_version), rule_options=rules, config=TrainConfig(),
                           games=1)
    if change is not None:
        change(payload)
    torch.save(payload, path)
    return path


def one_line_error(call, *args) -> str:
    with pytest.raises(CheckpointError) as caught:
        call(*args)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


# --- 5. checkpoint contents are checked before anything is built -------------------------------


def claims(key, value):
    def change(payload):
        payload["model_config"]["model"][key] = value
    return change


def test_a_small_file_claiming_a_huge_network_is_refused_before_anything_is_built(tmp_path, monkeypatch):
    # Within the config's bounds, so only the shapes of the stored tensors can tell.
    path = net_checkpoint(tmp_path / "liar.pt", change=claims("hidden", 60_000))
    built = []
    original = EvaluatorNet.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        built.append(next(self.parameters()).device.type)

    monkeypatch.setattr(EvaluatorNet, "__init__", spy)
    message = one_line_error(load_network, path)
    assert "do not fit the network it describes (1 x 60000 relu)" in message
    assert "layers.0.weight is (8, 259) in the file, (60000, 259) in that network" in message
    assert built == ["meta"]  # laid out on the meta device only: no memory was allocated for it


def test_a_checkpoint_claiming_hidden_4000000_is_refused_with_one_line(tmp_path):
    path = net_checkpoint(tmp_path / "liar.pt", change=claims("hidden", 4_000_000))
    assert "4000000" in one_line_error(load_network, path)


def test_weights_missing_from_the_described_network_are_named(tmp_path):
    def drop(payload):
        del payload["model_state"]["layers.2.bias"]
    assert "lacks layers.2.bias" in one_line_error(load_network, net_checkpoint(tmp_path / "a.pt", change=drop))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused(tmp_path, bad):
    def poison(payload):
        payload["model_state"]["layers.0.weight"][3, 5] = bad
    path = net_checkpoint(tmp_path / "nan.pt", change=poison)
    assert "layers.0.weight hold non-finite numbers" in one_line_error(load_network, path)
    with pytest.raises(BotError, match="non-finite"):
        make_bot(f"net:{path}", variant_rules("tapa"))


class RunsAShellCommand:
    def __reduce__(self):
        import os
        return (os.system, ("echo this must never run",))


def test_a_refused_malicious_checkpoint_never_suggests_weights_only_false(tmp_path):
    path = net_checkpoint(tmp_path / "evil.pt", change=lambda payload: payload["extra"].update(x=RunsAShellCommand()))
    message = one_line_error(load_checkpoint, path)
    assert "is not a safe tapa-ai checkpoint" in message and "system" in message
    for advice in ("weights_only", "will likely succeed", "trusted source"):
        assert advice not in message


def test_a_compressed_archive_member_is_refused_before_it_is_unpacked(tmp_path):
    good = net_checkpoint(tmp_path / "good.pt")
    packed = tmp_path / "packed.pt"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            target.writestr(member.filename, source.read(member))
    assert "is compressed" in one_line_error(load_checkpoint, packed)
    assert load_checkpoint(good).games == 1


# --- a tiny trained run, shared ---------------------------------------------------------------------

TINY = ["run.total_games=24", "selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64",
        "eval.every_games=12", "eval.games=8", "checkpoint.every_games=12", "logging.log_every_games=6",
        "logging.tensorboard=false"]


def tiny_config(directory, *extra):
    from tapa_ai.config import load_config

    return load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={directory}", *extra])


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A run directory after 12 games (step_12.pt and latest.pt); tests copy it."""
    from tapa_ai.training.trainer import Trainer, new_run_directory

    config = tiny_config(tmp_path_factory.mktemp("runs"), "run.total_games=12")
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    return trainer.run_dir


def copy_run(trained_run, tmp_path):
    import shutil

    return shutil.copytree(trained_run, tmp_path / trained_run.name)


def rewrite(path, change):
    """Edit a checkpoint file's dict in place (as a hand or a bug might), keeping it loadable."""
    data = torch.load(path, weights_only=True)
    change(data)
    torch.save(data, path)


def test_resume_refuses_non_finite_weights_and_optimizer_moments(trained_run, tmp_path):
    from tapa_ai.training.trainer import Trainer, TrainingError, resume_checkpoint

    run = copy_run(trained_run, tmp_path)
    rewrite(run / "latest.pt", lambda data: data["model_state"]["layers.0.bias"].fill_(float("nan")))
    rewrite(run / "step_12.pt", lambda data: data["model_state"]["layers.0.bias"].fill_(float("nan")))
    with pytest.raises(TrainingError, match="none of its 2 checkpoints can be used; the newest: .*non-finite"):
        resume_checkpoint(run)

    run = copy_run(trained_run, tmp_path / "moments")
    rewrite(run / "latest.pt", lambda data: data["optimizer_state"]["state"][0]["exp_avg"].fill_(float("inf")))
    run_dir, checkpoint = resume_checkpoint(run / "latest.pt")
    with pytest.raises(TrainingError, match=r"optimizer state 0.exp_avg holds non-finite numbers"):
        Trainer(checkpoint.train_config(), run_dir, checkpoint)


def test_resume_refuses_a_stored_config_whose_network_is_not_the_stored_one_before_building_it(
        trained_run, tmp_path, monkeypatch):
    from tapa_ai.training.trainer import Trainer, TrainingError, resume_checkpoint

    run = copy_run(trained_run, tmp_path)
    rewrite(run / "latest.pt", lambda data: data["config"]["model"].update(hidden=60_000))
    run_dir, checkpoint = resume_checkpoint(run)
    monkeypatch.setattr(EvaluatorNet, "__init__", lambda *args, **kwargs: pytest.fail("built a network"))
    with pytest.raises(TrainingError, match="model.hidden 16 -> 60000"):
        Trainer(checkpoint.train_config(), run_dir, checkpoint)


# --- 6. config extremes are refused before anything is created -------------------------------------


def train_command(tmp_path, *settings, capsys=None):
    """``tapa-ai train`` with the tiny settings and ``settings``; (exit code, stderr)."""
    from tapa_ai.cli import main

    code = main(["train", "--quiet", *sum((["--set", s] for s in [*TINY, f"checkpoint.directory={tmp_path}",
                                                                     *settings]), [])])
    return code, capsys.readouterr().err if capsys is not None else ""


@pytest.mark.parametrize("setting, message", [
    ("model.hidden=100000000", "model.hidden = 100000000: must be at most 65536"),
    ("model.hidden=1e22", "model.hidden = 1e+22: expected an integer"),
    ("model.hidden=10000000000000000000000", "must be at most 65536"),
    ("selfplay.parallel_games=10000000", "selfplay.parallel_games = 10000000: must be at most 65536"),
    ("model.layers=1000", "model.layers = 1000: must be at most 64"),
    ("run.name=../escape", 'run.name = "../escape": must not hold "/"'),
    ("run.name=a\\\\b", 'must not hold "\\\\"'),
    ("run.device=tpu:0", "run.device = 'tpu:0'"),
    ("run.device=cuda:99", "run.device = 'cuda:99'"),
])
def test_config_extremes_are_one_line_and_leave_no_run_directory(tmp_path, capsys, setting, message):
    runs = tmp_path / "runs"
    code, error = train_command(runs, setting, capsys=capsys)
    assert code == 2 and message in error
    assert error.count("\n") == 1 and "Traceback" not in error
    assert list(tmp_path.iterdir()) == []  # not even the checkpoint directory


def test_hidden_layers_too_wide_together_are_refused():
    from tapa_ai.config import ConfigError

    with pytest.raises(ConfigError, match="200,000,000 weights between hidden layers; at most 100,000,000"):
        ModelConfig(layers=3, hidden=[10_000, 10_000, 10_000])


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU: the refusal cannot be seen")
def test_cuda_without_a_gpu_is_refused_clearly(tmp_path, capsys):
    code, error = train_command(tmp_path / "runs", "run.device=cuda", capsys=capsys)
    assert code == 2 and "run.device = 'cuda': no CUDA GPU is available" in error and "run.device=cpu" in error
    assert not (tmp_path / "runs").exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (without one, cuda is refused: the test "
                                                          "above)")
def test_cuda_trains_when_a_gpu_is_present(tmp_path):
    from tapa_ai.training.trainer import Trainer, new_run_directory

    config = tiny_config(tmp_path, "run.device=cuda", "run.total_games=12")
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    assert trainer.games >= 12 and next(trainer.net.parameters()).device.type == "cuda"
    assert load_checkpoint(trainer.run_dir / "latest.pt").games == trainer.games


def test_a_trainer_that_cannot_be_built_leaves_no_empty_run_directory(tmp_path, capsys):
    code, error = train_command(tmp_path, "eval.opponents=[nosuchbot]", capsys=capsys)
    assert code == 2 and "eval.opponents: 'nosuchbot'" in error
    assert list(tmp_path.iterdir()) == []


# --- 7. the shipped configs are found from any directory ---------------------------------------------

REPOSITORY = __import__("pathlib").Path(__file__).resolve().parent.parent


def test_the_shipped_configs_are_found_from_any_directory(tmp_path, monkeypatch):
    from tapa_ai.config import PACKAGE_CONFIGS, load_config, resolve_config_path

    monkeypatch.chdir(tmp_path)
    assert resolve_config_path("configs/tapa.toml") == PACKAGE_CONFIGS / "tapa.toml"
    assert load_config("configs/quick.toml") == load_config(PACKAGE_CONFIGS / "quick.toml")
    mine = tmp_path / "configs"
    mine.mkdir()
    (mine / "quick.toml").write_text('[run]\nname = "mine"\n')
    assert load_config("configs/quick.toml").run.name == "mine"  # a file in the current directory comes first


def test_train_runs_with_its_default_config_outside_the_repository(tmp_path, monkeypatch, capsys):
    from tapa_ai.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["train", "--quiet", *sum((["--set", s] for s in [*TINY, "run.total_games=8", "eval.every_games=8",
                                                                     "checkpoint.directory=runs"]), [])]) == 0
    assert "done: " in capsys.readouterr().out and list((tmp_path / "runs").glob("tapa__*/latest.pt"))


def test_the_repository_configs_are_the_package_copy():
    import tomllib

    from tapa_ai.config import PACKAGE_CONFIGS

    root = REPOSITORY / "configs"
    if not root.exists():
        pytest.skip("not a checkout of the repository (an installed package has no configs/ beside it)")
    # One source of truth: configs/ is a link to tapa_ai/configs/ (or, where links are not checked out,
    # a copy that must say the same).
    assert root.resolve() == PACKAGE_CONFIGS or all(
        (root / path.name).read_bytes() == path.read_bytes() for path in PACKAGE_CONFIGS.glob("*.toml"))
    assert {path.name for path in PACKAGE_CONFIGS.glob("*.toml")} >= {"quick.toml", "tapa.toml", "plakoto.toml",
                                                                       "backgammon.toml"}
    package_data = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "configs/*.toml" in package_data["tapa_ai"]
