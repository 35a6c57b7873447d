"""Widen or deepen a checkpoint's hidden layers; the grown network computes what it did, and learns on.

    python scripts/grow_network.py checkpoints/tapa.pt --hidden 512 256 --out runs/<run>/latest.pt
    python scripts/grow_network.py runs/<run>/latest.pt --hidden 512 256          # in place, the original kept
    python scripts/grow_network.py checkpoints/tapa.pt --hidden 256 128 128 --out runs/<run>/latest.pt  # deeper

Every new unit gets freshly drawn incoming weights (--seed) and zero weights
out of it, so old units and outputs are unchanged (to the bit in the fast
kernel); widths past the network's layers add layers before the outputs,
each starting as the identity (ReLU networks only; as wide as the last
hidden layer, or wider, the extra units grown as above). Adam's moments of
the new weights start at zero (of new layers, afresh); counters,
generators and running games are kept, so a training run resumes from the
grown file (``tapa-ai train --resume``, ``scripts/learning_curve.py
--resume``). Without --out the file is replaced and the original kept beside
it as <name>.<old widths>.pt (e.g. latest.256-128.pt). Logic:
tapa_ai/net/widen.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tapa_ai.net.checkpoint import CheckpointError, load_network  # noqa: E402
from tapa_ai.net.widen import grow_checkpoint, rewrite_in_place  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--hidden", type=int, nargs="+", required=True,
                        help="the new width of every hidden layer, input side first; more widths than the network has "
                             "layers add layers before the outputs")
    parser.add_argument("--seed", type=int, default=1, help="seed of the new units' weights (default 1)")
    parser.add_argument("--out", type=Path, help="write the grown checkpoint here (default: in place)")
    args = parser.parse_args(argv)
    try:
        old = load_network(args.checkpoint).config.widths
        shape = "-".join(str(width) for width in old)
        new = "-".join(str(width) for width in args.hidden)
        if args.out is None:
            kept = rewrite_in_place(args.checkpoint, shape,
                                    lambda path: grow_checkpoint(args.checkpoint, args.hidden, path, seed=args.seed))
            print(f"{args.checkpoint}: hidden layers {shape} -> {new} (the original kept as {kept})")
        else:
            grow_checkpoint(args.checkpoint, args.hidden, args.out, seed=args.seed)
            print(f"{args.out}: hidden layers {shape} -> {new} (from {args.checkpoint})")
    except (CheckpointError, OSError) as error:
        print(f"grow_network: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
