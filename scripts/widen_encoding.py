"""Move a checkpoint to a later encoding version; its network computes what it did.

    python scripts/widen_encoding.py runs/<run>/latest.pt --version 2
    python scripts/widen_encoding.py checkpoints/backgammon.pt --version 2 --out /tmp/backgammon-v2.pt

The first layer gains zero weights for the columns the later version appends
(docs/encoding.md), the Adam moments of those weights start at zero, and
everything else (counters, generators, running games) is kept, so a training
run resumes from the widened file and learns what the new inputs are worth.
Without --out the file is replaced in place and the original kept beside it
as <name>.v<old>.pt. Logic: tapa_ai/net/widen.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.net.checkpoint import CheckpointError, load_checkpoint  # noqa: E402
from tapa_ai.net.widen import rewrite_in_place, widen_checkpoint  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--version", type=int, required=True, help="the later encoding version (2 or 3)")
    parser.add_argument("--out", type=Path, help="write the widened checkpoint here (default: in place)")
    args = parser.parse_args(argv)
    try:
        old = load_checkpoint(args.checkpoint).encoding[1]
        target = args.out or args.checkpoint
        if args.out is None:
            kept = rewrite_in_place(args.checkpoint, f"v{old}",
                                    lambda path: widen_checkpoint(args.checkpoint, args.version, path))
            print(f"{target}: encoding version {old} -> {args.version} (the original kept as {kept})")
        else:
            widen_checkpoint(args.checkpoint, args.version, target)
            print(f"{target}: encoding version {old} -> {args.version} (from {args.checkpoint})")
    except (CheckpointError, OSError) as error:
        print(f"widen_encoding: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
