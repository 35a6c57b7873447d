"""Rollouts: a position (or each candidate move of a roll) played out many times by a bot, with variance reduction.

A **rollout** of a position before its roll plays ``games`` games from it, the
same bot moving for both sides, and averages their outcomes: cubeless outcome
probabilities and equity from the view of the side to roll (the *root*), with
95% confidence intervals. A **move analysis** (:func:`rollout_moves`) rolls
out every candidate move of a given roll, each from the position after it,
on the **same dice** (game ``g`` of every candidate sees the same rolls), and
ranks them by equity with the difference to the best and its CI, computed from
the paired games.

Variance reduction (each one measured in docs/rollout.md):

- ``rotate = k`` (1 by default): each of the first ``k`` (0, 1 or 2) rolls of
  the rollout is balanced over every block of 36 games: within a block the 36
  ordered rolls appear once each, in an order drawn at random per block (for
  ``k = 2`` the second roll too, drawn independently of the first). Games are
  rounded up to whole blocks, and the confidence intervals are computed from
  the block means (each block is an independent, stratified estimate), so they
  show the gain.
- ``luck = True`` (the default when there is an evaluator): luck-adjusted
  results. At every ply the evaluator net values the best move (by its 0-ply
  equity) for each of the 21 rolls; the *luck* of the roll that came is its
  value minus the mean over the 21 rolls. Its expectation is zero whatever the
  bot plays, so the outcome minus the summed luck (a control variate, as GNU
  Backgammon's variance reduction) has the same mean and, with a good
  evaluator, far less variance. It costs a 1-ply evaluation per ply.
- paired dice across candidates (always): differences between candidates keep
  little of the dice's noise.

Games end when the game ends, after ``truncate`` plies (then the evaluator's
0-ply value of the position, before its roll), or with ``bearoff = True`` at
the first position where neither side has contact left (the bear-off
database's value, :mod:`tapa_ai.bearoff.evaluate`).

Games are played in chunks of whole blocks; chunk ``i`` draws its dice from
``default_rng([seed, i, 0])`` and the bots' random choices from
``default_rng([seed, i, 1])``, so the result depends on the seed only, not on
the number of workers (local processes, or Ray tasks with ``ray_address``).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Optional, Sequence

import numpy as np

from ..bots.base import Bot, BotError
from ..movegen.batch import PositionBatch
from ..movegen.choice import segment_argmax
from ..movegen.generate import generate
from ..net.afterstates import afterstate_distributions
from ..net.model import outcome_classes, outcome_names, outcome_points, swap_sides
from ..notation.move_text import MoveTextError, find_move
from ..rules.options import RuleOptions
from ..rules.position import Position
from ..rules.reference import DISTINCT_ROLLS, check_dice

DEFAULT_GAMES = 1296
BLOCK = 36
"""Games per rotation block: the 36 ordered rolls."""
MAX_ROTATE = 2
DEFAULT_CHUNK_BLOCKS = 4
"""Blocks of 36 games per chunk of work (144 games)."""
MAX_PLIES = 5000
"""A rollout game longer than this is an error (no variant's game comes near it)."""

ORDERED_ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int8)
"""The 36 ordered rolls, the rotation's strata."""
ROLLS = np.array([(a, b) for a, b, _ in DISTINCT_ROLLS], dtype=np.int8)
ROLL_WEIGHTS = np.array([count for _, _, count in DISTINCT_ROLLS], dtype=np.float64) / 36.0
_ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
for _index, (_a, _b) in enumerate(ROLLS.tolist()):
    _ROLL_INDEX[_a, _b] = _ROLL_INDEX[_b, _a] = _index


class RolloutError(ValueError):
    """A rollout that cannot run as asked (bad settings, position, move or bot); the message says why."""


@dataclass(frozen=True)
class RolloutSettings:
    """How games are played and counted; see the module docstring."""

    games: int = DEFAULT_GAMES
    """Games per candidate (rounded up to whole blocks of 36 when rotating)."""
    truncate: int = 0
    """Stop each game after this many plies and take the evaluator's value (0: play to the end)."""
    bearoff: bool = False
    """Stop each game at the first bear-off position and take the database's value."""
    rotate: int = 1
    """Leading rolls balanced over every 36 games (0, 1 or 2)."""
    luck: Optional[bool] = None
    """Luck-adjusted results; None: when there is an evaluator."""
    seed: int = 1

    def check(self) -> "RolloutSettings":
        for name in ("games", "truncate", "rotate", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise RolloutError(f"{name}={value!r}: must be an integer")
        if self.games < 2:
            raise RolloutError(f"games={self.games}: roll out at least 2 games")
        if self.truncate < 0:
            raise RolloutError(f"truncate={self.truncate}: plies to play before the evaluator's value, 0 = none")
        if not 0 <= self.rotate <= MAX_ROTATE:
            raise RolloutError(f"rotate={self.rotate}: balance the first 0, 1 or 2 rolls")
        if self.seed < 0:
            raise RolloutError(f"seed={self.seed}: must be >= 0")
        if not isinstance(self.bearoff, bool) or not (self.luck is None or isinstance(self.luck, bool)):
            raise RolloutError("bearoff and luck are true or false")
        return self

    @property
    def block(self) -> int:
        """Games per independent block of the CI: 36 when rotating, else 1."""
        return BLOCK if self.rotate else 1

    @property
    def total_games(self) -> int:
        return int(math.ceil(self.games / self.block) * self.block)


# -- one chunk of games ------------------------------------------------------------------------------
def _dice(rng: np.random.Generator, games: int, ply: int, rotate: int) -> np.ndarray:
    """(games, 2) dice of one ply for every game of a chunk (drawn for all, running or not: paired)."""
    if ply < rotate:
        blocks = games // BLOCK
        order = np.concatenate([rng.permutation(BLOCK) for _ in range(blocks)])
        return ORDERED_ROLLS[order]
    return rng.integers(1, 7, size=(games, 2)).astype(np.int8)


def _luck(net, positions: PositionBatch, dice: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(M, K) luck of each roll, from the roller's view: the best move's 0-ply value minus the 21 rolls' mean."""
    count = len(positions)
    replies = generate(positions.take(np.repeat(np.arange(count), len(ROLLS))), np.tile(ROLLS, (count, 1)))
    values = afterstate_distributions(net, replies).astype(np.float64)
    best = segment_argmax(values @ points, replies.offsets)
    per_roll = values[best].reshape(count, len(ROLLS), -1)
    mean = np.einsum("mrk,r->mk", per_roll, ROLL_WEIGHTS)
    came = _ROLL_INDEX[dice[:, 0].astype(np.int64), dice[:, 1].astype(np.int64)]
    return per_roll[np.arange(count), came] - mean


def _pre_roll_values(net, positions: PositionBatch) -> np.ndarray:
    """(M, K) the net's 0-ply distribution of positions before their roll, from the roller's view."""
    from ..bots.search import afterstate_values

    return swap_sides(afterstate_values(net, positions.flipped(), 0))


def play_rollout(rules: RuleOptions, bot: Bot, evaluator, starts: PositionBatch, root_moves_first: bool,
                 games: int, settings: RolloutSettings, seed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``games`` games from each of the C positions ``starts`` (before their roll), all side by side.

    ``root_moves_first``: the side to roll of ``starts`` is the root (a position rollout) or its opponent (a
    candidate move's rollout). Game ``g`` of every start sees the same dice. Returns ``(outcomes, luck,
    plies)``: (C, games, K) outcome distributions and summed luck from the root's view (luck all 0 without
    it), and (C, games) plies played. ``evaluator`` is a network (or None) for luck and truncation.
    """
    dice_rng = np.random.default_rng([*np.atleast_1d(seed).tolist(), 0])
    bot_rng = np.random.default_rng([*np.atleast_1d(seed).tolist(), 1])
    starts_count = len(starts)
    rows = starts_count * games
    points = outcome_points(rules).astype(np.float64)
    classes = len(points)
    use_luck = evaluator is not None and settings.luck is not False  # None: when there is an evaluator
    batch = starts.take(np.repeat(np.arange(starts_count), games))
    game_of = np.arange(rows) % games
    root_moves = np.full(rows, root_moves_first)
    outcomes = np.zeros((rows, classes))
    luck = np.zeros((rows, classes))
    plies = np.zeros(rows, dtype=np.int64)
    running = np.arange(rows)
    if settings.bearoff:
        from ..bearoff.evaluate import bearoff_distributions
    for ply in range(MAX_PLIES):
        dice_all = _dice(dice_rng, games, ply, settings.rotate)
        if not running.size:
            break
        stop_rows = np.zeros(0, dtype=np.int64)
        stop_values = np.zeros((0, classes))
        if settings.bearoff:
            stop_rows, stop_values = bearoff_distributions(batch)
        if settings.truncate and ply == settings.truncate:
            stop_rows = np.arange(running.size)
            stop_values = _pre_roll_values(evaluator, batch)
            if settings.bearoff:  # the database where it knows, the net elsewhere
                known, known_values = bearoff_distributions(batch)
                stop_values[known] = known_values
        if len(stop_rows):
            stopped = running[stop_rows]
            outcomes[stopped] = np.where(root_moves[stopped, None], stop_values, swap_sides(stop_values))
            keep = np.ones(running.size, dtype=bool)
            keep[stop_rows] = False
            batch = batch.take(np.flatnonzero(keep))
            running = running[keep]
            if not running.size:
                break
        dice = dice_all[game_of[running]]
        if use_luck:
            ply_luck = _luck(evaluator, batch, dice, points)
            luck[running] += np.where(root_moves[running, None], ply_luck, swap_sides(ply_luck))
        afterstates = generate(batch, dice)
        chosen = np.asarray(bot.choose(afterstates, bot_rng), dtype=np.int64)
        plies[running] += 1
        over = afterstates.game_over[chosen]
        ended = np.flatnonzero(over)
        if ended.size:
            rows_ended = chosen[ended]
            mover_view = np.zeros((ended.size, classes))
            mover_view[np.arange(ended.size),
                       outcome_classes(afterstates.result_kind[rows_ended], np.ones(ended.size, dtype=bool))] = 1.0
            games_ended = running[ended]
            outcomes[games_ended] = np.where(root_moves[games_ended, None], mover_view, swap_sides(mover_view))
        keep = np.flatnonzero(~over)
        batch = afterstates.positions.take(chosen[keep]).flipped()
        running = running[keep]
        root_moves[running] = ~root_moves[running]
    else:
        raise RolloutError(f"a rollout game went on for more than {MAX_PLIES} plies")
    shape = (starts_count, games)
    return outcomes.reshape(*shape, classes), luck.reshape(*shape, classes), plies.reshape(shape)


# -- statistics ------------------------------------------------------------------------------------------
MIN_BLOCKS = 8
"""Fewer blocks than this: the CI is taken over single games (wider, never too narrow: the rotation only removes
variance) instead of over the block means, whose spread fewer blocks cannot estimate."""


def _mean_ci(values: np.ndarray, block: int) -> tuple[float, float]:
    """Mean of per-game ``values`` and the half-width of its 95% CI over blocks of ``block`` games."""
    if values.size // block < MIN_BLOCKS:
        block = 1
    means = values.reshape(-1, block).mean(axis=1)
    if means.size < 2:
        return float(values.mean()), math.inf
    return float(means.mean()), 1.96 * float(means.std(ddof=1)) / math.sqrt(means.size)


@dataclass
class RolloutStats:
    """What the games of one start (a position, or a candidate move) came to, from the root's view."""

    probabilities: dict[str, float]
    equity: float
    equity_ci95: tuple[float, float]
    games: int
    mean_plies: float
    move: Optional[str] = None
    difference: float = 0.0
    """Equity minus the best candidate's (0 for the best), from the same games."""
    difference_ci95: tuple[float, float] = (0.0, 0.0)
    raw_equity_ci95: Optional[tuple[float, float]] = None
    """The CI without the luck adjustment (same games), when luck was adjusted."""

    def to_dict(self) -> dict:
        data = {"probabilities": self.probabilities, "equity": self.equity, "equity_ci95": list(self.equity_ci95),
                "games": self.games, "mean_plies": self.mean_plies}
        if self.move is not None:
            data.update(move=self.move, difference=self.difference, difference_ci95=list(self.difference_ci95))
        if self.raw_equity_ci95 is not None:
            data["unadjusted_equity_ci95"] = list(self.raw_equity_ci95)
        return data


@dataclass
class RolloutResult:
    """A position's rollout (one entry in ``stats``) or a move analysis (one per candidate, best first)."""

    variant: str
    bot: str
    evaluator: Optional[str]
    settings: RolloutSettings
    stats: list[RolloutStats]
    seconds: float
    workers: int
    dice: Optional[tuple[int, int]] = None
    position: dict = field(default_factory=dict)

    @property
    def games_per_s(self) -> float:
        return sum(s.games for s in self.stats) / max(self.seconds, 1e-9)

    def to_dict(self) -> dict:
        settings = asdict(self.settings)
        settings["games"] = self.settings.total_games
        common = {"variant": self.variant, "bot": self.bot, "evaluator": self.evaluator, "settings": settings,
                  "seconds": self.seconds, "games_per_s": self.games_per_s, "workers": self.workers,
                  "position": self.position}
        if self.dice is None:
            return {**self.stats[0].to_dict(), **common}
        return {"dice": list(self.dice), "moves": [s.to_dict() for s in self.stats], **common}

    def report(self) -> str:
        s = self.settings
        how = [f"{s.total_games} games a {'move' if self.dice else 'position'}", f"bot {self.bot}", f"seed {s.seed}"]
        if s.rotate:
            how.append(f"first {s.rotate} roll{'s' if s.rotate > 1 else ''} rotated")
        if s.luck and self.evaluator:
            how.append(f"luck-adjusted by {self.evaluator}")
        if s.truncate:
            how.append(f"truncated after {s.truncate} plies")
        if s.bearoff:
            how.append("stopped at the bear-off database")
        lines = [f"rollout ({self.variant}; {', '.join(how)})"]
        if self.dice is None:
            stats = self.stats[0]
            lines.append(f"  equity   {stats.equity:+.4f}  95% CI [{stats.equity_ci95[0]:+.4f}, "
                         f"{stats.equity_ci95[1]:+.4f}]")
            lines.append("  " + "  ".join(f"{name} {p:.4f}" for name, p in stats.probabilities.items()))
        else:
            lines.append(f"  dice {self.dice[0]}-{self.dice[1]}")
            width = max(len(s.move or "") for s in self.stats)
            for rank, stats in enumerate(self.stats, 1):
                diff = ("" if rank == 1 else f"  {stats.difference:+.4f} [{stats.difference_ci95[0]:+.4f}, "
                        f"{stats.difference_ci95[1]:+.4f}]")
                lines.append(f"  {rank:2d}. {stats.move:<{width}}  {stats.equity:+.4f} "
                             f"[{stats.equity_ci95[0]:+.4f}, {stats.equity_ci95[1]:+.4f}]{diff}")
        lines.append(f"  {self.seconds:.1f} s, {self.games_per_s:.0f} games/s, {self.workers} "
                     f"worker{'s' if self.workers > 1 else ''}")
        return "\n".join(lines)


def summarise(rules: RuleOptions, outcomes: np.ndarray, luck: np.ndarray, plies: np.ndarray,
              settings: RolloutSettings, adjusted: bool, moves: Optional[Sequence[str]] = None
              ) -> list[RolloutStats]:
    """Per-start :class:`RolloutStats` from :func:`play_rollout`'s arrays; with ``moves``, ranked best first."""
    points = outcome_points(rules).astype(np.float64)
    names = outcome_names(rules)
    results = outcomes - luck if adjusted else outcomes
    equities = results @ points  # (C, G)
    raw = outcomes @ points
    block = settings.block
    stats = []
    for c in range(outcomes.shape[0]):
        mean, half = _mean_ci(equities[c], block)
        raw_ci = None
        if adjusted:
            raw_mean, raw_half = _mean_ci(raw[c], block)
            raw_ci = (raw_mean - raw_half, raw_mean + raw_half)
        probabilities = dict(zip(names, (float(p) for p in results[c].mean(axis=0))))
        stats.append(RolloutStats(probabilities, mean, (mean - half, mean + half), int(outcomes.shape[1]),
                                  float(plies[c].mean()), move=None if moves is None else moves[c],
                                  raw_equity_ci95=raw_ci))
    if moves is not None:
        best = int(np.argmax([s.equity for s in stats]))
        for c, entry in enumerate(stats):
            difference, half = _mean_ci(equities[c] - equities[best], block) if c != best else (0.0, 0.0)
            entry.difference = difference
            entry.difference_ci95 = (difference - half, difference + half)
        stats.sort(key=lambda s: -s.equity)
    return stats


# -- workers ------------------------------------------------------------------------------------------
def _rollout_chunk(job: tuple) -> tuple[int, tuple]:
    """One chunk in a worker (the bot and the evaluator built by :func:`tapa_ai.arena.match._init_worker`)."""
    from .match import _WORKER

    index, games, seed, starts, root_moves_first, settings, has_evaluator = job
    evaluator = _WORKER["b"].net if has_evaluator else None
    return index, play_rollout(_WORKER["rules"], _WORKER["a"], evaluator, PositionBatch.from_positions(starts),
                               root_moves_first, games, settings, [seed, index])


def _evaluator_spec(bot_spec: str, evaluator: Optional[str], rules: RuleOptions, settings: RolloutSettings
                    ) -> tuple[Optional[str], Bot]:
    """The evaluator's spec (None: none) and the built rollout bot, checked."""
    from ..bots.search import NetBot
    from ..bots.spec import make_bot

    bot = make_bot(bot_spec, rules)
    if evaluator is None and isinstance(bot, NetBot):
        evaluator = bot_spec
    if evaluator is not None:
        judge = make_bot(evaluator, rules)
        judge.close()
        if not isinstance(judge, NetBot):
            raise RolloutError(f"evaluator {evaluator!r}: must be a net: spec (luck and truncation use its "
                               f"0-ply evaluation)")
    if settings.truncate and evaluator is None:
        raise RolloutError(f"truncate={settings.truncate}: a truncated game is valued by a network; the bot "
                           f"{bot_spec!r} has none, so give an evaluator (--evaluator net:PATH)")
    if settings.luck and evaluator is None:
        raise RolloutError(f"the luck adjustment needs a network; the bot {bot_spec!r} has none, so give an "
                           f"evaluator (--evaluator net:PATH) or turn it off")
    return evaluator, bot


def _run(rules: RuleOptions, bot_spec: str, evaluator: Optional[str], starts: list[Position],
         root_moves_first: bool, settings: RolloutSettings, workers: int, ray_address: Optional[str],
         progress: bool, chunk_blocks: int = DEFAULT_CHUNK_BLOCKS):
    """Play the rollout of ``starts`` over chunks and workers; (outcomes, luck, plies, evaluator, seconds, workers)."""
    from tqdm import tqdm

    from .match import _play_jobs

    settings = settings.check()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise RolloutError(f"workers={workers!r}: must be an integer >= 1")
    try:
        evaluator, bot = _evaluator_spec(bot_spec, evaluator, rules, settings)
        bot.close()
    except BotError as error:
        raise RolloutError(str(error)) from None
    settings = replace(settings, luck=evaluator is not None if settings.luck is None else settings.luck)
    total = settings.total_games
    per_chunk = chunk_blocks * BLOCK  # whole blocks: a rotated roll is a permutation of each block
    jobs = [(index, min(per_chunk, total - start), settings.seed, starts, root_moves_first, settings,
             evaluator is not None) for index, start in enumerate(range(0, total, per_chunk))]
    parts: dict[int, tuple] = {}
    bar = tqdm(total=total * len(starts), unit="game", disable=not progress, desc="rollout", dynamic_ncols=True)

    def done(index: int, arrays: tuple) -> None:
        parts[index] = arrays
        bar.update(arrays[0].shape[0] * arrays[0].shape[1])

    start = time.perf_counter()
    try:
        used = _play_jobs(_rollout_chunk, bot_spec, evaluator or bot_spec, rules, jobs, workers, ray_address, done)
    except BotError as error:
        raise RolloutError(str(error)) from None
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    outcomes, luck, plies = (np.concatenate([parts[i][k] for i in range(len(jobs))], axis=1) for k in range(3))
    return outcomes, luck, plies, evaluator, seconds, used, settings


def _check_position(position: Position, rules: RuleOptions) -> None:
    if position.result is not None:
        raise RolloutError("the game in this position is already over: there is nothing to roll out")
    if position.rules != rules:
        raise RolloutError(f"the position is {position.rules.name!r} but the bot plays {rules.name!r}")


def rollout_position(position: Position, bot: str, settings: RolloutSettings = RolloutSettings(),
                     evaluator: Optional[str] = None, workers: int = 1, ray_address: Optional[str] = None,
                     progress: bool = True) -> RolloutResult:
    """Roll out ``position`` before its roll: cubeless probabilities and equity for its side to roll."""
    from ..notation.json_position import position_to_json

    rules = position.rules
    _check_position(position, rules)
    outcomes, luck, plies, evaluator, seconds, used, settings = _run(rules, bot, evaluator, [position], True,
                                                                     settings, workers, ray_address, progress)
    stats = summarise(rules, outcomes, luck, plies, settings, settings.luck)
    return RolloutResult(rules.name, bot, evaluator, settings, stats, seconds, used,
                         position=position_to_json(position))


def candidate_moves(position: Position, dice: tuple[int, int], ranker: Optional[str], count: int,
                    moves: Optional[Sequence[str]] = None) -> list[tuple[str, Position]]:
    """(move text, position after it) of the moves to roll out: ``moves`` as given, else the ``count`` best of
    ``ranker`` (a net: spec; its search depth ranks them), else every legal move when there are at most
    ``count``."""
    from ..movegen.generate import legal_moves_fast
    from ..notation.move_text import format_move

    legal = legal_moves_fast(position, dice)
    if moves:
        chosen = []
        for text in moves:
            if not isinstance(text, str):
                raise RolloutError(f"move {text!r}: a move is text in the move notation, e.g. '24/18 13/11'")
            try:
                move = find_move(position, dice, text, legal)
            except MoveTextError as error:
                raise RolloutError(f"move {text!r}: {error}") from None
            if any(move.position == other for _, other in chosen):
                raise RolloutError(f"move {text!r}: the same move as another one given")
            chosen.append((format_move(move), move.position))
        return chosen
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise RolloutError(f"candidates={count!r}: roll out at least 1 move")
    if len(legal) <= count or ranker is None:
        if len(legal) > count:
            raise RolloutError(f"{len(legal)} legal moves: give the moves to roll out, or a net to rank them")
        return [(format_move(move), move.position) for move in legal]
    from ..bots.search import NetBot
    from ..bots.spec import make_bot

    try:
        judge = make_bot(ranker, position.rules)
    except BotError as error:
        raise RolloutError(str(error)) from None
    if not isinstance(judge, NetBot):
        raise RolloutError(f"candidates are ranked by a net: spec, not {ranker!r}")
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    rows, _, equities = judge.ranked(afterstates)
    order = rows[np.argsort(-equities, kind="stable")][:count]
    return [(afterstates.move_text(int(row)), afterstates.position(int(row))) for row in order]


def rollout_moves(position: Position, dice, bot: str, settings: RolloutSettings = RolloutSettings(),
                  moves: Optional[Sequence[str]] = None, candidates: int = 5, ranker: Optional[str] = None,
                  evaluator: Optional[str] = None, workers: int = 1, ray_address: Optional[str] = None,
                  progress: bool = True) -> RolloutResult:
    """Move analysis: every candidate move of ``dice`` rolled out on the same dice, ranked best first.

    The candidates are ``moves`` (move texts), else the ``candidates`` best by ``ranker`` (a ``net:`` spec,
    default: the bot when it is a net, else the evaluator). Equities are the mover's.
    """
    from ..notation.json_position import position_to_json

    rules = position.rules
    _check_position(position, rules)
    try:
        dice = check_dice(dice)
    except ValueError as error:
        raise RolloutError(str(error)) from None
    if ranker is None:
        ranker = bot if bot.startswith("net:") else evaluator
    chosen = candidate_moves(position, dice, ranker, candidates, moves)
    return _analyse(rules, bot, evaluator, chosen, dice, settings, workers, ray_address, progress,
                    position_to_json(position))


def _analyse(rules, bot, evaluator, chosen, dice, settings, workers, ray_address, progress, position_json):
    from ..rules.position import other

    points = outcome_points(rules).astype(np.float64)
    finished = [(text, after) for text, after in chosen if after.result is not None]
    going_on = [(text, after) for text, after in chosen if after.result is None]
    settings = settings.check()
    games = settings.total_games
    classes = len(points)
    starts = [_to_roll(after, other(after.turn)) for _, after in going_on]
    outcomes = np.zeros((len(chosen), games, classes))
    luck = np.zeros_like(outcomes)
    plies = np.zeros((len(chosen), games), dtype=np.int64)
    seconds, used = 0.0, workers
    if starts:
        part = _run(rules, bot, evaluator, starts, False, settings, workers, ray_address, progress)
        evaluator, seconds, used, settings = part[3], part[4], part[5], part[6]
    else:
        evaluator = None
        settings = replace(settings, luck=False)
    order = [text for text, _ in going_on] + [text for text, _ in finished]
    if starts:
        outcomes[:len(starts)], luck[:len(starts)], plies[:len(starts)] = part[0], part[1], part[2]
    for k, (_, after) in enumerate(finished):
        from ..net.model import outcome_class

        outcomes[len(starts) + k, :, outcome_class(after.result, after.turn)] = 1.0
    stats = summarise(rules, outcomes, luck, plies, settings, settings.luck, moves=order)
    return RolloutResult(rules.name, bot, evaluator, settings, stats, seconds, used, dice=tuple(dice),
                         position=position_json)


def _to_roll(position: Position, side: str) -> Position:
    """``position`` with ``side`` to roll."""
    return replace(position, turn=side)
