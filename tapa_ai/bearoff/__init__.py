"""Exact bear-off databases: once no contact is left, tapa, plakoto and backgammon play the same end game.

- ``one_sided``: for every arrangement of up to 15 checkers on the 6 home points, the distribution of the
  turns needed to bear all of them off and to bear off the first (``database``: cached on disk, checked);
- ``two_sided``: the exact cubeless chance that the side to move wins, for every pair of homes of up to
  6 (configurable) checkers a side.
"""
