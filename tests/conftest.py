"""Suite-wide hooks: the ``requires`` marker for declared test dependencies (tests/requires.py)."""

from tests.requires import pytest_configure, pytest_runtest_setup  # noqa: F401  (pytest finds hooks by name)
