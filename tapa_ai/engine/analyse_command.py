"""The engine's ``analyse`` command: a game record rated by the engine's model (docs/protocol.md, ``analyse``).

``{"cmd": "analyse", "record": {...}}`` takes a record as ``tapa-ai analyse``
reads it from a file (a ``tapa-ai/games`` record, a ``tapa-ai/play`` save, a
game or match snapshot; :mod:`tapa_ai.analysis.records`) and answers the
analysis as ``tapa-ai analyse --json`` writes it. Of a rotation's match (a
Tavli or Tabla match) it rates the games the engine's model plays (or the one
game ``game`` names), each move by the match-winning chance at its score. Options: ``plies`` (0 to
:data:`~tapa_ai.analysis.analyzer.MAX_REQUEST_PLIES`, default the model's),
``game`` (one game's number), ``error_mp`` and ``blunder_mp`` (the marks'
thresholds) and ``positions`` (false: leave out each move's position).

Hostile input is bounded: the request's size (the protocol's
:data:`~tapa_ai.engine.protocol.MAX_REQUEST_BYTES`), at most
:data:`MAX_ANALYSE_MOVES` moves, every move replayed through the rules before
anything is evaluated, and the server's time limit per command.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..analysis.analyse import DEFAULT_BLUNDER_MP, DEFAULT_ERROR_MP, AnalysisError, analyse_record
from ..analysis.records import RecordError, record_from_json
from ..analysis.analyzer import MAX_REQUEST_PLIES
from ..rules.options import same_board_game

MAX_ANALYSE_MOVES = 2000
"""The most moves one ``analyse`` request may rate (a long game has about 100)."""


def answer_analyse(analyzer, request: dict, plies: int) -> dict[str, Any]:
    """The analysis of ``request["record"]`` by ``analyzer``'s bot at ``plies``; AnalysisError for bad input."""
    # Keys, types and ranges: the request's schema (tapa_ai/schemas/protocol.json); the record's content here.
    try:
        record = record_from_json(request["record"], "record")
    except RecordError as error:
        raise AnalysisError(str(error)) from None
    game = request.get("game")
    if game is not None:
        chosen = tuple(g for g in record.games if g.number == game)
        if not chosen:
            raise AnalysisError(f"game {game}: the record has no game of that number")
        record = replace(record, games=chosen, rules=chosen[0].rules,
                         source=f"{record.source}: game {game} of {len(record.games)}")
    if record.rotation is not None and len({g.rules for g in record.games}) > 1:
        # A rotation's match (Tavli, Tabla): this engine's model rates the games of its own board game, each move
        # by the match-winning chance at its game's score (the whole match: tapa-ai analyse FILE).
        mine = tuple(g for g in record.games if same_board_game(g.rules, analyzer.rules))
        if not mine:
            raise AnalysisError(f"record: a {record.rotation.match_name()} of {', '.join(record.rotation.variants)}, "
                                f"and this engine's model ({analyzer.name}) plays none of its games; analyse the "
                                "whole match with tapa-ai analyse FILE")
        record = replace(record, games=mine, rules=mine[0].rules,
                         source=f"{record.source}: its {mine[0].rules.name} games")
    analyzer = analyzer.playing(record.rules)  # a portes record and the backgammon model: Portes' points
    if record.rules != analyzer.rules:
        from ..net.shipped import model_variant

        raise AnalysisError(f"record: a {record.rules.name} game, and this engine's model ({analyzer.name}) plays "
                            f"{analyzer.rules.name}; start a server with a {record.rules.name} model (e.g. --bot "
                            f"net:{model_variant(record.rules.name)}@1ply) to analyse it"
                            if record.rules.name != analyzer.rules.name else
                            f"record.rules: other rule options than those this engine's model ({analyzer.name}) "
                            "was trained for")
    moves = sum(len(g.moves) for g in record.games)
    if moves > MAX_ANALYSE_MOVES:
        raise AnalysisError(f"record: {moves} moves, more than the {MAX_ANALYSE_MOVES} one request may analyse; "
                            "send one game at a time ('game')")
    thresholds = {}
    for key, default in (("error_mp", DEFAULT_ERROR_MP), ("blunder_mp", DEFAULT_BLUNDER_MP)):
        thresholds[key] = float(request.get(key, default))
    positions = request.get("positions", True)
    if not 0 <= plies <= MAX_REQUEST_PLIES:  # pragma: no cover - the protocol checks plies first
        raise AnalysisError(f"plies must be 0..{MAX_REQUEST_PLIES}")
    with analyzer.locked():
        analysis = analyse_record(record, analyzer.bot, plies=plies, **thresholds)
    return analysis.to_dict(positions)
