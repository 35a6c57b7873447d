"""Match equity tables per variant, computed from the variant's own rates of singles, gammons and top wins.

A match equity table (MET) gives the chance ``M(a, b)`` that a side needing
``a`` points wins the match against a side needing ``b``, at the start of a
game with the cube in the middle. Backgammon's published tables assume
backgammon's gammon rate; Tapa's mother wins (3 points) and plakoto's (2)
change the value of every score, so each variant gets its own table from its
own :class:`ResultRates`: the shares of decisive games won by 1, 2 and
``top`` points (draws replay the game at the same score and drop out).

The method (docs/cube.md gives the details):

1. **Post-Crawford** (the trailer needs ``n``, the leader 1): the trailer
   doubles at once, each game is a coin flip; the leader takes or passes,
   whichever is better for it (the free drop):
   ``P(n) = min(P(n - 1), 1/2 * sum_k f_k P(n - 2 k))``, ``P(<= 0) = 1``, ``P(1) = 1/2``.
2. **Crawford game** (no cube): ``C(n) = 1/2 * sum_k f_k P(n - k)``.
3. **Other scores**, by diagonals of growing ``a + b``: the game is
   Janowski's live-cube model in match-winning chances
   (:func:`tapa_ai.cube.equity.cubeful_curves`) at ``p = 1/2``, with the
   values of every result read from the part of the table already computed
   (a fully live cube, :data:`DEFAULT_MET_CUBE_LIFE`); the side on roll
   takes its proper cube action (so a side that should double at once does),
   and the two sides are equally likely to be on roll.

Without a cube (plakoto) step 3 is the plain game recursion and there is no
Crawford rule. :func:`variant_met` caches the table of each rule set.

The rates of each variant (:data:`VARIANT_RATES`) are counts of result kinds
in cubeless 0-ply self-play of the shipped net, measured by
``scripts/met_rates.py`` and read from :data:`RATES_FILE` (package data, with
each net's sha256 and generation); this module only reads that file, and a
missing or malformed one is a :class:`RatesFileError` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..errors import TapaError
from ..rules.options import REGISTRY, RuleOptions, variant_rules
from ..rules.outcomes import top_points
from .equity import (DEFAULT_CUBE_LIFE, LEVELS, MAX_CUBE, OWNER_CENTRED, OWNER_OPPONENT, CubeEquities, average_values,
                     cubeful_curves)

MAX_MATCH_LENGTH = 25
"""Longest match the tables cover (as GNU Backgammon's)."""

DEFAULT_MET_CUBE_LIFE = 1.0
"""The cube life used to build the tables: the fully live cube of the continuous model (Zadeh's), which
reproduces GNU Backgammon's table within half a percent from backgammon's rates, better than 0.68
(docs/cube.md)."""


@dataclass(frozen=True)
class ResultRates:
    """How decisive games of a variant end: shares of wins by 1, 2 and ``top_points`` points (summing to 1)."""

    single: float
    gammon: float
    top: float
    top_points: int = 3
    """Points of a top win: a backgammon (3), a tapa mother win (3) or a plakoto mother win (2)."""
    draw: float = 0.0
    """Draws per game (information only: a draw replays the game at the same score)."""
    source: str = ""
    """Where the numbers come from (a command)."""
    first_mover: float = 0.5
    """Share of decisive games won by the side that moves first (the Tavli table's opener, whom the winner of
    the last game is; 1/2 where not measured)."""

    def __post_init__(self) -> None:
        shares = (self.single, self.gammon, self.top)
        if any(not (isinstance(s, (int, float)) and 0.0 <= s <= 1.0) for s in shares):
            raise ValueError(f"result rates {shares}: each must be in [0, 1]")
        if abs(sum(shares) - 1.0) > 1e-6:
            raise ValueError(f"result rates single {self.single} + gammon {self.gammon} + top {self.top} "
                             "must sum to 1 (shares of decisive games)")
        if self.top_points not in (2, 3):
            raise ValueError(f"top_points {self.top_points!r}: must be 2 or 3")
        if not (isinstance(self.first_mover, (int, float)) and 0.0 <= self.first_mover <= 1.0):
            raise ValueError(f"first_mover {self.first_mover!r}: a share of decisive games, in [0, 1]")

    @property
    def shares(self) -> np.ndarray:
        return np.array([self.single, self.gammon, self.top])

    @property
    def points(self) -> np.ndarray:
        return np.array([1, 2, self.top_points])

    @classmethod
    def from_kinds(cls, kinds: dict[str, int], rules: RuleOptions, source: str = "",
                   first_mover_wins: Optional[int] = None) -> "ResultRates":
        """Rates from counts of result kinds (``single``, ``gammon``, ``backgammon``, ``mother``, ``draw``) and,
        where counted, of the decisive games the first mover won."""
        single, gammon = kinds.get("single", 0), kinds.get("gammon", 0)
        top = kinds.get("backgammon", 0) + kinds.get("mother", 0)
        decisive = single + gammon + top
        if decisive == 0:
            raise ValueError("no decisive games to take rates from")
        if first_mover_wins is not None and not 0 <= first_mover_wins <= decisive:
            raise ValueError(f"first_mover_wins {first_mover_wins}: more than the {decisive} decisive games")
        games = decisive + kinds.get("draw", 0)
        first = 0.5 if first_mover_wins is None else first_mover_wins / decisive
        return cls(single / decisive, gammon / decisive, top / decisive, top_points(rules),
                   kinds.get("draw", 0) / games, source, first)


VARIANTS = tuple(name for name, entry in REGISTRY.items() if entry.model is not None)
"""The variants with measured rates: those a shipped network plays (every other rule set uses its nearest one's,
:func:`rates_for`)."""


def model_variant(variant: str) -> str:
    """The variant whose shipped checkpoint plays ``variant``'s self-play for its rates (the registry's model:
    the backgammon net plays Portes with Portes' points); every other variant: its own."""
    entry = REGISTRY.get(variant)
    return entry.model if entry is not None and entry.model is not None else variant

RATES_FILE = Path(__file__).with_name("result_rates.json")
"""The measured counts of result kinds per variant (package data), written by ``scripts/met_rates.py``
from cubeless 0-ply self-play of the shipped nets, with each net's sha256 and generation; its shape is declared
in ``tapa_ai/schemas/result_rates.json`` and :func:`load_result_rates` is its one reader."""

_KINDS = ("single", "gammon", "backgammon", "mother", "draw")


class RatesFileError(TapaError, RuntimeError):
    """The result rates file is missing or malformed."""


def load_result_rates(path: str | Path = RATES_FILE) -> dict[str, ResultRates]:
    """The rates of every variant, from the counts in ``path`` (:data:`RATES_FILE`), checked."""
    path = Path(path)
    try:
        return _read_rates(path)
    except RatesFileError as error:
        raise RatesFileError(f"{path}: {error} (python scripts/met_rates.py measures it from the shipped "
                             "nets)") from None


def _read_rates(path: Path) -> dict[str, ResultRates]:
    """The file's rates, its shape checked against ``tapa_ai/schemas/result_rates.json`` (docs/schemas.md)."""
    from ..schema import check, loads

    try:
        data = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RatesFileError("missing: the match equity tables need the measured result rates") from None
    except (OSError, ValueError) as error:
        raise RatesFileError(f"cannot read the result rates: {error}") from None
    check(data, "result_rates", error=RatesFileError)
    rates = {}
    for variant in VARIANTS:
        entry = data["variants"][variant]
        model = entry.get("model")
        source = entry["command"] + (f" ({model})" if model else "")
        try:
            rates[variant] = ResultRates.from_kinds(entry["kinds"], variant_rules(variant), source,
                                                    entry.get("first_mover_wins"))
        except ValueError as error:
            raise RatesFileError(f"variants.{variant}: {error}") from None
    return rates


class _VariantRates(Mapping):
    """:data:`VARIANT_RATES`: read from :data:`RATES_FILE` on first use (so a bad file fails where a table is
    needed, with the file's name, not at import)."""

    @staticmethod
    @lru_cache(maxsize=1)
    def _rates() -> dict[str, ResultRates]:
        return load_result_rates()

    def __getitem__(self, variant: str) -> ResultRates:
        return self._rates()[variant]

    def __iter__(self):
        return iter(self._rates())

    def __len__(self) -> int:
        return len(self._rates())

    def __repr__(self) -> str:
        return f"VARIANT_RATES({self._rates()!r})"


VARIANT_RATES: Mapping[str, ResultRates] = _VariantRates()
"""The rates each variant's table is built from: counts of result kinds in 20,000 games of cubeless 0-ply
self-play of the shipped net (:data:`RATES_FILE`); top = backgammons + mother wins."""


@dataclass
class MatchEquityTable:
    """Match-winning chances at the start of a game, for scores up to ``max_away`` points away.

    :meth:`lookup` is the one way to read it: ``lookup(a, b, crawford_done)``
    is the chance of the side needing ``a`` points (``a <= 0``: it has won),
    and ``crawford_done`` says whether a score at 1-away is post-Crawford
    (the Crawford game has been played) or brings the Crawford game.
    """

    rates: ResultRates
    max_away: int
    cube: bool
    """The rule set has the cube."""
    crawford: bool
    """The rule set has the Crawford rule (needs the cube)."""
    cube_life: float
    table: np.ndarray = field(repr=False)
    """(2, N + 1, N + 1): [crawford_done, a, b] with index 0 meaning 'already won' (a) or 'already lost' (b)."""

    def lookup(self, away, opponent_away, crawford_done=False) -> np.ndarray:
        """Match-winning chance(s), vectorized; arguments broadcast together. Aways ``<= 0`` are clipped to 0."""
        a = np.clip(np.asarray(away, dtype=np.int64), 0, None)
        b = np.clip(np.asarray(opponent_away, dtype=np.int64), 0, None)
        if (a > self.max_away).any() or (b > self.max_away).any():
            raise ValueError(f"match equity table covers scores up to {self.max_away} away, got "
                             f"{int(a.max())} and {int(b.max())}")
        done = np.asarray(crawford_done, dtype=np.int64)
        return self.table[done, a, b]

    def equity(self, away: int, opponent_away: int, crawford_done: bool = False) -> float:
        """One score's match-winning chance."""
        return float(self.lookup(away, opponent_away, crawford_done))

    def pre_crawford(self, size: Optional[int] = None) -> np.ndarray:
        """(size, size) the table at pre-Crawford scores 1..size away (row: the side, column: the opponent)."""
        size = size or self.max_away
        return self.table[0, 1:size + 1, 1:size + 1].copy()

    def post_crawford(self, size: Optional[int] = None) -> np.ndarray:
        """(size,) the trailer's chance post-Crawford, needing 1..size against 1."""
        size = size or self.max_away
        return self.table[1, 1:size + 1, 1].copy()

    def to_dict(self) -> dict[str, Any]:
        return {"rates": asdict(self.rates), "max_away": self.max_away, "cube": self.cube, "crawford": self.crawford,
                "cube_life": self.cube_life, "pre_crawford": np.round(self.pre_crawford(), 6).tolist(),
                "post_crawford": np.round(self.post_crawford(), 6).tolist()}

    def markdown(self, size: int = 9) -> str:
        """The pre-Crawford table to ``size``-away as a markdown table of percentages (row needs a, column b)."""
        rows = ["| a \\ b | " + " | ".join(str(b) for b in range(1, size + 1)) + " |",
                "|---:|" + "---:|" * size]
        for a in range(1, size + 1):
            cells = " | ".join(f"{100 * self.equity(a, b):.1f}" for b in range(1, size + 1))
            rows.append(f"| **{a}** | {cells} |")
        return "\n".join(rows)


# -- match play ----------------------------------------------------------------------------------------
def match_cube_equities(win: np.ndarray, lose: np.ndarray, draw: np.ndarray, points: np.ndarray, cube_value,
                        owner, away: np.ndarray, opponent_away: np.ndarray, crawford_done,
                        met: MatchEquityTable, cube_life: float = DEFAULT_CUBE_LIFE,
                        crawford_game=False) -> CubeEquities:
    """Match-play cube equities: the doubler's match-winning chances of no double, double/take, double/pass.

    ``away``/``opponent_away`` (B,): points the roller and the other side
    still need; ``crawford_done`` (B,) bool: the Crawford game has been
    played (scores at 1-away are post-Crawford); ``crawford_game`` (B,):
    this is the Crawford game (no doubling at all). The values of every
    result come from ``met`` at the score the game would leave.
    """
    count = win.shape[0]
    value = np.broadcast_to(np.asarray(cube_value, dtype=np.int64), (count,))
    owner = np.broadcast_to(np.asarray(owner, dtype=np.int64), (count,))
    away = np.broadcast_to(np.asarray(away, dtype=np.int64), (count,))
    opponent_away = np.broadcast_to(np.asarray(opponent_away, dtype=np.int64), (count,))
    done = np.broadcast_to(np.asarray(crawford_done, dtype=bool), (count,))
    no_cube = np.broadcast_to(np.asarray(crawford_game, dtype=bool), (count,)) | (not met.cube)
    x = float(cube_life)
    p, _, _, decisive = average_values(win, lose, points)
    p_win, p_lose = win.sum(axis=1), lose.sum(axis=1)
    win_share = np.where(p_win[:, None] > 0, win / np.where(p_win > 0, p_win, 1.0)[:, None], [1.0, 0.0, 0.0])
    lose_share = np.where(p_lose[:, None] > 0, lose / np.where(p_lose > 0, p_lose, 1.0)[:, None], [1.0, 0.0, 0.0])
    level_values = value[:, None] * (2 ** np.arange(LEVELS))[None, :]  # (B, LEVELS)
    capped = np.minimum(level_values, 4 * MAX_CUBE)  # beyond the cap nothing is read; keeps the integers small
    win_v, lose_v, dead_v = (np.zeros((count, LEVELS)) for _ in range(3))
    for k, pts in enumerate(points.astype(np.int64)):
        won = met.lookup(away[:, None] - capped * pts, opponent_away[:, None], done[:, None])
        lost = met.lookup(away[:, None], opponent_away[:, None] - capped * pts, done[:, None])
        win_v += win_share[:, k:k + 1] * won
        lose_v += lose_share[:, k:k + 1] * lost
        dead_v += win[:, k:k + 1] * won + lose[:, k:k + 1] * lost
    # A draw: the next game at the same score (not read where there are no draws: while a table is
    # being built, the score being computed has no value yet).
    same_score = met.lookup(away, opponent_away, done) if (draw > 0).any() else np.zeros(count)
    draw_value = np.where(draw > 0, draw * same_score, 0.0)
    dead_v += draw_value[:, None]
    cash_v = met.lookup(away[:, None] - capped, opponent_away[:, None], done[:, None])
    drop_v = met.lookup(away[:, None], opponent_away[:, None] - capped, done[:, None])
    can_double = (level_values[:, 1:] <= MAX_CUBE) & ~no_cube[:, None]
    can_double = np.concatenate([can_double, np.zeros((count, 1), dtype=bool)], axis=1)
    curves = cubeful_curves(win_v, lose_v, cash_v, drop_v, can_double)

    def cubeful(level, owner_code):
        live = decisive * curves.value(p, level, owner_code) + draw_value
        return x * live + (1.0 - x) * dead_v[:, level]

    no_double = cubeful(0, owner)
    double_take = cubeful(1, np.full(count, OWNER_OPPONENT))
    double_pass = cash_v[:, 0]
    may_double = can_double[:, 0] & (owner != OWNER_OPPONENT)
    return CubeEquities(no_double, double_take, double_pass, "mwc", may_double)



def build_met(rates: ResultRates, *, max_away: int = MAX_MATCH_LENGTH, cube: bool = True, crawford: bool = True,
              cube_life: float = DEFAULT_MET_CUBE_LIFE) -> MatchEquityTable:
    """The match equity table of ``rates`` (see the module docstring for the method)."""
    if crawford and not cube:
        raise ValueError("the Crawford rule needs the cube")
    if not (isinstance(max_away, int) and max_away >= 1):
        raise ValueError(f"max_away {max_away!r}: must be an integer >= 1")
    size = max_away + 1
    table = np.full((2, size, size), np.nan)
    table[:, 0, :] = 1.0  # the side has won
    table[:, :, 0] = 0.0  # the other side has won
    table[:, 0, 0] = 0.5  # never read
    shares, points = rates.shares, rates.points
    met = MatchEquityTable(rates, max_away, cube, crawford, cube_life, table)
    if crawford:
        post = np.ones(size)  # index n: the trailer needs n
        post_of = lambda n: 1.0 if n <= 0 else post[n]  # noqa: E731
        post[1] = 0.5
        for n in range(2, size):
            take = 0.5 * sum(f * post_of(n - 2 * int(k)) for f, k in zip(shares, points))
            post[n] = min(post_of(n - 1), take)
        crawford_game = np.full(size, 0.5)
        for n in range(2, size):
            crawford_game[n] = 0.5 * sum(f * post_of(n - int(k)) for f, k in zip(shares, points))
        table[1, 1:, 1] = post[1:size]
        table[1, 1, 1:] = 1.0 - post[1:size]
        table[0, 1:, 1] = crawford_game[1:]
        table[0, 1, 1:] = 1.0 - crawford_game[1:]
        table[0, 1, 1] = 0.5
        first = 2
    else:
        first = 1
    for total in range(2 * first, 2 * max_away + 1):
        cells = [(a, total - a) for a in range(first, max_away + 1) if first <= total - a <= max_away]
        if not cells:
            continue
        away = np.array([a for a, _ in cells])
        opponent_away = np.array([b for _, b in cells])
        roller = _roller_value(met, shares, points, away, opponent_away)
        index = {cell: i for i, cell in enumerate(cells)}
        values = np.array([0.5 * (roller[i] + 1.0 - roller[index[(b, a)]]) for i, (a, b) in enumerate(cells)])
        table[0, away, opponent_away] = values
        if not crawford:
            table[1, away, opponent_away] = values
    if crawford:
        # Post-Crawford scores without a side at 1-away are the same as before Crawford.
        inner = np.s_[2:, 2:]
        table[1][inner] = table[0][inner]
    return met


def _roller_value(met: MatchEquityTable, shares: np.ndarray, points: np.ndarray, away: np.ndarray,
                  opponent_away: np.ndarray) -> np.ndarray:
    """(B,) the chance of the side on roll at p = 1/2 with the cube centred, taking its proper cube action."""
    count = away.size
    win = np.tile(0.5 * shares, (count, 1))
    rules_points = points.astype(np.float64)
    if not met.cube:
        # Without a cube the game is its dead-cube value.
        equities = match_cube_equities(win, win, np.zeros(count), rules_points, 1, OWNER_CENTRED, away,
                                       opponent_away, False, met, 1.0, crawford_game=True)
        return equities.no_double
    equities = match_cube_equities(win, win, np.zeros(count), rules_points, 1, OWNER_CENTRED, away, opponent_away,
                                   False, met, met.cube_life)
    return equities.equity


@lru_cache(maxsize=16)
def _cached_met(rates: ResultRates, max_away: int, cube: bool, crawford: bool, cube_life: float) -> MatchEquityTable:
    return build_met(rates, max_away=max_away, cube=cube, crawford=crawford, cube_life=cube_life)


def rates_for(rules: RuleOptions) -> ResultRates:
    """The result rates of a rule set: its variant's measured ones, with the rule set's own top points."""
    base = VARIANT_RATES.get(rules.name)
    if base is None:  # the first variant of the registry whose checkers meet as this rule set's do
        base = next(VARIANT_RATES[name] for name, entry in REGISTRY.items() if name in VARIANT_RATES
                    and (entry.rules.contact, entry.rules.paths) == (rules.contact, rules.paths))
    top = top_points(rules)
    if top != base.top_points:
        base = replace(base, top_points=top)
    return base


def variant_met(rules: RuleOptions | str, cube_life: float = DEFAULT_MET_CUBE_LIFE) -> MatchEquityTable:
    """The match equity table of a rule set (or variant name), built once and cached."""
    if isinstance(rules, str):
        rules = variant_rules(rules)
    return _cached_met(rates_for(rules), MAX_MATCH_LENGTH, rules.cube, rules.crawford, float(cube_life))


def write_met(table: MatchEquityTable, path) -> None:
    """The table as JSON (see :meth:`MatchEquityTable.to_dict`)."""
    with open(path, "w") as handle:
        json.dump(table.to_dict(), handle, indent=1)
        handle.write("\n")

