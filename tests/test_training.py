"""Self-play training: lambda-returns, a tiny run that checkpoints and resumes identically, clear errors."""

import numpy as np
import pytest
import torch

from tapa_ai.cli import main
from tapa_ai.config import load_config
from tapa_ai.net.checkpoint import load_checkpoint
from tapa_ai.rules.outcomes import swap_sides
from tapa_ai.training.selfplay import SelfPlay, lambda_returns
from tapa_ai.training.trainer import Trainer, new_run_directory, resume_checkpoint

TINY = ["run.total_games=24", "selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64",
        "eval.every_games=12", "eval.games=8", "checkpoint.every_games=12", "logging.log_every_games=6",
        "logging.tensorboard=false"]


def tiny_config(tmp_path, *extra):
    return load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}", *extra])


def test_lambda_zero_targets_are_the_next_values():
    values = np.random.default_rng(0).dirichlet(np.ones(7), size=5).astype(np.float32)
    assert np.allclose(lambda_returns(values, 0.0), values)


def test_lambda_one_targets_are_the_final_outcome_from_each_movers_side():
    values = np.random.default_rng(1).dirichlet(np.ones(7), size=4).astype(np.float32)
    values[-1] = np.eye(7)[0]  # the last mover won a single game
    targets = lambda_returns(values, 1.0)
    # Turns alternate: the last mover wins, the one before it lost.
    assert np.allclose(targets[3], np.eye(7)[0]) and np.allclose(targets[2], swap_sides(np.eye(7)[0]))
    assert np.allclose(targets[1], np.eye(7)[0]) and np.allclose(targets[0], swap_sides(np.eye(7)[0]))


def test_lambda_return_mixes_bootstrap_and_later_targets():
    values = np.array([[0.5, 0, 0, 0.5, 0, 0], [0, 0, 0, 1.0, 0, 0]], dtype=np.float32)
    targets = lambda_returns(values, 0.25)
    expected_first = 0.75 * values[0] + 0.25 * swap_sides(values[1])
    assert np.allclose(targets[0], expected_first)


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_selfplay_games_finish_and_state_round_trips(variant, tmp_path):
    config = tiny_config(tmp_path, f"run.variant={variant}")
    trainer = Trainer(config, new_run_directory(config))
    finished = []
    while len(finished) < 4:
        finished += trainer.selfplay.play_ply(0.1)
    for game in finished:
        assert game.states.shape == (game.turns, 52) and np.allclose(game.next_values.sum(1), 1.0, atol=1e-5)
        assert game.next_values[-1].max() == 1.0  # the last turn's value is the exact outcome
    state = trainer.selfplay.state_dict()
    copy = SelfPlay(trainer.rules, trainer.net, config.selfplay.parallel_games, np.random.default_rng(5))
    copy.load_state_dict(state)
    assert np.array_equal(copy.batch.board, trainer.selfplay.batch.board)
    assert copy.turns.tolist() == trainer.selfplay.turns.tolist() and trainer.selfplay.turns.any()
    for game in range(copy.size):
        for mine, theirs in zip(copy.trajectory(game), trainer.selfplay.trajectory(game)):
            assert np.array_equal(mine, theirs)


def test_training_resumes_exactly_as_an_uninterrupted_run(tmp_path):
    whole = tiny_config(tmp_path / "whole")
    uninterrupted = Trainer(whole, new_run_directory(whole))
    uninterrupted.train(progress=False)

    first_half = tiny_config(tmp_path / "split", "run.total_games=12")
    split = Trainer(first_half, new_run_directory(first_half))
    split.train(progress=False)
    run_dir, checkpoint = resume_checkpoint(split.run_dir)
    assert checkpoint.games == split.games >= 12
    config = checkpoint.train_config()
    config.run.total_games = 24
    resumed = Trainer(config, run_dir, checkpoint)
    resumed.train(progress=False)

    assert resumed.games == uninterrupted.games and resumed.steps == uninterrupted.steps
    for name, tensor in uninterrupted.net.state_dict().items():
        assert torch.equal(tensor, resumed.net.state_dict()[name]), name
    assert [e.ppg for e in resumed.evaluations] == [e.ppg for e in uninterrupted.evaluations]


def test_overlapped_learning_resumes_exactly_and_is_deterministic(tmp_path):
    def run(directory, total, resume_from=None):
        if resume_from is None:
            config = tiny_config(tmp_path / directory, "learning.overlap=true", f"run.total_games={total}")
            trainer = Trainer(config, new_run_directory(config))
        else:
            run_dir, checkpoint = resume_checkpoint(resume_from)
            config = checkpoint.train_config()
            config.run.total_games = total
            trainer = Trainer(config, run_dir, checkpoint)
        trainer.train(progress=False)
        return trainer

    whole = run("whole", 24)
    assert whole.play_net is not whole.net and whole.steps > 0
    again = run("again", 24)  # however the learner thread and self-play interleaved
    split = run("split", 12)
    checkpoint = load_checkpoint(split.run_dir / "latest.pt")
    # The checkpoint keeps the weights self-play plays with: the net's before its last learning pass.
    assert checkpoint.extra["play_weights"] is not None
    assert any(not torch.equal(checkpoint.extra["play_weights"][k], v) for k, v in checkpoint.model_state.items())
    resumed = run("split", 24, resume_from=split.run_dir)
    for trainer in (again, resumed):
        assert trainer.games == whole.games and trainer.steps == whole.steps
        for name, tensor in whole.net.state_dict().items():
            assert torch.equal(tensor, trainer.net.state_dict()[name]), name


def test_overlapped_learning_plays_one_pass_behind_the_net(tmp_path):
    config = tiny_config(tmp_path, "learning.overlap=true", "run.total_games=100000")
    trainer = Trainer(config, new_run_directory(config))
    checks, handed = [], []
    start_learning = trainer.learner.start_learning
    names = ("first_weights", "first_bias", "point_table", "dense_weights", "dense_bias")

    def watched(games, games_played):
        from tapa_ai.net.fast_eval import FastEvaluator

        if handed and handed[-1] is not None:
            # The trainer gave self-play the evaluator the last call handed back (the learner knows no self-play).
            cached = trainer.selfplay.evaluator.model.current()
            assert all(np.array_equal(getattr(cached, n), getattr(handed[-1], n)) for n in names)
        trainer.join_learning()  # the pass in flight (start_learning would finish it first)
        before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
        loss, weights = start_learning(games, games_played)
        handed.append(weights)
        # The evaluator handed back (built by the learner thread at the end of the last pass) is the one the
        # weights self-play now plays give.
        fresh = FastEvaluator.from_net(trainer.play_net)
        if weights is not None:
            for name in names:
                assert np.array_equal(getattr(weights, name), getattr(fresh, name)), name
        played = trainer.play_net.state_dict()
        same_as_before = all(torch.equal(before[k], v) for k, v in played.items())
        trainer.join_learning()  # the pass just started: the net moves on, self-play's weights do not
        moved = any(not torch.equal(v, played[k]) for k, v in trainer.net.state_dict().items())
        checks.append((same_as_before, moved))
        return loss, weights

    trainer.learner.start_learning = watched
    trainer.train(progress=False, should_stop=lambda: len(checks) >= 4)
    assert checks == [(True, True)] * len(checks) and len(checks) >= 4
    assert sum(weights is not None for weights in handed) >= 3  # every pass after the first hands its weights


def test_overlap_needs_the_lambda_return_method():
    from tapa_ai.config import ConfigError, loads_config

    with pytest.raises(ConfigError, match="overlap=true needs learning.method='lambda-return'"):
        loads_config('[learning]\nmethod = "online-traces"\noverlap = true\n')


def test_resume_takes_a_new_learning_rate_and_resets_best_when_opponents_change(tmp_path):
    from tapa_ai.config import apply_overrides

    config = tiny_config(tmp_path, "run.total_games=12")
    first = Trainer(config, new_run_directory(config))
    first.train(progress=False)
    assert first.best_score > -float("inf")
    run_dir, checkpoint = resume_checkpoint(first.run_dir)
    same = Trainer(checkpoint.train_config(), run_dir, checkpoint)
    assert same.best_score == first.best_score
    assert [g["lr"] for g in same.learner.optimizer.param_groups] == [config.learning.learning_rate]
    changed = apply_overrides(checkpoint.train_config(),
                              ["learning.learning_rate=0.0003", "eval.opponents=[heuristic]"])
    resumed = Trainer(changed, run_dir, checkpoint)
    assert [g["lr"] for g in resumed.learner.optimizer.param_groups] == [0.0003]
    assert resumed.best_score == -float("inf")


def test_training_writes_self_describing_checkpoints(tmp_path):
    config = tiny_config(tmp_path)
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    checkpoint = load_checkpoint(trainer.run_dir / "latest.pt")
    assert checkpoint.encoding == ("tapa-td", 1) and checkpoint.games == trainer.games
    assert checkpoint.rules().name == "tapa" and checkpoint.train_config() == config
    assert (trainer.run_dir / "best.pt").is_file()


def test_encoding_version_2_trains_records_its_version_and_resumes(tmp_path):
    from tapa_ai.net.checkpoint import load_network

    config = tiny_config(tmp_path, "run.total_games=12", "model.encoding_version=2")
    first = Trainer(config, new_run_directory(config))
    first.train(progress=False)
    checkpoint = load_checkpoint(first.run_dir / "latest.pt")
    assert checkpoint.encoding == ("tapa-td", 2) and checkpoint.model_config["num_features"] == 309
    net = load_network(first.run_dir / "latest.pt")
    assert net.encoding_version == 2 and net.layers[0].in_features == 309
    run_dir, checkpoint = resume_checkpoint(first.run_dir)
    config = checkpoint.train_config()
    config.run.total_games = 24
    resumed = Trainer(config, run_dir, checkpoint)
    resumed.train(progress=False)
    assert resumed.games >= 24 and resumed.net.encoding_version == 2


def test_resume_refuses_to_change_the_network_with_the_option_named(tmp_path):
    from tapa_ai.config import apply_overrides
    from tapa_ai.training.trainer import TrainingError

    config = tiny_config(tmp_path, "run.total_games=8")
    Trainer(config, new_run_directory(config)).train(progress=False)
    run_dir, checkpoint = resume_checkpoint(next(tmp_path.glob("tapa__*")))
    for override, message in (("model.encoding_version=2", "model.encoding_version 1 -> 2"),
                              ("model.hidden=32", "model.hidden 16 -> 32")):
        with pytest.raises(TrainingError, match=f"keeps its network; .*{message}"):
            Trainer(apply_overrides(checkpoint.train_config(), [override]), run_dir, checkpoint)


def test_train_command_learns_and_reports(tmp_path, capsys):
    assert main(["train", "--quiet", *sum((["--set", s] for s in TINY), []),
                 "--set", f"checkpoint.directory={tmp_path}"]) == 0
    out = capsys.readouterr().out
    assert "done: " in out and "vs random" in out and "vs pipcount" in out
    # It ends by saying what to run next, with the model it wrote.
    (run,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    assert f"tapa-ai match net:{run / 'latest.pt'} heuristic" in out and (run / "latest.pt").is_file()
    assert f"tapa-ai play --bot net:{run / 'latest.pt'}" in out and f"--resume {run}" in out


def test_train_command_rejects_a_bad_config_key(tmp_path, capsys):
    assert main(["train", "--set", "model.hiden=8", "--set", f"checkpoint.directory={tmp_path}"]) == 2
    assert "did you mean 'hidden'" in capsys.readouterr().err


def test_train_command_rejects_a_corrupt_checkpoint(tmp_path, capsys):
    bad = tmp_path / "latest.pt"
    bad.write_bytes(b"definitely not a checkpoint")
    assert main(["train", "--resume", str(bad)]) == 2
    error = capsys.readouterr().err
    assert "latest.pt" in error and "Traceback" not in error


def test_train_command_rejects_an_empty_run_directory(tmp_path, capsys):
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "no checkpoint" in capsys.readouterr().err


def test_online_traces_with_lambda_zero_is_one_td0_step_per_game():
    from tapa_ai.config import ModelConfig
    from tapa_ai.net.model import EvaluatorNet
    from tapa_ai.rules import TAPA
    from tapa_ai.training.traces import OnlineTraces

    rng = np.random.default_rng(3)
    features = rng.random((3, 259)).astype(np.float32)
    next_values = rng.dirichlet(np.ones(7), 3).astype(np.float32)
    net = EvaluatorNet(ModelConfig(hidden=8), TAPA, seed=0)
    expected = {name: p.detach().clone() for name, p in net.named_parameters()}
    # By hand: theta += lr / G * sum_g sum_k delta[g, k] * d p_k(x_g) / d theta.
    for g in range(3):
        probabilities = torch.softmax(net(torch.from_numpy(features[g:g + 1])), dim=-1)[0]
        delta = torch.from_numpy(next_values[g]) - probabilities.detach()
        gradients = torch.autograd.grad((probabilities * delta).sum(), list(net.parameters()))
        for (name, _), gradient in zip(net.named_parameters(), gradients):
            expected[name] += 0.5 / 3 * gradient
    OnlineTraces(net, 3, lambda_=0.0, learning_rate=0.5).step(features, next_values, np.ones(3, dtype=bool))
    for name, param in net.named_parameters():
        assert torch.allclose(param, expected[name], atol=1e-6), name


def test_online_traces_decay_and_swap_sides_between_turns():
    from tapa_ai.config import ModelConfig
    from tapa_ai.net.model import EvaluatorNet
    from tapa_ai.rules import TAPA
    from tapa_ai.training.traces import OnlineTraces

    net = EvaluatorNet(ModelConfig(hidden=4), TAPA, seed=0)
    traces = OnlineTraces(net, 1, lambda_=0.5, learning_rate=0.0)
    features = np.random.default_rng(0).random((1, 259)).astype(np.float32)
    values = np.full((1, 7), 1 / 7, dtype=np.float32)
    traces.step(features, values, np.array([True]))
    first = {name: t.clone() for name, t in traces.traces.items()}
    traces.step(features, values, np.array([False]))
    for name, trace in traces.traces.items():
        # Same position twice, no learning: e2 = 0.5 * swap(e1) + J = 0.5 * swap(e1) + e1.
        assert torch.allclose(trace, 0.5 * first[name][:, traces.swap] + first[name], atol=1e-6)
    traces.step(features, values, np.array([True]))
    for name, trace in traces.traces.items():
        assert torch.allclose(trace, first[name], atol=1e-6)


def test_online_traces_method_trains(tmp_path):
    config = tiny_config(tmp_path, "learning.method=online-traces", "learning.learning_rate=0.05")
    trainer = Trainer(config, new_run_directory(config))
    before = {name: p.detach().clone() for name, p in trainer.net.named_parameters()}
    trainer.train(progress=False)
    assert trainer.games >= 24 and trainer.steps > 0
    assert any(not torch.equal(before[n], p) for n, p in trainer.net.named_parameters())


def test_eval_opponents_take_bot_specs_and_reject_bad_ones(tmp_path):
    from tapa_ai.training.trainer import TrainingError

    config = tiny_config(tmp_path, "eval.opponents=[random,heuristic]")
    assert set(Trainer(config, tmp_path / "ok").evaluation.opponents) == {"random", "heuristic"}
    with pytest.raises(TrainingError, match="eval.opponents: 'nosuchbot'"):
        Trainer(tiny_config(tmp_path, "eval.opponents=[nosuchbot]"), tmp_path / "bad")


def test_slim_checkpoint_plays_the_same_and_refuses_to_resume(tmp_path):
    from tapa_ai.net.checkpoint import load_network, slim_checkpoint
    from tapa_ai.net.encoding import encode
    from tapa_ai.movegen.random_positions import playout_positions
    from tapa_ai.training.trainer import TrainingError

    config = tiny_config(tmp_path)
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    full = trainer.run_dir / "latest.pt"
    slim = slim_checkpoint(full, tmp_path / "slim" / "gen1.pt")
    assert slim.stat().st_size < full.stat().st_size
    features = torch.from_numpy(encode(playout_positions(trainer.rules, 16, np.random.default_rng(0))))
    with torch.no_grad():
        assert torch.equal(load_network(full).probabilities(features), load_network(slim).probabilities(features))
    kept = load_checkpoint(slim)
    assert kept.games == trainer.games and "selfplay" not in kept.extra and kept.optimizer_state is None
    with pytest.raises(TrainingError, match="network only"):
        resume_checkpoint(slim)


def test_slim_checkpoint_of_expert_iteration_drops_the_replay_buffer_and_keeps_the_label_count(tmp_path):
    from tapa_ai.net.checkpoint import RESUME_ONLY, slim_checkpoint

    config = tiny_config(tmp_path, "learning.targets=search", "learning.search_plies=1",
                         "learning.search_fraction=0.2", "learning.overlap=true")
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    full = load_checkpoint(trainer.run_dir / "latest.pt")
    assert full.extra["replay"]["labels"] == trainer.labels_added > 0 and full.extra["play_weights"] is not None
    slim = load_checkpoint(slim_checkpoint(full.path, tmp_path / "slim.pt"))
    assert not set(RESUME_ONLY) & set(slim.extra)
    assert slim.extra["search_labels"] == trainer.labels_added
    assert slim.path.stat().st_size < full.path.stat().st_size / 2


def test_slim_checkpoint_with_new_weights_keeps_the_rest_and_refuses_weights_that_do_not_fit(tmp_path):
    from tapa_ai.net.checkpoint import CheckpointError, load_network, slim_checkpoint

    config = tiny_config(tmp_path)
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    full = trainer.run_dir / "latest.pt"
    weights = {name: value + 1.0 for name, value in trainer.net.state_dict().items()}
    derived = slim_checkpoint(full, tmp_path / "derived.pt", model_state=weights, extra={"note": "plus one"})
    kept = load_checkpoint(derived)
    assert kept.games == trainer.games and kept.extra["note"] == "plus one" and kept.extra["slim_of"] == str(full)
    for name, value in load_network(derived).state_dict().items():
        assert torch.equal(value, weights[name])
    wrong = {name: value[..., :1] for name, value in weights.items()}
    with pytest.raises(CheckpointError, match="do not fit"):
        slim_checkpoint(full, tmp_path / "wrong.pt", model_state=wrong)
    assert not (tmp_path / "wrong.pt").exists()


def test_the_first_window_s_clock_starts_after_the_kernels_are_compiled(tmp_path, monkeypatch):
    """The first games/s of a run counts games, not numba's compile: the move generator and self-play's
    evaluator have run (compiled, or loaded from numba's cache) before the first window's clock starts."""
    from tapa_ai.training import schedule

    config = tiny_config(tmp_path)
    trainer = Trainer(config, new_run_directory(config))
    calls = []
    evaluator = trainer.selfplay.evaluator
    original = type(evaluator).afterstate_distributions
    monkeypatch.setattr(type(evaluator), "afterstate_distributions",
                        lambda self, *a, **k: calls.append("evaluate") or original(self, *a, **k))
    window = schedule._Window.__init__
    monkeypatch.setattr(schedule._Window, "__init__", lambda self, *a: calls.append("clock") or window(self, *a))
    trainer.train(progress=False)
    assert calls.index("evaluate") < calls.index("clock")
