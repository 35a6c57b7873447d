"""The model behind the engine's ``encode``, ``evaluate``, ``best_move`` and ``hint`` commands.

An :class:`Analyzer` holds one trained network searching ``plies`` deep (a
``net:`` bot spec, :class:`~tapa_ai.bots.search.NetBot`) and answers for one
:class:`~tapa_ai.rules.position.Position` at a time, exactly as the bot plays:

- **encode**: the network input of the position from its side to move
  (:func:`tapa_ai.net.encoding.encode` of ``PositionBatch.from_positions``);
- **evaluate**: the network's outcome probabilities and equity for those
  features (the side to move's view, before it rolls); a finished game is its
  exact outcome, and a bear-off the database's value (as the bot values it,
  :mod:`tapa_ai.bearoff.evaluate`), exact where the two-sided table knows it;
- **rank**: every legal move with the dice, valued as
  :class:`~tapa_ai.bots.search.NetBot` values them: at 0 plies the network's
  evaluation of each afterstate with the opponent to roll, read from the
  mover's view (a bear-off afterstate: the database's value); deeper, GNU Backgammon's move filter keeps the bot's
  candidates, which are searched at full depth and ranked first.

The checkpoint fixes the board game: a position of another rule set of the
same board game (``portes`` for the backgammon model) is answered by
:meth:`Analyzer.playing` (the model's probabilities, valued with that rule
set's points); one of another board game (or with other rule options that
change it) is refused with a clear message. The network and its
fast evaluator are not meant for concurrent use, so every call takes
:meth:`Analyzer.locked` (waiting for it counts against a request's time limit,
:mod:`tapa_ai.deadline`).
"""

from __future__ import annotations

import copy

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from ..deadline import acquire
from ..errors import TapaError
from ..rules import reference
from ..rules.position import Position
from ..quoting import quoted

MAX_REQUEST_PLIES = 2
"""Deepest search a single request may ask for (a bot spec may set 3 as its own default)."""


class AnalysisError(TapaError, ValueError):
    """A position, request, bot or record that cannot be analysed (another variant, a finished game, a bot that is
    not a network...); the message is one line."""


@dataclass
class RankedMove:
    """One legal move with its value from the mover's view."""

    row: int
    """Row in the afterstates of the position."""
    move: str
    """Move text, e.g. ``"24/18 18/13"`` (``""`` for a pass)."""
    position: Position
    """The resulting position (``turn`` still the mover, ``result`` set if the move ended the game)."""
    probabilities: np.ndarray
    """(K,) float64 outcome probabilities from the mover's view."""
    equity: float
    """Expected points for the mover."""
    plies: int
    """Depth this move was searched at (candidates at the requested depth, the others at 0)."""
    match_winning_chance: Optional[float] = None
    """At a match's score (``rank(..., class_values=...)``): the mover's chance to win the match, which ranks the
    moves; else None."""

    @property
    def value(self) -> float:
        """What ranks the move: its match-winning chance at a score, else its equity."""
        return self.equity if self.match_winning_chance is None else self.match_winning_chance


class Analyzer:
    """A network bot answering the engine's model commands for one rule set."""

    def __init__(self, bot) -> None:
        from ..bots.search import NetBot
        from ..net.model import outcome_names

        if not isinstance(bot, NetBot):
            raise TypeError(f"Analyzer needs a NetBot, got {type(bot).__name__}")
        self.bot = bot
        self.evaluator = bot.evaluator
        self.rules = bot.rules
        self.outcome_names: tuple[str, ...] = tuple(outcome_names(self.rules))
        self.points = np.asarray(bot.evaluator.points, dtype=np.float64)
        """(K,) the points the bot values the outcome classes with (its rule set's, or ``,points=``'s)."""
        self.lock = threading.Lock()
        self._playing: dict = {self.rules: self}

    def playing(self, rules) -> "Analyzer":
        """The analyzer for positions of ``rules``: itself, or (made once, sharing the model and its lock) one whose
        bot plays another rule set of the model's board game (the backgammon model analysing Portes with Portes'
        points, :meth:`~tapa_ai.bots.search.NetBot.playing`); itself for another board game (:meth:`check` then
        refuses the position with the reason)."""
        from ..bots.base import BotError

        found = self._playing.get(rules)
        if found is not None:
            return found
        try:
            bot = self.bot.playing(rules)
        except BotError:
            return self
        found = Analyzer(bot)
        found.lock = self.lock
        found._playing = self._playing
        self._playing[rules] = found
        return found

    @contextmanager
    def locked(self):
        """Hold :attr:`lock` for the block; under a time limit, waiting past it raises DeadlineExceeded."""
        acquire(self.lock)
        try:
            yield
        finally:
            self.lock.release()

    @classmethod
    def from_spec(cls, spec: str) -> "Analyzer":
        """The analyzer of a ``net:PATH`` or ``net:PATH@Nply`` spec; :class:`BotError` for anything else."""
        from ..bots.base import BotError
        from ..bots.search import NetBot
        from ..bots.spec import make_bot

        if isinstance(spec, str) and not spec.strip().startswith("net:"):
            raise BotError(f"bot spec {quoted(spec)}: the engine's model commands need a network; "
                           "use net:PATH or net:PATH@Nply (N = 0, 1, 2 or 3), e.g. net:tapa@1ply (the shipped model)")
        bot = make_bot(spec)
        if not isinstance(bot, NetBot):  # pragma: no cover - make_bot gives a NetBot for every net: spec
            raise BotError(f"bot spec {quoted(spec)}: not a network bot")
        return cls(bot)

    # -- description --------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.bot.name

    @property
    def plies(self) -> int:
        return self.bot.plies

    @property
    def encoding_version(self) -> int:
        """The input encoding of the model (``encode``)."""
        return self.evaluator.model.encoding_version

    def describe(self) -> dict:
        """What the engine reports about its model (``GET /health``)."""
        return {"bot": self.name, "variant": self.rules.name, "plies": self.plies,
                "outcomes": list(self.outcome_names)}

    def check(self, position: Position, where: str = "position") -> None:
        """Refuse a position of another rule set than the network's."""
        if position.rules == self.rules:
            return
        if position.rules.name != self.rules.name:
            from ..net.shipped import model_variant

            raise AnalysisError(
                f"{where}.variant: this engine's model ({self.name}) plays {quoted(self.rules.name)}, "
                f"the position is {quoted(position.rules.name)}; start an engine with a {position.rules.name} model "
                f"(e.g. --bot net:{model_variant(position.rules.name)}) for it"
            )
        changed = position.rules.changes_from(self.rules)
        raise AnalysisError(
            f"{where}.rules: this engine's model ({self.name}) was trained for the standard "
            f"{quoted(self.rules.name)} rules; the position changes {quoted(changed, 200)}"
        )

    # -- the commands ---------------------------------------------------------------------
    def encode(self, position: Position) -> np.ndarray:
        """(net.num_features,) float32: the network input of ``position`` from its side to move (as the model is shown
        it: a Portes position with the backgammon model's rule flags)."""
        from ..net.encoding import encode
        from ..movegen.batch import PositionBatch

        batch = self.evaluator.model_batch(PositionBatch.from_positions([position]))
        return encode(batch, version=self.encoding_version)[0]

    def evaluate(self, position: Position) -> tuple[np.ndarray, float, bool]:
        """(probabilities (K,), equity, exact) for the side to move; a finished game is its exact outcome."""
        from ..movegen.batch import PositionBatch
        from ..rules.outcomes import outcome_class

        self.check(position)
        result = reference.finished_result(position)
        if result is not None:
            probabilities = np.zeros(len(self.outcome_names))
            probabilities[outcome_class(result, position.turn)] = 1.0
            return probabilities, float(probabilities @ self.points), True
        if self.bot.bearoff:  # as the bot plays: a bear-off's value is the database's
            from ..bearoff.evaluate import bearoff_values

            known = bearoff_values(PositionBatch.from_positions([position]))
            if known.rows.size:
                probabilities = known.distributions[0]
                return probabilities, float(probabilities @ self.points), bool(known.exact[0])
        with self.locked():
            probabilities = self.evaluator.model.evaluate(PositionBatch.from_positions([position]))
        probabilities = probabilities[0].astype(np.float64)
        return probabilities, float(probabilities @ self.points), False

    def rank(self, position: Position, dice: tuple[int, int], plies: Optional[int] = None,
             limit: Optional[int] = None, class_values: Optional[np.ndarray] = None
             ) -> tuple[list[RankedMove], int]:
        """The best ``limit`` legal moves (None: all), best first, and how many legal moves there are.

        See the module docstring for how moves are valued; ``plies`` defaults to the bot's. ``class_values``
        (K,): what each outcome class is worth to the mover at a match's score (match-winning chances, e.g.
        :meth:`tapa_ai.cube.rotation_met.RotationMatchEquityTable.class_values`): the moves are filtered and ranked
        by them, and each move's :attr:`RankedMove.value` is its match-winning chance (``equity`` stays its
        expected points).
        """
        moves, total, _ = self.rank_and_choose(position, dice, plies, limit, class_values)
        return moves, total

    def rank_and_choose(self, position: Position, dice: tuple[int, int], plies: Optional[int] = None,
                        limit: Optional[int] = None, class_values: Optional[np.ndarray] = None,
                        noise: float = 0.0, noise_seed: Optional[int] = None,
                        rng: Optional[np.random.Generator] = None
                        ) -> tuple[list[RankedMove], int, Optional[RankedMove]]:
        """:meth:`rank`, and with ``rng`` the move a level of play (``plies``, ``noise``, ``noise_seed``:
        :mod:`tapa_ai.bots.levels`) chooses, from the same search: the bot's own choice (:meth:`NetBot._choose
        <tapa_ai.bots.search.NetBot>`: the ranked values plus the level's noise, the best taken), so a level's
        move costs one search at its depth. Without ``rng`` the choice is None."""
        from ..movegen.choice import segment_argmax
        from ..movegen.batch import PositionBatch
        from ..movegen.generate import generate

        self.check(position)
        plies = self.plies if plies is None else plies
        if reference.finished_result(position) is not None:
            raise AnalysisError("the game is already over in this position (it has a result); start a new game")
        with self.locked():
            afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
            worth = self.points if class_values is None else np.asarray(class_values, dtype=np.float64)
            # the bot's own ranking (its filter, refinement and search), then the moves it did not search at 0 ply
            deep_rows, deep_values, deep_worth = self.bot.ranked(
                afterstates, class_values=None if class_values is None else worth[None], plies=plies)
            base = deep_values if plies == 0 else self.evaluator.afterstate_distributions(afterstates)
            base_values = base @ worth
            chosen = None
            if rng is not None:
                equities = deep_worth
                if noise:
                    bot = copy.copy(self.bot)
                    bot.noise, bot.noise_seed = noise, noise_seed
                    equities = equities + bot.move_noise(afterstates, deep_rows, rng,
                                                         None if class_values is None else worth[None])
                kept_offsets = np.searchsorted(deep_rows, afterstates.offsets)
                chosen = int(segment_argmax(equities, kept_offsets, rng)[0])
        order = np.argsort(-deep_worth, kind="stable")
        ranked = [(int(deep_rows[i]), deep_values[i], plies) for i in order]
        rest = np.setdiff1d(np.arange(len(afterstates)), deep_rows)
        for i in rest[np.argsort(-base_values[rest], kind="stable")]:
            ranked.append((int(i), base[i], 0))
        if chosen is not None:
            chosen = (int(deep_rows[chosen]), deep_values[chosen], plies)
        if limit is not None:
            ranked = ranked[:limit]

        def ranked_move(row, values, depth) -> RankedMove:
            return RankedMove(row, afterstates.move_text(row), afterstates.position(row), values,
                              float(values @ self.points), depth,
                              None if class_values is None else float(values @ worth))

        return ([ranked_move(*entry) for entry in ranked], len(afterstates),
                None if chosen is None else ranked_move(*chosen))

    def cube(self, position: Position, cube, match=None, plies: Optional[int] = None,
             cube_life: Optional[float] = None) -> dict:
        """The cube decision of ``position``'s side to move (before it rolls) and of the receiver of a double.

        ``cube`` is a :class:`~tapa_ai.rules.cube.Cube`, ``match`` a
        :class:`~tapa_ai.rules.cube.MatchScore` (None: money play). The answer
        (docs/protocol.md, ``cube``) has the action, the receiver's response and
        the three equities: points in money play, the doubler's match-winning
        chance in a match.
        """
        from ..cube.decisions import CubeSituation, cube_equities
        from ..movegen.batch import PositionBatch
        from ..rules.cube import CubeError
        from ..rules.position import other

        self.check(position)
        if reference.finished_result(position) is not None:
            raise AnalysisError("the game is already over in this position (it has a result); start a new game")
        rules = self.rules
        if not rules.cube:
            raise CubeError(f"the rule set {quoted(rules.name)} has no cube (option cube is off): no cube decisions")
        mover, receiver = position.turn, other(position.turn)
        if cube.owner == receiver:
            raise CubeError(f"cube.owner: {receiver} owns the cube, so {mover} (to move) may not double and "
                            f"{receiver} cannot be offered a double to take; a double needs the cube centred "
                            f"(owner null) or owned by the side to move, {mover}")
        if match is not None:
            from ..cube.met import MAX_MATCH_LENGTH

            if match.length > MAX_MATCH_LENGTH:
                raise CubeError(f"match.length: match length {match.length} is beyond the match equity tables, "
                                f"which go up to {MAX_MATCH_LENGTH} points")
            match.check_rules(rules)
            if match.crawford and cube.value != 1:
                raise CubeError(f"match.crawford: no doubling in the Crawford game, but the cube is at {cube.value}")
        plies = self.plies if plies is None else plies
        cube_life = self.bot.cube_life if cube_life is None else cube_life
        batch = PositionBatch.from_positions([position])
        with self.locked():
            probabilities = self.bot.pre_roll_distributions(batch, plies)
        situation = CubeSituation.single(rules, cube, mover, match)
        equities = cube_equities(probabilities, situation, cube_life)
        answer = equities.action(0)
        refusal = None
        if match is not None and match.crawford:
            refusal = "no doubling in the Crawford game"
        elif not bool(equities.may_double[0]):
            refusal = cube.double_refusal(mover)
        answer["may_double"] = refusal is None
        if refusal is not None:
            answer.update(action="no_double", too_good=False, response=None, reason=refusal,
                          equity=answer["equities"]["no_double"])
            answer["equities"] = {"no_double": answer["equities"]["no_double"]}
        answer.update(side=mover, receiver=receiver, cube=cube.to_dict(), cube_life=float(cube_life), plies=plies,
                      probabilities=self.named(probabilities[0]),
                      cubeless_equity=float(probabilities[0] @ self.points))
        if match is not None and not match.money:
            from ..cube.met import variant_met

            met = variant_met(rules)
            away = {side: match.away(side) for side in ("X", "O")}
            answer["match"] = {"length": match.length, "score": {"X": match.score[0], "O": match.score[1]},
                               "away": away, "crawford": match.crawford, "post_crawford": match.post_crawford,
                               "match_equity": met.equity(away[mover], away[receiver], match.post_crawford)}
        return answer

    def named(self, probabilities: np.ndarray) -> dict[str, float]:
        """Probabilities by outcome name (:func:`tapa_ai.net.model.outcome_names`)."""
        return {name: float(p) for name, p in zip(self.outcome_names, probabilities.tolist())}


def load_analyzer(bot: Union[str, "Analyzer", object, None]) -> Optional[Analyzer]:
    """An :class:`Analyzer` from a spec string, a NetBot or an Analyzer (None stays None)."""
    if bot is None or isinstance(bot, Analyzer):
        return bot
    if isinstance(bot, str):
        return Analyzer.from_spec(bot)
    return Analyzer(bot)
