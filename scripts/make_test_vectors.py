"""Regenerate the export test vectors: small npz models of the shipped checkpoints and positions -> inputs -> outputs.

Writes, under ``--out`` (default ``tests/data``):

- ``tapa.npz``, ``plakoto.npz``, ``backgammon.npz``, ``fevga.npz``, ``narde.npz``, ``gulbara.npz``: ``tapa-ai export --format
  npz`` of ``checkpoints/<variant>.pt`` (about 425 KB each). The vectors are
  checked against these copies, so they stay valid when the checkpoints are
  replaced by stronger ones; run this script again to follow the new ones.
- ``encoding_vectors.json``: for positions of every variant (JSON positions,
  ``tapa_ai.notation.json_position``): the ``tapa-td`` input vector of the
  latest encoding version (``tapa_ai.net.encoding``; each earlier version is a
  prefix of it) and the outputs of that variant's model on the columns of its
  own version (probabilities and equity from torch, ``tapa_ai.net.model.evaluate``) in ``cases``; and,
  in ``feature_cases``, more positions of the running games (fevga, narde), with their input vector of
  that version only (no model, no outputs: they were made before the running games' models shipped).

``docs/export.md`` explains how to check another implementation against
them; ``tests/test_export.py`` checks this package's encoders and every
export format. Output is deterministic: running the script on the same
checkpoints rewrites identical files.

Usage::

    python scripts/make_test_vectors.py                   # --checkpoints checkpoints --out tests/data
    python scripts/make_test_vectors.py --check           # exit 1 if the committed files are out of date
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tapa_ai import __version__  # noqa: E402
from tapa_ai.net.checkpoint import load_network  # noqa: E402
from tapa_ai.net.encoding import ENCODING_NAME, ENCODING_VERSIONS, encode_positions, feature_names, num_features  # noqa: E402
from tapa_ai.export import export_checkpoint  # noqa: E402
from tapa_ai.net.model import evaluate, outcome_points  # noqa: E402
from tapa_ai.movegen.random_positions import (  # noqa: E402
    EDGE_KINDS, endgame_position, playout_positions, running_edge_positions)
from tapa_ai.notation import board  # noqa: E402
from tapa_ai.notation.json_position import position_to_json  # noqa: E402
from tapa_ai.rules.options import variant_rules  # noqa: E402
from tapa_ai.rules.position import start_position  # noqa: E402
from tapa_ai.rules.reference import finished_result  # noqa: E402
from tapa_ai.rules.turns import Cascade  # noqa: E402

VARIANTS = ("tapa", "plakoto", "backgammon", "fevga", "narde", "gulbara")
FEATURE_VARIANTS = ("fevga", "narde")
"""Variants with feature-only cases too: the running games, encoded in version 4 (cases drawn from a generator of
their own, before their models shipped)."""
LATEST = max(ENCODING_VERSIONS)
VECTORS_FILE = "encoding_vectors.json"
SEED = 2024
FEATURE_SEED = 2051
"""The feature cases draw from a generator of their own, so that adding them left ``cases`` as they were."""
RANDOM_PER_STYLE = 2
"""Random positions of each kind per variant: uniform playouts, contact playouts, end games."""

# Hand-picked positions (the test mini-language of tapa_ai.notation.board: X's point numbers,
# stacks bottom to top; checkers not placed are borne off), each with what it exercises.
HAND_PICKED = {
    "tapa": [
        ("docs/encoding.md worked example: lone mother, pins both ways",
         "24:X 23:OOO 20:XO 6:XXXX 5:OX 1:OX", "X"),
        ("the worked example colour-swapped, O to move (same input)",
         "1:O 2:XXX 5:OX 19:OOOO 20:XO 24:XO", "O"),
        ("X's mother pinned while O's stands alone (play goes on), O to move",
         "24:XO 5:XXXX 4:XXXX 3:XXX 2:XXX 1:O 13:OOOOO 12:OOOOO 11:OOO", "O"),
    ],
    "plakoto": [
        ("both sides still on their 24-points with two or more checkers, pins in the middle",
         "24:XXXXXX 18:XXX 14:OX 10:XO 8:XXXX 1:OOOOOO 7:OOO 9:OO 3:OO", "X"),
        ("bear-off with a pinned checker at home (home checkers count as home)",
         "6:XXX 4:OXX 2:XXXX 1:XX 24:O 20:OO 19:OOO", "X"),
    ],
    "backgammon": [
        ("checkers on the bar on both sides",
         "bar:XO 24:XX 13:XXXX 8:XXX 6:XXXXX 1:OO 12:OOOOO 17:OOO 19:OOOO", "X"),
        ("pure race, O to move", "6:XXXX 5:XXX 3:XX 19:OOO 20:OOOO 22:OO 24:OOOO", "O"),
    ],
    # The running games (docs/rules.md 8): X's point numbers as everywhere; O's own point q is X's q + 12 or q - 12.
    "fevga": [
        ("docs/encoding.md version-4 example: blockades both ways, both sides passed",
         "24:XXXX 20:XX 14:X 5:XXX 12:OO 16:OOO 21:O 22:O 23:O", "X"),
        ("the version-4 example colour-swapped, O to move (same input)",
         "24:XX 4:XXX 9:X 10:X 11:X 12:OOOO 8:OO 2:O 17:OOO", "O"),
        ("race: every checker on its own points 1-12 or off",
         "6:XXX 5:XXX 3:XX 10:XX 12:X 18:OOOO 16:OOO 22:OO 14:O", "X"),
        ("bear-off: X all home with checkers off, O to move with checkers still to pass",
         "6:XX 4:XXX 2:XX 1:X 13:OOOOO 20:OOO 23:OO", "O"),
    ],
    "narde": [
        ("a six-point prime of X in front of O's start, O to move (only its runner can move)",
         "24:XXX 11:XXX 10:XX 9:XX 8:XX 7:XX 6:X 12:OOOOOOOOOOOOO 16:OO", "O"),
        ("race, O to move", "3:XXXX 2:XXX 1:XX 8:XX 19:OOO 15:OOO 13:OO", "O"),
        ("bear-off from both sides' home boards", "5:XXX 4:XX 1:X 18:OOOO 17:O 14:OO", "X"),
    ],
    # Gul Bara (docs/rules.md 10): the board of the running games; its turn counts and pending stages are added
    # in positions_of (STAGES).
    "gulbara": [
        ("middle game, both sides with checkers behind", "24:XXXX 20:XX 14:XX 9:XXX 5:XXXX 12:OOO 16:OOOO 2:OO "
         "7:OOO 21:OOO", "X"),
        ("bear-off, O to move", "6:XXX 4:XXX 2:XX 1:XX 18:OOOO 17:OOO 14:OO", "O"),
    ],
}
"""Each: (name, mini-language layout, side to move)."""

STAGES = {
    "gulbara": [
        ("the first hand-picked board, X's doubles cascading now, O's still plain", (3, 1), None),
        ("the first hand-picked board inside X's cascade: 4 steps of 5 to play", (3, 2), Cascade(5)),
        ("the first hand-picked board inside X's cascade: its last stage, 6s", (3, 3), Cascade(6)),
    ],
}
"""Per variant whose doubles cascade: (name, turn counts (X, O), pending stage) added to its first hand-picked
board (X to move)."""


def positions_of(variant: str, rng: np.random.Generator) -> list[tuple[str, object]]:
    """(name, Position) pairs of one variant: start positions, hand-picked ones, random ones (in the running
    games also one board at the edge of each restriction of docs/rules.md 8.4, ``running_edge_positions``)."""
    rules = variant_rules(variant)
    cases = [(f"{variant} start, X to move", start_position(rules, "X")),
             (f"{variant} start, O to move", start_position(rules, "O"))]
    for name, layout, turn in HAND_PICKED[variant]:
        cases.append((f"{variant}: {name}", board(rules, layout, turn=turn)))
    for style in ("uniform", "contact"):
        batch = playout_positions(rules, RANDOM_PER_STYLE, rng, style, games=8)
        cases += [(f"{variant}: random {style} playout position", p) for p in batch.to_positions()]
    cases += [(f"{variant}: random end game", endgame_position(rules, rng)) for _ in range(RANDOM_PER_STYLE)]
    if rules.parallel and rules.has_restrictions:
        edges = running_edge_positions(rules, len(EDGE_KINDS), rng).to_positions()
        cases += [(f"{variant}: random board at the edge of a restriction ({kind})", p)
                  for kind, p in zip(EDGE_KINDS, edges, strict=True)]
    for name, turns, cascade in STAGES.get(variant, ()):
        # Doubles that cascade: the same boards with each side's turn counts and a pending stage (docs/rules.md 10.3).
        position = cases[2][1] if len(cases) > 2 else cases[0][1]
        cases.append((f"{variant}: {name}", position.with_changes(turns=turns, cascade=cascade)))
    for name, position in cases:
        if finished_result(position) is not None:
            raise ValueError(f"test position {name!r} is a finished game; the vectors hold games in progress")
    return cases


def _numbers(values) -> str:
    """A JSON list of float32 values, each in its shortest form that reads back to the same float32."""
    return "[" + ", ".join(str(np.float32(value)) for value in np.asarray(values, dtype=np.float32).ravel()) + "]"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(checkpoints: Path, out: Path) -> None:
    """Write the npz models and the vectors file into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    models = {}
    case_lines = []
    for variant in VARIANTS:
        checkpoint = checkpoints / f"{variant}.pt"
        npz = out / f"{variant}.npz"
        export_checkpoint(checkpoint, "npz", npz)
        net = load_network(checkpoint)
        models[variant] = {
            "file": npz.name,
            "sha256": _sha256(npz),
            "checkpoint": f"checkpoints/{variant}.pt",
            "checkpoint_sha256": _sha256(checkpoint),
            "training_games": int(net.games_trained),
            "encoding_version": net.encoding_version,
            "outcome_names": list(net.outcome_names),
            "outcome_points": [float(v) for v in outcome_points(net.rules)],
        }
        cases = positions_of(variant, rng)
        features = encode_positions([position for _, position in cases], version=LATEST)
        probabilities, equities = evaluate(net, features[:, :net.num_features])
        for (name, position), row, p, e in zip(cases, features, probabilities, equities):
            case_lines.append(
                "    {" + f"\"name\": {json.dumps(name)}, \"model\": {json.dumps(variant)},\n"
                f"     \"position\": {json.dumps(position_to_json(position))},\n"
                f"     \"features\": {_numbers(row)},\n"
                f"     \"probabilities\": {_numbers(p)}, \"equity\": {str(np.float32(e))}" + "}"
            )
    feature_lines = []
    rng = np.random.default_rng(FEATURE_SEED)
    for variant in FEATURE_VARIANTS:
        cases = positions_of(variant, rng)
        features = encode_positions([position for _, position in cases], version=LATEST)
        for (name, position), row in zip(cases, features):
            feature_lines.append(
                "    {" + f"\"name\": {json.dumps(name)},\n"
                f"     \"position\": {json.dumps(position_to_json(position))},\n"
                f"     \"features\": {_numbers(row)}" + "}"
            )
    header = {
        "description": "tapa-td encoding and evaluator test vectors: JSON position -> input features (float32) -> "
                       "probabilities and equity of the model named by 'model' (an npz file beside this one); "
                       "'feature_cases': more positions of the running games (fevga, narde), with their input "
                       "features only. See docs/export.md.",
        "generated_by": "python scripts/make_test_vectors.py",
        "tapa_ai_version": __version__,
        "encoding": {"name": ENCODING_NAME, "version": LATEST, "num_features": num_features(LATEST),
                     "versions": {str(v): num_features(v) for v in ENCODING_VERSIONS},
                     "note": "'features' holds the latest version; version v is its first versions[v] values, and "
                             "each model reads those of its own encoding_version; the running games' "
                             "'feature_cases' need version 4 (versions 1-3 refuse them)"},
        "tolerance": {"features": 1e-6, "probabilities": 1e-5, "equity": 1e-5},
        "models": models,
        "feature_names": feature_names(LATEST),
    }
    text = json.dumps(header, indent=2)
    assert text.endswith("\n}")
    text = (text[:-2] + ",\n  \"cases\": [\n" + ",\n".join(case_lines) + "\n  ],\n"
            "  \"feature_cases\": [\n" + ",\n".join(feature_lines) + "\n  ]\n}\n")
    json.loads(text)  # the hand-assembled part must be valid JSON
    (out / VECTORS_FILE).write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", type=Path, default=ROOT / "checkpoints",
                        help="directory of the five variants' <variant>.pt (default: checkpoints/)")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data", help="where to write (default tests/data)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the files in --out differ from freshly made ones")
    args = parser.parse_args(argv)
    names = [VECTORS_FILE] + [f"{variant}.npz" for variant in VARIANTS]
    if not args.check:
        build(args.checkpoints, args.out)
        for name in names:
            print(f"wrote {args.out / name} ({(args.out / name).stat().st_size:,} bytes)")
        return 0
    with tempfile.TemporaryDirectory() as fresh:
        build(args.checkpoints, Path(fresh))
        stale = [name for name in names if not (args.out / name).is_file()
                 or (args.out / name).read_bytes() != (Path(fresh) / name).read_bytes()]
    if stale:
        print(f"out of date: {', '.join(stale)}; run python scripts/make_test_vectors.py", file=sys.stderr)
        return 1
    print("test vectors are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
