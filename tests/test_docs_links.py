"""Every relative link of the docs points to something that exists.

Checked on README.md and every markdown file under docs/ (the guides, the experiment record
docs/experiments/, the generated reports): each relative link or image, ``[text](path)`` or
``![alt](path)``, names an existing file or folder (relative to the file it is in), and each link to a
heading, ``path.md#anchor`` or ``#anchor``, names a heading that file has, by GitHub's anchor for it (lower
case, punctuation dropped, spaces as hyphens, ``-1``, ``-2``, ... for repeated headings). Links with a
scheme (``https:``, ``mailto:``) are not followed; code blocks and code spans are not links.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"\]\(\s*(?P<target><[^>]*>|[^()\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(?P<target>\S+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"(?P<name>[^\"]+)\"", re.IGNORECASE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str):
    """(line number, line) of the lines outside fenced code blocks, code spans blanked."""
    fenced = False
    for number, line in enumerate(text.split("\n"), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (before de-duplication)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = text.replace("`", "").lower()
    kept = []
    for char in text:
        if char == " ":
            kept.append("-")
        elif char in "-_" or char.isalnum() or unicodedata.category(char).startswith("M"):
            kept.append(char)
    return "".join(kept)


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every anchor a markdown file has: its headings' (numbered when repeated) and explicit HTML anchors."""
    text = path.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    found = set(HTML_ANCHOR.findall(text))
    fenced = False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = HEADING.match(line)
        if fenced or not match:
            continue
        base = slug(match.group("text"))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def links(text: str):
    """(line number, target) of every link and image of a markdown text."""
    for number, line in prose_lines(text):
        for match in LINK.finditer(line):
            yield number, match.group("target").strip("<>")
        reference = REFERENCE.match(line)
        if reference:
            yield number, reference.group("target").strip("<>")


def link_problems(doc: Path) -> list[str]:
    problems = []
    for number, target in links(doc.read_text(encoding="utf-8")):
        if SCHEME.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        file = (doc.parent / unquote(path_part)).resolve() if path_part else doc
        where = f"line {number}: ({target})"
        if not file.exists():
            problems.append(f"{where}: no file {file.relative_to(ROOT) if file.is_relative_to(ROOT) else file}")
        elif anchor and file.suffix == ".md" and file.is_file() and unquote(anchor) not in anchors(file):
            problems.append(f"{where}: {file.name} has no heading with the anchor #{anchor}")
    return problems


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file_and_heading(doc):
    problems = link_problems(doc)
    assert not problems, f"{doc.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_docs_are_found_and_the_guides_link_the_experiment_record():
    names = {path.relative_to(ROOT).as_posix() for path in DOCS}
    assert {"README.md", "docs/training.md", "docs/experiments/README.md"} <= names
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert any(target == "docs/experiments/README.md" for _, target in links(readme))


def test_the_cli_page_names_every_command_and_option():
    """docs/cli.md lists every ``tapa-ai`` command with every option its parser has."""
    import argparse

    from tapa_ai.cli import build_parser

    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    commands = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    missing = []
    for name, parser in commands.choices.items():
        if f"`tapa-ai {name}" not in page:
            missing.append(f"tapa-ai {name}")
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help" and f"`{option}" not in page:
                    missing.append(f"tapa-ai {name} {option}")
    assert not missing, f"docs/cli.md does not name: {', '.join(missing)}"


def test_the_check_finds_missing_files_and_anchors_and_reads_github_anchors(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## Learning beside self-play: `learning.overlap`\n\n"
                                       "## Speed\n\n### Speed\n\n## What it is worth → the 2-ply row?\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# Doc\n\n## Local heading\n\n"
        "[ok](other.md) [ok](other.md#learning-beside-self-play-learningoverlap) [ok](other.md#speed-1)\n"
        "[ok](#local-heading) ![ok](other.md) [ok](https://example.com/none.md) [ok](other.md#what-it-is-worth--the-2-ply-row)\n"
        "`[not a link](missing.md)`\n```\n[not a link](missing.md)\n```\n"
        "[bad](missing.md) [bad](other.md#nothing) [bad](#nowhere) ![bad](pic.png)\n"
        "[ref]: gone.md\n")
    problems = link_problems(doc)
    assert len(problems) == 5, problems
    assert [p.split(": ", 1)[0] for p in problems] == ["line 11"] * 4 + ["line 12"]
    assert any("no file" in p and "missing.md" in p for p in problems)
    assert any("#nothing" in p for p in problems) and any("#nowhere" in p for p in problems)
    assert any("pic.png" in p for p in problems) and any("gone.md" in p for p in problems)
