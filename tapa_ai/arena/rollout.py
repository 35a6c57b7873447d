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
- ``luck = True`` (off by default: see docs/rollout.md for what it costs and
  buys): luck-adjusted results. At every ply the evaluator net values the best move (by its 0-ply
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

The games of a chunk are played side by side on the game runner (:mod:`tapa_ai.arena.runner`).
Games are played in chunks of whole blocks; chunk ``i`` draws its dice from
``default_rng([seed, i, 0])`` and the bots' random choices from
``default_rng([seed, i, 1])``, so the result depends on the seed only, not on
the number of workers (local processes, or Ray tasks with ``ray_address``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Optional, Sequence

import numpy as np

from ..bots.base import Bot, BotError
from ..deadline import check_deadline
from ..movegen.batch import PositionBatch
from ..movegen.choice import segment_argmax
from ..movegen.generate import generate
from ..rules.outcomes import outcome_classes, outcome_points, swap_sides
from ..notation.move_text import MoveTextError, find_move
from ..rules.options import RuleOptions
from ..rules.position import Position
from ..rules.reference import check_dice
from ..rules.rolls import ORDERED_ROLLS, ROLL_INDEX, ROLL_WEIGHTS, ROLLS
from .rollout_report import (BLOCK, DEFAULT_GAMES, MAX_ROTATE, RolloutError, RolloutResult, RolloutSettings,
                             RolloutStats, summarise)
from .runner import GameRunner, Ply

__all__ = ["BLOCK", "DEFAULT_GAMES", "MAX_ROTATE", "MAX_PLIES", "RolloutError", "RolloutResult", "RolloutSettings",
           "RolloutStats", "LocalPlayer", "SpecPlayer", "candidate_moves", "moves_rollout", "play_rollout",
           "position_rollout", "roll_luck", "rollout_moves", "rollout_position", "summarise"]

DEFAULT_CHUNK_BLOCKS = 4
"""Blocks of 36 games per chunk of work (144 games)."""
MAX_PLIES = 20_000
"""A rollout game still going after this many plies is valued by the evaluator there (an error without one).
Hitting games between two bots can run long (gnubg:0 against itself from a messy backgammon position: 1,537
plies once in 36 games), and in the pin variants both sides can be left passing for ever."""



# -- one chunk of games ------------------------------------------------------------------------------
def _dice(rng: np.random.Generator, games: int, ply: int, rotate: int) -> np.ndarray:
    """(games, 2) dice of one ply for every game of a chunk (drawn for all, running or not: paired)."""
    if ply < rotate:
        blocks = games // BLOCK
        order = np.concatenate([rng.permutation(BLOCK) for _ in range(blocks)])
        return ORDERED_ROLLS[order]
    return rng.integers(1, 7, size=(games, 2)).astype(np.int8)


def roll_luck(evaluator, positions: PositionBatch, dice: np.ndarray, points: np.ndarray, distributions=None,
              weights: np.ndarray = ROLL_WEIGHTS) -> np.ndarray:
    """(M, K) luck of each roll, from the roller's view: the best move's 0-ply value minus the 21 rolls' mean.

    ``distributions``: afterstates -> (N, K) their 0-ply values from the mover's view (default: the
    :class:`~tapa_ai.net.evaluator.Evaluator` ``evaluator``'s; ``tapa-ai analyse`` passes its bot's, which
    value bear-offs by the database); ``weights``: the chance of each of :data:`ROLLS` (default the dice's;
    an opening roll that cannot be a double has its own). Rollouts and game analysis share this definition.
    """
    count = len(positions)
    staged = positions.stage[:, 0] > 0
    if staged.any():
        # Inside a cascade a stage is played with no roll: no luck (docs/rules.md 10.2).
        luck = np.zeros((count, len(points)))
        rolled = np.flatnonzero(~staged)
        if rolled.size:
            luck[rolled] = roll_luck(evaluator, positions.take(rolled), dice[rolled], points,
                                     distributions, weights)
        return luck
    replies = generate(positions.take(np.repeat(np.arange(count), len(ROLLS))), np.tile(ROLLS, (count, 1)))
    if distributions is None:
        values = evaluator.afterstate_distributions(replies)
    else:
        values = np.asarray(distributions(replies), dtype=np.float64)
    best = segment_argmax(values @ points, replies.offsets)
    per_roll = values[best].reshape(count, len(ROLLS), -1)
    mean = np.einsum("mrk,r->mk", per_roll, weights)
    came = ROLL_INDEX[dice[:, 0].astype(np.int64), dice[:, 1].astype(np.int64)]
    return per_roll[np.arange(count), came] - mean


def _pre_roll_values(evaluator, positions: PositionBatch) -> np.ndarray:
    """(M, K) the evaluator's 0-ply distribution of positions before their roll, from the roller's view."""
    from ..bots.search import pre_roll_values

    return pre_roll_values(evaluator, positions, 0)


def play_rollout(rules: RuleOptions, bot: Bot, evaluator, starts: PositionBatch,
                 root_moves_first: bool | Sequence[bool], games: int, settings: RolloutSettings, seed
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``games`` games from each of the C positions ``starts`` (before their roll), all side by side.

    ``root_moves_first`` (one for all, or one a start): the side to move of a start is the root (a position
    rollout; a candidate move inside a cascade, whose mover plays the next stage) or its opponent (a candidate
    move's rollout). Game ``g`` of every start sees the same dice. Returns ``(outcomes, luck,
    plies)``: (C, games, K) outcome distributions and summed luck from the root's view (luck all 0 without
    it), and (C, games) plies played. ``evaluator`` is the :class:`~tapa_ai.net.evaluator.Evaluator` (or None)
    of luck (by its model, without the bear-off databases) and truncation (as the evaluator gives it).
    """
    starts_count = len(starts)
    runner = _RolloutGames(rules, bot, evaluator, starts_count, games, settings, seed)
    rows = starts_count * games
    first = np.broadcast_to(np.asarray(root_moves_first, dtype=bool), (starts_count,))
    runner.start(np.arange(rows), starts.take(np.repeat(np.arange(starts_count), games)), np.repeat(first, games))
    runner.run()
    shape, classes = (starts_count, games), runner.outcomes.shape[1]
    return runner.outcomes.reshape(*shape, classes), runner.luck.reshape(*shape, classes), runner.plies.reshape(shape)


class _RolloutGames(GameRunner):
    """The games of :func:`play_rollout` on the game runner: the bot plays both sides (A is the root: the
    runner's ``mover_is_a`` says the root is to move); dice from ``[seed, 0]``, the bot's choices from
    ``[seed, 1]``; a game stops before its roll at a bear-off or truncated, and is valued after
    :data:`MAX_PLIES`."""

    def __init__(self, rules: RuleOptions, bot: Bot, evaluator, starts: int, games: int,
                 settings: RolloutSettings, seed) -> None:
        rows = starts * games
        super().__init__(bot, np.random.default_rng([*np.atleast_1d(seed).tolist(), 1]), rows, MAX_PLIES)
        self.dice_rng = np.random.default_rng([*np.atleast_1d(seed).tolist(), 0])
        self.evaluator, self.settings, self.games_per_start = evaluator, settings, games
        self.points = outcome_points(rules).astype(np.float64)
        self.use_luck = evaluator is not None and settings.luck
        self.game_of = np.arange(rows) % games
        self.outcomes = np.zeros((rows, len(self.points)))
        """(rows, K) each game's outcome distribution, from the root's view."""
        self.luck = np.zeros((rows, len(self.points)))
        """(rows, K) each game's summed luck, from the root's view."""

    def settle(self, games: np.ndarray, values: np.ndarray) -> None:
        """The outcomes of ``games``: ``values`` (M, K) from the view of the side to move in each."""
        self.outcomes[games] = np.where(self.mover_is_a[games, None], values, swap_sides(values))

    def before_roll(self) -> Optional[np.ndarray]:
        """Games stopped before their roll: at a bear-off position (the database's value), or truncated."""
        check_deadline()  # a served request's time limit (tapa_ai.deadline)
        settings = self.settings
        stop_rows = np.zeros(0, dtype=np.int64)
        stop_values = np.zeros((0, len(self.points)))
        if settings.bearoff:
            from ..bearoff.evaluate import bearoff_distributions

            stop_rows, stop_values = bearoff_distributions(self.positions)
        if settings.truncate and self.ply == settings.truncate:
            stop_rows = np.arange(self.games.size)
            stop_values = _pre_roll_values(self.evaluator, self.positions)
            if settings.bearoff:  # the database where it knows, the net elsewhere
                known, known_values = bearoff_distributions(self.positions)
                stop_values[known] = known_values
        if not len(stop_rows):
            return None
        self.settle(self.games[stop_rows], stop_values)
        return stop_rows

    def dice(self) -> np.ndarray:
        """Every game of a start rolls the same dice: drawn per ply for all ``games`` (running or not)."""
        return _dice(self.dice_rng, self.games_per_start, self.ply, self.settings.rotate)[self.game_of[self.games]]

    def after_choice(self, ply: Ply) -> None:
        if self.use_luck:
            ply_luck = roll_luck(self.evaluator.model, ply.positions, ply.dice, self.points)
            self.luck[ply.games] += np.where(ply.mover_is_a[:, None], ply_luck, swap_sides(ply_luck))

    def game_over(self, ply: Ply, rows: np.ndarray) -> None:
        mover_view = np.zeros((rows.size, len(self.points)))
        kinds = ply.afterstates.result_kind[ply.chosen[rows]]
        mover_view[np.arange(rows.size), outcome_classes(kinds, np.ones(rows.size, dtype=bool))] = 1.0
        self.settle(ply.games[rows], mover_view)

    def unfinished(self, rows: np.ndarray) -> None:
        """A game still going after :data:`MAX_PLIES` plies: the evaluator's value there."""
        if self.evaluator is None:
            raise RolloutError(f"{rows.size} rollout game(s) went on for more than {MAX_PLIES} plies; give an "
                               f"evaluator (--evaluator net:PATH) to value games that long")
        self.settle(self.games[rows], _pre_roll_values(self.evaluator, self.positions.take(rows)))


# -- playing the chunks ---------------------------------------------------------------------------------
def _chunks(total: int, chunk_blocks: int = DEFAULT_CHUNK_BLOCKS) -> list[tuple[int, int]]:
    """(index, games) of every chunk: whole blocks of 36 (a rotated roll is a permutation of each block)."""
    per_chunk = chunk_blocks * BLOCK
    return [(index, min(per_chunk, total - start)) for index, start in enumerate(range(0, total, per_chunk))]


def _resolved(settings: RolloutSettings, evaluator_name: Optional[str], bot_name: str) -> RolloutSettings:
    """``settings`` checked against the evaluator there is (or not)."""
    settings = settings.check()
    if settings.truncate and evaluator_name is None:
        raise RolloutError(f"truncate={settings.truncate}: a truncated game is valued by a network; the bot "
                           f"{bot_name!r} has none, so give an evaluator (--evaluator net:PATH)")
    if settings.luck and evaluator_name is None:
        raise RolloutError(f"the luck adjustment needs a network; the bot {bot_name!r} has none, so give an "
                           f"evaluator (--evaluator net:PATH) or leave out the luck adjustment")
    return settings


class _Player:
    """Plays the games of a rollout: ``play(starts, root_moves_first)`` -> (outcomes, luck, plies) as
    :func:`play_rollout`, over chunks seeded ``[seed, index]``; ``seconds`` and ``workers`` of the last call."""

    bot_name: str
    evaluator_name: Optional[str]
    settings: RolloutSettings
    seconds = 0.0
    workers = 1

    def play(self, starts: list[Position], root_moves_first: bool | Sequence[bool]
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from tqdm import tqdm

        total = self.settings.total_games
        jobs = _chunks(total)
        parts: dict[int, tuple] = {}
        bar = tqdm(total=total * len(starts), unit="game", disable=not self.progress, desc="rollout",
                   dynamic_ncols=True)

        def done(index: int, arrays: tuple) -> None:
            parts[index] = arrays
            bar.update(arrays[0].shape[0] * arrays[0].shape[1])

        start = time.perf_counter()
        try:
            self._play_jobs(jobs, starts, root_moves_first, done)
        except BotError as error:
            raise RolloutError(str(error)) from None
        finally:
            bar.close()
        self.seconds = time.perf_counter() - start
        return tuple(np.concatenate([parts[i][k] for i in range(len(jobs))], axis=1) for k in range(3))


class SpecPlayer(_Player):
    """Bots given as spec strings, built in each worker process (``workers`` local processes or Ray tasks)."""

    def __init__(self, rules: RuleOptions, bot: str, evaluator: Optional[str], settings: RolloutSettings,
                 workers: int = 1, ray_address: Optional[str] = None, progress: bool = True) -> None:
        from ..bots.search import NetBot
        from ..bots.spec import make_bot
        from .workers import warm_up

        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise RolloutError(f"workers={workers!r}: must be an integer >= 1")
        try:
            built = make_bot(bot, rules)
            try:
                warm_up(built, rules)  # the numba compile off the clock and before the progress bar
            finally:
                built.close()
            if evaluator is None and isinstance(built, NetBot):
                evaluator = bot
            if evaluator is not None:
                judge = built if evaluator == bot else make_bot(evaluator, rules)
                if judge is not built:
                    try:
                        warm_up(judge, rules)
                    finally:
                        judge.close()
                if not isinstance(judge, NetBot):
                    raise RolloutError(f"evaluator {evaluator!r}: must be a net: spec (luck and truncation use "
                                       f"its 0-ply evaluation)")
        except BotError as error:
            raise RolloutError(str(error)) from None
        self.rules, self.bot_name, self.evaluator_name = rules, bot, evaluator
        self.settings = _resolved(settings, evaluator, bot)
        self.workers, self.ray_address, self.progress = workers, ray_address, progress

    def _play_jobs(self, jobs, starts, root_moves_first, done) -> None:
        from .workers import play_jobs

        full = [(index, games, self.settings.seed, starts, root_moves_first, self.settings,
                 self.evaluator_name is not None) for index, games in jobs]
        self.workers = play_jobs(_rollout_chunk, self.bot_name, self.evaluator_name or self.bot_name, self.rules,
                                  full, self.workers, self.ray_address, done)


class LocalPlayer(_Player):
    """Bot objects, played in this process (the engine's ``rollout`` command); same games as :class:`SpecPlayer`
    with the bots of the same specs."""

    def __init__(self, rules: RuleOptions, bot: Bot, evaluator, settings: RolloutSettings,
                 evaluator_name: Optional[str] = None, progress: bool = False) -> None:
        """``evaluator``: an :class:`~tapa_ai.net.evaluator.Evaluator` (or None) valuing luck and truncated games,
        named ``evaluator_name``."""
        self.rules, self.bot, self.evaluator = rules, bot, evaluator
        self.bot_name = bot.name
        self.evaluator_name = None if evaluator is None else (evaluator_name or "evaluator")
        self.settings = _resolved(settings, self.evaluator_name, bot.name)
        self.progress = progress

    def _play_jobs(self, jobs, starts, root_moves_first, done) -> None:
        batch = PositionBatch.from_positions(starts)
        for index, games in jobs:
            done(index, play_rollout(self.rules, self.bot, self.evaluator, batch, root_moves_first, games,
                                     self.settings, [self.settings.seed, index]))


def _rollout_chunk(job: tuple) -> tuple[int, tuple]:
    """One chunk in a worker (the bot and the evaluator built by :func:`tapa_ai.arena.workers.init_worker`)."""
    from .workers import WORKER

    index, games, seed, starts, root_moves_first, settings, has_evaluator = job
    evaluator = WORKER["b"].evaluator if has_evaluator else None
    return index, play_rollout(WORKER["rules"], WORKER["a"], evaluator, PositionBatch.from_positions(starts),
                               root_moves_first, games, settings, [seed, index])


# -- the two questions ---------------------------------------------------------------------------------------
def _check_position(position: Position, rules: RuleOptions) -> None:
    if not isinstance(position, Position):
        raise RolloutError(f"a rollout starts from a Position, not {type(position).__name__}")
    if position.result is not None:
        raise RolloutError("the game in this position is already over: there is nothing to roll out")
    if position.rules != rules:
        raise RolloutError(f"the position is {position.rules.name!r} but the bot plays {rules.name!r}")


def position_rollout(player: _Player, position: Position) -> RolloutResult:
    """Roll out ``position`` before its roll with ``player``: probabilities and equity for its side to roll."""
    from ..notation.json_position import position_to_json

    _check_position(position, player.rules)
    outcomes, luck, plies = player.play([position], True)
    stats = summarise(player.rules, outcomes, luck, plies, player.settings, player.settings.luck)
    return RolloutResult(player.rules.name, player.bot_name, player.evaluator_name, player.settings, stats,
                         player.seconds, player.workers, position=position_to_json(position))


def rollout_position(position: Position, bot: str, settings: RolloutSettings = RolloutSettings(),
                     evaluator: Optional[str] = None, workers: int = 1, ray_address: Optional[str] = None,
                     progress: bool = True) -> RolloutResult:
    """Roll out ``position`` before its roll: cubeless probabilities and equity for its side to roll.

    ``bot`` plays both sides (a spec string); ``evaluator`` (a ``net:`` spec, default: the bot when it is a
    net) values luck and truncated games.
    """
    if not isinstance(position, Position):
        raise RolloutError(f"a rollout starts from a Position, not {type(position).__name__}")
    player = SpecPlayer(position.rules, bot, evaluator, settings, workers, ray_address, progress)
    return position_rollout(player, position)


def candidate_moves(position: Position, dice: tuple[int, int], ranker, count: int,
                    moves: Optional[Sequence[str]] = None) -> list[tuple[str, Position]]:
    """(move text, position after it) of the moves to roll out: ``moves`` as given, else the ``count`` best of
    ``ranker`` (a NetBot or a ``net:`` spec; its search depth ranks them), else every legal move when there
    are at most ``count``."""
    from ..bots.search import NetBot
    from ..bots.spec import make_bot
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
    if len(legal) <= count:
        return [(format_move(move), move.position) for move in legal]
    if ranker is None:
        raise RolloutError(f"{len(legal)} legal moves: give the moves to roll out, or a net to rank them")
    if isinstance(ranker, str):
        try:
            ranker = make_bot(ranker, position.rules)
        except BotError as error:
            raise RolloutError(str(error)) from None
    if not isinstance(ranker, NetBot):
        raise RolloutError(f"candidates are ranked by a net: spec, not {getattr(ranker, 'name', ranker)!r}")
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    rows, _, equities = ranker.ranked(afterstates)
    order = rows[np.argsort(-equities, kind="stable")][:count]
    return [(afterstates.move_text(int(row)), afterstates.position(int(row))) for row in order]


def moves_rollout(player: _Player, position: Position, dice, chosen: list[tuple[str, Position]]) -> RolloutResult:
    """Move analysis with ``player``: each (move text, position after it) of ``chosen`` rolled out on the same
    dice, ranked best first (equities of the side that moves)."""
    from ..rules.outcomes import outcome_class
    from ..notation.json_position import position_to_json
    from ..rules.reference import next_turn

    rules = player.rules
    _check_position(position, rules)
    settings = player.settings
    classes = len(outcome_points(rules))
    going_on = [(text, after) for text, after in chosen if after.result is None]
    finished = [(text, after) for text, after in chosen if after.result is not None]
    outcomes = np.zeros((len(chosen), settings.total_games, classes))
    luck = np.zeros_like(outcomes)
    plies = np.zeros((len(chosen), settings.total_games), dtype=np.int64)
    if going_on:  # from the position after each move: the opponent to roll, or (inside a cascade) the mover's
        # next stage (docs/rules.md 10.3), the root's own decision
        starts = [next_turn(after) for _, after in going_on]
        played = player.play(starts, [start.turn == position.turn for start in starts])
        for target, part in zip((outcomes, luck, plies), played):
            target[:len(going_on)] = part
    for k, (_, after) in enumerate(finished):  # the move ends the game: its outcome is known
        outcomes[len(going_on) + k, :, outcome_class(after.result, after.turn)] = 1.0
    texts = [text for text, _ in going_on] + [text for text, _ in finished]
    stats = summarise(rules, outcomes, luck, plies, settings, settings.luck, moves=texts)
    return RolloutResult(rules.name, player.bot_name, player.evaluator_name, settings, stats,
                         player.seconds if going_on else 0.0, player.workers, dice=tuple(dice),
                         position=position_to_json(position))


def rollout_moves(position: Position, dice, bot: str, settings: RolloutSettings = RolloutSettings(),
                  moves: Optional[Sequence[str]] = None, candidates: int = 5, ranker: Optional[str] = None,
                  evaluator: Optional[str] = None, workers: int = 1, ray_address: Optional[str] = None,
                  progress: bool = True) -> RolloutResult:
    """Move analysis: every candidate move of ``dice`` rolled out on the same dice, ranked best first.

    The candidates are ``moves`` (move texts), else the ``candidates`` best by ``ranker`` (a ``net:`` spec,
    default: the bot when it is a net, else the evaluator). Equities are the mover's.
    """
    if not isinstance(position, Position):
        raise RolloutError(f"a rollout starts from a Position, not {type(position).__name__}")
    try:
        dice = check_dice(dice)
    except ValueError as error:
        raise RolloutError(str(error)) from None
    player = SpecPlayer(position.rules, bot, evaluator, settings, workers, ray_address, progress)
    if ranker is None:
        ranker = bot if bot.startswith("net:") else player.evaluator_name
    _check_position(position, player.rules)
    return moves_rollout(player, position, dice, candidate_moves(position, dice, ranker, candidates, moves))
