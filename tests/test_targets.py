"""Learning targets beyond the sampled roll (1-ply expectations over the 21 rolls) and learning-rate schedules."""

import copy

import numpy as np
import pytest

from tapa_ai.config import ConfigError, load_config, loads_config
from tapa_ai.movegen import generate
from tapa_ai.net.evaluator import TorchEvaluator
from tapa_ai.net.model import EvaluatorNet
from tapa_ai.rules.outcomes import outcome_points, swap_sides
from tapa_ai.config import ModelConfig
from tapa_ai.rules.options import variant_rules
from tapa_ai.training.selfplay import OPENING_WEIGHTS, SelfPlay, lambda_returns, pack_states
from tapa_ai.training.distill import search_targets
from tapa_ai.training.replay import ReplayBuffer
from tapa_ai.training.trainer import Trainer, TrainingError, new_run_directory, resume_checkpoint

ROLLS_AND_WEIGHTS = [((a, b), (1 if a == b else 2) / 36) for a in range(1, 7) for b in range(a, 7)]

TINY = ["run.total_games=16", "selfplay.parallel_games=6", "model.hidden=16", "learning.batch_size=64",
        "eval.every_games=8", "eval.games=4", "checkpoint.every_games=8", "logging.log_every_games=4",
        "logging.tensorboard=false"]


def tiny_config(tmp_path, *extra):
    return load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}", *extra])


def plain_expectation(net, batch, row, opening):
    """The 1-ply expectation of one position, roll by roll: greedy move by equity, torch evaluation."""
    points = outcome_points(net.rules)
    total = np.zeros(net.num_outcomes)
    single = batch.take(np.array([row]))
    for (a, b), weight in ROLLS_AND_WEIGHTS:
        if opening:
            weight = 0.0 if a == b else 1 / 15
        afterstates = generate(single, np.array([[a, b]], dtype=np.int8))
        distributions = TorchEvaluator(net).afterstate_distributions(afterstates, np.float32)
        total += weight * distributions[int(np.argmax(distributions @ points))]
    return total


def test_expected_lambda_returns_end_on_the_exact_outcome():
    expectations = np.random.default_rng(2).dirichlet(np.ones(6), size=3).astype(np.float32)
    outcome = np.eye(6, dtype=np.float32)[1]  # the last mover won a gammon
    assert np.allclose(lambda_returns(expectations, 0.0, outcome), expectations)
    targets = lambda_returns(expectations, 0.5, outcome)
    last = 0.5 * expectations[2] + 0.5 * outcome
    assert np.allclose(targets[2], last)
    assert np.allclose(targets[1], 0.5 * expectations[1] + 0.5 * swap_sides(last))
    assert np.allclose(lambda_returns(expectations, 1.0, outcome)[0], outcome)


def test_opening_roll_weights_leave_out_doubles():
    assert OPENING_WEIGHTS.sum() == pytest.approx(1.0)
    for ((a, b), _), weight in zip(ROLLS_AND_WEIGHTS, OPENING_WEIGHTS):
        assert weight == (0.0 if a == b else pytest.approx(1 / 15))


@pytest.mark.parametrize("variant", ["tapa", "backgammon"])
def test_expected_targets_are_the_average_of_the_best_moves_value_over_the_21_rolls(variant):
    rules = variant_rules(variant)
    net = EvaluatorNet(ModelConfig(layers=2, hidden=[24, 12]), rules, seed=3)
    selfplay = SelfPlay(rules, net, 5, np.random.default_rng(4), expected=True)
    checked = 0
    for _ in range(6):
        before = selfplay.batch.take(np.arange(selfplay.size))
        turns = selfplay.turns.copy()
        selfplay.play_ply(0.0)
        for game in range(selfplay.size):
            if selfplay.turns[game] != turns[game] + 1:
                continue  # the game ended in this ply and was reset
            opening = turns[game] == 0 and rules.opening == "use-opening-dice"
            expected = plain_expectation(net, before, game, opening)
            assert np.abs(selfplay.trajectory(game)[1][-1] - expected).max() < 1e-5
            checked += 1
    assert checked >= 20


def test_expected_self_play_plays_the_drawn_roll_greedily():
    rules = variant_rules("plakoto")
    net = EvaluatorNet(ModelConfig(hidden=16), rules, seed=5)
    selfplay = SelfPlay(rules, net, 4, np.random.default_rng(6), expected=True)
    points = outcome_points(rules)
    for dice in ([[3, 1], [6, 6], [5, 2], [4, 4]], [[2, 1], [6, 5], [3, 3], [1, 1]]):
        dice = np.array(dice, dtype=np.int64)
        selfplay._roll = lambda dice=dice: dice.copy()
        before = selfplay.batch.take(np.arange(4))
        selfplay.play_ply(0.0)
        afterstates = generate(before, dice.astype(np.int8))
        equities = TorchEvaluator(net).afterstate_distributions(afterstates, np.float32) @ points
        for game in range(4):
            rows = np.arange(afterstates.offsets[game], afterstates.offsets[game + 1])
            best = rows[np.argmax(equities[rows])]
            played = selfplay.batch.take(np.array([game])).flipped()
            assert np.array_equal(played.board[0], afterstates.positions.board[best])
            assert np.array_equal(played.pinned[0], afterstates.positions.pinned[best])


def test_finished_expected_games_carry_their_exact_outcome(tmp_path):
    config = tiny_config(tmp_path, "learning.targets=expected")
    trainer = Trainer(config, new_run_directory(config))
    finished = []
    while len(finished) < 3:
        finished += trainer.selfplay.play_ply(0.0)
    for game in finished:
        assert game.outcome is not None and sorted(game.outcome.tolist())[-1] == 1.0 and game.outcome.sum() == 1.0
        assert np.allclose(game.next_values.sum(axis=1), 1.0, atol=1e-5)
        assert np.array_equal(game.targets(0.0), game.next_values)


def assert_resumes_exactly(tmp_path, *overrides):
    """16 games in one run, and 8 then 8 more resumed from the checkpoint: the same games, steps and weights.

    Returns the split run's first half, its checkpoint, the resumed run and the uninterrupted one.
    """
    whole = tiny_config(tmp_path / "whole", *overrides)
    uninterrupted = Trainer(whole, new_run_directory(whole))
    uninterrupted.train(progress=False)
    half = tiny_config(tmp_path / "split", *overrides, "run.total_games=8")
    split = Trainer(half, new_run_directory(half))
    split.train(progress=False)
    run_dir, checkpoint = resume_checkpoint(split.run_dir)
    config = checkpoint.train_config()
    assert config.learning.targets == whole.learning.targets
    config.run.total_games = 16
    resumed = Trainer(config, run_dir, checkpoint)
    resumed.train(progress=False)
    assert resumed.games == uninterrupted.games and resumed.steps == uninterrupted.steps > 0
    for name, tensor in uninterrupted.net.state_dict().items():
        assert np.array_equal(tensor.numpy(), resumed.net.state_dict()[name].numpy()), name
    return split, checkpoint, resumed, uninterrupted


def test_training_with_expected_targets_resumes_exactly(tmp_path):
    assert_resumes_exactly(tmp_path, "learning.targets=expected")


def test_expected_targets_need_the_lambda_return_method():
    with pytest.raises(ConfigError, match="needs learning.method='lambda-return'"):
        loads_config('[learning]\nmethod = "online-traces"\ntargets = "expected"\n')


# -- expert iteration: search targets from a replay buffer -------------------------------------------
SEARCH = ["learning.targets=search", "learning.search_plies=1", "learning.search_fraction=0.5",
          "learning.replay_size=300", "learning.replay_ratio=2"]


def test_replay_buffer_is_a_ring_of_the_newest_rows():
    buffer = ReplayBuffer(5, 2, 1)
    buffer.add(np.array([[1, 1], [2, 2], [3, 3]], np.int8), np.array([[1.0], [2.0], [3.0]], np.float32))
    buffer.add(np.array([[4, 4], [5, 5], [6, 6], [7, 7]], np.int8), np.array([[4.0], [5.0], [6.0], [7.0]], np.float32))
    assert len(buffer) == 5 and buffer.next == 2
    assert sorted(buffer.states[:, 0].tolist()) == [3, 4, 5, 6, 7]
    assert np.array_equal(buffer.states[:, 0].astype(np.float32), buffer.targets[:, 0])  # rows stay paired
    states, targets = buffer.sample(50, np.random.default_rng(0))
    assert set(states[:, 0].tolist()) <= {3, 4, 5, 6, 7} and np.array_equal(states[:, 0].astype(np.float32), targets[:, 0])
    copy = ReplayBuffer(5, 2, 1)
    copy.load_state_dict(buffer.state_dict())
    assert np.array_equal(copy.states, buffer.states) and copy.next == buffer.next
    with pytest.raises(ValueError, match="replay_size cannot change on resume"):
        ReplayBuffer(6, 2, 1).load_state_dict(buffer.state_dict())
    with pytest.raises(ValueError, match="empty"):
        ReplayBuffer(3, 2, 1).sample(1, np.random.default_rng(0))


def test_search_targets_label_a_sample_of_the_played_positions(tmp_path):
    config = tiny_config(tmp_path, *SEARCH)
    trainer = Trainer(config, new_run_directory(config))
    games = []
    while len(games) < 2:
        games += trainer.selfplay.play_ply(0.0)
    states = np.concatenate([game.states for game in games])
    rng = copy.deepcopy(trainer.rng)
    picked = states[rng.random(len(states)) < 0.5]
    expected = search_targets(trainer.net, picked, 1, rng)
    trainer.learner.label(states)
    drawn, targets = trainer.learner.draw_replay()
    assert len(trainer.replay) == len(picked) > 0
    assert np.array_equal(trainer.replay.states[:len(picked)], picked)
    assert np.allclose(trainer.replay.targets[:len(picked)], expected, atol=1e-6)
    # replay_ratio 2: two rows drawn per newly labelled one, each a buffer row with its own label.
    assert len(drawn) == 2 * len(picked)
    for state, target in zip(drawn, targets):  # (a position played twice may carry two labels: other rolls)
        same = (picked == state).all(axis=1)
        assert same.any() and np.abs(expected[same] - target).max(axis=1).min() < 1e-6


def test_training_with_search_targets_resumes_exactly(tmp_path):
    split, checkpoint, resumed, uninterrupted = assert_resumes_exactly(tmp_path, *SEARCH)
    assert len(checkpoint.extra["replay"]["states"]) == len(split.replay) > 0
    # The count of search labels is the run's, kept in the checkpoint: the resumed run counts on from it.
    assert checkpoint.extra["replay"]["labels"] == split.labels_added > 0
    assert resumed.labels_added == uninterrupted.labels_added > split.labels_added


def test_search_targets_switched_on_at_resume_start_an_empty_replay_buffer(tmp_path, capsys):
    plain = tiny_config(tmp_path, "run.total_games=8")
    first = Trainer(plain, new_run_directory(plain))
    first.train(progress=False)
    run_dir, checkpoint = resume_checkpoint(first.run_dir)
    config = checkpoint.train_config()
    config.learning.targets = "search"
    config.learning.search_plies = 1
    config.run.total_games = 16
    switched = Trainer(config, run_dir, checkpoint)
    assert "empty replay buffer" in capsys.readouterr().err
    assert len(switched.replay) == 0 and switched.games == 8
    switched.train(progress=False)
    assert switched.games >= 16 and len(switched.replay) > 0
    _, saved = resume_checkpoint(run_dir)
    assert len(saved.extra["replay"]["states"]) == len(switched.replay)


# -- learning-rate schedules --------------------------------------------------------------------------


@pytest.mark.parametrize("schedule, middle", [("linear", 5.5e-4), ("cosine", 5.5e-4), ("constant", 1e-3)])
def test_learning_rate_schedules(schedule, middle):
    learning = loads_config(f'[learning]\nlr_schedule = "{schedule}"\nlearning_rate = 0.001\n'
                            "learning_rate_final = 0.0001\nlr_decay_start_games = 100\nlr_decay_games = 1000\n").learning
    final = 1e-4 if schedule != "constant" else 1e-3
    assert learning.rate(0) == learning.rate(100) == 1e-3
    assert learning.rate(600) == pytest.approx(middle)
    assert learning.rate(1100) == learning.rate(10**9) == pytest.approx(final)
    if schedule == "cosine":
        # Slower than linear at first, faster later.
        assert learning.rate(350) > 1e-3 - 0.25 * 9e-4 and learning.rate(850) < 1e-3 - 0.75 * 9e-4


@pytest.mark.parametrize("method", ["lambda-return", "online-traces"])
def test_trainer_follows_the_learning_rate_schedule(tmp_path, method):
    config = tiny_config(tmp_path, f"learning.method={method}", "learning.lr_schedule=linear",
                         "learning.lr_decay_games=10", "learning.learning_rate_final=0.0002")
    trainer = Trainer(config, new_run_directory(config))
    trainer.train(progress=False)
    assert trainer.games >= 16
    if method == "online-traces":
        assert trainer.learner.traces.learning_rate == pytest.approx(2e-4)
    else:
        assert [group["lr"] for group in trainer.learner.optimizer.param_groups] == [pytest.approx(2e-4)]


# -- bear-off targets (learning.bearoff_targets) ------------------------------------------------------


def random_bearoff_batch(variant, count, seed):
    from tapa_ai.movegen import PositionBatch
    from tests.test_bearoff import random_bearoffs

    return PositionBatch.from_positions(random_bearoffs(variant, count, np.random.default_rng(seed)))


@pytest.mark.parametrize("bearoff", [True, False])
def test_bearoff_targets_keep_the_databases_value_of_the_best_bear_off_move(bearoff):
    from tapa_ai.bearoff.evaluate import bearoff_distributions

    rules = variant_rules("tapa")
    net = EvaluatorNet(ModelConfig(hidden=16), rules, seed=5)
    points = outcome_points(rules)
    games = 40
    selfplay = SelfPlay(rules, net, games, np.random.default_rng(6), bearoff=bearoff)
    selfplay.batch = random_bearoff_batch("tapa", games, 7)
    before = selfplay.batch.take(np.arange(games))
    rng = copy.deepcopy(selfplay.rng)
    dice = rng.integers(1, 7, size=(games, 2))  # the dice play_ply draws next (no opening turn here: turns > 0)
    selfplay.turns[:] = 1
    selfplay.play_ply(0.0)
    differs = checked = 0
    for game in range(games):
        if selfplay.turns[game] != 2:
            continue  # the move bore off the last checker: the game ended and was reset
        checked += 1
        afterstates = generate(before.take(np.array([game])), dice[game:game + 1].astype(np.int8))
        going_on = np.flatnonzero(~afterstates.game_over)
        exact = np.zeros((len(afterstates), net.num_outcomes))
        exact[going_on] = swap_sides(bearoff_distributions(afterstates.positions.take(going_on).flipped())[1])
        exact[afterstates.game_over] = TorchEvaluator(net).afterstate_distributions(afterstates, np.float32)[afterstates.game_over]
        kept = selfplay.trajectory(game)[1][-1]
        if bearoff:
            # The kept value is the database's value of the move that is best by it.
            assert kept @ points == pytest.approx((exact @ points).max(), abs=1e-6)
            assert np.abs(exact - kept).max(axis=1).min() < 1e-6
        else:
            network = TorchEvaluator(net).afterstate_distributions(afterstates, np.float32)
            assert np.abs(network - kept).max(axis=1).min() < 1e-5
            differs += np.abs(exact - kept).max(axis=1).min() > 1e-3
    assert checked >= 30 and (bearoff or differs > 20)  # an untrained net is far from the databases' values


def test_bearoff_targets_config_reaches_self_play_and_search_labels(tmp_path):
    config = tiny_config(tmp_path, "learning.bearoff_targets=true", *SEARCH)
    trainer = Trainer(config, new_run_directory(config))
    plain = tiny_config(tmp_path / "plain")
    assert trainer.selfplay.bearoff and not Trainer(plain, new_run_directory(plain)).selfplay.bearoff
    states = pack_states(random_bearoff_batch("tapa", 12, 8))
    exact = search_targets(trainer.net, states, 0, np.random.default_rng(9), bearoff=True)
    network = search_targets(trainer.net, states, 0, np.random.default_rng(9))
    assert np.abs(exact - network).max() > 1e-3
    trainer.train(progress=False)
    assert trainer.games >= 16
