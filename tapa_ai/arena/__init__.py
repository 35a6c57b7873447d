"""Matches between policies: paired-dice duels with confidence intervals."""

from .duels import DuelResult, Policy, duel, net_policy, random_policy, pipcount_policy

__all__ = ["DuelResult", "Policy", "duel", "net_policy", "random_policy", "pipcount_policy"]
