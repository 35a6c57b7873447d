"""``tapa-ai play`` from its command-line options: pick the rules, the bot and the advisor, then play."""

from __future__ import annotations

import argparse
from typing import Optional, TextIO

from ..cube.met import MAX_MATCH_LENGTH
from ..errors import TapaError
from ..rules.options import VARIANTS, RuleOptions, variant_rules
from ..quoting import quoted
from ..analysis.cli_analyse import default_rotation_bot
from .advice import Advisor, default_advisor_spec
from .saves import SavedGame, finished_match, game_summary, load_game, read_file
from .session import PlaySession

DEFAULT_PLIES = 1
"""Search depth of the default bot (the shipped network of the variant)."""


def add_parser(subparsers) -> None:
    """The ``play`` command on ``subparsers`` (``tapa-ai``'s)."""
    from ..arena.command_options import bots_help

    play = subparsers.add_parser("play", help="play a game or a match against a bot in the terminal "
                                 "(docs/play.md)")
    play.add_argument("--variant", choices=list(VARIANTS), help="rule set (default: the bot net's, else tapa)")
    play.add_argument("--bot", metavar="SPEC", help="the opponent (default: the shipped net:<variant>@1ply, else "
                      "heuristic); " + bots_help())
    play.add_argument("--match-length", type=int, default=0, metavar="N",
                      help="play a match to N points (default 0: money play, game after game)")
    play.add_argument("--tavli", type=int, metavar="N", help="play a Tavli match to N points: Portes, Plakoto and "
                      "Fevga in turn, no cube (docs/rules.md 9); --bot then takes a rotation player spec (default "
                      "net:tavli@1ply; tavli:PORTES,PLAKOTO,FEVGA, or one spec for all three)")
    play.add_argument("--tabla", type=int, metavar="N", help="play a Tabla match to N points: backgammon, Gul Bara "
                      "and Tapa in turn, no cube (docs/rules.md 10.4); --bot: net:tabla@1ply (default), "
                      "tabla:BACKGAMMON,GULBARA,TAPA, or one spec for all three")
    play.add_argument("--rotation", metavar="GAMES", help="play a match of any rotation to --length N points: a "
                      "preset (tavli, tabla) or the games comma-separated (backgammon,gulbara,tapa); --bot: "
                      "net:rotation@1ply (default), rotation:SPEC1,SPEC2,..., or one spec for all")
    play.add_argument("--length", type=int, metavar="N", help="the points of a --rotation match")
    play.add_argument("--seed", type=int, default=None, help="seed of the dice and the bot (default: random, shown)")
    play.add_argument("--as", dest="human", choices=["X", "O"], default="X", help="the side you play (default X)")
    play.add_argument("--advisor", metavar="SPEC", help="network behind hint and eval: net:PATH[@Nply] or none "
                      "(default: the bot if it is a net, else the shipped net:<variant>)")
    play.add_argument("--level", metavar="NAME", help="the bot at a level of play: beginner, casual, intermediate, "
                      "advanced, expert or world-class (docs/levels.md; the shipped net of the variant, or --bot's "
                      "net: spec, with ,level=NAME)")
    play.add_argument("--load", metavar="FILE", help="continue a game saved with 'save FILE', or a match file "
                      "(GNU Backgammon's .sgf, .mat: docs/match-files.md) from its end (or start from a JSON "
                      "position)")
    play.add_argument("--show-eval", action="store_true", help="show the engine's view of every bot move")
    play.add_argument("--no-color", action="store_true", help="plain text (colour is used only on a terminal "
                      "and when NO_COLOR is unset)")
    play.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    return launch(variant=args.variant, bot=args.bot, match_length=args.match_length, seed=args.seed,
                  human=args.human, no_color=args.no_color, advisor=args.advisor, load=args.load,
                  show_eval=args.show_eval, tavli=args.tavli, tabla=args.tabla, rotation=args.rotation,
                  length=args.length, level=args.level)


class LaunchError(TapaError, ValueError):
    """Options that cannot start a session; the message says why."""


def _net_rules(spec: str) -> Optional[RuleOptions]:
    from ..bots.spec import net_checkpoint_path
    from ..net.checkpoint import CheckpointError, load_checkpoint

    path = net_checkpoint_path(spec)
    if path is None or not path.is_file():
        return None
    try:
        return load_checkpoint(path).rules()
    except CheckpointError as error:
        raise LaunchError(f"bot spec {quoted(spec)}: {error}") from None


def choose_rules(variant: Optional[str], bot: Optional[str], saved: Optional[SavedGame]) -> RuleOptions:
    """The rule set: the saved game's, else ``--variant``, else the bot network's, else tapa."""
    if saved is not None:
        if variant and variant != saved.rules.name:
            raise LaunchError(f"--variant {variant} but the file to load is a {saved.rules.name} game")
        return saved.rules
    if variant:
        return variant_rules(variant)
    if bot:
        rules = _net_rules(bot)
        if rules is not None:
            return rules
    return variant_rules("tapa")


def default_bot_spec(rules: RuleOptions) -> str:
    """The shipped network of the variant at 1 ply when there is one, else ``heuristic``."""
    spec = default_advisor_spec(rules.name)
    return f"{spec}@{DEFAULT_PLIES}ply" if spec else "heuristic"


def no_network_note(rules: RuleOptions) -> str:
    """What the player is told when the variant has no network and the bot falls back to ``heuristic``."""
    return (f"(There is no {rules.name} network (net:{rules.name}): the bot is heuristic, the hand-crafted "
            f"player. Others: --bot runner, --bot random, or --bot net:PATH with a {rules.name} checkpoint.)")


def launch(*, variant: Optional[str] = None, bot: Optional[str] = None, match_length: int = 0,
           seed: Optional[int] = None, human: str = "X", no_color: bool = False, advisor: Optional[str] = None,
           load: Optional[str] = None, show_eval: bool = False, input: Optional[TextIO] = None,
           output: Optional[TextIO] = None, tavli: Optional[int] = None, tabla: Optional[int] = None,
           rotation: Optional[str] = None, length: Optional[int] = None, level: Optional[str] = None) -> int:
    """Build and run a session; returns the exit code (130 for Ctrl-C). Bad options raise a
    :class:`~tapa_ai.errors.TapaError` (:class:`LaunchError`, a ``BotError``, ``SaveError``, ``RulesError``):
    ``tapa-ai`` prints it as one line, exit code 2."""
    from ..bots.search import NetBot
    from ..bots.spec import make_bot

    asked = _asked_rotation(tavli, tabla, rotation, length)
    if asked is not None and (variant or match_length):
        the_rotation, points, option = asked
        raise LaunchError(f"{option} plays {_games_words(the_rotation)} in turn to {points} point"
                          f"{'s' if points != 1 else ''}: it takes no {'--variant' if variant else '--match-length'}")
    if seed is not None and not 0 <= seed < 2**64:  # what a save holds (tapa_ai/schemas/saved_game.json)
        raise LaunchError(f"--seed {quoted(seed)}: must be an integer 0 to 2^64-1")
    saved = load_game(read_file(load), "file") if load else None
    if saved is not None and (over := finished_match(saved.match)):
        raise LaunchError(f"{load}: {over}")
    if saved is not None and saved.is_rotation:
        held = saved.match
        holds = f"{load} holds a {held.rotation.match_name()} to {held.length}"
        if variant or match_length:
            raise LaunchError(f"{holds}: it takes no {'--variant' if variant else '--match-length'}")
        if asked is not None and asked[0] != held.rotation:
            raise LaunchError(f"{asked[2]} but {holds} ({held.rotation.describe()})")
        if asked is not None and asked[1] != held.length:
            raise LaunchError(f"{asked[2]} but {holds}")
        asked = (held.rotation, held.length, "")
    elif saved is not None and asked is not None:
        raise LaunchError(f"{asked[2]} but {load} holds a {saved.rules.name} "
                          f"{'money session' if not saved.match.length else f'match to {saved.match.length}'}, "
                          "not a rotation's match")
    if asked is not None:
        the_rotation, points, _ = asked
        if level is not None:
            bot = f"{bot or default_rotation_bot(the_rotation).partition('@')[0]},level={level}"
        return _launch_rotation(the_rotation, points, bot or (saved.bot if saved is not None else None), seed=seed,
                                human=human, no_color=no_color, advisor=advisor, saved=saved, load=load,
                                show_eval=show_eval, input=input, output=output)
    rules = choose_rules(variant, bot, saved)
    if not 0 <= match_length <= MAX_MATCH_LENGTH:  # the match equity tables' reach, and what a save holds
        raise LaunchError(f"--match-length {quoted(match_length)}: must be 0 (money play) to {MAX_MATCH_LENGTH}")
    if saved is not None and match_length and match_length != saved.match.length:
        raise LaunchError(f"--match-length {match_length} but the file holds "
                          f"{'money play' if not saved.match.length else f'a match to {saved.match.length}'}")
    spec = bot or (saved.bot if saved is not None and saved.bot else None)
    notes = []
    if level is not None:
        base = bot or default_advisor_spec(rules.name)
        if not base:
            raise LaunchError(f"--level {level}: there is no {rules.name} network to play at a level (levels are "
                              "settings of a net: bot; docs/levels.md)")
        spec = f"{base},level={level}"
    if not spec:
        spec = default_bot_spec(rules)
        if spec == "heuristic":
            notes.append(no_network_note(rules))
    the_bot = make_bot(spec, rules)
    if advisor == "none":
        the_advisor = Advisor(None, rules, why_none="advice is off (--advisor none)")
    elif advisor:
        the_advisor = Advisor(advisor, rules)
    elif isinstance(the_bot, NetBot):
        the_advisor = Advisor(the_bot, rules)
    else:
        fallback = default_advisor_spec(rules.name)
        the_advisor = Advisor(fallback, rules, why_none=f"no network for {rules.name}: give --advisor net:PATH")
    session = PlaySession(rules, the_bot, human=human, match_length=match_length, seed=seed,
                          advisor=the_advisor, input=input, output=output,
                          colour=False if no_color else None, show_eval=show_eval)
    return _run(session, saved, load, notes)


def _run(session: PlaySession, saved: Optional[SavedGame], load: Optional[str], notes: list[str]) -> int:
    """Load ``saved`` into ``session`` if given, then play; the exit code."""
    from .commands import loaded_variant

    session.start_notes = notes
    if saved is not None:
        loaded = session.load(saved)
        session.start_notes = [f"Loaded {load}: game {session.match.game_number}{loaded_variant(session)}, "
                               f"{game_summary(session.match.game)}.", *loaded, *notes]
    try:
        return session.run()
    except KeyboardInterrupt:
        session.say("\nInterrupted.")
        return 130


def _asked_rotation(tavli, tabla, rotation, length) -> Optional[tuple]:
    """(rotation, length, option) of ``--tavli N``, ``--tabla N`` or ``--rotation GAMES --length N``
    (:func:`tapa_ai.arena.cli_match.rotation_and_length`, as ``tapa-ai match`` reads them), None when none is
    given; :class:`LaunchError`, one line, for anything else."""
    from ..arena.cli_match import rotation_and_length

    if all(value is None for value in (tavli, tabla, rotation, length)):
        return None
    options = argparse.Namespace(tavli=tavli, tabla=tabla, rotation=rotation, length=length)
    return rotation_and_length(options, LaunchError)


def _games_words(rotation) -> str:
    """``Portes, Plakoto and Fevga``: a rotation's games for people."""
    from ..rules.options import REGISTRY

    titles = [REGISTRY[variant].title for variant in rotation.variants]
    return titles[0] if len(titles) == 1 else f"{', '.join(titles[:-1])} and {titles[-1]}"


def rotation_advisors(player, advisor: Optional[str]) -> dict[str, Advisor]:
    """The advisor of each variant of a rotation's match: ``--advisor none``; a rotation spec of networks
    (``net:tabla@0ply``, ``tavli:net:A,net:B,net:C``, ``rotation:...``); else the player's network for the variant
    when it is one, else the variant's shipped network (``net:backgammon`` for Portes)."""
    from ..bots.rotation import rotation_specs
    from ..bots.search import NetBot

    rotation = player.rotation
    rules = {variant: rotation.rules_of(variant) for variant in rotation.distinct}
    if advisor == "none":
        return {variant: Advisor(None, rules[variant], why_none="advice is off (--advisor none)")
                for variant in rules}
    if advisor:
        return {variant: Advisor(spec, rules[variant]) for variant, spec in rotation_specs(advisor, rotation).items()}
    advisors = {}
    for variant in rules:
        bot = player.bot(variant)
        if isinstance(bot, NetBot):
            advisors[variant] = Advisor(bot, rules[variant])
        else:
            advisors[variant] = Advisor(default_advisor_spec(variant), rules[variant],
                                        why_none=f"no network for {variant}: give --advisor "
                                                 f"{default_rotation_bot(rotation).partition('@')[0]}")
    return advisors


def _launch_rotation(rotation, length: int, bot: Optional[str], *, seed, human, no_color, advisor, saved, load,
                     show_eval, input, output) -> int:
    """``tapa-ai play --tavli N`` / ``--tabla N`` / ``--rotation GAMES --length N``: a rotation's match against the
    rotation player ``bot``."""
    from ..bots.rotation import make_rotation_player

    player = make_rotation_player(bot or default_rotation_bot(rotation), rotation)
    try:
        session = PlaySession.rotation_match(player, length, advisors=rotation_advisors(player, advisor),
                                             human=human, seed=seed, input=input, output=output,
                                             colour=False if no_color else None, show_eval=show_eval)
        return _run(session, saved, load, [])
    finally:
        player.close()


__all__ = ["add_parser", "run", "launch", "choose_rules", "default_bot_spec", "default_rotation_bot", "no_network_note",
           "rotation_advisors", "LaunchError"]
