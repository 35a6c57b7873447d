"""docs/cube.md's measurement tables, from the records scripts/cube_report.sh writes.

    python scripts/cube_tables.py [--records docs/cube]

Prints, as markdown, the money-play and 7-point-match tables and the agreement with GNU Backgammon's
cube decisions, with the names (path, generation, sha256)
of the files measured, as the report's models_<part>.txt recorded them (docs/strength.md, *Naming the
model a table was measured with*).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

VARIANTS = ("tapa", "backgammon")
MONEY = [
    ("net vs heuristic", "money_{v}_net_vs_heuristic"),
    ("net,nocube vs heuristic (no cube turned: cubeless)", "money_{v}_nocube_vs_heuristic"),
    ("net vs net,nocube (same checker play)", "money_{v}_net_vs_nocube"),
    ("net (cube life 0.68) vs net,cube_life=0.4, 4,000 games", "money_{v}_net_vs_life0.4"),
    ("net (cube life 0.68) vs net,cube_life=1.0, 4,000 games", "money_{v}_net_vs_life1.0"),
]
MATCHES = [
    ("net vs heuristic", "match7_{v}_net_vs_heuristic", True),
    ("net,nocube vs heuristic (no cube turned)", "match7_{v}_nocube_vs_heuristic", True),
    ("net vs net,nocube", "match7_{v}_net_vs_nocube", False),
    ("net vs net,money_cube (score-blind cube)", "match7_{v}_net_vs_money_cube", False),
]


def _signed(x: float) -> str:
    return f"{x:+.3f}".replace("-", "\N{MINUS SIGN}")


def models(records: Path, part: str) -> list[str]:
    """The names of the files a part measured, from its models_<part>.txt (comment lines left out)."""
    path = records / f"models_{part}.txt"
    if not path.is_file():
        return [f"(no {path.name}: the files measured are not recorded)"]
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def named(lines: list[str], variants=VARIANTS) -> str:
    """The names of the variants' files, as markdown (path in backticks)."""
    picked = [line for line in lines if any(f"/{v}.pt " in line or f"/{v}-g" in line for v in variants)] or lines
    out = []
    for line in picked:
        path, _, rest = line.partition(" (")
        out.append(f"`{path}` ({rest}" if rest else line)
    return " and ".join(out)


def measured(what: str, records: Path, part: str) -> str:
    """The sentence naming the files of a part and of the ``models`` part (the cube-model rows)."""
    own, other = models(records, part), models(records, "models")
    if own == other:
        return f"{what} measured with {named(own)}:"
    return f"{what} measured with {named(own)}; the cube-model rows (`models`) with {named(other)}:"


def tables(records: Path) -> str:
    def load(stem: str, variant: str) -> dict:
        return json.loads((records / (stem.format(v=variant) + ".json")).read_text())

    lines = [measured("Money play", records, "money"), "",
             "**Money play with the cube**, points per game for the first bot:", "",
             "| pairing | tapa | backgammon |", "|---|---|---|"]
    for title, stem in MONEY:
        cells = []
        for variant in VARIANTS:
            record = load(stem, variant)
            low, high = record["ppg_ci95"]
            cells.append(f"{_signed(record['ppg'])} [{_signed(low)}, {_signed(high)}]")
        lines.append(f"| {title} | {' | '.join(cells)} |")
    lines += ["", measured("7-point matches", records, "matches"), "",
              "**7-point matches**, match wins of the first bot:", "", "| pairing | tapa | backgammon |",
              "|---|---|---|"]
    for row, (title, stem, games) in enumerate(MATCHES):
        cells = []
        for variant in VARIANTS:
            record = load(stem, variant)
            low, high = record["match_win_ci95"]
            cell = f"{record['match_win_rate']:.1%} [{100 * low:.1f}, {100 * high:.1f}]"
            if games:
                unit = " games a match" if row == 0 and variant == VARIANTS[0] else ""
                cell += f" ({record['mean_games_per_match']:.1f}{unit})"
            cells.append(cell)
        lines.append(f"| {title} | {' | '.join(cells)} |")
    return "\n".join(lines)


def gnubg_table(records: Path) -> str:
    """The agreement with GNU Backgammon's cube decisions (scripts/cube_vs_gnubg.py's record)."""
    data = json.loads((records / "gnubg_agreement.json").read_text())
    rows = [("ours: net probabilities + our cube model and table", "ours", True),
            ("our cube model on gnubg's 0-ply probabilities", "ours_on_gnubg_probs", False),
            ("gnubg's cube model on our net's probabilities", "gnubg_on_our_probs", False)]
    window = data["ours"]["window"]["decisions"]
    lines = [f"Measured with {named(models(records, 'gnubg'), ('backgammon',))} (the record's net: "
             f"`{data['net']}`); the window holds {window:,} of {data['ours']['all']['decisions']:,} decisions:", "",
             "| decider | double agrees | take agrees | mean cost per decision (doubler / receiver) "
             "| mean cost per disagreement (doubler / receiver) |", "|---|---:|---:|---:|---:|"]
    for title, key, first in rows:
        every, inside = data[key]["all"], data[key]["window"]
        unit = " MWC" if first else ""
        label = "window " if first else ""
        lines.append(
            f"| {title} | {every['double_agreement']:.1%} ({label}{inside['double_agreement']:.1%}) "
            f"| {every['take_agreement']:.1%} ({inside['take_agreement']:.1%}) "
            f"| {100 * every['doubler_cost_mean_mwc']:.3f}% / {100 * every['receiver_cost_mean_mwc']:.3f}%{unit} "
            f"| {100 * every['doubler_cost_per_disagreement_mwc']:.2f}% / "
            f"{100 * every['receiver_cost_per_disagreement_mwc']:.2f}%{unit} |")
    scores = ", ".join(f"{score} {100 * v['ours']['double_agreement']:.1f}% / "
                       f"{100 * v['ours_on_gnubg_probs']['double_agreement']:.1f}%"
                       for score, v in data["by_score"].items())
    lines += ["", f"By score (ours / our model on gnubg's probabilities, double agreement): {scores}."]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", default="docs/cube", help="the directory of the report's records")
    args = parser.parse_args()
    try:
        print(tables(Path(args.records)))
        if (Path(args.records) / "gnubg_agreement.json").is_file():
            print()
            print(gnubg_table(Path(args.records)))
    except (OSError, KeyError, ValueError) as error:
        print(f"cube_tables: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
