"""A network bot is an evaluator and four groups of settings (issue 62, tapa_ai/bots/settings.py): search, cube, noise
and match settings, each frozen and checked where it is made; a bot spec's options become these settings (one
table, ``SPEC_SETTINGS``) and the bot is built once; the keywords of before build the same settings."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from tapa_ai.bots.base import BotError
from tapa_ai.bots.levels import find_level
from tapa_ai.bots.search import NetBot
from tapa_ai.bots.settings import (DEFAULT_CANDIDATES, DEFAULT_MARGIN, CubeSettings, MatchSettings, NetBotSettings,
                                   NoiseSettings, SearchSettings)
from tapa_ai.bots.spec import SPEC_OPTIONS, SPEC_SETTINGS, BotSpec, make_bot, net_settings, parse_spec
from tapa_ai.config import ModelConfig
from tapa_ai.cube.decisions import CubeSituation
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.net.checkpoint import load_network
from tapa_ai.net.evaluator import evaluator_for
from tapa_ai.net.model import EvaluatorNet
from tapa_ai.net.shipped import resolve_model_path
from tapa_ai.rules import variant_rules
from tapa_ai.rules.position import start_position

TAPA = variant_rules("tapa")


def small_net(seed=3):
    return EvaluatorNet(ModelConfig(layers=1, hidden=8), TAPA, seed=seed).eval()


@pytest.mark.parametrize("make,words", [
    (lambda: SearchSettings(plies=4), "plies=4: a network searches 0 to 3 plies"),
    (lambda: SearchSettings(plies=-1), "plies=-1: a network searches 0 to 3 plies"),
    (lambda: SearchSettings(refine=(0, 0.1)), "refine=(0, 0.1): the moves kept must be an integer >= 1"),
    (lambda: SearchSettings(refine=(2, -1.0)), "the margin must be a number >= 0 (points of equity)"),
    (lambda: SearchSettings(refine="2:0.04"), "want (moves kept, equity margin), e.g. (2, 0.04)"),
    (lambda: SearchSettings(candidates=0), "candidates=0: the filter keeps an integer >= 1"),
    (lambda: SearchSettings(margin=-0.1), "margin=-0.1: the filter's margin is a number >= 0"),
    (lambda: CubeSettings(life=1.5), "cube_life=1.5: the cube life is a number from 0 (dead cube) to 1"),
    (lambda: CubeSettings(life=float("nan")), "the cube life is a number from 0"),
    (lambda: CubeSettings(enabled="no"), "want True or False"),
    (lambda: NoiseSettings(noise=3), "noise 3: want a number of points from 0 to 2.0"),
    (lambda: NoiseSettings(noise=float("nan")), "want a number of points from 0 to 2.0"),
    (lambda: NoiseSettings(0.1, noise_seed=-1), "noise seed -1: want an integer from 0 to 4294967295"),
    (lambda: MatchSettings(wins=1), "wins=1: want True or False"),
    (lambda: NetBotSettings(search=2), "search=2: want a SearchSettings"),
    (lambda: NetBot(small_net(), plies=4), "plies=4: a network searches 0 to 3 plies"),
    (lambda: NetBot(small_net(), refine=(0, 0.0)), "the moves kept must be an integer >= 1"),
    (lambda: NetBot(small_net(), plies=1, search=SearchSettings()), "give search=SearchSettings(...) or plies"),
    (lambda: NetBot(small_net(), cube=CubeSettings(), cube_life=0.5), "give cube=CubeSettings(...) or cube_life"),
    (lambda: NetBot(small_net(), settings=NetBotSettings(), noise=NoiseSettings()), "give it alone, not with noise"),
])
def test_settings_are_checked_where_they_are_made(make, words):
    with pytest.raises(BotError) as error:
        make()
    assert words in str(error.value) and "\n" not in str(error.value), str(error.value)


def test_settings_are_frozen_hashable_picklable_and_normalised():
    settings = NetBotSettings(SearchSettings(2, refine=[2, 0]), CubeSettings(life=1), NoiseSettings(0, np.int64(5)),
                              MatchSettings(wins=True))
    assert settings.search.refine == (2, 0.0) and isinstance(settings.search.refine[1], float)
    assert settings.cube.life == 1.0 and isinstance(settings.cube.life, float)
    assert settings.noise == NoiseSettings(0.0, 5) and type(settings.noise.noise_seed) is int
    assert pickle.loads(pickle.dumps(settings)) == settings and hash(settings) == hash(copy.deepcopy(settings))
    with pytest.raises(AttributeError):
        settings.search.plies = 3
    assert NetBotSettings() == NetBotSettings(SearchSettings(0, DEFAULT_CANDIDATES, DEFAULT_MARGIN, None),
                                              CubeSettings(True, 0.68), NoiseSettings(0.0, None),
                                              MatchSettings(True, True, False))
    assert settings.with_values("search", plies=1).search == SearchSettings(1, refine=(2, 0.0))
    with pytest.raises(BotError, match="plies=7"):
        settings.with_values("search", plies=7)


def test_the_keywords_of_before_build_the_same_settings():
    net = small_net()
    bot = NetBot(net, 2, None, None, "x", False, 0.5, (1, 0.0), False)
    assert bot.settings == NetBotSettings(SearchSettings(2, None, None, (1, 0.0)), CubeSettings(False, 0.5))
    assert (bot.name, bot.bearoff, bot.plies, bot.candidates, bot.margin, bot.refine, bot.cube, bot.cube_life) == (
        "x", False, 2, None, None, (1, 0.0), False, 0.5)
    assert NetBot(net).settings == NetBotSettings() and NetBot(net).name == "net@0ply" and NetBot(net).bearoff
    assert NetBot(net, plies=1).settings == NetBot(net, search=SearchSettings(1)).settings
    assert NetBot(net, cube=CubeSettings(False)).cube is False
    same = NetBot(net, settings=bot.settings)
    assert same.settings is bot.settings


def test_a_setting_set_on_the_bot_makes_new_checked_settings_and_spares_its_copies():
    bot = NetBot(small_net(), plies=1)
    twin = copy.copy(bot)
    bot.plies, bot.noise, bot.noise_seed, bot.cube = 2, 0.1, 4, False
    bot.play_for_wins()
    assert bot.settings == NetBotSettings(SearchSettings(2), CubeSettings(False), NoiseSettings(0.1, 4),
                                          MatchSettings(wins=True))
    assert bot.for_wins and np.array_equal(bot.points, np.sign(bot.evaluator.points))
    assert twin.settings == NetBotSettings(SearchSettings(1)) and not twin.for_wins
    with pytest.raises(BotError, match="plies=9"):
        bot.plies = 9
    with pytest.raises(BotError, match="noise 5"):
        bot.noise = 5
    assert bot.plies == 2 and bot.noise == 0.1


def test_every_option_of_a_spec_has_a_place_in_the_settings():
    """The table covers every BotSpec field an option sets, except those of the evaluator (nobearoff, points=) and
    level= (a depth and a noise)."""
    placed = set(SPEC_SETTINGS) | {"bearoff", "points", "level"}
    option_fields = {"nocube": "cube", "money_cube": "match_cube", "money_play": "score_play"}
    assert {option_fields.get(name, "bearoff" if name == "nobearoff" else name) for name in SPEC_OPTIONS} == placed
    assert set(SPEC_SETTINGS) <= {field for field in BotSpec.__dataclass_fields__}
    spec = parse_spec("net:tapa@2ply,nocube,cube_life=0.3,money_cube,money_play,wins,refine=2:0.04,noise=0.1,"
                      "noise_seed=3,nobearoff,points=tapa")
    assert net_settings(spec, 2, "tapa") == NetBotSettings(
        SearchSettings(2, refine=(2, 0.04)), CubeSettings(False, 0.3), NoiseSettings(0.1, 3),
        MatchSettings(score_play=False, match_cube=False, wins=True))
    casual = find_level("tapa", "casual")
    assert net_settings(parse_spec("net:tapa,level=casual,noise_seed=9"), 0, "tapa") == NetBotSettings(
        SearchSettings(casual.plies), noise=NoiseSettings(casual.noise, 9))
    with pytest.raises(BotError, match="has no levels of play"):
        net_settings(parse_spec("net:x.pt,level=casual"), 0, "no-such-variant")


def _walk(rules, games=24, steps=12, seed=5):
    """Afterstates of random positions: ``steps`` random moves from the start in ``games`` games."""
    rng = np.random.default_rng(seed)
    positions = PositionBatch.from_positions([start_position(rules)] * games)
    found = []
    for _ in range(steps):
        dice = rng.integers(1, 7, size=(len(positions), 2)).astype(np.int8)
        afterstates = generate(positions, dice)
        found.append(afterstates)
        counts = np.diff(afterstates.offsets)
        rows = afterstates.offsets[:-1] + (rng.random(len(counts)) * counts).astype(np.int64)
        going = ~afterstates.game_over[rows]
        if not going.any():
            break
        positions = afterstates.positions.take(rows[going]).flipped()
    return found, positions


class _Score:
    """A stand-in match score: every class worth its points times a position's factor."""

    def __init__(self, factors):
        self.factors = np.asarray(factors, dtype=np.float64)

    def class_values(self, points):
        return self.factors[:, None] * np.where(np.asarray(points) > 1, 0.3, 1.0) * np.asarray(points)[None]


@pytest.mark.parametrize("text,settings", [
    ("net:tapa,noise=0.2,noise_seed=3,cube_life=0.5,wins,money_play",
     NetBotSettings(cube=CubeSettings(life=0.5), noise=NoiseSettings(0.2, 3),
                    match=MatchSettings(score_play=False, wins=True))),
    ("net:tapa,level=beginner,noise_seed=11,money_cube,nobearoff",
     NetBotSettings(SearchSettings(find_level("tapa", "beginner").plies),
                    noise=NoiseSettings(find_level("tapa", "beginner").noise, 11),
                    match=MatchSettings(match_cube=False))),
    ("net:tapa@1ply,nocube,noise=0.05", NetBotSettings(SearchSettings(1), CubeSettings(False), NoiseSettings(0.05))),
])
def test_a_bot_built_from_settings_plays_the_moves_of_the_bot_of_the_spec(text, settings):
    from_spec = make_bot(text, TAPA)
    evaluator = evaluator_for(load_network(resolve_model_path("tapa")), bearoff=False)
    from_settings = NetBot(evaluator, settings=settings, bearoff="nobearoff" not in text)
    assert from_spec.settings == settings and from_spec.bearoff == from_settings.bearoff
    assert from_spec.name == text
    walk, positions = _walk(TAPA, games=6 if settings.search.plies else 24, steps=6 if settings.search.plies else 12)
    plain = NetBot(evaluator, settings=NetBotSettings(settings.search), bearoff=from_settings.bearoff)
    differs = False  # the settings matter: the bot without its noise and match settings plays other moves
    for number, afterstates in enumerate(walk):
        chosen = [bot.choose(afterstates, np.random.default_rng(number)) for bot in (from_spec, from_settings)]
        assert np.array_equal(*chosen), (text, number)
        differs |= not np.array_equal(chosen[0], plain.choose(afterstates, np.random.default_rng(number)))
        score = _Score(np.linspace(0.5, 2.0, len(afterstates.offsets) - 1))
        at_score = [bot.choose_at_score(afterstates, np.random.default_rng(number), score)
                    for bot in (from_spec, from_settings)]
        assert np.array_equal(*at_score), (text, number)
    assert differs, text
    situation = CubeSituation.money_play(TAPA, np.ones(len(positions), dtype=np.int64),
                                         np.zeros(len(positions), dtype=np.int8))
    for question in ("offer_double", "accept_double"):
        answers = [getattr(bot, question)(positions, situation, np.random.default_rng(1))
                   for bot in (from_spec, from_settings)]
        assert np.array_equal(*answers), (text, question)
