"""Calibrate the levels of play of each variant on its shipped benchmark set (docs/levels.md).

    python scripts/calibrate_levels.py                          # every variant with a shipped set
    python scripts/calibrate_levels.py --variants tapa          # one (the others stay as they are in the file)
    python scripts/calibrate_levels.py --check                  # play nothing: were the levels calibrated with the
                                                                # shipped nets?
    python scripts/calibrate_levels.py --markdown tapa          # play nothing: docs/levels.md's table of a variant,
                                                                # from the file, docs/levels/<v>/tournament.json and
                                                                # docs/levels/<v>/score.json

For each variant: every legal move of the set's positions valued by the shipped net at 0 ply and by the
judge (the net at 1 ply), then the noise of each weaker level found by bisection so that it loses its target
more millipoints per move than the plain net (tapa_ai/arena/levels.py). Written to tapa_ai/models/levels.json
(package data, read by tapa_ai/bots/levels.py) with each net's sha256 and the command that calibrated it. A few
minutes a variant.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.arena.benchmark.file import shipped_sets  # noqa: E402
from tapa_ai.arena.levels import CALIBRATION_SEEDS, EXTRA_MP, calibrate_levels, decision_table  # noqa: E402
from tapa_ai.bots.levels import LEVEL_NAMES, LEVELS_FILE  # noqa: E402
from tapa_ai.net.atomic_files import atomic_write  # noqa: E402
from tapa_ai.net.model_id import file_sha256, model_label  # noqa: E402
from tapa_ai.net.shipped import find_model_path  # noqa: E402
from tapa_ai.rules.options import VARIANTS  # noqa: E402


def variants_with_sets() -> list[str]:
    return [variant for variant in VARIANTS if variant in shipped_sets()]


def stale(path: Path) -> list[str]:
    """The variants whose levels were not calibrated with the shipped net (or are missing)."""
    entries = json.loads(path.read_text()).get("variants", {}) if path.is_file() else {}
    return [variant for variant in variants_with_sets()
            if entries.get(variant, {}).get("sha256") != file_sha256(find_model_path(variant))]


def _short(spec: str) -> str:
    """``net:tapa,level=casual,noise_seed=1`` -> ``casual``; ``net:tapa`` -> ``expert``; others as they are."""
    if "level=" in spec:
        return spec.split("level=", 1)[1].split(",", 1)[0]
    return "expert" if spec.startswith("net:") and "," not in spec and "@" not in spec else spec


def markdown(variant: str, levels_file: Path, measured: Path, world_class: str, world_class_duel: str) -> str:
    """docs/levels.md's table of ``variant``: each level's settings, the judge's extra loss, the loss on the set's
    rollouts (``measured/score.json``, ``tapa-ai benchmark score``), the round robin's Elo and the duel against
    the level below (``measured/tournament.json``, ``tapa-ai tournament``). ``world_class``: its loss on the
    set, measured elsewhere; ``world_class_duel``: its duel against expert."""
    entry = json.loads(levels_file.read_text())["variants"][variant]
    score = {}
    if (measured / "score.json").is_file():
        for bot in json.loads((measured / "score.json").read_text())["bots"]:
            score[_short(bot["bot"])] = (bot["mean_loss_mp"], bot["mean_loss_mp_ci95"])
    tournament = json.loads((measured / "tournament.json").read_text())
    elo = {_short(r["bot"]): (r["elo"], r["elo_ci95"]) for r in tournament["ratings"]}
    duel = {}
    for pairing in tournament["pairings"]:
        a, b, ppg, (low, high) = _short(pairing["bot_a"]), _short(pairing["bot_b"]), pairing["ppg"], pairing["ppg_ci95"]
        duel[a, b], duel[b, a] = (ppg, low, high), (-ppg, -high, -low)
    rows = ["| level | plies | noise (points) | extra loss by the judge (mp a move) | loss on the set's rollouts "
            "(mp a move, 95% CI) | Elo, round robin [95% CI] | against the level below (points a game [95% CI]) |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for index, name in enumerate(LEVEL_NAMES):
        level = entry["levels"][name]
        judge = f"{level['judge_extra_mp']:.1f}" if "judge_extra_mp" in level else "0 (the net)" \
            if name == "expert" else "—"
        loss = (f"{score[name][0]:.1f} [{score[name][1][0]:.1f}, {score[name][1][1]:.1f}]" if name in score
                else world_class if name == "world-class" else "—")
        rating = f"{elo[name][0]:+.0f} [{elo[name][1][0]:+.0f}, {elo[name][1][1]:+.0f}]" if name in elo \
            else "(not in the round robin)"
        below = LEVEL_NAMES[index - 1] if index else None
        against = (f"{duel[name, below][0]:+.2f} [{duel[name, below][1]:+.2f}, {duel[name, below][2]:+.2f}]"
                   if (name, below) in duel else world_class_duel if name == "world-class" else "—")
        rows.append(f"| `{name}` | {level['plies']} | {level['noise']:.3f} | {judge} | {loss} | {rating} | {against} |")
    if "heuristic" in elo:
        low, high = elo["heuristic"][1]
        rows.append(f"| `heuristic` (for scale) | | | | | {elo['heuristic'][0]:+.0f} [{low:+.0f}, {high:+.0f}] | |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", default=None, help="default: every variant with a shipped set")
    parser.add_argument("--judge-plies", type=int, default=1)
    parser.add_argument("--out", default=str(LEVELS_FILE))
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--markdown", metavar="VARIANT", help="print docs/levels.md's table of VARIANT; play nothing")
    parser.add_argument("--world-class", default="—", help="with --markdown: world-class's loss on the set")
    parser.add_argument("--world-class-duel", default="—", help="with --markdown: world-class against expert")
    args = parser.parse_args()
    out = Path(args.out)
    if args.markdown:
        print(markdown(args.markdown, out, Path("docs/levels") / args.markdown, args.world_class,
                       args.world_class_duel))
        return 0
    if args.check:
        late = stale(out)
        if late:
            print(f"calibrate_levels: {out} was not calibrated with the shipped {', '.join(late)} net(s); run\n"
                  f"  python scripts/calibrate_levels.py --variants {' '.join(late)}")
            return 1
        print(f"calibrate_levels: {out} matches the shipped nets")
        return 0
    available = variants_with_sets()
    variants = args.variants or available
    missing = [v for v in variants if v not in available]
    if missing:
        print(f"calibrate_levels: no shipped benchmark set for {', '.join(missing)} (sets: {', '.join(available)})",
              file=sys.stderr)
        return 2
    data = json.loads(out.read_text()) if out.is_file() else {}
    entries = data.get("variants", {})
    command = "python " + " ".join(shlex.quote(a) for a in ["scripts/calibrate_levels.py"] + sys.argv[1:])
    for variant in variants:
        started = time.process_time()
        path = find_model_path(variant)
        table = decision_table(variant, judge_plies=args.judge_plies)
        levels = calibrate_levels(table)
        entries[variant] = {"model": model_label(path, name=f"checkpoints/{variant}.pt"), "sha256": file_sha256(path),
                            "set": variant, "positions": table.positions,
                            "judge": f"net:{variant}@{args.judge_plies}ply",
                            "seeds": len(CALIBRATION_SEEDS), "levels": levels,
                            "cpu_seconds": round(time.process_time() - started, 1), "command": command}
        print(f"{variant}: " + ", ".join(f"{name} {levels[name]['plies']}-ply noise {levels[name]['noise']}"
                                         for name in LEVEL_NAMES), flush=True)
    data = {"about": "Levels of play per variant: a depth and a noise each (docs/levels.md), calibrated on the "
                     "variant's shipped benchmark set by scripts/calibrate_levels.py: each weaker level loses "
                     f"{', '.join(f'{n} {v:g}' for n, v in EXTRA_MP.items())} millipoints per move more than the "
                     "plain 0-ply net, by the judge.",
            "variants": {v: entries[v] for v in VARIANTS if v in entries}}
    out.parent.mkdir(parents=True, exist_ok=True)
    text = (json.dumps(data, indent=1) + "\n").encode()
    atomic_write(out, lambda handle: handle.write(text))
    os.chmod(out, 0o644)  # package data: readable by all (the temporary file was private)
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
