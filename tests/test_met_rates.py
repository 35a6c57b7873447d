"""The result rates of the match equity tables: measured from the shipped nets, stored with the package.

``tapa_ai/cube/result_rates.json`` (written by ``scripts/met_rates.py``) must carry the sha256 of every
shipped checkpoint: shipping a model without measuring its rates again fails here. met.py reads only
that file; a missing or malformed one is refused with its name; docs/cube.md quotes the file's rates.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tapa_ai.cube.met import (RATES_FILE, VARIANT_RATES, VARIANTS, RatesFileError, ResultRates,
                              load_result_rates, model_variant)
from tapa_ai.net.model_id import file_sha256, model_generation, model_label
from tapa_ai.rules import variant_rules

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def rates_data() -> dict:
    return json.loads(RATES_FILE.read_text())


def test_the_rates_were_measured_with_the_shipped_checkpoints():
    entries = rates_data()["variants"]
    assert set(entries) == set(VARIANTS)
    for variant in VARIANTS:
        entry = entries[variant]
        model = model_variant(variant)  # portes: the backgammon model
        checkpoint = ROOT / "checkpoints" / f"{model}.pt"
        assert entry["checkpoint"] == f"checkpoints/{model}.pt"
        assert entry["sha256"] == file_sha256(checkpoint), (
            f"{RATES_FILE.name} was measured with another {checkpoint.name}: a model was shipped without "
            f"`python scripts/met_rates.py --variants {variant}`")
        assert entry["generation"] == model_generation(checkpoint)
        assert entry["model"] == model_label(checkpoint, name=f"checkpoints/{model}.pt")
        assert entry["games"] == 20000 and entry["plies"] == 0 and entry["unfinished"] == 0
        assert sum(entry["kinds"].values()) == entry["games"]
        assert 0 < entry["first_mover_wins"] <= entry["games"] - entry["kinds"].get("draw", 0)
        assert entry["command"] == (f"tapa-ai match net:checkpoints/{model}.pt net:checkpoints/{model}.pt "
                                    f"--games {entry['games']} --seed {entry['seed']}"
                                    + (f" --variant {variant}" if model != variant else ""))
    assert rates_data()["command"].startswith("python scripts/met_rates.py")


def test_the_tables_are_built_from_the_files_counts():
    entries = rates_data()["variants"]
    for variant in VARIANTS:
        kinds = entries[variant]["kinds"]
        expected = ResultRates.from_kinds(kinds, variant_rules(variant),
                                          first_mover_wins=entries[variant]["first_mover_wins"])
        rates = VARIANT_RATES[variant]
        assert (rates.single, rates.gammon, rates.top, rates.top_points, rates.draw, rates.first_mover) == (
            expected.single, expected.gammon, expected.top, expected.top_points, expected.draw,
            expected.first_mover)
        assert entries[variant]["command"] in rates.source and entries[variant]["sha256"][:12] in rates.source
        shares = entries[variant]["shares"]
        assert shares["single"] == pytest.approx(rates.single, abs=1e-6)
        assert shares["top_points"] == rates.top_points


def test_the_rates_file_is_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["tapa_ai"]
    relative = RATES_FILE.relative_to(ROOT / "tapa_ai").as_posix()
    assert any(Path(relative).match(pattern) for pattern in patterns), patterns


def good_entry(variant: str) -> dict:
    return dict(rates_data()["variants"][variant])


def write(path: Path, data) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize("change,fragment", [
    (lambda d: d.pop("variants"), "missing 'variants'"),
    (lambda d: d["variants"].pop("plakoto"), "variants: missing 'plakoto'"),
    (lambda d: d["variants"]["tapa"].update(kinds={"single": -1}), "variants.tapa.kinds"),
    (lambda d: d["variants"]["tapa"].update(kinds={"single": 1.5}), "variants.tapa.kinds"),
    (lambda d: d["variants"]["tapa"].update(kinds={"singles": 4}), "variants.tapa.kinds"),
    (lambda d: d["variants"]["tapa"].update(kinds={"draw": 4}), "no decisive games"),
    (lambda d: d["variants"]["tapa"].pop("command"), "variants.tapa: missing 'command'"),
    (lambda d: d["variants"]["backgammon"].update(sha256="abc"), "variants.backgammon.sha256"),
    (lambda d: d["variants"]["fevga"].update(first_mover_wins=-3), "variants.fevga.first_mover_wins"),
    (lambda d: d["variants"]["fevga"].update(first_mover_wins=10 ** 6), "more than the"),
    (lambda d: d["variants"]["portes"].pop("kinds"), "variants.portes: missing 'kinds'"),
    (lambda d: d["variants"]["tapa"].update(kinds={"single": 5, "gammon": True}), "variants.tapa.kinds.gammon"),
    (lambda d: d["variants"]["tapa"].update(sha256="A" * 64), "variants.tapa.sha256"),
    (lambda d: d["variants"]["tapa"].update(command="x" * 600), "variants.tapa.command"),
    (lambda d: d["variants"]["tapa"].update(gammons=3), "unknown key 'gammons'"),
    (lambda d: d["variants"]["tapa"]["shares"].update(single=1.5), "variants.tapa.shares.single"),
    (lambda d: d["variants"]["narde"].update(games=-1), "variants.narde.games"),
])
def test_a_malformed_rates_file_is_refused_with_its_name(tmp_path, change, fragment):
    data = rates_data()
    change(data)
    path = write(tmp_path / "rates.json", data)
    with pytest.raises(RatesFileError, match=re.escape(fragment)) as error:
        load_result_rates(path)
    assert str(path) in str(error.value) and "scripts/met_rates.py" in str(error.value)


def test_a_missing_or_unreadable_rates_file_is_refused(tmp_path):
    with pytest.raises(RatesFileError, match="missing.*scripts/met_rates.py"):
        load_result_rates(tmp_path / "nothing.json")
    with pytest.raises(RatesFileError, match="cannot read"):
        load_result_rates(write(tmp_path / "bad.json", "{not json"))
    # JSON's NaN (which Python's json reads by default) is no probability: refused by name, not taken as a rate
    text = json.dumps(rates_data(), indent=1).replace('"single": 0.7891', '"single": NaN', 1)
    assert "NaN" in text
    with pytest.raises(RatesFileError, match=r"variants\.tapa\.shares\.single: must be a number 0\.\.1, got NaN"):
        load_result_rates(write(tmp_path / "nan.json", text))
    assert load_result_rates(write(tmp_path / "good.json", rates_data()))["tapa"] == VARIANT_RATES["tapa"]


def test_met_rates_check_says_whether_the_file_matches_the_shipped_checkpoints(tmp_path):
    script = [sys.executable, str(ROOT / "scripts" / "met_rates.py"), "--check"]
    ok = subprocess.run(script, cwd=ROOT, capture_output=True, text=True, env=ENV)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    data = rates_data()
    data["variants"]["plakoto"]["sha256"] = "0" * 64  # as if plakoto had been shipped since
    stale = subprocess.run(script + ["--out", str(write(tmp_path / "rates.json", data))], cwd=ROOT,
                           capture_output=True, text=True, env=ENV)
    assert stale.returncode == 1 and "python scripts/met_rates.py --variants plakoto" in stale.stdout


def test_docs_cube_quotes_the_files_rates():
    text = (ROOT / "docs" / "cube.md").read_text()
    for variant in VARIANTS:
        rates = VARIANT_RATES[variant]
        row = re.search(rf"^\| {variant} \| ([0-9.]+)% \| ([0-9.]+)% \| ([0-9.]+)% ", text, flags=re.M)
        assert row, f"docs/cube.md has no rates row for {variant}"
        assert [float(x) for x in row.groups()] == [round(100 * r, 1) for r in (rates.single, rates.gammon,
                                                                               rates.top)], variant
        model = model_variant(variant)
        assert model_label(ROOT / "checkpoints" / f"{model}.pt", name=f"checkpoints/{model}.pt",
                           markdown=True) in text
