"""The package's layers (``tapa_ai.LAYERS``): no module imports a layer above its own, and no imports run in a circle.

Imports are read from the source with ``ast``: every ``import`` and ``from ...
import`` anywhere in a module counts, inside functions and ``if TYPE_CHECKING:``
blocks too, since a deferred import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tapa_ai

PACKAGE_DIR = Path(tapa_ai.__file__).parent
LONG_MODULE_LINES = 500
LONG_MODULE_NOTE = "Kept whole:"


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package is its ``__init__``)."""
    modules = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = ("tapa_ai",) + path.relative_to(PACKAGE_DIR).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules that module ``name`` imports (resolved to the deepest module named)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from a import b`` imports the module a.b when there is one, else the name b of a.
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                       for alias in node.names]
        for target in targets:
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int:
    """Index in ``tapa_ai.LAYERS`` of a module; the package itself (``__version__``, ``LAYERS``) is the foundation."""
    if module == "tapa_ai":
        return 0
    top = module.split(".")[1]
    for index, names in enumerate(tapa_ai.LAYERS):
        if top in names:
            return index
    raise AssertionError(f"{module}: its top-level name {top!r} is in no layer of tapa_ai.LAYERS; add it there")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_layers_name_every_top_level_module_once():
    names = [name for layer in tapa_ai.LAYERS for name in layer]
    assert len(names) == len(set(names))
    tops = {path.relative_to(PACKAGE_DIR).parts[0].removesuffix(".py") for path in PACKAGE_DIR.rglob("*.py")}
    tops.discard("__init__")
    assert tops == set(names)


def test_no_module_imports_a_higher_layer():
    upward = []
    for module, targets in import_graph().items():
        for target in sorted(targets):
            if layer_of(target) > layer_of(module):
                upward.append(f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})")
    assert upward == []


def test_no_import_circles():
    assert cycles(import_graph()) == []


def test_long_modules_say_why_they_are_kept_whole():
    unexplained = []
    for module, path in module_files().items():
        text = path.read_text()
        lines = text.count("\n")
        if lines > LONG_MODULE_LINES and LONG_MODULE_NOTE not in (ast.get_docstring(ast.parse(text)) or ""):
            unexplained.append(f"{module}: {lines} lines")
    assert unexplained == []


# The checks themselves, on small made-up graphs and sources.


def test_cycle_finder_finds_a_circle_and_ignores_a_chain():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_imports_inside_functions_count(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from ..net.model import EvaluatorNet\n    from . import base\n")
    modules = {"tapa_ai.bots.m": source, "tapa_ai.net.model": source, "tapa_ai.bots.base": source,
               "tapa_ai.bots": source, "tapa_ai.net": source}
    assert imported_modules("tapa_ai.bots.m", source, modules) == {"tapa_ai.net.model", "tapa_ai.bots.base"}


@pytest.mark.parametrize("module, expected", [("tapa_ai", 0), ("tapa_ai.config", 0), ("tapa_ai.rules.position", 1),
                                              ("tapa_ai.cli", len(tapa_ai.LAYERS) - 1)])
def test_layer_of(module, expected):
    assert layer_of(module) == expected
