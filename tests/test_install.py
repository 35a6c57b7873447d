"""``pip install .`` (not editable) gives the shipped models, configs and web page, used from any directory.

The shipped models are package data (``tapa_ai/models/``; a checkout's ``checkpoints/`` is a link to it) and
``net:tapa`` names one from anywhere (:mod:`tapa_ai.net.shipped`). The first tests check the resolver in this
process from a directory outside the checkout; the last builds a wheel of the project, installs it (no
dependencies: torch and numpy come from this interpreter's site-packages) into a fresh virtual environment in
a temporary directory, and runs ``tapa-ai`` there from a directory outside the checkout, with the checkout off
``sys.path``. Nothing is installed into this interpreter's environment and nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from tapa_ai.bots.base import BotError
from tapa_ai.net.shipped import (MODELS_DIR, SHIPPED_VARIANTS, UnknownModelError, resolve_model_path,
                                 shipped_model, shipped_model_card, shipped_names)
from tests.requires import skip_or_fail

ROOT = Path(__file__).resolve().parent.parent


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- the resolver, from a directory outside the checkout --------------------------------------------------


def test_the_shipped_models_are_package_data():
    for variant in SHIPPED_VARIANTS:
        assert shipped_model(variant) == MODELS_DIR / f"{variant}.pt" and shipped_model(variant).is_file()
        assert shipped_model_card(variant).read_text().strip()
    assert shipped_names()[:len(SHIPPED_VARIANTS)] == list(SHIPPED_VARIANTS)
    assert "tapa-g3" in shipped_names() and shipped_model("tapa-g3") == MODELS_DIR / "generations" / "tapa-g3.pt"
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert {"models/*.pt", "models/*.md", "models/generations/*.pt", "models/benchmarks/*.jsonl.gz"} <= set(
        package_data["tapa_ai"])
    link = ROOT / "checkpoints"
    if link.exists():  # a checkout: checkpoints/ is the same folder (a link, or a copy where links are not kept)
        assert link.resolve() == MODELS_DIR or all(
            sha256(link / f"{variant}.pt") == sha256(MODELS_DIR / f"{variant}.pt") for variant in SHIPPED_VARIANTS)


def test_a_real_path_wins_then_a_shipped_name_then_the_documented_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_model_path("tapa") == shipped_model("tapa")
    assert resolve_model_path("backgammon-g2") == MODELS_DIR / "generations" / "backgammon-g2.pt"
    # The paths the docs use work where the current directory has no such file ...
    assert resolve_model_path("checkpoints/plakoto.pt") == shipped_model("plakoto")
    assert resolve_model_path("checkpoints/generations/tapa-g1.pt") == shipped_model("tapa-g1")
    # ... and a file of that path or name comes first.
    (tmp_path / "checkpoints").mkdir()
    shutil.copyfile(shipped_model("backgammon"), tmp_path / "checkpoints" / "plakoto.pt")
    assert resolve_model_path("checkpoints/plakoto.pt") == Path("checkpoints/plakoto.pt")
    shutil.copyfile(shipped_model("plakoto"), tmp_path / "tapa")
    assert resolve_model_path("tapa") == Path("tapa")
    for wrong in ("nosuchmodel", "tapa.pt", "checkpoints/tapa-g1.pt", "checkpoints/generations/tapa.pt",
                  str(tmp_path / "missing.pt"), "../tapa", ""):
        with pytest.raises(UnknownModelError) as caught:
            resolve_model_path(wrong)
        message = str(caught.value)
        assert "\n" not in message and "shipped models: tapa, plakoto, backgammon" in message, message


def test_net_specs_name_the_shipped_models_from_any_directory(tmp_path, monkeypatch):
    from tapa_ai.bots.search import NetBot
    from tapa_ai.bots.spec import make_bot, model_rules, net_checkpoint_path
    from tapa_ai.rules.options import variant_rules

    monkeypatch.chdir(tmp_path)
    bot = make_bot("net:backgammon@2ply,nocube", variant_rules("backgammon"))
    assert isinstance(bot, NetBot) and bot.plies == 2 and not bot.cube
    assert bot.name == "net:backgammon@2ply,nocube"
    assert make_bot("net:tapa").name == "net:tapa" and make_bot("net:tapa-g2@1").plies == 1
    assert model_rules("net:plakoto@1ply") == variant_rules("plakoto")
    assert net_checkpoint_path("net:tapa@1ply,nocube") == shipped_model("tapa")
    assert make_bot("net:checkpoints/tapa.pt@1ply").net.rules == variant_rules("tapa")
    with pytest.raises(BotError) as caught:
        make_bot("net:nosuchmodel@1ply")
    assert "'net:nosuchmodel@1ply': no checkpoint file" in str(caught.value)
    assert "shipped models: tapa, plakoto, backgammon" in str(caught.value)


def test_the_defaults_are_the_shipped_models_outside_the_checkout(tmp_path, monkeypatch):
    from tapa_ai.engine.web_board import ModelFiles
    from tapa_ai.export import ExportError, export_checkpoint
    from tapa_ai.play.advice import default_advisor_spec
    from tapa_ai.play.cli_play import default_bot_spec
    from tapa_ai.rules.options import variant_rules

    monkeypatch.chdir(tmp_path)
    assert default_advisor_spec("plakoto") == "net:plakoto"
    assert default_bot_spec(variant_rules("backgammon")) == "net:backgammon@1ply"
    assert ModelFiles().checkpoint("tapa") == shipped_model("tapa")
    assert export_checkpoint("tapa", "npz", tmp_path / "tapa.npz").is_file()
    with pytest.raises(ExportError, match="nosuchmodel: the file does not exist, nor is it a shipped model"):
        export_checkpoint("nosuchmodel", "npz", tmp_path / "x.npz")
    # Your own checkpoints/<variant>.pt in the current directory comes first.
    (tmp_path / "checkpoints").mkdir()
    shutil.copyfile(shipped_model("plakoto-g1"), tmp_path / "checkpoints" / "plakoto.pt")
    assert default_advisor_spec("plakoto") == "net:checkpoints/plakoto.pt"


# --- a wheel installed into a fresh environment ------------------------------------------------------------


_CAN_BUILD = ("import importlib.util as u, setuptools.build_meta;"
              "assert u.find_spec('setuptools.command.bdist_wheel') or u.find_spec('wheel')")


def _require_wheel_build() -> None:
    """The wheel is built offline (``--no-build-isolation``) by this environment's setuptools, which needs
    ``bdist_wheel`` (setuptools 70.1 or later, or the ``wheel`` package; pyproject's build requirements). A
    virtual environment's bundled setuptools (65 on Python 3.11, none on 3.12) has not: skip saying what to
    install, fail under ``CI=true`` (tests/requires.py)."""
    __tracebackhide__ = True
    done = subprocess.run([sys.executable, "-c", _CAN_BUILD], capture_output=True, text=True, timeout=120)
    if done.returncode == 0:
        return
    message = (f"building the project's wheel offline needs setuptools>=70.1 (or setuptools with the wheel "
               f"package) in this environment, which has not: run `{sys.executable} -m pip install "
               f"'setuptools>=70.1'`")
    skip_or_fail(message)


def _build_wheel(tmp_path: Path) -> Path:
    """The project's wheel, built from a copy of what it is made of (so the build writes nothing into the
    checkout: no build/ folder whose stale files could slip into the wheel)."""
    _require_wheel_build()
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, source / name)
    shutil.copytree(ROOT / "tapa_ai", source / "tapa_ai", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(dist), str(source)], check=True, cwd=tmp_path, timeout=300)
    wheels = list(dist.glob("tapa_ai-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _site_dirs() -> list[str]:
    """This interpreter's site-packages directories, as its ``sys.path`` holds them: a virtual environment's own
    (where ``pip install -e '.[test]'`` put the dependencies) and, with ``--system-site-packages``, its base's."""
    return [entry for entry in sys.path if entry and Path(entry).name in ("site-packages", "dist-packages")
            and Path(entry).is_dir() and not Path(entry).resolve().is_relative_to(ROOT)]


class Venv:
    """A fresh virtual environment over this interpreter's site-packages, running commands from ``cwd``.

    Not ``--system-site-packages``: from a virtual environment that reaches the *base* interpreter's
    site-packages, not the running environment's. A ``.pth`` file adds this interpreter's site directories after
    the venv's own instead, as plain paths (their own ``.pth`` files, such as this checkout's editable install,
    are not run)."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(self.root)], check=True, timeout=120)
        self.python = self.root / "bin" / "python"
        own = subprocess.run([str(self.python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True, timeout=120).stdout.strip()
        (Path(own) / "_tapa_ai_test_outer_site.pth").write_text("".join(f"{entry}\n" for entry in _site_dirs()))
        self.script = self.root / "bin" / "tapa-ai"
        self.cwd = tmp_path / "elsewhere"
        self.cwd.mkdir()
        self.env = {key: value for key, value in os.environ.items()
                    if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
        self.env["PYTHONNOUSERSITE"] = "1"

    def install(self, wheel: Path) -> None:
        # The pip of this interpreter's site-packages installs into the venv (its sys.prefix); an installed
        # tapa-ai outside the venv (this checkout's editable install) is left alone.
        subprocess.run([str(self.python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
                       check=True, cwd=self.cwd, env=self.env, timeout=300)

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.script), *args], cwd=self.cwd, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def python_json(self, code: str) -> dict:
        done = subprocess.run([str(self.python), "-c", code], cwd=self.cwd, env=self.env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


_PACKAGE_DATA = """
import json, sys
import tapa_ai
from tapa_ai.config import resolve_config_path
from tapa_ai.engine.web_board import WEB_DIR, ModelFiles, static_file, web_files
from tapa_ai.net.shipped import shipped_model, shipped_model_card, shipped_names
print(json.dumps({
    "tapa_ai": tapa_ai.__file__, "sys_path": sys.path,
    "config": str(resolve_config_path("configs/quick.toml")),
    "models": {name: str(shipped_model(name)) for name in shipped_names()},
    "cards": [str(shipped_model_card(v)) for v in ("tapa", "plakoto", "backgammon", "fevga", "narde", "gulbara")],
    "web_files": web_files(), "index": static_file("index.html")[0].decode()[:200],
    "board_model": str(ModelFiles().checkpoint("backgammon")),
}))
"""


def _serve(venv: Venv) -> dict:
    """``tapa-ai serve --port 0`` in the venv: ``GET /``, a page script and the web board's tapa model."""
    server = subprocess.Popen([str(venv.script), "serve", "--port", "0", "--quiet"], cwd=venv.cwd, env=venv.env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stderr], daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        url, seen = None, []
        while url is None and time.monotonic() < deadline and server.poll() is None:
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                continue
            match = re.search(r"listening on (http://\S+?) ", seen[-1])
            url = match.group(1) if match else None
        assert url, f"tapa-ai serve did not start: {''.join(seen)}"

        def get(path: str) -> bytes:
            with urllib.request.urlopen(url + path, timeout=120) as answer:
                assert answer.status == 200
                return answer.read()

        return {"index": get("/").decode(), "app": get("/web/app.js"), "model": json.loads(get("/model/tapa.json"))}
    finally:
        server.terminate()
        server.wait(timeout=30)


def _main_install() -> str:
    """Where this interpreter imports tapa_ai from, seen from outside the checkout."""
    return subprocess.run([sys.executable, "-c", "import tapa_ai; print(tapa_ai.__file__)"], cwd="/",
                          capture_output=True, text=True, check=True, timeout=120).stdout.strip()


@pytest.mark.slow
def test_an_installed_wheel_has_the_models_configs_and_web_page_from_any_directory(tmp_path):
    before = _main_install()
    venv = Venv(tmp_path)
    venv.install(_build_wheel(tmp_path))
    site = venv.root / "lib"

    data = venv.python_json(_PACKAGE_DATA)
    package = Path(data["tapa_ai"]).parent
    assert package.is_relative_to(site), f"tapa_ai imported from {data['tapa_ai']}, not the venv"
    assert not any(Path(entry or venv.cwd).resolve() == ROOT for entry in data["sys_path"])
    assert Path(data["config"]) == package / "configs" / "quick.toml"
    for name in ("tapa", "plakoto", "backgammon", "fevga", "narde", "gulbara", "tapa-g3", "gulbara-g1"):
        installed = Path(data["models"][name])
        assert installed.is_relative_to(package / "models")
        assert sha256(installed) == sha256(shipped_model(name)), f"{name}: the wheel's file differs"
    assert [Path(card).is_relative_to(package / "models") for card in data["cards"]] == [True] * 6
    assert {"index.html", "app.js", "style.css"} <= set(data["web_files"]) and "<" in data["index"]
    assert Path(data["board_model"]) == package / "models" / "backgammon.pt"

    # A match of the shipped model (the first command compiles the numba kernels into the venv: ~20 s).
    match = venv.run("match", "net:tapa", "random", "--games", "4", "--seed", "1", "--workers", "1", "--quiet")
    assert match.returncode == 0, match.stderr
    assert "net:tapa vs random (tapa, 4 games" in match.stdout
    searched = venv.run("match", "net:backgammon@1ply,nocube", "runner", "--games", "2", "--workers", "1",
                        "--quiet", "--json")
    assert searched.returncode == 0, searched.stderr

    # The shipped benchmark set by name (models/benchmarks/), scored from the installed package.
    scored = venv.run("benchmark", "score", "heuristic", "--set", "backgammon", "--no-rollout", "--workers", "1",
                      "--quiet", "--json")
    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    from tapa_ai.arena.benchmark.file import read_set, sets_dir

    whole = len(read_set(sets_dir() / "backgammon.jsonl.gz").records)  # the repository's copy of the set
    assert Path(report["set"]).is_relative_to(package / "models" / "benchmarks") and report["positions"] == whole
    assert report["bots"][0]["mean_loss_mp"] > 0

    # An unknown model: one clear line, no traceback.
    wrong = venv.run("match", "net:nosuchmodel", "random", "--games", "2")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1, wrong.stderr
    assert "net:nosuchmodel" in wrong.stderr and "shipped models: tapa, plakoto, backgammon" in wrong.stderr

    # Export of a shipped model by name.
    export = venv.run("export", "plakoto", "--format", "npz", "--out", "plakoto.npz")
    assert export.returncode == 0 and (venv.cwd / "plakoto.npz").is_file(), export.stderr

    # Training on the shipped quick config (the default), a few games.
    settings = ["run.total_games=16", "selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64",
                "eval.every_games=16", "eval.games=4", "checkpoint.every_games=16", "logging.tensorboard=false"]
    train = venv.run("train", "--quiet", *[arg for setting in settings for arg in ("--set", setting)])
    assert train.returncode == 0, train.stderr
    assert "done: " in train.stdout and list((venv.cwd / "runs").glob("tapa__quick__*/latest.pt"))

    # The web board: the page, its scripts and the model exported from the shipped checkpoint.
    served = _serve(venv)
    assert "<html" in served["index"].lower() and served["app"]
    assert served["model"]["format"] == "tapa-ai-web-model" and served["model"]["layers"]

    assert _main_install() == before  # this interpreter's own install is untouched


# --- the README's test command: the whole set-up on a fresh machine ---------------------------------------


def _quick_start_commands() -> list[str]:
    """The command lines of the README's Quick start (its sh block), comments off."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start\n+```sh\n(.*?)```", readme, re.S)
    assert block, "README.md has no Quick start sh block"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_readmes_test_command_sets_up_and_is_exactly_what_ci_runs():
    commands = _quick_start_commands()
    assert len(commands) == 2, commands  # set up and train; set up and test
    test_command = commands[1]
    assert test_command == "scripts/setup_tests.sh && python -m pytest -q -n auto --dist loadfile", test_command
    script = (ROOT / ".ci" / "run").read_text()
    ran = [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert ran[-1] == test_command, ran[-1]
    assert "export CI=true" in ran[:-1] and not any("apt-get" in line or "pip install" in line for line in ran[:-1])
    assert os.access(ROOT / "scripts" / "setup_tests.sh", os.X_OK) and os.access(ROOT / ".ci" / "run", os.X_OK)


_FAKE = """#!/bin/sh
echo "{name} $*" >> "{log}"
{body}
"""


def _run_setup(tmp_path: Path, uid: int, chromium: str, node: str = "/bin/sh"
               ) -> tuple[subprocess.CompletedProcess, list[str]]:
    """scripts/setup_tests.sh with stand-ins for id, apt-get and python first on PATH: what it ran, in order."""
    fake = tmp_path / f"bin{uid}{len(chromium)}{len(node)}"
    fake.mkdir()
    log = fake / "log"
    log.touch()
    for name, body in (("id", f"echo {uid}"), ("apt-get", ""), ("python", "")):
        (fake / name).write_text(_FAKE.format(name=name, log=log, body=body))
        (fake / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:/usr/bin:/bin", "TAPA_AI_CHROMIUM": chromium,
           "TAPA_AI_CHROMEDRIVER": "/bin/sh", "TAPA_AI_NODE": node}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "setup_tests.sh")], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    ran = [line for line in log.read_text().splitlines() if not line.startswith("id")]
    return done, ran


def test_setup_tests_installs_chromium_as_root_and_says_what_to_run_otherwise(tmp_path):
    pip = "python -m pip install --quiet --disable-pip-version-check -e .[test]"
    missing = str(tmp_path / "no-chromium")
    # Root, Chromium missing: apt-get installs both, then pip installs the test extra.
    done, ran = _run_setup(tmp_path, 0, missing)
    assert done.returncode == 0, done.stderr
    assert ran == ["apt-get update -qq", "apt-get install -y -qq --no-install-recommends chromium chromium-driver",
                   pip], ran
    # Not root: no apt-get, one line naming the command to run; the test extra is still installed.
    done, ran = _run_setup(tmp_path, 1000, missing)
    assert done.returncode == 0 and ran == [pip], (ran, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "`sudo apt-get install -y --no-install-recommends chromium chromium-driver`" in lines[0]
    assert missing in lines[0] and "browser tests will skip" in lines[0]
    # Root, Chromium present but no Node.js: apt-get installs the list with nodejs (the Node.js tests need it).
    done, ran = _run_setup(tmp_path, 0, "/bin/sh", node=str(tmp_path / "no-node"))
    install = "apt-get install -y -qq --no-install-recommends chromium chromium-driver nodejs"
    assert done.returncode == 0 and ran[1] == install, ran
    # Both there: nothing to install but the test extra, nothing said.
    done, ran = _run_setup(tmp_path, 0, "/bin/sh")
    assert done.returncode == 0 and ran == [pip] and done.stderr == "", (ran, done.stderr)


def test_what_the_quick_start_writes_is_git_ignored():
    """The quick start's outputs (runs/ of tapa-ai train, every --out of docs/quickstart.md) stay out of git."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    block = re.search(r"```sh\n(.*?)```", (ROOT / "docs" / "quickstart.md").read_text(), re.S).group(1)
    outputs = re.findall(r"--out (\S+)", block)
    assert outputs, "the quick start writes no --out file any more: update this test"
    paths = ["runs/tapa__quick__1__0/latest.pt", *outputs]
    checked = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
    assert sorted(checked.stdout.split()) == sorted(paths), f"not ignored: {set(paths) - set(checked.stdout.split())}"
