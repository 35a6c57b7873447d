"""A rotation's player (docs/rules.md 9 and 10.4): one bot per game of a rotation, as Tavli's Portes, Plakoto,
Fevga or Tabla's backgammon, Gul Bara, Tapa.

Spec forms (:func:`rotation_specs`, for a :class:`~tapa_ai.rules.rotations.Rotation`):

- ``rotation:SPEC1,SPEC2,...``: a bot spec per game, in the rotation's order,
  e.g. ``rotation:net:backgammon,heuristic,net:tapa`` for Tabla; ``tavli:`` and
  ``tabla:`` are the same form for those presets (``tavli:PORTES,PLAKOTO,
  FEVGA``, ``tabla:BACKGAMMON,GULBARA,TAPA``) and name the rotation they play.
  The commas split the specs, except that a piece that is a bot option
  (``nocube``, ``wins``, ``money_play``, ``points=...``, ``level=...``, ...)
  belongs to the spec before it, as it would on its own:
  ``tavli:net:backgammon,points=backgammon,heuristic,net:fevga@1ply,wins`` is
  ``net:backgammon,points=backgammon`` / ``heuristic`` / ``net:fevga@1ply,wins``.
  No bot spec begins with an option's name, so the split is unambiguous.
  ``engine:`` specs, whose command lines may hold commas, cannot be one of
  them. A variant that comes twice in a rotation takes one spec.
- ``net:rotation`` (optionally ``@Nply`` and options after commas): each game's
  shipped model (the registry's: ``net:backgammon`` plays Portes with Portes'
  points), each with the same search depth and options; ``net:tavli`` and
  ``net:tabla`` are the same for those presets (and name the rotation).
- any other spec: the same bot plays every game (``heuristic``, ``random``,
  ``runner``); a spec that cannot play one of them is one error line naming
  the game.

A network bot plays its checkers by the match score (the rotation's match
equity table, :mod:`tapa_ai.cube.rotation_met`); ``,money_play``
(``net:tabla,money_play``) makes it play by cubeless money equity instead, the
baseline of docs/tavli.md.
"""

from __future__ import annotations

import re

from ..rules.options import REGISTRY
from ..rules.rotations import ROTATIONS, Rotation
from .base import Bot, BotError
from .spec import SPEC_OPTIONS, make_bot

__all__ = ["RotationPlayer", "is_rotation_spec", "make_rotation_player", "rotation_models", "rotation_specs"]

_PER_GAME = re.compile(r"^(?P<kind>rotation|" + "|".join(ROTATIONS) + r"):")
_SHIPPED = re.compile(r"^net:(?P<kind>rotation|" + "|".join(ROTATIONS) + r")(?P<plies>@\d+(?:ply)?)?$")
_FLAG_OPTIONS = tuple(name for name, form in SPEC_OPTIONS.items() if form is None)
_VALUE_OPTIONS = tuple(f"{name}=" for name, form in SPEC_OPTIONS.items() if form is not None)


def _is_option(piece: str) -> bool:
    piece = piece.strip()
    return piece in _FLAG_OPTIONS or piece.startswith(_VALUE_OPTIONS)


def is_rotation_spec(spec: str) -> bool:
    """Whether ``spec`` names a rotation's player (``net:tabla``, ``tavli:...``), not one bot."""
    text = spec.strip() if isinstance(spec, str) else ""
    return bool(_PER_GAME.match(text) or _SHIPPED.match(text.partition(",")[0]))


def rotation_models(rotation: Rotation) -> tuple[str, ...]:
    """The shipped models ``net:rotation`` plays each game with, in turn (each game's registry model)."""
    models = []
    for variant in rotation.variants:
        model = REGISTRY[variant].model
        if model is None:
            raise BotError(f"no shipped model plays {variant} (game of the rotation {rotation.describe()}): name a "
                           "bot for each game (rotation:SPEC1,SPEC2,...)")
        models.append(f"net:{model}")
    return tuple(models)


def _check_kind(kind: str, text: str, rotation: Rotation) -> None:
    if kind != "rotation" and ROTATIONS[kind] != rotation:
        raise BotError(f"player {text!r} plays the {kind} rotation ({', '.join(ROTATIONS[kind].variants)}), but the "
                       f"match is {rotation.describe()}: use rotation:... or net:rotation")


def rotation_specs(spec: str, rotation: Rotation) -> dict[str, str]:
    """The bot spec of each variant of ``rotation`` for the player ``spec`` (module docstring), in order of first
    appearance."""
    if not isinstance(spec, str) or not spec.strip():
        raise BotError(f"player {spec!r}: empty")
    text = spec.strip()
    base, _, options = text.partition(",")
    shipped = _SHIPPED.match(base)
    if shipped:
        _check_kind(shipped.group("kind"), text, rotation)
        suffix = (shipped.group("plies") or "") + ("," + options if options else "")
        return {variant: model + suffix for variant, model in zip(rotation.variants, rotation_models(rotation))}
    per_game = _PER_GAME.match(text)
    if not per_game:
        return {variant: text for variant in rotation.distinct}
    kind = per_game.group("kind")
    _check_kind(kind, text, rotation)
    groups: list[str] = []
    for piece in text[per_game.end():].split(","):
        if groups and _is_option(piece):
            groups[-1] += "," + piece.strip()
        else:
            groups.append(piece.strip())
    games = ",".join(v.upper() for v in rotation.variants)
    if any(not group for group in groups) or len(groups) != len(rotation):
        raise BotError(f"player {text!r}: want {kind}:{games} ({len(rotation)} bot specs, one per game; got "
                       f"{len(groups)}: {', '.join(repr(g) for g in groups)})")
    specs: dict[str, str] = {}
    for variant, group in zip(rotation.variants, groups):
        if group.startswith("engine:"):
            raise BotError(f"player {text!r}: an engine: spec takes the commas after it into its command line, so it "
                           "cannot be one of a rotation's bots")
        if specs.setdefault(variant, group) != group:
            raise BotError(f"player {text!r}: {variant} comes twice in the rotation with two bots ({specs[variant]!r}, "
                           f"{group!r}); one bot plays each variant")
    return specs


class RotationPlayer:
    """The bots of a rotation's player, one per variant of the rotation (:attr:`players`)."""

    def __init__(self, spec: str, rotation: Rotation, players: dict[str, Bot]) -> None:
        self.spec = spec
        self.rotation = rotation
        self.players = players

    def bot(self, variant: str) -> Bot:
        """The bot playing ``variant``'s games."""
        return self.players[variant]

    def close(self) -> None:
        for bot in self.players.values():
            bot.close()

    def __repr__(self) -> str:
        return f"RotationPlayer({self.spec!r}, {self.rotation.name})"


def make_rotation_player(spec: str, rotation: Rotation) -> RotationPlayer:
    """The :class:`RotationPlayer` of ``spec`` for ``rotation``; a spec that cannot play one of the games is one
    error line."""
    specs = rotation_specs(spec, rotation)
    players: dict[str, Bot] = {}
    try:
        for variant, one in specs.items():
            number = rotation.variants.index(variant) + 1
            try:
                players[variant] = make_bot(one, rotation.rules_of(variant))
            except BotError as error:
                raise BotError(f"player {spec.strip()!r} cannot play {variant} (game {number} of the rotation "
                               f"{rotation.describe()}): {error}") from None
    except BaseException:
        for bot in players.values():
            bot.close()
        raise
    return RotationPlayer(spec.strip(), rotation, players)
