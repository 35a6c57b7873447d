"""The outcome classes: how a game ends, from one side's view, their points and the equity.

Every evaluator (the network, the bear-off databases, an exported model) gives
a distribution over these mutually exclusive classes, from the view of the
side to move::

    0 win_single   1 win_gammon   2 win_<top>   3 lose_single   4 lose_gammon   5 lose_<top>   [6 draw]

``<top>`` is the best result a variant has above a gammon: a backgammon
(``backgammon``), a mother win (``plakoto``) or either (``tapa``, where both
are worth 3). In ``portes`` (backgammons off) a backgammon counts as a gammon,
so its top class, which only another rule set's model fills (the backgammon
network playing Portes), is worth 2. The draw class exists only where the rule set has draws
(``rules.has_draws``: both mothers pinned). Each class is worth its points
(single 1, gammon 2, top 3 or ``rules.mother_points``, draw 0, losses
negative), and the **equity** is the expected points: ``probabilities @
outcome_points(rules)``.

The one home of these definitions (numpy only; the functions taking
probabilities accept numpy arrays and torch tensors alike). The finished
game's result codes of the move generator (:data:`RESULT_KINDS`) live here
too, so that a result code maps to its class without the generator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .options import VARIANTS, RuleOptions
from .position import RESULT_KINDS as GAME_RESULT_KINDS, SIDES, GameResult

__all__ = [
    "WIN_SINGLE", "WIN_GAMMON", "WIN_TOP", "LOSE_SINGLE", "LOSE_GAMMON", "LOSE_TOP", "DRAW", "RESULT_KINDS",
    "CLASS_NAMES",
    "OUTCOME_NAMES", "CUMULATIVE_NAMES", "num_outcomes", "outcome_names", "outcome_points", "top_points",
    "outcome_class", "outcome_classes", "equity", "cumulative_probabilities", "named_probabilities", "swap_sides",
]

RESULT_NONE, RESULT_SINGLE, RESULT_GAMMON, RESULT_BACKGAMMON, RESULT_MOTHER, RESULT_DRAW = range(6)
RESULT_KINDS = (None,) + GAME_RESULT_KINDS
"""The result codes of a finished game (``Afterstates.result_kind``, the move generator's): the kind of each."""

CLASS_NAMES = ("win_single", "win_gammon", "win_top", "lose_single", "lose_gammon", "lose_top", "draw")
"""The classes by generic name (``top``: a backgammon and/or a mother win); :func:`outcome_names` names the top
class as the rule set has it."""

WIN_SINGLE, WIN_GAMMON, WIN_TOP, LOSE_SINGLE, LOSE_GAMMON, LOSE_TOP, DRAW = range(7)
"""Class indices; ``DRAW`` exists only where the rule set has draws."""

CUMULATIVE_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon", "draw")
"""Columns of :func:`cumulative_probabilities`: ``win_gammon`` = gammon or more, ``win_backgammon`` = the top class."""

_CUMULATIVE = np.zeros((7, len(CUMULATIVE_NAMES)), dtype=np.float32)
_CUMULATIVE[[WIN_SINGLE, WIN_GAMMON, WIN_TOP], 0] = 1.0
_CUMULATIVE[[WIN_GAMMON, WIN_TOP], 1] = 1.0
_CUMULATIVE[WIN_TOP, 2] = 1.0
_CUMULATIVE[[LOSE_GAMMON, LOSE_TOP], 3] = 1.0
_CUMULATIVE[LOSE_TOP, 4] = 1.0
_CUMULATIVE[DRAW, 5] = 1.0


def top_points(rules: RuleOptions) -> int:
    """Points of the top outcome class: a backgammon (3) and/or a mother win (``rules.mother_points``).

    A rule set where both exist but are worth different points cannot share
    one class and is refused.
    """
    backgammon = 3 if rules.backgammons else None
    mother = rules.mother_points if rules.has_draws else None
    if backgammon is not None and mother is not None and backgammon != mother:
        raise ValueError(
            f"rule set {rules.name!r}: a backgammon (3 points) and a mother win ({mother} points) would share "
            "one outcome class but are worth different points; this model needs them equal"
        )
    if backgammon is not None:
        return backgammon
    if mother is not None:
        return mother
    if rules.hits:
        # A hitting game without backgammons (portes, docs/rules.md 9) counts a backgammon as a gammon. Its own games
        # never reach the class, but a model of backgammon's rules playing it puts its backgammons there.
        return 2
    return 3  # the class never happens in such a rule set; its value does not matter


def _top_name(rules: RuleOptions) -> str:
    if rules.backgammons and rules.has_draws:
        return "backgammon_or_mother"
    return "mother" if rules.has_draws else "backgammon"


def num_outcomes(rules: RuleOptions) -> int:
    """6 outcome classes, 7 where the rule set has draws."""
    return 7 if rules.has_draws else 6


def outcome_names(rules: RuleOptions) -> tuple[str, ...]:
    """Names of the outcome classes of ``rules``, in class order."""
    top = _top_name(rules)
    names = ("win_single", "win_gammon", f"win_{top}", "lose_single", "lose_gammon", f"lose_{top}")
    return names + ("draw",) if rules.has_draws else names


OUTCOME_NAMES: dict[str, tuple[str, ...]] = {name: outcome_names(rules) for name, rules in VARIANTS.items()}
"""Outcome class names of every variant (``outcome_names`` for any rule set)."""


def outcome_points(rules: RuleOptions) -> np.ndarray:
    """(K,) float32 points of each outcome class for the side to move (losses negative, draw 0)."""
    top = float(top_points(rules))
    points = [1.0, 2.0, top, -1.0, -2.0, -top] + ([0.0] if rules.has_draws else [])
    return np.array(points, dtype=np.float32)


def outcome_class(result: GameResult, side: str) -> int:
    """The outcome class of a finished game's ``result``, seen from ``side`` (``"X"`` or ``"O"``)."""
    if side not in SIDES:
        raise ValueError(f"side {side!r}: must be 'X' or 'O'")
    if result.kind == "draw":
        return DRAW
    base = {"single": WIN_SINGLE, "gammon": WIN_GAMMON, "backgammon": WIN_TOP, "mother": WIN_TOP}[result.kind]
    return base if result.winner == side else base + LOSE_SINGLE


# (result code, side won?) -> class; -1 where the game is not over.
_CLASS_OF_CODE = np.full((len(RESULT_KINDS), 2), -1, dtype=np.int64)
for _code, _kind in enumerate(RESULT_KINDS):
    if _kind is not None:
        for _won in (0, 1):
            _winner = None if _kind == "draw" else ("X" if _won else "O")
            _CLASS_OF_CODE[_code, _won] = outcome_class(GameResult(_winner, _kind, 0), "X")
del _code, _kind, _won, _winner


def outcome_classes(result_kind: np.ndarray, side_won: np.ndarray) -> np.ndarray:
    """(N,) int64 outcome classes of finished games, vectorized; -1 where the game is not over.

    ``result_kind`` is the result code of :class:`tapa_ai.movegen.Afterstates`
    (0 none, 1 single, 2 gammon, 3 backgammon, 4 mother, 5 draw); ``side_won``
    says whether the side whose view is wanted won (ignored for draws). For
    afterstates seen from the side that moved, the mover is the only side that
    can win by its own move: ``side_won = afterstates.game_over``.
    """
    return _CLASS_OF_CODE[np.asarray(result_kind, dtype=np.intp), np.asarray(side_won, dtype=np.intp)]


# -- probabilities and equity -------------------------------------------------------------------
Array = Any
"""A numpy array or a torch tensor (this module imports no torch: a tensor is told by its ``new_tensor``)."""


def _matrix_like(matrix: np.ndarray, like: Array) -> Array:
    if not isinstance(like, np.ndarray) and hasattr(like, "new_tensor"):  # a torch tensor: same dtype, device
        return like.new_tensor(matrix)
    return matrix.astype(like.dtype if np.issubdtype(like.dtype, np.floating) else np.float32, copy=False)


def equity(probabilities: Array, rules: RuleOptions) -> Array:
    """(...,) expected points for the side to move, from (..., K) class probabilities (numpy or torch).

    ``equity = sum_k p_k * outcome_points(rules)[k]``: single 1, gammon 2, the
    top class ``top_points(rules)``, draw 0, losses negative.
    """
    points = outcome_points(rules)
    if probabilities.shape[-1] != points.shape[0]:
        raise ValueError(
            f"probabilities have {probabilities.shape[-1]} classes, rule set {rules.name!r} has {points.shape[0]}"
        )
    return probabilities @ _matrix_like(points, probabilities)


def cumulative_probabilities(probabilities: Array) -> Array:
    """(..., 6) ``win, win_gammon, win_backgammon, lose_gammon, lose_backgammon, draw`` from (..., K) classes.

    ``win_gammon`` is a gammon or more, ``win_backgammon`` the top class
    (backgammon or mother win); ``draw`` is 0 where there are no draws.
    """
    classes = probabilities.shape[-1]
    if classes not in (6, 7):
        raise ValueError(f"probabilities have {classes} classes, want 6 or 7")
    return probabilities @ _matrix_like(_CUMULATIVE[:classes], probabilities)


def named_probabilities(probabilities: Array) -> dict[str, Array]:
    """The columns of :func:`cumulative_probabilities` by name (``CUMULATIVE_NAMES``)."""
    cumulative = cumulative_probabilities(probabilities)
    return {name: cumulative[..., index] for index, name in enumerate(CUMULATIVE_NAMES)}


def swap_sides(probabilities: Array) -> Array:
    """(..., K) the same outcome probabilities seen from the other side (wins and losses exchanged).

    Use it to read an evaluation of ``afterstates.positions.flipped()`` (the
    opponent to roll) from the view of the side that moved; the equity changes sign.
    """
    classes = probabilities.shape[-1]
    order = [LOSE_SINGLE, LOSE_GAMMON, LOSE_TOP, WIN_SINGLE, WIN_GAMMON, WIN_TOP, DRAW][:classes]
    if not isinstance(probabilities, np.ndarray) and hasattr(probabilities, "new_tensor"):
        return probabilities[..., probabilities.new_tensor(order, dtype=_torch_long(probabilities))]
    return probabilities[..., order]


def _torch_long(tensor: Array) -> Any:
    """torch.int64, reached through a tensor (this module imports no torch)."""
    return tensor.new_zeros(0).long().dtype
