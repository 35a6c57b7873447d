"""The Evaluator interface: every implementation gives the same values, and the bear-off wrapper the databases'."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tapa_ai.bearoff.evaluate import bearoff_distributions, bearoff_mask
from tapa_ai.bots.search import NetBot
from tapa_ai.export import numpy_model
from tapa_ai.export.core import export_checkpoint
from tapa_ai.movegen.generate import generate
from tapa_ai.movegen.random_positions import endgame_positions, mixed_positions, random_dice
from tapa_ai.net.checkpoint import load_network
from tapa_ai.net.evaluator import (BearoffEvaluator, EncodedEvaluator, KernelEvaluator, TorchEvaluator,
                                   evaluator_for, numpy_evaluator)
from tapa_ai.rules import variant_rules
from tapa_ai.rules.outcomes import outcome_names, swap_sides

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 2e-5


@pytest.fixture(scope="module")
def shipped():
    return {variant: load_network(ROOT / f"checkpoints/{variant}.pt") for variant in ("tapa", "backgammon")}


def _afterstates(variant: str, count: int, seed: int):
    rng = np.random.default_rng(seed)
    batch = mixed_positions(variant, count, rng)
    return generate(batch, random_dice(len(batch), rng))


@pytest.mark.parametrize("variant", ["tapa", "backgammon"])
def test_the_torch_kernel_and_numpy_evaluators_give_the_same_values(shipped, variant, tmp_path):
    net = shipped[variant]
    model = numpy_model.load(str(export_checkpoint(ROOT / f"checkpoints/{variant}.pt", "npz", tmp_path / "m.npz")))
    evaluators = [TorchEvaluator(net), KernelEvaluator(net), numpy_evaluator(model)]
    afterstates = _afterstates(variant, 300, seed=1)
    reference = evaluators[0].afterstate_distributions(afterstates)
    assert reference.shape == (len(afterstates), net.num_outcomes) and afterstates.game_over.any()
    for evaluator in evaluators[1:]:
        assert evaluator.rules == net.rules
        assert np.abs(evaluator.afterstate_distributions(afterstates) - reference).max() < TOLERANCE
        positions = afterstates.positions.take(np.flatnonzero(~afterstates.game_over)[:200])
        assert np.abs(evaluator.evaluate(positions) - evaluators[0].evaluate(positions)).max() < TOLERANCE
    # A finished game is its exact outcome, for every implementation.
    over = np.flatnonzero(afterstates.game_over)
    assert np.array_equal(np.sort(reference[over], axis=1)[:, -1], np.ones(over.size))


def test_evaluate_flipped_is_the_other_side_to_roll_read_back_from_this_side(shipped):
    net = shipped["tapa"]
    positions = _afterstates("tapa", 100, seed=2).positions
    for evaluator in (TorchEvaluator(net), KernelEvaluator(net)):
        flipped = evaluator.evaluate_flipped(positions)
        assert np.abs(flipped - swap_sides(evaluator.evaluate(positions.flipped()))).max() < TOLERANCE


@pytest.mark.parametrize("variant", ["tapa", "backgammon"])
def test_the_bear_off_wrapper_values_bear_offs_by_the_databases_over_any_evaluator(shipped, variant):
    net = shipped[variant]
    rng = np.random.default_rng(3)
    batch = endgame_positions(variant, 200, rng)
    afterstates = generate(batch, random_dice(len(batch), rng))
    known = np.flatnonzero(bearoff_mask(afterstates.positions) & ~afterstates.game_over)
    assert known.size > 20 and known.size < len(afterstates)
    # The databases' value for the opponent to roll, read back from the mover's side: each class exchanged by
    # name (win_* <-> lose_*, a draw stays), written out here rather than through swap_sides.
    names = list(outcome_names(variant_rules(variant)))
    theirs = bearoff_distributions(afterstates.positions.take(known).flipped())[1]
    exchanged = [n.replace("win_", "@").replace("lose_", "win_").replace("@", "lose_") for n in names]
    database = theirs[:, [names.index(name) for name in exchanged]]
    assert exchanged != names and database.shape == theirs.shape
    for model in (TorchEvaluator(net), KernelEvaluator(net)):
        wrapped = BearoffEvaluator(model)
        assert wrapped.bearoff and not model.bearoff and wrapped.model is model
        values = wrapped.afterstate_distributions(afterstates)
        assert np.array_equal(values[known], database)
        rest = np.setdiff1d(np.arange(len(afterstates)), known)
        assert np.array_equal(values[rest], model.afterstate_distributions(afterstates)[rest])
        # evaluate_flipped of the afterstates' positions agrees on every row whose game goes on.
        going_on = np.flatnonzero(~afterstates.game_over)
        assert np.abs(wrapped.evaluate_flipped(afterstates.positions)[going_on] - values[going_on]).max() < 1e-12


# Bear-offs whose values can be worked by hand: X has just moved (the opponent O to roll), read from X's side.
HAND_WORKED = [
    # O's 15 on its 1-point bear off 2 or 4 this roll; X's last checker then goes off: a single win, surely.
    ("1:X 24:" + "O" * 15, {"win_single": 1.0}),
    # O's 15 on its 6-point bear off none with 1-1, 4-4, 5-5 and the 16 mixed rolls of two dice 1-5 other than
    # 5-1 and 4-2 (19 of 36): then X wins a gammon; else a single.
    ("1:X 19:" + "O" * 15, {"win_single": 17 / 36, "win_gammon": 19 / 36}),
    # O's last checker goes off with any roll, X having borne off none: a gammon loss (X is not in O's home).
    ("6:" + "X" * 15 + " 24:O", {"lose_gammon": 1.0}),
]


@pytest.mark.parametrize("variant", ["tapa", "backgammon"])
@pytest.mark.parametrize("layout, expected", HAND_WORKED, ids=["single", "gammon-or-single", "gammon-loss"])
def test_the_bear_off_wrapper_gives_hand_worked_values_from_the_movers_side(shipped, variant, layout, expected):
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.notation import board

    rules = variant_rules(variant)
    batch = PositionBatch.from_positions([board(rules, layout, "X")])
    assert bearoff_mask(batch).all()
    want = [expected.get(name, 0.0) for name in outcome_names(rules)]
    for model in (TorchEvaluator(shipped[variant]), KernelEvaluator(shipped[variant])):
        assert BearoffEvaluator(model).evaluate_flipped(batch)[0] == pytest.approx(want, abs=1e-6)  # float32 tables


def test_a_kernel_evaluator_owns_its_copy_and_follows_its_network(shipped):
    net = load_network(ROOT / "checkpoints/tapa.pt")
    evaluator = KernelEvaluator(net)
    positions = _afterstates("tapa", 50, seed=4).positions
    before = evaluator.evaluate(positions).copy()
    with torch.no_grad():
        net.linear_layers()[-1].bias[0] += 0.5  # one class only: a shift of every logit would not show
    after = evaluator.evaluate(positions)
    assert np.abs(after - before).max() > 1e-3
    assert np.abs(after - TorchEvaluator(net).evaluate(positions)).max() < TOLERANCE


def test_a_net_bot_plays_the_same_moves_by_any_implementation_of_the_same_network(shipped, tmp_path):
    net = shipped["backgammon"]
    model = numpy_model.load(str(export_checkpoint(ROOT / "checkpoints/backgammon.pt", "npz", tmp_path / "b.npz")))
    afterstates = _afterstates("backgammon", 30, seed=5)
    choices = {}
    for name, evaluator in (("kernel", evaluator_for(net, bearoff=False)), ("torch", TorchEvaluator(net)),
                            ("numpy", numpy_evaluator(model))):
        bot = NetBot(evaluator, plies=1)
        assert bot.bearoff and bot.evaluator.model is evaluator
        choices[name] = bot.choose(afterstates, np.random.default_rng(6))
    decisions = int((np.diff(afterstates.offsets) > 1).sum())
    for name in ("torch", "numpy"):
        assert np.sum(choices[name] != choices["kernel"]) <= max(1, decisions // 100), name


def test_an_encoded_evaluator_takes_any_function_of_the_inputs(shipped):
    net = shipped["tapa"]
    torch_evaluator = TorchEvaluator(net)

    def probabilities(features: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return torch.softmax(net(torch.from_numpy(features)), dim=-1).numpy()

    encoded = EncodedEvaluator(probabilities, net.rules, net.encoding_version, "function")
    afterstates = _afterstates("tapa", 60, seed=7)
    assert np.array_equal(encoded.afterstate_distributions(afterstates),
                          torch_evaluator.afterstate_distributions(afterstates))
    with pytest.raises(ValueError, match="trained for rule set 'tapa'; it cannot play 'plakoto'"):
        from tapa_ai.rules.options import variant_rules

        encoded.check_rules(variant_rules("plakoto"))
