"""Mutation testing of one module against a chosen set of tests: which planted bugs do the tests let through?

    python scripts/mutation_test.py tapa_ai/arena/benchmark/score.py tests/test_benchmark.py
    python scripts/mutation_test.py tapa_ai/rules/cube.py tests/test_cube_rules.py -k double --lines 40-120
    python scripts/mutation_test.py tapa_ai/arena/benchmark/score.py tests/test_benchmark.py --list
    python scripts/mutation_test.py tapa_ai/arena/benchmark/score.py tests/test_benchmark.py --only 6,18,31

Each **mutant** is the module with one small change a slip of the keyboard could make (docs/mutation-testing.md):
an arithmetic operator swapped (``+`` and ``-``, ``*`` and ``/``, ``//`` to ``/``, ``%`` to ``/``, ``**`` to ``*``),
a comparison moved by one (``<`` and ``<=``, ``>`` and ``>=``, ``==`` and ``!=``, ``is``/``in`` and their
negations), ``and`` and ``or`` swapped, a ``not`` or a unary minus dropped, a number plus one, ``True`` and
``False`` swapped, an augmented assignment's operator swapped. Strings, docstrings, annotations, decorators
and f-strings are left alone, and so is a line marked ``# pragma: no mutate``.

The run works on a copy of the checkout (a temporary directory; the working tree is never written), so other
work may go on in the checkout meanwhile:

1. the tests are run once on the unchanged copy, with a line tracer on the module (in worker processes too),
   which records the lines each test runs and how long it takes; they must pass;
2. each mutant is written into the copy and only the tests that ran its line are run (``-x``, fastest first):
   the mutant is **killed** when one fails (or errors, or runs over 3 x their time + 30 s), else it
   **survived**. A mutant in module-level code (constants, defaults, class bodies, run at import) or in a
   numba-compiled function (which the tracer cannot see: expect a compile per mutant) is run against every
   selected test; ``--no-jit`` runs everything with ``NUMBA_DISABLE_JIT=1`` instead (no compiles, the kernels
   traced and run as Python: far slower, for tests on a few positions). A mutant on a line no test ran is
   reported **not reached** without running (``--run-unreached`` runs it against every test).

The survivors are printed at the end (and written with ``--json``): each is a missing test, or an equivalent
mutant (a change no behaviour can show, e.g. ``<`` for ``<=`` where the two sides are never equal).
Not a CI step: a module takes minutes to hours on one core (pytest-xdist is off: one mutant at a time).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP_COPY = {".git", "mutants", "runs", ".pytest_cache", ".hypothesis", "logs", "build", "dist", ".venv", "venv"}
PRAGMA = "pragma: no mutate"
JIT_WORDS = ("jit", "vectorize", "cfunc", "overload", "stencil")
"""A decorator whose text holds one of these compiles the function with numba (the tracer cannot see it)."""

BINARY = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
          ast.Mod: ast.Div, ast.Pow: ast.Mult, ast.LShift: ast.RShift, ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr,
          ast.BitOr: ast.BitAnd, ast.BitXor: ast.BitAnd}
COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
           ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
BOOLEAN = {ast.And: ast.Or, ast.Or: ast.And}
SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
          ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Lt: "<",
          ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is",
          ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.And: "and", ast.Or: "or"}


@dataclass
class Mutant:
    number: int
    line: int
    end_line: int
    col: int
    end_col: int
    text: str
    """The replacement of the source between (line, col) and (end_line, end_col), byte columns."""
    change: str
    """What changed, e.g. ``<= -> <``."""
    scope: str = "function"
    """``function`` (tests selected by the lines they ran), ``module`` or ``jit`` (every selected test)."""
    status: str = "pending"
    tests: int = 0
    seconds: float = 0.0
    source: str = ""
    """The original line, stripped."""


# -- the mutants -------------------------------------------------------------------------------------------
class _Finder(ast.NodeVisitor):
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.found: list[tuple[ast.AST, str, str, str]] = []
        self.scope = ["module"]

    def add(self, node: ast.AST, replacement: ast.AST | str, change: str) -> None:
        text = replacement if isinstance(replacement, str) else _unparse(replacement)
        if not any(PRAGMA in self.lines[n - 1] for n in range(node.lineno, node.end_lineno + 1)):
            self.found.append((node, text, change, self.scope[-1]))

    # nothing in these is mutated
    def visit_JoinedStr(self, node):
        pass

    def visit_arg(self, node):
        pass

    def visit_AnnAssign(self, node):
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def _body(self, node) -> None:
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
        for child in body:
            self.visit(child)

    def visit_Module(self, node):
        self._body(node)

    def visit_ClassDef(self, node):
        for child in (*node.bases, *node.keywords):
            self.visit(child)
        self._body(node)

    def visit_FunctionDef(self, node):
        jit = any(any(word in ast.unparse(d) for word in JIT_WORDS) for d in node.decorator_list)
        self.visit(node.args)  # defaults: run at import, module scope
        self.scope.append("jit" if jit or self.scope[-1] == "jit" else "function")
        self._body(node)
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.visit(node.args)
        self.scope.append(self.scope[-1] if self.scope[-1] != "module" else "function")
        self.visit(node.body)
        self.scope.pop()

    def visit_If(self, node):
        test = node.test  # `if TYPE_CHECKING:` and `if __name__ == "__main__":` are not behaviour
        text = ast.unparse(test)
        if text in ("TYPE_CHECKING", "typing.TYPE_CHECKING", "__name__ == '__main__'"):
            return
        self.generic_visit(node)

    # the mutations
    def visit_BinOp(self, node):
        if type(node.op) in BINARY:
            new = BINARY[type(node.op)]
            self.add(node, ast.BinOp(node.left, new(), node.right), f"{SYMBOL[type(node.op)]} -> {SYMBOL[new]}")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if type(node.op) in BINARY:
            new = BINARY[type(node.op)]
            self.add(node, ast.AugAssign(node.target, new(), node.value),
                     f"{SYMBOL[type(node.op)]}= -> {SYMBOL[new]}=")
        self.generic_visit(node)

    def visit_Compare(self, node):
        for index, op in enumerate(node.ops):
            if type(op) in COMPARE:
                new = COMPARE[type(op)]
                ops = list(node.ops)
                ops[index] = new()
                self.add(node, ast.Compare(node.left, ops, node.comparators), f"{SYMBOL[type(op)]} -> {SYMBOL[new]}")
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        new = BOOLEAN[type(node.op)]
        self.add(node, ast.BoolOp(new(), node.values), f"{SYMBOL[type(node.op)]} -> {SYMBOL[new]}")
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            self.add(node, node.operand, "not x -> x")
        elif isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
            self.add(node, node.operand, "-x -> x")
        elif isinstance(node.op, ast.USub):  # a negative number: -n -> -(n + 1)
            value = node.operand.value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.add(node, repr(-(value + 1)), f"{-value!r} -> {-(value + 1)!r}")
            return
        self.generic_visit(node)

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, bool):
            self.add(node, repr(not value), f"{value!r} -> {not value!r}")
        elif isinstance(value, (int, float)) and not isinstance(value, complex):
            self.add(node, repr(value + 1), f"{value!r} -> {value + 1!r}")


def _unparse(node: ast.AST) -> str:
    text = ast.unparse(ast.fix_missing_locations(node))
    return text if isinstance(node, (ast.stmt, ast.Constant, ast.Name)) else f"({text})"


def find_mutants(source: str, lines: tuple[int, int] | None = None) -> list[Mutant]:
    """The module's mutants in source order (of the lines ``lines``, first and last, if given)."""
    text_lines = source.splitlines()
    finder = _Finder(text_lines)
    finder.visit(ast.parse(source))
    mutants = []
    encoded = source.encode()
    for node, text, change, scope in sorted(finder.found, key=lambda f: (f[0].lineno, f[0].col_offset)):
        if lines and not lines[0] <= node.lineno <= lines[1]:
            continue
        mutant = Mutant(len(mutants) + 1, node.lineno, node.end_lineno, node.col_offset, node.end_col_offset,
                        text, change, scope, source=text_lines[node.lineno - 1].strip())
        try:  # a mutant that does not compile would count as killed by any test: never made
            compile(apply(encoded, mutant), "<mutant>", "exec")
        except SyntaxError as error:  # pragma: no cover - a bug of this script
            print(f"mutation_test: line {node.lineno}: {change} gives invalid code ({error}); skipped", file=sys.stderr)
            continue
        mutants.append(mutant)
    return mutants


def apply(source: bytes, mutant: Mutant) -> bytes:
    """``source`` with the mutant's span replaced (columns are UTF-8 byte offsets, as ast gives them)."""
    lines = source.splitlines(keepends=True)
    start = sum(len(line) for line in lines[:mutant.line - 1]) + mutant.col
    end = sum(len(line) for line in lines[:mutant.end_line - 1]) + mutant.end_col
    return source[:start] + mutant.text.encode() + source[end:]


# -- the copy and its test runs ----------------------------------------------------------------------------
TRACER = r'''
import os, sys, threading

_TARGET = os.environ.get("MUTATION_TARGET")
_OUT = os.environ.get("MUTATION_TRACE_DIR")
_seen = set()
_files = {}


def _is_target(filename):
    known = _files.get(filename)
    if known is None:
        known = _files[filename] = os.path.realpath(filename) == _TARGET
    return known


def _test():
    return os.environ.get("MUTATION_TEST_ID", "<outside a test>")


def _note(line):
    key = (_test(), line)
    if key not in _seen:
        _seen.add(key)
        with open(os.path.join(_OUT, f"lines-{os.getpid()}.txt"), "a") as handle:
            handle.write(f"{line}\t{key[0]}\n")


def _local(frame, event, arg):
    if event == "line":
        _note(frame.f_lineno)
    return _local


def _global(frame, event, arg):
    if _is_target(frame.f_code.co_filename):
        _note(frame.f_lineno)
        return _local
    return None


if _TARGET and _OUT:
    sys.settrace(_global)
    threading.settrace(_global)
'''

PLUGIN = r'''
import json, os, time
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    os.environ["MUTATION_TEST_ID"] = item.nodeid
    start = time.perf_counter()
    yield
    os.environ["MUTATION_TEST_ID"] = "<between tests>"
    with open(os.path.join(os.environ["MUTATION_TRACE_DIR"], "durations.txt"), "a") as handle:
        handle.write(f"{time.perf_counter() - start:.3f}\t{item.nodeid}\n")
'''


def copy_tree(into: Path) -> Path:
    """The checkout copied to ``into`` (links kept as links, times kept: numba's caches stay valid)."""
    def ignore(directory, names):
        return [name for name in names if name in SKIP_COPY or name.endswith(".egg-info")] \
            if Path(directory) == ROOT else []

    shutil.copytree(ROOT, into, symlinks=True, ignore=ignore)
    return into


NO_JIT: dict = {}
"""``{"NUMBA_DISABLE_JIT": "1"}`` with ``--no-jit``: added to every run's environment."""


def _environment(work: Path, extra: dict) -> dict:
    env = {**os.environ, **NO_JIT}
    env["PYTHONPATH"] = os.pathsep.join([str(work), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


def pytest_command(args: list[str], *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:randomly",
            *extra, *args]


def baseline(work: Path, target: Path, tests: list[str]) -> tuple[dict[int, set[str]], dict[str, float], float]:
    """Run the tests on the unchanged copy with the tracer: {line: tests that ran it}, {test: seconds}, seconds."""
    trace = work / ".mutation"
    trace.mkdir()
    (trace / "sitecustomize.py").write_text(TRACER)
    (trace / "mutation_plugin.py").write_text(PLUGIN)
    env = _environment(work, {"MUTATION_TARGET": str((work / target).resolve()), "MUTATION_TRACE_DIR": str(trace)})
    env["PYTHONPATH"] = os.pathsep.join([str(trace), env["PYTHONPATH"]])
    start = time.perf_counter()
    run = subprocess.run(pytest_command(tests, "-p", "mutation_plugin"), cwd=work, env=env, capture_output=True,
                         text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"mutation_test: the tests fail on the unchanged module (exit {run.returncode}); fix them first:\n"
                 f"{run.stdout[-4000:]}{run.stderr[-2000:]}")
    lines: dict[int, set[str]] = {}
    for path in trace.glob("lines-*.txt"):
        for row in path.read_text().splitlines():
            line, test = row.split("\t", 1)
            lines.setdefault(int(line), set()).add(test)
    durations = {}
    for row in (trace / "durations.txt").read_text().splitlines():
        took, test = row.split("\t", 1)
        durations[test] = durations.get(test, 0.0) + float(took)
    shutil.rmtree(trace)
    return lines, durations, seconds


def _selection(mutant: Mutant, lines: dict[int, set[str]], durations: dict[str, float],
               run_unreached: bool) -> list[str] | None:
    """The node ids to run the mutant against, fastest first; every test: ``[]``; None: no test reaches it."""
    if mutant.scope == "module" or (mutant.scope == "jit" and not NO_JIT):
        return []
    tests = set().union(*(lines.get(n, set()) for n in range(mutant.line, mutant.end_line + 1)))
    tests = {t for t in tests if t in durations}  # lines run by fixtures' setup count for their test
    if not tests:
        return [] if run_unreached else None
    return sorted(tests, key=lambda t: (durations[t], t))


def run_mutant(work: Path, target: Path, original: bytes, stamp: float, mutant: Mutant, tests: list[str],
               selected: list[str], durations: dict[str, float], startup: float) -> None:
    path = work / target
    path.write_bytes(apply(original, mutant))
    mutated_stamp = stamp + 1000 + mutant.number  # a time no earlier run had: no cached bytecode is reused
    os.utime(path, (mutated_stamp, mutated_stamp))
    chosen = selected or tests
    budget = 3 * sum(durations[t] for t in selected) if selected else 3 * sum(durations.values())
    limit = budget + 30 + 2 * startup
    start = time.perf_counter()
    process = subprocess.Popen(pytest_command(chosen, "-x"), cwd=work, env=_environment(work, {}),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        code = process.wait(timeout=limit)
        mutant.status = "survived" if code == 0 else "killed" if code == 1 else \
            "no tests" if code == 5 else "killed (error)"
    except BaseException as error:  # over its time, or Ctrl-C here: the run's own process group is stopped
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if not isinstance(error, subprocess.TimeoutExpired):
            raise
        mutant.status = "killed (timeout)"
    finally:
        path.write_bytes(original)
        os.utime(path, (stamp, stamp))
    mutant.seconds = time.perf_counter() - start
    mutant.tests = len(selected) if selected else -1


def _startup(work: Path) -> float:
    """Seconds pytest takes to start and import the package in the copy (and that it imports the copy's)."""
    start = time.perf_counter()
    found = subprocess.run([sys.executable, "-c", "import tapa_ai, sys; sys.stdout.write(tapa_ai.__file__)"],
                           cwd=work, env=_environment(work, {}), capture_output=True, text=True)
    if not found.stdout.startswith(str(work)):
        sys.exit(f"mutation_test: the copy imports tapa_ai from {found.stdout or found.stderr}, not {work}")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("module", help="the file to mutate, e.g. tapa_ai/arena/benchmark/score.py")
    parser.add_argument("tests", nargs="+", help="test files or node ids to run against it")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression choosing among the tests")
    parser.add_argument("--lines", help="mutate lines FIRST-LAST only")
    parser.add_argument("--only", help="run these mutants only (numbers as --list gives them: 3,17,40)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--run-unreached", action="store_true",
                        help="run the mutants on lines no test reached against every test (else: not reached)")
    parser.add_argument("--no-jit", action="store_true",
                        help="run with NUMBA_DISABLE_JIT=1: numba kernels traced and run as Python, no compiles")
    parser.add_argument("--json", help="write every mutant and its outcome to this file")
    parser.add_argument("--keep", action="store_true", help="keep the copy (its path is printed)")
    args = parser.parse_args(argv)
    # SIGTERM (a `timeout`, a killed job) as SystemExit: the running tests are stopped and the copy removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    target = Path(args.module)
    if target.is_absolute():
        target = target.resolve().relative_to(ROOT)
    if not (ROOT / target).is_file() or target.suffix != ".py":
        parser.error(f"{args.module}: not a Python file of this checkout")
    lines = tuple(int(part) for part in args.lines.split("-")) if args.lines else None
    if args.no_jit:
        NO_JIT["NUMBA_DISABLE_JIT"] = "1"
    original = (ROOT / target).read_bytes()
    mutants = find_mutants(original.decode(), lines)
    if args.only:
        wanted = {int(number) for number in args.only.split(",")}
        mutants = [m for m in mutants if m.number in wanted]
    if args.list:
        for m in mutants:
            print(f"{m.number:4d}  line {m.line:4d}  {m.scope:8s}  {m.change:24s}  {m.source}")
        print(f"{len(mutants)} mutants of {target}")
        return 0
    tests = [*args.tests, *(["-k", args.keyword] if args.keyword else [])]
    work = Path(tempfile.mkdtemp(prefix="tapa-mutation-")) / "checkout"
    print(f"copying the checkout to {work.parent} ...", flush=True)
    copy_tree(work)
    try:
        startup = _startup(work)
        print(f"{len(mutants)} mutants of {target}; the tests once, traced ...", flush=True)
        ran, durations, seconds = baseline(work, target, tests)
        print(f"{len(durations)} tests passed in {seconds:.0f} s; {len(ran)} lines of {target} run", flush=True)
        stamp = os.stat(work / target).st_mtime
        start = time.perf_counter()
        for mutant in mutants:
            selected = _selection(mutant, ran, durations, args.run_unreached)
            if selected is None:
                mutant.status = "not reached"
            else:
                run_mutant(work, target, original, stamp, mutant, tests, selected, durations, startup)
            print(f"{mutant.number:4d}/{len(mutants)}  line {mutant.line:4d}  {mutant.change:24s}  {mutant.status:18s}"
                  f"  {mutant.seconds:5.1f} s  {mutant.source[:60]}", flush=True)
        elapsed = time.perf_counter() - start
    finally:
        if args.keep:
            print(f"the copy: {work}")
        else:
            shutil.rmtree(work.parent, ignore_errors=True)
    counts: dict[str, int] = {}
    for m in mutants:
        kind = "killed" if m.status.startswith("killed") else m.status
        counts[kind] = counts.get(kind, 0) + 1
    survivors = [m for m in mutants if m.status in ("survived", "not reached", "no tests")]
    print(f"\n{target}: {len(mutants)} mutants, " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
          f" ({elapsed / 60:.1f} min)")
    for m in survivors:
        print(f"  line {m.line:4d}  {m.status:12s} {m.change:24s}  {m.source}")
    if args.json:
        Path(args.json).write_text(json.dumps({"module": str(target), "tests": tests, "minutes": elapsed / 60,
                                               "counts": counts, "mutants": [asdict(m) for m in mutants]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
