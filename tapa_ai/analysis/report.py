"""The readable report of an :class:`~tapa_ai.analysis.analyse.Analysis`: one line a move, then the players."""

from __future__ import annotations

from typing import Optional

MARKS = {"": "", "error": "?", "blunder": "??"}
KIND_WORDS = {"single": "a single game", "gammon": "a gammon", "backgammon": "a backgammon", "mother": "by pinning the mother"}


def _plies(plies: int) -> str:
    return f"{plies} ply" if plies == 1 else f"{plies} plies"


def _game_head(game, rotation: str = "") -> str:
    rec = game.game
    players = f"X {rec.players['X']}, O {rec.players['O']}"
    setting = f" (match to {rec.match_length}, score X {rec.score[0]} O {rec.score[1]})" if rec.match_length else ""
    if rotation:  # the name of a rotation's match
        setting = f", {rec.rules.name} ({rotation} to {rec.match_length}, score X {rec.score[0]} O {rec.score[1]})"
    if rec.result is None:
        end = "not finished"
    elif rec.result.winner is None:
        end = "a draw (both mothers pinned)"
    else:
        points = rec.result.points * rec.cube
        how = {"drop": ", the double was passed", "resigned": ", by resignation"}.get(rec.ending, "")
        end = (f"{rec.result.winner} won {KIND_WORDS.get(rec.result.kind, rec.result.kind)}{how} "
               f"({points} point{'s' if points != 1 else ''}{f', cube {rec.cube}' if rec.cube > 1 else ''})")
    return f"Game {rec.number}{setting}: {players}. {end}."


CUBE_WORDS = {"double": "double", "no_double": "no double", "take": "take", "drop": "pass"}


def _cube_line(entry) -> str:
    words = {"double": f"doubles to {2 * entry.cube}", "take": f"takes (the cube at {2 * entry.cube})",
             "drop": "passes"}[entry.action]
    if entry.rating is None:
        return f"{entry.index:4d}  {entry.side}     {words} (not rated: the bot's rules allow no double here)"
    return _cube_row(entry.index, entry.side, words, entry.rating)


def _cube_row(index: int, side: str, words: str, rating) -> str:
    """A rated cube decision in the moves' columns: what was done, the bot's choice, the error, the mark."""
    best = "=" if rating.best == rating.action else CUBE_WORDS[rating.best]
    return f"{index:4d}  {side}     {words:<24} {best:<24} {rating.error_mp:>8.1f} {'':>8}  {MARKS[rating.mark]}".rstrip()


def _no_double_line(entry) -> Optional[str]:
    """The roll's decision not to double, shown where doubling was right or the error is marked."""
    rating = entry.cube
    if rating is None or (rating.best == "no_double" and not rating.mark):
        return None
    return _cube_row(entry.index, entry.side, "no double", rating)


def _move_line(entry) -> str:
    dice = f"{entry.dice[0]}-{entry.dice[1]}"
    played = entry.move or "(no move)"
    mwc = entry.units == "mwc"
    if entry.forced:
        best, error = "(forced)", "-"
    else:
        best = "=" if entry.best == entry.move else (entry.best or "(no move)")
        error = f"{100 * entry.error:.2f}%" if mwc else f"{entry.error_mp:.1f}"
    mark = MARKS[entry.mark]
    luck = _percent(entry.luck) if mwc else _signed(entry.luck)
    return (f"{entry.index:4d}  {entry.side}  {dice}  {played:<24} {best:<24} {error:>8} {luck}"
            f"  {mark}").rstrip()


def _percent(value: float) -> str:
    return f"{round(100 * value, 2) + 0.0:+7.2f}%"  # no -0.00


def _signed(value: float) -> str:
    return f"{round(value, 3) + 0.0:+8.3f}"  # no -0.000


def text_report(analysis, name: Optional[str] = None) -> str:
    """The report ``tapa-ai analyse`` prints."""
    if analysis.units == "mwc":
        return rotation_report(analysis, name)
    record = analysis.record
    where = f"{name}: " if name else ""
    lines = [f"{where}{record.source} ({record.rules.name})",
             f"analysed by {analysis.bot} at {_plies(analysis.plies)}; moves by cubeless equities: the error in "
             "millipoints (mp) for the mover, the luck in points for the roller"]
    for game in analysis.games:
        lines += ["", _game_head(game),
                  f"{'#':>4}  side dice {'played':<24} {'best':<24} {'error mp':>8} {'luck':>8}"]
        for entry in game.entries:
            if entry.action != "move":
                lines.append(_cube_line(entry))
                continue
            no_double = _no_double_line(entry)
            lines += [no_double] if no_double else []
            lines.append(_move_line(entry))
    cube = any(totals.cube_decisions for totals in analysis.players.values())
    lines += ["", f"{'player':<28} {'moves':>5} {'rated':>5} {'error mp':>9} {'mp/move':>8} {'errors':>6} "
                  f"{'blunders':>8} {'luck':>8}" + (f"  {'cube':>4} {'cube mp':>8} {'?':>3} {'??':>3}" if cube else "")]
    for totals in analysis.players.values():
        lines.append(f"{totals.player[:28]:<28} {totals.moves:5d} {totals.rated:5d} {1000 * totals.error:9.1f} "
                     f"{totals.error_rate_mp:8.1f} {totals.errors:6d} {totals.blunders:8d} {_signed(totals.luck)}" +
                     (f"  {totals.cube_decisions:4d} {1000 * totals.cube_error:8.1f} {totals.cube_errors:3d} "
                      f"{totals.cube_blunders:3d}" if cube else ""))
    lines += ["", f"error: the best move's equity minus the played move's, both at {_plies(analysis.plies)}; "
                  "= the move played is the best; forced moves are not rated.",
              f"? an error (over {analysis.error_mp:g} mp), ?? a blunder (over {analysis.blunder_mp:g} mp); "
              "mp/move: the error per rated move.",
              "luck: the best 0-ply value of the roll that came minus the mean over the 21 rolls (docs/analysis.md)."]
    if cube:
        lines.append("cube: the decisions rated (doubles, takes, passes, rolls without a double where one was allowed; "
                     "a no double is shown where doubling was right or it is marked), by cubeful equities normalized "
                     "to a cube of 1; cube mp: their error in all.")
    return "\n".join(lines)


def rotation_report(analysis, name: Optional[str] = None) -> str:
    """The report of a rotation's match (every move by the match-winning chance at its game's score)."""

    record = analysis.record
    rotation = record.rotation
    match_name = rotation.match_name()
    where = f"{name}: " if name else ""
    label = match_name[:-len(" match")].capitalize()  # Tavli, Tabla, Rotation
    lines = [f"{where}{record.source} ({label}: {', '.join(rotation.variants)} in turn)",
             f"analysed by {analysis.bot} at {_plies(analysis.plies)}; moves by the match-winning chance (MWC) at "
             "each game's score: the error in percentage points of MWC for the mover, the luck in MWC for the roller"]
    for game in analysis.games:
        lines += ["", _game_head(game, match_name),
                  f"{'#':>4}  side dice {'played':<24} {'best':<24} {'error':>8} {'luck':>8}"]
        lines += [_move_line(entry) for entry in game.entries]
    lines += ["", f"{'player':<28} {'moves':>5} {'rated':>5} {'MWC lost':>9} {'per move':>8} {'errors':>6} "
                  f"{'blunders':>8} {'luck':>8}"]
    for totals in analysis.players.values():
        rate = totals.error / totals.rated if totals.rated else 0.0
        lines.append(f"{totals.player[:28]:<28} {totals.moves:5d} {totals.rated:5d} {100 * totals.error:8.2f}% "
                     f"{100 * rate:7.2f}% {totals.errors:6d} {totals.blunders:8d} {_percent(totals.luck)}")
    lines += ["", f"error: the best move's match-winning chance minus the played move's, both at "
                  f"{_plies(analysis.plies)}, at the score of the game (the {match_name} equity table); = the move "
                  "played is the best; forced moves are not rated. MWC lost: the errors' sum over the match.",
              f"? an error (over {analysis.error_mp:g} mp), ?? a blunder (over {analysis.blunder_mp:g} mp) of the "
              "error normalized to points: divided by half the spread between winning and losing a single game at that "
              "score.",
              "luck: the roll's best 0-ply value minus the mean over the 21 rolls, in MWC at the score "
              "(docs/analysis.md)."]
    return "\n".join(lines)
