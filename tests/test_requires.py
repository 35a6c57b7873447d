"""tests/requires.py: a missing declared test dependency skips its tests, and fails them where CI=true.

The inner runs (pytester) load the suite's own hooks, so both ways in, ``require()`` and the
``@pytest.mark.requires`` marker, are tested as the suite uses them, on a module that does not exist.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from tests.requires import DECLARED, in_ci, require

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
MISSING = "tapa_ai_no_such_module"

INNER = f"""
import pytest
from tests.requires import require

def test_helper():
    require("{MISSING}", requirement="no-such-dist")

@pytest.fixture
def missing():
    return require("{MISSING}.sub", requirement="no-such-dist")

def test_fixture(missing):
    pass

def test_not_a_dependency():
    pytest.skip("needs a CUDA GPU")  # not a declared dependency: skips in CI too
"""
MARKED = """
import pytest

@pytest.mark.requires("onnx", "onnxruntime")
def test_marked():
    pass
"""


@pytest.fixture
def inner(pytester):
    pytester.makeconftest("from tests.requires import pytest_configure, pytest_runtest_setup  # noqa: F401\n")
    pytester.makepyfile(test_inner=INNER, test_marked=MARKED)
    return pytester


def run(inner, monkeypatch, ci, hide=()):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    for module in hide:  # import now raises ModuleNotFoundError (and no native extension loads in the inner run)
        monkeypatch.setitem(sys.modules, module, None)
    return inner.runpytest("-rs", "-p", "no:cacheprovider")


@pytest.mark.parametrize("ci", [None, "false"])
def test_without_ci_a_missing_dependency_skips_with_its_reason(inner, monkeypatch, ci):
    result = run(inner, monkeypatch, ci, hide=("onnx", "onnxruntime"))
    result.assert_outcomes(skipped=4)
    text = result.stdout.str()
    assert f"{MISSING} is not importable" in text and "the no-such-dist package is a declared test dependency" in text
    assert "pip install -e '.[test]'" in text and "needs a CUDA GPU" in text
    assert "the onnx package is a declared test dependency" in text


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_a_missing_dependency_fails_naming_module_and_extra(inner, monkeypatch, ci):
    result = run(inner, monkeypatch, ci, hide=("onnx", "onnxruntime"))
    # The test body fails; the fixture and the marker fail in setup (errors); the CUDA skip still skips.
    result.assert_outcomes(failed=1, errors=2, skipped=1)
    text = result.stdout.str()
    assert re.search(rf"{MISSING} is not importable .*no-such-dist.*pip install -e '\.\[test\]'.*CI={ci}", text)
    assert re.search(r"onnx is not importable .*pip install -e '\.\[test\]'.*CI=", text)
    assert "needs a CUDA GPU" in text


def test_an_installed_dependency_is_returned(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert require("json", requirement="stdlib").loads("[1]") == [1]


def test_an_undeclared_module_is_a_mistake_not_a_skip():
    with pytest.raises(ValueError, match="not a declared test dependency"):
        require("tapa_ai_no_such_module")


def test_in_ci(monkeypatch):
    for value, expected in (("true", True), ("1", True), (" Yes ", True), ("false", False), ("", False)):
        monkeypatch.setenv("CI", value)
        assert in_ci() is expected
    monkeypatch.delenv("CI")
    assert not in_ci()


def test_declared_means_declared_in_pyproject():
    """Every DECLARED distribution is in the test extra or the project's dependencies (so .ci/run installs it)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.match(r"[A-Za-z0-9_.-]+", spec).group().lower().replace("_", "-")
             for spec in project["optional-dependencies"]["test"] + project["dependencies"]}
    assert set(DECLARED.values()) <= names, set(DECLARED.values()) - names


def test_ci_run_turns_the_rule_on():
    script = (ROOT / ".ci" / "run").read_text()
    assert script.index("export CI=true") < script.index("python -m pytest")
