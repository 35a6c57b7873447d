"""``gnubg:N``: GNU Backgammon's neural net (the ``gnubg-nn`` package) choosing the move at N = 0, 1 or 2 plies.

gnubg boards are two lists of 25 counts, ``[player not on roll, player on
roll]``, each on its own points 1..24 (indices 0..23) and then its bar
(index 24); borne-off checkers are implicit. An afterstate seen from the side
that moved is the gnubg board ``[mover, opponent]`` (the opponent is on roll
next); the position the mover rolled in is ``[opponent, mover]``.

The positions moved from and the dice come with the afterstates
(``Afterstates.inputs`` and ``dice``, set by the move generator); where they
are unknown (afterstates built by hand), they are read back from the steps of
the rows (:func:`dice_of`). ``gnubg_nn.bestmove`` then picks a
move from the source position, and its resulting board is matched to the one
row of the afterstates with the same position.

A rule set of backgammon's board game that scores otherwise (``portes``:
a backgammon counts as a gammon, docs/rules.md 9) is played from gnubg's outcome
probabilities valued with that rule set's points: ``gnubg_nn.probabilities``
of every afterstate (the opponent on roll), the mover's expected points
``-(2 w - 1 + w_gammon - l_gammon + top (w_bg - l_bg))`` with ``top`` the
rule set's extra point for a backgammon (0 in Portes), the best move kept;
at N plies the moves within :data:`FILTER_MARGIN` points of the best at 0 ply
(at most :data:`FILTER_CANDIDATES`) are valued at N plies, as gnubg filters.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..movegen.generate import Afterstates
from ..rules.options import BACKGAMMON, RuleOptions, same_board_game
from ..rules.outcomes import outcome_classes, outcome_points, top_points
from .base import Bot, BotError

MAX_PLIES = 2
FILTER_CANDIDATES = 8
"""At N > 0 plies in a rule set scored otherwise than backgammon: the most moves valued at N plies."""
FILTER_MARGIN = 0.16
"""... and only those within this many points of the best at 0 ply (gnubg's default move filter)."""

_MISSING = ("bot {name!r} needs the gnubg-nn package (GNU Backgammon's neural net), which is not installed: "
            "pip install gnubg-nn   (or pip install -e '.[test]')")


def import_gnubg(name: str):
    """The ``gnubg_nn`` module, or :class:`BotError` saying how to install it."""
    try:
        import gnubg_nn
    except ImportError:
        raise BotError(_MISSING.format(name=name)) from None
    return gnubg_nn


def gnubg_boards(positions) -> np.ndarray:
    """(N, 2, 25) int: each position of a backgammon batch as the gnubg board ``[mover, opponent]``.

    ``mover`` is the side whose view the batch has (``turn``), on its points
    1..24 then its bar; ``opponent`` likewise on its own points. For an
    afterstate this is gnubg's board with the opponent on roll.
    """
    board = positions.board.astype(np.int64)
    out = np.zeros((board.shape[0], 2, 25), dtype=np.int64)
    out[:, 0, :24] = np.clip(board, 0, None)
    out[:, 0, 24] = positions.bar[:, 0]
    # The mover's column i is the opponent's point 24 - i (index 23 - i).
    out[:, 1, :24] = np.clip(-board, 0, None)[:, ::-1]
    out[:, 1, 24] = positions.bar[:, 1]
    return out


def dice_of(afterstates: Afterstates, index: int) -> tuple[int, Optional[int]]:
    """The dice position ``index`` was played with, as far as its rows show them.

    Returns ``(d1, d2)``, higher first, when the steps tell both (two
    different dice used, or two or more steps of one die: a double), ``(d, None)`` when no row uses
    more than one step (the other die could not be played, or the game ended
    at once), and ``(0, None)`` for a pass.
    """
    lo, hi = int(afterstates.offsets[index]), int(afterstates.offsets[index + 1])
    n_steps = afterstates.n_steps[lo:hi]
    best = int(np.argmax(n_steps))
    count = int(n_steps[best])
    if count == 0:
        return 0, None
    dice = afterstates.steps[lo + best, :count, 2].tolist()
    if count >= 2:
        return int(max(dice[:2])), int(min(dice[:2]))
    # One step in every row: the rows may still use different dice (only one of them playable each time
    # is impossible then, by the maximum-use rule, unless the game ended); take any of them.
    used = np.unique(afterstates.steps[lo:hi, 0, 2][n_steps > 0])
    if used.size >= 2:
        return int(used[-1]), int(used[0])
    return int(used[0]), None


class GnubgBot(Bot):
    """``gnubg:N``: the move ``gnubg_nn.bestmove`` chooses at ``plies`` = 0, 1 or 2 (backgammon), or the best by
    gnubg's probabilities valued with the rule set's points (portes; module docstring)."""

    variants = ("backgammon", "portes")

    def __init__(self, rules: RuleOptions, plies: int = 0):
        if not isinstance(plies, int) or not 0 <= plies <= MAX_PLIES:
            raise BotError(f"bot gnubg plays 0 to {MAX_PLIES} plies, not {plies!r}")
        self.plies = plies
        self.name = f"gnubg:{plies}"
        self.check_rules(rules)
        self.rules = rules
        self.gnubg = import_gnubg(self.name)

    def check_rules(self, rules: RuleOptions) -> None:
        if not same_board_game(rules, BACKGAMMON):
            raise BotError(f"bot {self.name!r} plays only backgammon's board game (backgammon, portes), "
                           f"not {rules.name!r}")

    @property
    def by_points(self) -> bool:
        """Whether moves are chosen by gnubg's probabilities and the rule set's points instead of ``bestmove``
        (a rule set that values a backgammon otherwise than backgammon: portes)."""
        return top_points(self.rules) != top_points(BACKGAMMON)

    def afterstate_equities(self, afterstates: Afterstates, rows: np.ndarray, plies: int) -> np.ndarray:
        """(R,) the expected points of afterstate ``rows`` for the side that moved, under :attr:`rules`' points:
        gnubg's probabilities at ``plies`` with the opponent on roll; a finished game its result."""
        rows = np.asarray(rows, dtype=np.int64)
        equities = np.empty(rows.size)
        over = afterstates.game_over[rows]
        if over.any():
            classes = outcome_classes(afterstates.result_kind[rows[over]], np.ones(int(over.sum()), dtype=bool))
            equities[over] = outcome_points(self.rules)[classes]
        extra = top_points(self.rules) - 2.0  # a backgammon's point above a gammon
        boards = gnubg_boards(afterstates.positions.take(rows[~over]))
        going_on = np.flatnonzero(~over)
        for index, board in zip(going_on.tolist(), boards.tolist()):
            win, win_gammon, win_backgammon, lose_gammon, lose_backgammon = self.gnubg.probabilities(board, plies)
            theirs = 2.0 * win - 1.0 + win_gammon - lose_gammon + extra * (win_backgammon - lose_backgammon)
            equities[index] = -theirs
        return equities

    def _choose_by_points(self, afterstates: Afterstates, index: int) -> int:
        lo, hi = int(afterstates.offsets[index]), int(afterstates.offsets[index + 1])
        rows = np.arange(lo, hi)
        equities = self.afterstate_equities(afterstates, rows, 0)
        if self.plies > 0:
            order = np.argsort(-equities, kind="stable")
            keep = order[equities[order] >= equities[order[0]] - FILTER_MARGIN][:FILTER_CANDIDATES]
            rows, equities = rows[keep], self.afterstate_equities(afterstates, rows[keep], self.plies)
        return int(rows[int(np.argmax(equities))])

    def _source_candidates(self, afterstates: Afterstates, index: int, boards: np.ndarray) -> list[list[list[int]]]:
        """gnubg boards ``[opponent, mover]`` the mover may have rolled in (usually exactly one).

        The mover's checkers come back exactly by undoing the steps of any row.
        The opponent's are those of a row that did not land on a point; where
        every row landed on a point, a blot of the opponent may have been hit
        there (then it is on the bar now), so both are tried.
        """
        lo, hi = int(afterstates.offsets[index]), int(afterstates.offsets[index + 1])
        mover = boards[lo, 0].tolist()
        for start, end, _ in afterstates.steps[lo, : int(afterstates.n_steps[lo])][::-1].tolist():
            if end > 0:
                mover[end - 1] -= 1
            mover[start - 1] += 1  # 25 = the bar = index 24
        landed = np.zeros((hi - lo, 25), dtype=bool)  # by the mover's point 1..24
        for k in range(hi - lo):
            ends = afterstates.steps[lo + k, : int(afterstates.n_steps[lo + k]), 1]
            landed[k, ends[ends > 0]] = True
        opponent = [0] * 25
        unknown = []
        for point in range(1, 25):
            free = np.flatnonzero(~landed[:, point])
            if free.size:
                opponent[24 - point] = int(boards[lo + int(free[0]), 1, 24 - point])
            else:
                unknown.append(24 - point)
        on_board_or_bar = 15 - int(afterstates.positions.off[lo, 1])
        candidates = []
        for hits in range(1 << len(unknown)):
            trial = list(opponent)
            for bit, slot in enumerate(unknown):
                trial[slot] = (hits >> bit) & 1
            trial[24] = on_board_or_bar - sum(trial[:24])
            if trial[24] >= 0:
                candidates.append([trial, list(mover)])
        return candidates

    def _source_and_dice(self, afterstates: Afterstates, index: int, boards: np.ndarray
                         ) -> tuple[list[list[int]], int, int]:
        """The gnubg board the mover rolled in and both dice, consistent with all rows of position ``index``."""
        d1, d2 = dice_of(afterstates, index)
        sources = self._source_candidates(afterstates, index, boards)
        if d2 is not None and len(sources) == 1:
            return sources[0], d1, d2
        # Check the candidates against gnubg's own legal moves: they must reach exactly our afterstates.
        # (Any second die with the same legal moves gives the same choice: gnubg evaluates the results.)
        lo, hi = int(afterstates.offsets[index]), int(afterstates.offsets[index + 1])
        keys = {self.gnubg.key_of_board([row[1], row[0]]) for row in boards[lo:hi].tolist()}
        dice = [(d1, d2)] if d2 is not None else [(d1, d1)] + [(d1, d) for d in range(6, 0, -1) if d != d1]
        for source in sources:
            for first, second in dice:
                if set(self.gnubg.moves(source, first, second)) == keys:
                    return source, first, second
        raise RuntimeError(f"{self.name}: cannot rebuild the position and dice gnubg needs for "
                           f"{self._describe(afterstates, index)}")

    def _describe(self, afterstates: Afterstates, index: int) -> str:
        row = int(afterstates.offsets[index])
        moves = ", ".join(repr(afterstates.move_text(r)) for r in range(row, int(afterstates.offsets[index + 1])))
        return f"position {index} of the batch (legal moves {moves}; first afterstate {afterstates.position(row)})"

    def choose(self, afterstates: Afterstates, rng: np.random.Generator) -> np.ndarray:
        offsets = afterstates.offsets
        chosen = offsets[:-1].copy()
        several = np.flatnonzero(np.diff(offsets) > 1)
        if not several.size:
            return chosen
        if self.by_points:
            for index in several.tolist():
                chosen[index] = self._choose_by_points(afterstates, index)
            return chosen
        boards = gnubg_boards(afterstates.positions)
        known = afterstates.inputs is not None and afterstates.dice is not None
        if known:  # the positions moved from and their dice came with the afterstates: nothing to rebuild
            sources = gnubg_boards(afterstates.inputs)[:, ::-1]  # [opponent, mover]: the mover is on roll
        for index in several.tolist():
            lo, hi = int(offsets[index]), int(offsets[index + 1])
            if known:
                source = sources[index].tolist()
                d1, d2 = (int(d) for d in afterstates.dice[index])
            else:
                source, d1, d2 = self._source_and_dice(afterstates, index, boards)
            move, key = self.gnubg.bestmove(source, d1, d2, n=self.plies, b=1)
            # gnubg's result is [mover, opponent]: the opponent is on roll next, like our afterstates.
            target = np.asarray(self.gnubg.boardfromkey(key), dtype=np.int64)
            matches = np.flatnonzero((boards[lo:hi] == target).all(axis=(1, 2)))
            if matches.size != 1:
                raise RuntimeError(
                    f"{self.name}: gnubg's move {move} with dice {d1}-{d2} reaches a position that matches "
                    f"{matches.size} of our {hi - lo} afterstates, for {self._describe(afterstates, index)}"
                )
            chosen[index] = lo + int(matches[0])
        return chosen
