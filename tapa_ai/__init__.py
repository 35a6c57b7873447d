"""tapa_ai: a self-play AI training toolkit for Tapa and its family: Plakoto, backgammon, Portes, Fevga, Narde.

The package is a stack of layers, lowest first (:data:`LAYERS`). A module may
import modules of its own layer and of the layers below it, never of a layer
above, and no two modules import each other, directly or round a circle
(``tests/test_layers.py`` checks both on every module, counting imports inside
functions too):

- foundation: ``config`` (typed configs), ``ray_cluster`` (the optional Ray
  dependency), ``deadline`` (cooperative time limits), ``errors`` (``TapaError``,
  the base of every error a user can act on), ``quoting`` (bad input quoted, bounded, in every error),
  ``schema`` (the declared JSON Schemas of every request and file, and their one validator) and this package's ``__version__``;
  they import no other layer;
- ``rules``: rule options, positions, the reference move generator, the cube's
  rules (pure Python, no torch);
- ``notation``: JSON positions, move text, the mini-language, gnubg IDs;
- ``flow``: game and match flow (dice, games, matches, snapshots, play loops);
- ``matchfiles``: other programs' match files, GNU Backgammon's SGF and .mat, read and written;
- ``movegen``: the vectorized whole-turn move generator (numba);
- ``bearoff``: exact bear-off databases (one table serves every variant: no contact is left);
- ``net``: the evaluator (encoding, network, fast kernel, afterstate values,
  checkpoints);
- ``cube``: cubeful equity and match equity tables;
- ``bots``: the bot interface, fixed bots, n-ply search, spec strings;
- ``arena``: duels, matches, tournaments, cube and match play, strength reports;
- ``training``: self-play learning (it plays the arena to measure itself);
- ``export``: ONNX, TorchScript and numpy-only models;
- ``analysis``: recorded games rated by a network bot (``tapa-ai analyse``;
  below ``engine``, whose ``analyse`` command serves the web board);
- ``engine``: the JSON-lines protocol and the HTTP server;
- ``play``: the terminal game;
- ``cli``: the ``tapa-ai`` command: its parser and ``main``; each command is a
  module ``cli_<command>.py`` (``add_parser`` and ``run``) in the package of
  what it drives (``arena/cli_match.py``, ``engine/cli_serve.py``).
"""

__version__ = "0.1.0"

LAYERS = (
    ("config", "ray_cluster", "deadline", "errors", "quoting", "schema"),
    ("rules",),
    ("notation",),
    ("flow",),
    ("matchfiles",),
    ("movegen",),
    ("bearoff",),
    ("net",),
    ("cube",),
    ("bots",),
    ("arena",),
    ("training",),
    ("export",),
    ("analysis",),
    ("engine",),
    ("play",),
    ("cli",),
)
"""The layers, lowest first: each a tuple of the top-level modules and packages of ``tapa_ai`` it holds."""
