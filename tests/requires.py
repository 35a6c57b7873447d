"""Declared test dependencies: a missing one skips its tests on a developer's machine and fails them in CI.

The packages of ``pyproject.toml``'s ``test`` extra (and the project's own dependencies) are what
``pip install -e '.[test]'`` installs, and ``.ci/run`` installs exactly that. A test that needs one of
them asks for it with :func:`require` (in a test or a fixture, or at module level) or with the
``@pytest.mark.requires("module", ...)`` marker (``tests/conftest.py``). Where the module is missing the
test skips, naming the module and the install command; where the environment variable ``CI`` is
``true``, ``1`` or ``yes`` (``.ci/run`` sets it; CI systems do) the same test fails instead, so a
dropped install step cannot switch tests off silently.

Only declared dependencies go through here: other skips (no CUDA GPU, no shipped checkpoint, not POSIX)
stay plain ``pytest.skip`` / ``skipif`` and keep skipping in CI.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

DECLARED = {
    "gnubg_nn": "gnubg-nn",
    "matplotlib": "matplotlib",
    "onnx": "onnx",
    "onnxruntime": "onnxruntime",
    "ray": "ray",
    "selenium": "selenium",
    "tensorboard": "tensorboard",
}
"""Importable top-level module -> the distribution that installs it: each is in ``pyproject.toml``'s
``test`` extra or in the project's dependencies (tests/test_requires.py checks)."""
INSTALL = "pip install -e '.[test]'"
CI_VALUES = ("true", "1", "yes")


def in_ci() -> bool:
    """Whether the environment says this is a CI run (``CI`` set to true, 1 or yes, any case)."""
    return os.environ.get("CI", "").strip().lower() in CI_VALUES


def skip_or_fail(message: str, what: str = "it") -> None:
    """Skip the test with ``message`` (also at module level); under ``CI=true`` fail it instead, saying why."""
    __tracebackhide__ = True
    if in_ci():
        pytest.fail(f"{message}; CI={os.environ['CI']}, so {what} fails instead of skipping", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require(module: str, *, requirement: str | None = None) -> ModuleType:
    """Import ``module`` (a dotted name is fine) of a declared test dependency and return it.

    Missing: the test skips (also at module level) saying what to install; under ``CI=true`` it fails.
    ``requirement`` names the distribution; by default it is looked up in :data:`DECLARED`, and a module
    that is not there is a mistake in the test (a :class:`ValueError`), not a reason to skip.
    """
    __tracebackhide__ = True  # pytest reports the skip or failure at the test's line, not here
    top = module.partition(".")[0]
    if requirement is None:
        if top not in DECLARED:
            raise ValueError(f"{top!r} is not a declared test dependency (tests/requires.py DECLARED): "
                             f"declare it in pyproject.toml's test extra, or skip with pytest.skip")
        requirement = DECLARED[top]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        missing = str(error)
    message = f"{module} is not importable ({missing}): the {requirement} package is a declared test dependency, " \
              f"installed by `{INSTALL}`"
    skip_or_fail(message, "a missing test dependency")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requires(*modules): the test needs these declared test dependencies "
                                       "(tests/requires.py): skips without them, fails without them under CI=true")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Apply every ``@pytest.mark.requires(...)`` of the test before it runs."""
    for marker in item.iter_markers(name="requires"):
        for module in marker.args:
            require(module)


def require_node() -> str:
    """The ``node`` executable (Node.js, which runs tapa_ai/web/'s JavaScript outside a browser); missing: the
    test skips saying what to install (scripts/setup_tests.sh installs it as root), under ``CI=true`` it fails."""
    __tracebackhide__ = True
    import shutil

    node = shutil.which("node")
    if node is None:
        skip_or_fail("needs Node.js (`node`): scripts/setup_tests.sh installs it (apt-get install nodejs)",
                     "the Node.js test")
    return node
