"""Numpy-only inference for exported ``tapa_ai`` evaluators: the ``.npz`` format, its reader and the encoder.

This module imports nothing but the Python standard library and numpy (never
torch, never the rest of ``tapa_ai``), so a frontend or a service can copy
this single file and evaluate positions with a model written by
``tapa-ai export CHECKPOINT --format npz --out model.npz``::

    import numpy_model                                  # or: from tapa_ai.export import numpy_model
    model = numpy_model.load("model.npz")
    features = numpy_model.encode_positions([position_json, ...], version=model.encoding_version)  # (B, 259..329)
    probabilities, equity = model.evaluate(features)    # (B, K) and (B,) float32
    probabilities, equity = model.evaluate_positions([position_json, ...])  # both steps at once

Positions are the JSON objects of ``tapa_ai.notation.json_position`` (docs/rules.md
section 7): ``{"variant": "tapa", "points": [24 stacks], "off": {"X": 0, "O": 0},
"turn": "X"}``, optionally ``"bar"`` (backgammon) and ``"rules"`` (overrides of
the variant's options), and in Gul Bara ``"turns"`` and ``"cascade"`` (docs/rules.md 10.3). Every position is evaluated **from the side to move**
(``turn``); ``probabilities[:, k]`` is the chance of outcome class
``model.outcome_names[k]`` and ``equity`` the expected points
(``probabilities @ model.outcome_points``). ``docs/export.md`` describes the
file format and ``docs/encoding.md`` the input columns (259 in encoding
version 1, 309 in version 2, 315 in version 3, 318 in version 4, 329 in version 5; a model says which,
``model.encoding_version``). The running games (``fevga``, ``narde``) need version 4 or 5, the rule sets whose
doubles cascade (``gulbara``) version 5.

The encoder here is a plain per-position loop written from
``docs/encoding.md`` (``tapa_ai.net.encoding`` is the fast batch version of the same
thing); ``tests/test_export.py`` checks that both give the same numbers and
that both reproduce ``tests/data/encoding_vectors.json``. It checks that a
position is well formed (24 stacks of ``X``/``O`` letters, counts in range)
but not that it is reachable: ``tapa_ai.notation.json_position`` does that.

Kept whole: it is made to be copied into other programs as one file.
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from typing import IO, Any, Mapping, Optional, Sequence, Union

import numpy as np

__all__ = [
    "METADATA_FORMAT", "METADATA_FORMAT_VERSION", "FORMAT_VERSIONS", "race_rows", "ENCODING_NAME", "ENCODING_VERSION", "ENCODING_VERSIONS", "NUM_FEATURES",
    "num_features", "ACTIVATIONS",
    "VARIANT_RULES", "ModelFileError", "NumpyEvaluator", "load", "save_npz", "feature_names", "encode_position",
    "encode_positions",
]

METADATA_FORMAT = "tapa-ai-evaluator"
"""Value of ``metadata["format"]`` in every exported model (npz, ONNX, TorchScript)."""
METADATA_FORMAT_VERSION = 2
"""``metadata["format_version"]`` of a model with a race network (``race_layers.*`` arrays, see
:func:`race_rows`); a one-network model is written as version 1, which readers from before race networks read.
Bumped whenever the metadata keys or an exported file's layout change."""
FORMAT_VERSIONS = (1, 2)
"""The ``format_version`` values this module reads."""

ENCODING_NAME = "tapa-td"
"""The input encoding this module computes (must equal ``tapa_ai.net.encoding.ENCODING_NAME``)."""
ENCODING_VERSION = 1
"""The default version (must equal ``tapa_ai.net.encoding.ENCODING_VERSION``; the tests check both)."""
ENCODING_VERSIONS = (1, 2, 3, 4, 5)
"""The versions this module computes: 2 is 1 followed by 50 exposure columns, 3 is 2 followed by 6 contact columns,
4 is 3 computed path-aware followed by 3 running-game columns (for the running games), 5 is 4 followed by 11
cascade columns (the one version for the rule sets whose doubles cascade)."""
NUM_FEATURES = 259
"""Input columns of version 1."""
_WIDTHS = {1: 259, 2: 309, 3: 315, 4: 318, 5: 329}
_RUNNING_VERSION = 4
_PARALLEL_COLUMN = 315  # rules.parallel; then mover.passed (316), opponent.passed (317)
_CASCADE_VERSION = 5
_CASCADE_COLUMN = 318  # rules.cascades; mover/opponent.cascade_now (319, 320); stage.number1..6 (321..326),
# stage.steps (327), stage.remainder (328)
_CASCADE_UNITS = ["rules.cascades", "mover.cascade_now", "opponent.cascade_now",
                  *(f"stage.number{number}" for number in range(1, 7)), "stage.steps", "stage.remainder"]
_STAGE_STEPS = 4


def num_features(version: int = ENCODING_VERSION) -> int:
    """Input columns of an encoding version (259, 309, 315, 318 or 329)."""
    if isinstance(version, bool) or version not in _WIDTHS:
        raise ModelFileError(f"encoding version {version!r}: this module computes versions {list(ENCODING_VERSIONS)}")
    return _WIDTHS[version]

ACTIVATIONS = ("relu", "tanh", "sigmoid", "gelu", "silu")
"""Hidden-layer activations a model may use (as ``torch.nn``: GELU is the exact, erf-based one)."""

VARIANT_RULES: dict[str, dict[str, Any]] = {
    "tapa": {"contact": "pin", "mother_points": 3, "backgammons": True, "paths": "opposite"},
    "plakoto": {"contact": "pin", "mother_points": 2, "backgammons": False, "paths": "opposite"},
    "backgammon": {"contact": "hit", "mother_points": 0, "backgammons": True, "paths": "opposite"},
    "portes": {"contact": "hit", "mother_points": 0, "backgammons": False, "paths": "opposite"},
    "fevga": {"contact": "block", "mother_points": 0, "backgammons": False, "paths": "parallel"},
    "narde": {"contact": "block", "mother_points": 0, "backgammons": False, "paths": "parallel"},
    "gulbara": {"contact": "block", "mother_points": 0, "backgammons": False, "paths": "parallel",
                "doubles": "cascade", "plain_double_turns": 3},
}
"""The rule options of each named variant that the encoding reads (``tapa_ai.rules.options`` has them all);
``doubles`` is ``"plain"`` where not given (``plain_double_turns`` matters only with ``"cascade"``)."""

_POINT_UNITS = ("free1", "free2", "free3", "free_extra", "pinned")
_SIDE_SCALARS = ("on_24", "mother_alone", "mother_pinned", "mother_safe", "off", "pips", "bar", "all_home")
_RULE_FLAGS = ("pins", "backgammons", "mother_points")
_CHECKERS = 15
_CHECKER_SCALE = 15.0
_PIP_SCALE = 360.0
_BAR_SCALE = 2.0
_MOTHER_POINTS_SCALE = 3.0
_SIDES = ("X", "O")
_NPZ_KEYS = ("metadata", "outcome_points")


class ModelFileError(ValueError):
    """An ``.npz`` model file or a position that cannot be used; the message says what and where."""


# -- the encoder --------------------------------------------------------------------------------
def feature_names(version: int = ENCODING_VERSION) -> list[str]:
    """One name per input column: ``mover.p01.free1`` ... ``opponent.p24.pinned``, ``mover.on_24`` ..., ``rules.pins`` ...
    and in version 2 ``mover.p01.exposed`` ... ``opponent.exposed_any``, in version 3 ``mover.escapes`` ...
    ``opponent.dance``, in version 4 ``rules.parallel`` ..., in version 5 ``rules.cascades`` ... ``stage.remainder``."""
    num_features(version)
    names = []
    for side in ("mover", "opponent"):
        for point in range(1, 25):
            names.extend(f"{side}.p{point:02d}.{unit}" for unit in _POINT_UNITS)
    for side in ("mover", "opponent"):
        names.extend(f"{side}.{scalar}" for scalar in _SIDE_SCALARS)
    names.extend(f"rules.{flag}" for flag in _RULE_FLAGS)
    if version >= 2:
        for side in ("mover", "opponent"):
            names.extend([f"{side}.p{point:02d}.exposed" for point in range(1, 25)] + [f"{side}.exposed_any"])
    if version >= 3:
        for side in ("mover", "opponent"):
            names.extend(f"{side}.{unit}" for unit in ("escapes", "prime", "dance"))
    if version >= 4:
        names.extend(["rules.parallel", "mover.passed", "opponent.passed"])
    if version >= 5:
        names.extend(_CASCADE_UNITS)
    return names


def _encoding_rules(position: Mapping[str, Any], where: str) -> tuple[bool, bool, int, bool]:
    """(pins, backgammons, mother_points, parallel) of a JSON position: its variant's, with its ``rules``
    overrides."""
    variant = position.get("variant")
    if variant not in VARIANT_RULES:
        raise ModelFileError(f"{where}.variant: unknown variant {variant!r}; known: {sorted(VARIANT_RULES)}")
    rules = dict(VARIANT_RULES[variant])
    overrides = position.get("rules", {})
    if not isinstance(overrides, Mapping):
        raise ModelFileError(f"{where}.rules: must be an object of rule options, got {type(overrides).__name__}")
    for key in ("contact", "mother_points", "backgammons", "paths"):
        if key in overrides:
            rules[key] = overrides[key]
    if rules["contact"] not in ("pin", "hit", "block"):
        raise ModelFileError(f"{where}.rules.contact: must be 'pin', 'hit' or 'block', got {rules['contact']!r}")
    if rules["paths"] not in ("opposite", "parallel"):
        raise ModelFileError(f"{where}.rules.paths: must be 'opposite' or 'parallel', got {rules['paths']!r}")
    if (rules["paths"] == "parallel") != (rules["contact"] == "block"):
        raise ModelFileError(f"{where}.rules: paths={rules['paths']!r} with contact={rules['contact']!r}; the running "
                             "games pair paths 'parallel' with contact 'block', the others 'opposite' with 'pin' or 'hit'")
    mother_points = rules["mother_points"]
    if isinstance(mother_points, bool) or not isinstance(mother_points, int) or mother_points < 0:
        raise ModelFileError(f"{where}.rules.mother_points: must be an integer >= 0, got {mother_points!r}")
    if not isinstance(rules["backgammons"], bool):
        raise ModelFileError(f"{where}.rules.backgammons: must be true or false, got {rules['backgammons']!r}")
    return rules["contact"] == "pin", rules["backgammons"], mother_points, rules["paths"] == "parallel"


def _cascade_rules(position: Mapping[str, Any], where: str) -> tuple[bool, int]:
    """(doubles cascade, plain_double_turns) of a JSON position: its variant's, with its ``rules`` overrides."""
    rules = dict(VARIANT_RULES.get(position.get("variant"), {}))
    overrides = position.get("rules", {})
    if isinstance(overrides, Mapping):
        for key in ("doubles", "plain_double_turns"):
            if key in overrides:
                rules[key] = overrides[key]
    doubles = rules.get("doubles", "plain")
    if doubles not in ("plain", "cascade"):
        raise ModelFileError(f"{where}.rules.doubles: must be 'plain' or 'cascade', got {doubles!r}")
    plain_turns = rules.get("plain_double_turns", 3)
    if isinstance(plain_turns, bool) or not isinstance(plain_turns, int) or plain_turns < 0:
        raise ModelFileError(f"{where}.rules.plain_double_turns: must be an integer >= 0, got {plain_turns!r}")
    return doubles == "cascade", plain_turns


def _cascade(position: Mapping[str, Any], mover: str, opponent: str, plain_turns: int, where: str) -> list[float]:
    """Version 5's 11 cascade columns of a position whose doubles cascade (docs/encoding.md, "Version 5")."""
    turns = position.get("turns", {"X": 0, "O": 0})
    if not isinstance(turns, Mapping) or set(turns) - set(_SIDES):
        raise ModelFileError(f"{where}.turns: must be an object like {{\"X\": 0, \"O\": 0}}, got {turns!r}")
    values = [1.0]
    for side in (mover, opponent):
        count = turns.get(side, 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ModelFileError(f"{where}.turns.{side}: must be an integer >= 0, got {count!r}")
        values.append(1.0 if count >= plain_turns else 0.0)
    stage = [0.0] * 8
    cascade = position.get("cascade")
    if cascade is not None:
        if not isinstance(cascade, Mapping):
            raise ModelFileError(f"{where}.cascade: must be an object like {{\"number\": 3, \"steps\": 4, "
                                 f"\"remainder\": false}}, got {cascade!r}")
        number, steps = cascade.get("number"), cascade.get("steps", _STAGE_STEPS)
        remainder = cascade.get("remainder", False)
        for key, value, high in (("number", number, 6), ("steps", steps, _STAGE_STEPS)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ModelFileError(f"{where}.cascade.{key}: must be an integer 1..{high}, got {value!r}")
        if not isinstance(remainder, bool):
            raise ModelFileError(f"{where}.cascade.remainder: must be true or false, got {remainder!r}")
        stage[number - 1] = 1.0
        stage[6] = steps / _STAGE_STEPS
        stage[7] = 1.0 if remainder else 0.0
    return values + stage


def _counts(position: Mapping[str, Any], key: str, where: str) -> dict[str, int]:
    value = position.get(key, {"X": 0, "O": 0})
    if not isinstance(value, Mapping) or set(value) - set(_SIDES):
        raise ModelFileError(f"{where}.{key}: must be an object like {{\"X\": 0, \"O\": 0}}, got {value!r}")
    counts = {}
    for side in _SIDES:
        count = value.get(side, 0)
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= _CHECKERS:
            raise ModelFileError(f"{where}.{key}.{side}: must be an integer 0..15, got {count!r}")
        counts[side] = count
    return counts


def _stack(stack: Any, where: str) -> tuple[str | None, int, str | None]:
    """(side on top, its free checkers, side of the checker pinned under them or None) of one stack string."""
    if not isinstance(stack, str) or any(letter not in _SIDES for letter in stack):
        raise ModelFileError(f"{where}: must be a string of the letters X and O (bottom to top), got {stack!r}")
    if not stack:
        return None, 0, None
    top = stack[-1]
    if stack == top * len(stack):
        return top, len(stack), None
    if len(stack) >= 2 and stack[0] != top and stack[1:] == top * (len(stack) - 1):
        return top, len(stack) - 1, stack[0]
    raise ModelFileError(f"{where}: {stack!r} is not a legal stack (one pinned checker at the bottom under "
                         "checkers of the other side only)")


def _parse(position: Any, where: str) -> Mapping[str, Any]:
    """A JSON position as a mapping: parsed from text if needed."""
    if isinstance(position, (str, bytes)):
        try:
            position = json.loads(position)
        except json.JSONDecodeError as error:
            raise ModelFileError(f"{where}: not valid JSON ({error})") from None
    if not isinstance(position, Mapping):
        raise ModelFileError(f"{where}: must be a JSON object, got {type(position).__name__}")
    return position


def _index(side: str, point: int, parallel: bool) -> int:
    """The index in ``points`` of ``side``'s own point ``point`` (1..24): X's ``point - 1``; O's ``24 - point``,
    or in the running games (``parallel``) ``(point + 11) % 24`` (docs/rules.md 1 and 8.1)."""
    if side == "X":
        return point - 1
    return (point + 11) % 24 if parallel else 24 - point


def _landings(source: int, a: int, b: int, is_open) -> set:
    """Points a checker on ``source`` reaches with roll ``(a, b)`` (docs/encoding.md, version 2 "reach"): one die;
    both dice with the first landing open; a double up to four steps, each landing before the next open."""
    landed = set()
    if a == b:
        point = source
        for _ in range(4):
            point -= a
            if point < 1:
                break
            landed.add(point)
            if not is_open(point):
                break
    else:
        for first, second in ((a, b), (b, a)):
            if source - first >= 1:
                landed.add(source - first)
                if is_open(source - first) and source - first - second >= 1:
                    landed.add(source - first - second)
    return landed


def _exposure(stacks: list, bar: dict, defender: str) -> list[float]:
    """The 25 exposure columns of ``defender`` (docs/encoding.md, "Version 2: exposure")."""
    attacker = "O" if defender == "X" else "X"

    def stack(point: int) -> tuple:  # the attacker's own point 1..24
        return stacks[point - 1] if attacker == "X" else stacks[24 - point]

    def lone(point: int) -> bool:
        top, number, under = stack(point)
        return top == defender and number == 1 and under is None

    targets = {point for point in range(1, 25) if lone(point)}
    sources = {25} if bar[attacker] > 0 else {point for point in range(1, 25) if stack(point)[0] == attacker}
    open_ = {point for point in range(1, 25) if stack(point)[0] != defender or lone(point)}
    hits_at = dict.fromkeys(targets, 0)
    any_hit = 0
    for a in range(1, 7):
        for b in range(1, 7):
            reach = set()
            for source in sources:
                reach |= _landings(source, a, b, open_.__contains__)
            hit = reach & targets
            for point in hit:
                hits_at[point] += 1
            any_hit += bool(hit)
    # The defender's own point q is the attacker's point 25 - q.
    return [hits_at.get(25 - q, 0) / 36.0 for q in range(1, 25)] + [any_hit / 36.0]


def _contact(stacks: list, bar: dict, side: str, home: bool, parallel: bool = False) -> list[float]:
    """The 3 contact columns of ``side`` (docs/encoding.md, "Version 3: contact"): escapes, prime, dance.

    ``parallel``: a running game (version 4): its numbering, and a lone opposing checker closes its point."""
    other = "O" if side == "X" else "X"

    def stack(point: int) -> tuple:  # the side's own point 1..24
        return stacks[_index(side, point, parallel)]

    def is_open(point: int) -> bool:
        top, number, under = stack(point)
        if parallel:
            return top != other
        return top != other or (number == 1 and under is None)

    sources = [25] if bar[side] > 0 else [point for point in range(1, 25) if stack(point)[0] == side]
    if not sources:
        return [0.0, 0.0, 0.0]
    rear = max(sources)
    zone_blocks = [point for point in range(max(1, rear - 12), rear) if not is_open(point)]
    beyond = min(zone_blocks) if zone_blocks else rear  # land below this point
    escapes = dance = 0
    for a in range(1, 7):
        for b in range(1, 7):
            landed = _landings(rear, a, b, is_open)
            escapes += any(point < beyond and is_open(point) for point in landed)
            movable = any(p - d >= 1 and is_open(p - d) for p in sources for d in (a, b))
            dance += not movable and not home
    prime = run = 0
    for point in range(1, rear):
        run = run + 1 if not is_open(point) else 0
        prime = max(prime, run)
    return [escapes / 36.0, min(prime, 6) / 6.0, dance / 36.0]


def encode_position(position: Mapping[str, Any] | str, where: str = "position",
                    version: int = ENCODING_VERSION) -> np.ndarray:
    """(num_features(version),) float32 input of one JSON position (a dict or a JSON string), from its side to move.

    Follows ``docs/encoding.md`` column by column. ``points[i]`` is X's point
    ``i + 1`` and O's point ``24 - i``; a stack string lists checkers bottom to top.
    """
    width = num_features(version)
    position = _parse(position, where)
    pins, backgammons, mother_points, parallel = _encoding_rules(position, where)
    cascades, plain_turns = _cascade_rules(position, where)
    if cascades and version < _CASCADE_VERSION:
        raise ModelFileError(f"{where}: a {position.get('variant')!r} position (doubles 'cascade') needs encoding "
                             f"version {_CASCADE_VERSION}; version {version} cannot encode it")
    if parallel and version < _RUNNING_VERSION:
        raise ModelFileError(f"{where}: a {position.get('variant')!r} position (a running game, paths 'parallel') "
                             f"needs encoding version {_RUNNING_VERSION}; version {version} cannot encode it")
    mother_rules = pins and mother_points > 0
    mover = position.get("turn")
    if mover not in _SIDES:
        raise ModelFileError(f"{where}.turn: must be \"X\" or \"O\", got {mover!r}")
    points = position.get("points")
    if not isinstance(points, (list, tuple)) or len(points) != 24:
        raise ModelFileError(f"{where}.points: must be a list of 24 stacks (strings), got {points!r:.80}")
    stacks = [_stack(stack, f"{where}.points[{index}]") for index, stack in enumerate(points)]
    off = _counts(position, "off", where)
    bar = _counts(position, "bar", where)

    features = np.zeros(width, dtype=np.float32)
    opponent = "O" if mover == "X" else "X"
    all_home = {}
    for block, side in enumerate((mover, opponent)):
        counts = [0] * 25  # counts[p] = count(side, p), p = 1..24 in the side's own numbering
        own_24 = (None, 0, None)
        for point in range(1, 25):
            top, number, under = stacks[_index(side, point, parallel)]
            free = number if top == side else 0
            pinned = 1 if under == side else 0
            base = 120 * block + 5 * (point - 1)
            features[base: base + 5] = (free >= 1, free >= 2, free >= 3, max(free - 3, 0) / 2.0, pinned)
            counts[point] = free + pinned
            if point == 24:
                own_24 = (top, number, under)
        top, number, under = own_24
        free_24 = number if top == side else 0
        pinned_24 = under == side
        scalars = 240 + 8 * block
        features[scalars + 0] = counts[24] / _CHECKER_SCALE
        if mother_rules:
            features[scalars + 1] = top == side and number == 1 and under is None  # the stack is just "S"
            features[scalars + 2] = pinned_24
            features[scalars + 3] = free_24 == 0 and not pinned_24
        features[scalars + 4] = off[side] / _CHECKER_SCALE
        pips = sum(point * counts[point] for point in range(1, 25)) + 25 * bar[side]
        features[scalars + 5] = pips / _PIP_SCALE
        features[scalars + 6] = bar[side] / _BAR_SCALE
        features[scalars + 7] = all_home[side] = bar[side] == 0 and sum(counts[7:]) == 0
    features[256] = pins
    features[257] = backgammons
    features[258] = mother_points / _MOTHER_POINTS_SCALE
    if version >= 2 and not parallel:  # nothing can be hit in the running games: their exposure is 0
        features[259:284] = _exposure(stacks, bar, mover)
        features[284:309] = _exposure(stacks, bar, opponent)
    if version >= 3:
        features[309:312] = _contact(stacks, bar, mover, all_home[mover], parallel)
        features[312:315] = _contact(stacks, bar, opponent, all_home[opponent], parallel)
    if version >= 4 and parallel:
        features[_PARALLEL_COLUMN] = 1.0
        for block, side in enumerate((mover, opponent)):
            # Passed the opponent's start: a checker on the side's own points 1..11, or one borne off.
            ahead = any(stacks[_index(side, point, True)][0] == side for point in range(1, 12))
            features[_PARALLEL_COLUMN + 1 + block] = ahead or off[side] > 0
    if version >= 5 and cascades:  # 0 where doubles are plain
        features[_CASCADE_COLUMN:_CASCADE_COLUMN + len(_CASCADE_UNITS)] = _cascade(
            position, mover, opponent, plain_turns, where)
    return features


def encode_positions(positions: Sequence[Mapping[str, Any] | str], version: int = ENCODING_VERSION) -> np.ndarray:
    """(B, num_features(version)) float32 inputs of JSON positions, each from its side to move."""
    out = np.zeros((len(positions), num_features(version)), dtype=np.float32)
    for row, position in enumerate(positions):
        out[row] = encode_position(position, where=f"positions[{row}]", version=version)
    return out


# -- the model ------------------------------------------------------------------------------------
def race_rows(features: np.ndarray) -> np.ndarray:
    """(B,) bool: the encoded positions that are races (no checker can meet an opposing one again).

    Each side's rearmost checker is its highest own point with a checker of it (``free1`` or ``pinned`` set;
    25 with ``bar`` above 0, 0 with none); contact is left exactly while the two add up to more than 25, or in
    the running games (``rules.parallel`` set, version 4) while either is above 12. A model with a race
    network evaluates these rows with ``race_layers`` and the others with ``layers``.
    """
    features = np.asarray(features)
    points = features[:, : 2 * 24 * len(_POINT_UNITS)].reshape(-1, 2, 24, len(_POINT_UNITS))
    occupied = (points[..., _POINT_UNITS.index("free1")] > 0) | (points[..., _POINT_UNITS.index("pinned")] > 0)
    rearmost = np.where(occupied, np.arange(1, 25), 0).max(axis=2)
    bar = 2 * 24 * len(_POINT_UNITS) + _SIDE_SCALARS.index("bar")
    rearmost = np.where(features[:, [bar, bar + len(_SIDE_SCALARS)]] > 0, 25, rearmost)
    race = rearmost.sum(axis=1) <= 25
    if features.shape[1] >= _WIDTHS[_RUNNING_VERSION]:
        race = np.where(features[:, _PARALLEL_COLUMN] > 0, rearmost.max(axis=1) <= 12, race)
    return race


def _activate(values: np.ndarray, activation: str) -> np.ndarray:
    if activation == "relu":
        return np.maximum(values, np.float32(0.0))
    if activation == "tanh":
        return np.tanh(values)
    if activation == "sigmoid":
        return (0.5 * (1.0 + np.tanh(0.5 * values))).astype(np.float32)  # no overflow for large |x|
    if activation == "gelu":
        erf = np.vectorize(math.erf, otypes=[np.float64])
        return (0.5 * values * (1.0 + erf(values.astype(np.float64) / math.sqrt(2.0)))).astype(np.float32)
    if activation == "silu":
        return (values * (0.5 * (1.0 + np.tanh(0.5 * values)))).astype(np.float32)
    raise ModelFileError(f"activation {activation!r}: unknown; known: {list(ACTIVATIONS)}")


class NumpyEvaluator:
    """An exported evaluator: dense layers ``x @ W.T + b`` with an activation between them, then softmax.

    ``weights[i]`` is (out, in) and ``biases[i]`` (out,), as in ``torch.nn.Linear``;
    the activation follows every layer but the last. ``metadata`` is the
    dict stored in the file (see ``docs/export.md``). A model with a race
    network (``metadata["model"]["race_network"]``) has a second list of
    layers, ``race``, of the same shapes, for the rows :func:`race_rows` marks.
    """

    def __init__(self, weights: Sequence[np.ndarray], biases: Sequence[np.ndarray], metadata: Mapping[str, Any],
                 source: str = "model", race: Optional[tuple[Sequence[np.ndarray], Sequence[np.ndarray]]] = None) -> None:
        self.source = source
        self.metadata = dict(metadata)
        self.weights = [np.ascontiguousarray(w, dtype=np.float32) for w in weights]
        self.biases = [np.ascontiguousarray(b, dtype=np.float32) for b in biases]
        self.race_weights = None if race is None else [np.ascontiguousarray(w, dtype=np.float32) for w in race[0]]
        self.race_biases = None if race is None else [np.ascontiguousarray(b, dtype=np.float32) for b in race[1]]
        model = self.metadata.get("model")
        wants_race = isinstance(model, Mapping) and model.get("race_network") is True
        if wants_race != (race is not None):
            raise ModelFileError(f"{source}: metadata.model.race_network is {wants_race} but the file holds "
                                 f"{'a' if race is not None else 'no'} race network")
        if not isinstance(model, Mapping) or model.get("activation") not in ACTIVATIONS:
            raise ModelFileError(f"{source}: metadata.model.activation must be one of {list(ACTIVATIONS)}, "
                                 f"got {model!r:.120}")
        self.activation = model["activation"]
        encoding = (self.metadata.get("encoding"), self.metadata.get("encoding_version"))
        if encoding[0] != ENCODING_NAME or isinstance(encoding[1], bool) or encoding[1] not in ENCODING_VERSIONS:
            raise ModelFileError(f"{source}: model is for encoding {encoding[0]!r} version {encoding[1]}; this "
                                 f"module computes {ENCODING_NAME!r} versions {list(ENCODING_VERSIONS)}")
        self.encoding_version: int = encoding[1]
        """The input encoding version: ``encode_positions(..., version=model.encoding_version)``."""
        self.num_features = num_features(self.encoding_version)
        names = self.metadata.get("outcome_names")
        points = self.metadata.get("outcome_points")
        if not isinstance(names, list) or not isinstance(points, list) or len(names) != len(points):
            raise ModelFileError(f"{source}: metadata.outcome_names and outcome_points must be lists of one length")
        self.outcome_names: tuple[str, ...] = tuple(names)
        self.outcome_points = np.asarray(points, dtype=np.float32)
        self._check_layers(self.weights, self.biases, "layer")
        if race is not None:
            shapes = [w.shape for w in self.weights], [w.shape for w in self.race_weights]
            if shapes[0] != shapes[1]:
                raise ModelFileError(f"{source}: the race network's layers {shapes[1]} differ from the contact "
                                     f"network's {shapes[0]}")
            self._check_layers(self.race_weights, self.race_biases, "race layer")

    def _check_layers(self, weights: list, biases: list, what: str) -> None:
        if not weights or len(weights) != len(biases):
            raise ModelFileError(f"{self.source}: want one or more layers with a weight and a bias each, got "
                                 f"{len(weights)} weights and {len(biases)} biases")
        width = self.num_features
        for index, (weight, bias) in enumerate(zip(weights, biases)):
            if weight.ndim != 2 or weight.shape[1] != width or bias.shape != (weight.shape[0],):
                raise ModelFileError(f"{self.source}: {what} {index}: weight {weight.shape} and bias {bias.shape} do "
                                     f"not fit an input of width {width} (want weight (out, {width}), bias (out,))")
            width = weight.shape[0]
        if width != len(self.outcome_names):
            raise ModelFileError(f"{self.source}: the last {what} has {width} outputs, metadata names "
                                 f"{len(self.outcome_names)} classes")

    @property
    def variant(self) -> str:
        """The rule set's name (``tapa``, ``plakoto``, ``backgammon`` or a custom one)."""
        return str(self.metadata.get("variant"))

    @property
    def num_outcomes(self) -> int:
        return len(self.outcome_names)

    def logits(self, features: np.ndarray) -> np.ndarray:
        """(B, num_features) -> (B, K) float32 logits."""
        hidden = np.asarray(features, dtype=np.float32)
        if hidden.ndim != 2 or hidden.shape[1] != self.num_features:
            raise ModelFileError(f"features: want a (batch, {self.num_features}) array (encoding version "
                                 f"{self.encoding_version}), got shape {hidden.shape}")
        if self.race_weights is None:
            return self._forward(hidden, self.weights, self.biases)
        race = race_rows(hidden)
        logits = np.empty((hidden.shape[0], self.num_outcomes), dtype=np.float32)
        logits[~race] = self._forward(hidden[~race], self.weights, self.biases)
        logits[race] = self._forward(hidden[race], self.race_weights, self.race_biases)
        return logits

    def _forward(self, hidden: np.ndarray, weights: list, biases: list) -> np.ndarray:
        last = len(weights) - 1
        for index, (weight, bias) in enumerate(zip(weights, biases)):
            hidden = hidden @ weight.T + bias
            if index < last:
                hidden = _activate(hidden, self.activation)
        return hidden

    def evaluate(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B, num_features) -> probabilities (B, K) and equity (B,), float32, from the side to move."""
        logits = self.logits(features)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        probabilities = (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)
        return probabilities, probabilities @ self.outcome_points

    def evaluate_positions(self, positions: Sequence[Mapping[str, Any] | str]) -> tuple[np.ndarray, np.ndarray]:
        """Encode JSON positions and evaluate them; refuses a position of another rule set than the model's."""
        rules = self.metadata.get("rule_options", {})
        wanted = (rules.get("contact") == "pin", rules.get("backgammons"), rules.get("mother_points"),
                  rules.get("paths", "opposite") == "parallel", rules.get("doubles", "plain") == "cascade")
        parsed = [_parse(position, f"positions[{row}]") for row, position in enumerate(positions)]
        for row, position in enumerate(parsed):
            found = (_encoding_rules(position, f"positions[{row}]")
                     + _cascade_rules(position, f"positions[{row}]")[:1])
            if found != wanted:
                raise ModelFileError(
                    f"positions[{row}]: a {position.get('variant')!r} position (pins, backgammons, mother points, "
                    f"parallel, cascades = "
                    f"{found}) does not fit this {self.variant!r} model {wanted}"
                )
        return self.evaluate(encode_positions(parsed, version=self.encoding_version))


# -- the file -------------------------------------------------------------------------------------
def save_npz(file: Union[str, IO[bytes]], weights: Sequence[np.ndarray], biases: Sequence[np.ndarray],
             metadata: Mapping[str, Any],
             race: Optional[tuple[Sequence[np.ndarray], Sequence[np.ndarray]]] = None) -> None:
    """Write a model: ``layers.{i}.weight`` (out, in), ``layers.{i}.bias``, ``outcome_points`` and ``metadata``
    (and ``race_layers.{i}.weight``, ``race_layers.{i}.bias`` of a race network's ``race``).

    ``metadata`` is stored as a JSON string (a 0-d unicode array, so that
    ``np.load(..., allow_pickle=False)`` reads it). The file is what
    ``np.savez_compressed`` writes, with fixed timestamps, so the same model
    always gives the same bytes; ``file`` is a path (used as given) or an open
    binary file.
    """
    arrays: dict[str, np.ndarray] = {}
    for index, (weight, bias) in enumerate(zip(weights, biases)):
        arrays[f"layers.{index}.weight"] = np.ascontiguousarray(weight, dtype=np.float32)
        arrays[f"layers.{index}.bias"] = np.ascontiguousarray(bias, dtype=np.float32)
    for index, (weight, bias) in enumerate(zip(*race) if race is not None else []):
        arrays[f"race_layers.{index}.weight"] = np.ascontiguousarray(weight, dtype=np.float32)
        arrays[f"race_layers.{index}.bias"] = np.ascontiguousarray(bias, dtype=np.float32)
    arrays["outcome_points"] = np.asarray(metadata["outcome_points"], dtype=np.float32)
    arrays["metadata"] = np.array(json.dumps(dict(metadata), sort_keys=True))
    # What np.savez_compressed writes, but with fixed member timestamps: the same model gives the same bytes.
    with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w", force_zip64=True) as handle:
                np.lib.format.write_array(handle, array, allow_pickle=False)


def load(path: str) -> NumpyEvaluator:
    """Read an ``.npz`` model written by ``tapa-ai export --format npz`` (never unpickles anything)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ModelFileError(f"{path}: is a directory, not a model file") from None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelFileError(f"{path}: not a readable .npz model file (corrupt, truncated or another kind of "
                             f"file): {detail}") from None
    missing = [key for key in _NPZ_KEYS if key not in arrays]
    if missing:
        raise ModelFileError(f"{path}: not a tapa-ai model file: missing array(s) {missing}")
    try:
        metadata = json.loads(str(arrays["metadata"]))
    except json.JSONDecodeError as error:
        raise ModelFileError(f"{path}: metadata is not valid JSON ({error})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != METADATA_FORMAT:
        raise ModelFileError(f"{path}: not a tapa-ai model file (metadata.format is not {METADATA_FORMAT!r})")
    if metadata.get("format_version") not in FORMAT_VERSIONS:
        raise ModelFileError(f"{path}: file format version {metadata.get('format_version')!r}; this module reads "
                             f"versions {list(FORMAT_VERSIONS)}")

    def layers_named(prefix: str) -> tuple[list, list]:
        weights, biases = [], []
        while f"{prefix}.{len(weights)}.weight" in arrays:
            index = len(weights)
            if f"{prefix}.{index}.bias" not in arrays:
                raise ModelFileError(f"{path}: {prefix}.{index}.weight has no {prefix}.{index}.bias")
            weights.append(arrays[f"{prefix}.{index}.weight"])
            biases.append(arrays[f"{prefix}.{index}.bias"])
        return weights, biases

    weights, biases = layers_named("layers")
    race = layers_named("race_layers")
    layers = metadata.get("model", {}).get("layers") if isinstance(metadata.get("model"), dict) else None
    if layers is not None and len(weights) != layers + 1:
        raise ModelFileError(f"{path}: metadata.model.layers = {layers} hidden layers, but the file holds "
                             f"{len(weights)} weight matrices (want {layers + 1})")
    model = NumpyEvaluator(weights, biases, metadata, source=str(path), race=race if race[0] else None)
    if not np.array_equal(model.outcome_points, arrays["outcome_points"]):
        raise ModelFileError(f"{path}: outcome_points array differs from metadata.outcome_points")
    return model
