"""Whole games and matches played by injected choices: :func:`play_game`, :func:`play_match`, cube policies."""

from __future__ import annotations

from typing import Callable, Optional, Protocol

from ..rules.options import RuleOptions
from ..rules.position import Position
from ..rules.reference import Move
from .dice import DiceSource
from .errors import FlowError
from .game import GameState
from .match import MatchState

__all__ = ["ChooseMove", "CubePolicy", "NeverDouble", "play_game", "play_match"]

ChooseMove = Callable[[Position, tuple[int, int], list[Move]], Move]
"""``choose_move(position, dice, moves) -> Move``: pick one of the legal moves (or return move text)."""


class CubePolicy(Protocol):
    """Cube decisions for both sides; ``match`` is None outside a match."""

    def offer_double(self, game: GameState, match: Optional[MatchState]) -> bool:
        """Should the side to move (``game.position.turn``) double now? Asked only when it may."""
        ...

    def accept_double(self, game: GameState, match: Optional[MatchState]) -> bool:
        """Should ``game.side_to_act`` take the double on offer?"""
        ...


class NeverDouble:
    """The default cube policy: never double, always take."""

    def offer_double(self, game: GameState, match: Optional[MatchState]) -> bool:
        return False

    def accept_double(self, game: GameState, match: Optional[MatchState]) -> bool:
        return True


def _advance(state, game: GameState, choose_move: ChooseMove, source: DiceSource, cube_policy: CubePolicy,
             match: Optional[MatchState]):
    """One action on ``state`` (a GameState or a MatchState whose current game is ``game``)."""
    if game.phase == "opening":
        return state.roll(source)
    if game.phase == "roll":
        if game.may_double and cube_policy.offer_double(game, match):
            return state.double()
        return state.roll(source)
    if game.phase == "double":
        return state.take() if cube_policy.accept_double(game, match) else state.drop()
    if game.phase == "move":
        moves = game.moves
        if len(moves) == 1:
            # A forced move or a pass: nothing to choose, the bot is not asked.
            return state.play(moves[0])
        return state.play(choose_move(game.position, game.dice, list(moves)))
    raise FlowError("the game is over")


def play_game(
    rules: RuleOptions | str | GameState,
    choose_move: ChooseMove,
    rng: DiceSource,
    cube_policy: Optional[CubePolicy] = None,
    *,
    max_actions: int = 20_000,
) -> GameState:
    """Play one game to the end and return its final state.

    ``rules`` may be a rule set (a new game with an opening roll) or a
    :class:`GameState` to continue. ``choose_move`` is asked only when there
    is more than one legal move. ``max_actions`` guards against a game that
    cannot end (both sides blocked for ever).
    """
    state = rules if isinstance(rules, GameState) else GameState.new(rules)
    policy = cube_policy or NeverDouble()
    for _ in range(max_actions):
        if state.is_over:
            return state
        state = _advance(state, state, choose_move, rng, policy, None)
    if state.is_over:
        return state
    raise FlowError(f"the game did not end within {max_actions} actions")


def play_match(
    rules: RuleOptions | str | MatchState,
    length: Optional[int],
    choose_move: ChooseMove,
    rng: DiceSource,
    cube_policy: Optional[CubePolicy] = None,
    *,
    max_games: Optional[int] = None,
    max_actions_per_game: int = 20_000,
) -> MatchState:
    """Play a match to ``length`` points (or ``max_games`` games) and return its final state.

    ``rules`` may be a rule set (a new match) or a :class:`MatchState` to
    continue (then ``length`` is ignored). Money play (``length`` 0 or None)
    needs ``max_games``. The returned match holds its last game, finished.
    """
    match = rules if isinstance(rules, MatchState) else MatchState.new(rules, length)
    if not match.length and max_games is None:
        raise FlowError("money play (match length 0) never ends: give max_games")
    policy = cube_policy or NeverDouble()
    games_played = 0
    while not match.is_over and (max_games is None or games_played < max_games):
        if match.game.is_over:
            match = match.start_next_game()
        for _ in range(max_actions_per_game):
            if match.game.is_over:
                break
            match = _advance(match, match.game, choose_move, rng, policy, match)
        else:
            raise FlowError(f"game {match.game_number} did not end within {max_actions_per_game} actions")
        games_played += 1
    return match
