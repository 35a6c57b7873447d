"""The engine's ``bearoff`` command: one side's bear-off distributions, or a whole bear-off position's chances.

``{"home": [n1, ..., n6]}``: the chance that bearing off those checkers takes exactly k turns, all of them
and the first one (the one-sided database); ``{"position": ...}``: both sides' distributions and the side to
move's cubeless chances (:mod:`tapa_ai.bearoff.evaluate`), refused for a rule set the databases are not exact
for (:func:`tapa_ai.bearoff.exactness.why_not_exact`: cascading doubles, docs/rules.md 10.2). Bad input raises
:class:`~tapa_ai.analysis.analyzer.AnalysisError` (the protocol answers it as an error).
"""

from __future__ import annotations

from typing import Any, Optional

from ..rules.position import SIDES, Position
from ..quoting import quoted
from ..analysis.analyzer import AnalysisError


def answer_bearoff(request: dict, position: Optional[Position]) -> dict:
    """The answer to a ``bearoff`` request; ``position``: the request's position (checked playable), or None."""
    from ..bearoff.database import one_sided
    from ..bearoff.evaluate import bearoff_problems, bearoff_values
    from ..bearoff.exactness import why_not_exact
    from ..bearoff.one_sided import check_home
    from ..movegen.batch import PositionBatch
    from ..net.model import outcome_names, outcome_points

    if position is not None:
        # A whole position: both sides' distributions and, no contact being left, who wins how often.
        why = why_not_exact(position.rules)
        if why is not None:
            raise AnalysisError(why)
        batch = PositionBatch.from_positions([position])
        problems = bearoff_problems(batch, 0)
        if problems:
            raise AnalysisError("not a bear-off position (every checker of both sides must be on its own 1- to "
                                "6-points or borne off, none on the bar or pinned): " + "; ".join(problems))
        values = bearoff_values(batch)
        tables = one_sided(progress=False, quiet=True)
        opponent = SIDES[1 - SIDES.index(position.turn)]
        answer: dict[str, Any] = {"turn": position.turn}
        for side, home in ((position.turn, values.homes[0, 0]), (opponent, values.homes[0, 1])):
            home = [int(n) for n in home]
            turns, first_off = tables.distributions(home)
            answer[side] = {"home": home, "turns": turns, "first_off": first_off}
        distribution = values.distributions[0]
        answer["probabilities"] = {name: float(p) for name, p in zip(outcome_names(position.rules), distribution)}
        answer["equity"] = float(distribution @ outcome_points(position.rules).astype(float))
        answer["exact"] = bool(values.exact[0])
        return {name: answer[name] for name in ("X", "O", "turn", "probabilities", "equity", "exact")}
    if "home" not in request:
        raise AnalysisError("missing 'home' (the checkers on the 1- to 6-points, e.g. [2, 2, 3, 0, 1, 0]) "
                            "or 'position' (a bear-off position)")
    home = request["home"]
    try:
        if not isinstance(home, list):
            raise ValueError(home)
        check_home(home)
    except ValueError:
        raise AnalysisError(f"'home' must be a list of 6 integers >= 0 summing to at most 15 "
                            f"(checkers on the 1- to 6-points), got {quoted(home)}") from None
    turns, first_off = one_sided(progress=False, quiet=True).distributions(home)
    return {"home": home, "turns": turns, "first_off": first_off}
