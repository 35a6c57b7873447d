"""``tapa-ai play`` from its command-line options: pick the rules, the bot and the advisor, then play."""

from __future__ import annotations

import argparse
from typing import Optional, TextIO

from ..cube.met import MAX_MATCH_LENGTH
from ..cube.tavli_met import check_tavli_length
from ..errors import TapaError
from ..rules.options import VARIANTS, RuleOptions, variant_rules
from ..quoting import quoted
from .advice import Advisor, default_advisor_spec
from .saves import SavedGame, game_summary, load_game, read_file
from .session import PlaySession

DEFAULT_PLIES = 1
"""Search depth of the default bot (the shipped network of the variant)."""
DEFAULT_TAVLI_BOT = "net:tavli@1ply"
"""The default opponent of a Tavli match: the shipped networks of its three games at 1 ply."""


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
                      "Fevga in turn, no cube (docs/rules.md 9); --bot then takes a Tavli player spec (default "
                      f"{DEFAULT_TAVLI_BOT}; tavli:PORTES,PLAKOTO,FEVGA, or one spec for all three)")
    play.add_argument("--seed", type=int, default=None, help="seed of the dice and the bot (default: random, shown)")
    play.add_argument("--as", dest="human", choices=["X", "O"], default="X", help="the side you play (default X)")
    play.add_argument("--advisor", metavar="SPEC", help="network behind hint and eval: net:PATH[@Nply] or none "
                      "(default: the bot if it is a net, else the shipped net:<variant>)")
    play.add_argument("--level", metavar="NAME", help="the bot at a level of play: beginner, casual, intermediate, "
                      "advanced, expert or world-class (docs/levels.md; the shipped net of the variant, or --bot's "
                      "net: spec, with ,level=NAME)")
    play.add_argument("--load", metavar="FILE", help="continue a game saved with 'save FILE' (or start from a "
                      "JSON position)")
    play.add_argument("--show-eval", action="store_true", help="show the engine's view of every bot move")
    play.add_argument("--no-color", action="store_true", help="plain text (colour is used only on a terminal "
                      "and when NO_COLOR is unset)")
    play.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    return launch(variant=args.variant, bot=args.bot, match_length=args.match_length, seed=args.seed,
                  human=args.human, no_color=args.no_color, advisor=args.advisor, load=args.load,
                  show_eval=args.show_eval, tavli=args.tavli, level=args.level)


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
           output: Optional[TextIO] = None, tavli: Optional[int] = None, level: Optional[str] = None) -> int:
    """Build and run a session; returns the exit code (130 for Ctrl-C). Bad options raise a
    :class:`~tapa_ai.errors.TapaError` (:class:`LaunchError`, a ``BotError``, ``SaveError``, ``RulesError``):
    ``tapa-ai`` prints it as one line, exit code 2."""
    from ..bots.search import NetBot
    from ..bots.spec import make_bot

    if tavli is not None and (variant or match_length):
        raise LaunchError(f"--tavli {tavli} plays Portes, Plakoto and Fevga in turn to {tavli} points: it takes no "
                          f"{'--variant' if variant else '--match-length'}")
    if tavli is not None:
        check_tavli_length(tavli, f"--tavli {tavli}", LaunchError)
    if seed is not None and not 0 <= seed < 2**64:  # what a save holds (tapa_ai/schemas/saved_game.json)
        raise LaunchError(f"--seed {quoted(seed)}: must be an integer 0 to 2^64-1")
    saved = load_game(read_file(load), "file") if load else None
    if saved is not None and saved.is_tavli:
        if variant or match_length:
            raise LaunchError(f"{load} holds a Tavli match to {saved.match.length}: it takes no "
                              f"{'--variant' if variant else '--match-length'}")
        if tavli is not None and tavli != saved.match.length:
            raise LaunchError(f"--tavli {tavli} but {load} holds a Tavli match to {saved.match.length}")
        tavli = saved.match.length
    elif saved is not None and tavli is not None:
        raise LaunchError(f"--tavli {tavli} but {load} holds a {saved.rules.name} "
                          f"{'money session' if not saved.match.length else f'match to {saved.match.length}'}, "
                          "not a Tavli match")
    if level is not None and tavli is not None:
        bot = f"{bot or 'net:tavli'},level={level}"
    if tavli is not None:
        return _launch_tavli(tavli, bot or (saved.bot if saved is not None else None), seed=seed, human=human,
                             no_color=no_color, advisor=advisor, saved=saved, load=load, show_eval=show_eval,
                             input=input, output=output)
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


def tavli_advisors(player, advisor: Optional[str]) -> dict[str, Advisor]:
    """The advisor of each game of a Tavli match: ``--advisor none``; a Tavli spec of networks
    (``net:tavli@0ply``, ``tavli:net:A,net:B,net:C``); else the player's network for the game when it is one,
    else the game's shipped network (``net:backgammon`` for Portes)."""
    from ..bots.search import NetBot
    from ..bots.tavli import tavli_specs
    from ..flow.tavli import TAVLI_ROTATION, tavli_rules

    rules = {variant: tavli_rules(number) for number, variant in enumerate(TAVLI_ROTATION, start=1)}
    if advisor == "none":
        return {variant: Advisor(None, rules[variant], why_none="advice is off (--advisor none)")
                for variant in TAVLI_ROTATION}
    if advisor:
        return {variant: Advisor(spec, rules[variant]) for variant, spec in zip(TAVLI_ROTATION, tavli_specs(advisor))}
    advisors = {}
    for variant in TAVLI_ROTATION:
        bot = player.bot(variant)
        if isinstance(bot, NetBot):
            advisors[variant] = Advisor(bot, rules[variant])
        else:
            advisors[variant] = Advisor(default_advisor_spec(variant), rules[variant],
                                        why_none=f"no network for {variant}: give --advisor net:tavli")
    return advisors


def _launch_tavli(length: int, bot: Optional[str], *, seed, human, no_color, advisor, saved, load, show_eval,
                  input, output) -> int:
    """``tapa-ai play --tavli N``: a Tavli match against the Tavli player ``bot``."""
    from ..bots.tavli import make_tavli_player

    player = make_tavli_player(bot or DEFAULT_TAVLI_BOT)
    session = PlaySession.tavli(player, length, advisors=tavli_advisors(player, advisor), human=human, seed=seed,
                                input=input, output=output, colour=False if no_color else None,
                                show_eval=show_eval)
    try:
        return _run(session, saved, load, [])
    finally:
        player.close()


__all__ = ["add_parser", "run", "launch", "choose_rules", "default_bot_spec", "no_network_note", "LaunchError"]
