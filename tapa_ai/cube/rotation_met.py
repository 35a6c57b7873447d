"""Match equity of a rotation: match-winning chances by the score, the next game of the rotation and its opener.

A rotation's match (docs/rules.md 9 and 10.4: Tavli, Tabla, or any list of the
family's games, :mod:`tapa_ai.rules.rotations`) has no cube, so its table is
the plain game recursion of :mod:`tapa_ai.cube.met` with two more things in
the state: which game of the rotation comes next (each has its own result
rates), and who opens it (the winner of the last game; an opening roll for the
first game and after a draw). ``M(a, b, g, o)`` is the chance that the side
needing ``a`` points wins the match against a side needing ``b``, before game
``g`` of the rotation (an index into its list) that ``o`` opens: :data:`OPENS`
(the side), :data:`RECEIVES` (the opponent) or :data:`OPENING_ROLL`.

Each game's rates are a :class:`~tapa_ai.cube.met.ResultRates` measured in
cubeless 0-ply self-play of the shipped net (``scripts/met_rates.py``,
:func:`~tapa_ai.cube.met.rates_for`: the game's own top points, so Tapa's
mother wins and backgammons count 3, backgammon's backgammons 3, Plakoto's
mother wins 2): ``f``, the share of decisive games the first mover wins;
``s_k``, the shares of wins by each result's points ``p_k`` (the same for both
sides); ``d``, draws per game. With the side opening::

    M(a, b, g, OPENS) = (1 - d) * [ f * sum_k s_k M(a - p_k, b, g + 1, OPENS)
                                    + (1 - f) * sum_k s_k M(a, b - p_k, g + 1, RECEIVES) ]
                        + d * M(a, b, g + 1, OPENING_ROLL)

(the winner opens the next game, a draw scores nothing and the next game
opens with an opening roll); ``RECEIVES`` swaps ``f`` and ``1 - f``;
``M(., ., g, OPENING_ROLL)`` is the mean of the two. ``M(<= 0, b) = 1``,
``M(a, <= 0) = 0``. A draw leaves the score as it is, so the states of one
score are solved together (a fixed point; draws are rare: it converges in a
few rounds).

A table is built for a rotation on demand and cached (:func:`rotation_met`;
about a tenth of a second for three games to 25 away); the presets' tables
are in docs/match-equity.md.

**Checker play by the score** (:class:`RotationScore`): in game ``g`` at ``(a,
b)`` the mover's outcome classes are worth: a win by ``p`` points ``M(a - p,
b, g + 1, OPENS)``, a loss by ``p`` ``M(a, b - p, g + 1, RECEIVES)``, a draw
``M(a, b, g + 1, OPENING_ROLL)``; a bot with an evaluator plays the move of
the highest expected match-winning chance
(:meth:`~tapa_ai.bots.base.Bot.choose_at_score`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional, Sequence

import numpy as np

from ..rules.rotations import ROTATIONS, Rotation
from .met import MAX_MATCH_LENGTH, ResultRates, rates_for

__all__ = ["OPENS", "RECEIVES", "OPENING_ROLL", "RotationMatchEquityTable", "RotationScore", "build_rotation_met",
           "check_match_length", "rotation_met", "rotation_rates"]

OPENS, RECEIVES, OPENING_ROLL = 0, 1, 2
"""Who opens the next game: the side, its opponent, or an opening roll."""
OPENER_NAMES = ("the side opens", "the opponent opens", "opening roll")


@dataclass(frozen=True)
class RotationMatchEquityTable:
    """``M(a, b, g, o)`` for scores up to ``max_away`` away (module docstring); read it with :meth:`lookup`."""

    variants: tuple[str, ...]
    """The variant of each game of the rotation, in turn."""
    rates: tuple[ResultRates, ...]
    """The result rates of each game of the rotation, in turn."""
    max_away: int
    table: np.ndarray = field(repr=False)
    """(3 openers, G games, N + 1, N + 1): index 0 of ``a`` means 'already won', of ``b`` 'already lost'."""

    @property
    def games(self) -> int:
        """How many games the rotation has."""
        return len(self.rates)

    def lookup(self, away, opponent_away, game, opener) -> np.ndarray:
        """Match-winning chance(s) before game ``game`` (rotation index, any integer: taken mod the rotation's
        length) opened by ``opener``; vectorized, arguments broadcast together. Aways ``<= 0`` are clipped to 0."""
        a = np.clip(np.asarray(away, dtype=np.int64), 0, None)
        b = np.clip(np.asarray(opponent_away, dtype=np.int64), 0, None)
        if (a > self.max_away).any() or (b > self.max_away).any():
            raise ValueError(f"the rotation's match equity table covers scores up to {self.max_away} away, got "
                             f"{int(a.max())} and {int(b.max())}")
        g = np.asarray(game, dtype=np.int64) % self.games
        return self.table[np.asarray(opener, dtype=np.int64), g, a, b]

    def equity(self, away: int, opponent_away: int, game: int = 0, opener: int = OPENING_ROLL) -> float:
        """One state's match-winning chance."""
        return float(self.lookup(away, opponent_away, game, opener))

    def class_values(self, points: np.ndarray, away, opponent_away, game) -> np.ndarray:
        """(B, K) what each outcome class of game ``game`` (rotation index) is worth to its mover, as match-winning
        chances: ``points`` (K,) the classes' points for the mover (a win > 0, a loss < 0, a draw 0);
        ``away``/``opponent_away`` (B,) what the mover and the other side need."""
        points = np.asarray(points, dtype=np.float64)
        away = np.atleast_1d(np.asarray(away, dtype=np.int64))
        opponent_away = np.atleast_1d(np.asarray(opponent_away, dtype=np.int64))
        after = np.asarray(game, dtype=np.int64) + 1
        values = np.empty((away.size, points.size))
        for k, value in enumerate(points):
            size = int(round(abs(float(value))))
            if value > 0:
                values[:, k] = self.lookup(away - size, opponent_away, after, OPENS)
            elif value < 0:
                values[:, k] = self.lookup(away, opponent_away - size, after, RECEIVES)
            else:
                values[:, k] = self.lookup(away, opponent_away, after, OPENING_ROLL)
        return values

    def markdown(self, size: int = 7, game: int = 0, opener: int = OPENING_ROLL) -> str:
        """The table to ``size``-away before game ``game`` opened by ``opener``, in percent (row: the side needs a)."""
        rows = ["| a \\ b | " + " | ".join(str(b) for b in range(1, size + 1)) + " |", "|---:|" + "---:|" * size]
        for a in range(1, size + 1):
            cells = " | ".join(f"{100 * self.equity(a, b, game, opener):.1f}" for b in range(1, size + 1))
            rows.append(f"| **{a}** | {cells} |")
        return "\n".join(rows)

    def to_dict(self, size: int = 7) -> dict[str, Any]:
        """The rotation's games, each game's rates and the table to ``size`` away (each game in turn, as a list:
        a variant may come twice in a rotation)."""
        return {"rotation": list(self.variants), "max_away": self.max_away,
                "rates": [{"variant": variant, "single": r.single, "gammon": r.gammon, "top": r.top,
                           "top_points": r.top_points, "draw": r.draw, "first_mover": r.first_mover,
                           "source": r.source} for variant, r in zip(self.variants, self.rates)],
                "openers": list(OPENER_NAMES),
                "table": [[np.round(self.table[o, g, 1:size + 1, 1:size + 1], 6).tolist() for o in range(3)]
                          for g in range(self.games)]}


def _outcomes(rates: ResultRates) -> tuple[np.ndarray, np.ndarray]:
    """(shares, points) of a decisive game's results, the points as the game's rule set counts them."""
    return rates.shares, rates.points.astype(np.int64)


def check_match_length(length: int, label: str, error: type[Exception] = ValueError) -> None:
    """``error`` naming ``label`` (the option, e.g. ``--tabla 30``) unless ``length`` is a rotation's match length
    the tables cover (an integer, 1 to :data:`~tapa_ai.cube.met.MAX_MATCH_LENGTH` points): the one check of a
    rotation's match played by bots (``tapa-ai play --tavli/--tabla/--rotation``, ``tapa-ai match``, :func:`tapa_ai.
    arena.rotation.run_rotation_match`, :meth:`tapa_ai.play.session.PlaySession.rotation_match`)."""
    if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= MAX_MATCH_LENGTH:
        raise error(f"{label}: a rotation's match (Tavli, Tabla) is to 1 to {MAX_MATCH_LENGTH} points, its match "
                    "equity table's (3, 5 or 7 are usual)")


def build_rotation_met(rates: Sequence[ResultRates], max_away: int = MAX_MATCH_LENGTH,
                       tolerance: float = 1e-13, variants: Optional[Sequence[str]] = None) -> RotationMatchEquityTable:
    """The table of a rotation whose games have ``rates``, in turn (module docstring); ``variants``: their names
    (``game1``, ``game2``, ... where not given)."""
    rates = tuple(rates)
    games_count = len(rates)
    if games_count < 1:
        raise ValueError("want the result rates of at least one game")
    variants = tuple(variants) if variants is not None else tuple(f"game{g + 1}" for g in range(games_count))
    if len(variants) != games_count:
        raise ValueError(f"{len(variants)} variant names for {games_count} games' rates")
    if isinstance(max_away, bool) or not isinstance(max_away, int) or max_away < 1:
        raise ValueError(f"max_away {max_away!r}: must be an integer >= 1")
    size = max_away + 1
    table = np.full((3, games_count, size, size), np.nan)
    table[:, :, 0, :] = 1.0
    table[:, :, :, 0] = 0.0
    table[:, :, 0, 0] = 0.5  # never read
    games = [_outcomes(r) for r in rates]

    def value(a: int, b: int, g: int, o: int) -> float:
        return 1.0 if a <= 0 else 0.0 if b <= 0 else float(table[o, g % games_count, a, b])

    for total in range(2, 2 * max_away + 1):
        for a in range(max(1, total - max_away), min(max_away, total - 1) + 1):
            b = total - a
            # What each game's decisive results lead to (scores already solved: fewer points needed).
            win = np.zeros(games_count)
            lose = np.zeros(games_count)
            for g, (shares, points) in enumerate(games):
                win[g] = sum(s * value(a - p, b, g + 1, OPENS) for s, p in zip(shares, points))
                lose[g] = sum(s * value(a, b - p, g + 1, RECEIVES) for s, p in zip(shares, points))
            table[:, :, a, b] = 0.5
            for _ in range(1000):
                before = table[:, :, a, b].copy()
                for g, r in enumerate(rates):
                    f, d = r.first_mover, r.draw
                    draw = table[OPENING_ROLL, (g + 1) % games_count, a, b]
                    table[OPENS, g, a, b] = (1 - d) * (f * win[g] + (1 - f) * lose[g]) + d * draw
                    table[RECEIVES, g, a, b] = (1 - d) * ((1 - f) * win[g] + f * lose[g]) + d * draw
                    table[OPENING_ROLL, g, a, b] = 0.5 * (table[OPENS, g, a, b] + table[RECEIVES, g, a, b])
                if np.abs(table[:, :, a, b] - before).max() < tolerance:
                    break
    return RotationMatchEquityTable(variants, rates, max_away, table)


@lru_cache(maxsize=16)
def _cached(variants: tuple[str, ...], rates: tuple[ResultRates, ...]) -> RotationMatchEquityTable:
    return build_rotation_met(rates, variants=variants)


def rotation_rates(rotation: Rotation) -> tuple[ResultRates, ...]:
    """The measured rates of the rotation's games (:func:`~tapa_ai.cube.met.rates_for`: each variant's, with the
    game's own top points), in turn."""
    return tuple(rates_for(rules) for rules in rotation.games)


def rotation_met(rotation: Rotation | str = "tavli") -> RotationMatchEquityTable:
    """The table of a rotation (or a preset's name) from the measured rates, built on first use and cached."""
    if isinstance(rotation, str):
        rotation = ROTATIONS[rotation]
    return _cached(rotation.variants, rotation_rates(rotation))


@dataclass
class RotationScore:
    """The score of ``B`` positions of matches of one rotation, seen from each position's mover: what a bot needs
    to play by it (:meth:`~tapa_ai.bots.base.Bot.choose_at_score`)."""

    table: RotationMatchEquityTable
    away: np.ndarray
    """(B,) int64 points the mover still needs."""
    opponent_away: np.ndarray
    """(B,) int64 points the other side still needs."""
    game: np.ndarray
    """(B,) int64 the game being played, as a rotation index (game number - 1, mod the rotation's length or
    not)."""

    def __post_init__(self) -> None:
        self.away = np.atleast_1d(np.asarray(self.away, dtype=np.int64))
        count = self.away.size
        self.opponent_away = np.broadcast_to(np.asarray(self.opponent_away, dtype=np.int64), (count,))
        self.game = np.broadcast_to(np.asarray(self.game, dtype=np.int64), (count,))

    def __len__(self) -> int:
        return int(self.away.size)

    def take(self, index) -> "RotationScore":
        """The scores at ``index``."""
        return RotationScore(self.table, self.away[index], self.opponent_away[index], self.game[index])

    def class_values(self, points: np.ndarray) -> np.ndarray:
        """(B, K) each outcome class's worth to the mover, as match-winning chances (``points``: the classes')."""
        return self.table.class_values(points, self.away, self.opponent_away, self.game)
