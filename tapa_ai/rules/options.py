"""Rule options and the named variants (docs/rules.md sections 5, 6 and 8).

A rule set is a frozen :class:`RuleOptions`; the variants ``tapa``, ``plakoto``,
``backgammon``, ``portes`` (backgammon's board game scored and opened the Greek
way, docs/rules.md 9) and the running games ``fevga`` and ``narde`` are presets of it.
A custom rule set starts from a preset::

    rules = variant_rules("tapa").replace(mother_points=2, cube=False)
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields, replace
from typing import Any, Optional

from ..errors import TapaError
from ..quoting import quoted

#: Bumped whenever a rule change alters legal moves or results; stored in checkpoints.
RULES_VERSION = 1

CONTACTS = ("pin", "hit", "block")
PATHS = ("opposite", "parallel")
START_RULES = ("none", "runner", "head")
OPENINGS = ("use-opening-dice", "reroll")
NEXT_GAME_OPENERS = ("opening-roll", "winner")
DOUBLES = ("plain", "cascade")
CASCADE_REMAINDERS = ("lost", "opponent")
MAX_PLAIN_DOUBLE_TURNS = 15
"""The largest ``plain_double_turns`` a rule set may ask for (a turn count is kept per side up to it)."""

CHECKERS_PER_SIDE = 15


class RulesError(TapaError, ValueError):
    """A rule set, position, dice or move that the rules do not allow."""


@dataclass(frozen=True)
class RuleOptions:
    """One rule set of the family. Every field is a named option of docs/rules.md."""

    name: str
    """Variant name written into positions (``tapa``, ``plakoto``, ``backgammon`` or a custom name)."""
    start: tuple[tuple[int, int], ...]
    """Start position of each side, as (point from its own view, checkers) pairs."""
    contact: str
    """``pin``: landing on a lone opposing checker pins it; ``hit``: it goes to the bar; ``block``: a single
    opposing checker closes its point (the running games, docs/rules.md 8.2)."""
    mother_points: int
    """Points of a mother win (3 in tapa, 2 in plakoto); 0 turns the mother rules off."""
    backgammons: bool
    """Whether a win can count as a backgammon (3 points)."""
    cube: bool
    """Whether the doubling cube is used."""
    crawford: bool
    """Whether the Crawford rule applies in matches (needs the cube)."""
    opening: str
    """``use-opening-dice``: the opener plays the two opening dice; ``reroll``: it rolls both afresh."""
    next_game_opener: str
    """``opening-roll`` for every game, or ``winner``: the winner of the previous game opens the next."""
    paths: str = "opposite"
    """``opposite``: the sides move in opposite directions (point p of one is 25 - p of the other);
    ``parallel``: both move the same way round from opposite corners (p of one is p +- 12 of the other, 8.1)."""
    start_rule: str = "none"
    """Leaving the start (8.4 a): ``runner`` (Fevga), ``head`` (Narde) or ``none``."""
    prime_rule: bool = False
    """No six points in a row on the opponent's path with every opposing checker behind them (8.4 b)."""
    full_start_quarter_allowed: bool = True
    """False: a side may not hold all six of its points 19-24 at once (8.4 c, Fevga)."""
    doubles: str = "plain"
    """``plain``: a double is four steps (section 2); ``cascade``: from a side's turn after its first
    ``plain_double_turns`` a double d-d is four steps of d, then of d + 1, ... up to 6, each four a stage of its
    own (docs/rules.md 10.2, Gul Bara)."""
    plain_double_turns: int = 3
    """With ``doubles = "cascade"``: how many of each side's first turns play a double plainly."""
    cascade_remainder: str = "lost"
    """With ``doubles = "cascade"``: the steps of a cascade not played in full are ``lost``, or played by the
    ``opponent`` before its own roll (docs/rules.md 10.2)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise RulesError(f"rule option name={quoted(self.name)}: must be a non-empty string")
        for flag in ("backgammons", "cube", "crawford", "prime_rule", "full_start_quarter_allowed"):
            if not isinstance(getattr(self, flag), bool):
                raise RulesError(f"rule option {flag}={quoted(getattr(self, flag))}: must be true or false")
        if self.contact not in CONTACTS:
            raise RulesError(f"rule option contact={quoted(self.contact)}: must be one of {CONTACTS}")
        if self.opening not in OPENINGS:
            raise RulesError(f"rule option opening={quoted(self.opening)}: must be one of {OPENINGS}")
        if self.next_game_opener not in NEXT_GAME_OPENERS:
            raise RulesError(
                f"rule option next_game_opener={quoted(self.next_game_opener)}: must be one of {NEXT_GAME_OPENERS}"
            )
        if self.paths not in PATHS:
            raise RulesError(f"rule option paths={quoted(self.paths)}: must be one of {PATHS}")
        if self.doubles not in DOUBLES:
            raise RulesError(f"rule option doubles={quoted(self.doubles)}: must be one of {DOUBLES}")
        if self.cascade_remainder not in CASCADE_REMAINDERS:
            raise RulesError(f"rule option cascade_remainder={quoted(self.cascade_remainder)}: must be one of "
                             f"{CASCADE_REMAINDERS}")
        if (isinstance(self.plain_double_turns, bool) or not isinstance(self.plain_double_turns, int)
                or not 0 <= self.plain_double_turns <= MAX_PLAIN_DOUBLE_TURNS):
            raise RulesError(f"rule option plain_double_turns={quoted(self.plain_double_turns)}: must be an "
                             f"integer 0..{MAX_PLAIN_DOUBLE_TURNS}")
        if self.start_rule not in START_RULES:
            raise RulesError(f"rule option start_rule={quoted(self.start_rule)}: must be one of {START_RULES}")
        if (self.paths == "parallel") != (self.contact == "block"):
            raise RulesError(f"rule options paths={quoted(self.paths)} and contact={quoted(self.contact)}: the "
                             "running games pair paths='parallel' with contact='block', the others "
                             "paths='opposite' with contact 'pin' or 'hit'")
        if self.contact != "block" and (self.start_rule != "none" or self.prime_rule
                                        or not self.full_start_quarter_allowed):
            raise RulesError("rule options start_rule, prime_rule and full_start_quarter_allowed are restrictions "
                             "of the running games (contact='block')")
        if isinstance(self.mother_points, bool) or not isinstance(self.mother_points, int) or self.mother_points < 0:
            raise RulesError(f"rule option mother_points={quoted(self.mother_points)}: must be an integer >= 0")
        if self.contact != "pin" and self.mother_points:
            raise RulesError("rule option mother_points: the mother rules need contact='pin'")
        if self.crawford and not self.cube:
            raise RulesError("rule option crawford=True needs cube=True")
        total = 0
        seen = set()
        for entry in self.start:
            if len(entry) != 2:
                raise RulesError(f"rule option start: entry {quoted(entry)} must be a (point, checkers) pair")
            point, count = entry
            if not (isinstance(point, int) and 1 <= point <= 24) or point in seen:
                raise RulesError(f"rule option start: point {quoted(point)} must be a distinct integer 1..24")
            if not (isinstance(count, int) and count > 0):
                raise RulesError(f"rule option start: count {quoted(count)} on point {point} "
                                 "must be a positive integer")
            seen.add(point)
            total += count
        if total != CHECKERS_PER_SIDE:
            raise RulesError(f"rule option start: places {total} checkers, must place {CHECKERS_PER_SIDE}")
        if self.contact != "pin":
            # Both sides start with the same layout and a point holds one side only: a point p of X is
            # 25 - p of O (p +- 12 in the running games), and the two layouts must not meet.
            for point, _ in self.start:
                theirs = self.opponent_point(point)
                if theirs in seen:
                    raise RulesError(f"rule option start: point {point} overlaps the other side's point {theirs}")

    @property
    def pins(self) -> bool:
        """True for the pinning games (tapa, plakoto)."""
        return self.contact == "pin"

    @property
    def hits(self) -> bool:
        """True for the hitting games (backgammon): a hit checker goes to the bar."""
        return self.contact == "hit"

    @property
    def parallel(self) -> bool:
        """True for the running games (fevga, narde): both sides travel the same way round (docs/rules.md 8.1)."""
        return self.paths == "parallel"

    @property
    def cascades(self) -> bool:
        """Whether doubles cascade (docs/rules.md 10.2): a turn may be several decisions of the same side."""
        return self.doubles == "cascade"

    @property
    def has_restrictions(self) -> bool:
        """Whether any of the step restrictions of docs/rules.md 8.4 is on."""
        return self.start_rule != "none" or self.prime_rule or not self.full_start_quarter_allowed

    def opponent_point(self, point: int) -> int:
        """The other side's number (its own view) of a side's point ``point`` (1..24), docs/rules.md 1 and 8.1."""
        if self.paths == "parallel":
            return point + 12 if point <= 12 else point - 12
        return 25 - point

    @property
    def has_draws(self) -> bool:
        """Draws exist only through the mother rules (both mothers pinned)."""
        return self.pins and self.mother_points > 0

    def replace(self, **changes: Any) -> "RuleOptions":
        """A copy with some options changed; unknown option names are rejected."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise RulesError(f"unknown rule option(s) {quoted(unknown)}; known: {sorted(known)}")
        if "start" in changes:
            changes["start"] = _normalise_start(changes["start"])
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The options as JSON data. The options of :data:`WRITTEN_WHEN_CHANGED` are left out at their defaults,
        so that every rule set that existed before them writes the very data it wrote then (checkpoints, model
        metadata, benchmark headers and saved games keep reading as the same rule set, and files compare equal);
        :meth:`from_dict` reads a missing one as its default."""
        data = asdict(self)
        data["start"] = {str(point): count for point, count in self.start}
        for option in WRITTEN_WHEN_CHANGED:
            if data[option] == _DEFAULTS[option]:
                del data[option]
        return data

    def changes_from(self, base: "RuleOptions") -> dict[str, Any]:
        """The options (as :meth:`to_dict` writes them) whose values differ from ``base``'s: what a position or a
        request names as ``rules`` on top of the preset ``base``."""
        mine, theirs = asdict(self), asdict(base)
        data = self.to_dict()
        return {option: data.get(option, mine[option]) for option in mine if mine[option] != theirs[option]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RuleOptions":
        """Rule options from a dict: a full set, or ``{"variant": name, ...overrides}``."""
        if not isinstance(data, dict):
            raise RulesError(f"rule options must be a JSON object, got {type(data).__name__}")
        data = dict(data)
        base_name = data.pop("variant", None)
        if base_name is not None:
            base = variant_rules(base_name)
            return base.replace(**data)
        known = {f.name for f in fields(cls)}
        # Options added later have defaults (the rules every earlier variant played), so a rule set
        # stored before they existed still reads as the same rule set.
        required = {f.name for f in fields(cls) if f.default is MISSING}
        missing = sorted(required - set(data))
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(f"unknown rule option(s) {quoted(unknown)}; known: {sorted(known)}")
        if missing:
            raise RulesError(f"rule options missing {missing} (or give 'variant' to start from a preset)")
        data["start"] = _normalise_start(data["start"])
        return cls(**data)


WRITTEN_WHEN_CHANGED = ("doubles", "plain_double_turns", "cascade_remainder")
"""Options :meth:`RuleOptions.to_dict` writes only when they differ from their defaults (the options of Gul Bara's
cascading doubles, docs/rules.md 10.2, added after every other preset existed)."""
_DEFAULTS = {f.name: f.default for f in fields(RuleOptions) if f.default is not MISSING}


def _normalise_start(start: Any) -> tuple[tuple[int, int], ...]:
    if isinstance(start, dict):
        items = list(start.items())
    else:
        items = list(start)
    result = []
    for entry in items:
        try:
            point, count = entry
            result.append((int(point), int(count)))
        except (TypeError, ValueError):
            raise RulesError(f"rule option start: bad entry {quoted(entry)}, want (point, checkers)") from None
    return tuple(sorted(result, reverse=True))


TAPA = RuleOptions(
    name="tapa",
    start=((24, 5), (23, 5), (22, 5)),
    contact="pin",
    mother_points=3,
    backgammons=True,
    cube=True,
    crawford=True,
    opening="use-opening-dice",
    next_game_opener="opening-roll",
)

PLAKOTO = RuleOptions(
    name="plakoto",
    start=((24, 15),),
    contact="pin",
    mother_points=2,
    backgammons=False,
    cube=False,
    crawford=False,
    opening="reroll",
    next_game_opener="winner",
)

BACKGAMMON = RuleOptions(
    name="backgammon",
    start=((24, 2), (13, 5), (8, 3), (6, 5)),
    contact="hit",
    mother_points=0,
    backgammons=True,
    cube=True,
    crawford=True,
    opening="use-opening-dice",
    next_game_opener="opening-roll",
)

FEVGA = RuleOptions(
    name="fevga",
    start=((24, 15),),
    contact="block",
    mother_points=0,
    backgammons=False,
    cube=False,
    crawford=False,
    opening="reroll",
    next_game_opener="winner",
    paths="parallel",
    start_rule="runner",
    prime_rule=True,
    full_start_quarter_allowed=False,
)

PORTES = RuleOptions(
    name="portes",
    start=BACKGAMMON.start,
    contact="hit",
    mother_points=0,
    backgammons=False,
    cube=False,
    crawford=False,
    opening="reroll",
    next_game_opener="winner",
)
"""Portes (docs/rules.md 9): backgammon's board game with no cube, a backgammon counted as a gammon, the opener
rolling both dice afresh and the winner of a game opening the next."""

NARDE = RuleOptions(
    name="narde",
    start=((24, 15),),
    contact="block",
    mother_points=0,
    backgammons=False,
    cube=False,
    crawford=False,
    opening="reroll",
    next_game_opener="winner",
    paths="parallel",
    start_rule="head",
    prime_rule=True,
    full_start_quarter_allowed=True,
)

GULBARA = RuleOptions(
    name="gulbara",
    start=((24, 15),),
    contact="block",
    mother_points=0,
    backgammons=False,
    cube=False,
    crawford=False,
    opening="reroll",
    next_game_opener="winner",
    paths="parallel",
    doubles="cascade",
    plain_double_turns=3,
    cascade_remainder="lost",
)
"""Gul Bara (docs/rules.md 10.1): a running game with none of 8.4's restrictions, whose doubles cascade."""

FIXED_OPPONENTS = ("random", "runner", "heuristic")
"""The fixed bots every variant's shipped model is measured against (its strength report)."""


@dataclass(frozen=True)
class Variant:
    """One game of the family, the one entry the rest of the package derives what it knows of the game from: the
    CLI's choices, the shipped models' names, the web board's tables (``GET /v1/variants``), the strength
    report's opponents, the match equity tables' rates and the export's metadata. Its levels of play and result
    rates are data files keyed by its name (``tapa_ai/models/levels.json``, ``tapa_ai/cube/result_rates.json``)."""

    rules: RuleOptions
    """The preset rule set (its :attr:`~RuleOptions.name` is the variant's name)."""
    title: str
    """The game's name for people: ``Tapa``, ``Fevga``."""
    summary: str
    """One line on what kind of game it is."""
    model: Optional[str] = None
    """The shipped network that plays it: its own name, another variant's of the same board game (``portes``:
    ``backgammon``'s, with Portes' points), or None."""
    opponents: tuple[str, ...] = FIXED_OPPONENTS
    """The fixed bots its shipped model's strength report (and the 2-ply ladder) is measured against."""

    @property
    def name(self) -> str:
        return self.rules.name

    @property
    def ships_model(self) -> bool:
        """Whether the package ships a network of this variant's own (``tapa_ai/models/<name>.pt``)."""
        return self.model == self.name


REGISTRY: dict[str, Variant] = {entry.name: entry for entry in (
    Variant(TAPA, "Tapa", "the pinning game: a lone checker is pinned, not hit; a pinned mother loses the game",
            model="tapa"),
    Variant(PLAKOTO, "Plakoto", "Tapa as Greece plays it: no cube, a mother win counts 2, the winner opens the next",
            model="plakoto"),
    Variant(BACKGAMMON, "Backgammon", "the hitting game, with the doubling cube", model="backgammon",
            opponents=(*FIXED_OPPONENTS, "pubeval", "gnubg:0")),
    Variant(PORTES, "Portes", "backgammon's board game scored the Greek way: no cube, a backgammon counts 2",
            model="backgammon"),
    Variant(FEVGA, "Fevga", "a running game: both sides travel the same way, a single checker holds a point; the "
            "runner leaves first", model="fevga"),
    Variant(NARDE, "Narde", "a running game as Fevga, with the head rule: one checker a turn leaves the start",
            model="narde"),
    Variant(GULBARA, "Gul Bara", "a running game whose doubles cascade: from a side's fourth turn d-d plays four "
            "d's, then four of each number up to 6", model="gulbara"),
)}
"""The family, by name: every variant tapa-ai plays (docs/rules.md section 6)."""

VARIANTS: dict[str, RuleOptions] = {name: entry.rules for name, entry in REGISTRY.items()}
"""Each variant's preset rule set, by name (a view of :data:`REGISTRY`)."""


def shipped_models() -> tuple[str, ...]:
    """The variants whose own network ships with the package (``net:<name>``), in registry order."""
    return tuple(name for name, entry in REGISTRY.items() if entry.ships_model)

SCORING_OPTIONS = ("name", "backgammons", "cube", "crawford", "opening", "next_game_opener")
"""The options that change how games are scored, doubled and opened but not one legal move or when a game ends:
rule sets differing only in these play the same board game (:func:`same_board_game`)."""


def variant_rules(name: str) -> RuleOptions:
    """The preset rule options of a named variant."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise RulesError(f"unknown variant {quoted(name)}; known variants: {sorted(VARIANTS)}") from None


def same_board_game(first: RuleOptions, second: RuleOptions) -> bool:
    """Whether two rule sets play the same board game: the same legal moves in every position and the same games
    ending, differing at most in :data:`SCORING_OPTIONS` (backgammon and portes; a model of one plays the other)."""
    return first.replace(**{option: getattr(second, option) for option in SCORING_OPTIONS}) == second


def board_game_difference(first: RuleOptions, second: RuleOptions) -> dict[str, tuple[Any, Any]]:
    """The options outside :data:`SCORING_OPTIONS` in which two rule sets differ: ``{option: (first's, second's)}``
    (empty when they play the same board game)."""
    mine, theirs = asdict(first), asdict(second)
    mine["start"], theirs["start"] = first.to_dict()["start"], second.to_dict()["start"]
    return {option: (mine[option], theirs[option]) for option in mine
            if option not in SCORING_OPTIONS and mine[option] != theirs[option]}
