"""``tapa-ai analyse``: recorded games rated by a network bot (docs/analysis.md).

- :mod:`.records`: the game records of every source (``tapa-ai play``'s saves,
  the web board's and the arena's ``tapa-ai/games`` files, the web board's
  rotation matches, game and match snapshots) read and replayed into one model, :class:`Record`;
- :mod:`.analyzer`: a network bot's answers about one position (its value,
  its moves ranked, cube decisions), which the engine's model commands and
  ``tapa-ai play``'s hints serve, and the one :class:`AnalysisError`;
- :mod:`.analyse`: each move's error and each roll's luck by the analysing
  bot, the totals per player (:func:`analyse_record`);
- :mod:`.report`: the readable report; :mod:`.command`: the command line.

The layer sits above ``export`` and below ``engine``, whose ``analyse``
command (the web board's analysis of a finished game) uses it.
"""

from importlib import import_module

_HOMES = {**dict.fromkeys(("Analysis", "CubeAction", "DEFAULT_BLUNDER_MP", "DEFAULT_ERROR_MP", "GameAnalysis",
                           "MoveRating", "PlayerTotals", "analyse_record", "analyse_rotation_record", "analysis_bot"),
                          "analyse"),
          **dict.fromkeys(("Record", "RecordError", "RecordedGame", "Turn", "read_record", "record_from_json"),
                          "records"),
          "AnalysisError": "analyzer"}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    # Loaded on first use: the engine imports the light analyzer module without the records' and ratings'
    # dependencies (the arena, torch), so that `tapa-ai engine --help` stays quick.
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_HOMES[name]}", __name__), name)
