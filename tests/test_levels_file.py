"""The levels file through its one reader and its declared schema (tapa_ai/schemas/levels.json, docs/levels.md,
issue 61 found 7): a NaN noise, a level without plies, a wrong sha256, each refused with one line naming the field,
per variant (a bad fevga entry leaves narde's levels usable), and never exported into a model's metadata.

Every test reads a tampered copy of the shipped file in tmp_path; the play and protocol tests point the reader's
path (``tapa_ai.bots.levels.LEVELS_FILE``) at it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tapa_ai.bots import levels as levels_module
from tapa_ai.bots.base import BotError
from tapa_ai.bots.levels import LEVEL_NAMES, LevelError, read_levels, read_levels_file, variant_levels
from tapa_ai.bots.spec import make_bot
from tapa_ai.net.model_id import file_sha256
from tapa_ai.net.shipped import shipped_model
from tapa_ai.rules import variant_rules

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "tapa_ai" / "models" / "levels.json"


def shipped_data() -> dict:
    return json.loads(SHIPPED.read_text())


def tampered(tmp_path: Path, change, text_change=None) -> Path:
    data = shipped_data()
    change(data)
    text = json.dumps(data, indent=1)
    if text_change is not None:
        text = text_change(text)
    path = tmp_path / "levels.json"
    path.write_text(text)
    return path


def nan_noise(text: str) -> str:
    """The marker :func:`set_nan_marker` left, written as JSON's NaN (which Python's json module reads by
    default)."""
    assert text.count('"noise": "NAN-HERE"') == 1
    return text.replace('"noise": "NAN-HERE"', '"noise": NaN')


def set_nan_marker(data: dict) -> None:
    """fevga's casual noise, to be written as NaN by :func:`nan_noise`."""
    data["variants"]["fevga"]["levels"]["casual"]["noise"] = "NAN-HERE"


@pytest.fixture
def shipped_file(monkeypatch):
    """Point the shipped reader at a file: ``use(path)``; the cache is cleared before and after."""
    def use(path: Path) -> None:
        monkeypatch.setattr(levels_module, "LEVELS_FILE", path)
        levels_module.shipped_levels_file.cache_clear()

    yield use
    levels_module.shipped_levels_file.cache_clear()


def test_the_shipped_file_has_the_declared_shape_and_fits_the_shipped_models():
    found = read_levels_file()
    assert found.errors == {}
    for variant, entry in found.variants.items():
        assert entry.sha256 == file_sha256(shipped_model(variant)), variant
        assert list(entry.levels) == list(LEVEL_NAMES)


def test_the_schema_bounds_are_the_codes_bounds():
    """The schema's noise range is the bots' MAX_NOISE and its plies a depth a network bot searches."""
    from tapa_ai.bots.noise import MAX_NOISE
    from tapa_ai.bots.search import MAX_PLIES

    schema = json.loads((ROOT / "tapa_ai" / "schemas" / "levels.json").read_text())
    assert schema["$defs"]["noise"]["maximum"] == MAX_NOISE and schema["$defs"]["noise"]["minimum"] == 0
    plies = schema["$defs"]["level"]["properties"]["plies"]
    assert plies["minimum"] == 0 and plies["maximum"] <= MAX_PLIES
    assert schema["$defs"]["variant"]["properties"]["levels"]["required"] == list(LEVEL_NAMES)


def test_a_nan_noise_makes_that_variants_levels_unavailable_and_leaves_the_others(tmp_path):
    path = tampered(tmp_path, set_nan_marker, nan_noise)
    assert '"noise": NaN' in path.read_text()
    found = read_levels_file(path)
    assert set(found.errors) == {"fevga"}
    assert "variants.fevga.levels.casual.noise: must be a number 0..2, got NaN" in found.errors["fevga"]
    assert str(path) in found.errors["fevga"] and "\n" not in found.errors["fevga"]
    assert found.variants["narde"].levels["casual"].noise == shipped_data()["variants"]["narde"]["levels"][
        "casual"]["noise"]
    with pytest.raises(LevelError, match="casual.noise: must be a number 0..2, got NaN"):
        read_levels(path)  # the strict view refuses the whole file


@pytest.mark.parametrize("change,fragment", [
    (lambda d: d["variants"]["fevga"]["levels"]["casual"].pop("plies"),
     "variants.fevga.levels.casual: missing 'plies': an integer 0..2"),
    (lambda d: d["variants"]["fevga"]["levels"]["expert"].update(plies=2.0),
     "variants.fevga.levels.expert.plies: must be an integer 0..2, got 2.0"),
    (lambda d: d["variants"]["fevga"]["levels"]["casual"].update(noise=True),
     "variants.fevga.levels.casual.noise: must be a number 0..2, got True"),
    (lambda d: d["variants"]["fevga"]["levels"]["casual"].update(noise=2.5),
     "variants.fevga.levels.casual.noise: must be a number 0..2, got 2.5"),
    (lambda d: d["variants"]["fevga"]["levels"]["casual"].update(nosie=0.1),
     "unknown key 'nosie'; did you mean 'noise'?"),
    (lambda d: d["variants"]["fevga"].update(sha256="abc"), "variants.fevga.sha256: must be a sha256"),
    (lambda d: d["variants"]["fevga"].update(command="x" * 5000), "variants.fevga.command: must be a string"),
    (lambda d: d["variants"]["fevga"]["levels"].pop("expert"), "variants.fevga.levels: missing 'expert'"),
])
def test_a_bad_entry_is_one_bounded_line_naming_the_field_and_only_its_variant_is_lost(tmp_path, change,
                                                                                     fragment):
    path = tampered(tmp_path, change)
    found = read_levels_file(path)
    assert set(found.errors) == {"fevga"}, found.errors
    message = found.errors["fevga"]
    assert fragment in message and "\n" not in message and len(message) < 400 + len(str(path)), message
    assert set(found.variants) == set(shipped_data()["variants"]) - {"fevga"}


def test_a_malformed_file_as_a_whole_is_refused(tmp_path):
    path = tmp_path / "levels.json"
    path.write_text(json.dumps({"variants": [], "about": "x"}))
    with pytest.raises(LevelError, match="variants: must be an object"):
        read_levels_file(path)
    path.write_text(json.dumps({"variants": {}, "abuot": "x"}))
    with pytest.raises(LevelError, match="unknown key 'abuot'; did you mean 'about'"):
        read_levels_file(path)


def test_a_wrong_sha256_is_refused_naming_the_variant_both_hashes_and_how_to_recalibrate(tmp_path, shipped_file):
    path = tampered(tmp_path, lambda d: d["variants"]["fevga"].update(sha256="0123456789ab" + "0" * 52))
    actual = file_sha256(shipped_model("fevga"))
    message = read_levels_file(path).errors["fevga"]
    for part in ("variants.fevga.sha256", "0123456789ab", actual[:12], "shipped fevga model",
                 "python scripts/calibrate_levels.py --variants fevga"):
        assert part in message, (part, message)
    shipped_file(path)
    # play: the level's bot spec is refused, the other variants' levels still play
    with pytest.raises(BotError, match="0123456789ab.*" + actual[:12]):
        make_bot("net:fevga,level=casual", variant_rules("fevga"))
    narde = make_bot("net:narde,level=casual", variant_rules("narde"))
    assert narde.noise == shipped_data()["variants"]["narde"]["levels"]["casual"]["noise"]
    with pytest.raises(LevelError, match="recalibrated"):
        variant_levels("fevga")
    # the protocol: one error line, the others' levels still answered
    from tapa_ai.engine.protocol import Engine
    from tapa_ai.notation import position_to_json
    from tapa_ai.rules.position import start_position

    engine = Engine(bot="net:fevga")
    status, answer = engine.respond({"cmd": "best_move", "dice": [6, 5], "level": "casual",
                                     "position": position_to_json(start_position(variant_rules("fevga")))})
    assert status == 400 and "0123456789ab" in answer["error"] and "calibrate_levels.py" in answer["error"], answer


def test_export_takes_the_levels_through_the_reader(tmp_path, monkeypatch):
    """A NaN noise or a level without plies is not exported (no KeyError, no NaN in the metadata, JSON that
    the web board can serve); a good entry is exported as the reader reads it."""
    from tapa_ai.export.core import _levels_metadata

    fevga_sha = file_sha256(shipped_model("fevga"))
    good = _levels_metadata("fevga", fevga_sha)
    expected = {name: {"plies": level["plies"], "noise": level["noise"]}
                for name, level in shipped_data()["variants"]["fevga"]["levels"].items()}
    assert good == {"levels": expected}
    for change, text_change in ((set_nan_marker, nan_noise),
                                (lambda d: d["variants"]["fevga"]["levels"]["casual"].pop("plies"), None)):
        path = tampered(tmp_path, change, text_change)
        monkeypatch.setattr(levels_module, "LEVELS_FILE", path)
        assert _levels_metadata("fevga", fevga_sha) == {}
        narde_sha = file_sha256(shipped_model("narde"))
        assert _levels_metadata("narde", narde_sha)["levels"]["casual"]["noise"] == \
            shipped_data()["variants"]["narde"]["levels"]["casual"]["noise"]


def test_exporting_the_shipped_fevga_model_with_a_nan_level_writes_finite_json(tmp_path, monkeypatch):
    from tapa_ai.export.core import export_checkpoint
    import numpy as np

    monkeypatch.setattr(levels_module, "LEVELS_FILE", tampered(tmp_path, set_nan_marker, nan_noise))
    out = tmp_path / "fevga.npz"
    export_checkpoint(shipped_model("fevga"), "npz", out)
    with np.load(out) as arrays:
        metadata = json.loads(str(arrays["metadata"]))
    json.dumps(metadata, allow_nan=False)  # what GET /model/fevga.json serves: no NaN to fail on
    assert "levels" not in metadata
