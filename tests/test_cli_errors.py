"""Argument errors of every ``tapa-ai`` command are one line (issue 61): ``tapa-ai CMD: error: ... (see tapa-ai CMD
--help)``, no usage block, exit code 2, the bad value quoted bounded; a mistyped command or option keeps its "did you
mean"; a :class:`~tapa_ai.errors.UsageError` found after parsing reads the same."""

from __future__ import annotations

import pytest

from tapa_ai.cli import COMMANDS, main


def one_line(argv, capsys) -> str:
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2, err
    assert err.count("\n") == 1 and err.endswith("\n") and "usage:" not in err, err
    return err.rstrip("\n")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_commands_argument_error_is_one_line_naming_its_help(command, capsys):
    line = one_line([command, "--no-such-option-at-all", "1"], capsys)
    assert line.startswith(f"tapa-ai {command}: error: ") and line.endswith(f"(see tapa-ai {command} --help)"), line


@pytest.mark.parametrize("argv, says", [
    (["match", "random", "runner", "--gmaes", "4"], "did you mean --games?"),
    (["demo", "--variant", "fevgaa"], "invalid choice: 'fevgaa'; did you mean 'fevga'?"),
    (["benchmark", "scroe"], "invalid choice: 'scroe'; did you mean 'score'?"),
])
def test_did_you_mean_stays_on_the_one_line(argv, says, capsys):
    assert says in one_line(argv, capsys)


def test_a_mistyped_command_is_one_line(capsys):
    line = one_line(["servee"], capsys)
    assert line.startswith("tapa-ai: unknown command 'servee'; did you mean 'serve'?") and "tapa-ai --help" in line


def test_a_usage_error_after_parsing_is_the_same_one_line(capsys):
    line = one_line(["match", "random", "runner", "--games", "1"], capsys)
    assert line == "tapa-ai match: error: --games must be at least 2 (one duplicate pair) (see tapa-ai match --help)"


@pytest.mark.parametrize("argv", [
    ["match", "random", "runner", "--games", "9" * 60_000],
    ["engine", "x" * 60_000],
    ["x" * 60_000],
    ["demo", "--variant", "v" * 60_000],
])
def test_a_huge_argument_is_quoted_bounded(argv, capsys):
    line = one_line(argv, capsys)
    assert len(line) < 1000 and "characters)" in line, line[:300]
