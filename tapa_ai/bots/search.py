"""Network bots with GNU Backgammon's n-ply search, batched over whole plies.

What the search computes is narrower than a full expectimax: it averages
over every roll (the chance nodes are exact), but at each roll the side to
play is taken to play the single move its **0-ply** equity ranks best, and
only that move is searched deeper; a full expectimax would search every
legal move and take the best by its deep value. This is how GNU Backgammon
evaluates at n plies: every legal move of every roll is still evaluated at
0 ply, to choose, but only the chosen one is expanded further, so a ply
costs 21 x moves evaluations per expanded position instead of multiplying
the tree by that at every level. Only the root's candidates (below) are
compared at the full depth. So the reply at every level below the root is
chosen at a shallower ply than the one it is valued at (always 0 ply), as in
GNU Backgammon's n-ply evaluation (without its pruning net). Tests in
``tests/test_search.py`` (0 to 2 plies) and ``tests/test_search_three_ply.py``
(3 plies) check the batched search, and the pre-roll values of
:meth:`NetBot.pre_roll_distributions` that the cube decisions use (0 to 3
plies), against a plain recursion of exactly this form on the reference move
generator (:mod:`tapa_ai.rules.reference`), with and without the bear-off
databases.

Values are outcome distributions (the network's classes), always read from
one side's view and swapped (:func:`~tapa_ai.net.model.swap_sides`) when the view
changes. As in GNU Backgammon:

- the **0-ply** value of an afterstate is the network's evaluation of it
  with the opponent to roll (a finished game: its exact outcome; a bear-off,
  :func:`tapa_ai.bearoff.evaluate.bearoff_mask`, the database's value instead,
  unless ``bearoff=False``);
- the **n-ply** value of an afterstate is the average, over the opponent's 21
  rolls (doubles weigh 1/36, the others 2/36), of the (n-1)-ply value of the
  opponent's reply, the reply being chosen by its 0-ply equity (the reply that
  finishes the game: its exact outcome);
- the **n-ply pre-roll** value of a position (:meth:`NetBot.pre_roll_distributions`,
  what every cube decision of an ``@Nply`` bot rests on) is the average over
  the side to move's 21 rolls of the (n-1)-ply value of the move it would
  play, chosen by its 0-ply equity; at 0 plies the network's (or the bear-off
  database's) value of the position;
- at the root, every legal move is evaluated at 0-ply, the best
  ``candidates`` within ``margin`` points of equity of the best are kept
  (GNU Backgammon's move filter), and those are evaluated at the full depth;
  with ``refine = (n, m)`` a search of 2 plies or more first evaluates them
  one ply less deep and keeps the best ``n`` within ``m`` of the best there
  (a second filter of the same form, as GNU Backgammon's move filters allow
  at every sub-ply), so that only those are searched at the full depth;
- a bear-off the two-sided table answers exactly
  (:func:`tapa_ai.bearoff.evaluate.exact_mask`) is a leaf at every depth, as
  GNU Backgammon treats its exact bear-off classes: its value is final, a
  deeper search would only reproduce it.

Every level is one call of the vectorized move generator for all positions of
all games times all 21 rolls, and one batched evaluation of all their
afterstates. A 2-ply decision with 8 candidates evaluates about 100,000
afterstates.
"""

from __future__ import annotations

import copy
from typing import Optional

import numpy as np

from ..bearoff.evaluate import exact_mask
from ..movegen.batch import PositionBatch
from ..movegen.choice import segment_argmax
from ..movegen.generate import Afterstates, generate
from ..net.evaluator import (BearoffEvaluator, Evaluator, OtherBoardGameError, check_same_board_game, evaluator_for,
                             playing_rules)
from ..rules.outcomes import swap_sides
from ..rules.rolls import ROLL_INDEX, ROLL_WEIGHTS, ROLLS
from ..deadline import check_deadline
from .base import Bot, BotError
from .settings import CubeSettings, MatchSettings, NetBotSettings, NoiseSettings, SearchSettings
from .settings import DEFAULT_CANDIDATES, DEFAULT_MARGIN, MAX_PLIES, check_refine  # noqa: F401  (their old home)

_DICE_ROLL = ROLL_INDEX[1:, 1:].ravel()
"""The index into :data:`ROLLS` of each of the 36 dice ``(a, b)``, at ``6 * (a - 1) + (b - 1)``."""



def afterstate_values(evaluator: Evaluator, positions: PositionBatch, plies: int,
                      last_ply: Optional[tuple[int, np.random.Generator]] = None,
                      same_side: Optional[np.ndarray] = None) -> np.ndarray:
    """(M, K) ``plies``-ply values of afterstates whose games go on, from the view of the side that moved.

    ``positions`` are afterstates as :class:`~tapa_ai.movegen.generate.Afterstates`
    holds them (the side that moved is ``turn``, the opponent rolls next);
    ``same_side`` (M,) marks those after which the mover itself decides again
    (:attr:`~tapa_ai.movegen.generate.Afterstates.same_side`, inside a cascade,
    docs/rules.md 10.2): their next decision is the afterstate itself, valued
    from the mover's view, and a pending stage is one decision with no roll
    (no chance node: weight 1 instead of the 21 rolls).
    ``evaluator`` gives the 0-ply values; where it values bear-offs by the
    databases (:attr:`~tapa_ai.net.evaluator.Evaluator.bearoff`), exact ones
    are not searched deeper (module docstring).
    ``last_ply = (k, rng)``: the search's last ply averages over ``k`` of the 36
    dice drawn without replacement for each position (:func:`sampled_rolls`)
    instead of all 21 rolls: an unbiased estimate of the value, about 21 / k
    times cheaper at that ply (search targets; a bot's choices stay exact).
    """
    count = len(positions)
    if count == 0:
        return np.zeros((0, evaluator.num_outcomes))
    if same_side is None:
        same_side = np.zeros(count, dtype=np.bool_)
    check_deadline()  # a served request's time limit (tapa_ai.deadline), once per ply of the search
    if plies == 0:
        return np.asarray(evaluator.evaluate_next(positions, same_side), dtype=np.float64)
    if evaluator.bearoff:
        exact = exact_mask(positions)
        if exact.any():
            values = np.empty((count, evaluator.num_outcomes))
            values[exact] = evaluator.evaluate_next(positions.take(exact), same_side[exact])
            values[~exact] = afterstate_values(evaluator, positions.take(~exact), plies, last_ply,
                                               same_side[~exact])
            return values
    nexts = positions.flipped_where(~same_side)
    if plies == 1 and last_ply is not None:
        owner, roll, weight = sampled_rolls(count, *last_ply)
    else:  # The next mover, once per roll: (M * 21) positions.
        owner, roll, weight = np.repeat(np.arange(count), len(ROLLS)), np.tile(np.arange(len(ROLLS)), count), None
    staged = nexts.stage[:, 0] > 0
    if staged.any():
        # A pending stage is played with no roll: one set of replies, weight 1.
        keep = ~staged[owner]
        kept_weight = ROLL_WEIGHTS[roll[keep]] if weight is None else weight[keep]
        stage_owner = np.flatnonzero(staged)
        owner = np.concatenate([owner[keep], stage_owner])
        roll = np.concatenate([roll[keep], np.zeros(stage_owner.size, dtype=roll.dtype)])
        weight = np.concatenate([kept_weight, np.ones(stage_owner.size)])
    replies = generate(nexts.take(owner), ROLLS[roll])
    # The next mover's view, float32 (millions of rows at 2-ply).
    reply_values = evaluator.afterstate_distributions(replies, np.float32)
    best = segment_argmax(reply_values @ evaluator.points.astype(np.float32), replies.offsets)
    values = reply_values[best].astype(np.float64)
    if plies > 1:
        going_on = np.flatnonzero(~replies.game_over[best])
        values[going_on] = afterstate_values(evaluator, replies.positions.take(best[going_on]), plies - 1,
                                             last_ply, replies.same_side[best[going_on]])
    opponent_moved = ~same_side[owner]
    values[opponent_moved] = swap_sides(values[opponent_moved])  # back to the view of the side that moved
    if weight is None:
        return np.einsum("mrk,r->mk", values.reshape(count, len(ROLLS), -1), ROLL_WEIGHTS)
    out = np.zeros((count, values.shape[1]))
    np.add.at(out, owner, values * weight[:, None])
    return out


def pre_roll_values(evaluator: Evaluator, positions: PositionBatch, plies: int) -> np.ndarray:
    """(B, K) ``plies``-ply values of positions before their side to move decides, from its view: a position
    before its mover rolls is an afterstate of the other side, which just moved; one inside a cascade
    (docs/rules.md 10.2) is an afterstate of its own mover's last stage (the same side decides again)."""
    staged = positions.stage[:, 0] > 0
    if not staged.any():
        return swap_sides(afterstate_values(evaluator, positions.flipped(), plies))
    values = np.empty((len(positions), evaluator.num_outcomes))
    values[~staged] = swap_sides(afterstate_values(evaluator, positions.take(~staged).flipped(), plies))
    values[staged] = afterstate_values(evaluator, positions.take(staged), plies,
                                       same_side=np.ones(int(staged.sum()), dtype=np.bool_))
    return values


def check_last_ply_dice(dice) -> int:
    """``dice`` as the count of the 36 dice a sampled last ply draws (1 to 36); BotError when it is not one."""
    if isinstance(dice, bool) or not isinstance(dice, (int, np.integer)) or not 1 <= dice <= 36:
        raise BotError(f"dice={dice!r}: draw 1 to 36 of the 36 dice at the last ply")
    return int(dice)


def sampled_rolls(count: int, dice: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``dice`` of the 36 dice drawn without replacement for each of ``count`` positions, as distinct rolls.

    Returns ``(owner, roll, weight)``, one entry per position and distinct
    roll drawn (grouped by position, rolls in :data:`ROLLS` order): the
    position, the index into :data:`ROLLS`, and the roll's share of the draw
    (2/k where both orders of a non-double were drawn, else 1/k). Every
    position's weights sum to 1, and their expectation is the roll's
    probability, so a weighted sum of values is an unbiased estimate of the
    average over all rolls (a simple random sample of the 36 equally likely
    dice; no correction needed).
    """
    dice = check_last_ply_dice(dice)
    picks = np.argpartition(rng.random((count, 36)), dice - 1, axis=1)[:, :dice]
    cells = np.bincount((np.arange(count)[:, None] * len(ROLLS) + _DICE_ROLL[picks]).ravel(),
                        minlength=count * len(ROLLS))
    drawn = np.flatnonzero(cells)
    return drawn // len(ROLLS), drawn % len(ROLLS), cells[drawn] / dice


def filter_candidates(equities: np.ndarray, offsets: np.ndarray, candidates: Optional[int],
                      margin: Optional[float]) -> np.ndarray:
    """Rows kept per position: the best ``candidates`` within ``margin`` of the best (None = no limit), sorted."""
    keep = []
    for start, stop in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        segment = equities[start:stop]
        order = np.argsort(-segment, kind="stable")
        if margin is not None:
            order = order[segment[order] >= segment[order[0]] - margin]
        if candidates is not None:
            order = order[:candidates]
        keep.append(start + np.sort(order))
    return np.concatenate(keep).astype(np.int64)


_UNSET = object()
"""The default of :class:`NetBot`'s keyword settings: not given."""


def _setting(group: str, field: str, doc: str) -> property:
    """A :class:`NetBot` attribute that reads and sets one field of its :attr:`NetBot.settings` (a setter makes new
    settings, checked as any are; the bot's copies keep theirs)."""

    def get(self):
        return getattr(getattr(self.settings, group), field)

    def set_(self, value) -> None:
        self.settings = self.settings.with_values(group, **{field: value})

    return property(get, set_, doc=doc)


class NetBot(Bot):
    """An evaluator choosing by ``plies``-ply expectimax (0 = greedy on its own evaluation), played by four groups of
    settings (:mod:`tapa_ai.bots.settings`)::

        NetBot(evaluator, search=SearchSettings(plies=2, refine=(2, 0.04)), cube=CubeSettings(enabled=False),
               noise=NoiseSettings(0.05, noise_seed=3), match=MatchSettings(score_play=False))
        NetBot(evaluator, settings=other_bot.settings)      # the same four groups
        NetBot(net, plies=2, candidates=None, cube=False)   # the keywords of before: the same settings

    ``model`` is an :class:`~tapa_ai.net.evaluator.Evaluator` (a network's,
    an ONNX model's, ...) or a network, which plays by its default evaluator
    (:func:`~tapa_ai.net.evaluator.evaluator_for`: the kernel where it can).
    ``bearoff``: bear-offs are valued by the exact databases (the evaluator
    wrapped in :class:`~tapa_ai.net.evaluator.BearoffEvaluator`); False: by the
    model alone, for measurements.

    The keywords ``plies``, ``candidates``, ``margin``, ``refine`` build the :class:`SearchSettings` (not with
    ``search=``), ``cube=True/False`` and ``cube_life`` the :class:`CubeSettings` (``cube=`` may also be a
    :class:`CubeSettings`). Each setting reads (and sets) as an attribute of the bot (:attr:`plies`, :attr:`noise`,
    :attr:`cube` ...): setting one replaces :attr:`settings` with checked new ones.
    """

    def __init__(self, model, plies: int = _UNSET, candidates: Optional[int] = _UNSET,  # type: ignore[assignment]
                 margin: Optional[float] = _UNSET, name: Optional[str] = None,  # type: ignore[assignment]
                 cube: "bool | CubeSettings | None" = None, cube_life: Optional[float] = None,
                 refine: Optional[tuple[int, float]] = _UNSET, bearoff: bool = True,  # type: ignore[assignment]
                 *, search: Optional[SearchSettings] = None, noise: Optional[NoiseSettings] = None,
                 match: Optional[MatchSettings] = None, settings: Optional[NetBotSettings] = None) -> None:
        self.settings = _settings(plies, candidates, margin, cube, cube_life, refine, search, noise, match, settings)
        """The bot's search, cube, noise and match settings (:class:`~tapa_ai.bots.settings.NetBotSettings`)."""
        self.evaluator: Evaluator = (model if isinstance(model, Evaluator) else evaluator_for(model, bearoff=False))
        self.bearoff = bearoff
        self.name = name or f"net@{self.plies}ply"

    plies = _setting("search", "plies", "Plies searched (0 to :data:`MAX_PLIES`).")
    candidates = _setting("search", "candidates", "Moves the root's filter keeps (None: no limit).")
    margin = _setting("search", "margin", "Points of equity within the best the root's filter keeps (None: any).")
    refine = _setting("search", "refine", "``(n, m)``: at 2 plies or more, keep the best n within m points after a "
                                          "search one ply shallower.")
    cube = _setting("cube", "enabled", "False: the passive cube (never double, always take) instead of decisions "
                                       "from the evaluation.")
    cube_life = _setting("cube", "life", "Janowski's cube life x of the cube decisions.")
    noise = _setting("noise", "noise", "Points of noise on each move's value before the best is taken (a weaker "
                                       "level of play, :mod:`tapa_ai.bots.noise`); 0: none.")
    noise_seed = _setting("noise", "noise_seed", "With :attr:`noise`: an integer makes the noise a function of the "
                                                 "seed and the position after the move (deterministic); None draws it "
                                                 "from the bot's generator.")
    score_play = _setting("match", "score_play", "False: checker play in a match ignores the score "
                                                 "(:meth:`choose_at_score` plays as :meth:`choose`, by cubeless money "
                                                 "equity); a baseline for measurements (``net:PATH,money_play``).")
    match_cube = _setting("match", "match_cube", "False: in matches too, decide as in money play (ignore the score); "
                                                 "a baseline for measurements.")
    for_wins = _setting("match", "wins", "True: checker plays by the chance of winning (:meth:`play_for_wins`).")

    @property
    def bearoff(self) -> bool:
        """True: the databases value bear-offs; False: the model does (for measurements)."""
        return self.evaluator.bearoff

    @bearoff.setter
    def bearoff(self, value: bool) -> None:
        model = self.evaluator.model
        self.evaluator = BearoffEvaluator(model) if value else model

    @property
    def rules(self):
        return self.evaluator.rules

    @property
    def net(self):
        """The torch network the evaluator computes (None for an ONNX or numpy model)."""
        return getattr(self.evaluator.model, "net", None)

    @property
    def points(self) -> np.ndarray:
        """(K,) float64 what each outcome class is worth to the checker play: the evaluator's points (the rule set
        played, or another's with ``,points=``), their signs after :meth:`play_for_wins`."""
        points = self.evaluator.points
        return np.sign(points) if self.for_wins else points

    def play_for_wins(self) -> None:
        """Choose checker plays by P(win) - P(loss) instead of the expected points (``net:PATH,wins``).

        Every win class counts +1, every loss -1, a draw 0; cube decisions still use the full distribution.
        """
        self.for_wins = True

    def check_rules(self, rules) -> None:
        if rules != self.rules:
            trained = self.evaluator.model_rules
            raise BotError(f"bot {self.name!r} was trained for rule set {trained.name!r}"
                           + (f" and plays {self.rules.name!r}" if self.rules != trained else "")
                           + f"; it cannot play {rules.name!r}")

    def playing(self, rules, points_rules=None) -> "NetBot":
        """This bot playing ``rules`` (a copy; itself where nothing changes): a rule set of its model's board game
        that scores, doubles or opens otherwise (the backgammon model playing Portes), valued with ``rules``'
        points, or ``points_rules``' (:func:`~tapa_ai.net.evaluator.playing_rules`). BotError, one line, for a
        rule set of another board game. Points set before (``,points=``) are kept unless ``points_rules`` is given."""
        current = getattr(self.evaluator.model, "points_rules", None)
        points_rules = points_rules or current
        if rules == self.rules and points_rules == current:
            return self
        try:
            for wanted in (rules, points_rules or rules):
                check_same_board_game(self.evaluator.model_rules, wanted, f"bot {self.name!r}")
        except OtherBoardGameError as error:
            raise BotError(str(error)) from None
        evaluator = playing_rules(self.evaluator, rules, points_rules)
        bot = copy.copy(self)
        bot.evaluator = evaluator
        return bot

    def evaluate(self, afterstates: Afterstates, rows: Optional[np.ndarray] = None,
                 plies: Optional[int] = None, last_ply: Optional[tuple[int, np.random.Generator]] = None
                 ) -> np.ndarray:
        """(R, K) distributions of ``afterstates`` rows (all by default) at ``plies`` (default: the bot's).

        ``last_ply``: the last ply's dice sampled (:func:`afterstate_values`)."""
        rows = np.arange(len(afterstates)) if rows is None else np.asarray(rows, dtype=np.int64)
        plies = self.plies if plies is None else plies
        values = np.zeros((rows.size, self.evaluator.num_outcomes))
        over = afterstates.game_over[rows]
        if plies == 0 or over.all():
            return self.evaluator.afterstate_distributions(afterstates.rows(rows))
        values[over] = self.evaluator.afterstate_distributions(afterstates.rows(rows[over]))
        going_on = rows[~over]
        values[~over] = afterstate_values(self.evaluator, afterstates.positions.take(going_on), plies, last_ply,
                                          afterstates.same_side[going_on])
        return values

    def ranked(self, afterstates: Afterstates, last_ply: Optional[tuple[int, np.random.Generator]] = None,
               class_values: Optional[np.ndarray] = None, plies: Optional[int] = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For every row kept by the filter: (rows, distributions at ``plies`` (default: the bot's), equities).

        Rows not kept are absent; rows are grouped by source position like ``afterstates``.
        ``last_ply``: the kept rows' full-depth values with the last ply's dice sampled
        (:func:`afterstate_values`); the filters before them stay exact. ``class_values`` (B, K): what each
        outcome class is worth to each source position's mover (a match's score, :meth:`choose_at_score`)
        instead of :attr:`points`; the filters and the equities use them (the replies inside the search are
        still chosen by the evaluator's points). The one ranking of the bot's moves: :meth:`choose` plays by it
        and the analyzer (:meth:`tapa_ai.analysis.analyzer.Analyzer.rank`) shows it.
        """
        plies = self.plies if plies is None else plies
        if class_values is None:
            worth = lambda values, rows: values @ self.points  # noqa: E731
        else:
            per_row = np.asarray(class_values, dtype=np.float64)[afterstates.source]
            worth = lambda values, rows: np.einsum("nk,nk->n", values, per_row[rows])  # noqa: E731
        base = self.evaluator.afterstate_distributions(afterstates)
        every = np.arange(len(afterstates))
        equities = worth(base, every)
        if plies == 0:
            return every, base, equities
        rows = filter_candidates(equities, afterstates.offsets, self.candidates, self.margin)
        if self.refine is not None and plies >= 2:
            shallower = worth(self.evaluate(afterstates, rows, plies - 1), rows)
            kept = filter_candidates(shallower, np.searchsorted(rows, afterstates.offsets), *self.refine)
            rows = rows[kept]
        values = self.evaluate(afterstates, rows, plies, last_ply=last_ply)
        return rows, values, worth(values, rows)

    def move_noise(self, afterstates: Afterstates, rows: np.ndarray, rng: np.random.Generator,
                   class_values: Optional[np.ndarray] = None) -> np.ndarray:
        """(R,) the noise :meth:`choose` adds to the values of ``rows`` (:attr:`noise` points; at a match score
        in the match-winning chance a point is worth there: half a single win's value minus a single loss's)."""
        from ..rules.outcomes import LOSE_SINGLE, WIN_SINGLE
        from .noise import noise_draws

        draws = noise_draws(afterstates.positions.take(rows), self.noise_seed, rng)
        if class_values is None:
            return self.noise * draws
        worth = np.asarray(class_values, dtype=np.float64)[afterstates.source[rows]]
        return self.noise * 0.5 * (worth[:, WIN_SINGLE] - worth[:, LOSE_SINGLE]) * draws

    def pre_roll_distributions(self, positions: PositionBatch, plies: Optional[int] = None) -> np.ndarray:
        """(B, K) outcome distributions of positions before their side to move rolls, from its view.

        At 0 plies the network's evaluation of the position; at ``n`` plies the
        average over the 21 rolls of the ``n - 1``-ply value of the move the
        side would play (chosen by 0-ply equity), as GNU Backgammon evaluates
        cube decisions.
        """
        return pre_roll_values(self.evaluator, positions, self.plies if plies is None else plies)

    def cube_equities(self, positions: PositionBatch, situation, plies: Optional[int] = None,
                      distributions: Optional[np.ndarray] = None):
        """The :class:`~tapa_ai.cube.equity.CubeEquities` of positions before the roll (the roller's view);
        ``distributions``: their :meth:`pre_roll_distributions`, where the caller has them already."""
        from ..cube.decisions import CubeSituation, cube_equities

        if not self.match_cube and not situation.money:
            situation = CubeSituation(situation.rules, situation.value, situation.owner)
        if distributions is None:
            distributions = self.pre_roll_distributions(positions, plies)
        return cube_equities(distributions, situation, self.cube_life)

    def offer_double(self, positions: PositionBatch, situation, rng: np.random.Generator) -> np.ndarray:
        if not self.cube or len(positions) == 0:
            return super().offer_double(positions, situation, rng)
        return self.cube_equities(positions, situation).double

    def accept_double(self, positions: PositionBatch, situation, rng: np.random.Generator) -> np.ndarray:
        if not self.cube or len(positions) == 0:
            return super().accept_double(positions, situation, rng)
        return self.cube_equities(positions, situation).take

    def choose(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        return self._choose(afterstates, rng, None)

    def choose_at_score(self, afterstates: Afterstates, rng: np.random.Generator, score) -> np.ndarray:
        """The move of the highest match-winning chance at ``score`` (each outcome class valued by
        ``score.class_values``; :attr:`score_play` False: as :meth:`choose`)."""
        if not self.score_play:
            return self.choose(afterstates, rng)
        return self._choose(afterstates, rng, score.class_values(self.evaluator.points))

    def _choose(self, afterstates: Afterstates, rng: np.random.Generator,
                class_values: Optional[np.ndarray]) -> np.ndarray:
        rows, _, equities = self.ranked(afterstates, class_values=class_values)
        if self.noise:
            equities = equities + self.move_noise(afterstates, rows, rng, class_values)
        if self.plies == 0:
            return segment_argmax(equities, afterstates.offsets, rng)
        kept_offsets = np.searchsorted(rows, afterstates.offsets)
        return rows[segment_argmax(equities, kept_offsets, rng)]


def _settings(plies, candidates, margin, cube, cube_life, refine, search, noise, match, settings) -> NetBotSettings:
    """:class:`NetBot`'s settings from its arguments: the four groups (or ``settings``), or the keywords of before
    (``plies``, ``candidates``, ``margin``, ``refine``; ``cube`` True/False and ``cube_life``); BotError for a value
    out of range or a group given both ways."""
    search_keywords = {key: value for key, value in (("plies", plies), ("candidates", candidates),
                                                     ("margin", margin), ("refine", refine)) if value is not _UNSET}
    if settings is not None:
        if not isinstance(settings, NetBotSettings):
            raise BotError(f"settings={settings!r}: want a NetBotSettings")
        given = [key for key, value in (("search", search), ("noise", noise), ("match", match), ("cube", cube),
                                        ("cube_life", cube_life)) if value is not None] + list(search_keywords)
        if given:
            raise BotError(f"NetBot: settings= holds every group; give it alone, not with {', '.join(given)}")
        return settings
    if search is None:
        search = SearchSettings(**search_keywords)
    elif search_keywords:
        raise BotError(f"NetBot: give search=SearchSettings(...) or {', '.join(search_keywords)}, not both")
    if isinstance(cube, CubeSettings):
        if cube_life is not None:
            raise BotError("NetBot: give cube=CubeSettings(...) or cube_life, not both")
        cube_settings = cube
    else:
        cube_settings = CubeSettings(**({} if cube is None else {"enabled": bool(cube)}),
                                     **({} if cube_life is None else {"life": cube_life}))
    return NetBotSettings(search, cube_settings, NoiseSettings() if noise is None else noise,
                          MatchSettings() if match is None else match)
