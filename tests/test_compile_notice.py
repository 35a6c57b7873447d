"""The compile notice (tapa_ai.movegen.compile_notice): one stderr line on a cold numba cache, none on a warm one."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tapa_ai.notation.json_position import position_to_json
from tapa_ai.rules.position import start_position

ROOT = Path(__file__).resolve().parent.parent
NOTICE = "tapa-ai: compiling the numba kernels once"


def run_engine(cache_dir: Path) -> subprocess.CompletedProcess:
    request = {"cmd": "legal_moves", "position": position_to_json(start_position("backgammon")), "dice": [3, 1],
               "id": 1}
    return subprocess.run([sys.executable, "-m", "tapa_ai.cli", "engine"], cwd=ROOT, input=json.dumps(request) + "\n",
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)})


def test_the_engine_says_it_compiles_on_a_cold_cache_and_nothing_on_a_warm_one(tmp_path):
    cache = tmp_path / "numba-cache"  # empty: as after a fresh install
    cold = run_engine(cache)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count(NOTICE) == 1, cold.stderr
    assert str(cache) in cold.stderr  # where the cache goes
    answer, = [json.loads(line) for line in cold.stdout.splitlines()]  # stdout is the protocol's alone
    assert answer["id"] == 1 and len(answer["moves"]) == 16
    warm = run_engine(cache)
    assert warm.returncode == 0, warm.stderr
    assert NOTICE not in warm.stderr, warm.stderr
    assert json.loads(warm.stdout)["moves"] == answer["moves"]


SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import tiny
from tapa_ai.movegen.compile_notice import is_cached, notice_compile
before = is_cached(tiny.one), is_cached(tiny.two)
printed = notice_compile("group one", tiny.one), notice_compile("group two", tiny.two), notice_compile("group one")
tiny.one(1), tiny.two(1)
print(before, printed, (is_cached(tiny.one), is_cached(tiny.two)))
"""


def test_is_cached_reads_numba_s_cache_and_the_notice_prints_once_per_process(tmp_path):
    module = tmp_path / "tiny.py"
    source = textwrap.dedent("""
        from numba import njit

        @njit(cache=True)
        def one(x):
            return x + 1

        @njit(cache=True)
        def two(x):
            return x * 2
    """)
    module.write_text(source)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run():
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip(), done.stderr

    # Cold: neither is cached; one line for the first group only, however many groups are cold.
    out, err = run()
    assert out == "(False, False) (True, False, False) (True, True)"
    assert err.count(NOTICE) == 1 and "group one first" in err
    # Warm: both load from the cache; nothing printed.
    out, err = run()
    assert out == "(True, True) (False, False, False) (True, True)" and NOTICE not in err
    # A changed source file makes numba's index stale: cold again.
    module.write_text(source + "\n# changed\n")
    out, err = run()
    assert out == "(False, False) (True, False, False) (True, True)" and err.count(NOTICE) == 1


BAR_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import tiny
from tqdm import tqdm
from tapa_ai.movegen.compile_notice import notice_compile
bar = tqdm(total=3, desc="a bar", file=sys.stderr)
bar.update(1)
notice_compile("group one", tiny.one)
bar.update(1)
bar.close()
"""


def _tiny_module(tmp_path: Path) -> dict:
    (tmp_path / "tiny.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef one(x):\n    return x + 1\n")
    return {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}


def _shown(text: str) -> list[str]:
    """The lines a terminal shows for ``text``: each line as its last carriage return left it, escapes off."""
    return [line.split("\r")[-1].replace("\x1b[K", "") for line in text.split("\n")]


def test_the_notice_gets_a_line_of_its_own_under_a_progress_bar(tmp_path):
    env = _tiny_module(tmp_path)
    done = subprocess.run([sys.executable, "-c", BAR_SCRIPT, str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    notice, = [line for line in _shown(done.stderr) if NOTICE in line]
    assert notice.startswith(NOTICE), repr(done.stderr)  # not after the bar's "a bar:  33%|...|"
    assert "a bar" in done.stderr.split(NOTICE)[1]  # the bar is drawn again below it


def test_on_a_terminal_the_notice_clears_the_line_first(tmp_path):
    """A bar another process draws (a match worker's notice under the main process's bar): on a terminal the
    notice returns to the line's start and clears it."""
    import pty

    env = _tiny_module(tmp_path)
    main, child = pty.openpty()
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import tiny\n"
                           "from tapa_ai.movegen.compile_notice import notice_compile; notice_compile('g', tiny.one)",
                           str(tmp_path)], cwd=ROOT, env=env, stderr=child, stdout=subprocess.PIPE, timeout=300)
    os.close(child)
    output = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(main)
    assert done.returncode == 0, output
    assert ("\r\x1b[K" + NOTICE).encode() in output, output


MATCH = """
import time
from tapa_ai.arena.match import run_match
from tapa_ai.rules.options import variant_rules
begin = time.perf_counter()
result = run_match("random", "heuristic", variant_rules("tapa"), games=4, workers=1, desc="the duel")
print(result.seconds, time.perf_counter() - begin)
"""


def test_a_first_match_compiles_before_its_progress_bar_and_off_its_clock(tmp_path):
    """On a cold cache (a fresh install) the compile (tens of seconds) is not in the match's time, so not in its
    games/s, and its notice comes before the progress bar."""
    done = subprocess.run([sys.executable, "-c", MATCH], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")})
    assert done.returncode == 0, done.stderr
    seconds, total = map(float, done.stdout.split())
    assert seconds < 0.25 * total, (seconds, total)
    assert done.stderr.count(NOTICE) == 1 and done.stderr.index(NOTICE) < done.stderr.index("the duel"), done.stderr


# -- found by mutation testing (docs/mutation-testing.md) ---------------------------------------------------------
def test_a_function_without_numba_s_cache_or_not_a_dispatcher_counts_as_cached():
    from numba import njit

    from tapa_ai.movegen.compile_notice import cache_folder, is_cached

    uncached = njit(lambda x: x + 1)  # cache=False: nothing on disk to load, so nothing to announce
    assert is_cached(uncached) and not uncached.overloads
    assert is_cached(object()) and cache_folder(object()) == "numba's cache"


def test_each_group_is_checked_once_and_only_the_first_cold_group_is_announced(monkeypatch, capsys):
    import tapa_ai.movegen.compile_notice as notice

    monkeypatch.setattr(notice, "_checked", set())
    monkeypatch.setattr(notice, "_announced", False)
    monkeypatch.setattr(notice, "is_cached", {"warm": True, "cold": False, "cold too": False}.__getitem__)
    monkeypatch.setattr(notice, "cache_folder", lambda dispatcher: f"/cache/of/{dispatcher}")
    assert notice.notice_compile("warm group", "warm") is False
    assert notice.notice_compile("warm group", "cold") is False  # checked already: not asked again
    assert notice.notice_compile("mixed group", "warm", "cold", "cold too") is True
    assert notice.notice_compile("another group", "cold too") is False  # one line per process
    err = capsys.readouterr().err
    assert err.count(NOTICE) == 1 and "(mixed group first)" in err and "/cache/of/cold;" not in err
    assert "in /cache/of/cold" in err and "cold too" not in err


def test_off_a_terminal_the_notice_is_the_line_alone():
    import io

    from tapa_ai.movegen.compile_notice import write_line

    stream = io.StringIO()
    write_line("a notice", stream)
    assert stream.getvalue() == "a notice\n"

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    write_line("a notice", terminal)
    assert terminal.getvalue() == "\r\x1b[Ka notice\n"


def test_a_cache_index_whose_machine_code_file_is_gone_counts_as_cold(tmp_path):
    env = _tiny_module(tmp_path)
    check = ("import sys; sys.path.insert(0, sys.argv[1]); import tiny\n"
             "from tapa_ai.movegen.compile_notice import is_cached; print(is_cached(tiny.one)); tiny.one(1)")

    def cached() -> str:
        done = subprocess.run([sys.executable, "-c", check, str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert cached() == "False"  # cold; this run compiles and writes the cache
    assert cached() == "True"
    data = list((tmp_path / "cache").rglob("*.nbc"))
    assert data
    for path in data:
        path.unlink()  # the index still lists the entry, but numba has nothing to load
    assert cached() == "False"
