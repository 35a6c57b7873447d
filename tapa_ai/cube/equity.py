"""Cubeful equity from cubeless probabilities: no double, double/take, double/pass.

Everything here is from the view of the **side to roll** (the side that may
double) and vectorized over ``B`` positions. The input is the evaluator's
outcome distribution of each position before the roll, split by
:func:`outcome_split` into the probabilities of winning and losing 1, 2 or
``top`` points (a backgammon or a mother win) and of a draw.

**Money play** (:func:`janowski_money`): Janowski's formulas. With ``p`` the
chance of winning a decisive game and ``W``, ``L`` the average points of a
win and of a loss, the dead-cube equity is ``p (W + L) - L`` and the
live-cube equity is piecewise linear in ``p`` through the take point
``TP = (L - 1/2) / (W + L + 1/2)`` and the cash point
``CP = (L + 1) / (W + L + 1/2)``; the cubeful equity is
``x * live + (1 - x) * dead`` with the cube life ``x``
(:data:`DEFAULT_CUBE_LIFE`). A draw (tapa: both mothers pinned) scores
nothing whatever the cube, so the game part is scaled by the chance of a
decisive game while a passed double is worth the cube for sure.

**Match play** (:func:`tapa_ai.cube.met.match_cube_equities`): the same model in match
winning chances. The values of winning and losing at each cube level come
from a match equity table (:mod:`tapa_ai.cube.met`) at the scores the game
would leave; the live-cube curves are built level by level from the highest
cube down (:func:`cubeful_curves`): the owner of a cube at value ``v``
redoubles at the point where the other side's equity of taking a cube of
``2v`` equals passing, and so on. With money payoffs this recursion is
Janowski's live cube again (a test checks it), so one model serves both.

docs/cube.md has the formulas, the decision rules and their sources.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..rules.options import RuleOptions
from ..rules.outcomes import top_points

DEFAULT_CUBE_LIFE = 0.68
"""Janowski's cube life ``x`` (0 = dead cube, 1 = fully live): GNU Backgammon's value for contact positions."""

MAX_CUBE = 64
"""The highest cube (docs/rules.md section 5); a cube at 64 cannot be doubled."""

OWNER_CENTRED, OWNER_MOVER, OWNER_OPPONENT = 0, 1, -1
"""Cube ownership codes relative to the side to roll."""

LEVELS = 7
"""Cube levels a recursion needs at most: 1, 2, 4 ... 64."""

TIE = 1e-4
"""Equities closer than this are equal (an evaluator's noise; ties break as :attr:`CubeEquities.double` says)."""


def outcome_split(probabilities: np.ndarray, rules: RuleOptions) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                              np.ndarray]:
    """The network's classes as ``(win (B, 3), lose (B, 3), draw (B,), points (3,))``.

    ``probabilities`` (B, K) are in :func:`tapa_ai.net.model.outcome_names` order
    from the side to roll's view; ``win[:, k]`` is the chance of winning
    ``points[k]`` points (1, 2, top) before the cube, ``lose`` likewise.
    """
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if probabilities.ndim == 1:
        probabilities = probabilities[None, :]
    classes = probabilities.shape[1]
    if classes not in (6, 7):
        raise ValueError(f"probabilities have {classes} classes, want 6 or 7")
    probabilities = np.clip(probabilities, 0.0, None)
    probabilities = probabilities / probabilities.sum(axis=1, keepdims=True)
    draw = probabilities[:, 6] if classes == 7 else np.zeros(probabilities.shape[0])
    points = np.array([1.0, 2.0, float(top_points(rules))])
    return probabilities[:, 0:3], probabilities[:, 3:6], draw, points


@dataclass
class CubeEquities:
    """The three equities of a cube decision, from the doubler's (the side to roll's) view; (B,) each.

    ``units`` is ``"points"`` (money: points, the cube included) or ``"mwc"``
    (match play: the doubler's match-winning chance).
    """

    no_double: np.ndarray
    double_take: np.ndarray
    """The doubler's equity when the double is taken (the other side then owns the cube at twice the value)."""
    double_pass: np.ndarray
    """The doubler's equity when the double is passed: it wins the cube value before the double."""
    units: str
    may_double: np.ndarray
    """(B,) bool: the side to roll may turn the cube (it is centred or its own, below 64, not the Crawford game)."""

    @property
    def double(self) -> np.ndarray:
        """(B,) bool: doubling is right: ``min(double_take, double_pass) > no_double``.

        In a tie the cube stays put, except when playing on is worth exactly
        the cash and the receiver must pass (a sure single win): then the
        double ends the game at once for the same equity.
        """
        better = np.minimum(self.double_take, self.double_pass) > self.no_double + TIE
        cash_out = (np.abs(self.double_pass - self.no_double) <= TIE) & (self.double_take > self.double_pass + TIE)
        return self.may_double & (better | cash_out)

    @property
    def take(self) -> np.ndarray:
        """(B,) bool: the receiver should take: ``double_take <= double_pass`` (ties: take)."""
        return self.double_take <= self.double_pass + TIE

    @property
    def too_good(self) -> np.ndarray:
        """(B,) bool: playing on beats even a cash: ``no_double > double_pass`` (so no double)."""
        return self.may_double & (self.no_double > self.double_pass + TIE)

    @property
    def equity(self) -> np.ndarray:
        """(B,) the cubeful equity with the proper cube action: ``max(ND, min(DT, DP))``."""
        best_double = np.where(self.may_double, np.minimum(self.double_take, self.double_pass), -np.inf)
        return np.maximum(self.no_double, best_double)

    def action(self, index: int = 0) -> dict:
        """One position's decision as plain values (the engine's ``cube`` answer)."""
        double = bool(self.double[index])
        return {
            "action": "double" if double else "no_double",
            "too_good": bool(self.too_good[index]),
            "response": "take" if bool(self.take[index]) else "pass",
            "equities": {"no_double": float(self.no_double[index]), "double_take": float(self.double_take[index]),
                         "double_pass": float(self.double_pass[index])},
            "equity": float(self.equity[index]),
            "units": self.units,
        }


# -- money: Janowski --------------------------------------------------------------------------------
def average_values(win: np.ndarray, lose: np.ndarray, points: np.ndarray):
    """(p, W, L, decisive): win chance of a decisive game, average points of a win and a loss, P(decisive)."""
    p_win, p_lose = win.sum(axis=1), lose.sum(axis=1)
    decisive = p_win + p_lose
    p = np.where(decisive > 0, p_win / np.where(decisive > 0, decisive, 1.0), 0.5)
    average_win = np.where(p_win > 0, (win @ points) / np.where(p_win > 0, p_win, 1.0), 1.0)
    average_loss = np.where(p_lose > 0, (lose @ points) / np.where(p_lose > 0, p_lose, 1.0), 1.0)
    return p, average_win, average_loss, decisive


def janowski_live(p: np.ndarray, average_win: np.ndarray, average_loss: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """(B,) Janowski's live-cube equity per unit of cube for ``owner`` (relative codes), from the roller's view."""
    w, l = average_win, average_loss
    take_point = (l - 0.5) / (w + l + 0.5)
    cash_point = (l + 1.0) / (w + l + 0.5)
    # Centred: through (0, -L), (TP, -1), (CP, +1), (1, W).
    centred = np.where(p < take_point, -l + (l - 1.0) * p / take_point,
                       np.where(p < cash_point, -1.0 + 2.0 * (p - take_point) / (cash_point - take_point),
                                1.0 + (w - 1.0) * (p - cash_point) / (1.0 - cash_point)))
    # Owned by the roller: through (0, -L), (CP, +1), (1, W).
    owned = np.where(p < cash_point, -l + (1.0 + l) * p / cash_point,
                     1.0 + (w - 1.0) * (p - cash_point) / (1.0 - cash_point))
    # Owned by the other side: through (0, -L), (TP, -1), (1, W).
    unavailable = np.where(p < take_point, -l + (l - 1.0) * p / take_point,
                           -1.0 + (w + 1.0) * (p - take_point) / (1.0 - take_point))
    return np.where(owner == OWNER_CENTRED, centred, np.where(owner == OWNER_MOVER, owned, unavailable))


def janowski_money(win: np.ndarray, lose: np.ndarray, draw: np.ndarray, points: np.ndarray, cube_value,
                   owner, cube_life: float = DEFAULT_CUBE_LIFE) -> CubeEquities:
    """Money-play cube equities (points, the cube included) by Janowski's formulas.

    ``win``, ``lose``, ``draw``, ``points`` as :func:`outcome_split` gives
    them; ``cube_value`` (B,) or a number; ``owner`` (B,) or a number of
    :data:`OWNER_CENTRED`, :data:`OWNER_MOVER`, :data:`OWNER_OPPONENT`.
    """
    count = win.shape[0]
    value = np.broadcast_to(np.asarray(cube_value, dtype=np.float64), (count,))
    owner = np.broadcast_to(np.asarray(owner, dtype=np.int64), (count,))
    x = float(cube_life)
    p, w, l, decisive = average_values(win, lose, points)
    dead = p * (w + l) - l

    def cubeful(owner_code, cube):
        return cube * decisive * (x * janowski_live(p, w, l, owner_code) + (1.0 - x) * dead)

    no_double = cubeful(owner, value)
    double_take = cubeful(np.full(count, OWNER_OPPONENT), 2.0 * value)
    double_pass = value.copy()
    return CubeEquities(no_double, double_take, double_pass, "points", (value < MAX_CUBE) & (owner != OWNER_OPPONENT))


# -- the live cube, level by level --------------------------------------------------------------------
def _interpolate(xs: np.ndarray, ys: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(B,) values at ``p`` of piecewise-linear curves through the vertices ``xs``, ``ys`` (B, V), xs rising."""
    out = ys[:, -1].copy()
    for s in range(xs.shape[1] - 2, -1, -1):
        x0, x1, y0, y1 = xs[:, s], xs[:, s + 1], ys[:, s], ys[:, s + 1]
        width = x1 - x0
        t = np.where(width > 0, (p - x0) / np.where(width > 0, width, 1.0), 1.0)
        out = np.where(p <= x1, y0 + np.clip(t, 0.0, 1.0) * (y1 - y0), out)
    return out


def _root(xs: np.ndarray, ys: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(B,) the smallest ``p`` where a rising piecewise-linear curve reaches ``target`` (clipped to [0, 1])."""
    out = np.ones(xs.shape[0])
    found = target <= ys[:, 0]
    out[found] = 0.0
    for s in range(xs.shape[1] - 1):
        x0, x1, y0, y1 = xs[:, s], xs[:, s + 1], ys[:, s], ys[:, s + 1]
        here = ~found & (target <= y1) & (y1 > y0)
        rise = np.where(y1 > y0, y1 - y0, 1.0)
        out = np.where(here, x0 + (target - y0) / rise * (x1 - x0), out)
        found |= here
    return np.clip(out, 0.0, 1.0)


def _line(lose: np.ndarray, win: np.ndarray, p: np.ndarray) -> np.ndarray:
    return lose + p * (win - lose)


@dataclass
class CubefulCurves:
    """Live-cube equity curves of every cube level, from the roller's view: vertices (B, LEVELS, 4) each.

    ``owned[:, j]``: the roller owns the cube at level ``j``; ``unavailable[:, j]``:
    the other side owns it; ``centred``: level 0 with the cube in the middle.
    """

    owned_x: np.ndarray
    owned_y: np.ndarray
    unavailable_x: np.ndarray
    unavailable_y: np.ndarray
    centred_x: np.ndarray
    centred_y: np.ndarray

    def value(self, p: np.ndarray, level: int, owner: np.ndarray) -> np.ndarray:
        """(B,) the live-cube equity at ``p`` for the cube at ``level`` held by ``owner`` (relative codes)."""
        owned = _interpolate(self.owned_x[:, level], self.owned_y[:, level], p)
        unavailable = _interpolate(self.unavailable_x[:, level], self.unavailable_y[:, level], p)
        if level == 0:
            centred = _interpolate(self.centred_x, self.centred_y, p)
        else:
            centred = np.full_like(p, np.nan)
        return np.where(owner == OWNER_MOVER, owned, np.where(owner == OWNER_OPPONENT, unavailable, centred))


def cubeful_curves(win: np.ndarray, lose: np.ndarray, cash: np.ndarray, drop: np.ndarray,
                   can_double: np.ndarray) -> CubefulCurves:
    """The live-cube curves of all cube levels from the values at each level, (B, J) arrays each.

    At level ``j`` (cube ``v_j``): ``win``/``lose`` are the roller's equity
    when it wins/loses the game (averaged over gammons and top wins),
    ``cash`` when the other side passes a double from ``v_j`` (the roller
    wins ``v_j``), ``drop`` when the roller passes one (loses ``v_j``);
    ``can_double[:, j]``: the cube may go from level ``j`` to ``j + 1``.
    The top level is a dead cube (a straight line from ``lose`` at p = 0 to
    ``win`` at p = 1). Below it, the owner's curve goes through its cash
    point, where the other side's equity of taking the next level equals
    passing, and the other side's curve through the roller's take point; a
    doubling point is used only where it beats the straight line (a cube
    that cannot gain stays dead). The centred curve (level 0) has both.
    """
    count, levels = win.shape
    shape = (count, levels, 4)
    owned_x, owned_y = np.zeros(shape), np.zeros(shape)
    unavailable_x, unavailable_y = np.zeros(shape), np.zeros(shape)
    zeros, ones = np.zeros(count), np.ones(count)
    centred_x = np.stack([zeros, zeros, ones, ones], axis=1)
    centred_y = np.stack([lose[:, 0], lose[:, 0], win[:, 0], win[:, 0]], axis=1)
    for j in range(levels - 1, -1, -1):
        lo, hi = lose[:, j], win[:, j]
        line_x = np.stack([zeros, zeros, ones, ones], axis=1)
        line_y = np.stack([lo, lo, hi, hi], axis=1)
        if j == levels - 1:
            owned_x[:, j], owned_y[:, j] = line_x, line_y
            unavailable_x[:, j], unavailable_y[:, j] = line_x, line_y
            continue
        allowed = can_double[:, j]
        # The roller redoubles to level j+1 and the other side owns it: it passes above this point.
        cash_point = _root(unavailable_x[:, j + 1], unavailable_y[:, j + 1], cash[:, j])
        # The other side redoubles and the roller owns level j+1: the roller takes above this point.
        take_point = _root(owned_x[:, j + 1], owned_y[:, j + 1], drop[:, j])
        use_cash = allowed & (cash[:, j] > _line(lo, hi, cash_point))
        use_take = allowed & (drop[:, j] < _line(lo, hi, take_point))
        cp_x = np.where(use_cash, cash_point, 1.0)
        cp_y = np.where(use_cash, cash[:, j], hi)
        tp_x = np.where(use_take, take_point, 0.0)
        tp_y = np.where(use_take, drop[:, j], lo)
        owned_x[:, j] = np.stack([zeros, zeros, cp_x, ones], axis=1)
        owned_y[:, j] = np.stack([lo, lo, cp_y, hi], axis=1)
        unavailable_x[:, j] = np.stack([zeros, tp_x, ones, ones], axis=1)
        unavailable_y[:, j] = np.stack([lo, tp_y, hi, hi], axis=1)
        if j == 0:
            # Both doubling points on the centred curve, in order; where they cross (each side would
            # double the other out at once, a rare match score), the cube acts as the pair's midpoint.
            crossed = use_cash & use_take & (tp_x >= cp_x)
            middle_x = 0.5 * (tp_x + cp_x)
            middle_y = 0.5 * (tp_y + cp_y)
            tp_x, cp_x = np.where(crossed, middle_x, tp_x), np.where(crossed, middle_x, cp_x)
            tp_y, cp_y = np.where(crossed, middle_y, tp_y), np.where(crossed, middle_y, cp_y)
            centred_x = np.stack([zeros, tp_x, cp_x, ones], axis=1)
            centred_y = np.stack([lo, tp_y, cp_y, hi], axis=1)
    return CubefulCurves(owned_x, owned_y, unavailable_x, unavailable_y, centred_x, centred_y)


def money_live_by_levels(win: np.ndarray, lose: np.ndarray, draw: np.ndarray, points: np.ndarray,
                          owner, levels: int = 12) -> np.ndarray:
    """(B,) the level recursion of :func:`cubeful_curves` with money payoffs, per unit of cube, at level 0.

    With many levels it is Janowski's live cube (:func:`janowski_live`): the check that the match-play
    recursion is the same model as the money formulas.
    """
    count = win.shape[0]
    p, w, l, _ = average_values(win, lose, points)
    scale = 2.0 ** np.arange(levels)[None, :]
    curves = cubeful_curves(w[:, None] * scale, -l[:, None] * scale, scale.repeat(count, 0),
                            -scale.repeat(count, 0), np.ones((count, levels), dtype=bool))
    return curves.value(p, 0, np.broadcast_to(np.asarray(owner), (count,)))
