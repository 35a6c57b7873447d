"""The .mat text format (Jellyfish, FIBS, GNU Backgammon's ``export match mat``): reader and writer.

A file, as gnubg writes it (docs/match-files.md)::

    ; [Player 1 "alice"]
    ; [Player 2 "bob"]
    ; [Variation "Backgammon"]
    ; [Crawford "On"]

     3 point match

     Game 1
     alice : 0                      bob : 0
      1)                             61: 13/7 8/7
      2) 66: 13/7 13/7 8/2 8/2       43: 24/21 21/17*
     ...
     13) 52: 6/1 4/2                  Doubles => 2
     14)  Drops                       Wins 1 point

The left column is player 1 of the header (gnubg's player 0, here O), the
right column player 2 (X); each side writes its moves from its own side, 25 the
bar and 0 off (``bar`` and ``off`` are read too). The project's extension
(docs/match-files.md): ``; [Variation "Tapa"]`` names any variant of the family;
``; [Rotation "tabla"]`` makes the file a rotation's match, and each game names
its own variant by a ``; [Variation ...]`` line after its ``Game N``;
``; [Rules "{"mother_points":3}"]`` the options changed from the variant's
preset (JSON, outside a rotation); a Gul
Bara cascade's stages follow the roll in the same cell, each with its own dice
(``33: 24/21(4) 44: 21/17(4) 55: ...``).
"""

from __future__ import annotations

import re
from typing import Optional

from ..rules.options import variant_rules
from .model import (MatchFile, MatchFileError, MatchGame, add_opening, game_rules, own_move, rotation_of_text,
                    rotation_text, rules_of_text, rules_text, settle, variant_of_title, variant_title)

__all__ = ["read_mat", "write_mat"]

_HEADER = re.compile(r'^\s*;\s*\[\s*([^"\]]+?)\s*"(.*)"\s*\]\s*$')
_LENGTH = re.compile(r"^\s*(\d+)\s+points?\s+match\b", re.IGNORECASE)
_GAME = re.compile(r"^\s*Game\s+(\d+)\s*$", re.IGNORECASE)
_PLAYERS = re.compile(r"^\s*(.*?)\s+:\s+(\d+)\s{2,}(.*?)\s+:\s+(\d+)\s*$")
"""``name : 0    name : 0``, the colons spaced (a name may hold one: ``net:tapa``), the two two spaces apart."""
_PLAYERS_TIGHT = re.compile(r"^\s*(.*?)\s*:\s*(\d+)\s+(.*?)\s*:\s*(\d+)\s*$")
_NUMBERED = re.compile(r"^(\s*(\d+)\)\s?)(.*)$")
_DICE = re.compile(r"^([1-6])([1-6]):$")
_WINS = re.compile(r"^Wins\s+(\d+)\s+points?\b", re.IGNORECASE)
RIGHT_COLUMN = 20
"""A cell that begins at this column or later is the right column's (gnubg's begins at 33)."""


def read_mat(text: str, where: str) -> MatchFile:
    """The match of a .mat file's text; :class:`MatchFileError`, one line naming ``where``, the game and the move
    (line) number, for a line that cannot be read."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    headers: dict[str, str] = {}
    match = MatchFile([], 0)
    game: Optional[MatchGame] = None
    cube = 1
    line_number = 0
    for number, line in enumerate(text.split("\n"), start=1):
        here = f"{where}: line {number}"
        if not line.strip():
            continue
        header = _HEADER.match(line)
        if header:
            key, value = header.group(1).lower(), header.group(2)
            if game is not None and key == "variation":
                variant = variant_of_title(value)
                if variant is None:
                    raise MatchFileError(f"{here}: game {game.number}: variation {value!r} is not a variant this "
                                         "project plays")
                game.variant = variant
            else:
                headers[key] = value
            continue
        if line.lstrip().startswith(";") or line.lstrip().startswith("#"):
            continue  # a comment
        length = _LENGTH.match(line)
        if length and game is None:
            match.length = int(length.group(1))
            continue
        start = _GAME.match(line)
        if start:
            game = MatchGame(int(start.group(1)), "", {"X": "X", "O": "O"})
            match.games.append(game)
            cube, line_number = 1, 0
            continue
        if game is None:
            continue  # a line before the first game that is none of the above: a title, a note
        numbered = _NUMBERED.match(line)
        if numbered is None and not game.history and game.stated_points is None:
            players = _PLAYERS.match(line) or _PLAYERS_TIGHT.match(line)
            if players:
                left, left_score, right, right_score = players.groups()
                game.players = {"X": right, "O": left}
                game.score = (int(right_score), int(left_score))
                continue
        if numbered is not None:
            line_number = int(numbered.group(2))
            offset, rest = len(numbered.group(1)), numbered.group(3)
        else:
            offset, rest = 0, line
        cells = _cells(rest, offset, _cascades(game, headers))
        if numbered is None and not any(_WINS.match(cell) for _, cell in cells):
            raise MatchFileError(f"{here}: game {game.number}: cannot read {line.strip()[:60]!r} (a move line is "
                                 "'N) 31: 8/5 6/5   42: 24/20 13/11')")
        for side, cell in _sides(cells):
            cube = _read_cell(game, side, cell, cube, f"{where}: game {game.number}, move {line_number}", headers)
    _finish(match, headers, where)
    return match


def _cascades(game: MatchGame, headers: dict[str, str]) -> bool:
    """Whether the game's variant cascades its doubles (Gul Bara): then a roll inside a cell is a stage."""
    variant = game.variant or variant_of_title(headers.get("variation", "")) or "backgammon"
    if not game.variant and "rotation" in headers:
        variant = rotation_of_text(headers["rotation"], "the Rotation header").variant(game.number)
    return variant_rules(variant).to_dict().get("doubles") == "cascade"


_ACTIONS = ("doubles", "takes", "drops", "passes", "wins", "beavers", "resigns", "refuses", "accepts")


def _cells(rest: str, offset: int, cascades: bool) -> list[tuple[int, str]]:
    """The cells of a line's rest (after ``N)``) with the columns they start at: parts two spaces or more apart;
    a part that begins with no action continues the part before it; a roll or an action inside a part begins a
    cell of its own (gnubg leaves one space after a long left cell), but a roll in a game whose doubles cascade,
    which is the next stage of the cell's move."""
    cells: list[tuple[int, str]] = []
    for part in re.finditer(r"\S+(?: \S+)*", rest):
        for index, word in enumerate(re.finditer(r"\S+", part.group(0))):
            text = word.group(0)
            starts = text.lower() in _ACTIONS or (_DICE.match(text) and not (cascades and index > 0))
            if starts or not cells:
                cells.append((offset + part.start() + word.start(), text))
            else:
                cells[-1] = (cells[-1][0], f"{cells[-1][1]} {text}")
    return cells


def _sides(cells: list[tuple[int, str]]) -> list[tuple[str, str]]:
    if len(cells) == 1:
        column, text = cells[0]
        return [("X" if column >= RIGHT_COLUMN else "O", text)]
    return [(side, text) for side, (_, text) in zip("OX", cells[:2])] + [("X", text) for _, text in cells[2:]]


def _read_cell(game: MatchGame, side: str, cell: str, cube: int, here: str, headers: dict) -> int:
    """One cell's events into ``game``; the cube after them."""
    tokens = cell.split()
    word = tokens[0].lower()
    label = here.rsplit(", ", 1)[-1]
    if word == "doubles":
        value = int(tokens[-1]) if tokens[-1].isdigit() else 2 * cube
        game.history.append({"action": "double", "side": side, "cube": value})
        game.labels.append(label)
        return cube
    if word in ("takes", "accepts"):
        game.history.append({"action": "take", "side": side, "cube": 2 * cube})
        game.labels.append(label)
        return 2 * cube
    if word in ("drops", "passes", "refuses"):
        game.history.append({"action": "drop", "side": side})
        game.labels.append(label)
        return cube
    wins = _WINS.match(cell)
    if wins:
        game.stated_points = (side, int(wins.group(1)))
        return cube
    if word in ("beavers", "resigns"):
        raise MatchFileError(f"{here}: {tokens[0]!r}: beavers are not played here" if word == "beavers" else
                             f"{here}: a resignation is read from the 'Wins N points' line after it")
    moves: list[tuple[list[int], list[str]]] = []
    for token in tokens:
        dice = _DICE.match(token)
        if dice:
            moves.append(([int(dice.group(1)), int(dice.group(2))], []))
        elif moves:
            moves[-1][1].append(token)
        else:
            raise MatchFileError(f"{here}: cannot read {cell[:60]!r} (a move is '31: 8/5 6/5')")
    for dice, text in moves:
        game.history.append({"action": "move", "side": side, "dice": dice, "move": own_move(" ".join(text))})
        game.labels.append(label)
    return cube


def _finish(match: MatchFile, headers: dict[str, str], where: str) -> None:
    if not match.games:
        raise MatchFileError(f"{where}: no 'Game 1' line: not a .mat match file")
    variant = "backgammon"
    if "variation" in headers:
        named = variant_of_title(headers["variation"])
        if named is None:
            raise MatchFileError(f"{where}: variation {headers['variation']!r} is not a variant this project plays "
                                 "(backgammon, tapa, plakoto, portes, fevga, narde, gul bara)")
        variant = named
    match.variant = variant
    if "rotation" in headers:
        match.rotation = rotation_of_text(headers["rotation"], f"{where}: the Rotation header")
        match.variant = match.rotation.variant(1)
    elif "rules" in headers:
        match.rules = rules_of_text(headers["rules"], variant, f"{where}: the Rules header")
    crawford = headers.get("crawford", "on").strip().lower() not in ("off", "false", "no")
    jacoby = headers.get("jacoby", "off").strip().lower() in ("on", "true", "yes")
    players = {"O": headers.get("player 1", ""), "X": headers.get("player 2", "")}
    match.players = {side: name for side, name in players.items() if name}
    reached = False
    for game in match.games:
        if not game.variant:
            game.variant = match.rotation.variant(game.number) if match.rotation is not None else variant
        rules = game_rules(match, game)
        game.jacoby = jacoby and not match.length
        if match.rotation is None and game.variant != variant:
            raise MatchFileError(f"{where}: game {game.number} is {game.variant}, the file {variant}: a file of "
                                 "several variants is a rotation's match (a Rotation header)")
        if match.length and rules.crawford and crawford and not reached and max(game.score) == match.length - 1:
            game.crawford = reached = True
        if not game.history:
            raise MatchFileError(f"{where}: game {game.number}: no moves")
        add_opening(game, rules)
        settle(match, game, where)


# -- the writer ---------------------------------------------------------------------------------------------
def _file_move(move: str) -> str:
    """The project's move text as gnubg writes it: the bar 25, off 0."""
    return " ".join(token.replace("bar/", "25/").replace("/off", "/0") for token in move.split())


def _stages(game: MatchGame) -> list[tuple[str, str]]:
    """The cells, a cascade's stages joined to their roll: a move by the side that just moved, with no roll
    between, is a stage (docs/rules.md 10.2)."""
    cells: list[tuple[str, str]] = []
    last_side = None
    for event in game.history:
        action = event["action"]
        if action == "opening":
            continue
        side = event["side"]
        if action == "move":
            text = f"{event['dice'][0]}{event['dice'][1]}: {_file_move(event['move'])}".rstrip()
            if last_side == side and cells:
                cells[-1] = (side, f"{cells[-1][1]} {text}")
            else:
                cells.append((side, text))
            last_side = side
            continue
        last_side = None
        cells.append((side, {"double": f" Doubles => {event.get('cube', 2)}", "take": " Takes",
                             "drop": " Drops"}[action]))
    return cells


def write_mat(match: MatchFile) -> str:
    """The .mat text of ``match`` (module docstring): gnubg's layout, the extension's headers where the games are
    not backgammon."""
    first = match.games[0] if match.games else None
    names = first.players if first is not None else {"X": "X", "O": "O"}
    lines = [f'; [Site "tapa-ai"]', f'; [Player 1 "{_name(names["O"])}"]', f'; [Player 2 "{_name(names["X"])}"]',
             f'; [Variation "{variant_title(match.variant)}"]']
    rules = match.rules or variant_rules(match.variant)
    if match.rotation is not None:
        lines.append(f'; [Rotation "{rotation_text(match.rotation)}"]')
    elif rules_text(rules):
        lines.append(f'; [Rules "{rules_text(rules)}"]')
    if match.rotation is None and match.length:
        lines.append(f'; [Crawford "{"On" if rules.crawford else "Off"}"]')
    lines += ["", f" {match.length} point match", ""]
    for game in match.games:
        lines.append(f" Game {game.number}")
        if match.rotation is not None:
            lines.append(f'; [Variation "{variant_title(game.variant)}"]')
        x_score, o_score = game.score
        left = f" {_name(game.players['O'])} : {o_score}"
        lines.append(left + " " * max(32 - len(left), 2) + f"{_name(game.players['X'])} : {x_score}")
        row: list[Optional[str]] = [None, None]
        rows: list[list[Optional[str]]] = []
        for side, text in _stages(game):
            column = 0 if side == "O" else 1
            if row[column] is not None or (column == 0 and row[1] is not None):
                rows.append(row)
                row = [None, None]
            row[column] = text
        if row != [None, None]:
            rows.append(row)
        wins = None
        if game.stated_points is not None and game.stated_points[0] is not None:
            side, points = game.stated_points
            wins = (0 if side == "O" else 1, f" Wins {points} point{'s' if points != 1 else ''}")
        for index, (left, right) in enumerate(rows, start=1):
            if wins is not None and index == len(rows) and wins[0] == 1 and right is None:
                right, wins = wins[1], None
            lines.append((f"{index:3d}) " + _pad(left or "") + (right or "")).rstrip())
        if wins is not None:
            lines.append(("     " + (_pad(wins[1]) if wins[0] == 0 else _pad("") + wins[1])).rstrip())
        lines.append("")
    return "\n".join(lines) + "\n"


def _name(name: str) -> str:
    """A player's name on one line, with no run of spaces (which parts the players' line)."""
    return " ".join(str(name).split()) or "?"


def _pad(text: str) -> str:
    return text + " " * max(28 - len(text), 2)
