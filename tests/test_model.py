"""The evaluator network: outcome classes per variant, equity from probabilities, shapes, config checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tapa_ai.net.encoding import ENCODING_VERSION, NUM_FEATURES, encode_positions
from tapa_ai.net.model import ACTIVATIONS, EvaluatorNet, ModelConfig, evaluate
from tapa_ai.rules.outcomes import (CUMULATIVE_NAMES, DRAW, LOSE_GAMMON, LOSE_SINGLE, LOSE_TOP, OUTCOME_NAMES,
                                    WIN_GAMMON, WIN_SINGLE, WIN_TOP, cumulative_probabilities, equity,
                                    named_probabilities, num_outcomes, outcome_class, outcome_classes, outcome_names,
                                    outcome_points, swap_sides)
from tapa_ai.rules import outcomes
from tapa_ai.rules import GameResult, start_position, variant_rules

TAPA, PLAKOTO, BACKGAMMON = (variant_rules(name) for name in ("tapa", "plakoto", "backgammon"))


# -- outcome classes ------------------------------------------------------------------------

def test_outcome_names_per_variant_with_draw_only_where_draws_exist():
    assert OUTCOME_NAMES["tapa"] == ("win_single", "win_gammon", "win_backgammon_or_mother",
                                     "lose_single", "lose_gammon", "lose_backgammon_or_mother", "draw")
    assert OUTCOME_NAMES["plakoto"] == ("win_single", "win_gammon", "win_mother",
                                        "lose_single", "lose_gammon", "lose_mother", "draw")
    assert OUTCOME_NAMES["backgammon"] == ("win_single", "win_gammon", "win_backgammon",
                                           "lose_single", "lose_gammon", "lose_backgammon")
    assert [num_outcomes(r) for r in (TAPA, PLAKOTO, BACKGAMMON)] == [7, 7, 6]


def test_outcome_names_of_custom_rule_sets_name_the_top_class_after_the_results_the_rule_set_has():
    # Found by mutation testing of tapa_ai/rules/outcomes.py: the test above reads OUTCOME_NAMES, built at import.
    assert outcome_names(TAPA) == OUTCOME_NAMES["tapa"]
    assert outcome_names(TAPA.replace(mother_points=0)) == OUTCOME_NAMES["backgammon"]  # no mother rules, no draw
    assert outcome_names(PLAKOTO)[2] == "win_mother"
    assert outcome_names(BACKGAMMON)[5] == "lose_backgammon"


def test_outcome_points_per_variant():
    assert outcome_points(TAPA).tolist() == [1, 2, 3, -1, -2, -3, 0]
    assert outcome_points(PLAKOTO).tolist() == [1, 2, 2, -1, -2, -2, 0]  # mother win worth 2
    assert outcome_points(BACKGAMMON).tolist() == [1, 2, 3, -1, -2, -3]


def test_backgammon_and_mother_win_of_different_value_cannot_share_a_class():
    with pytest.raises(ValueError, match="worth different points"):
        outcome_points(TAPA.replace(mother_points=2))
    with pytest.raises(ValueError, match="worth different points"):
        outcome_points(PLAKOTO.replace(backgammons=True))
    assert outcome_points(TAPA.replace(mother_points=0)).tolist() == [1, 2, 3, -1, -2, -3]


@pytest.mark.parametrize("kind, points, win_class", [
    ("single", 1, WIN_SINGLE), ("gammon", 2, WIN_GAMMON), ("backgammon", 3, WIN_TOP), ("mother", 3, WIN_TOP),
])
def test_outcome_class_of_every_winning_result_kind_from_both_sides(kind, points, win_class):
    result = GameResult("O", kind, points)
    assert outcome_class(result, "O") == win_class
    assert outcome_class(result, "X") == win_class + 3


def test_outcome_class_of_a_draw_is_the_draw_class_for_both_sides():
    draw = GameResult(None, "draw", 0)
    assert outcome_class(draw, "X") == outcome_class(draw, "O") == DRAW
    with pytest.raises(ValueError, match="side"):
        outcome_class(draw, "Z")


def test_vectorized_outcome_classes_agree_with_movegen_result_codes():
    codes = np.array([outcomes.RESULT_NONE, outcomes.RESULT_SINGLE, outcomes.RESULT_GAMMON, outcomes.RESULT_BACKGAMMON,
                      outcomes.RESULT_MOTHER, outcomes.RESULT_DRAW] * 2)
    won = np.array([True] * 6 + [False] * 6)
    assert outcome_classes(codes, won).tolist() == [
        -1, WIN_SINGLE, WIN_GAMMON, WIN_TOP, WIN_TOP, DRAW,
        -1, LOSE_SINGLE, LOSE_GAMMON, LOSE_TOP, LOSE_TOP, DRAW,
    ]


# -- equity and derived probabilities --------------------------------------------------------------

def test_equity_from_probabilities_hand_computed_per_variant():
    tapa = np.array([[0.2, 0.1, 0.05, 0.3, 0.15, 0.1, 0.1]])
    # 0.2 + 2*0.1 + 3*0.05 - 0.3 - 2*0.15 - 3*0.1 + 0*0.1
    assert equity(tapa, TAPA) == pytest.approx([-0.35])
    # plakoto: the top class is a mother win worth 2: 0.2 + 0.2 + 0.1 - 0.3 - 0.3 - 0.2
    assert equity(tapa, PLAKOTO) == pytest.approx([-0.3])
    backgammon = np.array([[0.4, 0.1, 0.05, 0.3, 0.1, 0.05]])
    # 0.4 + 0.2 + 0.15 - 0.3 - 0.2 - 0.15
    assert equity(backgammon, BACKGAMMON) == pytest.approx([0.1])


def test_equity_of_certain_outcomes_is_their_points():
    for rules in (TAPA, PLAKOTO, BACKGAMMON):
        certain = np.eye(num_outcomes(rules), dtype=np.float32)
        assert equity(certain, rules).tolist() == outcome_points(rules).tolist()


def test_equity_works_on_torch_tensors_and_checks_class_count():
    probabilities = torch.tensor([[0.2, 0.1, 0.05, 0.3, 0.15, 0.1, 0.1]], dtype=torch.float64)
    assert equity(probabilities, TAPA).tolist() == pytest.approx([-0.35])
    with pytest.raises(ValueError, match="7 classes"):
        equity(probabilities, BACKGAMMON)


def test_cumulative_probabilities_hand_computed():
    tapa = np.array([0.2, 0.1, 0.05, 0.3, 0.15, 0.1, 0.1])
    assert cumulative_probabilities(tapa) == pytest.approx([0.35, 0.15, 0.05, 0.25, 0.1, 0.1])
    named = named_probabilities(np.array([[0.4, 0.1, 0.05, 0.3, 0.1, 0.05]]))
    assert list(named) == list(CUMULATIVE_NAMES)
    assert named["win"] == pytest.approx([0.55]) and named["draw"] == pytest.approx([0.0])
    assert named["lose_gammon"] == pytest.approx([0.15]) and named["lose_backgammon"] == pytest.approx([0.05])


def test_swapping_sides_exchanges_wins_and_losses_and_negates_equity():
    rng = np.random.default_rng(0)
    for rules in (TAPA, BACKGAMMON):
        probabilities = rng.dirichlet(np.ones(num_outcomes(rules)), size=5)
        swapped = swap_sides(probabilities)
        assert swapped[:, WIN_SINGLE] == pytest.approx(probabilities[:, LOSE_SINGLE])
        assert equity(swapped, rules) == pytest.approx(-equity(probabilities, rules))
        assert np.array_equal(swap_sides(swapped), probabilities)
        assert torch.equal(swap_sides(torch.from_numpy(probabilities)), torch.from_numpy(swapped))


# -- the network ------------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_network_outputs_a_distribution_with_a_draw_column_only_where_draws_exist(variant):
    rules = variant_rules(variant)
    net = EvaluatorNet(ModelConfig(layers=2, hidden=16), rules, seed=0)
    features = encode_positions([start_position(variant, side) for side in "XO"] * 3)
    probabilities, values = evaluate(net, features)
    assert probabilities.shape == (6, 7 if rules.has_draws else 6) and values.shape == (6,)
    assert probabilities.dtype == values.dtype == np.float32
    assert probabilities.sum(axis=1) == pytest.approx(np.ones(6), abs=1e-6)
    assert (probabilities >= 0).all()
    assert values == pytest.approx(equity(probabilities, rules), abs=1e-6)
    assert net.outcome_names == OUTCOME_NAMES[variant]


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
@pytest.mark.parametrize("layers", [0, 1, 3])
def test_every_activation_and_depth_builds_and_runs(activation, layers):
    net = EvaluatorNet(ModelConfig(layers=layers, hidden=8, activation=activation), TAPA, seed=1)
    logits = net(torch.zeros(4, NUM_FEATURES))
    assert logits.shape == (4, 7)
    assert sum(isinstance(m, torch.nn.Linear) for m in net.modules()) == layers + 1


def test_seeded_initialization_is_reproducible_and_leaves_the_global_rng_alone():
    state = torch.get_rng_state()
    first = EvaluatorNet(ModelConfig(hidden=8), TAPA, seed=5).state_dict()
    second = EvaluatorNet(ModelConfig(hidden=8), TAPA, seed=5).state_dict()
    other = EvaluatorNet(ModelConfig(hidden=8), TAPA, seed=6).state_dict()
    assert torch.equal(torch.get_rng_state(), state)
    assert all(torch.equal(first[key], second[key]) for key in first)
    assert not torch.equal(first["layers.0.weight"], other["layers.0.weight"])


def test_evaluate_accepts_tensors_and_builds_no_graph():
    net = EvaluatorNet(ModelConfig(hidden=8), BACKGAMMON, seed=0)
    features = torch.from_numpy(encode_positions([start_position("backgammon")]))
    probabilities, values = evaluate(net, features)
    assert isinstance(probabilities, np.ndarray) and probabilities.shape == (1, 6)
    with torch.no_grad():
        assert values == pytest.approx(net.equity(features).numpy(), abs=1e-6)


def test_architecture_round_trip_and_mismatched_encoding_refused():
    net = EvaluatorNet(ModelConfig(layers=2, hidden=12, activation="tanh"), PLAKOTO, seed=0)
    architecture = net.architecture()
    rebuilt = EvaluatorNet.from_architecture(architecture)
    rebuilt.load_state_dict(net.state_dict())
    assert rebuilt.config == net.config and rebuilt.rules == PLAKOTO
    features = torch.from_numpy(encode_positions([start_position("plakoto")]))
    assert torch.equal(rebuilt(features), net(features))
    with pytest.raises(ValueError, match=f"version {ENCODING_VERSION + 1}"):
        EvaluatorNet.from_architecture({**architecture, "encoding_version": ENCODING_VERSION + 1})


@pytest.mark.parametrize("options, message", [
    ({"activation": "swish"}, "model.activation='swish'"),
    ({"layers": -1}, "model.layers=-1"),
    ({"hidden": 0}, "model.hidden=0"),
    ({"hidden": 12.5}, "model.hidden=12.5"),
])
def test_bad_model_config_is_refused_with_the_option_named(options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        ModelConfig(**options)


def test_unknown_model_option_is_refused():
    with pytest.raises(ValueError, match=r"unknown model option\(s\) \['width'\]"):
        ModelConfig.from_dict({"hidden": 64, "width": 3})


def test_the_outcome_classes_live_in_the_rules_layer_which_imports_no_torch():
    """tapa_ai.rules.outcomes is the one home of the classes, their points and the equity: the bear-off databases,
    the cube and the benchmark read it without loading torch."""
    import subprocess
    import sys

    code = ("import sys, tapa_ai.rules.outcomes, tapa_ai.bearoff.evaluate, tapa_ai.cube.equity; "
            "print('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False"
