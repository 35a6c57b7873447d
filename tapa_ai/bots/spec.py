"""Bot spec strings, understood by every command: ``make_bot("net:tapa@2ply", rules)``.

A spec is read once into a frozen :class:`BotSpec` (:func:`parse_spec`: its form and every option checked,
nothing loaded), from which :func:`make_bot` builds the bot; the arena hands its workers the :class:`BotSpec`.
A network bot's options become its settings (:mod:`tapa_ai.bots.settings`, through the table
:data:`SPEC_SETTINGS`: :func:`net_settings`), and the bot is built once from its evaluator and them.

=========================  ===================================================================
spec                       bot
=========================  ===================================================================
``random``                 a uniformly random legal move
``runner``                 the pip-count racer (``pipcount`` is the same bot)
``heuristic``              the hand-crafted expert (pinning, mother safety, primes, bear-off)
``pubeval``                Tesauro's public evaluator (backgammon; needs ``gnubg-nn``)
``gnubg:N``                GNU Backgammon's evaluator at N = 0, 1 or 2 ply (backgammon, and portes
                           by its probabilities with Portes' points; ``gnubg-nn``)
``net:PATH``               a trained checkpoint, 0-ply
``net:NAME``               a shipped model, from any directory: ``net:tapa``, ``net:plakoto``,
                           ``net:backgammon`` (or a kept generation, ``net:tapa-g3``); a file at
                           that path comes first (:mod:`tapa_ai.net.shipped`)
``net:PATH@Nply``          the same searching N = 0, 1, 2 or 3 plies (``@2`` also works;
                           ``net:tapa@2ply``)
``onnx:PATH[@Nply]``       a model exported by ``tapa-ai export --format onnx``, run by onnxruntime,
                           searching and deciding the cube as ``net:`` does (its variant from the
                           file; needs ``tapa-ai[export]``)
``engine:CMD``             a subprocess speaking the JSON-lines engine protocol (docs/protocol.md),
                           e.g. ``engine:tapa-ai engine --bot net:tapa``
=========================  ===================================================================

``engine:CMD`` takes everything after ``engine:`` as the command line
(split as a shell would, :func:`shlex.split`; commas are part of it, so it
takes no ``,options``); its time limits are the environment variables
``TAPA_ENGINE_MOVE_TIMEOUT`` (seconds per answer, default 60) and
``TAPA_ENGINE_START_TIMEOUT`` (its start-up handshake, default 120), see
:mod:`tapa_ai.bots.engine_bot`; it needs ``rules`` (the engine is told the
variant). An ``engine:`` bot takes its engine's cube decisions, or plays the
passive cube when the engine answers none. ``onnx:PATH`` is a net bot over
the exported model (:mod:`tapa_ai.bots.onnx_bot`): every option of ``net:``
below applies to it too.

The ``PATH`` of ``net:PATH`` is a checkpoint file, else the name of a shipped
model (:func:`tapa_ai.net.shipped.resolve_model_path`): ``tapa``, ``plakoto``,
``backgammon``, ``fevga`` or ``narde`` (the models installed with the package, ``tapa_ai/models/``, which
a checkout links as ``checkpoints/``), a kept generation such as ``tapa-g3``, or
the documented ``checkpoints/tapa.pt`` where the current directory has no such
file; anything else is one error line listing the shipped names. So
``tapa-ai match net:tapa@1ply,nocube heuristic`` works from any directory.

Cube options follow a comma: ``net:PATH,nocube`` plays the passive cube (never
doubles, always takes) instead of the net's cube decisions, and
``net:PATH,cube_life=0.8`` sets Janowski's cube life of its decisions
(default 0.68), and ``net:PATH,money_cube`` makes its match decisions as in
money play, ignoring the score (a baseline); ``net:PATH,money_play`` does the same for its checker
play in a match played by the score (a Tavli match, docs/tavli.md). ``net:PATH,wins`` chooses its
checker plays by the chance of winning instead of the expected points
(gammons, backgammons and mother wins count as plain wins), as at double
match point. ``net:PATH@2ply,refine=2:0.04`` adds a second move filter to a
search of 2 plies or more: the candidates are searched one ply less deep first
and only the best 2 within 0.04 points of the best are searched at the full
depth. ``net:PATH,noise=0.05`` adds noise of 0.05 points to each move's value before taking the best (a weaker
level, docs/levels.md; ``,noise_seed=N`` makes it a function of N and the position, so the same position
gets the same move); ``net:tapa,level=intermediate`` plays one of the variant's calibrated levels of
play, a depth and a noise (docs/levels.md: beginner, casual, intermediate, advanced, expert,
world-class). ``net:PATH,nobearoff`` values bear-offs by the network instead of the
bear-off databases (which every ``net:`` bot and its search use by default,
docs/bearoff.md): the pure network, for measurements. Bots without an evaluator always
play the passive cube (``,nocube`` is accepted and changes nothing). Each option is given at most once, and a
level goes with no ``noise=`` (a level sets the noise) nor ``@Nply`` (it sets the depth); an unknown option
(``levle=casual``: did you mean ``level``?), a repeated one or two that contradict each other is one error line.

``net:tavli``, ``net:tabla``, ``net:rotation``, ``tavli:PORTES,PLAKOTO,FEVGA`` and ``rotation:...`` are
players of a rotation's match, a bot per game (:mod:`tapa_ai.bots.rotation`, ``tapa-ai match --tavli/--tabla
N``); ``make_bot`` refuses them
with one line saying so.

A network plays the rule sets of its own board game: ``make_bot("net:backgammon",
variant_rules("portes"))`` is the backgammon model playing Portes (docs/rules.md 9), shown
every position as a backgammon position and valuing its outcome probabilities with
Portes' points (a backgammon counts 2; :class:`~tapa_ai.net.evaluator.RulesEvaluator`).
A rule set of another board game (``net:plakoto`` asked to play backgammon) is one
error line naming the options that differ. ``net:PATH,points=VARIANT`` values the
outcome classes with the points of the named variant instead of those of the rule
set played (a variant of the same board game): ``net:backgammon,points=backgammon``
playing Portes still values backgammons at 3, the baseline of docs/portes.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Optional

from ..quoting import nearest, quoted
from ..rules.options import RuleOptions, shipped_models
from .base import Bot, BotError

SPEC_FORMS = ("random", "runner", "pipcount", "heuristic", "pubeval", "gnubg:0", "gnubg:1", "gnubg:2",
              "net:PATH", f"net:NAME (shipped: {'|'.join(shipped_models())})", "net:PATH@0ply", "net:PATH@1ply",
              "net:PATH@2ply", "onnx:PATH", "onnx:PATH@2ply", "engine:CMD", "SPEC,nocube",
              "net:PATH,cube_life=X", "net:PATH,wins", "net:PATH@2ply,refine=N:MARGIN", "net:PATH,nobearoff",
              "net:PATH,points=VARIANT", "net:PATH,money_play", "net:PATH,noise=X", "net:PATH,noise=X,noise_seed=N",
              "net:NAME,level=LEVEL")
"""The valid forms, for error messages and ``--help``."""
SPEC_OPTIONS = {"nocube": None, "cube_life": "cube_life=X", "money_cube": None, "money_play": None, "wins": None,
                "refine": "refine=N:MARGIN", "nobearoff": None, "points": "points=VARIANT", "noise": "noise=X",
                "noise_seed": "noise_seed=N", "level": "level=LEVEL"}
"""The options after a spec's commas: each with its form when it takes a value (``level=LEVEL``), None for a flag."""
_FLAGS = tuple(name for name, form in SPEC_OPTIONS.items() if form is None)
_VALUED = {name: form for name, form in SPEC_OPTIONS.items() if form is not None}
_CUBE_OPTIONS = tuple(form or name for name, form in SPEC_OPTIONS.items())

_NET = re.compile(r"^(?P<kind>net|onnx):(?P<path>.+?)(?:@(?P<plies>\d+)(?:ply)?)?$")
"""``net:PATH[@Nply]`` and ``onnx:PATH[@Nply]``: an evaluator's file and how deep its bot searches."""
_GNUBG = re.compile(r"^gnubg:(?P<plies>\d+)$")
_ENGINE = "engine:"




def _bad(spec: str, why: str) -> BotError:
    return BotError(f"bot spec {quoted(spec)}: {why}. Valid forms: {', '.join(SPEC_FORMS)}")


def _check_options(text: str, options: list[str]) -> None:
    """Refuse an unknown option (with "did you mean"), an option given twice, a flag with a value, a value
    option without one, and options that contradict each other (a level sets the noise: not both)."""
    names = tuple(SPEC_OPTIONS)
    seen: dict[str, str] = {}
    for option in options:
        name, equals, _ = option.partition("=")
        if name not in names:
            close = nearest(name, names)
            hint = f"; did you mean {close!r}?" if close else ""
            raise _bad(text, f"unknown option {quoted(option, 40)}{hint} (options: {', '.join(_CUBE_OPTIONS)})")
        if name in _FLAGS and equals:
            raise _bad(text, f"{name} takes no value, got {quoted(option, 40)}")
        if name in _VALUED and not equals:
            raise _bad(text, f"{name} wants a value: {_VALUED[name]}")
        if name in seen:
            raise _bad(text, f"{name} given twice ({quoted(seen[name], 40)} and {quoted(option, 40)}): give each "
                             "option once")
        seen[name] = option
    if "level" in seen and "noise" in seen:
        raise _bad(text, f"{quoted(seen['level'], 40)} and {quoted(seen['noise'], 40)} contradict each other: a "
                         "level sets the noise (and the depth); give a level or a noise, not both (docs/levels.md)")


_NAMES = ("random", "runner", "pipcount", "heuristic", "pubeval", "gnubg:0", "gnubg:1", "gnubg:2")
"""The fixed bots' specs, for "did you mean"."""
_KINDS = ("net", "onnx", "engine", "gnubg")
"""The kinds of spec with an argument after the colon."""


def _did_you_mean(text: str) -> str:
    """`` (did you mean 'heuristic'?)`` for a mistyped fixed name or kind (``heurstic``, ``nett:tapa``), else
    empty."""
    import difflib

    close = difflib.get_close_matches(text, _NAMES, n=1)
    kind, colon, rest = text.partition(":")
    if not close and colon:
        kinds = difflib.get_close_matches(kind, _KINDS, n=1)
        close = [f"{kinds[0]}:{rest}"] if kinds and kinds[0] != kind else []
    return f" (did you mean {close[0]!r}?)" if close else ""


def net_checkpoint_path(spec: str) -> Optional[Path]:
    """The checkpoint file of a ``net:`` spec (a shipped model's for ``net:tapa``; the path as written when it
    names nothing, for the caller's ``is_file()``), else None (lets commands infer the variant)."""
    from ..net.shipped import find_model_path

    match = _NET.match(_split_options(spec.strip())[0])
    return find_model_path(match.group("path")) if match and match.group("kind") == "net" else None


def model_file_path(spec: str) -> Optional[Path]:
    """The model file of a ``net:`` or ``onnx:`` spec (the checkpoint, the exported model), else None."""
    match = _NET.match(_split_options(spec.strip())[0])
    if match and match.group("kind") == "onnx":
        return Path(match.group("path"))
    return net_checkpoint_path(spec)


def model_rules(spec: str) -> Optional[RuleOptions]:
    """The rule set a ``net:`` or ``onnx:`` spec's model file was trained for, else None (lets commands infer
    the variant; ``engine:`` and the fixed bots play what they are told). BotError for an unreadable file."""
    path = model_file_path(spec)
    if path is None or not path.is_file():
        return None
    if _split_options(spec.strip())[0].startswith("onnx:"):
        from .onnx_bot import onnx_model_rules

        return onnx_model_rules(path, spec.strip())
    from ..net.checkpoint import CheckpointError, load_checkpoint

    try:
        return load_checkpoint(path).rules()
    except CheckpointError as error:
        raise BotError(f"bot spec {quoted(spec)}: {error}") from None


def _split_options(text: str) -> tuple[str, list[str]]:
    """``"net:a.pt@1ply,nocube"`` -> ``("net:a.pt@1ply", ["nocube"])``: the spec and its cube options.

    An ``engine:`` spec has none: everything after ``engine:`` is its command line, commas included.
    """
    if text.startswith(_ENGINE):
        return text, []
    base, *options = text.split(",")
    return base.strip(), [option.strip() for option in options]


@dataclass(frozen=True)
class BotSpec:
    """A bot spec string read once (:func:`parse_spec`): the bot to build and its settings, every option's value
    checked, nothing loaded. Frozen and picklable: the arena's workers receive it and build their bots from it
    (:func:`make_bot`) without reading the string again."""

    text: str
    """The spec as written (stripped): error messages quote it."""
    base: str
    """What is built: ``net:tapa@2ply``, ``heuristic``, ``engine:CMD`` ..."""
    options: tuple[str, ...] = ()
    """The options after the commas, as written (the bot's name keeps them)."""
    points: Optional[str] = None
    """``points=VARIANT``: the outcome classes valued with that variant's points."""
    cube: bool = True
    """False: ``nocube``."""
    wins: bool = False
    bearoff: bool = True
    """False: ``nobearoff``."""
    match_cube: bool = True
    """False: ``money_cube``."""
    score_play: bool = True
    """False: ``money_play``."""
    refine: Optional[tuple[int, float]] = None
    level: Optional[str] = None
    noise: Optional[float] = None
    noise_seed: Optional[int] = None
    cube_life: Optional[float] = None


_NET_ONLY = {"points": "points= is an option of net: bots", "wins": "wins is an option of net: bots",
             "nobearoff": "nobearoff is an option of net: bots (the others never read the databases)",
             "money_cube": "money_cube is an option of net: bots (the others play the passive cube)",
             "money_play": "money_play is an option of net: bots (the others never read the score)",
             "refine": "refine= is an option of net: bots",
             "level": "level= is an option of net: bots (docs/levels.md)",
             "noise": "noise= is an option of net: bots (the others have no move values)",
             "noise_seed": "noise_seed= is an option of net: bots (the others have no move values)",
             "cube_life": "cube_life= is an option of net: bots (the others play the passive cube)"}
"""Why each option but ``nocube`` needs a network bot."""
_OFF_FLAGS = {"nocube": "cube", "money_cube": "match_cube", "money_play": "score_play", "nobearoff": "bearoff"}


def parse_spec(spec: str) -> BotSpec:
    """``spec`` read into a :class:`BotSpec`: its form and every option checked (unknown, repeated or
    contradicting options, values out of range), :class:`BotError` with the valid forms otherwise. Nothing is
    loaded: a model file is read when the bot is built."""
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(spec if isinstance(spec, str) else repr(spec), "empty")
    text = spec.strip()
    if re.match(r"^(tavli|tabla|rotation):", text) or re.match(r"^net:(tavli|tabla|rotation)(@\d+(ply)?)?(,|$)", text):
        raise BotError(f"bot spec {quoted(text)} is a rotation's player (a bot per game of a Tavli, Tabla or other "
                       "rotation's match): use it with tapa-ai match --tavli/--tabla/--rotation (docs/arena.md)")
    base, options = _split_options(text)
    if not base:
        raise _bad(text, "empty")
    if not options:
        return BotSpec(text, base)
    _check_options(text, options)
    values: dict = {}
    for option in options:
        name, _, value = option.partition("=")
        if name in _OFF_FLAGS:
            values[_OFF_FLAGS[name]] = False
        elif name == "wins":
            values["wins"] = True
        elif name == "points":
            from ..rules.options import RulesError, variant_rules

            try:
                values["points"] = variant_rules(value).name
            except RulesError as error:
                raise _bad(text, f"{quoted(option, 40)}: {error}") from None
        elif name == "refine":
            values["refine"] = _refine(text, option, value)
        elif name == "level":
            net = _NET.match(base)
            if net is not None and net.group("plies") is not None:
                raise _bad(text, "level= sets the depth (a level is a depth and a noise): leave @Nply out")
            values["level"] = value
        elif name in ("noise", "noise_seed"):
            values[name] = _noise(text, option, name, value)
        elif name == "cube_life":
            values["cube_life"] = _cube_life(text, option, value)
    return BotSpec(text, base, tuple(options), **values)


def _refine(text: str, option: str, value: str) -> tuple[int, float]:
    count, _, margin = value.partition(":")
    try:
        numbers = int(count), float(margin)
    except ValueError:
        raise _bad(text, f"{quoted(option, 40)}: want refine=N:MARGIN, e.g. refine=2:0.04") from None
    if numbers[0] < 1 or not numbers[1] >= 0:
        raise _bad(text, f"{quoted(option, 40)}: the moves kept must be an integer >= 1 and the margin a number "
                         ">= 0 (points of equity)")
    return numbers


def _noise(text: str, option: str, name: str, value: str):
    from .noise import MAX_NOISE, check_noise, check_noise_seed

    wanted = f"a number of points from 0 to {MAX_NOISE}" if name == "noise" else "an integer seed from 0 to 4294967295"
    try:
        return check_noise(_number(value, float)) if name == "noise" else check_noise_seed(_number(value, int))
    except ValueError:
        raise _bad(text, f"{quoted(option, 40)}: want {wanted}") from None


def _cube_life(text: str, option: str, value: str) -> float:
    try:
        life = float(value)
    except ValueError:
        life = float("nan")
    if not 0.0 <= life <= 1.0:
        raise _bad(text, f"{quoted(option, 40)}: the cube life is a number from 0 (dead cube) to 1 (fully live)")
    return life


SPEC_SETTINGS = {"refine": ("search", "refine"), "cube": ("cube", "enabled"), "cube_life": ("cube", "life"),
                 "noise": ("noise", "noise"), "noise_seed": ("noise", "noise_seed"),
                 "score_play": ("match", "score_play"), "match_cube": ("match", "match_cube"),
                 "wins": ("match", "wins")}
"""Where each option of a :class:`BotSpec` goes in a network bot's settings (:mod:`tapa_ai.bots.settings`): its
field -> (group, field). An option given (a field other than its default) sets that setting; ``@Nply`` sets
``search.plies``, ``level=`` ``search.plies`` and ``noise.noise`` (:meth:`~tapa_ai.bots.levels.Level.apply`),
``nobearoff`` the evaluator (``NetBot(..., bearoff=False)``) and ``points=`` the rule set whose points it plays by
(:meth:`~tapa_ai.bots.search.NetBot.playing`)."""
_SPEC_DEFAULTS = {item.name: item.default for item in fields(BotSpec)}


def net_settings(spec: BotSpec, plies: int = 0, model_variant: Optional[str] = None):
    """The :class:`~tapa_ai.bots.settings.NetBotSettings` of a network bot of ``spec`` searching ``plies`` (its
    ``@Nply``): each option through :data:`SPEC_SETTINGS`, then its level (of ``model_variant``, the model's
    variant: the levels are calibrated per variant). BotError, one line, for a level the variant lacks."""
    from .settings import CubeSettings, MatchSettings, NetBotSettings, NoiseSettings, SearchSettings

    groups: dict[str, dict] = {"search": {"plies": plies}, "cube": {}, "noise": {}, "match": {}}
    for field_name, (group, setting) in SPEC_SETTINGS.items():
        value = getattr(spec, field_name)
        if value != _SPEC_DEFAULTS[field_name]:
            groups[group][setting] = value
    settings = NetBotSettings(SearchSettings(**groups["search"]), CubeSettings(**groups["cube"]),
                              NoiseSettings(**groups["noise"]), MatchSettings(**groups["match"]))
    if spec.level is None:
        return settings
    from .levels import LevelError, find_level

    try:
        level = find_level(model_variant or "", spec.level)
    except LevelError as error:
        raise BotError(f"bot spec {quoted(spec.text)}: {error}") from None
    return level.apply(settings)


def make_bot(spec: "str | BotSpec", rules: Optional[RuleOptions] = None) -> Bot:
    """The bot of ``spec`` (a spec string, or one read once by :func:`parse_spec`), checked against ``rules``
    (None: a net's own rules; others need ``rules``).

    A ``net:`` or ``onnx:`` bot is built once, from its evaluator and the settings of the spec's options
    (:func:`net_settings`). Raises :class:`BotError` with the valid forms for a malformed spec, and a
    clear message for a missing checkpoint, a missing optional package or a
    bot that cannot play ``rules``.
    """
    spec = spec if isinstance(spec, BotSpec) else parse_spec(spec)
    network = spec.base.startswith(("net:", "onnx:"))
    if network:
        bot = _net(spec)
    else:
        bot = _build(spec.base, rules)
        bot.name = spec.base
    if rules is not None:
        bot = bot.playing(rules)  # the backgammon model playing portes: its probabilities, portes' points
    if not network:
        if spec.options:
            _fixed_bot_options(bot, spec)
    elif spec.points is not None:
        from ..rules.options import variant_rules

        try:
            bot = bot.playing(bot.rules, variant_rules(spec.points))
        except BotError as error:
            raise BotError(f"bot spec {quoted(spec.text)}: points={spec.points}: {error}") from None
    if rules is not None:
        bot.check_rules(rules)
    return bot


def _fixed_bot_options(bot: Bot, spec: BotSpec) -> None:
    """Refuse the options of a bot without an evaluator but ``nocube`` (which changes nothing: such a bot plays
    the passive cube); the bot's name keeps the options."""
    for option in spec.options:
        name = option.partition("=")[0]
        if name != "nocube":
            raise _bad(spec.text, _NET_ONLY[name])
    bot.name = bot.name + "," + ",".join(spec.options)


def _number(text: str, kind: type):
    """``text`` as a ``kind`` (int or float), or the text itself (for the range check to refuse by name)."""
    try:
        return kind(text)
    except ValueError:
        return text


def _build(text: str, rules: Optional[RuleOptions]) -> Bot:
    from .basic import RandomBot, RunnerBot

    if text == "random":
        return RandomBot()
    if text in ("runner", "pipcount"):
        return RunnerBot()
    if rules is None:
        raise BotError(f"bot spec {quoted(text)}: say which rule set it plays (only net: and onnx: bots know their own)")
    if text.startswith(_ENGINE):
        from .engine_bot import EngineBot

        return EngineBot(text[len(_ENGINE):].strip(), rules)
    if text == "heuristic":
        from .heuristic import HeuristicBot

        return HeuristicBot(rules)
    if text == "pubeval":
        from .pubeval import PubevalBot

        return PubevalBot(rules)
    match = _GNUBG.match(text)
    if match:
        plies = int(match.group("plies"))
        if plies > 2:
            raise _bad(text, "gnubg plays 0, 1 or 2 plies")
        from .gnubg import GnubgBot

        return GnubgBot(rules, plies)
    raise _bad(text, "unknown bot" + _did_you_mean(text))


def _shipped_guess(text: str, match: re.Match) -> str:
    """``; did you mean 'net:tapa@1ply'?`` for a ``net:NAME`` whose NAME is near a shipped model's, else empty."""
    import difflib

    from ..net.shipped import shipped_names

    close = difflib.get_close_matches(match.group("path"), shipped_names(), n=1)
    if not close:
        return ""
    return f"; did you mean {text[:match.start('path')] + close[0] + text[match.end('path'):]!r}?"


def _net(spec: BotSpec) -> Bot:
    """A :class:`~tapa_ai.bots.search.NetBot` over a checkpoint's network (``net:``) or an exported ONNX model's
    (``onnx:``), built once with the settings of the spec's options (searching the plies it names)."""
    from .search import MAX_PLIES, NetBot

    text = spec.base
    match = _NET.match(text)
    kind = text.split(":", 1)[0]
    if not match or not match.group("path"):
        raise _bad(text, "a net: spec needs a checkpoint path" if kind == "net" else
                   "an onnx: spec needs the path of an exported model")
    written = Path(match.group("path"))  # the bot's name keeps the path or shipped name as written
    plies = int(match.group("plies") or 0)
    if plies > MAX_PLIES:
        raise _bad(text, f"a network searches 0 to {MAX_PLIES} plies")
    name = f"{kind}:{written}@{plies}ply" if match.group("plies") else f"{kind}:{written}"
    if kind == "onnx":
        from .onnx_bot import onnx_evaluator

        evaluator = onnx_evaluator(written, name)
    else:
        from ..net.checkpoint import CheckpointError, load_network
        from ..net.evaluator import evaluator_for
        from ..net.shipped import UnknownModelError, resolve_model_path

        try:
            path = resolve_model_path(written)
        except UnknownModelError as error:
            raise BotError(f"bot spec {quoted(text)}: {error}{_shipped_guess(text, match)}") from None
        try:
            net = load_network(path)
        except CheckpointError as error:
            raise BotError(f"bot spec {quoted(text)}: {error}") from None
        evaluator = evaluator_for(net, bearoff=False)  # NetBot's own choice for a network
    settings = net_settings(spec, plies, evaluator.model_rules.name)
    return NetBot(evaluator, name=",".join((name,) + spec.options), settings=settings, bearoff=spec.bearoff)
