"""``pubeval``: Gerald Tesauro's public evaluator (1993), as ``gnubg_nn`` computes it, vectorized.

Pubeval is linear: a weight per (point, checkers there) for the side that
moved (a lone opposing checker counts as -1; two or more opposing checkers
count nothing), plus weights per opposing checker on the bar, per own checker
on the bar and per own checker borne off, in two weight sets: *race* (no
contact) and *contact*.

``gnubg_nn.pub_eval_score(board)`` scores one gnubg board ``[mover,
opponent]`` (see :func:`~tapa_ai.bots.gnubg.gnubg_boards`; higher is better
for the side that moved), picking the weight set from the board itself.
``gnubg_nn.pub_best_move`` instead picks it once from the position *before*
the move, so a move that breaks contact is still scored with the contact
weights. This bot follows ``pub_best_move`` (Tesauro's benchmark player).

Calling the C function row by row would also work, but it cannot use the
contact weights on a race board, and a Python loop is slow. So the bot reads
the two weight tables out of ``gnubg_nn.pub_eval_score`` once (scoring boards
with one feature changed at a time: :func:`probe_tables`, under 1,000 calls
and a millisecond; the tests check the tables against direct calls) and then scores every afterstate of a batch
with numpy table look-ups. A won game scores above every evaluation, by its
points.
"""

from __future__ import annotations

import functools

import numpy as np

from ..movegen.generate import Afterstates
from ..rules.options import RuleOptions
from .base import ScoringBot
from .gnubg import gnubg_boards, import_gnubg

RACE, CONTACT = 0, 1


@functools.lru_cache(maxsize=1)
def probe_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pubeval's weights read from ``gnubg_nn.pub_eval_score``: ``(points, opponent_bar, own_bar, off)``.

    ``points`` (2, 24, 31): score of a point of the mover's (index 0 = its
    1-point) holding ``v - 15`` checkers (negative: the opponent's), per weight
    set (``RACE``, ``CONTACT``); ``opponent_bar`` (2,) per opposing checker on
    the bar; ``own_bar`` (2,) per own checker on the bar (contact only);
    ``off`` (2,) per own checker borne off.
    """
    gnubg = import_gnubg("pubeval")
    score = gnubg.pub_eval_score
    points = np.zeros((2, 24, 31), dtype=np.float64)
    opponent_bar = np.zeros(2)
    own_bar = np.zeros(2)
    not_on_points = np.zeros(2)
    for weights in (RACE, CONTACT):
        # Contact: two opposing checkers on the bar (they count nothing else). Race: none left on the board.
        bar = 2 if weights == CONTACT else 0

        def board(mine: dict[int, int], theirs: dict[int, int] = {}, opponent_bar: int = bar,
                  mine_bar: int = 0) -> list:
            half_mine, half_theirs = [0] * 25, [0] * 25
            half_mine[24] = mine_bar
            for point, count in mine.items():
                half_mine[point - 1] = count
            for point, count in theirs.items():  # by the mover's point numbers
                half_theirs[24 - point] = count
            half_theirs[24] = opponent_bar
            return [half_mine, half_theirs]

        base = 0.0
        if weights == CONTACT:
            opponent_bar[CONTACT] = score(board({1: 1}, opponent_bar=3)) - score(board({1: 1}))
            base = bar * opponent_bar[CONTACT]
        one, two = score(board({1: 1})), score(board({2: 1}))
        both = score(board({1: 1, 2: 1}))
        per_off = not_on_points[weights] = (one + two - both - base) / 15.0
        if weights == CONTACT:
            # One checker more on the bar is one fewer borne off.
            own_bar[CONTACT] = score(board({1: 1}, mine_bar=1)) - one + per_off
        for point in range(1, 25):
            for count in range(1, 16):
                points[weights, point - 1, 15 + count] = score(board({point: count})) - base - per_off * (15 - count)
        for point in range(1, 25):
            # A lone opposing checker, with one of ours elsewhere (in a race: below it, so no contact).
            other = 1 if point != 1 else 2
            if weights == RACE and point == 1:
                continue  # a race with an opposing blot on our 1-point has none of ours left: never scored
            value = score(board({other: 1}, {point: 1})) - base - per_off * 14 - points[weights, other - 1, 16]
            points[weights, point - 1, 14] = value
    return points, opponent_bar, own_bar, not_on_points


def pubeval_features(positions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(N, 24) pubeval point values (own count, or -opposing count); (N,) opposing bar, own bar, own off."""
    board = positions.board.astype(np.int64)
    values = np.clip(board, -15, 15)
    return (values, positions.bar[:, 1].astype(np.int64), positions.bar[:, 0].astype(np.int64),
            positions.off[:, 0].astype(np.int64))


def contact_flags(positions) -> np.ndarray:
    """(N,) True where some checker of the mover is behind one of the opponent's (the bars count)."""
    board = positions.board
    own = board > 0
    opp = board < 0
    own_rear = np.where(positions.bar[:, 0] > 0, 24, np.where(own.any(1), 23 - own[:, ::-1].argmax(1), -1))
    opp_front = np.where(positions.bar[:, 1] > 0, -1, np.where(opp.any(1), opp.argmax(1), 24))
    return own_rear > opp_front


def source_contact_flags(afterstates: Afterstates) -> np.ndarray:
    """(N,) whether the position each afterstate was played from had contact (what ``pub_best_move`` uses).

    The mover's rearmost checker before the move is its rearmost now or the
    rearmost start of a step; the opponent's checkers did not move, except
    hit ones, which are on the bar now (and a hit means there was contact).
    """
    positions = afterstates.positions
    board = positions.board
    own = board > 0
    opp = board < 0
    rear_now = np.where(positions.bar[:, 0] > 0, 24, np.where(own.any(1), 23 - own[:, ::-1].argmax(1), -1))
    used = np.arange(4)[None, :] < afterstates.n_steps[:, None]
    starts = np.where(used, afterstates.steps[:, :, 0].astype(np.int64) - 1, -1).max(axis=1)
    own_rear = np.maximum(rear_now, starts)
    opp_front = np.where(positions.bar[:, 1] > 0, -1, np.where(opp.any(1), opp.argmax(1), 24))
    return own_rear > opp_front


def pubeval_scores(positions, contact: np.ndarray) -> np.ndarray:
    """(N,) pubeval of each position (seen from the side that moved) with the given weight set per row."""
    points, opponent_bar, own_bar, per_off = probe_tables()
    values, opp_bar, bar, off = pubeval_features(positions)
    which = contact.astype(np.int64)
    index = (which[:, None] * 24 + np.arange(24)[None, :]) * 31 + values + 15
    per_point = points.ravel()[index].sum(axis=1)
    scores = per_point + opponent_bar[which] * opp_bar + own_bar[which] * bar + per_off[which] * off
    return np.where(off == 15, 99999999.0, scores)


class PubevalBot(ScoringBot):
    """``pubeval``: the afterstate Tesauro's public evaluator likes best (backgammon only)."""

    name = "pubeval"
    variants = ("backgammon",)

    def __init__(self, rules: RuleOptions):
        self.check_rules(rules)
        self.rules = rules
        import_gnubg(self.name)
        probe_tables()

    def scores(self, afterstates: Afterstates) -> np.ndarray:
        scores = pubeval_scores(afterstates.positions, source_contact_flags(afterstates))
        won = afterstates.game_over & (afterstates.winner == afterstates.positions.turn)
        scores[won] = 1e9 + afterstates.result_points[won]
        return scores
