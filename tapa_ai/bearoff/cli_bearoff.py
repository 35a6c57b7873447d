"""``tapa-ai bearoff [N1 ... N6]``: build (once, cached, checksummed) and query the one-sided bear-off database
(docs/bearoff.md). ``--variant`` names the rule set asked about (a preset, or a JSON rule set): one the database is
not exact for (:func:`tapa_ai.bearoff.exactness.why_not_exact`: cascading doubles) is refused with one line."""

from __future__ import annotations

import argparse
import json

from ..errors import TapaError


def add_parser(subparsers) -> None:
    """The ``bearoff`` command on ``subparsers`` (``tapa-ai``'s)."""
    bearoff = subparsers.add_parser("bearoff", help="build (once) and query the one-sided bear-off database")
    bearoff.add_argument("home", nargs="*", type=int, metavar="N",
                         help="checkers on the 1- to 6-points (six counts): print their distributions")
    bearoff.add_argument("--rebuild", action="store_true", help="build the database again even if a valid one is "
                         "cached")
    bearoff.add_argument("--json", action="store_true", help="one JSON object, as the engine's bearoff command")
    bearoff.add_argument("--quiet", action="store_true", help="no progress bar or messages")
    bearoff.add_argument("--variant", metavar="NAME|JSON", help="the rule set asked about: a variant, or a JSON rule "
                         "set such as '{\"variant\": \"fevga\", \"doubles\": \"cascade\"}'; one the database is "
                         "not exact for (cascading doubles) is refused (default: none; every preset is exact)")
    bearoff.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code."""
    from .database import database_path, one_sided
    from .exactness import check_exact
    from .one_sided import check_home

    rules = _rules(args.variant)
    if rules is not None:
        check_exact(rules)
    home = args.home
    if home:
        try:
            check_home(home)
        except ValueError:
            raise TapaError(f"HOME must be 6 counts >= 0 (checkers on the 1- to 6-points) summing to at most 15, "
                            f"got {home}") from None
    database = one_sided(rebuild=args.rebuild, progress=not args.quiet, quiet=args.quiet)
    if not home:
        print(f"one-sided bear-off database: {database_path()} ({database.turns.shape[0]:,} positions)")
        return 0
    turns, first_off = database.distributions(home)
    if args.json:
        print(json.dumps({"home": home, "turns": turns, "first_off": first_off}))
        return 0
    print(f"checkers on the 1- to 6-points {home}: {database.mean_turns(home):.4f} turns on average")
    print("turns  all off   first off")
    for k in range(max(len(turns), len(first_off))):
        all_k = turns[k] if k < len(turns) else 0.0
        first_k = first_off[k] if k < len(first_off) else 0.0
        print(f"{k:5d}  {all_k:8.5f}  {first_k:9.5f}")
    return 0


def _rules(variant):
    """The rule set ``--variant`` names, a preset or a JSON rule set (None if not given); :class:`TapaError` for a
    bad one."""
    from ..rules.options import RuleOptions, RulesError, variant_rules

    if variant is None:
        return None
    if not variant.lstrip().startswith("{"):
        return variant_rules(variant)  # RulesError (a TapaError) naming the known variants
    try:
        return RuleOptions.from_dict(json.loads(variant))
    except json.JSONDecodeError as error:
        raise TapaError(f"--variant: not a variant name or a JSON rule set ({error})") from None
    except (RulesError, TypeError) as error:
        raise TapaError(f"--variant: {error}") from None
