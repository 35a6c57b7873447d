"""Exact bear-off databases: once no contact is left, tapa, plakoto and backgammon play the same end game.

- ``one_sided``: for every arrangement of up to 15 checkers on the 6 home points, the distribution of the
  turns needed to bear all of them off and to bear off the first;
- ``two_sided``: the exact cubeless chance that the side to move wins, for every pair of homes of up to
  6 (configurable) checkers a side;
- ``database``: both cached on disk (checksummed, written atomically), built on first use;
- ``evaluate``: which positions of a batch are bear-offs, and their outcome distributions in the
  network's classes (the two-sided table where it answers, else the one-sided convolution); the network
  bots and their search use it in place of the network (docs/bearoff.md);
- ``exactness``: which rule sets the databases are exact for (:func:`exact_for`, :func:`why_not_exact`).

The tables assume a roll is both dice or a double's four steps. That holds in every preset of the registry,
whatever its board game (pinning, hitting, running: with no contact left they are the same race), but not
under cascading doubles (``doubles = "cascade"``, Gul Bara, docs/rules.md 10.2), where a double is worth more.
:func:`why_not_exact` is the one declaration of this: every place that applies or serves a database value
asks it (the evaluator's bear-off substitution, the masks and values of ``evaluate``, the engine's
``bearoff`` command, ``tapa-ai bearoff``), so a position of such a rule set gets the network's value and a
request for the database's answer is refused with its one line.
"""

from .exactness import NotExactError, check_exact, exact_for, why_not_exact

__all__ = ["NotExactError", "check_exact", "exact_for", "why_not_exact"]
