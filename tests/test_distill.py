"""Learning from search: the distillation targets equal a plain expectimax on the reference rules; fits and reports."""

import json

import numpy as np
import pytest
import torch

from tapa_ai.bots.base import BotError
from tapa_ai.bots.search import sampled_rolls
from tapa_ai.rules.rolls import ROLL_WEIGHTS, ROLLS
from tapa_ai.config import ConfigError, load_config
from tapa_ai.net.checkpoint import load_network, save_checkpoint
from tapa_ai.config import ModelConfig
from tapa_ai.net.encoding import ENCODING_NAME
from tapa_ai.net.model import EvaluatorNet
from tapa_ai.rules.outcomes import outcome_points
from tapa_ai.movegen import PositionBatch
from tapa_ai.notation.mini import board
from tapa_ai.rules import variant_rules
from tapa_ai.rules.reference import legal_moves
from tapa_ai.training.distill import (DistillError, collect_states, distill, experiment, fit, label_noise,
                                      search_targets, student_of)
from tapa_ai.training.selfplay import pack_states, unpack_states

from .test_search import SMALL, brute_value, small_net


def plain_target(net, position, plies):
    """Average over the 21 rolls of the best move's ``plies``-ply value (all moves searched), by plain loops."""
    points = outcome_points(net.rules).astype(np.float64)
    cache = {}
    total = np.zeros(net.num_outcomes)
    for roll, weight in zip(ROLLS.tolist(), ROLL_WEIGHTS):
        values = [brute_value(net, move.position, plies, cache) for move in legal_moves(position, tuple(roll))]
        total += weight * values[int(np.argmax([v @ points for v in values]))]
    return total


@pytest.mark.parametrize("variant,layout,_dice", [SMALL[1], SMALL[2], SMALL[4]])
@pytest.mark.parametrize("plies", [0, 1])
def test_all_roll_targets_equal_a_plain_expectimax(variant, layout, _dice, plies):
    net = small_net(variant, seed=7)
    position = board(variant, layout, "X")
    states = pack_states(PositionBatch.from_positions([position]))
    targets = search_targets(net, states, plies, rolls="all", candidates=None, margin=None)
    np.testing.assert_allclose(targets[0], plain_target(net, position, plies), atol=3e-5)


def test_a_sampled_target_is_the_value_after_one_of_the_rolls():
    variant, layout, _ = SMALL[1]
    net = small_net(variant, seed=7)
    position = board(variant, layout, "X")
    points = outcome_points(net.rules).astype(np.float64)
    per_roll = []
    for roll in ROLLS.tolist():
        values = [brute_value(net, move.position, 0, {}) for move in legal_moves(position, tuple(roll))]
        per_roll.append(values[int(np.argmax([v @ points for v in values]))])
    states = np.repeat(pack_states(PositionBatch.from_positions([position])), 30, axis=0)
    targets = search_targets(net, states, 0, np.random.default_rng(3), rolls="sample")
    distance = np.abs(targets[:, None, :] - np.array(per_roll)[None]).max(axis=2)  # (30, 21)
    assert (distance.min(axis=1) < 3e-5).all()
    assert len({tuple(row) for row in targets.round(5).tolist()}) > 1  # different rolls were drawn


def test_sampled_rolls_are_distinct_rolls_whose_weights_average_to_the_roll_probabilities():
    owner, roll, weight = sampled_rolls(3, 36, np.random.default_rng(0))  # every die drawn: the exact weights
    assert np.array_equal(owner, np.repeat(np.arange(3), 21)) and np.array_equal(roll, np.tile(np.arange(21), 3))
    np.testing.assert_allclose(weight, np.tile(ROLL_WEIGHTS, 3), rtol=1e-12)
    owner, roll, weight = sampled_rolls(20000, 5, np.random.default_rng(1))
    assert np.isin(weight, [0.2, 0.4]).all()  # 1/5, or 2/5 for a roll drawn in both orders of its dice
    assert (np.bincount(owner) + np.bincount(owner, weights=weight == 0.4) == 5).all()  # five dice each
    np.testing.assert_allclose(np.bincount(owner, weights=weight), 1.0, rtol=1e-12)
    assert all(np.unique(roll[owner == i]).size == (owner == i).sum() for i in range(50))  # distinct rolls
    doubles = np.flatnonzero(ROLLS[:, 0] == ROLLS[:, 1])
    assert (weight[np.isin(roll, doubles)] == 0.2).all()
    mean = np.bincount(roll, weights=weight, minlength=21) / 20000
    np.testing.assert_allclose(mean, ROLL_WEIGHTS, atol=0.002)  # unbiased: each roll's probability
    for bad in (0, 37, 2.5):
        with pytest.raises(BotError, match="1 to 36"):
            sampled_rolls(2, bad, np.random.default_rng(0))


@pytest.mark.parametrize("variant,layout", [SMALL[1][:2], SMALL[4][:2]])
def test_last_ply_dice_estimate_the_refined_two_ply_label_without_bias(variant, layout):
    net = small_net(variant, seed=7)
    points = outcome_points(net.rules)
    states = np.repeat(pack_states(PositionBatch.from_positions([board(variant, layout, "X")])), 400, axis=0)
    exact = search_targets(net, states[:1], 2, rolls="all", refine=(1, 0.0))[0] @ points
    every_die = search_targets(net, states[:3], 2, np.random.default_rng(0), rolls="all", refine=(1, 0.0),
                               last_ply_dice=36) @ points
    np.testing.assert_allclose(every_die, exact, atol=1e-6)
    sampled = search_targets(net, states, 2, np.random.default_rng(1), rolls="all", refine=(1, 0.0),
                             last_ply_dice=3) @ points
    assert sampled.std() > 1e-4  # the estimates vary ...
    assert abs(sampled.mean() - exact) < 4 * sampled.std() / np.sqrt(len(sampled))  # ... around the exact label


def test_last_ply_dice_need_a_move_chosen_before_the_last_ply():
    net = small_net("tapa")
    states = pack_states(PositionBatch.from_positions([board("tapa", SMALL[0][1], "X")] * 2))
    rng = np.random.default_rng(0)
    for plies, refine in ((1, None), (2, None), (2, (2, 0.04))):
        with pytest.raises(DistillError, match="refine=\\(1, margin\\)"):
            search_targets(net, states, plies, rng, refine=refine, last_ply_dice=6)
    with pytest.raises(DistillError, match="1 to 36"):
        search_targets(net, states, 2, rng, refine=(1, 0.0), last_ply_dice=40)
    with pytest.raises(ConfigError, match="search_refine = 1"):
        load_config("configs/quick.toml", ["learning.targets=search", "learning.search_last_ply_dice=6"])
    with pytest.raises(ConfigError, match="search_last_ply_dice"):
        load_config("configs/quick.toml", ["learning.search_last_ply_dice=37"])


def test_label_noise_measures_the_search_against_the_net_and_the_dice():
    """scripts/search_label_noise.py's numbers, recomputed here from the net and search_targets."""
    net = small_net("tapa", seed=2)
    states = collect_states(net, 12, np.random.default_rng(0), parallel_games=4, every=3)
    points = outcome_points(net.rules)
    noise = label_noise(net, states, 1, np.random.default_rng(5), samples=3)
    with torch.inference_mode():
        from tapa_ai.net.fast_eval import fast_encode

        own = net.equity(torch.from_numpy(fast_encode(unpack_states(states, net.rules), net.encoding_version)))
    averaged = search_targets(net, states, 1, rolls="all") @ points
    one_ply = search_targets(net, states, 0, rolls="all") @ points
    rng = np.random.default_rng(5)
    sampled = np.stack([search_targets(net, states, 1, rng) @ points for _ in range(3)])
    assert noise["rms_signal"] == pytest.approx(np.sqrt(np.mean((averaged - own.numpy()) ** 2)), rel=1e-5)
    assert noise["rms_noise"] == pytest.approx(np.sqrt(np.mean((sampled - averaged) ** 2)), rel=1e-5)
    assert noise["rms_beyond_1ply"] == pytest.approx(np.sqrt(np.mean((averaged - one_ply) ** 2)), rel=1e-5)
    assert noise["rms_noise"] > 0 and noise["sampled_labels_per_signal"] == pytest.approx(
        (noise["rms_noise"] / noise["rms_signal"]) ** 2)
    at_zero = label_noise(net, states, 0, np.random.default_rng(5), samples=2)
    assert at_zero["rms_beyond_1ply"] == 0.0  # 0-ply over the 21 rolls is the 1-ply mean itself
    with pytest.raises(DistillError, match="at least 2 sampled labels"):
        label_noise(net, states, 1, np.random.default_rng(5), samples=1)


def test_collected_states_are_legal_positions_after_the_opening():
    net = small_net("tapa", seed=2)
    states = collect_states(net, 500, np.random.default_rng(0), parallel_games=16, every=2)
    assert states.shape == (500, 52) and states.dtype == np.int8
    assert (unpack_states(states, variant_rules("tapa")).checker_counts() == 15).all()
    start = pack_states(PositionBatch.from_positions([board("tapa", "24:XXXXX 23:XXXXX 22:XXXXX "
                                                             "1:OOOOO 2:OOOOO 3:OOOOO", "X")]))[0]
    assert not (states == start).all(axis=1).any()  # the opening turn is left out


def test_fit_moves_the_student_toward_the_targets_and_leaves_the_teacher_alone():
    rules = variant_rules("plakoto")
    teacher = EvaluatorNet(ModelConfig(layers=1, hidden=16), rules, seed=1).eval()
    other = EvaluatorNet(ModelConfig(layers=1, hidden=16), rules, seed=2).eval()
    states = collect_states(teacher, 2000, np.random.default_rng(1), parallel_games=32)
    targets = search_targets(other, states, 0, np.random.default_rng(2))
    before = {name: value.clone() for name, value in teacher.state_dict().items()}
    student, report = distill(teacher, states, 0, np.random.default_rng(3), targets=targets, epochs=3,
                              learning_rate=3e-3, held_out=0.1)
    assert report.held_out_after < report.held_out_before - 0.01
    assert report.held_out_after >= report.held_out_entropy - 1e-6  # cross-entropy never below the entropy
    assert report.steps == 3 * int(np.ceil(1800 / 256))
    for name, value in teacher.state_dict().items():
        assert torch.equal(value, before[name])
    assert not torch.equal(student.state_dict()["layers.0.weight"], before["layers.0.weight"])


@pytest.mark.parametrize("call,fragment", [
    (lambda net, s: search_targets(net, s, 5), "0 to 3 plies"),
    (lambda net, s: search_targets(net, s, 1, rolls="some"), "'sample'"),
    (lambda net, s: search_targets(net, s, 1), "random generator"),
    (lambda net, s: search_targets(net, s[:, :40], 0, rolls="all"), "(N, 52)"),
    (lambda net, s: fit(student_of(net), s, np.zeros((3, 7)), np.random.default_rng(0)), "3 targets"),
    (lambda net, s: fit(student_of(net), s, np.zeros((len(s), 7)), np.random.default_rng(0), epochs=0), "positive"),
    (lambda net, s: collect_states(net, 0, np.random.default_rng(0)), "at least one"),
])
def test_bad_requests_are_clear_errors(call, fragment):
    net = small_net("tapa")
    states = pack_states(PositionBatch.from_positions([board("tapa", SMALL[0][1], "X")] * 4))
    with pytest.raises(DistillError) as error:
        call(net, states)
    assert fragment in str(error.value)


def test_experiment_writes_students_and_report_and_refuses_other_settings(tmp_path):
    rules = variant_rules("tapa")
    net = EvaluatorNet(ModelConfig(layers=1, hidden=16), rules, seed=4)
    teacher = tmp_path / "teacher.pt"
    save_checkpoint(teacher, model_state=net.state_dict(), model_config=net.architecture(),
                    encoding=(ENCODING_NAME, net.encoding_version), rule_options=rules,
                    config={}, games=10)
    out = tmp_path / "distill"
    report = experiment(teacher, out, states=300, every=2, plies=(0, 1), epochs=1, pairs=3,
                        opponents=("random",), progress=False)
    assert set(report["matches"]) == {"teacher_vs_random", "0ply_vs_random", "1ply_vs_random",
                                      "0ply_vs_teacher", "1ply_vs_teacher", "1ply_vs_0ply"}
    assert all(row["games"] == 6 for row in report["matches"].values())
    assert json.loads((out / "report.json").read_text()) == report
    student = load_network(out / "student_1ply.pt")
    assert student.rules == rules
    assert not torch.equal(student.state_dict()["layers.0.weight"], net.state_dict()["layers.0.weight"])
    again = experiment(teacher, out, states=300, every=2, plies=(1,), epochs=2, pairs=3, opponents=("random",),
                       progress=False)  # the same positions and targets, another fit
    assert again["students"]["1ply"]["target_cpu_seconds"] == report["students"]["1ply"]["target_cpu_seconds"]
    assert again["students"]["1ply"]["held_out_before"] == report["students"]["1ply"]["held_out_before"]
    assert again["students"]["1ply"]["steps"] == 2 * report["students"]["1ply"]["steps"]
    with pytest.raises(DistillError) as error:
        experiment(teacher, out, states=300, every=2, seed=2, progress=False)
    assert "seed" in str(error.value)
