"""Exact bear-off databases: once no contact is left, tapa, plakoto and backgammon play the same end game.

- ``one_sided``: for every arrangement of up to 15 checkers on the 6 home points, the distribution of the
  turns needed to bear all of them off and to bear off the first;
- ``two_sided``: the exact cubeless chance that the side to move wins, for every pair of homes of up to
  6 (configurable) checkers a side;
- ``database``: both cached on disk (checksummed, written atomically), built on first use;
- ``evaluate``: which positions of a batch are bear-offs, and their outcome distributions in the
  network's classes (the two-sided table where it answers, else the one-sided convolution); the network
  bots and their search use it in place of the network (docs/bearoff.md).
"""
