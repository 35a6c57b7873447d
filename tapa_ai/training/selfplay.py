"""Vectorized self-play: many games side by side, one move-generation call and one forward pass per ply.

Each ply, for all ``G`` running games at once: roll dice, generate every
legal afterstate (:func:`tapa_ai.movegen.generate`), evaluate them all in one
batch (:func:`afterstate_distributions`), and pick the best by equity (with
epsilon-random exploration). A game's trajectory keeps, per turn, the
position before the roll (compact int8 arrays, encoded only when learned
from) and the evaluation of the chosen afterstate from the mover's view;
finished games turn it into TD(lambda) targets (:func:`lambda_returns`).

With **expected targets** (``SelfPlay(..., expected=True)``, config
``learning.targets = "expected"``) each ply generates the afterstates of all
21 rolls of every game's position in one batch and evaluates them together;
the roll actually drawn is played from that batch, and the value kept for the
turn is the average over the rolls (doubles 1/36, the others 2/36; the opening
roll of ``use-opening-dice`` has no doubles) of the best move's value: a 1-ply
expectation of the position before the roll instead of one sampled roll.

With **bear-off targets** (``SelfPlay(..., bearoff=True)``, config
``learning.bearoff_targets``) every afterstate that is a bear-off (no contact
left) is valued by the exact databases instead of the network
(:class:`tapa_ai.net.evaluator.BearoffEvaluator`): self-play plays
bear-offs by them and keeps their values, so the targets of those turns are
exact.

Self-play shares the game runner's step functions (:mod:`tapa_ai.arena.runner`: the opening roll's
rerolled doubles, the positions after the chosen moves) but not its loop, for three reasons. Its
``G`` games are slots that never empty: a game that ends is restarted in its own slot, where the
runner moves ended games out and appends new ones after those going on; the row order is what the
tie-breaking jitter and the exploration draws of the rng follow, so the runner's order would play
other games from the same seed than a run (or a checkpoint) made before. The trainer calls one ply at a time (:meth:`SelfPlay.play_ply`) between learning steps and saves the
state between them. And with expected targets a ply generates the afterstates of all 21 rolls, not
of the roll drawn, and chooses by one batched evaluation, not a policy per side.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
from numba import njit

from ..arena.runner import next_positions, reroll_opening_doubles
from ..rules.rolls import ROLL_INDEX, ROLL_WEIGHTS, ROLLS
from ..movegen import PositionBatch, generate
from ..rules import outcomes
from ..movegen.choice import choose_random, segment_argmax
from ..net.evaluator import Evaluator, evaluator_for
from ..net.model import EvaluatorNet
from ..rules.outcomes import outcome_points, swap_sides
from ..rules.options import RuleOptions
from ..rules.position import start_position

STATE_WIDTH = 52
"""Columns of a compact state row: board (24), pinned (24), off (2), bar (2), all int8, mover's view."""
CASCADE_STATE_WIDTH = STATE_WIDTH + 5
"""Columns of a compact state row where doubles cascade (docs/rules.md 10.3): :data:`STATE_WIDTH`, then the turn
counts (mover, opponent) and the pending stage (number, steps, remainder)."""


def state_width(rules: RuleOptions) -> int:
    """Columns of the compact state rows of ``rules``' positions."""
    return CASCADE_STATE_WIDTH if rules.cascades else STATE_WIDTH

OPENING_WEIGHTS = np.where(ROLLS[:, 0] == ROLLS[:, 1], 0.0, 1.0 / 15.0)
"""Probability of each of the 21 rolls as an opening roll of two different dice (``use-opening-dice``)."""


def pack_states(batch: PositionBatch, width: int = STATE_WIDTH) -> np.ndarray:
    """(B, ``width``) int8 compact rows of a batch (mover's view): :data:`STATE_WIDTH`, or
    :data:`CASCADE_STATE_WIDTH` with the turn counts and pending stage (:func:`state_width`)."""
    parts = [batch.board, batch.pinned, batch.off, batch.bar]
    if width == CASCADE_STATE_WIDTH:
        parts += [batch.turns, batch.stage]
    return np.concatenate(parts, axis=1).astype(np.int8)


def unpack_states(rows: np.ndarray, rules: RuleOptions) -> PositionBatch:
    """A batch (all X to move, one rule set) from compact rows; enough for encoding."""
    rows = np.asarray(rows, dtype=np.int8)
    size = rows.shape[0]
    turns = stage = None
    if rows.shape[1] == CASCADE_STATE_WIDTH:
        turns, stage = np.ascontiguousarray(rows[:, 52:54]), np.ascontiguousarray(rows[:, 54:57])
    return PositionBatch(
        np.ascontiguousarray(rows[:, 0:24]), np.ascontiguousarray(rows[:, 24:48]),
        np.ascontiguousarray(rows[:, 48:50]), np.ascontiguousarray(rows[:, 50:52]),
        np.zeros(size, dtype=np.int8), np.zeros(size, dtype=np.int8), (rules,), turns, stage,
    )


def lambda_returns(next_values: np.ndarray, lambda_: float, outcome: np.ndarray | None = None,
                   same_side: np.ndarray | None = None) -> np.ndarray:
    """(T, K) TD(lambda) targets of one finished game, each from the view of the side to move at that turn.

    ``next_values[t]`` is the value of the position after turn ``t`` from the
    view of turn ``t``'s mover: the net's evaluation of the chosen afterstate,
    and for the last turn the exact outcome. Backwards:
    ``G[T-1] = next_values[T-1]`` and
    ``G[t] = (1 - lambda) * next_values[t] + lambda * swap(G[t+1])``
    (``swap`` reads the next mover's target from this mover's side; where
    ``same_side[t]``, the mover of turn ``t`` also made decision ``t + 1``, inside
    a cascade (docs/rules.md 10.2), and its target is read as it is).

    With expected targets ``next_values[t]`` is turn ``t``'s 1-ply
    expectation over the rolls and ``outcome`` (K,) the game's exact result
    from the last mover's view: then ``G[T-1] = (1 - lambda) * next_values[T-1]
    + lambda * outcome`` (lambda 0: every target is the expectation).
    """
    next_values = np.ascontiguousarray(next_values)
    # numba loop: one call per finished game, hundreds of turns (a Python loop cost ~15% of self-play).
    order = swap_sides(np.arange(next_values.shape[1]))
    keep = next_values.dtype.type(1.0 - lambda_)
    carry = next_values.dtype.type(lambda_)
    if outcome is None:
        last = next_values[-1]
    else:
        last = keep * next_values[-1] + carry * np.asarray(outcome, dtype=next_values.dtype)
    same = np.zeros(next_values.shape[0], dtype=np.bool_) if same_side is None else np.asarray(same_side, dtype=np.bool_)
    return _lambda_returns(next_values, np.ascontiguousarray(last), keep, carry, order, same)


@njit(cache=True, nogil=True)
def _lambda_returns(next_values, last_target, keep, carry, order, same_side):
    targets = np.empty_like(next_values)
    last = next_values.shape[0] - 1
    targets[last] = last_target
    for turn in range(last - 1, -1, -1):
        for k in range(next_values.shape[1]):
            read = k if same_side[turn] else order[k]
            targets[turn, k] = keep * next_values[turn, k] + carry * targets[turn + 1, read]
    return targets


@dataclass
class FinishedGame:
    """One self-play game, ready to learn from."""

    states: np.ndarray
    """(T, 52) int8 compact positions before each turn's roll, mover's view."""
    next_values: np.ndarray
    """(T, K) float32 value of the position after each turn, from that turn's mover."""
    kind: str
    """How it ended: single, gammon, backgammon, mother, draw."""
    turns: int
    outcome: np.ndarray | None = None
    """With expected targets: (K,) the exact result from the last mover's view (``next_values`` are then
    the turns' expectations over the rolls); None with sampled targets (the last next value is the result)."""
    same_side: np.ndarray | None = None
    """(T,) bool: turn ``t``'s mover also made decision ``t + 1`` (a cascade's stages, docs/rules.md 10.2); None:
    the sides alternated every turn (plain doubles)."""

    def targets(self, lambda_: float) -> np.ndarray:
        """(T, K) the TD(lambda) targets of the game's turns (:func:`lambda_returns`)."""
        return lambda_returns(self.next_values, lambda_, self.outcome, self.same_side)

    def counts_only(self) -> "FinishedGame":
        """The game without its positions and values (how it ended and its turns): what a learner counts."""
        return FinishedGame(self.states[:0], self.next_values[:0], self.kind, self.turns, self.outcome,
                            None if self.same_side is None else self.same_side[:0])

    def to_plain(self) -> dict:
        """The game as checkpoint data (a game played but not learned from yet travels in the checkpoint)."""
        plain = {"states": torch.from_numpy(self.states.copy()), "next_values": torch.from_numpy(self.next_values.copy()),
                 "kind": self.kind, "turns": self.turns,
                 "outcome": None if self.outcome is None else torch.from_numpy(np.array(self.outcome))}
        if self.same_side is not None:
            plain["same_side"] = torch.from_numpy(self.same_side.copy())
        return plain

    @classmethod
    def from_plain(cls, data: dict) -> "FinishedGame":
        """The game :meth:`to_plain` stored."""
        outcome = data["outcome"]
        same = data.get("same_side")
        return cls(data["states"].numpy().copy(), data["next_values"].numpy().copy(), str(data["kind"]),
                   int(data["turns"]), None if outcome is None else outcome.numpy().copy(),
                   None if same is None else same.numpy().astype(bool).copy())


@dataclass(frozen=True)
class PlyResult:
    """What one ply of self-play produced (:meth:`SelfPlay.step`): the games that finished in it, and what online
    learning steps on (``learning.method = "online-traces"``, :meth:`tapa_ai.training.learner.Learner.online_step`):
    the positions before the moves, the values of the moves chosen, the games that began with this ply, and the
    games finished before it (the learning rate's clock)."""

    finished: list
    positions: PositionBatch
    next_values: np.ndarray
    new_game: np.ndarray
    games_before: int
    same_mover: Optional[np.ndarray] = None
    """(G,) bool: this ply's mover also made the game's previous decision (inside a cascade); None: the sides
    alternated."""


@dataclass
class SelfPlayStats:
    games: int = 0
    decisions: int = 0
    abandoned: int = 0
    turns_of_finished: int = 0
    kinds: Counter = field(default_factory=Counter)


class SelfPlay:
    """``games`` parallel self-play games of one rule set, driven by one network.

    State (the running games and their trajectories so far) can be saved with
    :meth:`state_dict` and restored with :meth:`load_state_dict`, so a resumed
    run continues exactly where it stopped.
    """

    def __init__(self, rules: RuleOptions, net: EvaluatorNet, games: int, rng: np.random.Generator,
                 max_turns: int = 1000, expected: bool = False, bearoff: bool = False,
                 movegen_threads: Optional[int] = None) -> None:
        self.rules = rules
        self.expected = expected
        """Keep each turn's 1-ply expectation over the 21 rolls instead of the played roll's value."""
        self.bearoff = bool(bearoff)
        """Value bear-off afterstates by the exact databases instead of the network."""
        self.net = net
        self.evaluator: Evaluator = evaluator_for(net, bearoff=self.bearoff)
        """What self-play plays by: the network's kernel (it follows the network's weights), with the databases
        where :attr:`bearoff`."""
        self.size = games
        self.rng = rng
        self.max_turns = max_turns
        self.points = outcome_points(rules)
        self._start = PositionBatch.from_positions([start_position(rules, "X")])
        self.batch = self._start.take(np.zeros(games, dtype=np.int64))
        self.batch.turn[:] = rng.integers(0, 2, games)
        self.turns = np.zeros(games, dtype=np.int64)
        # Trajectories so far, by turn: turn t of game g is row [t, g] (each game holds self.turns[g] rows).
        # One vectorized write per ply instead of a list append per game; grows when a game outlasts it.
        self.width = state_width(rules)
        """Columns of the compact states kept (:func:`state_width`)."""
        self._states = np.zeros((min(max_turns, 256), games, self.width), dtype=np.int8)
        self._values = np.zeros((min(max_turns, 256), games, len(self.points)), dtype=np.float32)
        self._same = np.zeros((min(max_turns, 256), games), dtype=np.bool_)
        """Turn t of game g was followed by a decision of the same side (a cascade's stages)."""
        self._same_mover = np.zeros(games, dtype=np.bool_)
        """Each game's coming decision is made by the side that made its last one."""
        self.stats = SelfPlayStats()
        self.movegen_threads = movegen_threads
        """Threads of the move generator (None: its default); the same afterstates on any count."""

    def weights_changed(self) -> None:
        """The network's weights changed (a learning pass): the evaluator copies them (~25 us)."""
        self.evaluator.refresh()

    def adopt(self, evaluator) -> None:
        """Play by ``evaluator`` from now on: the fast evaluator of the weights a learning pass ended with, built
        beside self-play (``learning.overlap``)."""
        self.evaluator.model.adopt(evaluator)

    # ------------------------------------------------------------------
    def _roll(self) -> np.ndarray:
        dice = self.rng.integers(1, 7, size=(self.size, 2))
        if self.rules.opening == "use-opening-dice":
            # A game's first turn plays the opening roll: two different dice.
            reroll_opening_doubles(dice, np.flatnonzero(self.turns == 0), self.rng)
        return dice

    def trajectory(self, game: int) -> tuple[np.ndarray, np.ndarray]:
        """(turns, :attr:`width`) int8 states before each turn of running game ``game`` and (turns, K) their kept
        values (copies)."""
        turns = int(self.turns[game])
        return self._states[:turns, game].copy(), self._values[:turns, game].copy()

    def same_sides(self, game: int) -> Optional[np.ndarray]:
        """(turns,) bool: which of running game ``game``'s turns were followed by the same side's decision (None
        where doubles are plain: the sides alternate)."""
        if not self.rules.cascades:
            return None
        return self._same[:int(self.turns[game]), game].copy()

    def _record(self, before: np.ndarray, kept: np.ndarray, same: np.ndarray) -> None:
        """Store this ply's state and kept value of every game at its turn number."""
        needed = int(self.turns.max()) + 1
        if needed > self._states.shape[0]:
            grown = max(needed, 2 * self._states.shape[0])
            self._states = np.concatenate([self._states, np.zeros((grown - self._states.shape[0],) + self._states.shape[1:],
                                                                  dtype=np.int8)])
            self._values = np.concatenate([self._values, np.zeros((grown - self._values.shape[0],) + self._values.shape[1:],
                                                                  dtype=np.float32)])
            self._same = np.concatenate([self._same, np.zeros((grown - self._same.shape[0], self.size), dtype=np.bool_)])
        games = np.arange(self.size)
        self._states[self.turns, games] = before
        self._values[self.turns, games] = kept
        self._same[self.turns, games] = same

    def _reset(self, games: np.ndarray) -> None:
        self.turns[games] = 0
        fresh = self._start.take(np.zeros(games.size, dtype=np.int64))
        for name in ("board", "pinned", "off", "bar", "turns", "stage"):
            getattr(self.batch, name)[games] = getattr(fresh, name)
        self._same_mover[games] = False
        self.batch.turn[games] = self.rng.integers(0, 2, games.size)

    def _distributions(self, afterstates) -> np.ndarray:
        """(N, K) float32 values of ``afterstates`` from the mover's view (the databases' for bear-offs if
        :attr:`bearoff`)."""
        return self.evaluator.afterstate_distributions(afterstates, np.float32)

    def play_ply(self, epsilon: float) -> list[FinishedGame]:
        """Every running game plays one turn; returns the games that finished in it."""
        return self.step(epsilon).finished

    def step(self, epsilon: float) -> PlyResult:
        """Every running game plays one turn; what the ply produced (:class:`PlyResult`)."""
        dice = self._roll()
        before = pack_states(self.batch, self.width)
        if self.expected:
            afterstates, distributions, chosen, kept = self._expected_ply(dice, epsilon)
        else:
            afterstates = generate(self.batch, dice, threads=self.movegen_threads)
            distributions = self._distributions(afterstates)
            equities = distributions @ self.points
            chosen = segment_argmax(equities, afterstates.offsets, self.rng)
            if epsilon > 0:
                explore = self.rng.random(self.size) < epsilon
                if explore.any():
                    chosen = np.where(explore, choose_random(afterstates, self.rng), chosen)
            kept = distributions[chosen]
        same = afterstates.same_side[chosen]
        self._record(before, kept, same)
        # The positions before the moves stay as they are: the next batch is a new one (next_positions).
        ply = dict(positions=self.batch, next_values=distributions[chosen], new_game=self.turns == 0,
                   games_before=self.stats.games,
                   same_mover=self._same_mover.copy() if self.rules.cascades else None)
        self._same_mover = same.copy()
        self.turns += 1
        self.stats.decisions += self.size

        finished: list[FinishedGame] = []
        over = afterstates.game_over[chosen]
        for game in np.flatnonzero(over).tolist():
            kind = outcomes.RESULT_KINDS[int(afterstates.result_kind[chosen[game]])]
            outcome = distributions[chosen[game]].astype(np.float32) if self.expected else None
            states, values = self.trajectory(game)
            finished.append(FinishedGame(states, values, kind, int(self.turns[game]), outcome, self.same_sides(game)))
            self.stats.games += 1
            self.stats.turns_of_finished += int(self.turns[game])
            self.stats.kinds[kind] += 1
        self.batch = next_positions(afterstates, chosen)  # the ended games' slots are restarted below
        stale = np.flatnonzero(~over & (self.turns >= self.max_turns))
        self.stats.abandoned += int(stale.size)
        ended = np.flatnonzero(over)
        if ended.size or stale.size:
            self._reset(np.concatenate([ended, stale]))
        return PlyResult(finished, **ply)

    def _expected_ply(self, dice: np.ndarray, epsilon: float):
        """One ply from all 21 rolls of every game: (afterstates, distributions, chosen rows, expectations).

        ``chosen`` are rows of the drawn roll's segment (greedy, or random with chance ``epsilon``);
        the expectations (G, K) average the greedy move's distribution over the rolls.
        """
        games, rolls = self.size, len(ROLLS)
        afterstates = generate(self.batch.take(np.repeat(np.arange(games), rolls)), np.tile(ROLLS, (games, 1)))
        distributions = self._distributions(afterstates)
        best = segment_argmax(distributions @ self.points, afterstates.offsets, self.rng)
        weights = np.broadcast_to(ROLL_WEIGHTS, (games, rolls)).copy()
        if self.rules.opening == "use-opening-dice":
            # A game's first turn plays the opening roll: the 15 rolls of two different dice, equally likely.
            weights[self.turns == 0] = OPENING_WEIGHTS
        expectations = np.einsum("grk,gr->gk", distributions[best].reshape(games, rolls, -1), weights)
        segments = np.arange(games) * rolls + ROLL_INDEX[dice[:, 0], dice[:, 1]]
        chosen = best[segments]
        if epsilon > 0:
            explore = self.rng.random(games) < epsilon
            if explore.any():
                chosen = np.where(explore, choose_random(afterstates, self.rng, segments), chosen)
        return afterstates, distributions, chosen, expectations.astype(np.float32)

    # ------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Plain data (tensors, ints, lists) of the running games, for a checkpoint."""
        lengths = [int(turns) for turns in self.turns]
        pieces = [self.trajectory(game) for game in range(self.size)]
        states = np.concatenate([piece[0] for piece in pieces])
        values = np.concatenate([piece[1] for piece in pieces])
        state = {
            "batch": torch.from_numpy(pack_states(self.batch, self.width).copy()),
            "turn": torch.from_numpy(self.batch.turn.copy()),
            "turns": torch.from_numpy(self.turns.copy()),
            "lengths": lengths,
            "states": torch.from_numpy(states.copy()),
            "values": torch.from_numpy(np.asarray(values, dtype=np.float32).copy()),
            "stats": {"games": self.stats.games, "decisions": self.stats.decisions,
                      "abandoned": self.stats.abandoned, "turns_of_finished": self.stats.turns_of_finished,
                      "kinds": dict(self.stats.kinds)},
        }
        if self.rules.cascades:
            state["same"] = torch.from_numpy(np.concatenate([self.same_sides(game) for game in range(self.size)]))
            state["same_mover"] = torch.from_numpy(self._same_mover.copy())
        return state

    def load_state_dict(self, state: dict) -> None:
        lengths = list(state["lengths"])
        if len(lengths) != self.size:
            raise ValueError(f"saved self-play has {len(lengths)} parallel games, this run has {self.size}")
        batch = unpack_states(state["batch"].numpy(), self.rules)
        batch.turn[:] = state["turn"].numpy()
        self.batch = batch
        self.turns = state["turns"].numpy().astype(np.int64).copy()
        if lengths != self.turns.tolist():
            raise ValueError("saved self-play: each game's stored trajectory must have one row per turn played")
        states, values = state["states"].numpy(), state["values"].numpy()
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        capacity = max(min(self.max_turns, 256), max(lengths, default=0) + 1)
        if states.shape[1] != self.width:
            raise ValueError(f"saved self-play keeps states of {states.shape[1]} columns; {self.rules.name} needs "
                             f"{self.width}")
        self._states = np.zeros((capacity, self.size, self.width), dtype=np.int8)
        self._values = np.zeros((capacity, self.size, values.shape[1]), dtype=np.float32)
        self._same = np.zeros((capacity, self.size), dtype=np.bool_)
        same = state["same"].numpy() if "same" in state else np.zeros(offsets[-1], dtype=np.bool_)
        self._same_mover = (state["same_mover"].numpy().astype(bool).copy() if "same_mover" in state
                            else np.zeros(self.size, dtype=np.bool_))
        for game in range(self.size):
            self._states[:lengths[game], game] = states[offsets[game]:offsets[game + 1]]
            self._values[:lengths[game], game] = values[offsets[game]:offsets[game + 1]]
            self._same[:lengths[game], game] = same[offsets[game]:offsets[game + 1]]
        stats = state["stats"]
        self.stats = SelfPlayStats(stats["games"], stats["decisions"], stats["abandoned"],
                                   stats["turns_of_finished"], Counter(stats["kinds"]))
