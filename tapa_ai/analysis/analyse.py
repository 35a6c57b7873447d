"""Recorded games rated by a network bot: each move's error, each roll's luck, the totals per player.

For every move of a :class:`~tapa_ai.analysis.records.Record` the analysing
bot (a :class:`~tapa_ai.bots.search.NetBot`, ``net:tapa@1ply`` ...) values the
legal moves of the position and dice as it chooses its own: every move at 0
plies, its candidates (GNU Backgammon's move filter) at its search depth, and
the move played at that depth too, wherever the filter put it. All values are
**cubeless** equities (points per game before the cube) from the mover's view:

- **error** = the best move's equity minus the played move's, at the bot's
  depth (0 when the move played is as good as any candidate), reported in
  **millipoints** (mp, thousandths of a point); above ``error_mp`` (20) a move
  is marked an error (``?``), above ``blunder_mp`` (80) a blunder (``??``);
  a forced move (one legal move, or none) is not rated;
- **luck** of a roll = the 0-ply value of the best move for the roll that came
  minus the mean over the 21 rolls of each roll's best 0-ply value, in points,
  from the roller's view (:func:`tapa_ai.arena.rollout.roll_luck`, the
  definition the rollouts' luck adjustment uses; bear-offs by the database as
  the bot values them). An opening roll, which cannot be a double
  (``use-opening-dice``), is measured against the mean of the 15 other rolls.

**Cube decisions** are rated with the bot's cubeful equities of the position before the roll
(:meth:`~tapa_ai.bots.search.NetBot.cube_equities`: no double, double/take, double/pass, from the doubler's
view, in money play Janowski's, in a match the match-winning chances over the variant's table): a double
against the better of no double and the receiver's right answer to it, a take or pass against the other, and,
where the games were played with the cube (:attr:`~tapa_ai.analysis.records.Record.cube`), every roll made
without doubling where a double was allowed (a **no double**, rated on the move that follows). The error is
**normalized to a cube of 1**: money equity divided by the cube's value, match-winning chances by half the
spread between winning and losing the cube's value now (GNU Backgammon's equivalent money game), in mp, and
marked with the moves' thresholds.
**A rotation's match** (Tavli, Tabla or any rotation: :attr:`~tapa_ai.analysis.records.Record.rotation`,
:func:`analyse_rotation_record`) is rated game by game with the network of each game's variant, and its moves
**by the match-winning chance** (MWC) at the score of their game (the rotation's match equity table,
:mod:`tapa_ai.cube.rotation_met`, as the bots play by it):
a move's value is its mover's chance to win the match, the error the best move's MWC minus the played move's
(in MWC, reported in percentage points), the luck the roll's in MWC. A move is marked by its error normalized
to points, divided by half the spread between winning and losing a single game now (GNU Backgammon's
equivalent money game), against the same thresholds.
Moves are rated in batches, with the cube decisions among them, that the search's budget of afterstates
holds (:mod:`tapa_ai.analysis.batching`: one move a batch at 3 plies), which the progress callback counts
and a served request's time limit (:mod:`tapa_ai.deadline`) checks.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Callable, Optional

import numpy as np

from ..arena.rollout import ROLLS, ROLL_WEIGHTS, roll_luck
from ..bots.base import BotError
from ..bots.search import NetBot
from ..deadline import check_deadline
from ..movegen.batch import PositionBatch
from ..movegen.generate import generate
from ..net.model import outcome_points
from ..rules.outcomes import cumulative_probabilities
from ..rules.position import SIDES
from ..rules.rotations import Rotation
from ..quoting import quoted
from .analyzer import AnalysisError
from .batching import batch_sizes, batches, decisions_of
from .ratings import (CANDIDATES_KEPT, DEFAULT_BLUNDER_MP, DEFAULT_ERROR_MP, Analysis, Candidate, CubeAction,
                      CubeRating, GameAnalysis, MoveRating, PlayerTotals)
from .records import Record, RecordedGame, Turn

OPENING_WEIGHTS = np.where(ROLLS[:, 0] == ROLLS[:, 1], 0.0, 1.0 / 15.0)
"""The chance of each of the 21 rolls in an opening roll that is played (no doubles: 15 rolls, 1/15 each)."""

__all__ = ["AnalysisError", "MoveRating", "CubeRating", "CubeAction", "PlayerTotals", "GameAnalysis", "Analysis", "analysis_bot",
           "analyse_record", "analyse_rotation_record", "DEFAULT_ERROR_MP", "DEFAULT_BLUNDER_MP"]


def analysis_bot(spec: str, record: Optional[Record] = None) -> NetBot:
    """The analysing bot of ``spec`` (a ``net:`` bot), checked against the record's rules; AnalysisError if not."""
    from ..bots.spec import make_bot

    if not isinstance(spec, str) or not spec.strip().startswith("net:"):
        raise AnalysisError(f"--bot {quoted(spec)}: the analysis needs a network bot, net:PATH[@Nply] or a shipped "
                            "model by name (net:tapa@1ply)")
    try:
        bot = make_bot(spec)
    except BotError as error:
        raise AnalysisError(str(error)) from None
    if not isinstance(bot, NetBot):  # pragma: no cover - make_bot gives a NetBot for every net: spec
        raise AnalysisError(f"--bot {quoted(spec)}: not a network bot")
    if record is not None:
        bot = playing_record_rules(bot, record)
        check_rules(bot, record)
    return bot


def playing_record_rules(bot: NetBot, record: Record) -> NetBot:
    """``bot`` playing the record's rules where they are another rule set of its model's board game (a Portes
    record and the backgammon model: its probabilities, Portes' points), else ``bot`` (:func:`check_rules` then
    says why it cannot analyse the record)."""
    try:
        return bot.playing(record.rules)
    except BotError:
        return bot


def check_rules(bot: NetBot, record: Record) -> None:
    rules = bot.rules
    if record.rules == rules:
        return
    if record.rules.name != rules.name:
        from ..net.shipped import model_variant

        raise AnalysisError(f"the record is {record.rules.name}, and the analysing bot {bot.name} plays "
                            f"{rules.name}: analyse it with a {record.rules.name} network, e.g. --bot "
                            f"net:{model_variant(record.rules.name)}@1ply")
    raise AnalysisError(f"the record's {record.rules.name} rules differ from those the bot {bot.name} was "
                        "trained for (custom rule options)")


def analyse_record(record: Record, bot: NetBot, *, error_mp: float = DEFAULT_ERROR_MP,
                   blunder_mp: float = DEFAULT_BLUNDER_MP, plies: Optional[int] = None,
                   progress: Optional[Callable[[int], None]] = None) -> Analysis:
    """Rate every move and roll of ``record`` with ``bot`` (at ``plies``, default the bot's; module docstring).

    ``progress(n)`` is called after each batch (:func:`~tapa_ai.analysis.batching.batches`) with the number
    of moves it rated (a batch rates the cube decisions among its moves too).
    """
    if len({game.rules for game in record.games}) > 1:
        raise AnalysisError("the record's games are of more than one variant (a rotation's match): each needs the "
                            "network of its own (analyse_rotation_record, tapa-ai analyse FILE)")
    check_rules(bot, record)
    by_score = record.rotation  # a rotation's match: its moves by the match-winning chance at the score
    if plies is not None and plies != bot.plies:
        bot = copy.copy(bot)
        bot.plies = plies
    rated: dict[tuple[int, int], MoveRating] = {}
    cube = {}
    for batch in batches(decisions_of(record), *batch_sizes(bot)):
        check_deadline()
        for kind, rate, found in (("move", _rate, rated), ("cube", _rate_cube, cube)):
            chunk = [(game, turn) for each, game, turn in batch if each == kind]
            if chunk:
                ratings = rate(bot, chunk, error_mp, blunder_mp, by_score) if kind == "move" else \
                    rate(bot, chunk, error_mp, blunder_mp)
                for (game, turn), rating in zip(chunk, ratings):
                    found[(id(game), turn.index)] = rating
        if progress is not None:
            progress(sum(kind == "move" for kind, _, _ in batch))
    players: dict[str, PlayerTotals] = {}
    games = []
    for game in record.games:
        analysis = GameAnalysis(game)
        for side in ("X", "O"):
            players.setdefault(game.players[side], PlayerTotals(game.players[side],
                                                                units="mwc" if by_score is not None else "points"))
        for turn in game.turns:
            player = game.players[turn.side]
            decision = cube.get((id(game), turn.index))
            if turn.action == "move":
                rating = rated[(id(game), turn.index)]
                if decision is not None:
                    rating = replace(rating, cube=decision)
                players[player].add(rating)
                analysis.entries.append(rating)
            else:
                if decision is not None:
                    players[player].add_cube(decision)
                analysis.entries.append(CubeAction(game.number, turn.index, turn.side, player, turn.action, turn.cube,
                                                   turn.position, decision))
        games.append(analysis)
    return Analysis(record, bot.name, bot.plies, float(error_mp), float(blunder_mp), games, players,
                    "mwc" if by_score is not None else "points")


def analyse_rotation_record(record: Record, bots: dict[str, NetBot], *, error_mp: float = DEFAULT_ERROR_MP,
                            blunder_mp: float = DEFAULT_BLUNDER_MP, plies: Optional[int] = None,
                            progress: Optional[Callable[[int], None]] = None) -> Analysis:
    """Rate a rotation's match (:attr:`Record.rotation`: Tavli, Tabla ...): the games of each variant with
    ``bots[variant]`` (the network of that variant; Portes': the backgammon model playing Portes' points), every
    move by the match-winning chance at its game's score through the rotation's table (module docstring); the
    games in order, the totals over the match."""
    if record.rotation is None:
        raise AnalysisError("not a rotation's match: analyse it with analyse_record")
    parts = []
    for variant in record.rotation.distinct:
        games = tuple(game for game in record.games if game.rules.name == variant)
        if games:
            part = replace(record, rules=games[0].rules, games=games)
            parts.append(analyse_record(part, playing_record_rules(bots[variant], part), error_mp=error_mp,
                                        blunder_mp=blunder_mp, plies=plies, progress=progress))
    games = sorted((game for part in parts for game in part.games), key=lambda game: game.game.number)
    players: dict[str, PlayerTotals] = {}
    for game in games:  # in the order the players appear in the match
        for side in ("X", "O"):
            players.setdefault(game.game.players[side], PlayerTotals(game.game.players[side], units="mwc"))
    for part in parts:
        for name, totals in part.players.items():
            players[name].merge(totals)
    names = ", ".join(f"{part.bot} ({part.record.rules.name})" for part in parts)
    return Analysis(record, names, parts[0].plies, float(error_mp), float(blunder_mp), games, players, "mwc")


def _score_values(chunk: list[tuple[RecordedGame, Turn]], points: np.ndarray, rotation: Rotation
                  ) -> tuple[np.ndarray, np.ndarray]:
    """((M, K) what each outcome class is worth to each move's mover as match-winning chances at its game's score
    in the match of ``rotation`` (its table), (M,) half the spread between winning and losing a single game there:
    a point's worth)."""
    from ..cube.rotation_met import rotation_met

    table = rotation_met(rotation)
    away = np.array([game.match_length - game.score[SIDES.index(turn.side)] for game, turn in chunk])
    opponent = np.array([game.match_length - game.score[1 - SIDES.index(turn.side)] for game, turn in chunk])
    number = np.array([rotation.index(game.number) for game, _ in chunk])
    worth = table.class_values(points, away, opponent, number)
    single = table.class_values(np.array([1.0, -1.0]), away, opponent, number)
    return worth, np.maximum((single[:, 0] - single[:, 1]) / 2, 1e-9)


def _rate(bot: NetBot, chunk: list[tuple[RecordedGame, Turn]], error_mp: float, blunder_mp: float,
          by_score: Optional[Rotation] = None) -> list[MoveRating]:
    """The ratings of a batch of moves: one generator call, the bot's ranking, the played moves, the luck
    (``by_score``, a rotation: by the match-winning chance at each game's score in its match)."""
    rules = bot.rules
    points = outcome_points(rules).astype(np.float64)
    batch = PositionBatch.from_positions([turn.position for _, turn in chunk])
    dice = np.array([turn.dice for _, turn in chunk], dtype=np.int8)
    afterstates = generate(batch, dice)
    offsets = afterstates.offsets
    if by_score is not None:
        worth, scale = _score_values(chunk, np.asarray(bot.evaluator.points, dtype=np.float64), by_score)
    else:
        worth, scale = np.broadcast_to(points, (len(chunk), points.size)), np.ones(len(chunk))
    source = afterstates.source

    def value(distributions: np.ndarray, rows: np.ndarray) -> np.ndarray:
        if by_score is None:
            return distributions @ points
        return np.einsum("nk,nk->n", distributions, worth[source[rows]])

    # the candidates at the bot's depth, grouped by position
    by_worth = worth if by_score is not None else None
    rows, values, _ = bot.ranked(afterstates, class_values=by_worth)
    kept = np.searchsorted(rows, offsets)
    deep = value(values, rows)
    played = [_played_row(afterstates, i, turn) for i, (_, turn) in enumerate(chunk)]
    candidate = set(rows.tolist())
    missing = [row for row in played if row not in candidate]
    extra, extra_chances = {}, {}
    if missing:  # the move played, outside the filter's candidates: valued at the bot's depth too
        missing_rows = np.array(missing, dtype=np.int64)
        distributions = bot.evaluate(afterstates, missing_rows)
        extra = dict(zip(missing, value(distributions, missing_rows).tolist()))
        extra_chances = dict(zip(missing, cumulative_probabilities(np.asarray(distributions, dtype=np.float64))))
    chances = cumulative_probabilities(np.asarray(values, dtype=np.float64))
    position_of_row = {row: k for k, row in enumerate(rows.tolist())}
    luck = _luck(bot, batch, dice, [turn.opening for _, turn in chunk], points, by_worth)
    ratings = []
    for i, (game, turn) in enumerate(chunk):
        row = played[i]
        equity = float(deep[position_of_row[row]]) if row in position_of_row else float(extra[row])
        best_row, best_equity = row, equity
        if kept[i + 1] > kept[i]:
            k = int(kept[i] + np.argmax(deep[kept[i]:kept[i + 1]]))
            if deep[k] > equity + 1e-12:
                best_row, best_equity = int(rows[k]), float(deep[k])
        legal = int(offsets[i + 1] - offsets[i])
        loss = 1000.0 * max(0.0, best_equity - equity) / scale[i]
        mark = "" if legal <= 1 else "blunder" if loss > blunder_mp else "error" if loss > error_mp else ""
        found = []
        if legal > 1:
            order = kept[i] + np.argsort(-deep[kept[i]:kept[i + 1]], kind="stable")[:CANDIDATES_KEPT]
            found = [Candidate(turn.move if int(rows[k]) == row else afterstates.move_text(int(rows[k])),
                               float(deep[k]), tuple(float(p) for p in chances[k])) for k in order]
            if row not in {int(rows[k]) for k in order}:
                k = position_of_row.get(row)
                found.append(Candidate(turn.move, equity, tuple(float(p) for p in (
                    chances[k] if k is not None else extra_chances[row]))))
        ratings.append(MoveRating(game.number, turn.index, turn.side, game.players[turn.side], turn.dice, turn.move,
                                  afterstates.move_text(best_row) if best_row != row else turn.move, equity,
                                  best_equity, legal, float(luck[i]), turn.position, turn.opening, mark,
                                  units="mwc" if by_score is not None else "points", scale=float(scale[i]),
                                  candidates=tuple(found)))
    return ratings


def _rate_cube(bot: NetBot, chunk: list[tuple[RecordedGame, Turn]], error_mp: float, blunder_mp: float
               ) -> list[Optional[CubeRating]]:
    """The ratings of a batch of cube decisions (None where the bot's rules allow no double there)."""
    from ..cube.decisions import CubeSituation
    from ..cube.met import variant_met
    from ..rules.cube import Cube, CubeError, MatchScore

    rules = bot.rules
    situations = []
    for game, turn in chunk:
        doubler = turn.position.turn
        score = None
        if game.match_length:
            away = [game.match_length - points for points in game.score]
            try:
                score = MatchScore(game.match_length, game.score, crawford=game.crawford,
                                   post_crawford=rules.crawford and not game.crawford and 1 in away)
            except CubeError as error:
                raise AnalysisError(f"game {game.number}: its cube decisions cannot be rated: {error}") from None
        situations.append(CubeSituation.single(rules, Cube(turn.cube, turn.cube_owner), doubler, score))
    equities = []  # money and each match length apart: a situation holds one length
    distributions = np.zeros((len(chunk), len(outcome_points(rules))))
    for length in sorted({s.length for s in situations}):
        index = [i for i, s in enumerate(situations) if s.length == length]
        positions = PositionBatch.from_positions([chunk[i][1].position for i in index])
        distributions[index] = bot.pre_roll_distributions(positions)
        equities.append((index, bot.cube_equities(positions, CubeSituation.joined([situations[i] for i in index]),
                                                  distributions=distributions[index])))
    chances = cumulative_probabilities(distributions)
    cubeless = distributions @ outcome_points(rules).astype(np.float64)
    met = variant_met(rules)
    ratings: list[Optional[CubeRating]] = [None] * len(chunk)
    for index, found in equities:
        for k, i in enumerate(index):
            game, turn = chunk[i]
            nd, dt, dp = (float(x[k]) for x in (found.no_double, found.double_take, found.double_pass))
            if found.units == "points":
                unit = float(turn.cube)
            else:  # half the spread of the doubler's chances between winning and losing the cube's value now
                s = situations[i]
                lost = float(met.lookup(s.away, s.opponent_away - turn.cube, s.crawford_done)[0])
                unit = max((dp - lost) / 2, 1e-9)
            if turn.action in ("take", "drop"):
                best = "take" if bool(found.take[k]) else "drop"
                error = abs(dt - dp) if turn.action != best else 0.0
            else:
                if not bool(found.may_double[k]):
                    continue  # the bot's rules (a match's Crawford game, a cube at its limit) allow no double
                best = "double" if bool(found.double[k]) else "no_double"
                proper = float(found.equity[k])
                error = max(0.0, proper - (min(dt, dp) if turn.action == "double" else nd))
            error /= unit
            loss = 1000.0 * error
            mark = "blunder" if loss > blunder_mp else "error" if loss > error_mp else ""
            action = "no_double" if turn.action == "move" else turn.action
            ratings[i] = CubeRating(action, best, nd, dt, dp, found.units, error, mark, turn.cube,
                                    tuple(float(p) for p in chances[i]), float(cubeless[i]))
    return ratings


def _played_row(afterstates, index: int, turn: Turn) -> int:
    """The afterstate row of the move played from position ``index`` (found by its resulting position)."""
    start, stop = int(afterstates.offsets[index]), int(afterstates.offsets[index + 1])
    target = turn.after.with_changes(result=None)
    for row, position in zip(range(start, stop), afterstates.positions.positions(range(start, stop))):
        if position == target:
            return row
    raise AnalysisError(f"game move {turn.index} ({turn.side} {turn.dice} {quoted(turn.move)}): its resulting position "
                        "is none of the legal moves' (please report it with the file)")


def _luck(bot: NetBot, batch: PositionBatch, dice: np.ndarray, opening: list[bool], points: np.ndarray,
          worth: Optional[np.ndarray] = None) -> np.ndarray:
    """(M,) each roll's luck from the roller's view (module docstring): in points, or valued by ``worth`` (M, K),
    the match-winning chances at a rotation's game's score."""
    luck = np.zeros(len(batch))
    opening = np.asarray(opening, dtype=bool)

    def values(afterstates):
        return bot.evaluator.afterstate_distributions(afterstates)

    for mask, weights in ((~opening, ROLL_WEIGHTS), (opening, OPENING_WEIGHTS)):
        index = np.flatnonzero(mask)
        if index.size:
            difference = roll_luck(bot.evaluator, batch.take(index), dice[index], points, values, weights)
            luck[index] = difference @ points if worth is None else np.einsum("mk,mk->m", difference, worth[index])
    return luck
