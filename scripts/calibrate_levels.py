"""Calibrate the levels of play of each variant on its shipped benchmark set (docs/levels.md).

    python scripts/calibrate_levels.py                          # every variant with a shipped set
    python scripts/calibrate_levels.py --variants tapa          # one (the others stay as they are in the file)
    python scripts/calibrate_levels.py --check                  # play nothing: were the levels calibrated with the
                                                                # shipped nets?

For each variant: every legal move of the set's positions valued by the shipped net at 0 ply and by the
judge (the net at 1 ply), then the noise of each weaker level found by bisection so that it loses its target
more millipoints per move than the plain net (tapa_ai/arena/levels.py). Written to tapa_ai/models/levels.json
(package data, read by tapa_ai/bots/levels.py) with the net's sha256 and the command. A few minutes a variant.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", default=None, help="default: every variant with a shipped set")
    parser.add_argument("--judge-plies", type=int, default=1)
    parser.add_argument("--out", default=str(LEVELS_FILE))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    out = Path(args.out)
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
    for variant in variants:
        started = time.process_time()
        path = find_model_path(variant)
        table = decision_table(variant, judge_plies=args.judge_plies)
        levels = calibrate_levels(table)
        entries[variant] = {"model": model_label(path, name=f"checkpoints/{variant}.pt"), "sha256": file_sha256(path),
                            "set": variant, "positions": table.positions, "judge": f"net:{variant}@{args.judge_plies}ply",
                            "seeds": len(CALIBRATION_SEEDS), "levels": levels,
                            "cpu_seconds": round(time.process_time() - started, 1)}
        print(f"{variant}: " + ", ".join(f"{name} {levels[name]['plies']}-ply noise {levels[name]['noise']}"
                                         for name in LEVEL_NAMES), flush=True)
    data = {"about": "Levels of play per variant: a depth and a noise each (docs/levels.md), calibrated on the "
                     "variant's shipped benchmark set by scripts/calibrate_levels.py: each weaker level loses "
                     f"{', '.join(f'{n} {v:g}' for n, v in EXTRA_MP.items())} millipoints per move more than the "
                     "plain 0-ply net, by the judge.",
            "command": "python " + " ".join(shlex.quote(a) for a in ["scripts/calibrate_levels.py"] + sys.argv[1:]),
            "variants": {v: entries[v] for v in VARIANTS if v in entries}}
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(temporary, out)
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
