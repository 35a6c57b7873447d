"""Encoding version 5 (cascading doubles, Gul Bara): layout, exact values, refusals, symmetry, every encoder.

Version 5 is version 4 followed by 11 cascade columns (``docs/encoding.md``, "Version 5"). They are checked
against ``reference_cascade``, a per-position function of ``Position.turns``/``Position.cascade`` written from
that page, sharing no code with the encoders (numpy in ``encoding``, numba in ``fast_eval``,
``export.numpy_model``, ``web/encoding.js``). The positions come from random games of the reference rules (Gul
Bara, and a variant of it whose remainders go to the opponent and whose doubles cascade from the first turn),
the fast generator's playouts, and hand-made pending stages with every turn count and every stage.
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
    CASCADE_COLUMNS, CASCADE_VERSION, ENCODING_VERSION, ENCODING_VERSIONS, check_rules_version, column,
    default_version, encode, encode_positions, feature_names, num_features, swap_side_blocks,
)
from tapa_ai.net.fast_eval import DENSE_MODES, FastEncoder, FastEvaluator, fast_encode
from tapa_ai.net.model import EvaluatorNet, evaluate
from tapa_ai.notation.json_position import position_to_json
from tapa_ai.rules import legal_moves, next_turn, start_position
from tapa_ai.rules.options import GULBARA, variant_rules
from tapa_ai.rules.outcomes import swap_sides
from tapa_ai.rules.turns import Cascade

from .test_encoding import VARIANTS, random_positions
from .test_encoding_v4 import reference_v4, running_positions

ENCODING_JS = Path(__file__).resolve().parent.parent / "tapa_ai" / "web" / "encoding.js"
TOLERANCE = 1e-5
OPPONENT_REMAINDERS = GULBARA.replace(cascade_remainder="opponent", plain_double_turns=0)
"""Gul Bara whose unplayed steps go to the opponent (remainder stages, stages of fewer than 4 steps), every
double cascading from the first turn."""


def reference_cascade(position) -> list[float]:
    """The 11 cascade columns of version 5, the slow, obvious way from docs/encoding.md."""
    rules = position.rules
    if not rules.cascades:
        return [0.0] * 11
    mover = 0 if position.turn == "X" else 1
    turns = (position.turns[mover], position.turns[1 - mover])  # Position.turns is (X, O)
    values = [1.0] + [float(count >= rules.plain_double_turns) for count in turns]
    stage = [0.0] * 8
    if position.cascade is not None:
        stage[position.cascade.number - 1] = 1.0
        stage[6] = position.cascade.steps / 4
        stage[7] = float(position.cascade.remainder)
    return values + stage


def reference_v5(position) -> np.ndarray:
    return np.concatenate([reference_v4(position), np.array(reference_cascade(position), dtype=np.float32)])


def cascade_games(rules, games: int, seed: int) -> list:
    """Every position met in ``games`` random games of the reference rules (seeded), each decision's own."""
    rng = random.Random(seed)
    positions = []
    for _ in range(games):
        position = start_position(rules, rng.choice("XO"))
        while True:
            positions.append(position)
            dice = None if position.cascade is not None else (rng.randint(1, 6), rng.randint(1, 6))
            move = rng.choice(legal_moves(position, dice))
            if move.position.result is not None:
                break
            position = next_turn(move.position)
    return positions


def every_stage(positions: list, rules=GULBARA) -> list:
    """Boards of ``positions`` with each turn count 0..3 of both sides and each pending stage (or none): all 196
    combinations of the cascade columns (more than one kernel pass tells apart)."""
    stages = [None] + [Cascade(number, steps, remainder) for number in range(1, 7) for steps in range(1, 5)
                       for remainder in (False, True)]
    made = []
    index = 0
    for mover_turns in range(4):
        for opponent_turns in range(4):
            for stage in stages:
                board = positions[index % len(positions)]
                index += 1
                turns = (mover_turns, opponent_turns) if board.turn == "X" else (opponent_turns, mover_turns)
                made.append(board.with_changes(rules=rules, turns=turns, cascade=stage, next=None))
    return made


@pytest.fixture(scope="module")
def gulbara() -> list:
    found = cascade_games(GULBARA, 5, seed=60) + cascade_games(OPPONENT_REMAINDERS, 3, seed=61)
    return found + every_stage(found[::7])


@pytest.fixture(scope="module")
def others() -> list:
    found = []
    for index, variant in enumerate(VARIANTS):
        found += random_positions(variant, 3, seed=70 + index)
    for index, variant in enumerate(["fevga", "narde"]):
        found += running_positions(variant, 2, seed=80 + index)
    return found


def _net(rules, layers=1, hidden=32, activation="relu", race_network=False, seed=7):
    net = EvaluatorNet(ModelConfig(encoding_version=5, layers=layers, hidden=hidden, activation=activation, race_network=race_network),
                       rules, seed=seed)
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.mul_(3.0)
        for part in net.parts:
            # Large weights on the cascade columns, so that a wrong one shows in the outputs.
            net.part(part)[0].weight[:, CASCADE_COLUMNS] *= 10.0
    return net


# -- layout ------------------------------------------------------------------------------------------
def test_version_5_is_version_4_plus_eleven_cascade_columns():
    assert ENCODING_VERSIONS == (1, 2, 3, 4, 5) and CASCADE_VERSION == 5 and num_features(5) == 329
    names = feature_names(5)
    assert names[:318] == feature_names(4) and len(set(names)) == 329
    assert names[318:] == ["rules.cascades", "mover.cascade_now", "opponent.cascade_now",
                           *(f"stage.number{n}" for n in range(1, 7)), "stage.steps", "stage.remainder"]
    assert (column("rules.cascades"), column("stage.number1"), column("stage.remainder")) == (318, 321, 328)
    assert (CASCADE_COLUMNS.start, CASCADE_COLUMNS.stop) == (318, 329)


def test_default_versions():
    assert default_version(GULBARA) == default_version(OPPONENT_REMAINDERS) == 5
    assert default_version(variant_rules("fevga")) == 4
    assert default_version(variant_rules("tapa")) == ENCODING_VERSION


def test_other_rule_sets_version_5_is_version_4_and_eleven_zeros(others):
    batch = PositionBatch.from_positions(others)
    v5 = encode(batch, version=5)
    assert np.array_equal(v5[:, :318], encode(batch, version=4)) and not v5[:, 318:].any()
    assert np.array_equal(fast_encode(batch, 5), v5)


# -- exact values ------------------------------------------------------------------------------------
def test_gul_bara_equals_the_reference(gulbara):
    features = encode_positions(gulbara, version=5)
    assert np.array_equal(features, np.stack([reference_v5(position) for position in gulbara]))
    cascade = features[:, CASCADE_COLUMNS]
    assert cascade[:, 0].all()
    for unit in range(1, 11):  # every column takes both values
        assert cascade[:, unit].any() and not cascade[:, unit].all(), feature_names(5)[318 + unit]
    staged = cascade[:, 3:9].sum(axis=1)
    assert set(staged.tolist()) == {0.0, 1.0}
    assert not cascade[staged == 0, 9:].any()


def test_games_meet_pending_stages_remainders_and_every_turn_count():
    games = cascade_games(GULBARA, 5, seed=60) + cascade_games(OPPONENT_REMAINDERS, 3, seed=61)
    batch = PositionBatch.from_positions(games)
    assert batch.has_stages() and set(batch.turns.reshape(-1).tolist()) == {0, 1, 2, 3}
    assert (batch.stage[:, 2] == 1).any() and (batch.stage[(batch.stage[:, 0] > 0), 1] < 4).any()


def test_the_cascade_now_flags_follow_plain_double_turns():
    start = start_position(GULBARA, "X")
    for turns, expected in (((0, 0), (0, 0)), ((2, 3), (0, 1)), ((3, 2), (1, 0)), ((3, 3), (1, 1))):
        features = encode_positions([start.with_changes(turns=turns)], version=5)[0]
        assert (features[column("mover.cascade_now")], features[column("opponent.cascade_now")]) == expected
    # O to move: its own count is the mover's.
    features = encode_positions([start.with_changes(turn="O", turns=(3, 1))], version=5)[0]
    assert (features[column("mover.cascade_now")], features[column("opponent.cascade_now")]) == (0, 1)
    staged = start.with_changes(turns=(3, 0), cascade=Cascade(5, 3, True))
    features = encode_positions([staged], version=5)[0]
    names = feature_names(5)
    assert {names[i]: float(features[i]) for i in np.flatnonzero(features[318:]) + 318} == {
        "rules.cascades": 1.0, "mover.cascade_now": 1.0, "stage.number5": 1.0, "stage.steps": 0.75,
        "stage.remainder": 1.0}


def test_versions_1_to_4_refuse_cascading_rule_sets(gulbara, others):
    batch = PositionBatch.from_positions(gulbara[:20])
    mixed = concatenate([PositionBatch.from_positions(others[:5]), PositionBatch.from_positions(gulbara[:5])])
    message = r"encoding version {} cannot encode 'gulbara' \(doubles cascade, doubles='cascade'\): it needs version 5"
    for version in (1, 2, 3, 4):
        with pytest.raises(ValueError, match=message.format(version)):
            check_rules_version(GULBARA, version)
        for rows in (batch, mixed):
            with pytest.raises(ValueError, match=message.format(version)):
                encode(rows, version=version)
            with pytest.raises(ValueError, match="needs version 5"):
                fast_encode(rows, version)
        with pytest.raises(ValueError, match="needs version 5"):
            EvaluatorNet(ModelConfig(encoding_version=version), GULBARA)
        with pytest.raises(numpy_model.ModelFileError, match="needs encoding version 5"):
            numpy_model.encode_position(position_to_json(gulbara[0]), version=version)
    check_rules_version(GULBARA, 5)
    fevga_v4 = EvaluatorNet(ModelConfig(hidden=8, encoding_version=4), variant_rules("fevga"), seed=1)
    with pytest.raises(ValueError, match="needs version 5"):
        FastEvaluator.from_net(fevga_v4).evaluate(mixed)


# -- symmetry -----------------------------------------------------------------------------------------
def test_flip_swaps_the_cascade_now_pair_and_keeps_the_stage(gulbara):
    batch = PositionBatch.from_positions(gulbara)
    features = encode(batch, version=5)
    flipped = encode(batch.flipped(), version=5)
    assert np.array_equal(flipped, swap_side_blocks(features))
    assert np.array_equal(flipped[:, 321:329], features[:, 321:329]) and flipped[:, 318].all()
    assert np.array_equal(flipped[:, [319, 320]], features[:, [320, 319]])
    assert not np.array_equal(flipped[:, 319], features[:, 319])


# -- the fast kernel ---------------------------------------------------------------------------------------
def test_fast_encoder_writes_exactly_the_features_of_encode(gulbara, others):
    mine = PositionBatch.from_positions(gulbara)
    playouts = mixed_positions(GULBARA, 400, np.random.default_rng(5))
    assert playouts.has_stages()
    mixed = concatenate([PositionBatch.from_positions(others), mine, playouts])
    for batch in (mine, mine.flipped(), playouts, playouts.flipped(), mixed):
        assert np.array_equal(fast_encode(batch, 5), encode(batch, version=5))
        out = np.full((len(batch), 329), np.nan, dtype=np.float32)
        FastEncoder(5, threads=2).encode(batch, out=out)
        assert np.array_equal(out, encode(batch, version=5))


@pytest.mark.parametrize("layers, hidden, activation", [(1, 32, "relu"), (2, [24, 8], "tanh"), (0, 8, "relu")])
@pytest.mark.parametrize("dense", DENSE_MODES)
def test_fast_evaluation_equals_encoding_and_torch_network(layers, hidden, activation, dense, gulbara, others):
    net = _net(GULBARA, layers, hidden, activation)
    evaluator = FastEvaluator.from_net(net, dense=dense)
    # Gul Bara alone (196 combinations of the cascade columns: two kernel passes), and with other variants' rows.
    for batch in (PositionBatch.from_positions(gulbara), PositionBatch.from_positions(gulbara[::5] + others)):
        probabilities, equities = evaluator.evaluate(batch)
        expected, expected_equities = evaluate(net, encode(batch, version=5))
        assert np.abs(probabilities - expected).max() < TOLERANCE
        assert np.abs(equities - expected_equities).max() < TOLERANCE * 4
        flipped, _ = evaluator.evaluate_flipped(batch)
        assert np.abs(flipped - swap_sides(evaluate(net, encode(batch.flipped(), version=5))[0])).max() < TOLERANCE


@pytest.mark.parametrize("dense", DENSE_MODES)
def test_a_race_network_of_gul_bara(dense, gulbara):
    net = _net(GULBARA, layers=2, hidden=[16, 8], race_network=True)
    batch = PositionBatch.from_positions(gulbara)
    features = encode(batch, version=5)
    evaluator = FastEvaluator.from_net(net, dense=dense)
    probabilities, _ = evaluator.evaluate(batch)
    assert np.abs(probabilities - evaluate(net, features)[0]).max() < TOLERANCE
    flipped, _ = evaluator.evaluate_flipped(batch)
    assert np.abs(flipped - swap_sides(evaluate(net, encode(batch.flipped(), version=5))[0])).max() < TOLERANCE


# -- exported models ---------------------------------------------------------------------------------------
def test_the_numpy_encoder_computes_version_5(gulbara, others):
    positions = gulbara + others
    batch = PositionBatch.from_positions(positions)
    as_json = [position_to_json(position) for position in positions]
    assert np.array_equal(numpy_model.encode_positions(as_json, version=5), encode(batch, version=5))
    flipped = batch.flipped()
    assert np.array_equal(numpy_model.encode_positions(flipped.to_json(), version=5), encode(flipped, version=5))
    assert numpy_model.feature_names(5) == feature_names(5) and numpy_model.num_features(5) == 329
    with pytest.raises(numpy_model.ModelFileError, match=r"cascade.number: must be an integer 1..6"):
        numpy_model.encode_position(dict(as_json[0], cascade={"number": 7, "steps": 4}), version=5)


def test_an_npz_model_of_gul_bara_evaluates_positions(gulbara, others, tmp_path):
    net = _net(GULBARA, layers=2, hidden=[12, 6], race_network=True).eval()
    path = export_network(net, "npz", tmp_path / "model.npz")
    model = numpy_model.load(str(path))
    assert model.encoding_version == 5
    probabilities, equity = model.evaluate_positions([position_to_json(position) for position in gulbara])
    expected, expected_equity = evaluate(net, encode_positions(gulbara, version=5))
    assert np.abs(probabilities - expected).max() < TOLERANCE
    assert np.abs(equity - expected_equity).max() < TOLERANCE * 4
    fevga = [p for p in others if p.rules.name == "fevga"][0]
    with pytest.raises(numpy_model.ModelFileError, match="does not fit this"):
        model.evaluate_positions([position_to_json(fevga)])


def test_the_web_encoder_computes_version_5(gulbara, others, tmp_path):
    from tests.requires import require_node

    require_node()
    positions = gulbara + others
    batch = PositionBatch.from_positions(positions)
    as_json = [position_to_json(position) for position in positions] + batch.flipped().to_json()
    rows = tmp_path / "positions.json"
    rows.write_text(json.dumps(as_json))
    script = (f"const enc = require({json.dumps(str(ENCODING_JS))});"
              f"const rows = JSON.parse(require('fs').readFileSync({json.dumps(str(rows))}, 'utf8'));"
              "const refusals = [1, 2, 3, 4].map(v => { try { enc.encode(rows[0], v); return null; }"
              " catch (e) { return String(e.message); } });"
              "console.log(JSON.stringify([enc.VERSIONS, refusals, rows.map(p => Array.from(enc.encode(p, 5)))]));")
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    versions, refusals, features = json.loads(done.stdout)
    assert versions == [1, 2, 3, 4, 5]
    assert refusals == [f'encoding version {v} cannot encode "gulbara" (doubles cascade, doubles "cascade"): '
                        "it needs version 5" for v in (1, 2, 3, 4)]
    expected = np.concatenate([encode(batch, version=5), encode(batch.flipped(), version=5)])
    assert np.abs(np.asarray(features, dtype=np.float32) - expected).max() <= 1e-6
    assert np.array_equal(np.asarray(features, dtype=np.float32)[:, 318:], expected[:, 318:])
