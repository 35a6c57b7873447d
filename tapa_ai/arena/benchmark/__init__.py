"""Benchmark sets: positions from games with every candidate move rolled out, and bots scored on them.

- :mod:`.file`: the set file (JSON lines: a header, then one rated position a line), read and checked;
- :mod:`.sample`: the positions, drawn from games of chosen bots to a mix of phases;
- :mod:`.build`: ``tapa-ai benchmark build``: the candidates of each position rolled out (resumable);
- :mod:`.score`: ``tapa-ai benchmark score``: any bot's loss a move, with bootstrap CIs, by phase, in pairs;
- :mod:`.reroll`: a set's candidates rolled out again by another bot or settings, and two referees compared;
- :mod:`.study`: how a set's scores predict duels between the bots (points per game per millipoint);
- :mod:`.cli_benchmark`: the ``tapa-ai benchmark`` command.

docs/benchmark.md describes the sets, the commands and what they measured.
"""
