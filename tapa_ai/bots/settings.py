"""The settings of a network bot, in four small frozen groups (issue 62: the family as data).

A :class:`~tapa_ai.bots.search.NetBot` is an evaluator (a network's, an ONNX model's; with or without the
bear-off databases) played by four independent groups of settings, each checked where it is made (a value out of
range is a :class:`~tapa_ai.bots.base.BotError`, one line):

- :class:`SearchSettings`: the depth (``plies``), the root's move filter (``candidates`` within ``margin``) and
  the second filter (``refine``); spec options ``@Nply``, ``refine=N:M``, ``level=`` (its depth);
- :class:`CubeSettings`: whether the evaluation decides the cube (else the passive cube) and Janowski's cube
  life; ``nocube``, ``cube_life=X``;
- :class:`NoiseSettings`: the noise on each move's value and its seed; ``noise=X``, ``noise_seed=N``,
  ``level=`` (its noise);
- :class:`MatchSettings`: what the checker play and the cube read of the stakes: the match score (else cubeless
  money equity), the score in cube decisions, the chance of winning instead of the points; ``money_play``,
  ``money_cube``, ``wins``.

The evaluator carries the rest: ``nobearoff`` (``NetBot(..., bearoff=False)``) and ``points=VARIANT``
(:meth:`~tapa_ai.bots.search.NetBot.playing`).

:class:`NetBotSettings` holds the four (``bot.settings``): ``NetBot(evaluator, search=SearchSettings(plies=2),
cube=CubeSettings(enabled=False))``. A bot spec's options map onto these fields through one table
(:data:`tapa_ai.bots.spec.SPEC_SETTINGS`), and the bot is built once from them (:func:`tapa_ai.bots.spec.make_bot`).
This module imports nothing heavy (no torch, no search: numpy and the rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

from ..cube.equity import DEFAULT_CUBE_LIFE
from .base import BotError

__all__ = ["CubeSettings", "DEFAULT_CANDIDATES", "DEFAULT_MARGIN", "MAX_PLIES", "MatchSettings", "NetBotSettings",
           "NoiseSettings", "SearchSettings", "check_refine"]

DEFAULT_CANDIDATES = 8
"""Moves the root's filter keeps for the full-depth search (GNU Backgammon's move filter)."""
DEFAULT_MARGIN = 0.16
"""Points of equity within the best that the root's filter keeps."""
MAX_PLIES = 3
"""The deepest search of a network bot."""


def check_refine(refine) -> Optional[tuple[int, float]]:
    """``refine`` as ``(n, m)`` (an integer >= 1 and a margin >= 0), or None; BotError when it is neither."""
    if refine is None:
        return None
    try:
        count, margin = refine
    except (TypeError, ValueError):
        raise BotError(f"refine={refine!r}: want (moves kept, equity margin), e.g. (2, 0.04)") from None
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BotError(f"refine={refine!r}: the moves kept must be an integer >= 1")
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not margin >= 0:
        raise BotError(f"refine={refine!r}: the margin must be a number >= 0 (points of equity)")
    return int(count), float(margin)


def _is_integer(value: Any) -> bool:
    import numbers

    return not isinstance(value, bool) and isinstance(value, numbers.Integral)


def _is_number(value: Any) -> bool:
    import numbers

    return not isinstance(value, bool) and isinstance(value, numbers.Real)


@dataclass(frozen=True)
class SearchSettings:
    """How deep the bot searches and which of the root's moves it searches at the full depth
    (:mod:`tapa_ai.bots.search`, module docstring)."""

    plies: int = 0
    """0 to :data:`MAX_PLIES`: 0 chooses by the evaluation of each move."""
    candidates: Optional[int] = DEFAULT_CANDIDATES
    """The root's filter keeps the best ``candidates`` moves (None: no limit) ..."""
    margin: Optional[float] = DEFAULT_MARGIN
    """... within ``margin`` points of the best (None: no limit)."""
    refine: Optional[tuple[int, float]] = None
    """``(n, m)``: at 2 plies or more, keep the best n within m points after a search one ply shallower
    (``refine=N:M``)."""

    def __post_init__(self) -> None:
        if not _is_number(self.plies) or not 0 <= self.plies <= MAX_PLIES:
            raise BotError(f"plies={self.plies}: a network searches 0 to {MAX_PLIES} plies")
        if self.candidates is not None and (not _is_integer(self.candidates) or self.candidates < 1):
            raise BotError(f"candidates={self.candidates!r}: the filter keeps an integer >= 1 of moves (None: no "
                           "limit)")
        if self.margin is not None and (not _is_number(self.margin) or not self.margin >= 0):
            raise BotError(f"margin={self.margin!r}: the filter's margin is a number >= 0 (points of equity; None: "
                           "no limit)")
        object.__setattr__(self, "refine", check_refine(self.refine))


@dataclass(frozen=True)
class CubeSettings:
    """How the bot decides the cube."""

    enabled: bool = True
    """False: the passive cube (never double, always take) instead of decisions from the evaluation
    (``nocube``)."""
    life: float = DEFAULT_CUBE_LIFE
    """Janowski's cube life x of the decisions, from 0 (dead cube) to 1 (fully live) (``cube_life=X``)."""

    def __post_init__(self) -> None:
        if not isinstance(self.enabled, bool):
            raise BotError(f"cube enabled={self.enabled!r}: want True or False")
        if not _is_number(self.life) or not 0.0 <= self.life <= 1.0:
            raise BotError(f"cube_life={self.life!r}: the cube life is a number from 0 (dead cube) to 1 (fully live)")
        object.__setattr__(self, "life", float(self.life))


@dataclass(frozen=True)
class NoiseSettings:
    """Noise on each move's value before the best is taken: a weaker level of play (:mod:`tapa_ai.bots.noise`)."""

    noise: float = 0.0
    """Points of noise (0: none), 0 to :data:`tapa_ai.bots.noise.MAX_NOISE` (``noise=X``)."""
    noise_seed: Optional[int] = None
    """An integer makes the noise a function of the seed and the position after the move (deterministic); None
    draws it from the bot's generator (``noise_seed=N``)."""

    def __post_init__(self) -> None:
        from .noise import check_noise, check_noise_seed

        try:
            object.__setattr__(self, "noise", check_noise(self.noise))
            if self.noise_seed is not None:
                object.__setattr__(self, "noise_seed", check_noise_seed(self.noise_seed))
        except ValueError as error:
            raise BotError(str(error)) from None


@dataclass(frozen=True)
class MatchSettings:
    """What the bot's checker play and cube read of the game's stakes (baselines for measurements where off)."""

    score_play: bool = True
    """False: checker play in a match ignores the score (plays by cubeless money equity; ``money_play``)."""
    match_cube: bool = True
    """False: in matches too, cube decisions as in money play, ignoring the score (``money_cube``)."""
    wins: bool = False
    """True: checker plays by the chance of winning (every win class +1, every loss -1, a draw 0) instead of the
    expected points, as at double match point (``wins``); cube decisions still use the full distribution."""

    def __post_init__(self) -> None:
        for name in ("score_play", "match_cube", "wins"):
            if not isinstance(getattr(self, name), bool):
                raise BotError(f"{name}={getattr(self, name)!r}: want True or False")


@dataclass(frozen=True)
class NetBotSettings:
    """A network bot's four groups of settings (``NetBot.settings``)."""

    search: SearchSettings = field(default_factory=SearchSettings)
    cube: CubeSettings = field(default_factory=CubeSettings)
    noise: NoiseSettings = field(default_factory=NoiseSettings)
    match: MatchSettings = field(default_factory=MatchSettings)

    def __post_init__(self) -> None:
        for name, kind in (("search", SearchSettings), ("cube", CubeSettings), ("noise", NoiseSettings),
                           ("match", MatchSettings)):
            if not isinstance(getattr(self, name), kind):
                raise BotError(f"{name}={getattr(self, name)!r}: want a {kind.__name__}")

    def with_values(self, group: str, **values: Any) -> "NetBotSettings":
        """These settings with ``values`` set in ``group`` (``"search"``, ``"cube"``, ``"noise"``, ``"match"``),
        checked as any new settings are."""
        return replace(self, **{group: replace(getattr(self, group), **values)})
