"""Game and match flow (docs/rules.md section 5) as explicit, immutable state.

A game is a :class:`GameState`; every action returns a new state and raises
:class:`FlowError` when it is not allowed now, saying why. The phases::

    opening --roll--> move          (opening = use-opening-dice: the higher side plays the opening dice)
    opening --roll--> roll          (opening = reroll: the higher side rolls both dice afresh)
    roll --double--> double --take--> roll      (the doubler then rolls)
                            --drop--> over      (the doubler wins the cube value before doubling)
    roll --roll--> move --play--> roll (other side) | over

A match is a :class:`MatchState`: the current game, the score, the Crawford
flags and the results of the finished games; :meth:`MatchState.start_next_game`
begins the next game once one is over. Both serialize to JSON-friendly dicts
(``to_dict`` / ``from_dict``) so a game or match can be saved and loaded.

Randomness is injected: every roll takes a **dice source**, either a
``random.Random`` or a callable returning one die 1..6 (:class:`ScriptedDice`
replays fixed dice). :func:`play_game` and :func:`play_match` drive whole
games with an injected ``choose_move`` and an optional :class:`CubePolicy`.

Decisions where docs/rules.md is silent:

- With ``opening = reroll`` the opener's first turn is an ordinary turn, so it
  may double before rolling it (when the cube is in use).
- Nobody may double before the opening roll, nor on the opener's first turn
  with ``use-opening-dice`` (its dice are already rolled).
- A drawn Crawford game still was the Crawford game: the games after it are
  post-Crawford.
- A passed double ends the game as a ``single`` win for the doubler at the
  cube value before the double.

The modules, lowest first (each imports only those above it)::

    errors      FlowError
    dice        DiceSource, roll_die, ScriptedDice
    snapshots   SNAPSHOT_VERSION, SnapshotError, the snapshot loaders
    events      Event, EVENT_ACTIONS
    game        GameState, PHASES
    match       GameRecord, MatchState
    drivers     ChooseMove, CubePolicy, NeverDouble, play_game, play_match
    rotation    RotationMatch, RotationContext: a rotation's match (docs/rules.md 9, 10.4: Tavli, Tabla), a match whose games rotate variants

The layers of the package are ``tapa_ai.rules`` -> ``tapa_ai.notation`` ->
``tapa_ai.flow``: the flow reads and writes positions and moves through the
notation, so nothing in ``tapa_ai.rules`` imports the flow.
"""

from ..rules.cube import CUBE_VALUES, MAX_CUBE
from .dice import DiceSource, ScriptedDice, roll_die
from .drivers import ChooseMove, CubePolicy, NeverDouble, play_game, play_match
from .errors import FlowError
from .events import EVENT_ACTIONS, Event
from .game import PHASES, GameState
from .match import GameRecord, MatchState
from .snapshots import SNAPSHOT_VERSION, SnapshotError

__all__ = [
    "FlowError", "SnapshotError", "SNAPSHOT_VERSION", "DiceSource", "ScriptedDice", "roll_die",
    "PHASES", "CUBE_VALUES", "MAX_CUBE", "EVENT_ACTIONS", "Event", "GameState", "GameRecord", "MatchState",
    "ChooseMove", "CubePolicy", "NeverDouble", "play_game", "play_match",
]
