"""The engine's advice at the board: ``hint`` (ranked moves, cube advice) and ``eval``.

Everything is computed by :class:`tapa_ai.analysis.analyzer.Analyzer`, the model
behind the engine's ``hint`` and ``evaluate``, so the terminal, the engine
protocol and the bot agree. The network is the bot's own when the bot is a
``net:`` bot; otherwise ``--advisor net:PATH`` or, by default, the variant's
shipped model (``net:<variant>``, installed with the package; a
``checkpoints/<variant>.pt`` in the current directory comes first). It is
loaded on the first request (loading torch takes a few seconds).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import TapaError
from ..rules.position import Position

__all__ = ["Advisor", "AdviceUnavailable", "summarize", "default_advisor_spec"]


class AdviceUnavailable(TapaError, RuntimeError):
    """No network can give advice here; the message says why and what to do."""


def default_advisor_spec(variant: str) -> Optional[str]:
    """The variant's default network: ``net:checkpoints/<variant>.pt`` when the current directory has that file
    (a checkout, or your own), else the shipped model ``net:<variant>`` when installed, else None
    (:func:`tapa_ai.net.shipped.default_net_spec`)."""
    from ..net.shipped import default_net_spec

    return default_net_spec(variant)


def _short_name(name: str) -> str:
    return name.replace("_or_", "/")


def summarize(named: dict[str, float]) -> str:
    """``win 51.3% (gammon 7.0%, mother 3.0%) · lose 48.6% (...) · draw 0.1%`` from outcome probabilities."""
    parts = []
    for prefix in ("win", "lose"):
        total = sum(p for name, p in named.items() if name.startswith(prefix + "_"))
        extras = [f"{_short_name(name[len(prefix) + 1:])} {p:.1%}" for name, p in named.items()
                  if name.startswith(prefix + "_") and name != f"{prefix}_single"]
        parts.append(f"{prefix} {total:.1%}" + (f" ({', '.join(extras)})" if extras else ""))
    if "draw" in named:
        parts.append(f"draw {named['draw']:.1%}")
    return " | ".join(parts)


def scored_named(analyzer, probabilities) -> dict[str, float]:
    """The probabilities by outcome name as the analyzer's rules score them: where its model has a backgammon class
    and the rules no backgammons (Portes played by the backgammon model: a backgammon counts as a gammon), it is
    added to the gammon and not shown apart."""
    named = analyzer.named(probabilities)
    if analyzer.rules.backgammons or "win_backgammon" not in named:
        return named
    folded: dict[str, float] = {}
    for name, p in named.items():
        side = next((prefix for prefix in ("win_", "lose_") if name.startswith(prefix)), None)
        key = name if side is None or name in (side + "single", side + "gammon") else side + "gammon"
        folded[key] = folded.get(key, 0.0) + p
    return folded


def _swap(named: dict[str, float]) -> dict[str, float]:
    """The same probabilities from the other side's view."""
    swapped = {}
    for name, p in named.items():
        if name.startswith("win_"):
            swapped["lose_" + name[4:]] = p
        elif name.startswith("lose_"):
            swapped["win_" + name[5:]] = p
        else:
            swapped[name] = p
    order = list(named)
    return {name: swapped[name] for name in order}


def _same_board(a: Position, b: Position) -> bool:
    return a.points == b.points and a.off == b.off and a.bar == b.bar


class Advisor:
    """Ranks moves and evaluates positions for the player, with a network loaded on first use.

    ``source`` is an :class:`~tapa_ai.analysis.analyzer.Analyzer`, a ``net:``
    spec, a NetBot, or None (no advice: every request says how to get it).
    """

    def __init__(self, source, rules, why_none: str = "") -> None:
        self._source = source
        self._analyzer = None
        self._failed: Optional[str] = None
        self.rules = rules
        self.why_none = why_none

    @property
    def name(self) -> str:
        if self._analyzer is not None:
            name = self._analyzer.name
            return name if name.endswith("ply") else f"{name} ({self._analyzer.plies}-ply)"
        return str(getattr(self._source, "name", self._source))

    def analyzer(self):
        """The loaded Analyzer, or :class:`AdviceUnavailable` saying why there is none."""
        if self._analyzer is not None:
            return self._analyzer
        if self._failed:
            raise AdviceUnavailable(self._failed)
        if self._source is None:
            raise AdviceUnavailable(self.why_none or "no network to ask: start with --advisor net:PATH")
        from ..bots.base import BotError
        from ..analysis.analyzer import AnalysisError, load_analyzer

        try:
            analyzer = load_analyzer(self._source).playing(self.rules)  # portes: the backgammon model
            if analyzer.rules != self.rules:
                raise AnalysisError(f"{analyzer.name} plays {analyzer.rules.name!r} rules, this game "
                                    f"{self.rules.name!r}")
        except (BotError, AnalysisError, TypeError, OSError) as error:
            self._failed = f"the advisor cannot be used: {error}"
            raise AdviceUnavailable(self._failed) from None
        self._analyzer = analyzer
        return analyzer

    # -- the score of a rotation's match --------------------------------------------------------------
    def class_values(self, analyzer, side: str, context) -> Optional[np.ndarray]:
        """(K,) what each outcome class of the game is worth to ``side`` as match-winning chances at the score of
        a rotation's match (``context``: a :class:`~tapa_ai.flow.rotation.RotationContext`; the rotation's match
        equity table), as the engine protocol ranks moves at a match's score; None outside a rotation's match."""
        if context is None:
            return None
        from ..cube.rotation_met import rotation_met

        away, opponent_away = context.away(side)
        return rotation_met(context.rotation).class_values(analyzer.points, [away], [opponent_away],
                                                           context.rotation.index(context.game))[0]

    @staticmethod
    def _score_words(context, side: str, viewer: str) -> str:
        away, opponent_away = context.away(side)
        who = "you" if side == viewer else side

        return (f"game {context.game} of a {context.rotation.match_name()} to {context.length}, {who} "
                f"need{'' if who == 'you' else 's'} "
                f"{away}, the other side {opponent_away}")

    def _before_the_cube(self, joint: str) -> str:
        """`` before the cube`` (after ``joint``) where the game has a doubling cube: its equities are cubeless;
        nothing in a game without one (plakoto, portes, fevga, narde, a rotation's games)."""
        return f"{joint}before the cube" if self.rules.cube else ""

    # -- moves ---------------------------------------------------------------------------------
    def hint(self, position: Position, dice: tuple[int, int], count: int = 5, context=None) -> list[str]:
        """The best ``count`` moves for the side to move, best first, with equities and win chances; in a rotation's
        match (``context``) ranked by the match-winning chance at its score."""
        analyzer = self.analyzer()
        values = self.class_values(analyzer, position.turn, context)
        ranked, total = analyzer.rank(position, dice, limit=count, class_values=values)
        width = max((len(move.move or "(pass)") for move in ranked), default=6)
        if values is not None:
            lines = [f"{total} legal move{'s' if total != 1 else ''} with {dice[0]}-{dice[1]}; the best by "
                     f"{self.name} at the score ({self._score_words(context, position.turn, position.turn)}): "
                     "your match-winning chance, and the equity (points per game):"]
            best = ranked[0].match_winning_chance if ranked else 0.0
            for index, move in enumerate(ranked, 1):
                wins = self._wins(analyzer, move.probabilities)
                difference = f"  ({100 * (move.match_winning_chance - best):+.2f}%)" if index > 1 else ""
                lines.append(f"  {index:>2}. {move.move or '(pass)':<{width}}  match {move.match_winning_chance:6.2%}"
                             f"  equity {move.equity:+.3f}  win {wins:5.1%}{difference}")
            return lines
        lines = [f"{total} legal move{'s' if total != 1 else ''} with {dice[0]}-{dice[1]}; the best by "
                 f"{self.name}, equity for you (points per game{self._before_the_cube(', ')}):"]
        best = ranked[0].equity if ranked else 0.0
        for index, move in enumerate(ranked, 1):
            wins = self._wins(analyzer, move.probabilities)
            difference = f"  ({move.equity - best:+.3f})" if index > 1 else ""
            lines.append(f"  {index:>2}. {move.move or '(pass)':<{width}}  {move.equity:+.3f}  "
                         f"win {wins:5.1%}{difference}")
        return lines

    @staticmethod
    def _wins(analyzer, probabilities) -> float:
        return sum(p for name, p in analyzer.named(probabilities).items() if name.startswith("win_"))

    def evaluation(self, position: Position, viewer: str, context=None) -> list[str]:
        """The network's evaluation of ``position`` before its side to move rolls, from ``viewer``'s view (in a
        match (Tavli, Tabla ...), ``context``, with ``viewer``'s match-winning chance at the score)."""
        analyzer = self.analyzer()
        probabilities, equity, exact = analyzer.evaluate(position)
        values = self.class_values(analyzer, position.turn, context)
        named = scored_named(analyzer, probabilities)
        if position.turn != viewer:
            named, equity = _swap(named), -equity
        when = "final result" if exact else f"{position.turn} to roll"
        lines = [f"evaluation by {self.name} ({when}), for you ({viewer}):",
                 f"  {summarize(named)}",
                 f"  equity {equity:+.3f} points per game{self._before_the_cube(' ')}"]
        if values is not None:
            chance = float(probabilities @ values)
            chance = chance if position.turn == viewer else 1.0 - chance
            lines.append(f"  match-winning chance {chance:.2%} for you ({self._score_words(context, viewer, viewer)})")
        return lines

    def review(self, position: Position, dice: tuple[int, int], played: Position, mover: str,
               context=None) -> list[str]:
        """How the network ranks the move a side played from ``position`` (reaching ``played``); in a rotation's match
        (``context``) by the match-winning chance at its score."""
        analyzer = self.analyzer()
        values = self.class_values(analyzer, position.turn, context)
        ranked, total = analyzer.rank(position, dice, class_values=values)
        place = next((i for i, move in enumerate(ranked) if _same_board(move.position, played)), None)
        if place is None:  # pragma: no cover - every legal move is ranked
            return [f"{self.name} cannot find that move among the {total} legal moves"]
        chosen, best = ranked[place], ranked[0]
        if values is None:
            behind = f"{chosen.equity - best.equity:+.3f}"
            worth = f"equity {chosen.equity:+.3f}"
        else:
            behind = f"{100 * (chosen.match_winning_chance - best.match_winning_chance):+.2f}% match-winning chance"
            worth = f"match-winning chance {chosen.match_winning_chance:.2%} (equity {chosen.equity:+.3f})"
        verdict = "the best" if place == 0 else f"number {place + 1}, {behind} behind {best.move or '(pass)'}"
        return [f"{mover}'s move {chosen.move or '(pass)'} with {dice[0]}-{dice[1]}: {worth} "
                f"for {mover}; by {self.name} {verdict} of {total}",
                f"  {summarize(scored_named(analyzer, chosen.probabilities))}"]

    # -- the cube -------------------------------------------------------------------------------
    def cube(self, position: Position, cube_value: int, cube_owner: Optional[str], match_score,
             viewer: str) -> list[str]:
        """The cube decision before ``position.turn`` rolls: double or not, and take or pass.

        ``match_score`` is a :class:`~tapa_ai.rules.cube.MatchScore` or None
        (money play). ``viewer`` decides the wording.
        """
        analyzer = self.analyzer()
        if not hasattr(analyzer, "cube"):
            raise AdviceUnavailable("this engine version has no cube analysis")
        from ..rules.cube import Cube

        answer = analyzer.cube(position, Cube(cube_value, cube_owner), match_score)
        doubler = position.turn
        units = "match-winning chance" if answer.get("units") == "mwc" else "points"
        equities = answer["equities"]
        labels = {"no_double": "no double", "double_take": "double/take", "double_pass": "double/pass"}
        shown = ", ".join(f"{labels.get(key, key)} {value:+.3f}" if units == "points" else
                          f"{labels.get(key, key)} {value:.1%}" for key, value in equities.items())
        who = "you" if doubler == viewer else doubler
        action = answer["action"]
        if answer.get("reason"):
            decision = f"{who} may not double: {answer['reason']}"
        elif action == "double":
            decision = f"{who} should double; the double is a {answer['response']}"
        elif answer.get("too_good"):
            decision = f"{who} should not double: too good, play on for the gammon"
        else:
            decision = f"{who} should not double yet; a double would be a {answer['response']}"
        return [f"cube advice by {self.name}: {decision}",
                f"  equities for {doubler} ({units}): {shown}"]
