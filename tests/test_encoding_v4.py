"""Encoding version 4 (the running games fevga and narde): layout, exact values, symmetry, races, the fast kernel.

Version 4 is version 3 computed path-aware, then ``rules.parallel``, ``mover.passed`` and
``opponent.passed``. The running-game columns are checked against ``reference_v4``, a per-position
loop over ``Position`` stack strings written from ``docs/encoding.md`` ("Version 4"), sharing no code
with the encoders (numpy in ``encoding``, numba in ``fast_eval``, ``export.numpy_model``). The
positions come from random games of the reference rules (the fast move generator does not play the
running games) and hand-made boards.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from tapa_ai.config import ModelConfig
from tapa_ai.export import export_network, numpy_model
from tapa_ai.movegen.batch import PositionBatch, concatenate
from tapa_ai.movegen.random_positions import mixed_positions
from tapa_ai.net.encoding import (
    ENCODING_VERSIONS, MOVER_CONTACT, OPPONENT_CONTACT, OPPONENT_EXPOSURE, PARALLEL_COLUMN, RUNNING_COLUMNS, column,
    encode, encode_positions, feature_names, num_features, swap_side_blocks,
)
from tapa_ai.net.fast_eval import DENSE_MODES, FastEncoder, FastEvaluator, fast_encode
from tapa_ai.net.fast_kernel import race_flags
from tapa_ai.net.model import EvaluatorNet, evaluate, race_rows
from tapa_ai.notation import board
from tapa_ai.notation.json_position import position_to_json
from tapa_ai.rules import Position, legal_moves, next_turn, other, start_position
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.outcomes import swap_sides

from .test_encoding import VARIANTS, random_positions, reference_features
from .test_encoding_v2 import reference_exposure
from .test_encoding_v3 import reference_contact

RUNNING = ["fevga", "narde"]
WEB_MODEL = Path(__file__).resolve().parent.parent / "tapa_ai" / "web" / "model.js"
ROLLS36 = [(a, b) for a in range(1, 7) for b in range(1, 7)]
TOLERANCE = 1e-5

# The worked example of docs/encoding.md ("Version 4"): fevga, X to move, X's point numbers.
DOCS_EXAMPLE = "24:XXXX 20:XX 14:X 5:XXX 12:OO 16:OOO 21:O 22:O 23:O"


def running_positions(variant: str, games: int, seed: int) -> list[Position]:
    """Every position met in ``games`` random games of the reference rules (seeded)."""
    rng = random.Random(seed)
    positions = []
    for _ in range(games):
        position = start_position(variant, rng.choice("XO"))
        while True:
            positions.append(position)
            move = rng.choice(legal_moves(position, (rng.randint(1, 6), rng.randint(1, 6))))
            if move.position.result is not None:
                break
            position = next_turn(move.position)
    return positions


def colour_swapped(position: Position) -> Position:
    """The same running-game position with X and O exchanged: X's point p becomes O's point p."""
    swap = str.maketrans("XO", "OX")
    points = tuple(position.points[(index + 12) % 24].translate(swap) for index in range(24))
    return Position(position.rules, points, position.off[::-1], position.bar[::-1], other(position.turn))


def reference_race(position: Position) -> bool:
    """No contact left. Running games: every checker of each side on its own points 1..12 (or off)."""
    if position.rules.parallel:
        return not any(side in position.stack(side, point) for side in "XO" for point in range(13, 25))
    back = [25 if position.bar_count(side) else max(position.occupied_points(side), default=0) for side in "XO"]
    return sum(back) <= 25


def reference_block_contact(position: Position) -> list[float]:
    """The 6 contact columns of a running-game position: docs/encoding.md, "Version 3: contact", with a point
    open to a side exactly when no opposing checker stands on it, in each side's own numbering."""
    values: list[float] = []
    for side in (position.turn, other(position.turn)):
        foe = other(side)

        def is_open(point: int) -> bool:
            return foe not in position.stack(side, point)

        sources = [p for p in range(1, 25) if side in position.stack(side, p)]
        if not sources:
            values += [0.0, 0.0, 0.0]
            continue
        rear = max(sources)
        closed = [p for p in range(max(1, rear - 12), rear) if not is_open(p)]
        limit = min(closed) if closed else rear
        home = all(side not in position.stack(side, p) for p in range(7, 25))
        escapes = dance = 0
        for a, b in ROLLS36:
            landed = set()
            for steps in ([(a,) * 4] if a == b else [(a, b), (b, a)]):
                point = rear
                for step in steps:
                    point -= step
                    if point < 1:
                        break
                    landed.add(point)
                    if not is_open(point):
                        break
            escapes += any(p < limit and is_open(p) for p in landed)
            can_move = any(s - d >= 1 and is_open(s - d) for s in sources for d in (a, b))
            dance += not can_move and not home
        longest = run = 0
        for p in range(1, rear):
            run = 0 if is_open(p) else run + 1
            longest = max(longest, run)
        values += [escapes / 36, min(longest, 6) / 6, dance / 36]
    return values


def reference_v4(position: Position) -> np.ndarray:
    """The 318 columns of version 4, the slow, obvious way from docs/encoding.md."""
    first = list(reference_features(position))  # Position.stack numbers each side's points by the rules' paths
    if not position.rules.parallel:
        return np.array(first + list(reference_exposure(position)) + list(reference_contact(position)) + [0, 0, 0],
                        dtype=np.float32)
    passed = [any(side in position.stack(side, p) for p in range(1, 12)) or position.off_count(side) > 0
              for side in (position.turn, other(position.turn))]
    return np.array(first + [0.0] * 50 + reference_block_contact(position) + [1.0] + passed, dtype=np.float32)


@pytest.fixture(scope="module")
def running() -> list[Position]:
    found = []
    for index, variant in enumerate(RUNNING):
        found += running_positions(variant, 4, seed=40 + index)
    return found


@pytest.fixture(scope="module")
def existing() -> list[Position]:
    found = []
    for index, variant in enumerate(VARIANTS):
        found += random_positions(variant, 6, seed=50 + index)
    return found


def _net(rules, layers=1, hidden=32, activation="relu", race_network=False, seed=7):
    config = ModelConfig(layers=layers, hidden=hidden, activation=activation, encoding_version=4,
                         race_network=race_network)
    net = EvaluatorNet(config, rules, seed=seed)
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.mul_(3.0)  # saturate some units and spread the classes
        for part in net.parts:
            # Large weights on the columns version 4 adds or changes, so that a wrong one shows in the outputs.
            net.part(part)[0].weight[:, MOVER_CONTACT.start:] *= 10.0
    return net


# -- layout ----------------------------------------------------------------------------------------
def test_version_4_is_version_3_plus_three_running_game_columns():
    assert ENCODING_VERSIONS[:4] == (1, 2, 3, 4) and num_features(4) == 318
    names = feature_names(4)
    assert names[:315] == feature_names(3) and len(set(names)) == 318
    assert names[315:] == ["rules.parallel", "mover.passed", "opponent.passed"]
    assert (column("rules.parallel"), column("mover.passed"), column("opponent.passed")) == (315, 316, 317)
    assert (PARALLEL_COLUMN, RUNNING_COLUMNS.stop) == (315, 318)


def test_existing_variants_version_4_is_version_3_and_three_zeros(existing):
    # Versions 1-3 themselves are checked against their references in test_encoding*.py (unchanged).
    batch = PositionBatch.from_positions(existing)
    v4 = encode(batch, version=4)
    assert np.array_equal(v4[:, :315], encode(batch, version=3)) and not v4[:, 315:].any()
    assert np.array_equal(v4, np.stack([reference_v4(position) for position in existing]))


# -- exact values ------------------------------------------------------------------------------------
def test_running_games_equal_the_reference(running):
    features = encode_positions(running, version=4)
    expected = np.stack([reference_v4(position) for position in running])
    assert np.array_equal(features, expected)
    assert features[:, 316:].any() and not features[:, 316:].all(), "passed should take both values"
    assert features[:, MOVER_CONTACT.start:OPPONENT_CONTACT.stop].any()


def test_the_worked_example_of_the_docs():
    features = encode_positions([board("fevga", DOCS_EXAMPLE)], version=4)[0]
    names = feature_names(4)
    got = {names[i]: round(float(features[i]), 6) for i in np.flatnonzero(features)}
    mover_points = {f"mover.p{p:02d}.{unit}": value for p, stack in ((24, 4), (20, 2), (14, 1), (5, 3))
                    for unit, value in zip(("free1", "free2", "free3", "free_extra"),
                                           (1.0, float(stack >= 2), float(stack >= 3), max(stack - 3, 0) / 2))
                    if value}
    # O's checkers on X's 12, 16, 21, 22, 23 stand on O's 24, 4, 9, 10, 11.
    opponent_points = {"opponent.p24.free1": 1.0, "opponent.p24.free2": 1.0, "opponent.p04.free1": 1.0,
                       "opponent.p04.free2": 1.0, "opponent.p04.free3": 1.0, "opponent.p09.free1": 1.0,
                       "opponent.p10.free1": 1.0, "opponent.p11.free1": 1.0}
    expected = {**mover_points, **opponent_points,
                "mover.on_24": round(4 / 15, 6), "mover.off": round(5 / 15, 6), "mover.pips": round(165 / 360, 6),
                "opponent.on_24": round(2 / 15, 6), "opponent.off": round(7 / 15, 6),
                "opponent.pips": round(90 / 360, 6),
                # X's rear (24) is past O's blockade (X's 12, 16, 21, 22, 23: one checker closes a point) only
                # with 5-5: 19, 14, 9; the prime is X's 21-23.
                "mover.escapes": round(1 / 36, 6), "mover.prime": round(3 / 6, 6),
                # O's rear (its 24 = X's 12): X holds O's 12 and 17 (X's 24 and 5); only 5-5 (19, 14, 9) passes.
                "opponent.escapes": round(1 / 36, 6), "opponent.prime": round(1 / 6, 6),
                "rules.parallel": 1.0, "mover.passed": 1.0, "opponent.passed": 1.0}
    assert got == expected


def test_a_lone_opposing_checker_closes_its_point_and_nothing_is_exposed():
    # O alone on X's 20 (O's 8) closes it: from X's 24, 4 cannot be played by the rear checker.
    features = encode_positions([board("fevga", "24:XXXXXXXXXXXXXX 3:X 20:O 12:OOOOOOOOOOOOOO", turn="X")],
                                version=4)[0]
    assert features[column("mover.prime")] == np.float32(1 / 6)
    assert not features[259:OPPONENT_EXPOSURE.stop].any()  # a lone checker cannot be landed on
    assert features[column("mover.passed")] == 1 and features[column("opponent.passed")] == 1  # O's 8 < 12


def test_passed_is_the_runner_rule_condition():
    start = encode_positions([start_position("fevga", "X")], version=4)[0]
    assert start[column("mover.passed")] == 0 and start[column("opponent.passed")] == 0
    # A checker on the side's own 12 has not passed; on its 11 it has.
    on_12 = encode_positions([board("fevga", "24:XXXXXXXXXXXXXX 12:X 13:OOOOOOOOOOOOOOO")], version=4)[0]
    assert on_12[column("mover.passed")] == 0
    on_11 = encode_positions([board("fevga", "24:XXXXXXXXXXXXXX 11:X 13:OOOOOOOOOOOOOOO")], version=4)[0]
    assert on_11[column("mover.passed")] == 1
    # Borne off counts (O's checkers on X's 13-18 are on O's 1-6).
    off = encode_positions([board("fevga", "24:XXXXXXXXXXXXXXX 13:OOOOOOOOOOOOOO", turn="X")], version=4)[0]
    assert off[column("opponent.passed")] == 1 and off[column("opponent.all_home")] == 1


def test_versions_1_to_3_refuse_the_running_games(running):
    batch = PositionBatch.from_positions(running[:20])
    mixed = concatenate([PositionBatch.from_positions(running[:5]), mixed_positions(variant_rules("tapa"), 5,
                                                                                     np.random.default_rng(1))])
    for version in (1, 2, 3):
        for rows in (batch, mixed):
            with pytest.raises(ValueError, match=rf"encoding version {version} cannot encode 'fevga' \(a running "
                                                 r"game, paths='parallel'\): it needs version 4"):
                encode(rows, version=version)
            with pytest.raises(ValueError, match="needs version 4"):
                fast_encode(rows, version)
        with pytest.raises(ValueError, match="needs version 4"):
            EvaluatorNet(ModelConfig(encoding_version=version), variant_rules("narde"))
        with pytest.raises(numpy_model.ModelFileError, match="needs encoding version 4"):
            numpy_model.encode_position(position_to_json(running[0]), version=version)
    # A version-3 evaluator of another rule set is not handed running-game rows either.
    tapa_v3 = EvaluatorNet(ModelConfig(hidden=8, encoding_version=3), variant_rules("tapa"), seed=1)
    with pytest.raises(ValueError, match="needs version 4"):
        FastEvaluator.from_net(tapa_v3).evaluate(mixed)


# -- symmetry ----------------------------------------------------------------------------------------
def test_colour_swap_and_flip_symmetry(running):
    twins = [colour_swapped(position) for position in running]
    assert np.array_equal(encode_positions(running, version=4), encode_positions(twins, version=4))
    batch = PositionBatch.from_positions(running)
    # The other side's view of a running game is the board turned by 12: the side blocks swap, nothing else.
    assert np.array_equal(encode(batch.flipped(), version=4), swap_side_blocks(encode(batch, version=4)))


# -- races ---------------------------------------------------------------------------------------------
def test_running_games_race_when_both_sides_are_past_each_other(running, existing):
    positions = running + existing
    batch = PositionBatch.from_positions(positions)
    expected = np.array([reference_race(position) for position in positions])
    in_running = expected[:len(running)]
    assert 10 < in_running.sum() < len(running) - 10, "the sample should hold running races and contact positions"
    features = encode(batch, version=4)
    assert np.array_equal(race_rows(torch.from_numpy(features)).numpy(), expected)
    assert np.array_equal(numpy_model.race_rows(features), expected)
    assert np.array_equal(race_flags(batch.board, batch.pinned, batch.bar, batch.parallel_rows()), expected)
    flipped = batch.flipped()
    assert np.array_equal(race_flags(flipped.board, flipped.pinned, flipped.bar, flipped.parallel_rows()), expected)
    assert np.array_equal(race_rows(torch.from_numpy(encode(flipped, version=4))).numpy(), expected)


def test_race_boundary_of_the_running_games():
    # X's rearmost on its 12, O's on its 12 (X's 24): past each other.
    assert reference_race(board("narde", "12:XXXXXXXXXXXXXXX 24:OOOOOOOOOOOOOOO"))
    # X on its 13 stands on O's 1: O's checkers must still pass it.
    assert not reference_race(board("narde", "13:X 12:XXXXXXXXXXXXXX 24:OOOOOOOOOOOOOOO"))
    # O on its 13 (X's 1) blocks X's 1.
    assert not reference_race(board("narde", "12:XXXXXXXXXXXXXXX 1:O 24:OOOOOOOOOOOOOO"))
    for layout in ("12:XXXXXXXXXXXXXXX 24:OOOOOOOOOOOOOOO", "13:X 12:XXXXXXXXXXXXXX 24:OOOOOOOOOOOOOOO",
                   "12:XXXXXXXXXXXXXXX 1:O 24:OOOOOOOOOOOOOO"):
        for turn in "XO":
            position = board("narde", layout, turn=turn)
            batch = PositionBatch.from_positions([position])
            expected = reference_race(position)
            assert bool(race_rows(torch.from_numpy(encode(batch, version=4)))[0]) == expected
            assert bool(race_flags(batch.board, batch.pinned, batch.bar, batch.parallel_rows())[0]) == expected


# -- the fast kernel and the encoders ------------------------------------------------------------------
@pytest.mark.parametrize("variant", RUNNING)
def test_fast_encoder_writes_exactly_the_features_of_encode(variant, running, existing):
    mine = PositionBatch.from_positions([p for p in running if p.rules.name == variant])
    mixed = PositionBatch.from_positions(running + existing)
    for batch in (mine, mine.flipped(), mixed):
        assert np.array_equal(fast_encode(batch, 4), encode(batch, version=4))
        out = np.full((len(batch), 318), np.nan, dtype=np.float32)
        FastEncoder(4, threads=2).encode(batch, out=out)
        assert np.array_equal(out, encode(batch, version=4))


@pytest.mark.parametrize("variant", RUNNING)
@pytest.mark.parametrize("layers, hidden, activation", [(1, 32, "relu"), (2, [24, 8], "tanh"), (0, 8, "relu")])
@pytest.mark.parametrize("dense", DENSE_MODES)
def test_fast_evaluation_equals_encoding_and_torch_network(variant, layers, hidden, activation, dense, running):
    net = _net(variant_rules(variant), layers, hidden, activation)
    batch = PositionBatch.from_positions([p for p in running if p.rules.name == variant])
    evaluator = FastEvaluator.from_net(net, dense=dense)
    probabilities, equities = evaluator.evaluate(batch)
    expected, expected_equities = evaluate(net, encode(batch, version=4))
    assert np.abs(probabilities - expected).max() < TOLERANCE
    assert np.abs(equities - expected_equities).max() < TOLERANCE * 4
    # From the other side without a copy: the board turned by 12.
    probabilities, _ = evaluator.evaluate_flipped(batch)
    flipped, _ = evaluate(net, encode(batch.flipped(), version=4))
    assert np.abs(probabilities - swap_sides(flipped)).max() < TOLERANCE


@pytest.mark.parametrize("variant", ["tapa", "backgammon", "fevga"])
def test_one_batch_of_every_variant_goes_through_one_version_4_net(variant, running, existing):
    # Each row takes the first-layer loop of its own rule set's paths.
    net = _net(variant_rules(variant))
    batch = PositionBatch.from_positions(running[::3] + existing[::2])
    evaluator = FastEvaluator.from_net(net)
    probabilities, _ = evaluator.evaluate(batch)
    assert np.abs(probabilities - evaluate(net, encode(batch, version=4))[0]).max() < TOLERANCE
    flipped, _ = evaluator.evaluate_flipped(batch)
    assert np.abs(flipped - swap_sides(evaluate(net, encode(batch.flipped(), version=4))[0])).max() < TOLERANCE


@pytest.mark.parametrize("variant", RUNNING)
@pytest.mark.parametrize("dense", DENSE_MODES)
def test_a_race_network_of_a_running_game_evaluates_each_phase_with_its_network(variant, dense, running):
    net = _net(variant_rules(variant), layers=2, hidden=[16, 8], race_network=True)
    batch = PositionBatch.from_positions([p for p in running if p.rules.name == variant])
    features = torch.from_numpy(encode(batch, version=4))
    race = race_rows(features)
    assert race.any() and not race.all()
    with torch.no_grad():
        logits = net(features)
        assert torch.equal(logits[race], net.race_layers(features[race]))
    evaluator = FastEvaluator.from_net(net, dense=dense)
    probabilities, _ = evaluator.evaluate(batch)
    assert np.abs(probabilities - evaluate(net, features)[0]).max() < TOLERANCE
    flipped, _ = evaluator.evaluate_flipped(batch)
    assert np.abs(flipped - swap_sides(evaluate(net, encode(batch.flipped(), version=4))[0])).max() < TOLERANCE


# -- exported models -------------------------------------------------------------------------------------
def test_the_numpy_encoder_computes_version_4(running, existing):
    positions = running + existing
    batch = PositionBatch.from_positions(positions)
    as_json = [position_to_json(position) for position in positions]
    assert np.array_equal(numpy_model.encode_positions(as_json, version=4), encode(batch, version=4))
    flipped = batch.flipped()
    assert np.array_equal(numpy_model.encode_positions(flipped.to_json(), version=4), encode(flipped, version=4))
    for version in (1, 2, 3):
        assert np.array_equal(numpy_model.encode_positions(as_json[len(running):], version=version),
                              encode(batch.take(np.arange(len(running), len(positions))), version=version))
    with pytest.raises(numpy_model.ModelFileError, match=r"rules: paths='parallel' with contact='pin'"):
        numpy_model.encode_position(dict(as_json[0], rules={"contact": "pin"}), version=4)


@pytest.mark.filterwarnings(r"ignore:.*torch\.jit\..*deprecated:DeprecationWarning")
@pytest.mark.parametrize("format", [pytest.param("onnx", marks=pytest.mark.requires("onnx", "onnxruntime")),
                                    "torchscript", "npz"])
@pytest.mark.parametrize("variant", RUNNING)
def test_every_export_format_evaluates_a_running_game_race_network(variant, format, running, existing, tmp_path):
    net = _net(variant_rules(variant), layers=2, hidden=[12, 6], race_network=True).eval()
    mine = [p for p in running if p.rules.name == variant]
    # Rows of the other variants too: their phase is the opposite paths' test on the same model.
    features = encode(PositionBatch.from_positions(mine + existing), version=4)
    path = export_network(net, format, tmp_path / f"model.{format}")
    if format == "onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        probabilities, equity = session.run(["probabilities", "equity"], {"features": features})
    elif format == "torchscript":
        module = torch.jit.load(str(path))
        with torch.inference_mode():
            probabilities, equity = (tensor.numpy() for tensor in module(torch.from_numpy(features)))
            assert torch.equal(module.race_rows(torch.from_numpy(features)), race_rows(torch.from_numpy(features)))
    else:
        model = numpy_model.load(str(path))
        probabilities, equity = model.evaluate(features)
        by_position, _ = model.evaluate_positions([position_to_json(position) for position in mine])
        assert np.abs(by_position - probabilities[:len(mine)]).max() < TOLERANCE
        with pytest.raises(numpy_model.ModelFileError, match="does not fit this"):
            model.evaluate_positions([position_to_json(existing[0])])
    expected_probabilities, expected_equity = evaluate(net, features)
    assert np.abs(probabilities - expected_probabilities).max() < TOLERANCE
    assert np.abs(equity - expected_equity).max() < TOLERANCE * 4


def test_the_web_model_tells_running_game_races_as_race_rows(running, existing, tmp_path):
    from tests.requires import require_node

    require_node()
    features = encode(PositionBatch.from_positions(running + existing), version=4)
    expected = race_rows(torch.from_numpy(features)).numpy()
    rows = tmp_path / "features.json"
    rows.write_text(json.dumps(features.tolist()))
    script = (f"const model = require({json.dumps(str(WEB_MODEL))});"
              f"const rows = JSON.parse(require('fs').readFileSync({json.dumps(str(rows))}, 'utf8'));"
              "console.log(JSON.stringify(rows.map(x => model.isRace(Float32Array.from(x)))));")
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected.tolist()
