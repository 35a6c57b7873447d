"""Matches between bots: paired-dice duels, multi-process matches, round-robin tournaments with ratings."""

from .duels import DuelResult, GameRecords, Policy, duel, net_policy, pipcount_policy, play_pairs, random_policy
from .match import MatchResult, run_match
from .tournament import TournamentResult, bradley_terry, run_tournament

__all__ = ["DuelResult", "GameRecords", "MatchResult", "Policy", "TournamentResult", "bradley_terry", "duel",
           "net_policy", "pipcount_policy", "play_pairs", "random_policy", "run_match", "run_tournament"]
