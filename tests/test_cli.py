"""Issue 50, one command shape: every ``tapa-ai`` command is a module ``cli_<command>.py`` with ``add_parser``
and ``run``; a :class:`~tapa_ai.errors.TapaError` is caught once, in ``main`` (one line, exit 2); argument
errors print one line naming the sub-command and its --help (no usage block); a mistyped command, option,
choice or bot spec gets "did you mean";
``tapa-ai --version``; every user-facing error class derives from ``TapaError``."""

from __future__ import annotations

import ast
import builtins
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import tapa_ai
from tapa_ai.cli import COMMANDS, build_parser, main
from tapa_ai.errors import TapaError, UsageError

PACKAGE = Path(tapa_ai.__file__).resolve().parent

MINIMAL_ARGS = {
    "demo": [], "train": [], "match": ["random", "runner"], "tournament": ["random"],
    "export": ["tapa", "--format", "npz", "--out", "x.npz"], "play": [], "engine": [], "serve": [],
    "rollout": ["--position", "x"], "analyse": ["game.json"], "bearoff": [], "benchmark": ["study", "score.json"],
}
"""Arguments each command parses without error (its run is replaced in the tests)."""

INTERNAL = {
    "TrainingStopped": "a run stopped by a signal: the command ends with 128 + the signal number",
    "Terminated": "SIGTERM before training starts (a BaseException): exit code 143",
    "QuitSession": "'quit' in tapa-ai play: the end of the session",
    "DeadlineExceeded": "a served command's time limit: the engine answers it (503)",
    "RequestTimedOut": "a request that did not arrive in time: the server answers it (408)",
    "_Failure": "an engine bot's private exchange error, wrapped into a BotError",
    "ModelFileError": "tapa_ai/export/numpy_model.py is copied alone into other programs (imports no tapa_ai); "
                      "tapa_ai wraps it into an ExportError",
}
"""The exception classes that are not a TapaError, and why."""


# -- the shape: one module per command ---------------------------------------------------------------------------
def test_every_command_is_a_cli_module_with_add_parser_and_run():
    files = {f"tapa_ai.{path.relative_to(PACKAGE).with_suffix('').as_posix().replace('/', '.')}"
             for path in PACKAGE.glob("**/cli_*.py")}
    assert files == set(COMMANDS.values())  # no command module outside the table, none missing
    for name, module_name in COMMANDS.items():
        assert module_name.rsplit(".", 1)[1] == f"cli_{name}"
        module = importlib.import_module(module_name)
        assert callable(module.add_parser) and callable(module.run), module_name
    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command")
    assert list(commands.choices) == list(COMMANDS)
    for name, sub in commands.choices.items():
        run = importlib.import_module(COMMANDS[name]).run
        if name == "benchmark":
            actions = next(action for action in sub._actions if action.dest == "action")
            assert all(action_parser.get_default("func") is run for action_parser in actions.choices.values())
        else:
            assert sub.get_default("func") is run, name


def test_no_command_prints_its_own_errors():
    """The 18 ``return 2`` of the commands are one ``except TapaError`` in main."""
    for module_name in COMMANDS.values():
        path = PACKAGE.joinpath(*module_name.split(".")[1:]).with_suffix(".py")
        tree = ast.parse(path.read_text())
        returns_2 = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Return)
                     and isinstance(node.value, ast.Constant) and node.value.value == 2]
        assert returns_2 == [], f"{path}: return 2 at lines {returns_2}"
    cli = ast.parse((PACKAGE / "cli.py").read_text())
    handlers = [node for node in ast.walk(cli) if isinstance(node, ast.ExceptHandler)
                and isinstance(node.type, ast.Name) and node.type.id == "TapaError"]
    assert len(handlers) == 1


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_tapa_error_in_any_command_is_one_line_and_exit_code_2(name, monkeypatch, capsys):
    module = importlib.import_module(COMMANDS[name])

    class Broken(TapaError, ValueError):
        pass

    def run(args):
        raise Broken(f"what is wrong with {name}")

    monkeypatch.setattr(module, "run", run)
    assert main([name, *MINIMAL_ARGS[name]]) == 2
    out, err = capsys.readouterr()
    prefix = "tapa-ai benchmark study" if name == "benchmark" else f"tapa-ai {name}"
    assert out == "" and err == f"{prefix}: what is wrong with {name}\n"


def test_other_errors_are_not_swallowed(monkeypatch):
    module = importlib.import_module(COMMANDS["demo"])

    def run(args):
        raise ValueError("a bug, not bad input")

    monkeypatch.setattr(module, "run", run)
    with pytest.raises(ValueError, match="a bug"):
        main(["demo"])


def test_a_bare_tapa_ai_runs_train(monkeypatch):
    module = importlib.import_module(COMMANDS["train"])
    seen = []
    monkeypatch.setattr(module, "run", lambda args: seen.append(args.config) or 0)
    assert main([]) == 0 and seen == [None]


def test_the_real_errors_keep_their_one_line(tmp_path, capsys):
    assert main(["export", str(tmp_path / "none.pt"), "--format", "npz", "--out", str(tmp_path / "x.npz")]) == 2
    assert capsys.readouterr().err.startswith(f"tapa-ai export: no checkpoint file at {tmp_path / 'none.pt'}")
    assert main(["bearoff", "1", "2"]) == 2
    assert capsys.readouterr().err == ("tapa-ai bearoff: HOME must be 6 counts >= 0 (checkers on the 1- to "
                                       "6-points) summing to at most 15, got [1, 2]\n")
    assert main(["serve", "--port", "70000"]) == 2
    assert capsys.readouterr().err == "tapa-ai serve: --port must be 0..65535 (0 picks a free port), got 70000\n"
    assert main(["match", "random", "runner", "--cube", "--match-length", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tapa-ai match: --cube is money play with the cube") and err.count("\n") == 1


# -- --version ---------------------------------------------------------------------------------------------------
def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"tapa-ai {tapa_ai.__version__}\n"


def test_only_the_command_run_is_imported():
    """``--version`` loads no command; ``engine`` neither torch nor the arena, the game analysis or the terminal
    game (its start-up time; it loads only the light analyzer module)."""
    code = ("import sys; from tapa_ai.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'tapa_ai.arena', 'tapa_ai.analysis.analyse', 'tapa_ai.play') "
            "if m in sys.modules))")
    for argv, loaded in ((["--version"], "[]"), (["engine", "--help"], "[]")):
        done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
        assert done.stdout.splitlines()[-1] == loaded, (argv, done.stdout, done.stderr)


# -- argument errors: one line, the sub-command's --help named ---------------------------------------------------
@pytest.mark.parametrize("argv, says", [
    (["match", "random", "runner", "--games", "many"],
     "tapa-ai match: error: argument --games: invalid int value: 'many' (see tapa-ai match --help)"),
    (["match", "random", "runner", "--games", "1"],
     "tapa-ai match: error: --games must be at least 2 (one duplicate pair) (see tapa-ai match --help)"),
    (["tournament", "random", "runner", "--workers", "0"],
     "tapa-ai tournament: error: --workers must be at least 1 (see tapa-ai tournament --help)"),
    (["demo", "--games", "0"], "tapa-ai demo: error: --games must be at least 1 (see tapa-ai demo --help)"),
    (["match", "random"],
     "tapa-ai match: error: the following arguments are required: B (see tapa-ai match --help)"),
    (["benchmark", "score", "random", "--bootstrap", "x"],
     "tapa-ai benchmark score: error: argument --bootstrap: invalid int value: 'x' (see tapa-ai benchmark score "
     "--help)"),
    (["engine", "extra"], "tapa-ai engine: error: unrecognized arguments: extra (see tapa-ai engine --help)"),
], ids=["bad-int", "too-few-games", "no-workers", "demo-games", "missing-bot", "benchmark-action", "extra-word"])
def test_an_argument_error_is_one_line_naming_the_sub_commands_help(argv, says, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and err == says + "\n", err


# -- did you mean ------------------------------------------------------------------------------------------------
def test_a_mistyped_command_gets_the_nearest_and_the_list(capsys):
    with pytest.raises(SystemExit) as done:
        main(["matc", "random", "runner"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and "usage:" not in err
    line = err.splitlines()[-1]
    assert line.startswith("tapa-ai: unknown command 'matc'; did you mean 'match'? (commands: demo, train, match")
    assert line.endswith("; see tapa-ai --help)")
    with pytest.raises(SystemExit):
        main(["xyzzy"])
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.startswith("tapa-ai: unknown command 'xyzzy' (commands: ") and "did you mean" not in line


def test_a_mistyped_option_gets_the_nearest(capsys):
    with pytest.raises(SystemExit) as done:
        main(["match", "random", "runner", "--gmes", "10"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err == ("tapa-ai match: error: unrecognized arguments: --gmes 10; did you mean "
                                            "--games? (see tapa-ai match --help)\n")
    with pytest.raises(SystemExit):  # 10 taken for A: the typo is named beside the error it caused
        main(["match", "--gmes", "10"])
    assert capsys.readouterr().err.splitlines()[-1] == ("tapa-ai match: error: the following arguments are "
                                                        "required: B; --gmes is not an option: did you mean --games? "
                                                        "(see tapa-ai match --help)")
    with pytest.raises(SystemExit):  # a prefix of an option is that option (argparse), no typo
        main(["match", "random", "runner", "--gam", "many"])
    assert capsys.readouterr().err.splitlines()[-1] == "tapa-ai match: error: argument --games: invalid int value: " \
        "'many' (see tapa-ai match --help)"
    with pytest.raises(SystemExit):
        main(["rollout", "--position", "x", "--sed=3", "--canddates", "2"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "tapa-ai rollout: error: unrecognized arguments: --sed=3 --canddates 2; did you mean --seed for --sed, "
        "--candidates for --canddates? (see tapa-ai rollout --help)")


def test_a_mistyped_choice_gets_the_nearest(capsys):
    for argv, says in ((["benchmark", "scor"], "argument ACTION: invalid choice: 'scor'; did you mean 'score'?"),
                       (["demo", "--variant", "plakota"], "argument --variant: invalid choice: 'plakota'; did you "
                        "mean 'plakoto'?")):
        with pytest.raises(SystemExit):
            main(argv)
        assert says in capsys.readouterr().err.splitlines()[-1]


@pytest.mark.parametrize("spec, guess", [("heurstic", "heuristic"), ("runer", "runner"), ("nett:tapa", "net:tapa"),
                                         ("net:tpa@1ply", "net:tapa@1ply"), ("net:plakotto", "net:plakoto"),
                                         ("gnubg:5", None), ("net:nosuchmodel", None), ("xyzzy", None)])
def test_a_mistyped_bot_spec_gets_the_nearest(spec, guess):
    from tapa_ai.bots.base import BotError
    from tapa_ai.bots.spec import make_bot
    from tapa_ai.rules.options import variant_rules

    with pytest.raises(BotError) as caught:
        make_bot(spec, variant_rules("tapa"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"bot spec {spec!r}: ")
    if guess is None:
        assert "did you mean" not in message
    else:
        assert f"did you mean {guess!r}?" in message


def test_a_mistyped_bot_of_a_command_is_one_line(capsys):
    assert main(["match", "heurstic", "runner", "--games", "2", "--workers", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tapa-ai match: bot spec 'heurstic': unknown bot (did you mean 'heuristic'?)")
    assert err.count("\n") == 1


# -- one base class --------------------------------------------------------------------------------------------
def exception_classes() -> list[tuple[str, str, list[str]]]:
    """Every exception class defined in tapa_ai, by the source (AST): (name, file, base names)."""
    classes = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                         for base in node.bases]
                classes.append((node.name, str(path.relative_to(PACKAGE)), bases))
    builtin = {name for name, value in vars(builtins).items()
               if isinstance(value, type) and issubclass(value, BaseException)}
    bases_of: dict[str, list[list[str]]] = {}
    for name, _, bases in classes:
        bases_of.setdefault(name, []).append(bases)

    def derives(name: str, roots: set[str], seen: frozenset = frozenset()) -> bool:
        if name in roots:
            return True
        return name not in seen and any(derives(base, roots, seen | {name})
                                        for bases in bases_of.get(name, []) for base in bases)

    return [(name, where, bases) for name, where, bases in classes
            if any(derives(base, builtin) for base in bases)]


def test_every_user_facing_error_class_is_a_tapa_error():
    classes = exception_classes()
    tapa = {name for name, _, _ in classes if name == "TapaError"}
    changed = True
    while changed:  # the names that derive from TapaError, through any chain of the package's classes
        before = len(tapa)
        tapa |= {name for name, _, bases in classes if any(base in tapa for base in bases)}
        changed = len(tapa) > before
    names = {name for name, _, _ in classes}
    assert len(classes) >= 37 and ("AnalysisError", "analysis/analyzer.py") in {c[:2] for c in classes}
    # One class a concept: the analysis of a position (engine) and of a record (tapa-ai analyse) share theirs.
    assert sorted(where for name, where, _ in classes if name == "AnalysisError") == ["analysis/analyzer.py"]
    outside = sorted(f"{name} ({where})" for name, where, bases in classes
                     if name != "TapaError" and not any(base in tapa for base in bases) and name not in INTERNAL)
    assert outside == [], "derive these from tapa_ai.errors.TapaError, or list them in INTERNAL with the reason"
    assert sorted(name for name in INTERNAL if name not in names) == []  # no stale entry
    assert sorted(name for name in INTERNAL if name in tapa) == []


def test_the_error_classes_keep_their_old_bases():
    """``except ValueError`` (and OSError, RuntimeError, LookupError) sites still catch them."""
    from tapa_ai.analysis.analyse import AnalysisError
    from tapa_ai.bots.base import BotError
    from tapa_ai.config import ConfigError
    from tapa_ai.engine.web_board import WebFileError
    from tapa_ai.net.atomic_files import WriteError
    from tapa_ai.net.checkpoint import CheckpointError
    from tapa_ai.net.shipped import UnknownModelError
    from tapa_ai.ray_cluster import RayUnavailable
    from tapa_ai.rules.position import PositionError
    from tapa_ai.training.runs import TrainingError

    for cls, old in ((BotError, ValueError), (ConfigError, ValueError), (CheckpointError, ValueError),
                     (PositionError, ValueError), (AnalysisError, ValueError), (WriteError, OSError),
                     (UnknownModelError, FileNotFoundError), (RayUnavailable, RuntimeError),
                     (TrainingError, RuntimeError), (WebFileError, LookupError), (UsageError, TapaError)):
        assert issubclass(cls, TapaError) and issubclass(cls, old), cls
    assert str(WriteError(Path("runs/x/latest.pt"), OSError(28, "No space left on device"))) == \
        "cannot write runs/x/latest.pt: No space left on device"
