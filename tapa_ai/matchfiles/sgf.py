"""GNU Backgammon's SGF (``GM[6]``): reader and writer.

A match is one game tree a game (docs/match-files.md)::

    (;FF[4]GM[6]CA[UTF-8]AP[GNU Backgammon:1.07.001]MI[length:3][game:0][ws:0][bs:0]PW[gnubg]PB[root]
     RU[Crawford]RE[B+1]
    ;B[61lrqr]A[...]
    ;W[66mgmghbhb]
    ...
    ;B[double];W[drop])

``B`` is gnubg's player 1 (X here), ``W`` player 0 (O). A move is its dice and a
letter pair a checker step: for ``B`` the letter ``x`` minus the point less one,
for ``W`` ``a`` plus it (so both name the same place on the board), ``y`` the
bar, ``z`` off; ``;W[53]`` is a roll with no move. ``MI`` holds the match length,
the game's index from 0 and the scores (``ws`` White's, ``bs`` Black's); ``RE``
the result with the cube (``B+2``, ``W+1R`` resigned). Analysis (``A``, ``DA``,
``MR``, ``GS``, ``LU``), comments (``C``) and variations (the main line is read)
are skipped. The writer writes a rated move's candidates as gnubg's ``A`` (in
backgammon games, which gnubg opens) and the analysis in words as ``C``. The
project's extension: ``RU[...]``, gnubg's rules words joined by ``:``, names a
variant other than backgammon by ``Variant=tapa``, a rotation's match by
``Rotation=tabla`` (each game tree names its own variant) and options changed
from the variant's preset by ``Rules={"mother_points":3}`` (last, JSON);
a Gul Bara cascade's stages are nodes of the same player one after the other,
each with its stage's dice.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from .. import __version__
from ..quoting import quoted
from .model import (MatchFile, MatchFileError, MatchGame, add_opening, file_steps, game_rules, rotation_of_text,
                    rotation_text, rules_of_text, rules_text, settle, variant_of_title)

__all__ = ["read_sgf", "write_sgf", "parse_sgf"]

Node = list[tuple[str, list[str]]]


def parse_sgf(text: str, where: str) -> list[list[Node]]:
    """The game trees of SGF text, each its main line of nodes, each node its (property, values)."""
    trees: list[list[Node]] = []
    i, n = 0, len(text)
    depth = 0
    current: Optional[list[Node]] = None
    skip_depth: Optional[int] = None  # inside a variation other than the main line
    seen_child: list[bool] = []
    while i < n:
        char = text[i]
        if char == "(":
            depth += 1
            if depth == 1:
                current = []
                trees.append(current)
                seen_child = [False]
            else:
                if skip_depth is None and seen_child[-1]:
                    skip_depth = depth
                seen_child[-1] = True
                seen_child.append(False)
            i += 1
        elif char == ")":
            if depth == 0:
                raise MatchFileError(f"{where}: an SGF ')' with no '(' (at character {i})")
            if skip_depth == depth:
                skip_depth = None
            depth -= 1
            seen_child.pop() if seen_child else None
            i += 1
        elif char == ";":
            if depth == 0:
                raise MatchFileError(f"{where}: an SGF node outside a game tree (at character {i})")
            if skip_depth is None:
                current.append([])
            i += 1
        elif char.isalpha():
            start = i
            while i < n and text[i].isalpha():
                i += 1
            ident = text[start:i]
            values = []
            while True:
                while i < n and text[i] in " \t\r\n":
                    i += 1
                if i >= n or text[i] != "[":
                    break
                i += 1
                value = []
                while i < n and text[i] != "]":
                    if text[i] == "\\" and i + 1 < n:
                        i += 1
                    value.append(text[i])
                    i += 1
                if i >= n:
                    raise MatchFileError(f"{where}: a property value {ident}[... never closed (the file ends: "
                                         "truncated?)")
                i += 1
                values.append("".join(value))
            if not values:
                raise MatchFileError(f"{where}: SGF property {ident[:20]!r} has no value (at character {start})")
            if skip_depth is None and current:
                current[-1].append((ident, values))
        elif char in " \t\r\n":
            i += 1
        else:
            raise MatchFileError(f"{where}: unexpected {char!r} in SGF at character {i}")
    if depth:
        raise MatchFileError(f"{where}: the SGF ends inside a game tree (truncated?)")
    return trees


def _props(node: Node) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for ident, values in node:
        found.setdefault(ident, []).extend(values)
    return found


def _point(letter: str, side: str) -> str:
    if letter == "y":
        return "bar"
    if letter == "z":
        return "off"
    index = ord(letter) - ord("a") if side == "O" else ord("x") - ord(letter)
    if not "a" <= letter <= "x":
        raise ValueError(letter)
    return str(index + 1)


def _letter(point: int, side: str, is_start: bool) -> str:
    if point == 25:
        return "y"
    if point == 0:
        return "z"
    return chr(ord("a") + point - 1) if side == "O" else chr(ord("x") - point + 1)


def read_sgf(text: str, where: str) -> MatchFile:
    """The match of GNU Backgammon SGF text; :class:`MatchFileError`, one line naming ``where``, the game and the
    move, for what cannot be read."""
    text = text.lstrip("\ufeff")
    trees = parse_sgf(text, where)
    if not trees:
        raise MatchFileError(f"{where}: no SGF game tree '(;GM[6]...)': not an SGF file")
    match = MatchFile([], 0)
    variants = set()
    for index, nodes in enumerate(trees):
        root = _props(nodes[0]) if nodes else {}
        if root.get("GM", ["6"])[0].strip() != "6":
            raise MatchFileError(f"{where}: game tree {index + 1} is GM[{quoted(root['GM'][0], 20)}], not a backgammon "
                                 "game (GM[6])")
        info = {}
        for item in root.get("MI", []):
            key, _, value = item.partition(":")
            info[key.strip()] = value.strip()
        number = int(info["game"]) + 1 if info.get("game", "").isdigit() else index + 1
        game = MatchGame(number, "backgammon", {"X": root.get("PB", ["X"])[0] or "X",
                                                "O": root.get("PW", ["O"])[0] or "O"})
        here = f"{where}: game {number}"
        try:
            game.score = (int(info.get("bs", 0)), int(info.get("ws", 0)))
            if info.get("length"):
                match.length = int(info["length"])
        except ValueError:
            raise MatchFileError(f"{here}: MI{root.get('MI')!r}: the length and scores are numbers") from None
        words = ":".join(root.get("RU", [])).split(":")
        for position, word in enumerate(words):
            word = word.strip()
            if word == "CrawfordGame":
                game.crawford = True
            elif word == "Jacoby":
                game.jacoby = True
            elif word.startswith("Variant="):
                variant = variant_of_title(word[len("Variant="):])
                if variant is None:
                    raise MatchFileError(f"{here}: RU[{quoted(word, 40)}] names no variant this project plays")
                game.variant = variant
            elif word.startswith("Rotation="):
                text_value = ":".join(words[position:])[len("Rotation="):]
                match.rotation = rotation_of_text(text_value, f"{here}: RU[Rotation=...]")
                break
            elif word.startswith("Rules="):
                text_value = ":".join(words[position:])[len("Rules="):]
                rules = rules_of_text(text_value, game.variant, f"{here}: RU[Rules=...]")
                if match.rules is not None and rules != match.rules:
                    raise MatchFileError(f"{here}: RU[Rules=...] differs from the first game's: a match is played "
                                         "by one rule set")
                match.rules = rules
                break
        if any(key in root for key in ("AB", "AW", "AE")) or any(key in _props(node) for node in nodes[1:]
                                                                 for key in ("AB", "AW", "AE")):
            raise MatchFileError(f"{here}: begins from a set-up position (AB, AW, AE): only games from the start "
                                 "are read")
        _result(game, root, here)
        _moves(game, nodes[1:], here)
        variants.add(game.variant)
        match.games.append(game)
    if match.rotation is None and len(variants) > 1:
        raise MatchFileError(f"{where}: games of {sorted(variants)}: a file of several variants is a rotation's "
                             "match (RU[Rotation=...])")
    match.variant = match.rotation.variant(1) if match.rotation is not None else match.games[0].variant
    match.players = dict(match.games[0].players)
    for game in match.games:
        if match.rotation is not None and game.variant != match.rotation.variant(game.number):
            raise MatchFileError(f"{where}: game {game.number}: RU names {game.variant}, but game {game.number} of "
                                 f"the rotation {', '.join(match.rotation.variants)} is "
                                 f"{match.rotation.variant(game.number)}")
        rules = game_rules(match, game)
        add_opening(game, rules)
        settle(match, game, where)
    return match


def _result(game: MatchGame, root: dict[str, list[str]], here: str) -> None:
    if "RE" not in root:
        return  # a game not finished, or a file without the result: the moves say it
    value = root["RE"][0].strip()
    found = re.match(r"^([BW])\+(\d+)(R?)", value)
    if found:
        game.stated_points = ("X" if found.group(1) == "B" else "O", int(found.group(2)))
        game.resigned = bool(found.group(3))
    elif value not in ("", "?", "0", "Draw", "Void"):
        raise MatchFileError(f"{here}: RE[{quoted(value, 20)}] is not a result (B+1, W+2R)")


def _moves(game: MatchGame, nodes: list[Node], here: str) -> None:
    count = 0
    for node in nodes:
        props = _props(node)
        for color in ("B", "W"):
            if color not in props:
                continue
            side = "X" if color == "B" else "O"
            value = props[color][0].strip()
            count += 1
            label = f"move {count}"
            if value in ("double", "take", "drop"):
                event: dict[str, Any] = {"action": value, "side": side}
                if value != "drop":
                    cube = 1
                    for old in game.history:
                        if old["action"] == "take":
                            cube = old["cube"]
                    event["cube"] = 2 * cube
                game.history.append(event)
            elif value in ("resign", "beaver"):
                if value == "beaver":
                    raise MatchFileError(f"{here}, {label}: a beaver: beavers are not played here")
                continue
            else:
                found = re.match(r"^([1-6])([1-6])([a-z]*)$", value)
                if found is None or len(found.group(3)) % 2:
                    raise MatchFileError(f"{here}, {label}: {color}[{quoted(value, 20)}] is not a move (dice, then a "
                                         "letter pair a checker step: B[61lrqr])")
                letters = found.group(3)
                try:
                    steps = [f"{_point(letters[i], side)}/{_point(letters[i + 1], side)}"
                             for i in range(0, len(letters), 2)]
                except ValueError:
                    raise MatchFileError(f"{here}, {label}: {color}[{quoted(value, 20)}]: a point letter is a to x, y the "
                                         "bar, z off") from None
                game.history.append({"action": "move", "side": side,
                                     "dice": [int(found.group(1)), int(found.group(2))], "move": " ".join(steps)})
            game.labels.append(label)
    if not game.history:
        raise MatchFileError(f"{here}: no moves")


def write_sgf(match: MatchFile) -> str:
    """The SGF text of ``match`` (module docstring): one game tree a game."""
    trees = []
    for index, game in enumerate(match.games):
        rules = game_rules(match, game)
        words = []
        if match.length and rules.crawford:
            words.append("Crawford")
            if game.crawford:
                words.append("CrawfordGame")
        if game.variant != "backgammon" or match.rotation is not None:
            words.append(f"Variant={game.variant}")
        if match.rotation is not None:
            words.append(f"Rotation={rotation_text(match.rotation)}")
        elif match.rules is not None and rules_text(match.rules):
            words.append(f"Rules={rules_text(match.rules)}")
        x_score, o_score = game.score
        root = (f"(;FF[4]GM[6]CA[UTF-8]AP[tapa-ai:{__version__}]MI[length:{match.length}][game:{game.number - 1}]"
                f"[ws:{o_score}][bs:{x_score}]PW[{_text(game.players['O'])}]PB[{_text(game.players['X'])}]")
        if words:
            root += f"RU[{_text(':'.join(words))}]"
        if game.stated_points is not None and game.stated_points[0] is not None:
            side, points = game.stated_points
            root += f"RE[{'B' if side == 'X' else 'W'}+{points}{'R' if game.resigned else ''}]"
        elif game.result is not None and game.result.get("winner") is None:
            root += "RE[0]"
        lines = [root]
        for number, event in enumerate(game.history):
            action = event["action"]
            if action == "opening":
                continue
            color = "B" if event["side"] == "X" else "W"
            if action == "move":
                letters = "".join(_letter(start, event["side"], True) + _letter(end, event["side"], False)
                                  for start, end in file_steps(event["move"]))
                node = f";{color}[{event['dice'][0]}{event['dice'][1]}{letters}]"
            else:
                node = f";{color}[{action}]"
            extra = game.analysis[number] if number < len(game.analysis) else None
            if extra:
                node += _analysis(extra, event["side"], game.variant == "backgammon" and match.rotation is None)
            lines.append(node)
        trees.append("\n".join(lines) + ")")
    return "\n".join(trees) + "\n"


def _analysis(extra: dict[str, Any], side: str, standard: bool) -> str:
    """A move's analysis as SGF properties: GNU Backgammon's ``A[played][move E ver 3 chances equity depth]...``
    (its five cubeless chances, the mover's; the equity in points; the depth, a cubeless evaluation: no ``C``)
    and ``DA[E ver 3 depthC 1 0.000000 1 chances cubeless no-double chances cubeless double-take]`` (the
    doubler's cubeful equities: money per cube of 1, a match in match-winning chances), which gnubg shows as
    its own, where the game is backgammon's; and the comment ``C[...]``."""
    text = ""
    if extra.get("candidates") and standard:
        values = [str(extra["played"])]
        for move, chances, equity in extra["candidates"]:
            letters = "".join(_letter(start, side, True) + _letter(end, side, False) for start, end in file_steps(move))
            numbers = " ".join(f"{value:.6f}" for value in (*chances[:5], equity))
            values.append(f"{letters} E ver 3 {numbers} {int(extra.get('plies', 0))} 0 1 0.000000 0")
        text += "A" + "".join(f"[{value}]" for value in values)
    cube = extra.get("cube")
    if cube and standard:
        chances = " ".join(f"{value:.6f}" for value in (*cube["chances"][:5], cube["cubeless"]))
        text += (f"DA[E ver 3 {int(cube.get('plies', 0))}C 1 0.000000 1 {chances} {cube['no_double']:.6f} "
                 f"{chances} {cube['double_take']:.6f}]")
    if extra.get("comment"):
        text += f"C[{_text(extra['comment'])}]"
    return text


def _text(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]")
