"""A separate race network (model.race_network): the phase test, the dispatch, the fast path, training, files.

A race is a position where no checker can meet an opposing one again. The
phase is computed four ways (from the features in torch, from the int8
arrays in the fast kernel, in the ONNX graph, in numpy_model); each is
checked here against a plain per-position reference written from the rule.
"""

import numpy as np
import pytest
import torch

from tapa_ai.config import ModelConfig
from tapa_ai.movegen import generate
from tapa_ai.movegen.batch import PositionBatch
from tapa_ai.movegen.random_positions import endgame_positions, mixed_positions, random_dice
from tapa_ai.net.evaluator import TorchEvaluator
from tapa_ai.net.encoding import encode
from tapa_ai.net.fast_eval import DENSE_MODES, FastEvaluator
from tapa_ai.net.evaluator import KernelEvaluator
from tapa_ai.net.fast_kernel import race_flags
from tapa_ai.net.model import EvaluatorNet, evaluate, race_rows
from tapa_ai.rules.outcomes import swap_sides
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.position import Position

VARIANTS = ["tapa", "plakoto", "backgammon"]
TOLERANCE = 1e-5


def reference_race(position: Position) -> bool:
    """No contact left: X's rearmost checker (its point = index + 1) and O's (its point = 24 - index), each on
    25 when on the bar, add up to 25 or less: every X checker is then past every O checker."""
    back_x = 25 if position.bar[0] else max((i + 1 for i, stack in enumerate(position.points) if "X" in stack),
                                              default=0)
    back_o = 25 if position.bar[1] else max((24 - i for i, stack in enumerate(position.points) if "O" in stack),
                                              default=0)
    return back_x + back_o <= 25


def _net(variant, hidden=16, layers=1, encoding_version=2, seed=3):
    config = ModelConfig(layers=layers, hidden=hidden, encoding_version=encoding_version, race_network=True)
    net = EvaluatorNet(config, variant_rules(variant), seed=seed)
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.mul_(3.0)  # saturate some units and spread the classes
    return net


def _batch(variant, count=300, seed=1):
    rng = np.random.default_rng(seed)
    rules = variant_rules(variant)
    half = count // 2
    return PositionBatch.from_positions(mixed_positions(rules, half, rng).to_positions()
                                        + endgame_positions(rules, count - half, rng).to_positions())


def _position(variant, stacks: dict, turn="X", bar=(0, 0)):
    points = [""] * 24
    for index, stack in stacks.items():
        points[index] = stack
    x = sum(stack.count("X") for stack in points) + bar[0]
    o = sum(stack.count("O") for stack in points) + bar[1]
    return Position(variant_rules(variant), tuple(points), (15 - x, 15 - o), bar, turn)


@pytest.mark.parametrize("variant", VARIANTS)
def test_race_rows_equal_the_rule_from_features_and_from_the_int8_arrays(variant):
    batch = _batch(variant)
    expected = np.array([reference_race(p) for p in batch.to_positions()])
    assert 20 < expected.sum() < len(expected) - 20, "the sample should hold races and contact positions"
    for version in (1, 2, 3, 4):
        assert np.array_equal(race_rows(torch.from_numpy(encode(batch, version=version))).numpy(), expected)
    assert np.array_equal(race_flags(batch.board, batch.pinned, batch.bar, batch.parallel_rows()), expected)
    # The phase does not depend on the side to move.
    assert np.array_equal(race_rows(torch.from_numpy(encode(batch.flipped()))).numpy(), expected)


def test_race_rows_at_the_boundary_pins_and_the_bar():
    # X rearmost on its 12 (index 11), O rearmost on its 12 (index 12): passed each other.
    assert reference_race(_position("backgammon", {11: "XX", 12: "OO"}))
    # One point further each way they can still meet.
    assert not reference_race(_position("backgammon", {12: "XX", 11: "OO"}))
    # A checker on the bar is behind everything.
    assert not reference_race(_position("backgammon", {0: "XX", 23: "OO"}, bar=(1, 0)))
    # Plakoto: O pinned under X on X's 6-point; the two move apart from there.
    assert reference_race(_position("plakoto", {5: "OX", 2: "XX"}))
    # ... but an X checker further back (its 7) can still land on O's checker.
    assert not reference_race(_position("plakoto", {5: "OX", 6: "X"}))
    for variant, stacks, bar in [("backgammon", {11: "XX", 12: "OO"}, (0, 0)), ("backgammon", {12: "XX", 11: "OO"}, (0, 0)),
                                 ("backgammon", {0: "XX", 23: "OO"}, (1, 0)), ("plakoto", {5: "OX", 2: "XX"}, (0, 0)),
                                 ("plakoto", {5: "OX", 6: "X"}, (0, 0))]:
        batch = PositionBatch.from_positions([_position(variant, stacks, bar=bar)])
        expected = reference_race(batch.position(0))
        assert bool(race_rows(torch.from_numpy(encode(batch)))[0]) == expected
        assert bool(race_flags(batch.board, batch.pinned, batch.bar, batch.parallel_rows())[0]) == expected


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_row_is_evaluated_by_the_network_of_its_phase(variant):
    net = _net(variant)
    features = torch.from_numpy(encode(_batch(variant), version=2))
    race = race_rows(features)
    with torch.no_grad():
        logits = net(features)
        assert torch.equal(logits[race], net.race_layers(features[race]))
        assert torch.equal(logits[~race], net.layers(features[~race]))
        # All of one phase: the same numbers through the short cut.
        assert torch.allclose(net(features[race]), net.race_layers(features[race]))
        assert torch.allclose(net(features[~race]), net.layers(features[~race]))
    assert not torch.equal(net.race_layers(features[race]), net.layers(features[race])), "two different networks"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dense", DENSE_MODES)
@pytest.mark.parametrize("hidden, layers", [(16, 1), ([24, 8], 2)])
def test_fast_evaluation_of_a_race_network_equals_the_torch_network(variant, dense, hidden, layers):
    net = _net(variant, hidden=hidden, layers=layers)
    batch = _batch(variant, seed=4)
    evaluator = FastEvaluator.from_net(net, dense=dense)
    probabilities, equities = evaluator.evaluate(batch)
    expected_probabilities, expected_equities = evaluate(net, encode(batch, version=2))
    assert np.abs(probabilities - expected_probabilities).max() < TOLERANCE
    assert np.abs(equities - expected_equities).max() < TOLERANCE * 4
    probabilities, _ = evaluator.evaluate_flipped(batch)
    flipped, _ = evaluate(net, encode(batch.flipped(), version=2))
    assert np.abs(probabilities - swap_sides(flipped)).max() < TOLERANCE
    # Afterstates, finished games among them (their exact outcome).
    afterstates = generate(batch, random_dice(len(batch), np.random.default_rng(2)))
    assert afterstates.game_over.any()
    distributions, _ = evaluator.afterstate_distributions(afterstates)
    assert np.abs(distributions - TorchEvaluator(net).afterstate_distributions(afterstates, np.float32)).max() < TOLERANCE


def test_a_kernel_evaluator_follows_both_networks_weights():
    net = _net("backgammon")
    batch = _batch("backgammon", seed=6)
    race = race_flags(batch.board, batch.pinned, batch.bar, batch.parallel_rows())
    evaluator = KernelEvaluator(net)
    points = evaluator.points
    before = evaluator.evaluate(batch) @ points
    with torch.no_grad():
        net.race_layers[0].bias.add_(1.0)  # only the race network changes
    after = evaluator.evaluate(batch) @ points
    assert np.array_equal(after[~race], before[~race]) and not np.allclose(after[race], before[race])
    assert np.abs(after - evaluate(net, encode(batch, version=2))[1]).max() < TOLERANCE * 4


def test_a_learning_step_on_races_moves_only_the_race_network():
    net = _net("tapa")
    features = torch.from_numpy(encode(_batch("tapa"), version=2))
    race = race_rows(features)
    contact_before = [p.detach().clone() for p in net.layers.parameters()]
    race_before = [p.detach().clone() for p in net.race_layers.parameters()]
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    loss = torch.log_softmax(net(features[race]), dim=-1)[:, 0].mean()
    loss.backward()
    optimizer.step()
    assert all(torch.equal(a, b) for a, b in zip(contact_before, net.layers.parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(race_before, net.race_layers.parameters()))


def test_the_config_key_describes_stores_and_refuses():
    from tapa_ai.config import ConfigError

    config = ModelConfig(hidden=32, race_network=True)
    assert config.describe() == "1 x 32 relu + race network"
    assert ModelConfig.from_dict(config.to_dict()) == config
    assert "race_network" not in ModelConfig(hidden=32).to_dict()  # one-network files stay as they were
    with pytest.raises(ConfigError, match="race_network"):
        ModelConfig(race_network="yes")
    net = EvaluatorNet(config, variant_rules("tapa"), seed=1)
    assert net.parts == ("layers", "race_layers") and len(net.linear_layers()) == 4
    assert EvaluatorNet(ModelConfig(hidden=32), variant_rules("tapa"), seed=1).parts == ("layers",)
    # Seeded: the contact network is the one-network model's, the race network its own.
    single = EvaluatorNet(ModelConfig(hidden=32), variant_rules("tapa"), seed=1)
    assert all(torch.equal(a, b) for a, b in zip(single.layers.parameters(), net.layers.parameters()))


# -- training, checkpoints and every export format ---------------------------------------------------------
def test_self_play_training_learns_both_networks_and_the_checkpoint_keeps_them(tmp_path):
    from tapa_ai.config import load_config
    from tapa_ai.net.checkpoint import load_checkpoint, load_network
    from tapa_ai.training.trainer import Trainer, new_run_directory

    config = load_config("configs/quick.toml", [
        "run.variant=backgammon", "run.total_games=48", "selfplay.parallel_games=16", "model.hidden=16",
        "model.race_network=true", "learning.batch_size=64", "eval.every_games=100000", "checkpoint.every_games=48",
        "logging.tensorboard=false", f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    start = {name: tensor.clone() for name, tensor in trainer.net.state_dict().items()}
    trainer.train(progress=False)
    moved = {name for name, tensor in trainer.net.state_dict().items() if not torch.equal(tensor, start[name])}
    assert any(name.startswith("race_layers.") for name in moved), "the race network learned nothing"
    assert any(name.startswith("layers.") for name in moved), "the contact network learned nothing"
    checkpoint = load_checkpoint(trainer.run_dir / "latest.pt")
    assert checkpoint.model_config["model"]["race_network"] is True
    net = load_network(trainer.run_dir / "latest.pt")
    assert net.parts == ("layers", "race_layers")
    features = torch.from_numpy(encode(_batch("backgammon"), version=net.encoding_version))
    with torch.no_grad():
        assert torch.equal(net(features), trainer.net(features))


def test_a_checkpoint_without_its_race_network_is_refused_in_one_line(tmp_path):
    from tapa_ai.net.network_check import check_network_state

    net = _net("tapa")
    state = {name: tensor for name, tensor in net.state_dict().items() if not name.startswith("race_layers.")}
    with pytest.raises(ValueError, match="lacks race_layers.0.weight"):
        check_network_state(net.architecture(), state)


@pytest.mark.filterwarnings(r"ignore:.*torch\.jit\..*deprecated:DeprecationWarning")
@pytest.mark.parametrize("format", ["onnx", "torchscript", "npz"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_export_format_evaluates_each_phase_with_its_network(variant, format, tmp_path):
    from tapa_ai.export import export_network
    from tapa_ai.export import numpy_model

    net = _net(variant, hidden=[12, 6], layers=2).eval()
    features = encode(_batch(variant, seed=8), version=2)
    path = export_network(net, format, tmp_path / f"model.{format}")
    if format == "onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        probabilities, equity = session.run(["probabilities", "equity"], {"features": features})
    elif format == "torchscript":
        module = torch.jit.load(str(path))
        with torch.inference_mode():
            probabilities, equity = (tensor.numpy() for tensor in module(torch.from_numpy(features)))
    else:
        model = numpy_model.load(str(path))
        assert model.metadata["format_version"] == 2 and model.metadata["model"]["race_network"] is True
        assert np.array_equal(numpy_model.race_rows(features), race_rows(torch.from_numpy(features)).numpy())
        probabilities, equity = model.evaluate(features)
    expected_probabilities, expected_equity = evaluate(net, features)
    assert np.abs(probabilities - expected_probabilities).max() < TOLERANCE
    assert np.abs(equity - expected_equity).max() < TOLERANCE * 4


def test_the_npz_file_reads_back_into_the_same_network_and_the_web_model_carries_both(tmp_path):
    from tapa_ai.engine.web_board import model_json
    from tapa_ai.export import export_network, load_npz_network
    from tapa_ai.export import numpy_model

    net = _net("plakoto").eval()
    path = export_network(net, "npz", tmp_path / "model.npz")
    back = load_npz_network(path)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), back.state_dict().values()))
    web = model_json(path.read_bytes())
    assert len(web["race_layers"]) == len(web["layers"]) == 2
    # A file that says race network but holds none (or the other way round) is refused with its reason.
    model = numpy_model.load(str(path))
    with pytest.raises(numpy_model.ModelFileError, match="race_network is True but the file holds no race network"):
        numpy_model.NumpyEvaluator(model.weights, model.biases, model.metadata)
    one = export_network(_net("plakoto").__class__(ModelConfig(hidden=16, encoding_version=2),
                                                   variant_rules("plakoto"), seed=1), "npz", tmp_path / "one.npz")
    assert numpy_model.load(str(one)).metadata["format_version"] == 1  # one-network files as before
    assert "race_layers" not in model_json(one.read_bytes())


def test_each_learning_step_trains_one_phase_and_every_row_is_learned_once(tmp_path):
    from tapa_ai.config import load_config
    from tapa_ai.training.trainer import Trainer, new_run_directory

    config = load_config("configs/quick.toml", ["run.variant=backgammon", "model.hidden=8", "model.race_network=true",
                                                "learning.batch_size=32", "logging.tensorboard=false",
                                                f"checkpoint.directory={tmp_path}"])
    trainer = Trainer(config, new_run_directory(config))
    positions = _batch("backgammon", count=200, seed=9)
    race = race_flags(positions.board, positions.pinned, positions.bar, positions.parallel_rows())
    steps = trainer.learner.minibatches(positions)
    seen = np.concatenate([index.numpy() for index, _ in steps])
    assert sorted(seen.tolist()) == list(range(len(positions)))
    for index, part in steps:
        assert 0 < len(index) <= 32
        assert part == ("race_layers" if race[index.numpy()[0]] else "layers")
        assert (race[index.numpy()] == (part == "race_layers")).all()
    assert [part for _, part in steps] != sorted(part for _, part in steps), "the phases' steps are shuffled"
