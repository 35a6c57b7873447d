"""A Tavli player (docs/rules.md 9): one bot per game of the rotation, Portes, Plakoto and Fevga.

Spec forms (:func:`tavli_specs`):

- ``tavli:PORTES,PLAKOTO,FEVGA``: a bot spec per game, in the rotation's
  order, e.g. ``tavli:net:backgammon,heuristic,net:fevga``. The commas split
  the three specs, except that a piece that is a bot option (``nocube``,
  ``wins``, ``money_cube``, ``money_play``, ``nobearoff``, ``points=...``,
  ``refine=...``, ``cube_life=...``, ``level=...``, ``noise=...``,
  ``noise_seed=...``) belongs to the spec before it, as it would on its own:
  ``tavli:net:backgammon,points=backgammon,heuristic,net:fevga@1ply,wins`` is
  ``net:backgammon,points=backgammon`` / ``heuristic`` / ``net:fevga@1ply,wins``.
  No bot spec begins with an option's name, so the split is unambiguous.
  ``engine:`` specs, whose command lines may hold commas, cannot be one of
  the three.
- ``net:tavli`` (optionally ``net:tavli@Nply`` and options after commas): the
  shipped models ``net:backgammon`` (playing Portes with Portes' points),
  ``net:plakoto`` and ``net:fevga``, each with the same search depth and
  options.

A network bot plays its checkers by the match score (the Tavli match equity
table, :mod:`tapa_ai.cube.tavli_met`); ``,money_play`` (``net:tavli,money_play``)
makes it play by cubeless money equity instead, the baseline of docs/tavli.md.
- any other spec: the same bot plays all three games (``heuristic``,
  ``random``, ``runner``); a spec that cannot play one of them is one error
  line naming the game.
"""

from __future__ import annotations

import re
from ..flow.tavli import TAVLI_ROTATION
from ..rules.options import REGISTRY, variant_rules
from .base import Bot, BotError
from .spec import SPEC_OPTIONS, make_bot

__all__ = ["TAVLI_MODELS", "TavliPlayer", "make_tavli_player", "tavli_specs"]

TAVLI_PREFIX = "tavli:"
TAVLI_MODELS = tuple(f"net:{REGISTRY[variant].model}" for variant in TAVLI_ROTATION)
"""The shipped models ``net:tavli`` plays the rotation's games with, in its order (each game's registry model:
``net:backgammon``, ``net:plakoto``, ``net:fevga``)."""
_SHIPPED = re.compile(r"^net:tavli(?P<plies>@\d+(?:ply)?)?$")
_FLAG_OPTIONS = tuple(name for name, form in SPEC_OPTIONS.items() if form is None)
_VALUE_OPTIONS = tuple(f"{name}=" for name, form in SPEC_OPTIONS.items() if form is not None)


def _is_option(piece: str) -> bool:
    piece = piece.strip()
    return piece in _FLAG_OPTIONS or piece.startswith(_VALUE_OPTIONS)


def tavli_specs(spec: str) -> tuple[str, str, str]:
    """The bot specs of the Portes, Plakoto and Fevga games of the Tavli player ``spec`` (module docstring)."""
    if not isinstance(spec, str) or not spec.strip():
        raise BotError(f"Tavli player {spec!r}: empty")
    text = spec.strip()
    base, _, options = text.partition(",")
    shipped = _SHIPPED.match(base)
    if shipped:
        suffix = (shipped.group("plies") or "") + ("," + options if options else "")
        return tuple(model + suffix for model in TAVLI_MODELS)  # type: ignore[return-value]
    if not text.startswith(TAVLI_PREFIX):
        return (text, text, text)
    groups: list[str] = []
    for piece in text[len(TAVLI_PREFIX):].split(","):
        if groups and _is_option(piece):
            groups[-1] += "," + piece.strip()
        else:
            groups.append(piece.strip())
    if any(not group for group in groups) or len(groups) != len(TAVLI_ROTATION):
        raise BotError(f"Tavli player {text!r}: want tavli:PORTES,PLAKOTO,FEVGA (three bot specs, one per game; "
                       f"got {len(groups)}: {', '.join(repr(g) for g in groups)})")
    for group in groups:
        if group.startswith("engine:"):
            raise BotError(f"Tavli player {text!r}: an engine: spec takes the commas after it into its command "
                           "line, so it cannot be one of the three")
    return tuple(groups)  # type: ignore[return-value]


class TavliPlayer:
    """The bots of a Tavli player, one per variant of the rotation (:attr:`players`)."""

    def __init__(self, spec: str, players: dict[str, Bot]) -> None:
        self.spec = spec
        self.players = players

    def bot(self, variant: str) -> Bot:
        """The bot playing ``variant``'s games."""
        return self.players[variant]

    def close(self) -> None:
        for bot in self.players.values():
            bot.close()

    def __repr__(self) -> str:
        return f"TavliPlayer({self.spec!r})"


def make_tavli_player(spec: str) -> TavliPlayer:
    """The :class:`TavliPlayer` of ``spec``; a spec that cannot play one of the games is one error line."""
    specs = tavli_specs(spec)
    players: dict[str, Bot] = {}
    try:
        for number, (variant, one) in enumerate(zip(TAVLI_ROTATION, specs), start=1):
            try:
                players[variant] = make_bot(one, variant_rules(variant))
            except BotError as error:
                raise BotError(f"Tavli player {spec.strip()!r} cannot play {variant} (game {number} of the "
                               f"rotation): {error}") from None
    except BaseException:
        for bot in players.values():
            bot.close()
        raise
    return TavliPlayer(spec.strip(), players)
