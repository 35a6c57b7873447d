"""Measure the result rates the match equity tables are built from, from the shipped nets.

    python scripts/met_rates.py                       # every variant, 20,000 games each (a few minutes each)
    python scripts/met_rates.py --variants tapa       # one variant (the others stay as they are in the file)
    python scripts/met_rates.py --check               # play nothing: is the file measured with the shipped nets?
    python scripts/met_rates.py --markdown            # play nothing: docs/cube.md's rates and tables from the file

For each variant: 20,000 games of cubeless self-play of checkpoints/<variant>.pt at 0-ply in duplicate
pairs, seed 11 (the same games as
``tapa-ai match net:checkpoints/<v>.pt net:checkpoints/<v>.pt --games 20000 --seed 11``), counted by
result kind, and the decisive games the first mover won (game 2i of a pair has A moving first). Portes is
played by checkpoints/backgammon.pt (``--variant portes``: Portes' points, the registry's model of portes, tapa_ai/rules/options.py REGISTRY). The counts go to tapa_ai/cube/result_rates.json (package data, read by tapa_ai/cube/met.py)
with the command, the checkpoint's sha256 and generation; the match record to
docs/cube/selfplay_<variant>.json. Run it whenever a model is shipped (scripts/ship_model.py says so):
tests/test_met_rates.py fails while the file's hashes are not the shipped checkpoints'.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from tapa_ai.arena.match import run_match
from tapa_ai.bots.base import BotError
import numpy as np

from tapa_ai.cube.met import RATES_FILE, VARIANTS, ResultRates, build_met, load_result_rates, model_variant
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.outcomes import RESULT_DRAW
from tapa_ai.net.checkpoint import CheckpointError, load_checkpoint
from tapa_ai.net.model_id import file_sha256, model_generation, model_label

MATCH_COMMAND = "tapa-ai match net:{path} net:{path} --games {games} --seed {seed}"


def match_command(variant: str, path: Path, games: int, seed: int) -> str:
    """The ``tapa-ai match`` command playing the same games as the measurement of ``variant``."""
    command = MATCH_COMMAND.format(path=path, games=games, seed=seed)
    return command + (f" --variant {variant}" if model_variant(variant) != variant else "")


def first_mover_wins(records) -> int:
    """Decisive games won by the side that moved first (game 2i: A moved first, 2i + 1: B)."""
    a_first = np.arange(records.games) % 2 == 0
    decisive = (records.kind > 0) & (records.kind != RESULT_DRAW)
    return int((decisive & (records.a_won == a_first)).sum())


def stale_variants(rates_file: Path, checkpoints: Path) -> list[str]:
    """The variants whose rates were not measured with the checkpoint now in ``checkpoints``."""
    data = json.loads(rates_file.read_text()) if rates_file.is_file() else {}
    entries = data.get("variants", {})
    stale = []
    for variant in VARIANTS:
        path = checkpoints / f"{model_variant(variant)}.pt"
        entry = entries.get(variant, {})
        if not path.is_file() or entry.get("sha256") != file_sha256(path):
            stale.append(variant)
    return stale


def measure(variant: str, checkpoints: Path, games: int, seed: int, workers: int, records: Path | None,
            progress: bool) -> dict:
    """Play the self-play match of one variant and return its entry of the rates file."""
    path = checkpoints / f"{model_variant(variant)}.pt"
    rules = load_checkpoint(path).rules()
    if rules.name != model_variant(variant):
        raise ValueError(f"{path} plays {rules.name}, not {model_variant(variant)}")
    rules = variant_rules(variant)
    spec = f"net:{path}"
    result = run_match(spec, spec, rules, games, seed=seed, workers=workers, progress=progress,
                       desc=f"{variant} self-play")
    record = result.to_dict()
    if records is not None:
        records.mkdir(parents=True, exist_ok=True)
        record_path = records / f"selfplay_{variant}.json"
        result.write(record_path)
        record_path.with_suffix(".csv").unlink(missing_ok=True)  # per-game rows: only the counts matter
    kinds = {kind: int(count) for kind, count in record["kinds"].items()}
    first = first_mover_wins(result.records)
    rates = ResultRates.from_kinds(kinds, rules, first_mover_wins=first)  # refuses counts without a decisive game
    return {
        "checkpoint": str(path),
        "sha256": file_sha256(path),
        "generation": model_generation(path),
        "model": model_label(path),
        "games": record["games"],
        "seed": seed,
        "plies": 0,
        "kinds": kinds,
        "first_mover_wins": first,
        "unfinished": int(record["unfinished"]),
        "command": match_command(variant, path, games, seed),
        "shares": {"single": round(rates.single, 6), "gammon": round(rates.gammon, 6), "top": round(rates.top, 6),
                   "top_points": rates.top_points, "draws_per_game": round(rates.draw, 6),
                   "first_mover": round(rates.first_mover, 6)},
    }


def markdown(rates_file: Path, size: int = 7, compare: int = 15) -> str:
    """docs/cube.md's rates table, the tapa and backgammon tables and the comparisons, from ``rates_file``."""
    data = json.loads(rates_file.read_text())
    rates = load_result_rates(rates_file)
    entries = data["variants"]
    models = dict.fromkeys(f"`{entries[v]['checkpoint']}` ({entries[v]['model'].split(' (', 1)[1]}" for v in VARIANTS)
    lines = ["Measured with " + ", ".join(models) + " (Portes: the backgammon model with Portes' points):", "",
             "| variant | single | gammon | top (points) | draws per game | first mover wins |",
             "|---|---:|---:|---:|---:|---:|"]
    for variant in VARIANTS:
        r, kinds = rates[variant], entries[variant]["kinds"]
        if variant == "tapa":
            top = f"({r.top_points}: {kinds['backgammon']:,} backgammons + {kinds['mother']:,} mother wins)"
        elif variant == "plakoto":
            top = f"({r.top_points}: mother wins)"
        elif r.top == 0:
            top = "(none)"
        else:
            top = f"({r.top_points})"
        draws = f"{r.draw:.2%}" if r.draw else "0"
        first = f"{r.first_mover:.1%}" if "first_mover_wins" in entries[variant] else "(not counted)"
        lines.append(f"| {variant} | {r.single:.1%} | {r.gammon:.1%} | {r.top:.1%} {top} | {draws} | {first} |")
    tables = {}
    for variant in VARIANTS:
        rules = variant_rules(variant)
        tables[variant] = build_met(rates[variant], cube=rules.cube, crawford=rules.crawford)
    for variant in ("tapa", "backgammon"):
        lines += ["", f"{variant}:", "", tables[variant].markdown(size)]
    for variant in ("tapa", "backgammon"):
        post = ", ".join(f"{100 * x:.1f}" for x in tables[variant].post_crawford(size))
        lines += ["", f"post-Crawford, {variant}, trailer 1..{size}-away: {post}"]
    tapa, backgammon = tables["tapa"].pre_crawford(compare), tables["backgammon"].pre_crawford(compare)
    gap = abs(tapa - backgammon)
    a, b = divmod(int(gap.argmax()), compare)
    lines += ["", f"largest tapa - backgammon gap up to {compare}-away: {100 * gap.max():.1f} points of MWC at "
              f"{a + 1}-away against {b + 1}-away ({100 * tapa[a, b]:.1f}% against {100 * backgammon[a, b]:.1f}%)"]
    try:
        import gnubg_nn
    except ImportError:
        lines += ["", "(gnubg-nn not installed: no comparison with GNU Backgammon's table)"]
    else:
        theirs = [[(1 + gnubg_nn.equities.value(i, j)) / 2 for j in range(1, compare + 1)]
                  for i in range(1, compare + 1)]
        diff = abs(backgammon - theirs)
        lines += ["", f"backgammon's table against gnubg-nn's up to {compare}-away: at most {100 * diff.max():.2f}% "
                  f"(mean {100 * diff.mean():.2f}%)"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--checkpoints", default="checkpoints", help="directory of the shipped <variant>.pt")
    parser.add_argument("--out", default=str(RATES_FILE), help=f"the rates file (default {RATES_FILE})")
    parser.add_argument("--records", default="docs/cube", help="where the match records go ('none': nowhere)")
    parser.add_argument("--check", action="store_true",
                        help="play nothing; exit 1 naming the variants not measured with the shipped checkpoint")
    parser.add_argument("--markdown", action="store_true",
                        help="play nothing; print docs/cube.md's rates table and match equity tables from the file")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    out, checkpoints = Path(args.out), Path(args.checkpoints)
    if args.markdown:
        print(markdown(out))
        return 0
    if args.check:
        stale = stale_variants(out, checkpoints)
        if stale:
            print(f"met_rates: {out} was not measured with the shipped {', '.join(stale)} checkpoint(s); run\n"
                  f"  python scripts/met_rates.py --variants {' '.join(stale)}")
            return 1
        print(f"met_rates: {out} matches the shipped checkpoints")
        return 0
    data = json.loads(out.read_text()) if out.is_file() else {}
    variants = data.get("variants", {})
    records = None if args.records == "none" else Path(args.records)
    try:
        for variant in args.variants:
            entry = measure(variant, checkpoints, args.games, args.seed, args.workers, records, not args.quiet)
            variants[variant] = entry
            shares = entry["shares"]
            print(f"{entry['model']}: {entry['kinds']} -> single {shares['single']:.1%}, gammon "
                  f"{shares['gammon']:.1%}, top {shares['top']:.1%}, draws {shares['draws_per_game']:.2%} per game",
                  flush=True)
    except (BotError, CheckpointError, ValueError, OSError) as error:
        print(f"met_rates: {error}", file=sys.stderr)
        return 2
    data = {
        "about": "Result kinds of cubeless 0-ply self-play of the shipped nets, per variant: the rates the match "
                 "equity tables are built from (tapa_ai/cube/met.py). Written by scripts/met_rates.py; rerun it "
                 "when a model is shipped.",
        "command": "python " + " ".join(shlex.quote(arg) for arg in ["scripts/met_rates.py"] + sys.argv[1:]),
        "variants": {variant: variants[variant] for variant in VARIANTS if variant in variants},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(temporary, out)
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
