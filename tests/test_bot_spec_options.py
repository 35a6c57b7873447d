"""Bot spec options (tapa_ai/bots/spec.py, issue 61 found 5 and 3): an unknown option is refused with "did you
mean", a repeated one and contradicting ones (a level and an explicit noise) are refused, each in one bounded line;
a ``net:`` path no file system opens (a 300-character name) is one line, not an OSError traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tapa_ai.bots.base import BotError
from tapa_ai.bots.levels import find_level
from tapa_ai.bots.spec import make_bot
from tapa_ai.net.shipped import UnknownModelError, UnopenablePathError, find_model_path, resolve_model_path
from tapa_ai.rules import variant_rules

FEVGA = variant_rules("fevga")


@pytest.mark.parametrize("spec,fragment", [
    ("net:fevga,level=casual,noise=0.5", "'level=casual' and 'noise=0.5' contradict each other"),
    ("net:fevga,noise=0.5,level=casual", "'level=casual' and 'noise=0.5' contradict each other"),
    ("net:fevga,level=casual,level=expert", "level given twice ('level=casual' and 'level=expert')"),
    ("net:fevga,noise=0.1,noise=0.2", "noise given twice"),
    ("net:fevga,nocube,nocube", "nocube given twice"),
    ("net:fevga,noise_seed=1,noise_seed=2", "noise_seed given twice"),
    ("net:fevga,levle=casual", "unknown option 'levle=casual'; did you mean 'level'?"),
    ("net:fevga,nocub", "unknown option 'nocub'; did you mean 'nocube'?"),
    ("net:fevga,nocube=yes", "nocube takes no value"),
    ("net:fevga,level", "level wants a value: level=LEVEL"),
    ("net:fevga,noise=lots", "'noise=lots': want a number of points from 0 to 2"),
    ("net:fevga,noise=nan", "'noise=nan': want a number of points from 0 to 2"),
    ("net:fevga,noise_seed=-1", "want an integer seed from 0 to 4294967295"),
])
def test_an_option_that_is_unknown_repeated_or_contradicting_is_refused_in_one_line(spec, fragment):
    with pytest.raises(BotError) as error:
        make_bot(spec, FEVGA)
    message = str(error.value)
    assert fragment in message and "\n" not in message, message


def test_long_option_values_are_quoted_bounded():
    for spec in ("net:fevga,noise_seed=" + "9" * 4000, "net:fevga,level=" + "x" * 60_000,
                 "net:fevga,levle=" + "x" * 60_000, "net:fevga,points=" + "y" * 60_000):
        with pytest.raises(BotError) as error:
            make_bot(spec, FEVGA)
        assert len(str(error.value)) < 1000 and "characters)" in str(error.value), str(error.value)[:300]


def test_valid_specs_keep_working():
    casual = find_level("fevga", "casual")
    bot = make_bot("net:fevga,level=casual,noise_seed=3,nocube", FEVGA)
    assert (bot.plies, bot.noise, bot.noise_seed, bot.cube) == (casual.plies, casual.noise, 3, False)
    bot = make_bot("net:fevga@1ply,noise=0.25,noise_seed=7", FEVGA)
    assert (bot.plies, bot.noise, bot.noise_seed) == (1, 0.25, 7)
    bot = make_bot("net:fevga,cube_life=0.5,wins,nobearoff", FEVGA)
    assert (bot.cube_life, bot.bearoff) == (0.5, False)


def test_a_path_no_file_system_opens_is_one_bounded_line():
    name = "a" * 300
    with pytest.raises(UnopenablePathError) as error:
        resolve_model_path(name)
    message = str(error.value)
    assert "file name too long" in message and "(300 characters)" in message and len(message) < 300, message
    assert isinstance(error.value, UnknownModelError)
    with pytest.raises(UnopenablePathError):
        find_model_path(name)  # not handed back for a caller's is_file() to raise OSError
    with pytest.raises(BotError, match="file name too long") as error:
        make_bot(f"net:{name}@1ply", FEVGA)
    assert len(str(error.value)) < 400 and name not in str(error.value)


def test_the_cli_says_a_too_long_net_path_in_one_line():
    code = "import sys; from tapa_ai.cli import main; sys.exit(main(sys.argv[1:]))"
    result = subprocess.run([sys.executable, "-c", code, "match", "net:" + "a" * 300, "heuristic", "--games", "2"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "file name too long" in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert len(lines[0]) < 500
