"""``tapa-ai play``: a game or a match against any bot in the terminal (docs/play.md), or a rotation's match
(``--tavli N``: Portes, Plakoto, Fevga in turn; ``--tabla N``: backgammon, Gul Bara, Tapa; ``--rotation GAMES
--length N``; :meth:`PlaySession.rotation_match`).

- :mod:`.session`: :class:`PlaySession`, the session's state and the input loop over injected text streams,
  composed of :class:`~.turns.Turns` (playing on to the human's next decision: dice, bot, move entry),
  :class:`~.commands.Commands` (a line read: a move, an answer, a typed command) and
  :class:`~.reports.Reports` (the board, advice, game and match ends, the score);
- :mod:`.board`: the text board (stacks, pins, mothers, bar, borne off, pips, dice, cube, score);
- :mod:`.moves`: reading moves (whole or in parts) and saying why a move is illegal;
- :mod:`.advice`: ``hint`` and ``eval`` through the engine's analysis;
- :mod:`.saves`: the JSON save files.
"""

from .advice import Advisor, AdviceUnavailable, default_advisor_spec
from .board import BoardInfo, Palette, render_board
from .saves import SaveError, SavedGame, load_game, read_file, save_game
from .session import PlaySession

__all__ = ["PlaySession", "Advisor", "AdviceUnavailable", "default_advisor_spec", "BoardInfo", "Palette",
           "render_board", "SaveError", "SavedGame", "load_game", "read_file", "save_game"]
