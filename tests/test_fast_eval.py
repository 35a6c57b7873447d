"""The fast evaluator (tapa_ai.net.fast_eval) equals encode() + the torch network on every variant and net shape."""

import numpy as np
import pytest
import torch

from tapa_ai.config import ModelConfig
from tapa_ai.net import fast_eval
from tapa_ai.net.encoding import encode, num_features
from tapa_ai.net.fast_eval import DENSE_MODES, FastEncoder, FastEvaluator, fast_encode
from tapa_ai.net.model import EvaluatorNet, evaluate
from tapa_ai.rules.outcomes import outcome_points, swap_sides
from tapa_ai.movegen import generate
from tapa_ai.movegen.random_positions import endgame_positions, mixed_positions, random_dice
from tapa_ai.rules.options import variant_rules
from tapa_ai.net.evaluator import KernelEvaluator, TorchEvaluator, evaluator_for

VARIANTS = ["tapa", "plakoto", "backgammon"]
TOLERANCE = 1e-5
SHAPES = [(0, 8, "relu"), (1, 128, "relu"), (1, 24, "tanh"), (2, 16, "sigmoid"), (3, 12, "gelu"), (2, 20, "silu"),
          (2, [48, 16], "relu"), (3, [40, 24, 8], "tanh")]


def _net(variant, layers, hidden, activation, seed=7):
    net = EvaluatorNet(ModelConfig(layers=layers, hidden=hidden, activation=activation), variant_rules(variant),
                       seed=seed)
    # Larger weights than the default initialization, so that saturation and every class are exercised.
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.mul_(3.0)
    return net


def _positions(variant, count, seed):
    return mixed_positions(variant_rules(variant), count, np.random.default_rng(seed))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("layers, hidden, activation", SHAPES)
@pytest.mark.parametrize("dense", DENSE_MODES)
def test_fast_evaluation_equals_encoding_and_torch_network(variant, layers, hidden, activation, dense):
    net = _net(variant, layers, hidden, activation)
    evaluator = FastEvaluator.from_net(net, dense=dense)
    batch = _positions(variant, 90, seed=layers * 31 + (hidden if isinstance(hidden, int) else sum(hidden)))
    probabilities, equities = evaluator.evaluate(batch)
    expected_probabilities, expected_equities = evaluate(net, encode(batch))
    assert np.abs(probabilities - expected_probabilities).max() < TOLERANCE
    assert np.abs(equities - expected_equities).max() < TOLERANCE * 4

    # Read from the other side without a copy: the evaluation of the flipped batch, swapped back.
    probabilities, equities = evaluator.evaluate_flipped(batch)
    flipped_probabilities, flipped_equities = evaluate(net, encode(batch.flipped()))
    assert np.abs(probabilities - swap_sides(flipped_probabilities)).max() < TOLERANCE
    assert np.abs(equities + flipped_equities).max() < TOLERANCE * 4


@pytest.mark.parametrize("variant", VARIANTS)
def test_mostly_inactive_relu_units_are_skipped_without_changing_values(variant):
    # Trained ReLU nets leave about nine units in ten at zero; the fused kernel adds only the nonzero units'
    # weights. Most units here never fire (very negative biases), others only on some positions.
    net = _net(variant, 2, [64, 32], "relu")
    with torch.no_grad():
        for linear in net.linear_layers()[:-1]:
            linear.bias[: linear.bias.shape[0] * 3 // 4] -= 100.0
    batch = _positions(variant, 120, seed=5)
    expected_probabilities, expected_equities = evaluate(net, encode(batch))
    hidden = net.layers[1](net.layers[0](torch.from_numpy(encode(batch))))
    density = float((hidden > 0).float().mean())
    assert 0.02 < density < 0.3  # sparse, and yet some units fire
    probabilities, equities = FastEvaluator.from_net(net).evaluate(batch)
    assert np.abs(probabilities - expected_probabilities).max() < TOLERANCE
    assert np.abs(equities - expected_equities).max() < TOLERANCE * 4


@pytest.mark.parametrize("variant", VARIANTS)
def test_afterstate_distributions_equal_the_torch_reference(variant):
    net = _net(variant, 1, 128, "relu")
    rng = np.random.default_rng(11)
    batch = _positions(variant, 120, seed=3)
    afterstates = generate(batch, random_dice(len(batch), rng))
    reference = TorchEvaluator(net).afterstate_distributions(afterstates, np.float32)
    fast = FastEvaluator.from_net(net).afterstate_distributions(afterstates)[0]
    assert fast.shape == reference.shape and fast.dtype == np.float32
    assert np.abs(fast - reference).max() < TOLERANCE
    assert np.abs(evaluator_for(net, bearoff=False).afterstate_distributions(afterstates) - reference).max() < TOLERANCE


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("layers, hidden, dense", [(1, 16, "fused"), (2, [24, 8], "fused"), (2, [24, 8], "batched")])
def test_finished_games_are_their_exact_outcome_from_the_movers_side(variant, layers, hidden, dense):
    net = _net(variant, layers, hidden, "tanh")
    rng = np.random.default_rng(5)
    batch = endgame_positions(variant_rules(variant), 150, rng)
    afterstates = generate(batch, random_dice(len(batch), rng))
    assert afterstates.game_over.any(), "the end-game positions should give some finished games"
    distributions, equities = FastEvaluator.from_net(net, dense=dense).afterstate_distributions(afterstates)
    reference = TorchEvaluator(net).afterstate_distributions(afterstates, np.float32)
    over = afterstates.game_over
    assert np.array_equal(distributions[over], reference[over])
    assert set(np.unique(distributions[over])) <= {0.0, 1.0}
    # The mover made the last move, so a finished game is a win (or a draw) for it.
    assert (distributions[over] @ outcome_points(net.rules) >= 0).all()
    assert np.abs(distributions[~over] - reference[~over]).max() < TOLERANCE
    assert np.allclose(equities, distributions @ outcome_points(net.rules), atol=1e-5)


@pytest.mark.parametrize("layers, hidden", [(1, 32), (2, [32, 16])])
def test_thread_split_gives_the_same_numbers_as_one_thread(layers, hidden):
    net = _net("tapa", layers, hidden, "relu")
    evaluator = FastEvaluator.from_net(net)
    batch = _positions("tapa", 600, seed=9)
    one, _ = evaluator.evaluate(batch, threads=1)
    two, _ = evaluator.evaluate(batch, threads=2)
    assert np.array_equal(one, two)


@pytest.mark.parametrize("race_network", [False, True])
def test_batched_path_in_chunks_gives_the_values_of_one_pass(monkeypatch, race_network):
    """Batches longer than FIRST_CHUNK_ROWS (a 2-ply search's millions of rows) go through in chunks."""
    net = EvaluatorNet(ModelConfig(layers=2, hidden=[32, 16], activation="relu", race_network=race_network),
                       variant_rules("backgammon"), seed=3)
    rng = np.random.default_rng(8)
    batch = endgame_positions(variant_rules("backgammon"), 400, rng)
    afterstates = generate(batch, random_dice(len(batch), rng))
    assert afterstates.game_over.any() and len(afterstates) > 3 * 512
    evaluator = FastEvaluator.from_net(net, dense="batched")
    whole, whole_equities = evaluator.afterstate_distributions(afterstates)
    monkeypatch.setattr(fast_eval, "FIRST_CHUNK_ROWS", 512)
    passes = []
    kernel = fast_eval._run_kernel
    monkeypatch.setattr(fast_eval, "_run_kernel", lambda layer, batch, *rest: (passes.append(len(batch)),
                                                                               kernel(layer, batch, *rest)))
    chunked, chunked_equities = evaluator.afterstate_distributions(afterstates)
    parts = 2 if race_network else 1
    assert max(passes) <= 512 and len(passes) == parts * -(-len(afterstates) // 512)
    assert np.abs(chunked - whole).max() < 1e-6 and np.abs(chunked_equities - whole_equities).max() < 1e-6
    reference = TorchEvaluator(net).afterstate_distributions(afterstates, np.float32)
    assert np.abs(chunked - reference).max() < TOLERANCE


@pytest.mark.parametrize("layers, hidden", [(1, 32), (2, [64, 32]), (3, [40, 24, 8])])
def test_a_position_gets_the_same_value_in_any_batch(layers, hidden):
    """The default evaluator is row-independent: a bot's choice cannot depend on what else was batched."""
    net = _net("tapa", layers, hidden, "relu")
    evaluator = FastEvaluator.from_net(net)
    batch = _positions("tapa", 1500, seed=4)
    whole, _ = evaluator.evaluate(batch)
    order = np.random.default_rng(2).permutation(len(batch))
    shuffled, _ = evaluator.evaluate(batch.take(order))
    assert np.array_equal(shuffled, whole[order])
    for rows in (slice(0, 1), slice(7, 300), slice(1000, 1500)):
        alone, _ = evaluator.evaluate(batch.take(rows), threads=1)
        assert np.array_equal(alone, whole[rows])


def test_unknown_dense_mode_is_refused_clearly():
    with pytest.raises(ValueError, match="dense='blas'; known"):
        FastEvaluator.from_net(_net("tapa", 2, 8, "relu"), dense="blas")


def test_a_kernel_evaluator_follows_an_optimizer_step_of_its_network():
    net = _net("plakoto", 1, 16, "relu")
    batch = _positions("plakoto", 60, seed=2)
    evaluator = KernelEvaluator(net)
    before = evaluator.evaluate(batch).copy()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.05)
    loss = net(torch.from_numpy(encode(batch))).logsumexp(dim=-1).mean()
    loss.backward()
    optimizer.step()
    after = evaluator.evaluate(batch)
    expected, _ = evaluate(net, encode(batch))
    assert np.abs(after - before).max() > 1e-3
    assert np.abs(after - expected).max() < TOLERANCE


def test_unsupported_activation_is_refused_clearly():
    net = _net("tapa", 1, 8, "relu")
    net.config = ModelConfig(layers=1, hidden=8, activation="relu")
    object.__setattr__(net.config, "activation", "elu")
    with pytest.raises(ValueError, match="activation 'elu' is not implemented"):
        FastEvaluator.from_net(net)
    assert isinstance(evaluator_for(net, bearoff=False), TorchEvaluator)  # the bots fall back to the torch path


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_fast_encoder_writes_exactly_the_features_of_encode(variant, version):
    # Playouts, contact playouts and end games (bear-offs, the bar, pinned and mother checkers).
    batch = _positions(variant, 3000, seed=version)
    assert np.array_equal(fast_encode(batch, version), encode(batch, version=version))
    # Split over threads too, and into a given array.
    out = np.full((len(batch), num_features(version)),
                  np.nan, dtype=np.float32)
    FastEncoder(version, threads=2).encode(batch, out=out)
    assert np.array_equal(out, encode(batch, version=version))


def test_fast_encoder_refuses_a_wrong_output_array():
    batch = _positions("tapa", 6, seed=1)
    with pytest.raises(ValueError, match="float32 array of shape"):
        FastEncoder(2).encode(batch, out=np.zeros((6, 259), dtype=np.float32))
    assert FastEncoder(1).encode(batch.take(np.arange(0))).shape == (0, 259)
