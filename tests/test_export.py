"""Export (tapa_ai.export): ONNX, TorchScript and npz compute what torch computes; the test vectors hold; clear errors.

Parity: every format's probabilities and equity equal ``tapa_ai.net.model.evaluate``
within 1e-5 on fixed and random positions of every variant, for the shipped
models (the npz copies in ``tests/data``) and for small nets of every
activation. The vectors of ``tests/data/encoding_vectors.json`` (made by
``scripts/make_test_vectors.py``) are reproduced by both encoders and by
every format. ``tapa_ai.export.numpy_model`` works with torch blocked.

Only the ONNX checks need the optional ``onnx`` and ``onnxruntime`` packages:
without them those checks skip, or fail under ``CI=true`` (the ``onnx`` case of every format-parametrized
test and the ONNX graph test) and the TorchScript, npz and numpy-only ones run.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from tapa_ai import __version__
from tapa_ai.net.checkpoint import save_checkpoint
from tapa_ai.cli import main
from tapa_ai.config import ModelConfig, TrainConfig
from tapa_ai.net.encoding import (ENCODING_NAME, ENCODING_VERSION, ENCODING_VERSIONS, NUM_FEATURES, encode,
                                  encode_positions, feature_names, num_features, swap_side_blocks)
from tapa_ai.export import ONNX_OPSET, ExportError, export_checkpoint, export_network, load_npz_network, numpy_model
from tapa_ai.net.model import EvaluatorNet, evaluate
from tapa_ai.rules.outcomes import outcome_names, outcome_points
from tapa_ai.movegen.batch import PositionBatch, concatenate
from tapa_ai.movegen.random_positions import mixed_positions
from tapa_ai.notation.json_position import position_from_json, position_to_json
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.position import start_position
from tests.requires import skip_or_fail

# torch 2.13 marks torch.jit.load deprecated; loading TorchScript files is what these tests check.
pytestmark = pytest.mark.filterwarnings(r"ignore:.*torch\.jit\..*deprecated:DeprecationWarning")

try:
    import onnx
    import onnxruntime
except ImportError:  # the export extra is not installed: only the ONNX checks skip (fail under CI=true)
    onnx = onnxruntime = None
needs_onnx = pytest.mark.requires("onnx", "onnxruntime")  # tests/requires.py

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
VECTORS = json.loads((DATA / "encoding_vectors.json").read_text())
VARIANTS = ["tapa", "plakoto", "backgammon", "fevga", "narde", "gulbara"]
"""The variants of the shipped models (tied to the registry by a test below)."""
RUNNING = ["fevga", "narde"]
"""The running games: model cases like the others, and feature-only cases (``feature_cases``) besides."""
OPPOSITE = ["tapa", "plakoto", "backgammon"]
"""The variants that encoding versions 1 to 3 describe (the running games need version 4)."""
FORMATS = [pytest.param("onnx", marks=needs_onnx), "torchscript", "npz"]
"""Every export format, as test parameters: the ONNX one skips without onnx and onnxruntime."""
TOLERANCE = 1e-5
SMALL_NETS = [(0, 1, "relu"), (2, 16, "tanh"), (1, 12, "sigmoid"), (2, 10, "gelu"), (1, 8, "silu"), (2, [12, 6], "relu"),
              (3, [10, 8, 6], "gelu")]
"""(hidden layers, units or a list of widths, activation) of the small test networks."""


# -- helpers --------------------------------------------------------------------------------------
def small_net(variant: str, layers: int, hidden: int, activation: str, seed: int = 3) -> EvaluatorNet:
    net = EvaluatorNet(ModelConfig(layers=layers, hidden=hidden, activation=activation), variant_rules(variant),
                       seed=seed)
    # Larger weights than the default initialization, so that outputs are far from uniform.
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.mul_(2.5)
    return net.eval()


def shipped_net(variant: str) -> EvaluatorNet:
    return load_npz_network(DATA / f"{variant}.npz")


def sample_positions(variant: str, count: int = 60, seed: int = 5) -> PositionBatch:
    """Fixed positions (both start positions) and random ones (playouts, contact games, end games)."""
    rules = variant_rules(variant)
    fixed = PositionBatch.from_positions([start_position(rules, "X"), start_position(rules, "O")])
    return concatenate([fixed, mixed_positions(rules, count, np.random.default_rng(seed))])


class Runner:
    """Evaluate features with one exported file, in its own runtime."""

    def __init__(self, path: Path, format: str) -> None:
        self.format = format
        if format == "onnx":
            self.session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        elif format == "torchscript":
            self.module = torch.jit.load(str(path))
        else:
            self.model = numpy_model.load(str(path))

    def __call__(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.format == "onnx":
            probabilities, equity = self.session.run(["probabilities", "equity"], {"features": features})
            return probabilities, equity
        if self.format == "torchscript":
            with torch.inference_mode():
                probabilities, equity = self.module(torch.from_numpy(features))
            return probabilities.numpy(), equity.numpy()
        return self.model.evaluate(features)


def max_differences(net: EvaluatorNet, path: Path, format: str, features: np.ndarray) -> tuple[float, float]:
    expected_probabilities, expected_equity = evaluate(net, features)
    probabilities, equity = Runner(path, format)(features)
    assert probabilities.shape == expected_probabilities.shape and probabilities.dtype == np.float32
    assert equity.shape == expected_equity.shape and equity.dtype == np.float32
    return (float(np.abs(probabilities - expected_probabilities).max()),
            float(np.abs(equity - expected_equity).max()))


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


# -- parity -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_format_equals_torch_for_the_shipped_models(variant, format, tmp_path):
    net = shipped_net(variant)
    features = encode(sample_positions(variant), version=net.encoding_version)
    path = export_network(net, format, tmp_path / f"model.{format}")
    probabilities, equity = max_differences(net, path, format, features)
    assert probabilities < TOLERANCE, (format, probabilities)
    assert equity < TOLERANCE, (format, equity)


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("variant", OPPOSITE)
@pytest.mark.parametrize("layers, hidden, activation", SMALL_NETS)
def test_every_format_equals_torch_for_small_nets_of_every_activation(variant, layers, hidden, activation, format,
                                                                      tmp_path):
    units = hidden if isinstance(hidden, int) else sum(hidden)
    net = small_net(variant, layers, hidden, activation, seed=layers * 7 + units)
    features = encode(sample_positions(variant, count=30, seed=units))
    path = export_network(net, format, tmp_path / f"model.{format}")
    probabilities, equity = max_differences(net, path, format, features)
    assert probabilities < TOLERANCE, (format, probabilities)
    assert equity < TOLERANCE, (format, equity)


@pytest.mark.parametrize("format", FORMATS)
def test_the_batch_axis_is_dynamic(format, tmp_path):
    net = small_net("tapa", 1, 8, "relu")
    features = encode(sample_positions("tapa", count=9))
    run = Runner(export_network(net, format, tmp_path / f"model.{format}"), format)
    for rows in (1, 5, len(features)):
        probabilities, equity = run(features[:rows])
        assert probabilities.shape == (rows, 7) and equity.shape == (rows,)
    probabilities, equity = run(np.zeros((0, NUM_FEATURES), dtype=np.float32))
    assert probabilities.shape == (0, 7) and equity.shape == (0,)


def test_npz_round_trip_rebuilds_the_same_torch_network(tmp_path):
    net = small_net("plakoto", 2, 16, "gelu")
    path = export_network(net, "npz", tmp_path / "model.npz", games=77)
    rebuilt = load_npz_network(path)
    for original, copy in zip(net.state_dict().values(), rebuilt.state_dict().values()):
        assert torch.equal(original, copy)
    assert rebuilt.games_trained == 77
    assert rebuilt.config == net.config and rebuilt.rules == net.rules


def test_npz_files_are_deterministic(tmp_path):
    net = small_net("backgammon", 1, 8, "relu")
    first = export_network(net, "npz", tmp_path / "a.npz").read_bytes()
    assert export_network(net, "npz", tmp_path / "b.npz").read_bytes() == first


# -- the numpy module without torch ----------------------------------------------------------------
def test_numpy_model_needs_no_torch_and_works_as_a_copied_single_file(tmp_path):
    (tmp_path / "numpy_model.py").write_bytes((ROOT / "tapa_ai" / "export" / "numpy_model.py").read_bytes())
    case = VECTORS["cases"][0]
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        sys.modules["torch"] = None   # any "import torch" now fails
        sys.modules["numba"] = None
        from tapa_ai.export import numpy_model as packaged        # through the package
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy_model as copied                              # the single copied file
        assert copied.__file__ != packaged.__file__
        case = json.loads({json.dumps(json.dumps(case))})
        for module in (packaged, copied):
            model = module.load({str(DATA / (case["model"] + ".npz"))!r})
            probabilities, equity = model.evaluate_positions([case["position"]])
            assert np.abs(probabilities[0] - case["probabilities"]).max() < 1e-5
            assert abs(equity[0] - case["equity"]) < 1e-5
        assert sys.modules["torch"] is None
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_numpy_encoder_constants_match_the_package():
    assert (numpy_model.ENCODING_NAME, numpy_model.ENCODING_VERSION) == (ENCODING_NAME, ENCODING_VERSION)
    assert numpy_model.NUM_FEATURES == NUM_FEATURES
    assert numpy_model.feature_names() == feature_names()
    for variant in (v for v in VARIANTS if not variant_rules(v).cascades):
        rules = variant_rules(variant)
        assert numpy_model.VARIANT_RULES[variant] == {"contact": rules.contact, "mother_points": rules.mother_points,
                                                      "backgammons": rules.backgammons, "paths": rules.paths}
    gulbara = variant_rules("gulbara")  # the rule set whose doubles cascade also names the options version 5 reads
    assert numpy_model.VARIANT_RULES["gulbara"] == {
        "contact": gulbara.contact, "mother_points": gulbara.mother_points, "backgammons": gulbara.backgammons,
        "paths": gulbara.paths, "doubles": gulbara.doubles, "plain_double_turns": gulbara.plain_double_turns}
    assert numpy_model.ENCODING_VERSIONS == ENCODING_VERSIONS
    assert all(numpy_model.num_features(v) == num_features(v) for v in ENCODING_VERSIONS)
    assert all(numpy_model.feature_names(v) == feature_names(v) for v in ENCODING_VERSIONS)


@pytest.mark.parametrize("rules", [
    variant_rules("tapa"), variant_rules("plakoto"), variant_rules("backgammon"),
    variant_rules("plakoto").replace(mother_points=0), variant_rules("tapa").replace(backgammons=False),
], ids=["tapa", "plakoto", "backgammon", "plakoto-no-mother", "tapa-no-backgammons"])
def test_numpy_encoder_equals_the_batch_encoder_on_random_positions(rules):
    batch = mixed_positions(rules, 90, np.random.default_rng(17))
    positions = batch.to_json()
    assert np.array_equal(numpy_model.encode_positions(positions), encode(batch))
    # From JSON text too, and from the other side.
    assert np.array_equal(numpy_model.encode_position(json.dumps(positions[0])), encode(batch.take([0]))[0])
    flipped = batch.flipped()
    assert np.array_equal(numpy_model.encode_positions(flipped.to_json()), encode(flipped))


def test_numpy_model_refuses_a_position_of_another_rule_set():
    model = numpy_model.load(str(DATA / "tapa.npz"))
    position = {"variant": "backgammon", "points": [""] * 24, "off": {"X": 15, "O": 14}, "turn": "X"}
    position["points"][3] = "O"
    with pytest.raises(numpy_model.ModelFileError, match=r"positions\[0\]: a 'backgammon' position"):
        model.evaluate_positions([position])


@pytest.mark.parametrize("change, message", [
    ({"turn": "Z"}, r"position\.turn"),
    ({"points": ["X"] * 23}, r"position\.points: must be a list of 24"),
    ({"variant": "chess"}, r"position\.variant: unknown variant 'chess'"),
    ({"off": {"X": 16}}, r"position\.off\.X: must be an integer 0\.\.15"),
    ({"rules": {"mother_points": -1}}, r"position\.rules\.mother_points"),
])
def test_numpy_encoder_says_what_is_wrong(change, message):
    position = dict(VECTORS["cases"][0]["position"], **change)
    with pytest.raises(numpy_model.ModelFileError, match=message):
        numpy_model.encode_position(position)
    position = dict(VECTORS["cases"][0]["position"])
    position["points"] = list(position["points"])
    position["points"][5] = "XOX"
    with pytest.raises(numpy_model.ModelFileError, match=r"points\[5\]: 'XOX' is not a legal stack"):
        numpy_model.encode_position(position)
    with pytest.raises(numpy_model.ModelFileError, match=r"positions\[1\]: not valid JSON"):
        numpy_model.load(str(DATA / "tapa.npz")).evaluate_positions([position, "{not json"])


def test_numpy_model_load_errors_name_the_file(tmp_path):
    with pytest.raises(numpy_model.ModelFileError, match="no such file"):
        numpy_model.load(str(tmp_path / "missing.npz"))
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"PK\x03\x04 this is not a zip archive")
    with pytest.raises(numpy_model.ModelFileError, match="garbage.npz: not a readable .npz model file"):
        numpy_model.load(str(garbage))
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes((DATA / "tapa.npz").read_bytes()[:50_000])
    with pytest.raises(numpy_model.ModelFileError, match="truncated.npz"):
        numpy_model.load(str(truncated))
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.zeros(3))
    with pytest.raises(numpy_model.ModelFileError, match=r"other.npz: not a tapa-ai model file: missing array"):
        numpy_model.load(str(other))
    with pytest.raises(ExportError, match="missing.npz"):
        load_npz_network(tmp_path / "missing.npz")


# -- the committed test vectors ---------------------------------------------------------------------
def test_vector_file_covers_every_variant_and_names_its_models():
    encoding = VECTORS["encoding"]
    assert (encoding["name"], encoding["version"], encoding["num_features"]) == (ENCODING_NAME, 5, 329)
    assert encoding["versions"] == {"1": NUM_FEATURES, "2": 309, "3": 315, "4": 318, "5": 329}
    assert VECTORS["feature_names"] == feature_names(5) and VECTORS["feature_names"][:NUM_FEATURES] == feature_names(1)
    from tapa_ai.rules.options import shipped_models

    assert set(VARIANTS) == set(shipped_models())
    # Gul Bara's cases include positions inside a cascade (docs/rules.md 10.3): their stage is in the features.
    assert any("cascade" in case["position"] for case in VECTORS["cases"] if case["model"] == "gulbara")
    assert {case["model"] for case in VECTORS["cases"]} == set(VARIANTS)
    assert {case["position"]["variant"] for case in VECTORS["cases"]} == set(VARIANTS)
    # The running games' cases: features only (no model, no outputs), both sides to move in each variant.
    feature_cases = VECTORS["feature_cases"]
    assert len(feature_cases) >= 30
    assert all(set(case) == {"name", "position", "features"} for case in feature_cases)
    assert {(case["position"]["variant"], case["position"]["turn"]) for case in feature_cases} == \
        {(variant, turn) for variant in RUNNING for turn in "XO"}
    for variant, model in VECTORS["models"].items():
        path = DATA / model["file"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == model["sha256"], \
            f"{path} changed without the vectors; run python scripts/make_test_vectors.py"
        metadata = numpy_model.load(str(path)).metadata
        rules = variant_rules(variant)
        assert metadata["variant"] == variant and metadata["rule_options"] == rules.to_dict()
        assert model["outcome_names"] == metadata["outcome_names"] == list(outcome_names(rules))
        assert model["outcome_points"] == metadata["outcome_points"] == outcome_points(rules).tolist()
        assert model["training_games"] == metadata["training_games"] > 0
        assert model["encoding_version"] == metadata["encoding_version"]


def test_both_encoders_reproduce_the_vectors_exactly():
    cases = [case for case in VECTORS["cases"] if case["model"] in OPPOSITE]
    positions = [case["position"] for case in cases]
    expected = np.array([case["features"] for case in cases], dtype=np.float32)
    assert expected.shape == (len(positions), 329)
    assert expected[:, 309:315].any(), "the vectors should exercise the version-3 columns"
    reference = [position_from_json(p) for p in positions]
    for version, width in ((1, NUM_FEATURES), (2, 309), (3, 315), (4, 318), (5, 329)):
        assert np.array_equal(encode_positions(reference, version=version), expected[:, :width])
        assert np.array_equal(numpy_model.encode_positions(positions, version=version), expected[:, :width])
    assert not expected[:, 315:].any(), "versions 4 and 5 of the other variants are version 3 and zeros"
    running = [case for case in VECTORS["cases"] if case["model"] in RUNNING]
    assert {case["position"]["variant"] for case in running} == set(RUNNING)
    features = np.array([case["features"] for case in running], dtype=np.float32)
    assert not features[:, 318:].any(), "version 5 of the plain-doubles running games is version 4 and zeros"
    for version, width in ((4, 318), (5, 329)):
        assert np.array_equal(encode_positions([position_from_json(c["position"]) for c in running], version=version),
                              features[:, :width])
        assert np.array_equal(numpy_model.encode_positions([c["position"] for c in running], version=version),
                              features[:, :width])
    cascading = [case for case in VECTORS["cases"] if case["model"] == "gulbara"]
    features = np.array([case["features"] for case in cascading], dtype=np.float32)
    assert features[:, 318].all() and features[:, 321:327].any(), "rules.cascades, and some pending stages"
    assert np.array_equal(encode_positions([position_from_json(c["position"]) for c in cascading], version=5),
                          features)
    assert np.array_equal(numpy_model.encode_positions([c["position"] for c in cascading], version=5), features)


def test_both_encoders_reproduce_the_running_games_feature_cases_in_version_4_and_refuse_earlier_ones():
    cases = VECTORS["feature_cases"]
    positions = [case["position"] for case in cases]
    expected = np.array([case["features"] for case in cases], dtype=np.float32)[:, :318]
    assert expected.shape == (len(positions), 318)
    assert not np.array([case["features"] for case in cases])[:, 318:].any(), "version 5: version 4 and zeros"
    assert expected[:, 315].all(), "rules.parallel"
    assert expected[:, 316:318].any() and not expected[:, 316:318].all(), "passed: both values"
    assert expected[:, 309:315].any() and not expected[:, 259:309].any(), "contact read, nothing exposed"
    reference = [position_from_json(p) for p in positions]
    assert [position_to_json(p) for p in reference] == positions
    assert np.array_equal(encode_positions(reference, version=4), expected)
    assert np.array_equal(numpy_model.encode_positions(positions, version=4), expected)
    # From the other side: the two sides' blocks swap.
    flipped = PositionBatch.from_positions(reference).flipped()
    assert np.array_equal(numpy_model.encode_positions(flipped.to_json(), version=4), swap_side_blocks(expected))
    for version in (1, 2, 3):
        with pytest.raises(ValueError, match="needs version 4"):
            encode_positions(reference[:1], version=version)
        with pytest.raises(numpy_model.ModelFileError, match="needs encoding version 4"):
            numpy_model.encode_positions(positions[:1], version=version)


@pytest.mark.parametrize("format", [*FORMATS, "torch"])
def test_every_format_reproduces_the_vector_outputs(format, tmp_path):
    tolerance = VECTORS["tolerance"]
    for variant in VARIANTS:
        cases = [case for case in VECTORS["cases"] if case["model"] == variant]
        net = shipped_net(variant)
        features = np.array([case["features"][:net.num_features] for case in cases], dtype=np.float32)
        if format == "torch":
            probabilities, equity = evaluate(net, features)
        else:
            probabilities, equity = Runner(export_network(net, format, tmp_path / f"{variant}.{format}"), format)(
                features)
        expected = np.array([case["probabilities"] for case in cases], dtype=np.float32)
        assert np.abs(probabilities - expected).max() < tolerance["probabilities"], variant
        assert np.abs(equity - np.array([case["equity"] for case in cases])).max() < tolerance["equity"], variant


@pytest.mark.parametrize("variant", VARIANTS)
def test_vectors_were_made_from_the_shipped_checkpoint(variant, tmp_path):
    model = VECTORS["models"][variant]
    checkpoint = ROOT / model["checkpoint"]
    if not checkpoint.is_file():
        pytest.skip(f"{checkpoint} is not there")
    if hashlib.sha256(checkpoint.read_bytes()).hexdigest() != model["checkpoint_sha256"]:
        # A developer's replaced checkpoint skips; under CI=true the shipped one must be the vectors' (it fails).
        skip_or_fail(f"{checkpoint} was replaced since the vectors were made (they stay valid with "
                     f"tests/data/{model['file']}); python scripts/make_test_vectors.py follows the new one",
                     "a shipped checkpoint that differs from the test vectors'")
    fresh = numpy_model.load(str(export_checkpoint(checkpoint, "npz", tmp_path / "fresh.npz")))
    committed = numpy_model.load(str(DATA / model["file"]))
    for a, b in zip(fresh.weights + fresh.biases, committed.weights + committed.biases, strict=True):
        assert np.array_equal(a, b)
    ignore = {"tapa_ai_version"}
    assert {k: v for k, v in fresh.metadata.items() if k not in ignore} == \
           {k: v for k, v in committed.metadata.items() if k not in ignore}


# -- metadata -------------------------------------------------------------------------------------
@needs_onnx
def test_onnx_graph_names_shapes_opset_and_metadata(tmp_path):
    net = small_net("tapa", 1, 8, "relu")
    proto = onnx.load(str(export_network(net, "onnx", tmp_path / "m.onnx", games=1234)))
    assert [(o.domain, o.version) for o in proto.opset_import] == [("", ONNX_OPSET)]

    def dims(value):
        return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]

    assert [(v.name, dims(v)) for v in proto.graph.input] == [("features", ["batch", NUM_FEATURES])]
    assert [(v.name, dims(v)) for v in proto.graph.output] == [("probabilities", ["batch", 7]), ("equity", ["batch"])]
    props = {p.key: p.value for p in proto.metadata_props}
    rules = variant_rules("tapa")
    assert props["variant"] == "tapa"
    assert json.loads(props["rule_options"]) == rules.to_dict()
    assert (props["encoding"], props["encoding_version"], props["num_features"]) == (ENCODING_NAME, "1", "259")
    assert json.loads(props["outcome_names"]) == list(outcome_names(rules))
    assert json.loads(props["outcome_points"]) == outcome_points(rules).tolist()
    assert json.loads(props["training_games"]) == 1234
    assert props["tapa_ai_version"] == __version__
    assert json.loads(props["model"]) == {"layers": 1, "hidden": 8, "activation": "relu", "encoding_version": 1}
    assert set(json.loads(props["outputs"])) == {"probabilities", "equity"}
    whole = json.loads(props["metadata_json"])
    assert whole["variant"] == "tapa" and whole["training_games"] == 1234
    session = onnxruntime.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    assert session.get_modelmeta().custom_metadata_map["variant"] == "tapa"
    # The ONNX file carries the same metadata as the other formats.
    assert whole == numpy_model.load(str(export_network(net, "npz", tmp_path / "m.npz", games=1234))).metadata


def test_torchscript_and_npz_carry_the_same_metadata(tmp_path):
    net = small_net("plakoto", 1, 8, "relu")
    expected = numpy_model.load(str(export_network(net, "npz", tmp_path / "m.npz", games=5))).metadata
    extra = {"metadata.json": ""}
    module = torch.jit.load(str(export_network(net, "torchscript", tmp_path / "m.pt", games=5)), _extra_files=extra)
    assert json.loads(extra["metadata.json"]) == expected
    assert json.loads(module.metadata_json) == expected
    assert list(module.outcome_names) == list(outcome_names(variant_rules("plakoto")))
    assert expected["training_games"] == 5 and expected["variant"] == "plakoto"
    assert expected["rule_options"] == variant_rules("plakoto").to_dict()
    assert expected["outcome_names"][2] == "win_mother" and expected["outcome_points"][2] == 2.0


# -- the command line ---------------------------------------------------------------------------
@pytest.fixture
def checkpoint(tmp_path) -> Path:
    net = small_net("backgammon", 1, 8, "relu")
    return save_checkpoint(tmp_path / "small.pt", model_state=net.state_dict(), model_config=net.architecture(),
                           encoding=(ENCODING_NAME, ENCODING_VERSION), rule_options=net.rules, config=TrainConfig(),
                           games=4321)


@pytest.mark.parametrize("format", FORMATS)
def test_export_command_writes_every_format(format, checkpoint, tmp_path, capsys):
    net = load_npz_network(export_checkpoint(checkpoint, "npz", tmp_path / "reference.npz"))
    features = encode(sample_positions("backgammon", count=12))
    out = tmp_path / "out" / f"small.{format}"
    assert main(["export", str(checkpoint), "--format", format, "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    probabilities, equity = max_differences(net, out, format, features)
    assert probabilities < TOLERANCE and equity < TOLERANCE


def test_export_command_records_the_source_checkpoint(checkpoint, tmp_path, capsys):
    out = tmp_path / "out" / "small.npz"
    assert main(["export", str(checkpoint), "--format", "npz", "--out", str(out)]) == 0
    metadata = numpy_model.load(str(out)).metadata
    assert metadata["training_games"] == 4321 and metadata["source_checkpoint"] == "small.pt"
    assert metadata["source_sha256"] == hashlib.sha256(checkpoint.read_bytes()).hexdigest()


def test_export_command_errors_are_one_line_with_exit_code_2(checkpoint, tmp_path, capsys, monkeypatch):
    out = str(tmp_path / "x.onnx")
    assert main(["export", str(tmp_path / "missing.pt"), "--format", "onnx", "--out", out]) == 2
    assert "missing.pt: the file does not exist" in one_line_error(capsys)

    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"\x00not a checkpoint" * 10)
    assert main(["export", str(corrupt), "--format", "onnx", "--out", out]) == 2
    assert "corrupt.pt is not a tapa-ai checkpoint" in one_line_error(capsys)

    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(checkpoint.read_bytes()[:-200])
    assert main(["export", str(truncated), "--format", "npz", "--out", out]) == 2
    assert "truncated.pt" in one_line_error(capsys)

    assert main(["export", str(checkpoint), "--format", "tflite", "--out", out]) == 2
    assert "--format 'tflite': unknown; choose one of onnx, torchscript, npz" in one_line_error(capsys)

    assert main(["export", str(checkpoint), "--format", "npz", "--out", str(tmp_path)]) == 2
    assert "is a directory" in one_line_error(capsys)

    monkeypatch.setitem(sys.modules, "onnx", None)  # as if the package were not installed
    assert main(["export", str(checkpoint), "--format", "onnx", "--out", out]) == 2
    assert "pip install 'tapa-ai[export]'" in one_line_error(capsys)
    assert not Path(out).exists()


def test_export_command_error_in_a_real_process(tmp_path):
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"garbage")
    done = subprocess.run([sys.executable, "-m", "tapa_ai.cli", "export", str(corrupt), "--format", "onnx",
                           "--out", str(tmp_path / "x.onnx")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"tapa-ai export: {corrupt} is not a tapa-ai checkpoint: not a torch zip archive (corrupt, truncated, or "
        "another kind of file)"]


# -- encoding versions 2 and 3 ----------------------------------------------------------------------
def version_net(variant: str, version: int) -> EvaluatorNet:
    net = EvaluatorNet(ModelConfig(hidden=16, encoding_version=version), variant_rules(variant), seed=4)
    with torch.no_grad():
        net.layers[0].weight.mul_(4.0)
    return net.eval()


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("variant", OPPOSITE)
def test_version_2_and_3_networks_export_to_every_format(variant, version, format, tmp_path):
    net = version_net(variant, version)
    features = encode(sample_positions(variant, count=40), version=version)
    path = export_network(net, format, tmp_path / f"v{version}.{format}", games=1)
    probabilities, equity = max_differences(net, path, format, features)
    assert probabilities < TOLERANCE and equity < TOLERANCE, format


@pytest.mark.parametrize("version, width", [(2, 309), (3, 315)])
@pytest.mark.parametrize("variant", OPPOSITE)
def test_the_numpy_model_computes_version_2_and_3_networks(variant, version, width, tmp_path):
    net = version_net(variant, version)
    batch = sample_positions(variant, count=40)
    features = encode(batch, version=version)
    model = numpy_model.load(str(export_network(net, "npz", tmp_path / f"v{version}.npz", games=1)))
    assert (model.encoding_version, model.num_features) == (version, width)
    assert model.metadata["encoding_version"] == version and model.metadata["num_features"] == width
    positions = [position_to_json(position) for position in batch.to_positions()]
    assert np.array_equal(numpy_model.encode_positions(positions, version=version), features)
    probabilities, _ = model.evaluate_positions(positions)
    assert np.abs(probabilities - evaluate(net, features)[0]).max() < TOLERANCE
    assert numpy_model.feature_names(version) == feature_names(version)
    with pytest.raises(numpy_model.ModelFileError,
                       match=rf"want a \(batch, {width}\) array \(encoding version {version}\)"):
        model.evaluate(features[:, :259])
    assert load_npz_network(tmp_path / f"v{version}.npz").encoding_version == version


# -- the rotations an app needs to play a match by the score (docs/export.md "Metadata") ------------------------
@pytest.mark.parametrize("variant,rotations", [("backgammon", ["tavli", "tabla"]), ("gulbara", ["tabla"]),
                                               ("tapa", ["tabla"]), ("plakoto", ["tavli"]), ("fevga", ["tavli"]),
                                               ("narde", [])])
def test_the_metadata_carries_the_preset_rotations_the_network_plays_in(variant, rotations):
    """Each preset rotation with a game the network plays (Portes by backgammon's): its games, their rules (no
    cube), each game's result rates with their source, and the match equity table; the rates rebuild the table
    (the recursion of tapa_ai/cube/rotation_met.py) and the table is the engine's to 6 decimals."""
    from tapa_ai.cube.met import ResultRates
    from tapa_ai.cube.rotation_met import build_rotation_met, rotation_met
    from tapa_ai.rules.rotations import ROTATIONS

    metadata = numpy_model.load(str(DATA / f"{variant}.npz")).metadata  # the committed export of the shipped model
    assert sorted(metadata.get("rotations", {})) == sorted(rotations)
    for name in rotations:
        rotation, carried = ROTATIONS[name], metadata["rotations"][name]
        engine = rotation_met(rotation)
        assert carried["title"] == rotation.title() and carried["games"] == list(rotation.variants)
        assert carried["rules"] == [rules.changes_from(variant_rules(rules.name)) for rules in rotation.games]
        assert all(rules == {} or rules == {"cube": False, "crawford": False} for rules in carried["rules"])
        assert [rates["variant"] for rates in carried["rates"]] == carried["games"]
        rates = [ResultRates(**{key: value for key, value in entry.items() if key != "variant"})
                 for entry in carried["rates"]]
        assert tuple(rates) == engine.rates and all(r.source for r in rates)
        table = np.asarray(carried["table"])  # [game][opener][a - 1][b - 1]
        assert table.shape == (len(rotation), 3, carried["max_away"], carried["max_away"]) and \
            carried["max_away"] == engine.max_away
        assert np.abs(table - engine.table[:, :, 1:, 1:].transpose(1, 0, 2, 3)).max() <= 5e-7
        rebuilt = build_rotation_met(rates, max_away=7, variants=carried["games"])
        assert np.abs(table[:, :, :7, :7] - rebuilt.table[:, :, 1:, 1:].transpose(1, 0, 2, 3)).max() <= 5e-7
    if "tabla" in rotations:
        tabla = metadata["rotations"]["tabla"]
        assert tabla["games"] == ["backgammon", "gulbara", "tapa"] and tabla["title"] == \
            "Tabla (Backgammon, Gul Bara, Tapa)"
        assert tabla["rules"] == [{"cube": False, "crawford": False}, {}, {"cube": False, "crawford": False}]
