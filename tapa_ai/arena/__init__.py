"""Matches between bots: paired-dice duels, multi-process matches, round-robin tournaments with ratings."""

from .duels import DuelResult, GameRecords, Policy, duel, pipcount_policy, play_pairs, random_policy
from .cube_play import CubeRecords, play_cube_pairs
from .match import CubeMatchResult, MatchResult, run_cube_match, run_match
from .tournament import TournamentResult, bradley_terry, run_tournament

__all__ = ["CubeMatchResult", "CubeRecords", "play_cube_pairs", "run_cube_match", "DuelResult", "GameRecords", "MatchResult", "Policy", "TournamentResult", "bradley_terry", "duel",
           "pipcount_policy", "play_pairs", "random_policy", "run_match", "run_tournament"]
