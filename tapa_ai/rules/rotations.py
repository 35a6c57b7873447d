"""Rotations: matches whose games rotate variants of the family (docs/rules.md 9 and 10.4), as data.

A :class:`Rotation` is a list of games, each a variant's rule set with no cube
(a rotation's match is played without one), optionally with options changed.
Game ``n`` (from 1) of a match is game ``(n - 1) % len(rotation)`` of the
list. The flow of every rotation is the same (docs/rules.md 9): the first game
opens with an opening roll, the winner of each game opens the next, a draw
scores nothing, moves the rotation on and the next game opens with an opening
roll. Two presets ship (:data:`ROTATIONS`):

- ``tavli``: Portes, Plakoto, Fevga (Greece);
- ``tabla``: backgammon (keeping its backgammons and its opening, no cube),
  Gul Bara, Tapa (keeping its mother and its backgammons, no cube) (Bulgaria).

A user names a rotation by a preset's name or by its games, comma-separated
(``backgammon,gulbara,tapa``); in files and requests it is written as
:meth:`Rotation.to_data` writes it: a preset's name, or a list whose items are
variant names or ``{"variant": name, "rules": {option: value}}`` for a game
with options changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..quoting import quoted
from .options import REGISTRY, RuleOptions, RulesError, VARIANTS, variant_rules

__all__ = ["MAX_ROTATION_GAMES", "ROTATIONS", "Rotation", "RotationError", "parse_rotation", "rotation_from_data",
           "rotation_named"]

MAX_ROTATION_GAMES = 12
"""The most games a rotation may list (a guard against a runaway list in a request; the presets have 3)."""

_NO_CUBE = {"cube": False, "crawford": False}
"""What every game of a rotation has: no cube (and so no Crawford rule)."""


class RotationError(RulesError):
    """A rotation that cannot be: an unknown variant, an empty list, a game with a cube."""


@dataclass(frozen=True)
class Rotation:
    """The games of a match that rotates variants, in turn (module docstring)."""

    name: str
    """A preset's name (``tavli``, ``tabla``) or ``custom``."""
    games: tuple[RuleOptions, ...]
    """Each game's rule set, in turn (no cube in any)."""

    def __post_init__(self) -> None:
        if not self.games:
            raise RotationError("a rotation needs at least one game")
        if len(self.games) > MAX_ROTATION_GAMES:
            raise RotationError(f"a rotation has at most {MAX_ROTATION_GAMES} games, got {len(self.games)}")
        for rules in self.games:
            if not isinstance(rules, RuleOptions):
                raise RotationError(f"a rotation's games are rule sets, got {type(rules).__name__}")
            if rules.cube:
                raise RotationError(f"game {rules.name} of a rotation has a cube; a rotation's match has none")
            first = self.rules_of(rules.name)
            if first != rules:
                raise RotationError(f"variant {rules.name} comes twice in the rotation with different options; a "
                                    "rotation plays each variant by one rule set")

    @classmethod
    def of(cls, variants, name: str = "custom", changes: Optional[dict[str, dict[str, Any]]] = None) -> "Rotation":
        """The rotation of the named ``variants`` (their presets with no cube), with ``changes[variant]`` (options
        changed on top) where given. :class:`RotationError`, one line, for an unknown variant or option."""
        variants = list(variants)
        changes = changes or {}
        games = []
        for variant in variants:
            if variant not in VARIANTS:
                raise RotationError(f"unknown variant {quoted(variant)} in the rotation; known variants: "
                                    f"{sorted(VARIANTS)}")
            extra = changes.get(variant, {})
            for option in extra:
                if option in ("name",):
                    raise RotationError(f"game {variant} of the rotation: option {option!r} cannot be changed")
                if option in _NO_CUBE and extra[option] != _NO_CUBE[option]:
                    raise RotationError(f"game {variant} of the rotation: {option} must be false (a rotation's "
                                        "match is played without the cube)")
            try:
                games.append(variant_rules(variant).replace(**{**_NO_CUBE, **extra}))
            except RotationError:
                raise
            except RulesError as error:
                raise RotationError(f"game {variant} of the rotation: {error}") from None
        return cls(name, tuple(games))

    # -- views ------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.games)

    @property
    def variants(self) -> tuple[str, ...]:
        """The games' variant names, in turn."""
        return tuple(rules.name for rules in self.games)

    @property
    def distinct(self) -> tuple[str, ...]:
        """Each variant of the rotation once, in order of first appearance."""
        return tuple(dict.fromkeys(self.variants))

    def index(self, game_number: int) -> int:
        """The place in the list of game ``game_number`` (from 1) of a match."""
        if isinstance(game_number, bool) or not isinstance(game_number, int) or game_number < 1:
            raise RotationError(f"game number {game_number!r} must be an integer >= 1")
        return (game_number - 1) % len(self.games)

    def rules(self, game_number: int) -> RuleOptions:
        """The rule set of game ``game_number`` (from 1) of a match."""
        return self.games[self.index(game_number)]

    def variant(self, game_number: int) -> str:
        """The variant of game ``game_number`` (from 1) of a match."""
        return self.rules(game_number).name

    def rules_of(self, variant: str) -> RuleOptions:
        """The rule set the rotation plays ``variant`` by."""
        for rules in self.games:
            if rules.name == variant:
                return rules
        raise RotationError(f"variant {quoted(variant)} is not in the rotation {self.describe()}")

    def changes(self, rules: RuleOptions) -> dict[str, Any]:
        """A game's options changed from its variant's preset beyond having no cube."""
        base = variant_rules(rules.name).replace(**_NO_CUBE)
        return rules.changes_from(base)

    @property
    def is_preset(self) -> bool:
        """Whether this is one of the presets (:data:`ROTATIONS`)."""
        return ROTATIONS.get(self.name) == self

    @property
    def player_name(self) -> str:
        """The name a player spec gives this rotation's shipped models by: ``net:tavli``, ``net:tabla``, else
        ``net:rotation`` (:mod:`tapa_ai.bots.rotation`)."""
        return self.name if self.is_preset else "rotation"

    def match_name(self) -> str:
        """What its match is called in messages and reports: ``Tavli match``, ``Tabla match``, else ``rotation
        match``."""
        return f"{self.name.capitalize()} match" if self.is_preset else "rotation match"

    def title(self) -> str:
        """``Tabla (Backgammon, Gul Bara, Tapa)``, ``Rotation (Tapa, Fevga)``: for people."""
        games = ", ".join(REGISTRY[variant].title for variant in self.variants)
        label = self.name.capitalize() if self.is_preset else "Rotation"
        return f"{label} ({games})"

    def describe(self) -> str:
        """``tabla (backgammon, gulbara, tapa)``: the name and the games as the command line names them."""
        return f"{self.name} ({', '.join(self.variants)})"

    # -- data -------------------------------------------------------------------------------------------
    def to_data(self) -> Any:
        """As files and requests write it: a preset's name, or the list of games (a variant's name, or
        ``{"variant": name, "rules": {changed options}}``)."""
        if self.is_preset:
            return self.name
        items: list[Any] = []
        for rules in self.games:
            changed = self.changes(rules)
            items.append({"variant": rules.name, "rules": changed} if changed else rules.name)
        return items


def _preset(name: str, variants: tuple[str, ...]) -> Rotation:
    return Rotation.of(variants, name)


ROTATIONS: dict[str, Rotation] = {
    "tavli": _preset("tavli", ("portes", "plakoto", "fevga")),
    "tabla": _preset("tabla", ("backgammon", "gulbara", "tapa")),
}
"""The preset rotations, by name: Greece's Tavli (docs/rules.md 9) and Bulgaria's Tabla (10.4)."""


def _named(rotation: Rotation) -> Rotation:
    """``rotation`` under its preset's name when it is one (a list naming Tavli's games is the Tavli rotation)."""
    for name, preset in ROTATIONS.items():
        if preset.games == rotation.games:
            return preset
    return rotation


def rotation_named(name: str) -> Rotation:
    """A preset rotation by name."""
    try:
        return ROTATIONS[name]
    except (KeyError, TypeError):
        raise RotationError(f"unknown rotation {quoted(name)}; presets: {sorted(ROTATIONS)}, or name the games "
                            "comma-separated (backgammon,gulbara,tapa)") from None


def parse_rotation(text: str) -> Rotation:
    """A rotation from the command line: a preset's name (``tabla``) or the games, comma-separated
    (``backgammon,gulbara,tapa``). :class:`RotationError`, one line, for anything else."""
    if not isinstance(text, str) or not text.strip():
        raise RotationError("an empty rotation: name a preset (" + ", ".join(sorted(ROTATIONS)) + ") or the games, "
                            "comma-separated (backgammon,gulbara,tapa)")
    text = text.strip()
    if "," not in text and text in ROTATIONS:
        return ROTATIONS[text]
    if "," not in text and text not in VARIANTS:
        return rotation_named(text)  # the unknown-name line
    names = [part.strip() for part in text.split(",")]
    if any(not part for part in names):
        raise RotationError(f"rotation {quoted(text)}: an empty game name between commas")
    return _named(Rotation.of(names))


def rotation_from_data(data: Any, where: str = "rotation") -> Rotation:
    """A rotation as :meth:`Rotation.to_data` writes it (a preset's name, or a list of variant names and
    ``{"variant": name, "rules": {...}}``). :class:`RotationError`, one line naming ``where``, for anything else."""
    if isinstance(data, str):
        try:
            return rotation_named(data)
        except RotationError as error:
            raise RotationError(f"{where}: {error}") from None
    if not isinstance(data, list):
        raise RotationError(f"{where}: a preset's name ({', '.join(sorted(ROTATIONS))}) or a list of games, got "
                            f"{quoted(data, 60)}")
    names: list[str] = []
    changes: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(data):
        here = f"{where}[{index}]"
        if isinstance(item, str):
            names.append(item)
            continue
        if not isinstance(item, dict) or "variant" not in item or set(item) - {"variant", "rules"}:
            raise RotationError(f"{here}: a variant's name or {{\"variant\": name, \"rules\": {{...}}}}, got "
                                f"{quoted(item, 60)}")
        rules = item.get("rules", {})
        if not isinstance(rules, dict) or not isinstance(item["variant"], str):
            raise RotationError(f"{here}: want {{\"variant\": name, \"rules\": {{option: value}}}}, got "
                                f"{quoted(item, 60)}")
        names.append(item["variant"])
        if item["variant"] in changes and changes[item["variant"]] != rules:
            raise RotationError(f"{here}: variant {item['variant']} comes twice with different options")
        changes[item["variant"]] = rules
    try:
        return _named(Rotation.of(names, changes=changes))
    except RotationError as error:
        raise RotationError(f"{where}: {error}") from None
