"""The docs name the model each table of results was measured with, with the file's present hash.

The convention (docs/strength.md, *Naming the model a table was measured with*): a table of results names
its model as ``checkpoints/tapa.pt (generation 3, sha256 cfcfbfdd9162)`` — path, generation, the first 12
hex digits of the file's sha256 — in the text introducing it. Checked here on docs/*.md, the experiment record
docs/experiments/*.md, README.md and checkpoints/*.md:

1. every ``PATH (generation N, sha256 HEX)`` names an existing file with that hash prefix and generation,
   and no ``sha256 HEX`` stands anywhere else;
2. a table that names a shipped ``checkpoints/<variant>.pt`` (in its rows or in the text between the
   heading or table before it and the table) carries that file's name in the convention's form, so its
   present hash; one that names a bot ``net:<variant>.pt`` carries the name of a file of that variant
   (the shipped one or a kept generation); a table marked ``<!-- no results of a model -->`` (a command
   reference) is exempt.

So shipping a new checkpoint (a new hash) fails here until every table naming it is regenerated or
renamed to the kept generation it was measured with.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tapa_ai.net.model_id import SHORT_HASH, file_sha256, model_generation, model_label

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("tapa", "plakoto", "backgammon")
DOCS = (sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "docs" / "experiments").glob("*.md"))
        + [ROOT / "README.md"] + sorted((ROOT / "checkpoints").glob("*.md")))
NO_RESULTS = "<!-- no results of a model -->"

LABEL = re.compile(r"`?(?P<path>[\w./-]+\.pt)`?\s+\((?:generation\s+(?P<generation>[0-9]+),\s+)?"
                   r"sha256\s+(?P<hash>[0-9a-fA-F]+)\)")
"""A model's name in the convention's form (line breaks allowed between its words, as reflowed text has)."""
ANY_HASH = re.compile(r"sha256\s+(?P<hash>[0-9a-fA-F]{6,})")
SHIPPED = re.compile(r"(?<![\w/.-])checkpoints/(?P<variant>tapa|plakoto|backgammon)\.pt(?![\w-])")
SHORT = re.compile(r"(?<![\w/.-])net:(?P<variant>tapa|plakoto|backgammon)\.pt(?![\w-])")
HEADING = re.compile(r"^#{1,6} ")


def label_problems(text: str, root: Path = ROOT) -> list[str]:
    """Rule 1: the names in the convention's form that do not match their files, and stray hashes."""
    problems = []
    covered = set()
    for match in LABEL.finditer(text):
        covered.add(match.start("hash"))
        path, digest, generation = match.group("path"), match.group("hash").lower(), match.group("generation")
        file = root / path
        if not file.is_file():
            problems.append(f"{match.group(0)!r}: no file {path}")
            continue
        if len(digest) < SHORT_HASH:
            problems.append(f"{match.group(0)!r}: give at least {SHORT_HASH} hex digits of the sha256")
        actual = file_sha256(file)
        if not actual.startswith(digest):
            problems.append(f"{match.group(0)!r}: {path} now has sha256 {actual[:SHORT_HASH]} "
                            f"({model_label(file, name=path)})")
        expected_generation = model_generation(file)
        if expected_generation is not None and (generation is None or int(generation) != expected_generation):
            problems.append(f"{match.group(0)!r}: {path} is generation {expected_generation}")
    for match in ANY_HASH.finditer(text):
        if match.start("hash") not in covered:
            problems.append(f"{match.group(0)!r}: a sha256 not given as 'PATH (generation N, sha256 HEX)'")
    return problems


def tables(text: str):
    """(line number, context, table) of every markdown table outside code blocks; the context is the text
    between the heading or table before it and the table."""
    lines = text.split("\n")
    in_code = False
    context_start = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code and HEADING.match(line):
            context_start = index
        elif not in_code and line.startswith("|"):
            end = index
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            yield index + 1, "\n".join(lines[context_start:index]), "\n".join(lines[index:end])
            context_start = end
            index = end
            continue
        index += 1


def table_problems(text: str) -> list[str]:
    """Rule 2: the tables naming a shipped checkpoint (or a net bot) without the name of the file measured."""
    problems = []
    for line, context, table in tables(text):
        block = context + "\n" + table
        if NO_RESULTS in context:
            continue
        labels = [match.group("path") for match in LABEL.finditer(block)]
        for variant in sorted({m.group("variant") for m in SHIPPED.finditer(block)}):
            if f"checkpoints/{variant}.pt" not in labels:
                name = f"checkpoints/{variant}.pt"
                problems.append(f"table at line {line} names {name} without its generation and hash "
                                f"({model_label(ROOT / name, name=name)}) or the name of the file it was measured with")
        for variant in sorted({m.group("variant") for m in SHORT.finditer(block)}):
            if not any(re.fullmatch(rf"checkpoints/(generations/)?{variant}(-g[0-9]+)?\.pt", path) for path in labels):
                problems.append(f"table at line {line} names the bot net:{variant}.pt without the name of the "
                                f"{variant} file it was measured with")
    return problems


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_model_named_with_a_hash_has_that_hash(doc):
    problems = label_problems(doc.read_text())
    assert not problems, f"{doc.relative_to(ROOT)}:\n" + "\n".join(problems)


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_table_naming_a_shipped_model_names_the_file_it_was_measured_with(doc):
    problems = table_problems(doc.read_text())
    assert not problems, f"{doc.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_shipped_models_are_named_and_their_generations_counted_as_the_docs_say():
    for variant in VARIANTS:
        shipped = ROOT / "checkpoints" / f"{variant}.pt"
        kept = sorted((ROOT / "checkpoints" / "generations").glob(f"{variant}-g*.pt"))
        assert model_generation(shipped) == len(kept) + 1
        for number, path in enumerate(kept, start=1):
            assert path.name == f"{variant}-g{number}.pt" and model_generation(path) == number
        label = model_label(shipped, name=f"checkpoints/{variant}.pt")
        match = LABEL.fullmatch(label)
        assert match and int(match.group("generation")) == len(kept) + 1
        assert match.group("hash") == file_sha256(shipped)[:SHORT_HASH]
        assert not label_problems(label) and not label_problems(model_label(shipped, name=f"checkpoints/{variant}.pt",
                                                                             markdown=True))
    # docs/strength.md lists the shipped files in this form.
    strength = (ROOT / "docs" / "strength.md").read_text()
    for variant in VARIANTS:
        assert model_label(ROOT / "checkpoints" / f"{variant}.pt", name=f"checkpoints/{variant}.pt",
                           markdown=True) in strength


def test_the_checks_fail_on_a_stale_hash_a_missing_name_and_a_stray_hash():
    shipped = ROOT / "checkpoints" / "tapa.pt"
    good = model_label(shipped, name="checkpoints/tapa.pt", markdown=True)
    digest = file_sha256(shipped)[:SHORT_HASH]
    stale = good.replace(digest, "0" * SHORT_HASH if digest != "0" * SHORT_HASH else "1" * SHORT_HASH)
    table = "| match | ppg |\n|---|---:|\n| net:checkpoints/tapa.pt vs random | +2.9 |\n"
    assert not label_problems(good) and not table_problems(f"Measured with {good}:\n\n{table}")
    assert any("now has sha256" in p for p in label_problems(stale))
    assert any("now has sha256" in p for p in label_problems(stale.replace(" sha256", "\nsha256")))  # reflowed
    assert any("is generation" in p for p in label_problems(good.replace("generation ", "generation 9")))
    assert table_problems(f"## Ladder\n\nMeasured with the shipped net:\n\n{table}")
    # A name in another section does not cover the table.
    assert table_problems(f"Measured with {good}.\n\n## Ladder\n\n{table}")
    assert not table_problems(f"{NO_RESULTS}\n{table}")
    assert any("not given as" in p for p in label_problems("checkpoints/tapa.pt has sha256 " + digest))
    assert any("no file" in p for p in label_problems("`checkpoints/nothing.pt` (sha256 " + digest + ")"))
    # A bot named net:tapa.pt wants the name of a tapa file, of any generation.
    short = "| bot | Elo |\n|---|---:|\n| net:tapa.pt | +481 |\n"
    kept = model_label(ROOT / "checkpoints" / "generations" / "tapa-g1.pt", name="checkpoints/generations/tapa-g1.pt")
    assert table_problems(short) and not table_problems(f"Measured with {kept}:\n\n{short}")
    other = model_label(ROOT / "checkpoints" / "plakoto.pt", name="checkpoints/plakoto.pt")
    assert table_problems(f"Measured with {other}:\n\n{short}")
    # Tables inside code blocks are not tables.
    assert not table_problems(f"```\n{table}```\n")
