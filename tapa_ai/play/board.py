"""The text board of ``tapa-ai play``, drawn from the human player's view.

The human's points are numbered as the human counts them: its 24-point top
right, 13 top left, 12 bottom left, 1 bottom right (its home board). Each
point is a column of up to five cells from the edge: the bottom checker of a
stack first, so a **pinned** checker is the first cell, written in lower case
(``o`` under ``X X``); a fifth cell shows the count when a stack is taller.
Beside the board: each side's borne-off count and pip count; below it the
dice, the cube, the score, the pins and the mothers in words.

The running games (fevga, narde: docs/rules.md 8) have no bar and both sides
travel the same way round, anticlockwise: the human from its 24-point (top
right) to its home board (bottom right), the bot from the human's 12-point
(its own 24, bottom left) to the human's 13-18 (its home, top left). The
board's frame names the four corners (``your start``, ``your home``, the
bot's start and home) and a line below says the paths in words.

Colour (ANSI) is optional: :func:`colour_wanted` decides it from the stream,
``NO_COLOR`` and ``--no-color``; the plain board carries the same information.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, TextIO

from ..rules.turns import decision_numbers, describe_stage
from ..rules.position import Position, other
from ..rules.reference import mother_is_pinned
from ..rules.rotations import Rotation

ROWS = 5
"""Cells per point drawn; a taller stack shows its count in the last cell."""
CELL = 3
TOP_POINTS = tuple(range(13, 25))
BOTTOM_POINTS = tuple(range(12, 0, -1))


def colour_wanted(stream: TextIO, no_color: bool = False) -> bool:
    """ANSI colour only on a terminal, and not when ``NO_COLOR`` is set (https://no-color.org) or TERM is dumb."""
    if no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


class Palette:
    """ANSI styles, or plain text when ``enabled`` is False."""

    SIDE = {"X": "1;33", "O": "1;36"}
    """Bold yellow X, bold cyan O."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def style(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled and text else text

    def side(self, side: str, text: str) -> str:
        return self.style(text, self.SIDE[side])

    def pinned(self, side: str, text: str) -> str:
        """A pinned checker: the side's colour, reversed."""
        return self.style(text, self.SIDE[side] + ";7")

    def dim(self, text: str) -> str:
        return self.style(text, "2")

    def bold(self, text: str) -> str:
        return self.style(text, "1")

    def error(self, text: str) -> str:
        return self.style(text, "31")

    def good(self, text: str) -> str:
        return self.style(text, "32")


@dataclass
class BoardInfo:
    """What the board shows besides the checkers."""

    human: str
    """The side the human plays; the board is drawn from its view."""
    bot_name: str = "bot"
    dice: Optional[tuple[int, int]] = None
    dice_left: Optional[list[int]] = None
    """Dice not yet played by a move being entered (None: all)."""
    cube_value: int = 1
    cube_owner: Optional[str] = None
    cube_in_use: bool = True
    crawford: bool = False
    score: tuple[int, int] = (0, 0)
    match_length: int = 0
    game_number: int = 1
    rotation: Optional[Rotation] = None
    """The rotation of a rotation's match (Tavli, Tabla ...; docs/rules.md 9): the footer names it, the game's
    variant and the next one."""


def _cells(stack: str, palette: Palette) -> list[str]:
    """The cells of one point from the edge, each :data:`CELL` characters wide before colour."""
    if not stack:
        return []
    pinned = len(set(stack)) == 2
    cells = []
    for index, checker in enumerate(stack):
        if index == 0 and pinned:
            cells.append(palette.pinned(checker, checker.lower().center(CELL)))
        else:
            cells.append(palette.side(checker, checker.center(CELL)))
    if len(cells) > ROWS:
        top = stack[-1]
        cells = cells[:ROWS - 1] + [palette.side(top, str(stack.count(top)).center(CELL))]
    return cells


def _half(position: Position, human: str, points: tuple[int, ...], palette: Palette, from_top: bool,
          bar_text: str) -> list[str]:
    """The five rows of one half of the board (top: rows from the top edge; bottom: from the middle down)."""
    columns = [_cells(position.stack(human, point), palette) for point in points]
    rows = []
    for row in range(ROWS):
        depth = row if from_top else ROWS - 1 - row
        cells = [column[depth] if depth < len(column) else
                 (palette.dim(" . ") if depth == 0 else "   ") for column in columns]
        middle = bar_text if row == (ROWS - 1 if from_top else 0) else "   "
        rows.append("|" + "".join(cells[:6]) + "|" + middle + "|" + "".join(cells[6:]) + "|")
    return rows


def _numbers(points: tuple[int, ...], palette: Palette) -> str:
    left = "".join(f"{p:^{CELL}}" for p in points[:6])
    right = "".join(f"{p:^{CELL}}" for p in points[6:])
    return palette.dim("  " + left + " " * (CELL + 2) + right)


def mother_status(position: Position, side: str, human: str) -> Optional[str]:
    """``side``'s mother in words when it matters: alone on its 24-point, or pinned there (else None)."""
    count = position.checkers_on_point(side, 24)
    if count == 0:
        return None
    whose = "your" if side == human else f"{side}'s"
    on = f"on your {24 if side == human else 1}-point"
    if mother_is_pinned(position, side):
        return f"{whose} mother is PINNED by {other(side)} ({on})"
    if count == 1:
        return f"{whose} mother stands alone {on}"
    return None


def pins_text(position: Position, human: str) -> list[str]:
    """``X pinned on your 20 under 2 O``, one entry per pin, in the human's numbering, highest first."""
    pins = []
    for point in range(24, 0, -1):
        stack = position.stack(human, point)
        if len(set(stack)) == 2:
            pinned, pinner = stack[0], stack[-1]
            pins.append(f"{pinned} on {point} under {len(stack) - 1} {pinner}")
    return pins


def _labelled(width: int, text: str, right: bool) -> str:
    """A stretch of frame ``width`` wide with ``text`` in it, near its left or right end: ``-- O's home ------``."""
    text = f" {text} "
    return ("-" * (width - len(text) - 2) + text + "--") if right else ("--" + text + "-" * (width - len(text) - 2))


def path_text(human: str) -> list[str]:
    """The running games' paths in words, from the human's side (docs/rules.md 8.1): two lines."""
    bot = other(human)
    return [f"Both sides move anticlockwise: you from your 24 (top right) to your home 1-6 (bottom right),",
            f"{bot} from your 12 (its 24, bottom left) to your 13-18 (its home, top left); "
            f"{bot}'s point p is your p+12 (p-12 above 12)."]


def render_board(position: Position, info: BoardInfo, palette: Optional[Palette] = None) -> str:
    """The board and its panel as text lines (no trailing newline)."""
    palette = palette or Palette(False)
    human = info.human
    bot = other(human)
    bar_top = f"{bot}{position.bar_count(bot)}" if position.bar_count(bot) else ""
    bar_bottom = f"{human}{position.bar_count(human)}" if position.bar_count(human) else ""
    has_bar = position.rules.hits
    width = 6 * CELL
    border = "+" + "-" * width + "+" + ("BAR" if has_bar else "---") + "+" + "-" * width + "+"
    top_border = bottom_border = border
    if position.rules.parallel:  # the corners where each side starts and bears off (no bar)
        top_border = ("+" + _labelled(width, f"{bot}'s home", False) + "+---+"
                      + _labelled(width, "your start", True) + "+")
        bottom_border = ("+" + _labelled(width, f"{bot}'s start", False) + "+---+"
                         + _labelled(width, "your home", True) + "+")
    top = _half(position, human, TOP_POINTS, palette, True, palette.side(bot, bar_top.center(CELL)) if bar_top
                else "   ")
    bottom = _half(position, human, BOTTOM_POINTS, palette, False,
                   palette.side(human, bar_bottom.center(CELL)) if bar_bottom else "   ")
    middle = "|" + " " * width + "|" + ("BAR" if has_bar else "   ") + "|" + " " * width + "|"

    def side_line(side: str) -> str:
        who = "you" if side == human else info.bot_name
        return (f"{palette.side(side, side)} {who}: off {position.off_count(side):>2}, "
                f"pips {position.pip_count(side):>3}")

    panel_top = [side_line(bot)] + [""] * ROWS
    panel_bottom = [""] * ROWS + [side_line(human)]
    board_lines = [" " + line for line in [top_border, *top, middle, *bottom, bottom_border]]
    panel = panel_top + [_middle_panel(info)] + panel_bottom
    lines = [_numbers(TOP_POINTS, palette)]
    lines += [f"{line}   {text}".rstrip() for line, text in zip(board_lines, panel)]
    lines.append(_numbers(BOTTOM_POINTS, palette))
    lines += _footer(position, info, palette)
    return "\n".join(lines)


def _middle_panel(info: BoardInfo) -> str:
    if not info.cube_in_use:
        return ""
    if info.crawford:
        return "cube: none (Crawford game)"
    if info.cube_owner is None:
        return f"cube: {info.cube_value} (centred)"
    owner = "you" if info.cube_owner == info.human else info.cube_owner
    return f"cube: {info.cube_value} (owned by {owner})"


def _footer(position: Position, info: BoardInfo, palette: Palette) -> list[str]:
    human = info.human
    lines = []
    x, o = info.score
    mine, theirs = (x, o) if human == "X" else (o, x)
    if info.rotation is not None:
        number, rotation = info.game_number, info.rotation
        score = (f"game {number} {rotation.variant(number)} (next {rotation.variant(number + 1)}), "
                 f"{rotation.match_name()} to {info.match_length}: you {mine}, {other(human)} {theirs}")
    elif info.match_length:
        score = f"game {info.game_number}, match to {info.match_length}: you {mine}, {other(human)} {theirs}"
    else:
        score = f"game {info.game_number}, money play: you {mine}, {other(human)} {theirs}"
    parts = [score]
    if info.dice is not None:
        roller = "you" if position.turn == human else other(human)
        dice = f"dice {info.dice[0]}-{info.dice[1]} ({roller})"
        if position.cascade is not None:  # a cascade's stage (docs/rules.md 10.2): no roll
            dice = f"cascade ({roller}): {describe_stage(position.cascade)}"
        if info.dice_left is not None and len(info.dice_left) < len(decision_numbers(position, info.dice)):
            dice += f", still to play: {' '.join(map(str, info.dice_left))}"
        parts.append(dice)
    lines.append(" " + " | ".join(parts))
    if position.rules.parallel:
        lines += [palette.dim(" " + line) for line in path_text(human)]
    pins = pins_text(position, human)
    if pins:
        lines.append(" pinned: " + "; ".join(pins))
    if position.rules.pins and position.rules.mother_points:
        mothers = [m for m in (mother_status(position, side, human) for side in (human, other(human))) if m]
        if mothers:
            lines.append(" " + "; ".join(mothers))
    return lines
