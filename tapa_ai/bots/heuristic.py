"""``heuristic``: a hand-crafted expert that scores every afterstate with a few dozen numpy features.

Scores are in rough equity units (a single game ~ 1 point) for the side that
moved, so that a draw (0), a pinned mother (about minus the mother points)
and ordinary positions compare sensibly; a won game scores ``1000 +
points`` and beats everything.

Everything is computed on the whole :class:`~tapa_ai.movegen.generate.Afterstates`
batch at once (mover-relative int8 arrays, see
:mod:`tapa_ai.movegen.batch`): column ``i`` is the mover's point ``i + 1``,
the mover moves towards column 0 and the opponent towards column 23.

Features, pinning games (``rules.pins``):

- opponent checkers pinned (more for a checker far from home and in our home
  board, where we can hold it while bearing in); the opponent's mother pinned
  is almost a win (its value is a share of ``mother_points``);
- own checkers pinned (the mirror image; our own mother pinned is almost a loss);
- exposure of our lone checkers: for each of the 21 rolls (36 with weights),
  whether some free opponent checker can land on each blot with one die, both
  dice (intermediate point open) or a double (three or four steps); the
  expected loss sums hit chance times the cost of being pinned there, with a
  lone mother costing a share of ``mother_points``;
- a lone mother (on our 24-point) and checkers still kept there while the
  opponent's checkers come round;
- made points (two or more, or one pinning), home-board points, the longest
  prime in front of the opponent's rearmost checker;
- pip lead, checkers borne off, gaps and stacks in the home board.

Backgammon (``contact == "hit"``): opponent checkers on the bar (worth more
against a strong home board), blots exposed to direct and indirect shots
(the opponent's bar checkers must enter first), anchors in the opponent's
home board, primes, home-board points, and, once contact is broken, a pure
race (pip lead, bear-off efficiency).

The running games (``contact == "block"``, Fevga and Narde, docs/rules.md 8): a
single checker holds a point, so what matters is the **blockade**: our points
in the 12 points in front of the opponent's rearmost checker (on its path,
which here runs the same way as ours from the other corner) and the longest
run of them (a prime, within the prime rule), minus the same for the
opponent's points in front of our rearmost checker; checkers left on our
starting point (the head) while the opponent comes round (timing); checkers
buried deep in our home board while contact lasts; the pip lead, heavier
once the race begins (both sides past each other: every checker on its own
points 1-12), and bear-off efficiency.

Gul Bara (``rules.cascades``, docs/rules.md 10.2), on top of the running
games' terms and only on its rows (Fevga's and Narde's scores are unchanged):
from a side's fourth turn a double cascades, four steps of each number from
the double's up to 6, and a stage not played in full ends the cascade, so a
double is worth up to 84 pips and the board decides how much of it is played.
For each side and number k, :func:`step_capacity` counts how many steps of k
its checkers can play along their chains of open points (a point the opponent
holds stops a chain; bearing off from point k, or from the highest point with
a higher k, once home); :func:`cascade_pips` turns that into the pips of a
cascade. The terms (``gb_*`` weights):

- an afterstate whose next decision is the mover's own (``same_side``: the
  position before its pending stage ``positions.stage``) scores the pips it
  can play of that stage and the stages after it, so a play that leaves the
  next stage playable in full comes first;
- while contact lasts, the expected playable pips of the next roll
  (:func:`expected_pips`, each side's doubles cascading or not by its turn
  count ``positions.turns``): ours (flexible checkers, not stuck in front of
  the opponent's wall) plus, weighted more, minus the opponent's (our points
  in front of its checkers stop its cascades);
- the pip lead with its own weights (``gb_pip``, ``gb_race_pip``) and the
  blockade scaled by ``gb_blockade``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from ..movegen.generate import Afterstates
from ..rules import outcomes
from ..rules.options import RuleOptions
from ..rules.rolls import DISTINCT_ROLLS
from .playable import cascade_pips, expected_pips, last_true, step_capacity
from .base import ScoringBot
from .basic import pip_counts

_COLUMNS = np.arange(24)
_POINTS = np.arange(1, 25, dtype=np.float64)



@dataclass(frozen=True)
class Weights:
    """Feature weights (equity units). ``pin_*`` apply to the pinning games, ``bg_*`` to backgammon."""

    pip: float = 0.012
    """Per pip of lead (contact)."""
    race_pip: float = 0.03
    """Per pip of lead once contact is broken."""
    off: float = 0.03
    """Per own checker borne off."""
    home_gap: float = 0.01
    """Per empty home point below our highest home checker, when bearing in/off."""
    stack: float = 0.006
    """Per checker beyond the third on one point."""
    made: float = 0.02
    """Per made point (closed to the opponent) in front of its rearmost checker."""
    home_made: float = 0.03
    """Per made point in our home board."""
    prime: tuple = (0.0, 0.0, 0.02, 0.06, 0.12, 0.22, 0.35)
    """By length of the longest run of made points in front of the opponent's rearmost checker."""
    # -- pinning games
    pin_base: float = 0.25
    """Per opponent checker pinned."""
    pin_far: float = 0.35
    """Extra per pinned checker times (its distance from home / 24)."""
    pin_home: float = 0.12
    """Extra per opponent checker pinned in our home board."""
    mother_pinned: float = 0.75
    """Share of ``mother_points`` for a pinned mother (ours: the same, negative)."""
    pinned_base: float = 0.3
    """Per own checker pinned."""
    pinned_far: float = 0.4
    """Extra per own pinned checker times (its distance from home / 24)."""
    blot_base: float = 0.15
    """Cost of one of our checkers being pinned (times its chance)."""
    blot_far: float = 0.35
    """Extra cost times (distance from home / 24)."""
    mother_alone: float = 0.08
    """A lone mother (one checker on our 24-point), even out of reach."""
    mother_stay: float = 0.02
    """Per own checker still on our 24-point, times the share of opponent checkers in our outer half (columns 12+)."""
    # -- backgammon
    bg_hit: float = 0.12
    """Per opponent checker on the bar."""
    bg_hit_board: float = 0.03
    """Extra per opponent checker on the bar per point made in our home board."""
    bg_blot_base: float = 0.05
    bg_blot_far: float = 0.15
    bg_blot_board: float = 0.25
    """Blot cost multiplier: 1 + this * (opponent's home points / 6)."""
    bg_anchor: float = 0.06
    """Per own made point in the opponent's home board."""
    bg_bar: float = 0.15
    """Per own checker left on the bar."""
    # -- running games
    run_block_near: float = 0.02
    """Extra per blocking point within 6 points in front of the other side's rearmost checker."""
    run_head: float = 0.03
    """Per own checker still on our 24-point (the head), times the share of opponent checkers past our start."""
    run_deep: float = 0.01
    """Per own checker on our points 1-3 while contact lasts (played too early: timing)."""
    # -- cascading doubles (Gul Bara, docs/rules.md 10.2): these apply only to rows whose rules cascade
    gb_pip: float = 0.01
    """Per pip of lead (contact), in place of ``pip``."""
    gb_race_pip: float = 0.03
    """Per pip of lead once contact is broken, in place of ``race_pip``."""
    gb_stage: float = 0.01
    """Per pip the mover can play of its pending stage and the stages after it (an afterstate whose next
    decision is the mover's own, ``Afterstates.same_side``), counted on the afterstate's board."""
    gb_mobility: float = 0.004
    """Per pip of our expected playable pips on our next roll (cascades stopped by closed points count only
    what is played), while contact lasts."""
    gb_block: float = 0.016
    """Per pip of the opponent's expected playable pips on its next roll (negative), while contact lasts."""
    gb_blockade: float = 1.0
    """Multiplier of the running games' blockade terms."""


PIN_WEIGHTS = replace(Weights(), home_made=0.0, prime=(0.0,) * 7, pin_base=0.125, pin_far=1.4, pin_home=0.06,
                      blot_base=0.3)
"""Weights of the pinning games (tuned by duels against earlier weights)."""
HIT_WEIGHTS = replace(Weights(), pip=0.006, stack=0.003, made=0.01, bg_hit=0.0, bg_hit_board=0.015,
                      bg_blot_base=0.2, bg_blot_far=0.3, bg_anchor=0.0)
"""Weights of backgammon (tuned by duels against ``pubeval``)."""
RUN_WEIGHTS = replace(Weights(), pip=0.01, race_pip=0.03, made=0.03, home_made=0.0,
                      prime=(0.0, 0.0, 0.02, 0.06, 0.14, 0.26, 0.40))
"""Weights of the running games (tuned by duels against ``runner``, docs/strength.md)."""


def _shift(array: np.ndarray, distance: int) -> np.ndarray:
    """Columns moved ``distance`` to the right (towards higher columns), zero-filled."""
    out = np.zeros_like(array)
    if distance < array.shape[1]:
        out[:, distance:] = array[:, : array.shape[1] - distance]
    return out


def hit_chances(sources: np.ndarray, open_: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(N, C) chance (out of 36 rolls) that the opponent can land on each target column next roll.

    ``sources`` (N, C) bool: columns with a movable opponent checker; the
    opponent moves towards higher columns. ``open_`` (N, C) bool: columns it
    may land on (intermediate points of combined moves must be open).
    ``targets`` (N, C) bool: the columns asked about. An approximation: the
    maximum-use rule and the opponent's other constraints are ignored.
    """
    if not targets.any():
        return np.zeros(targets.shape, dtype=np.float64)
    single = [None] + [_shift(sources, d) for d in range(1, 7)]
    single_open = [None] + [s & open_ for s in single[1:]]
    total = np.zeros(targets.shape, dtype=np.float64)
    for a, b, weight in DISTINCT_ROLLS:
        if a == b:
            step = single_open[a]
            reach = single[a].copy()
            for _ in range(3):
                landed = _shift(step, a)
                reach |= landed
                step = landed & open_
        else:
            reach = single[a] | single[b] | _shift(single_open[a], b) | _shift(single_open[b], a)
        total += weight * (reach & targets)
    return total / 36.0


def _longest_run(mask: np.ndarray) -> np.ndarray:
    """(N,) length of the longest run of True along axis 1."""
    run = np.zeros(mask.shape[0], dtype=np.int16)
    best = np.zeros(mask.shape[0], dtype=np.int16)
    for column in range(mask.shape[1]):
        run = (run + 1) * mask[:, column]
        np.maximum(best, run, out=best)
    return best


def _first_true(mask: np.ndarray, default: int) -> np.ndarray:
    """(N,) index of the first True per row, ``default`` where none."""
    return np.where(mask.any(axis=1), mask.argmax(axis=1), default)


def heuristic_scores(afterstates: Afterstates, pin_weights: Weights = PIN_WEIGHTS,
                     hit_weights: Weights = HIT_WEIGHTS, run_weights: Weights = RUN_WEIGHTS) -> np.ndarray:
    """(N,) score of every afterstate for the side that moved (see module docstring).

    Rows of pinning rule sets use ``pin_weights``, the running games ``run_weights``, the others
    ``hit_weights``.
    """
    positions = afterstates.positions
    n = len(positions)
    scores = np.zeros(n, dtype=np.float64)
    if n == 0:
        return scores
    pins_table, mother_table, _ = positions.rule_tables()
    pin_game = pins_table[positions.rules_id]
    running = positions.parallel_rows()
    mother_points = mother_table[positions.rules_id].astype(np.float64)
    for mask, function, weights in ((pin_game, _pin_scores, pin_weights), (running, _running_scores, run_weights),
                                    (~pin_game & ~running, _hit_scores, hit_weights)):
        rows = np.flatnonzero(mask)
        if rows.size:
            part = positions if rows.size == n else positions.take(rows)
            if function is _running_scores:
                scores[rows] = function(part, mother_points[rows], weights, afterstates.same_side[rows])
            else:
                scores[rows] = function(part, mother_points[rows], weights)
    # Finished games: a win beats everything, by its points; a draw is worth 0.
    over = afterstates.game_over
    if over.any():
        won = over & (afterstates.winner == positions.turn)
        scores[won] = 1000.0 + afterstates.result_points[won]
        scores[over & (afterstates.result_kind == outcomes.RESULT_DRAW)] = 0.0
    return scores


def _home_gaps(own: np.ndarray) -> np.ndarray:
    """(N,) empty home points below the highest home point holding one of our checkers (``own``: (N, 24))."""
    home = own[:, :6] > 0
    highest = last_true(home, -1)
    return ((~home) & (np.arange(6)[None, :] < highest[:, None])).sum(axis=1)


def _common(positions, weights: Weights, own_all: np.ndarray, made: np.ndarray,
            opp_rear: np.ndarray, own_rear: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Score terms shared by all variants, and the (N,) contact flag."""
    pips = pip_counts(positions).astype(np.float64)
    lead = pips[:, 1] - pips[:, 0]
    contact = own_rear > opp_rear
    score = np.where(contact, weights.pip, weights.race_pip) * lead
    score += weights.off * positions.off[:, 0]
    in_front = made & (_COLUMNS[None, :] > opp_rear[:, None])
    score += contact * (weights.made * in_front.sum(axis=1) + weights.home_made * made[:, :6].sum(axis=1))
    prime = np.minimum(_longest_run(in_front), len(weights.prime) - 1)
    score += contact * np.asarray(weights.prime)[prime]
    # Bearing in and off: no gaps below the highest home checker, no tall stacks.
    score -= weights.home_gap * _home_gaps(own_all) * (own_rear <= 8)
    score -= weights.stack * np.clip(own_all - 3, 0, None).sum(axis=1)
    return score, contact


def _pin_scores(positions, mother_points: np.ndarray, weights: Weights) -> np.ndarray:
    board = positions.board.astype(np.int16)
    pinned = positions.pinned
    own_top = np.clip(board, 0, None)
    opp_top = np.clip(-board, 0, None)
    own_pinned = pinned == 1
    opp_pinned = pinned == -1
    own_all = own_top + own_pinned
    opp_all = opp_top + opp_pinned
    made = (board >= 2) | ((board >= 1) & opp_pinned)
    blot = (board == 1) & (pinned == 0)
    opp_rear = _first_true(opp_all > 0, 24)
    own_rear = last_true(own_all > 0, -1)
    score, contact = _common(positions, weights, own_all, made, opp_rear, own_rear)

    # Pins. The opponent's checker at our column i is at its point 24 - i.
    far = (24 - _COLUMNS) / 24.0
    pin_value = weights.pin_base + weights.pin_far * far + weights.pin_home * (_COLUMNS < 6)
    pin_value = np.broadcast_to(pin_value, opp_pinned.shape).copy()
    pin_value[:, 0] = weights.mother_pinned * mother_points + weights.pin_base
    score += (opp_pinned * pin_value).sum(axis=1)
    # Our pinned checkers; column 23 (our 24-point) pinned is our mother.
    own_far = (_COLUMNS + 1) / 24.0
    pinned_value = weights.pinned_base + weights.pinned_far * own_far
    pinned_value = np.broadcast_to(pinned_value, own_pinned.shape).copy()
    pinned_value[:, 23] = weights.mother_pinned * mother_points + weights.pinned_base
    score -= (own_pinned * pinned_value).sum(axis=1)

    # Exposure of our lone checkers to the opponent's next roll.
    sources = board < 0
    open_for_opponent = (board <= 0) | blot
    chances = hit_chances(sources, open_for_opponent, blot)
    cost = weights.blot_base + weights.blot_far * own_far
    cost = np.broadcast_to(cost, blot.shape).copy()
    # A lone mother pinned: an immediate loss when the opponent has left its own 24-point, else nearly one.
    opponent_home_left = (board[:, 0] >= 0) & (pinned[:, 0] != -1)
    cost[:, 23] = np.where(opponent_home_left, 1.0, weights.mother_pinned) * np.maximum(mother_points, 0.5)
    score -= (chances * cost).sum(axis=1)

    # The mother: alone on our 24-point, and checkers kept back while the opponent comes round.
    has_mother = mother_points > 0
    score -= has_mother * weights.mother_alone * blot[:, 23]
    opp_advanced = opp_all[:, 12:].sum(axis=1) / 15.0
    score -= has_mother * weights.mother_stay * own_all[:, 23] * opp_advanced
    return score


def _hit_scores(positions, mother_points: np.ndarray, weights: Weights) -> np.ndarray:
    board = positions.board.astype(np.int16)
    own_all = np.clip(board, 0, None)
    opp_all = np.clip(-board, 0, None)
    made = board >= 2
    blot = board == 1
    own_bar = positions.bar[:, 0].astype(np.int16)
    opp_bar = positions.bar[:, 1].astype(np.int16)
    opp_rear = np.where(opp_bar > 0, -1, _first_true(opp_all > 0, 24))
    own_rear = np.where(own_bar > 0, 24, last_true(own_all > 0, -1))
    score, contact = _common(positions, weights, own_all, made, opp_rear, own_rear)

    home_points = made[:, :6].sum(axis=1)
    opp_home_points = (board[:, 18:] <= -2).sum(axis=1)
    score += opp_bar * (weights.bg_hit + weights.bg_hit_board * home_points)
    score -= weights.bg_bar * own_bar
    score += weights.bg_anchor * made[:, 18:].sum(axis=1)

    # Shots at our blots: a column -1 in front for the opponent's bar, which must enter first.
    n = board.shape[0]
    sources = np.zeros((n, 25), dtype=bool)
    sources[:, 1:] = (board < 0) & (opp_bar == 0)[:, None]
    sources[:, 0] = opp_bar > 0
    open_ = np.ones((n, 25), dtype=bool)
    open_[:, 1:] = board <= 1
    targets = np.zeros((n, 25), dtype=bool)
    targets[:, 1:] = blot
    chances = hit_chances(sources, open_, targets)[:, 1:]
    cost = (weights.bg_blot_base + weights.bg_blot_far * (_COLUMNS + 1) / 24.0)[None, :]
    cost = cost * (1.0 + weights.bg_blot_board * opp_home_points / 6.0)[:, None]
    score -= contact * (chances * cost).sum(axis=1)
    return score


_OPPONENT_ORDER = (np.arange(24) + 11) % 24
"""Running games: the mover's column of each of the opponent's own points 1..24 (its point q is the mover's
q + 12, or q - 12), so ``board[:, _OPPONENT_ORDER]`` reads the board along the opponent's path."""


def _blockade(blocks_by_point: np.ndarray, rear: np.ndarray, weights: Weights) -> np.ndarray:
    """(N,) value of the points in ``blocks_by_point`` (N, 24) (in the blocked side's own numbering, index =
    point - 1) in the 12 points in front of that side's rearmost checker at index ``rear``."""
    index = np.arange(24)[None, :]
    ahead = index < rear[:, None]
    front = blocks_by_point & ahead & (index >= rear[:, None] - 12)
    near = front & (index >= rear[:, None] - 6)
    prime = np.minimum(_longest_run(front), len(weights.prime) - 1)
    return weights.made * front.sum(axis=1) + weights.run_block_near * near.sum(axis=1) + \
        np.asarray(weights.prime)[prime]


def _running_scores(positions, mother_points: np.ndarray, weights: Weights,
                    same_side: Optional[np.ndarray] = None) -> np.ndarray:
    """The running games (module docstring): both sides travel the same way round, a checker holds a point.

    Rows whose doubles cascade (Gul Bara) use the ``gb_*`` weights and their extra terms (:func:`_cascade_terms`);
    ``same_side`` (N,) bool: the mover decides again next (its pending stage is ``positions.stage``)."""
    board = positions.board.astype(np.int16)
    own = np.clip(board, 0, None)
    opp = np.clip(-board, 0, None)
    opp_path = opp[:, _OPPONENT_ORDER]  # the opponent's checkers by its own point - 1
    own_on_opp_path = own[:, _OPPONENT_ORDER] > 0  # our points, by the opponent's point - 1
    opp_rear = last_true(opp_path > 0, -1)
    own_rear = last_true(own > 0, -1)
    race = (own_rear < 12) & (opp_rear < 12)
    contact = ~race
    cascades = positions.cascade_rows()
    pips = pip_counts(positions).astype(np.float64)
    lead = pips[:, 1] - pips[:, 0]
    pip_weight = np.where(contact, weights.pip, weights.race_pip)
    if cascades.any():
        pip_weight = np.where(cascades, np.where(contact, weights.gb_pip, weights.gb_race_pip), pip_weight)
    score = pip_weight * lead + weights.off * positions.off[:, 0]
    blockade = _blockade(own_on_opp_path, opp_rear, weights) - _blockade(opp > 0, own_rear, weights)
    if cascades.any():
        blockade = np.where(cascades, weights.gb_blockade * blockade, blockade)
    score += contact * blockade
    # Timing: the head kept while the opponent comes round; checkers buried early.
    opp_past_our_start = opp_path[:, :12].sum(axis=1) / 15.0  # on the opponent's points 1-12: our 13-24
    score -= contact * weights.run_head * own[:, 23] * opp_past_our_start
    score -= contact * weights.run_deep * own[:, :3].sum(axis=1)
    # Bearing in and off: no gaps below the highest home checker, no tall stacks.
    score -= weights.home_gap * _home_gaps(own) * (own_rear <= 8)
    score -= weights.stack * np.clip(own[:, :23] - 3, 0, None).sum(axis=1)
    if cascades.any():
        rows = np.flatnonzero(cascades)
        same = np.zeros(rows.size, dtype=bool) if same_side is None else np.asarray(same_side, dtype=bool)[rows]
        score[rows] += _cascade_terms(positions.take(rows), own[rows], opp_path[rows], own_rear[rows],
                                      opp_rear[rows], contact[rows], same, weights)
    return score


def _cascade_terms(positions, own: np.ndarray, opp_path: np.ndarray, own_rear: np.ndarray, opp_rear: np.ndarray,
                   contact: np.ndarray, same_side: np.ndarray, weights: Weights) -> np.ndarray:
    """(N,) the cascading-doubles terms (docs/rules.md 10.2) of running-game rows whose doubles cascade.

    - the mover's pending stage, where it decides again next: the pips it can play of that stage and of the
      stages after it (a stage not played in full ends the cascade), so that among the afterstates of a stage
      the ones that leave the next stage playable in full come first;
    - while contact lasts, the expected playable pips of each side's next roll: ours (flexibility: checkers
      with open points 1..6 ahead, a cascade not stopped by the opponent's wall) minus the opponent's (our
      points in front of its checkers stop its cascades)."""
    plain_turns = np.array([r.plain_double_turns for r in positions.rules], dtype=np.int16)[positions.rules_id]
    turns = positions.turns.astype(np.int16)
    own_open = positions.board >= 0
    own_capacity = step_capacity(own, own_open, own_rear < 6)
    score = np.zeros(len(positions), dtype=np.float64)
    stage = positions.stage.astype(np.int16)
    pending = same_side & (stage[:, 0] > 0)
    if pending.any():
        score += pending * weights.gb_stage * cascade_pips(own_capacity, np.where(pending, stage[:, 0], 0),
                                                           stage[:, 1])
    if contact.any():
        opp_open = own[:, _OPPONENT_ORDER] == 0
        opp_capacity = step_capacity(opp_path, opp_open, opp_rear < 6)
        ours = expected_pips(own_capacity, turns[:, 0] >= plain_turns)
        theirs = expected_pips(opp_capacity, turns[:, 1] >= plain_turns)
        score += contact * (weights.gb_mobility * ours - weights.gb_block * theirs)
    return score


class HeuristicBot(ScoringBot):
    """``heuristic``: the hand-crafted expert (any variant); see the module docstring."""

    name = "heuristic"

    def __init__(self, rules: RuleOptions, weights: Optional[Weights] = None):
        self.check_rules(rules)
        self.rules = rules
        self.weights = weights or (PIN_WEIGHTS if rules.pins else RUN_WEIGHTS if rules.parallel else HIT_WEIGHTS)
        """The weights of ``rules`` (a batch of other rules gets the defaults of its kind)."""

    def with_weights(self, **changes) -> "HeuristicBot":
        """A copy with some weights changed (for tuning experiments)."""
        return HeuristicBot(self.rules, replace(self.weights, **changes))

    def scores(self, afterstates: Afterstates) -> np.ndarray:
        if self.rules.pins:
            return heuristic_scores(afterstates, pin_weights=self.weights)
        if self.rules.parallel:
            return heuristic_scores(afterstates, run_weights=self.weights)
        return heuristic_scores(afterstates, hit_weights=self.weights)
