"""tapa_ai: a self-play AI training toolkit for Tapa, Plakoto and backgammon.

Layers, each in its own package: ``rules`` (pure, no torch) -> ``notation``
(JSON positions, move text, gnubg IDs) -> ``engine`` (line protocol).
"""

__version__ = "0.1.0"
