"""Strength report of a shipped model: the final ladder, 2-ply, the previous generation, the model card.

    python scripts/strength.py checkpoints/tapa.pt --games 10000 --games-2ply 200 \\
        --previous checkpoints/generations/tapa-g1.pt --out docs/strength/tapa --card checkpoints/tapa.md
    python scripts/strength.py checkpoints/tapa.pt --out docs/strength/tapa --card checkpoints/tapa.md --only-card

Writes one JSON (and CSV) record per match and summary.json under --out; with
--card also the model card, from the checkpoint's facts and the summary
(--history FILE adds a "how it was made" section); with --doc also the model's section of
docs/strength.md (its ladder and --history, between the lines <!-- begin strength.py MODEL --> and
<!-- end strength.py MODEL -->), so the card and the docs cannot drift apart. The table and the card name the file measured, with its
generation and sha256 (docs/strength.md, *Naming the model a table was measured with*); every match of the
summary records the sha256 of the file it was played with, and a card is refused while a match was
played with another file (a model shipped since). Each command line is recorded with the sha256 of the file
it measured, and the card's Reproduce block lists only the current file's. Logic: tapa_ai/arena/strength.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from tapa_ai.arena.strength import (commands_for, measured_with, model_card, plot_training_curve,
                                    replace_section, strength_matches, strength_section, strength_table)
from tapa_ai.bots.base import BotError
from tapa_ai.net.checkpoint import CheckpointError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="checkpoint of the model")
    parser.add_argument("--games", type=int, default=10000, help="games per 0-ply match (default 10000)")
    parser.add_argument("--games-2ply", type=int, default=200, help="games per 2-ply match (default 200)")
    parser.add_argument("--games-2ply-for", action="append", default=[], metavar="OPPONENT=N",
                        help="games of one 2-ply match instead of --games-2ply (OPPONENT: a fixed bot, or 0ply for "
                             "the model itself; N = 0 skips it); repeat for several")
    parser.add_argument("--previous", help="checkpoint of the previous generation (0-ply duel)")
    parser.add_argument("--parts", nargs="+", default=["0ply", "2ply", "previous"], choices=["0ply", "2ply", "previous"])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", required=True, help="directory of the match records and summary.json")
    parser.add_argument("--card", help="write the model card here (markdown)")
    parser.add_argument("--history", help="markdown file with how the model was made, put into the card")
    parser.add_argument("--doc", help="also rewrite the model's section of this markdown file (docs/strength.md), "
                        "between its <!-- begin/end strength.py MODEL --> lines")
    parser.add_argument("--curve", help="write the learning-curve PNG here (the trainer's evaluations in the checkpoint)")
    parser.add_argument("--curve-report", nargs="+", metavar="JSON",
                        help="also plot these snapshots (docs/curves/<variant>.json; several: a run and its continuation)")
    parser.add_argument("--only-card", action="store_true", help="play nothing; render the card (and --curve) from --out/summary.json")
    parser.add_argument("--partial", default="runs/strength-chunks", metavar="DIR",
                        help="keep every finished chunk of games under DIR/<variant>/<match> and resume from it "
                             "(default runs/strength-chunks; 'none' turns it off)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    out = Path(args.out)
    try:
        if args.only_card:
            summary_path = out / "summary.json"
            summary = json.loads(summary_path.read_text()) if summary_path.is_file() else None
        else:
            counts = {}
            for item in args.games_2ply_for:
                opponent, _, number = item.partition("=")
                if not opponent or not number.isdigit():
                    print(f"strength: --games-2ply-for {item!r}: want OPPONENT=N, e.g. heuristic=3000", file=sys.stderr)
                    return 2
                counts[opponent] = int(number)
            summary = strength_matches(args.model, args.games, args.games_2ply, args.previous, out, args.workers,
                                       tuple(args.parts), progress=not args.quiet, games_2ply_for=counts,
                                       partial=None if args.partial == "none" else Path(args.partial),
                                       command="python " + " ".join(shlex.quote(arg) for arg in sys.argv))
            print(measured_with(args.model, summary) + ":")
            print(strength_table(summary))
        if args.curve:
            print(f"written {plot_training_curve(args.model, args.curve, args.curve_report or ())}")
        if args.card:
            history = Path(args.history).read_text() if args.history else ""
            command = "\n".join(commands_for(args.model, summary))
            Path(args.card).write_text(model_card(args.model, summary, history, command))
            print(f"written {args.card}")
        if args.doc:
            if not summary:
                raise ValueError(f"--doc: no summary.json under {out} to write the section from")
            history = Path(args.history).read_text() if args.history else ""
            doc = Path(args.doc)
            doc.write_text(replace_section(doc.read_text(), args.model, strength_section(args.model, summary, history)))
            print(f"written the section of {args.model} in {args.doc}")
    except (BotError, CheckpointError, OSError, ValueError) as error:
        print(f"strength: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
