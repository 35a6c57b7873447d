"""Which rule sets the bear-off databases are exact for: the one declaration every user of them asks.

The databases (:mod:`~tapa_ai.bearoff.one_sided`, :mod:`~tapa_ai.bearoff.two_sided`) are built on one model of a
turn: a roll is both dice, or a double's four steps (docs/rules.md section 2). Where no contact is left every
board game of the family (pinning, hitting, running) is then the same race, so the tables serve all of them. A
rule set that plays a roll otherwise is another race: under ``doubles = "cascade"`` (Gul Bara, docs/rules.md
10.2) a double d-d goes on with four (d+1)'s and so on up to four 6's, a double is worth more, and the tables'
values are not that game's. :func:`why_not_exact` says so, in one line naming the rule option; the evaluator's
bear-off substitution (:class:`~tapa_ai.net.evaluator.BearoffEvaluator`), the masks and values of
:mod:`~tapa_ai.bearoff.evaluate` (so the search's exact leaves, rollouts' bear-off stops and the analyser), the
engine's ``bearoff`` command and ``tapa-ai bearoff`` all go by it: a position of such a rule set gets the
network's value, never a silently wrong "exact" one, and a request for the database's answer is refused.
"""

from __future__ import annotations

from typing import Optional

from ..errors import TapaError
from ..rules.options import RuleOptions

__all__ = ["NotExactError", "why_not_exact", "exact_for", "check_exact"]


class NotExactError(TapaError, ValueError):
    """A rule set the bear-off databases are not exact for, asked for their answer (one line: why)."""


def why_not_exact(rules: RuleOptions) -> Optional[str]:
    """Why the bear-off databases' values are not ``rules``' (one line naming the rule option), or None where
    they are exact: every rule set whose doubles are plain, every preset of the registry among them."""
    if rules.doubles != "plain":
        detail = "cascade (docs/rules.md 10.2)" if rules.doubles == "cascade" else repr(rules.doubles)
        return (f"the bear-off database is exact only for plain doubles (rule option doubles='plain'); "
                f"{rules.name}'s doubles {detail}")
    return None


def exact_for(rules: RuleOptions) -> bool:
    """Whether the bear-off databases' values are exact for ``rules`` (:func:`why_not_exact` gives no reason)."""
    return why_not_exact(rules) is None


def check_exact(rules: RuleOptions) -> None:
    """:class:`NotExactError` with :func:`why_not_exact`'s line unless the databases are exact for ``rules``."""
    why = why_not_exact(rules)
    if why is not None:
        raise NotExactError(why)
