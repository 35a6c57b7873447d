"""How often ``onnx:`` (the exported model, run by onnxruntime) chooses another move than the ``net:`` checkpoint.

    python scripts/onnx_agreement.py [--positions 20000] [--pairs 100] [--seed 5] [VARIANT ...]

For every variant (default: the three shipped checkpoints ``checkpoints/<variant>.pt``), the checkpoint is
exported to a temporary ONNX file with the project's exporter and both bots choose on:

- ``--positions`` random positions (``mixed_positions``: playouts and end-game boards) with random dice;
- every position of ``--pairs`` duplicate pairs of games of the ``onnx:`` bot against the ``net:`` bot.

Printed per variant: decisions with more than one legal move, how many choices differ, the largest equity gap
(in the net's own values) of a differing choice, and two baselines on the random positions: the net bot on its
torch reference path (``TorchEvaluator``) against itself on its numba kernel, and the onnx bot ranking by the
graph's float32 ``equity`` output instead of float64 equities of its probabilities. docs/arena.md quotes the
result.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from tapa_ai.arena.duels import play_pairs
from tapa_ai.bearoff.evaluate import bearoff_mask
from tapa_ai.bots.search import NetBot
from tapa_ai.bots.spec import make_bot
from tapa_ai.export.core import export_checkpoint
from tapa_ai.movegen.choice import segment_argmax
from tapa_ai.movegen.generate import generate
from tapa_ai.movegen.random_positions import mixed_positions, random_dice
from tapa_ai.net.encoding import encode
from tapa_ai.net.evaluator import TorchEvaluator


def net_equities(net_bot, afterstates, reference: bool = False) -> np.ndarray:
    """(N,) the net bot's own 0-ply equities (its numba kernel; ``reference``: the torch reference path)."""
    bot = NetBot(TorchEvaluator(net_bot.net)) if reference else net_bot
    return bot.ranked(afterstates)[2]


def compare(onnx_bot, net_bot, afterstates) -> tuple[int, int, float]:
    """(decisions with a choice, choices that differ, largest net-equity gap of a differing choice)."""
    several = np.diff(afterstates.offsets) > 1
    theirs_equities = net_equities(net_bot, afterstates)
    mine = segment_argmax(onnx_bot.ranked(afterstates)[2], afterstates.offsets)
    theirs = segment_argmax(theirs_equities, afterstates.offsets)
    differ = mine != theirs
    gap = float(np.abs(theirs_equities[mine[differ]] - theirs_equities[theirs[differ]]).max()) if differ.any() else 0.0
    return int(several.sum()), int(differ.sum()), gap


class Recorder:
    """The onnx bot as a policy that also asks the net bot on every batch it plays, counting disagreements."""

    def __init__(self, onnx_bot, net_bot) -> None:
        self.onnx_bot, self.net_bot = onnx_bot, net_bot
        self.decisions = self.differ = 0
        self.gap = 0.0

    def __call__(self, afterstates, rng):
        decisions, differ, gap = compare(self.onnx_bot, self.net_bot, afterstates)
        self.decisions += decisions
        self.differ += differ
        self.gap = max(self.gap, gap)
        return self.onnx_bot.choose(afterstates, rng)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("variants", nargs="*", default=["tapa", "plakoto", "backgammon"])
    parser.add_argument("--positions", type=int, default=20000)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    print("| variant | random positions: differ / decisions (largest gap) | torch reference vs kernel | "
          "float32 graph equity | games: differ / decisions (largest gap) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for variant in args.variants:
            path = export_checkpoint(f"checkpoints/{variant}.pt", "onnx", Path(folder) / f"{variant}.onnx")
            onnx_bot, net_bot = make_bot(f"onnx:{path}"), make_bot(f"net:checkpoints/{variant}.pt")
            rng = np.random.default_rng(args.seed)
            batch = mixed_positions(variant, args.positions, rng)
            afterstates = generate(batch, random_dice(len(batch), rng))
            decisions, differ, gap = compare(onnx_bot, net_bot, afterstates)
            kernel = net_equities(net_bot, afterstates)
            reference_differ = int((segment_argmax(kernel, afterstates.offsets)
                                    != segment_argmax(net_equities(net_bot, afterstates, reference=True),
                                                      afterstates.offsets)).sum())
            # Ranking by the graph's float32 equity output (the opponent's view: the mover's is its negative).
            model = onnx_bot.evaluator.model
            features = encode(afterstates.positions.flipped(), version=model.encoding_version)
            (graph_equity,) = model.session.run(["equity"], {model.input_name: features})
            graph = -graph_equity.astype(np.float64)
            exact = afterstates.game_over.copy()
            if onnx_bot.bearoff:
                exact |= bearoff_mask(afterstates.positions)
            graph[exact] = onnx_bot.ranked(afterstates)[2][exact]
            graph_differ = int((segment_argmax(graph, afterstates.offsets)
                                != segment_argmax(kernel, afterstates.offsets)).sum())
            recorder = Recorder(onnx_bot, net_bot)
            records = play_pairs(net_bot.net.rules, recorder, net_bot, args.pairs, seed=args.seed)
            mirrored = bool(np.array_equal(records.points_for_a[0::2], -records.points_for_a[1::2]))
            print(f"| {variant} | {differ} / {decisions} ({gap:.1e}) | {reference_differ} | {graph_differ} | "
                  f"{recorder.differ} / {recorder.decisions} ({recorder.gap:.1e}); points per game "
                  f"{records.summary().ppg:+g}, pairs mirrored: {mirrored} |")


if __name__ == "__main__":
    main()
