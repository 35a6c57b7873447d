"""A bot spec is read once into a frozen description (issue 62): ``parse_spec`` checks the form and every option
without loading anything, ``make_bot`` builds from it, and the arena's workers receive it, not the string."""

from __future__ import annotations

import pickle

import pytest

from tapa_ai.bots.base import BotError
from tapa_ai.bots.spec import BotSpec, make_bot, parse_spec
from tapa_ai.rules.options import variant_rules


def test_a_spec_is_read_into_a_frozen_picklable_description():
    spec = parse_spec(" net:tapa@1ply,nocube,refine=2:0.04,noise=0.1,noise_seed=7,cube_life=0.5,money_play ")
    assert spec == BotSpec("net:tapa@1ply,nocube,refine=2:0.04,noise=0.1,noise_seed=7,cube_life=0.5,money_play",
                           "net:tapa@1ply", ("nocube", "refine=2:0.04", "noise=0.1", "noise_seed=7", "cube_life=0.5",
                                             "money_play"),
                           cube=False, score_play=False, refine=(2, 0.04), noise=0.1, noise_seed=7, cube_life=0.5)
    assert pickle.loads(pickle.dumps(spec)) == spec and hash(spec) == hash(parse_spec(spec.text))
    with pytest.raises(AttributeError):
        spec.noise = 0.2  # frozen
    assert parse_spec("heuristic") == BotSpec("heuristic", "heuristic")
    assert parse_spec("net:backgammon,points=portes").points == "portes"


def test_reading_a_spec_loads_nothing_and_refuses_bad_options_at_once():
    spec = parse_spec("net:no/such/file.pt@1ply,noise=0.1")  # the file is read when the bot is built
    with pytest.raises(BotError, match="no checkpoint file"):
        make_bot(spec)
    for text, words in (("net:tapa,noise=3", "want a number of points from 0 to 2.0"),
                        ("net:tapa,refine=0:0.1", "the moves kept must be an integer >= 1"),
                        ("net:tapa,cube_life=2", "the cube life is a number from 0"),
                        ("net:tapa@2ply,level=casual", "level= sets the depth"),
                        ("net:tapa,points=chess", "unknown variant"),
                        ("net:tapa,levle=casual", "did you mean 'level'?")):
        with pytest.raises(BotError, match=words):
            parse_spec(text)


def test_a_bot_built_from_the_description_is_the_bot_of_the_string():
    rules = variant_rules("tapa")
    for text in ("net:tapa@1ply,nocube,noise=0.05,noise_seed=3", "net:tapa,level=casual,noise_seed=9",
                 "heuristic,nocube", "runner"):
        from_text, from_spec = make_bot(text, rules), make_bot(parse_spec(text), rules)
        assert from_text.name == from_spec.name
        for attribute in ("plies", "noise", "noise_seed", "cube", "score_play", "refine"):
            assert getattr(from_text, attribute, None) == getattr(from_spec, attribute, None), (text, attribute)
    bot = make_bot(parse_spec("net:tapa@1ply,nocube,noise=0.05"), rules)
    assert (bot.plies, bot.noise, bot.cube) == (1, 0.05, False)
    with pytest.raises(BotError, match="noise= is an option of net: bots"):
        make_bot(parse_spec("heuristic,noise=0.1"), rules)


def test_the_arenas_workers_receive_the_description_not_the_string(monkeypatch):
    from tapa_ai.arena import workers
    from tapa_ai.arena.match import run_match

    received = []
    real = workers.make_bot

    def recording(spec, rules=None):
        received.append(spec)
        return real(spec, rules)

    monkeypatch.setattr(workers, "make_bot", recording)
    result = run_match("heuristic", "runner,nocube", variant_rules("tapa"), games=2, seed=1, workers=1, progress=False)
    assert result.bot_a == "heuristic" and result.bot_b == "runner,nocube"
    worker_specs = received[-2:]  # the worker's two bots (the check before them builds from the strings)
    assert all(isinstance(spec, BotSpec) for spec in worker_specs)
    assert [spec.text for spec in worker_specs] == ["heuristic", "runner,nocube"]
