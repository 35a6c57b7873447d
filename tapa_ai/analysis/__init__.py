"""``tapa-ai analyse``: recorded games rated by a network bot (docs/analysis.md).

- :mod:`.records`: the game records of every source (``tapa-ai play``'s saves,
  the web board's and the arena's ``tapa-ai/games`` files, game and match
  snapshots) read and replayed into one model, :class:`Record`;
- :mod:`.analyse`: each move's error and each roll's luck by the analysing
  bot, the totals per player (:func:`analyse_record`);
- :mod:`.report`: the readable report; :mod:`.command`: the command line.

The layer sits above ``export`` and below ``engine``, whose ``analyse``
command (the web board's analysis of a finished game) uses it.
"""

from .analyse import (DEFAULT_BLUNDER_MP, DEFAULT_ERROR_MP, Analysis, AnalysisError, CubeAction, GameAnalysis,
                      MoveRating, PlayerTotals, analyse_record, analysis_bot)
from .records import Record, RecordError, RecordedGame, Turn, read_record, record_from_json

__all__ = ["Analysis", "AnalysisError", "CubeAction", "DEFAULT_BLUNDER_MP", "DEFAULT_ERROR_MP", "GameAnalysis",
           "MoveRating", "PlayerTotals", "Record", "RecordError", "RecordedGame", "Turn", "analyse_record",
           "analysis_bot", "read_record", "record_from_json"]
