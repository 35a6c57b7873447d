"""Every relative link of the docs points to something that exists.

Checked on README.md and every markdown file under docs/ (the guides, the experiment record
docs/experiments/, the generated reports): each relative link or image, ``[text](path)`` or
``![alt](path)``, names an existing file or folder (relative to the file it is in), and each link to a
heading, ``path.md#anchor`` or ``#anchor``, names a heading that file has, by GitHub's anchor for it (lower
case, punctuation dropped, spaces as hyphens, ``-1``, ``-2``, ... for repeated headings). Links with a
scheme (``https:``, ``mailto:``) are not followed; code blocks and code spans are not links.

Beside the links: every file or folder the README's Layout block names exists; the lists of shipped models in
the README and docs/quickstart.md are the shipped models of ``tapa_ai.net.shipped``; the option tables of
docs/rules.md (the project's rules reference) hold each preset's values of ``tapa_ai/rules/options.py``; and no
page or source file cites a rules file outside the repository.
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


# -- the README's Layout block -----------------------------------------------------------------------------------

LAYOUT_PATH = re.compile(r"(?:[\w./-]|\{[\w,]+\})+\.(?:py|md|toml|json|sh|js|html|css)\b|[\w.-]+(?:/[\w.-]+)*/")
"""A file (an extension, with ``{a,b}`` alternatives) or a folder (a trailing slash) named in the Layout block."""


def layout_block(readme: str) -> list[str]:
    """The lines of the first code block after the README's ``## Layout`` heading."""
    lines = readme.split("\n")
    start = lines.index("## Layout")
    opening = next(i for i in range(start, len(lines)) if FENCE.match(lines[i]))
    closing = next(i for i in range(opening + 1, len(lines)) if FENCE.match(lines[i]))
    return lines[opening + 1:closing]


def expand(name: str) -> list[str]:
    """``cli_{match,serve}.py`` -> ``cli_match.py``, ``cli_serve.py`` (one brace group at a time)."""
    match = re.search(r"\{([\w,]+)\}", name)
    if not match:
        return [name]
    return [expanded for choice in match.group(1).split(",")
            for expanded in expand(name[:match.start()] + choice + name[match.end():])]


def layout_problems(readme: str, root: Path = ROOT) -> list[str]:
    """The paths of the Layout block that do not exist. Each entry starts at the left margin with its path (the
    continuation lines are indented); a name in its description is looked up in the entry's folder, then in each
    folder above it up to the repository root (``rules/cube.py`` in the cube's entry is ``tapa_ai/rules/cube.py``)."""
    problems = []
    entry = None
    for line in layout_block(readme):
        if not line.strip():
            continue
        if not line[0].isspace():
            entry = line.split()[0]
            if not (root / entry).exists():
                problems.append(f"{entry}: no such file or folder")
        base = (root / entry) if entry.endswith("/") else (root / entry).parent
        description = line.split(None, 1)[1] if not line[0].isspace() and len(line.split(None, 1)) > 1 else line
        for match in LAYOUT_PATH.finditer(description):
            token = match.group(0)
            if "<" in description[match.end():match.end() + 1] or description[max(match.start() - 1, 0)] == "<":
                continue  # a placeholder such as kept_runs/<run>
            for name in expand(token):
                folders = [base, *[folder for folder in base.parents if folder.is_relative_to(root)]]
                if not any((folder / name).exists() for folder in folders):
                    problems.append(f"{entry}: names {name}, which is not in {base.relative_to(root).as_posix() or '.'}"
                                    " or a folder above it")
    return problems


def test_every_path_the_readme_layout_names_exists():
    problems = layout_problems((ROOT / "README.md").read_text(encoding="utf-8"))
    assert not problems, "README.md, Layout:\n" + "\n".join(problems)


def test_the_layout_check_finds_a_missing_file_a_missing_entry_and_reads_braces(tmp_path):
    (tmp_path / "pkg" / "net").mkdir(parents=True)
    for name in ("model.py", "cli_match.py", "cli_serve.py"):
        (tmp_path / "pkg" / "net" / name).write_text("")
    (tmp_path / "pkg" / "rules.py").write_text("")
    readme = ("# x\n\n## Layout\n\n```\n"
              "pkg/net/      the network (model.py), cli_{match,serve}.py, rules.py from above, kept/<run>\n"
              "              afterstate values (afterstates.py), cli_{match,tournament}.py\n"
              "pkg/gone.py   nothing\n"
              "```\n")
    problems = layout_problems(readme, tmp_path)
    assert len(problems) == 3, problems
    assert "afterstates.py" in problems[0] and "cli_tournament.py" in problems[1]
    assert problems[2].startswith("pkg/gone.py: no such file")


# -- lists of the shipped models ----------------------------------------------------------------------------------

def test_the_lists_of_shipped_models_name_every_shipped_model():
    """The README's shipped-models sentence, its ``net:NAME`` sentence and its export row, and the quick start
    guide's list, name exactly the shipped models (``SHIPPED_VARIANTS``, each with its file)."""
    from tapa_ai.net.shipped import MODELS_DIR, SHIPPED_VARIANTS

    shipped = set(SHIPPED_VARIANTS)
    assert all((MODELS_DIR / f"{name}.pt").is_file() for name in shipped)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    found = {
        "README.md, shipped models": re.findall(r"tapa_ai/models/\{([\w,]+)\}\.pt", readme),
        "docs/quickstart.md": re.findall(r"checkpoints/\{([\w,]+)\}\.pt", quickstart),
        "README.md, the export row": re.findall(r"`tapa-ai export CHECKPOINT((?:\\\|[\w-]+)+) --format", readme),
    }
    named = re.search(r"((?:`net:[\w-]+`,?\s+(?:and\s+)?)+)name the\s+shipped models", readme)
    assert named, "README.md: no sentence '`net:...` ... name the shipped models'"
    wrong = []
    for where, lists in found.items():
        assert len(lists) == 1, f"{where}: {len(lists)} lists of shipped models"
        names = set(re.split(r"[,|\\]+", lists[0].strip("\\|")))
        if names != shipped:
            wrong.append(f"{where}: {sorted(names)}")
    net_names = set(re.findall(r"`net:([\w-]+)`", named.group(1)))
    if net_names != shipped:
        wrong.append(f"README.md, net: names: {sorted(net_names)}")
    assert not wrong, f"the shipped models are {sorted(shipped)}; " + "; ".join(wrong)


# -- the rules reference ------------------------------------------------------------------------------------------

def option_tables(text: str):
    """(variant, option, cell) of every table of docs/rules.md whose first header is ``option``: a column headed by
    a variant name in backticks, a row headed by an option name in backticks."""
    header = None
    for _, line in prose_lines(text.replace("`", "\x00")):
        cells = [cell.strip().replace("\x00", "`") for cell in line.strip().strip("|").split("|")]
        if not line.strip().startswith("|"):
            header = None
        elif header is None:
            header = cells if cells[0] == "option" else []
        elif set(line.strip()) <= set("|-: "):
            continue
        else:
            option = re.fullmatch(r"`(\w+)`", cells[0])
            for name, cell in zip(header[1:], cells[1:]):
                variant = re.fullmatch(r"`(\w+)`", name)
                if variant and option:
                    yield variant.group(1), option.group(1), cell


def option_text(value) -> str:
    """An option's value as the rules reference writes it: yes/no, ``24:5 23:5 22:5``, or the value itself."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return " ".join(f"{point}:{count}" for point, count in value)
    return str(value)


def test_the_rules_reference_states_every_option_of_every_preset():
    from dataclasses import fields

    from tapa_ai.rules.options import VARIANTS, RuleOptions

    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    options = {field.name for field in fields(RuleOptions)} - {"name"}
    stated = {}
    for variant, option, cell in option_tables(text):
        assert variant in VARIANTS, f"docs/rules.md: a table of the variant {variant!r}, which is not a preset"
        assert option in options, f"docs/rules.md: {variant}'s table names {option!r}, not an option"
        stated.setdefault(variant, {})[option] = cell.replace("`", "")
    wrong = [f"{variant}.{option}: {stated.get(variant, {}).get(option)!r}, the preset has "
             f"{option_text(getattr(rules, option))!r}"
             for variant, rules in VARIANTS.items() for option in sorted(options)
             if stated.get(variant, {}).get(option) != option_text(getattr(rules, option))]
    assert not wrong, "docs/rules.md's option tables disagree with tapa_ai/rules/options.py:\n" + "\n".join(wrong)


def test_the_option_tables_are_read_as_written():
    text = ("| option | meaning | `tapa` | `odd` |\n|---|---|---|---|\n| `cube` | the cube | yes | no |\n"
            "| `start` | | 24:5 23:5 22:5 | 24:15 |\n\nprose\n\n| other | `tapa` |\n|---|---|\n| `cube` | no |\n")
    assert list(option_tables(text)) == [("tapa", "cube", "yes"), ("odd", "cube", "no"),
                                         ("tapa", "start", "24:5 23:5 22:5"), ("odd", "start", "24:15")]
    assert option_text(True) == "yes" and option_text(((24, 5), (23, 5))) == "24:5 23:5"


def test_no_page_or_source_cites_a_rules_file_outside_the_repository():
    """The rules reference is docs/rules.md: nothing cites the specification file the project started from, or
    the folder outside the checkout it lived in."""
    outside = ("RULES" + ".md", "../" + "shared", "/work/" + "shared")
    files = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("tapa_ai/**/*.py"),
             *ROOT.glob("tapa_ai/web/*.js"), *ROOT.glob("tapa_ai/web/*.html"), *ROOT.glob("tests/**/*.py"),
             *ROOT.glob("scripts/*.py"), *ROOT.glob("scripts/*.sh")]
    cites = [f"{path.relative_to(ROOT)}:{number}" for path in files
             for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1)
             if any(name in line for name in outside)]
    assert not cites, "cites a rules file outside the repository (cite docs/rules.md): " + ", ".join(cites)
