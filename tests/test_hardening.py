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

import zipfile

import pytest
import torch

from tapa_ai.bots.base import BotError
from tapa_ai.bots.spec import make_bot
from tapa_ai.config import ModelConfig, TrainConfig
from tapa_ai.net.checkpoint import CheckpointError, load_checkpoint, load_network, make_payload
from tapa_ai.net.encoding import ENCODING_NAME
from tapa_ai.net.model import EvaluatorNet
from tapa_ai.rules.options import variant_rules
from tests.requires import require


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


# --- 1. Ctrl-C and SIGTERM checkpoint, say how to resume, and resume exactly ---------------------------

import os
import signal
import subprocess
import sys
import time


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The 24-game tiny run, never stopped: what every interrupted-and-resumed run must equal."""
    from tapa_ai.training.trainer import Trainer, new_run_directory

    config = tiny_config(tmp_path_factory.mktemp("whole"))
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    return trainer


def signal_at_ply(trainer, signal_number, ply):
    """Send ``signal_number`` to this process in the middle of the ``ply``-th ply of self-play (1 = the first)."""
    step = trainer.selfplay.step
    calls = []

    def interrupted(epsilon):
        calls.append(epsilon)
        if len(calls) == ply:
            os.kill(os.getpid(), signal_number)  # the handler runs here, before the ply is played
        return step(epsilon)

    trainer.selfplay.step = interrupted
    return calls


def assert_same_run(resumed, whole):
    assert resumed.games == whole.games and resumed.steps == whole.steps
    for name, tensor in whole.net.state_dict().items():
        assert torch.equal(tensor, resumed.net.state_dict()[name]), name
    assert [e.ppg for e in resumed.evaluations] == [e.ppg for e in whole.evaluations]


# Ply 20: before the first checkpoint, with finished games not learned from yet; 150: after it, with
# unlearned games again; 200: between two learning passes with none waiting.
@pytest.mark.parametrize("signal_number, ply", [(signal.SIGINT, 20), (signal.SIGTERM, 150), (signal.SIGINT, 200)],
                         ids=["ctrl-c-ply-20", "sigterm-ply-150", "ctrl-c-ply-200"])
def test_an_interrupt_mid_ply_checkpoints_and_the_resumed_run_is_bit_identical(
        tmp_path, uninterrupted, signal_number, ply):
    from tapa_ai.training.trainer import Trainer, TrainingStopped, new_run_directory, resume_checkpoint

    config = tiny_config(tmp_path)
    first = Trainer(config, new_run_directory(config))
    calls = signal_at_ply(first, signal_number, ply)
    # Whatever the handlers were (SIG_IGN under nohup or a background job, Python's default otherwise)
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with pytest.raises(TrainingStopped) as stopped:
        first.train(progress=False)
    assert len(calls) == ply  # the ply in flight was finished, no other begun
    assert stopped.value.exit_code == 128 + signal_number and stopped.value.games == first.games
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before  # handlers given back
    checkpoint = load_checkpoint(first.run_dir / "latest.pt")
    assert checkpoint.games == first.games < 24
    assert len(checkpoint.extra["pending"]) == len(first.pending)
    if ply != 200:
        assert first.pending, "this interrupt should land with finished games not learned from yet"

    run_dir, checkpoint = resume_checkpoint(first.run_dir)
    resumed = Trainer(checkpoint.train_config(), run_dir, checkpoint)
    resumed.train(progress=False)
    assert_same_run(resumed, uninterrupted)


@pytest.mark.parametrize("ply", [20, 150])
def test_an_interrupt_of_an_overlapped_run_resumes_bit_identical(tmp_path, ply):
    from tapa_ai.training.trainer import Trainer, TrainingStopped, new_run_directory, resume_checkpoint

    whole_config = tiny_config(tmp_path / "whole", "learning.overlap=true")
    whole = Trainer(whole_config, new_run_directory(whole_config))
    whole.train(progress=False)
    config = tiny_config(tmp_path / "split", "learning.overlap=true")
    first = Trainer(config, new_run_directory(config))
    signal_at_ply(first, signal.SIGTERM, ply)
    with pytest.raises(TrainingStopped):
        first.train(progress=False)
    assert not first.learner.in_flight  # the pass in flight was finished before the checkpoint
    run_dir, checkpoint = resume_checkpoint(first.run_dir)
    assert checkpoint.games == first.games < 24 and checkpoint.extra["play_weights"] is not None
    resumed = Trainer(checkpoint.train_config(), run_dir, checkpoint)
    resumed.train(progress=False)
    assert_same_run(resumed, whole)


def test_a_second_ctrl_c_quits_at_once_and_leaves_the_last_checkpoint(tmp_path):
    from tapa_ai.training.trainer import Trainer, new_run_directory

    config = tiny_config(tmp_path)
    trainer = Trainer(config, new_run_directory(config))
    calls = signal_at_ply(trainer, signal.SIGINT, 150)  # after the first checkpoint (12 games)
    real_write = torch.save

    def write_interrupted_again(obj, handle):
        if len(calls) >= 150:  # the stopping checkpoint, not the ones before
            handle.write(b"PK\x03\x04 the start of a checkpoint")
            os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, while it is written
        real_write(obj, handle)

    import tapa_ai.net.checkpoint as checkpoint_module

    original = checkpoint_module.torch.save
    checkpoint_module.torch.save = write_interrupted_again
    try:
        with pytest.raises(KeyboardInterrupt):
            trainer.train(progress=False)
    finally:
        checkpoint_module.torch.save = original
    assert load_checkpoint(trainer.run_dir / "latest.pt").games == 12  # the last good one, untouched
    assert not list(trainer.run_dir.glob("*.tmp"))


def run_train(tmp_path, *settings):
    """``tapa-ai train`` in a child process (its own session, so a signal to it reaches no one else)."""
    command = [sys.executable, "-c", "import sys; from tapa_ai.cli import main; sys.exit(main())", "train", "--quiet"]
    for setting in [*TINY, "run.total_games=100000", "eval.every_games=100000", f"checkpoint.directory={tmp_path}",
                    *settings]:
        command += ["--set", setting]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_for(condition, process, seconds=240):
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.mark.parametrize("signal_number, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)],
                         ids=["sigterm", "ctrl-c"])
def test_the_train_command_checkpoints_on_a_signal_and_prints_how_to_resume(tmp_path, signal_number, code):
    process = run_train(tmp_path)
    wait_for(lambda: list(tmp_path.glob("*/step_12.pt")), process)  # training, past its first checkpoint
    process.send_signal(signal_number)
    out, error = process.communicate(timeout=120)
    run_dir = next(tmp_path.glob("tapa__*"))
    assert process.returncode == code, error
    assert f"continue with: tapa-ai train --resume {run_dir}" in error and "Traceback" not in error
    stopped = load_checkpoint(run_dir / "latest.pt")
    assert stopped.games >= 12 and f"at {stopped.games} games" in error


def test_distributed_training_stops_its_actors_and_checkpoints_the_learner_on_a_signal(tmp_path):
    from tapa_ai.training.distributed import DistributedTrainer
    from tapa_ai.training.trainer import TrainingStopped, new_run_directory, resume_checkpoint

    config = tiny_config(tmp_path, "run.total_games=100000", "eval.every_games=100000", "distributed.workers=2",
                         "distributed.games_per_batch=2")
    trainer = DistributedTrainer(config, new_run_directory(config))
    seen = []

    def on_batch(batch):
        seen.append(batch)
        if len(seen) == 3:
            # Ctrl-C in a terminal reaches the whole process group: the actors ignore it, the learner stops.
            for pid in trainer.pool.pids():
                os.kill(pid, signal.SIGINT)
            time.sleep(1.0)
            assert all(slot.process.is_alive() for slot in trainer.pool.slots)
            os.kill(os.getpid(), signal.SIGINT)

    trainer.on_batch = on_batch
    with pytest.raises(TrainingStopped):
        trainer.train(progress=False)
    assert trainer.restarts == 0 and trainer.pool is None
    actors = [process for process in __import__("multiprocessing").active_children() if "actor" in process.name]
    assert actors == []  # all stopped and joined
    checkpoint = load_checkpoint(trainer.run_dir / "latest.pt")
    assert checkpoint.games == trainer.games > 0 and checkpoint.extra["learner_updates"] == trainer.updates
    run_dir, checkpoint = resume_checkpoint(trainer.run_dir)
    assert checkpoint.games == trainer.games


def test_an_actor_still_starting_ignores_ctrl_c(tmp_path):
    """Ctrl-C reaches the whole process group; an actor still importing its modules (seconds, more with a cold
    numba cache) must not die of it: it starts with SIGINT ignored, inherited from the learner."""
    from tapa_ai.training.distributed import ProcessActors

    config = tiny_config(tmp_path, "distributed.workers=1")
    pool = ProcessActors(config, 1, 0, [("weights", (2,))])
    # the learner's own handler: Python's default_int_handler, or SIG_IGN where the test run itself was started
    # in the background of a non-interactive shell (`cmd &` ignores SIGINT)
    before = signal.getsignal(signal.SIGINT)
    try:
        pool._launch(0)
        os.kill(pool.pids()[0], signal.SIGINT)  # at once: the child is still starting Python
        time.sleep(1.0)
        assert pool.slots[0].process.is_alive()
        assert signal.getsignal(signal.SIGINT) is before  # the learner's own is back
    finally:
        pool.close()


def test_a_stopping_learner_does_not_replace_lost_actors(tmp_path):
    from tapa_ai.training.distributed import ProcessActors

    pool = ProcessActors(tiny_config(tmp_path), 1, 0, [("weights", (2,))])
    pool.stopping = True
    pool._replace(0, "killed by the same SIGTERM as the learner")
    assert pool.slots == [None] and pool.restarts == 0


# --- 2. a damaged latest.pt: resume from the newest good checkpoint, and say so -------------------------


def test_resume_falls_back_past_a_damaged_latest_and_says_so_in_one_line(trained_run, tmp_path, capsys):
    from tapa_ai.cli import main

    run = copy_run(trained_run, tmp_path)
    (run / "latest.pt").write_bytes((run / "latest.pt").read_bytes()[:1000])  # truncated, as by a full disk
    assert main(["train", "--quiet", "--resume", str(run), "--set", "run.total_games=24"]) == 0
    captured = capsys.readouterr()
    skipped = [line for line in captured.err.splitlines() if "newest good checkpoint" in line]
    assert len(skipped) == 1 and "Traceback" not in captured.err
    assert f"{run / 'latest.pt'} is not a tapa-ai checkpoint" in skipped[0]
    assert f"resuming from {run / 'step_12.pt'}, the newest good checkpoint (12 games)" in skipped[0]
    assert "resuming" in captured.out and load_checkpoint(run / "latest.pt").games >= 24


def test_resume_tries_the_numbered_checkpoints_newest_first(trained_run, tmp_path):
    import shutil

    from tapa_ai.training.trainer import resume_checkpoint

    run = copy_run(trained_run, tmp_path)
    shutil.copy(run / "step_12.pt", run / "step_5.pt")  # an older good one
    (run / "latest.pt").write_bytes(b"junk")
    (run / "step_12.pt").write_bytes(b"junk")
    lines = []
    run_dir, checkpoint = resume_checkpoint(run, report=lines.append)
    assert checkpoint.path == run / "step_5.pt" and run_dir == run
    assert len(lines) == 1 and "(1 more skipped); resuming from" in lines[0]


# --- 3. one trainer at a time in a run directory -----------------------------------------------------


def hold_lock(directory):
    """A child process holding ``directory``'s run lock until killed."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from tapa_ai.net.checkpoint_dir import RunLock; RunLock(sys.argv[1]).acquire(); "
        "print('held', flush=True); time.sleep(600)"), str(directory)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_trainer_in_a_run_directory_is_refused_naming_the_holder(trained_run, tmp_path, capsys):
    from tapa_ai.cli import main

    run = copy_run(trained_run, tmp_path)
    in_flight = run / ".tapa-ai-checkpoint-latest.pt.abc.tmp"  # the holder's checkpoint being written
    in_flight.write_bytes(b"half")
    holder = hold_lock(run)
    try:
        assert main(["train", "--quiet", "--resume", str(run), "--set", "run.total_games=24"]) == 2
        error = capsys.readouterr().err
        assert f"run directory {run} is in use: another tapa-ai train (pid {holder.pid})" in error
        assert error.count("\n") == 1 and in_flight.exists()  # refused before touching anything
        assert load_checkpoint(run / "latest.pt").games == 12
    finally:
        holder.kill()  # a crash: the operating system drops its lock
        holder.wait()
    assert main(["train", "--quiet", "--resume", str(run), "--set", "run.total_games=24"]) == 0
    assert not in_flight.exists()  # stale once its writer is gone: cleaned up
    assert load_checkpoint(run / "latest.pt").games >= 24


def test_the_lock_is_reentrant_in_one_process_and_released_after_training(tmp_path):
    from tapa_ai.net.checkpoint_dir import RunDirectoryBusy, RunLock
    from tapa_ai.training.trainer import Trainer, new_run_directory

    config = tiny_config(tmp_path, "run.total_games=8")
    trainer = Trainer(config, new_run_directory(config))
    with RunLock(trainer.run_dir):
        trainer.train(progress=False)  # takes the lock this process already holds
    holder = hold_lock(trainer.run_dir)  # free again: another process can take it
    try:
        with pytest.raises(RunDirectoryBusy, match=f"pid {holder.pid}"):
            trainer.train(progress=False)
    finally:
        holder.kill()
        holder.wait()


# --- 4. a full disk: one line naming the file, the last good checkpoint untouched ---------------------


def test_a_full_disk_is_one_line_naming_the_file_and_keeps_the_last_checkpoint(tmp_path, capsys, monkeypatch):
    import errno

    import tapa_ai.net.checkpoint as checkpoint_module
    from tapa_ai.cli import main

    real_save = torch.save

    def save_until_the_disk_fills(obj, handle):
        if obj["counters"]["games"] >= 24:
            handle.write(b"PK\x03\x04 as much as fitted")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_save(obj, handle)

    monkeypatch.setattr(checkpoint_module.torch, "save", save_until_the_disk_fills)
    assert main(["train", "--quiet", *sum((["--set", s] for s in [*TINY, f"checkpoint.directory={tmp_path}"]), [])]) \
        == 2
    error = capsys.readouterr().err
    run = next(tmp_path.glob("tapa__*"))
    assert error.count("\n") == 1 and "Traceback" not in error
    assert f"cannot write {run / 'latest.pt'}: No space left on device" in error
    assert f"tapa-ai train --resume {run}" in error
    assert load_checkpoint(run / "latest.pt").games == 12 and load_checkpoint(run / "step_12.pt").games == 12
    assert not list(run.glob("*.tmp"))


# --- 8. saved games read with bounds; the engine ends quietly when its reader goes away ---------------


def play_load(path):
    import io
    from contextlib import redirect_stderr

    from tapa_ai.cli import main

    errors = io.StringIO()
    with redirect_stderr(errors):
        code = main(["play", "--load", str(path)])  # every caller's file is refused before the game starts
    return code, errors.getvalue()


@pytest.mark.parametrize("nesting", [70, 200_000], ids=["deeper-than-a-save", "past-the-recursion-limit"])
def test_play_load_of_a_deeply_nested_file_is_one_clear_line(tmp_path, nesting):
    path = tmp_path / "deep.json"
    path.write_text('{"points": ' + "[" * nesting + "]" * nesting + "}")
    code, error = play_load(path)
    assert code == 2 and "nests arrays or objects more than 64 deep" in error
    assert error.count("\n") == 1 and "Recursion" not in error


def test_play_load_of_an_endless_or_huge_file_stops_reading_at_the_limit(tmp_path):
    from tapa_ai.play.saves import MAX_FILE_BYTES

    huge = tmp_path / "huge.json"
    with open(huge, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 10)  # sparse: no disk needed
    for path in (huge, "/dev/zero"):
        if not os.path.exists(path):
            continue
        code, error = play_load(path)
        assert code == 2 and "is larger than 16 MB: not a saved game" in error and error.count("\n") == 1


def test_read_file_still_reads_a_position_file(tmp_path):
    import json

    from tapa_ai.notation.json_position import position_to_json
    from tapa_ai.play.saves import load_game, read_file
    from tapa_ai.rules.position import start_position

    path = tmp_path / "start.json"
    path.write_text(json.dumps(position_to_json(start_position(variant_rules("tapa"))), indent=1))
    assert load_game(read_file(path)).rules.name == "tapa"


def test_engine_serve_ends_quietly_when_its_output_is_closed():
    import io

    from tapa_ai.engine.protocol import serve

    class ClosedPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    requests = io.BytesIO(b'{"cmd": "start", "variant": "tapa", "id": 1}\n' * 3)
    assert serve(stdin=requests, stdout=ClosedPipe()) == 0


def test_engine_piped_into_head_exits_without_a_traceback(tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b'{"cmd": "start", "variant": "tapa", "id": 1}\n' * 20_000)  # far more than a pipe holds
    with open(requests, "rb") as stdin:
        engine = subprocess.Popen([sys.executable, "-c", "import sys; from tapa_ai.cli import main; sys.exit(main())",
                                   "engine"], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        head = subprocess.Popen(["head", "-1"], stdin=engine.stdout, stdout=subprocess.PIPE)
        engine.stdout.close()  # head holds the only reader: when it exits, the engine's output is a broken pipe
        first, _ = head.communicate(timeout=120)
        error = engine.stderr.read()
        engine.wait(timeout=120)
    assert b'"id": 1' in first or b'"id":1' in first
    assert engine.returncode == 0 and b"Traceback" not in error and b"BrokenPipe" not in error, error


def test_ray_actors_are_stopped_and_the_learner_checkpoints_on_sigterm(tmp_path):
    ray = require("ray")
    from tapa_ai.ray_cluster import LOCAL, RayUnavailable, connect, disconnect
    from tapa_ai.training.distributed import DistributedTrainer
    from tapa_ai.training.trainer import TrainingStopped, new_run_directory

    try:
        connected = connect(LOCAL, num_cpus=2)
    except RayUnavailable:  # a loaded machine's raylet can miss its start (ray-project/ray#65983)
        ray.shutdown()
        connected = connect(LOCAL, num_cpus=2)
    try:
        config = tiny_config(tmp_path, "run.total_games=100000", "eval.every_games=100000", "distributed.workers=2",
                             "distributed.games_per_batch=2")
        trainer = DistributedTrainer(config, new_run_directory(config), ray_address="auto")
        seen = []

        handles = []

        def on_batch(batch):
            seen.append(batch)
            if len(seen) == 3:
                handles.extend(trainer.pool.handles)
                os.kill(os.getpid(), signal.SIGTERM)

        trainer.on_batch = on_batch
        with pytest.raises(TrainingStopped) as stopped:
            trainer.train(progress=False)
        assert stopped.value.exit_code == 143 and trainer.pool is None and trainer.restarts == 0
        for handle in handles:  # killed on the way out
            # ray.kill is asynchronous: a call sent straight to the actor can still be answered before the
            # kill reaches it, so the actor must be gone within a bound, not at once.
            deadline = time.monotonic() + 60
            with pytest.raises(ray.exceptions.RayActorError):
                while time.monotonic() < deadline:
                    ray.get(handle.pid.remote(), timeout=60)
                    time.sleep(0.2)
        assert load_checkpoint(trainer.run_dir / "latest.pt").games == trainer.games > 0
    finally:
        disconnect(connected)


def test_sigterm_before_training_starts_is_a_clean_exit_that_leaves_nothing(tmp_path, monkeypatch, capsys):
    import tapa_ai.training.cli_train as command

    def terminated_while_building(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # e.g. while numba compiles, before the loop takes signals over
        pytest.fail("SIGTERM did not end the command")

    monkeypatch.setattr(command, "make_trainer", terminated_while_building)
    before = signal.getsignal(signal.SIGTERM)
    code = command.train_command(config_file=None, resume=None, overrides=[*TINY, f"checkpoint.directory={tmp_path}"])
    assert code == 143 and "terminated (SIGTERM): nothing was saved yet" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [] and signal.getsignal(signal.SIGTERM) == before  # given back


def test_a_run_directory_that_cannot_be_written_is_one_line(trained_run, tmp_path, capsys, monkeypatch):
    import errno

    import tapa_ai.net.checkpoint_dir as checkpoint_dir
    from tapa_ai.cli import main

    run = copy_run(trained_run, tmp_path)
    real_open = os.open

    def read_only(path, flags, *args):
        if flags & os.O_CREAT:  # as in a directory without write permission (root would not see it)
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(checkpoint_dir.os, "open", read_only)
    assert main(["train", "--quiet", "--resume", str(run), "--set", "run.total_games=24"]) == 2
    error = capsys.readouterr().err
    assert f"cannot write {run / '.tapa-ai-train.lock'}: Permission denied" in error and error.count("\n") == 1
