"""The registry of variants (tapa_ai/rules/options.py REGISTRY, issue 62): one entry a game, and what the package
knows of a variant derived from it, not kept in parallel tables."""

from __future__ import annotations

import json
from pathlib import Path

from tapa_ai.rules.options import REGISTRY, VARIANTS, Variant, same_board_game, shipped_models

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tapa_ai" / "models"


def test_every_variant_is_one_registry_entry_named_by_its_rules():
    assert list(VARIANTS) == list(REGISTRY) == ["tapa", "plakoto", "backgammon", "portes", "fevga", "narde",
                                                "gulbara"]
    for name, entry in REGISTRY.items():
        assert isinstance(entry, Variant) and entry.name == name == entry.rules.name
        assert VARIANTS[name] is entry.rules
        assert entry.title and entry.summary and entry.opponents[:3] == ("random", "runner", "heuristic")


def test_the_registry_tells_the_truth_about_the_shipped_files():
    """A variant ships a model exactly when tapa_ai/models/<name>.pt exists; a variant played by another's model
    plays the same board game (portes: backgammon's)."""
    files = {path.stem for path in MODELS.glob("*.pt")}
    assert set(shipped_models()) == files
    for entry in REGISTRY.values():
        if entry.model is not None and not entry.ships_model:
            assert entry.model in files and same_board_game(REGISTRY[entry.model].rules, entry.rules), entry.name
    assert REGISTRY["portes"].model == "backgammon"


def test_the_tables_that_were_kept_apart_are_derived_from_the_registry():
    from tapa_ai.arena.strength import FIXED_OPPONENTS
    from tapa_ai.bots.spec import SPEC_FORMS
    from tapa_ai.bots.rotation import rotation_models
    from tapa_ai.cube import met
    from tapa_ai.engine.web_board import MODEL_VARIANTS
    from tapa_ai.rules.rotations import ROTATIONS
    from tapa_ai.net.shipped import SHIPPED_VARIANTS, model_variant
    from tapa_ai.rules.outcomes import OUTCOME_NAMES, outcome_names

    assert SHIPPED_VARIANTS == MODEL_VARIANTS == shipped_models()
    assert FIXED_OPPONENTS == {name: list(REGISTRY[name].opponents) for name in shipped_models()}
    assert FIXED_OPPONENTS["backgammon"][-2:] == ["pubeval", "gnubg:0"]
    assert f"net:NAME (shipped: {'|'.join(shipped_models())})" in SPEC_FORMS
    assert rotation_models(ROTATIONS["tavli"]) == ("net:backgammon", "net:plakoto", "net:fevga")
    assert rotation_models(ROTATIONS["tabla"]) == ("net:backgammon", "net:gulbara", "net:tapa")
    assert [model_variant(v) for v in ROTATIONS["tavli"].variants] == ["backgammon", "plakoto", "fevga"]
    # The match equity tables' rates are measured with a variant's model: a variant without one has none.
    assert met.VARIANTS == tuple(name for name, entry in REGISTRY.items() if entry.model is not None)
    assert met.model_variant("portes") == "backgammon"
    assert OUTCOME_NAMES == {name: outcome_names(rules) for name, rules in VARIANTS.items()}
    # The data files keyed by a variant's name cover exactly the registry's variants.
    rates = json.loads((ROOT / "tapa_ai" / "cube" / "result_rates.json").read_text())
    assert set(rates["variants"]) == set(met.VARIANTS)
    levels = json.loads((MODELS / "levels.json").read_text())
    assert set(levels["variants"]) <= set(shipped_models())


def test_a_custom_rule_set_takes_the_rates_of_the_first_registry_variant_whose_checkers_meet_alike():
    from tapa_ai.cube.met import VARIANT_RATES, rates_for

    for preset, expected in (("plakoto", "tapa"), ("portes", "backgammon"), ("narde", "fevga")):
        custom = VARIANTS[preset].replace(name=f"my-{preset}")
        rates = rates_for(custom)
        assert (rates.single, rates.gammon, rates.draw) == (VARIANT_RATES[expected].single,
                                                            VARIANT_RATES[expected].gammon,
                                                            VARIANT_RATES[expected].draw)


def test_the_server_publishes_the_registry_for_the_page_and_other_frontends():
    import http.client

    from tapa_ai.engine.protocol import Engine
    from tests.servers import serving

    with serving(engine=Engine("reference")) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        connection.request("GET", "/v1/variants")
        response = connection.getresponse()
        answer = json.loads(response.read())
    assert response.status == 200
    assert [v["name"] for v in answer["variants"]] == list(REGISTRY)
    assert {name: rotation["games"] for name, rotation in answer["rotations"].items()} == \
        {"tavli": ["portes", "plakoto", "fevga"], "tabla": ["backgammon", "gulbara", "tapa"]}
    by_name = {v["name"]: v for v in answer["variants"]}
    for name, entry in REGISTRY.items():
        assert by_name[name]["rules"] == entry.rules.to_dict() and by_name[name]["model"] == entry.model
    # What each game's own games can end in (docs/rules.md 3.5, 4, 8.5, 9): worked out by hand.
    scored = {name: set(v["outcomes"]["scored"]) for name, v in by_name.items()}
    assert scored["fevga"] == scored["narde"] == scored["portes"] == {"win_single", "win_gammon", "lose_single",
                                                                      "lose_gammon"}
    assert "draw" in scored["tapa"] and "win_mother" in scored["plakoto"] and "draw" not in scored["backgammon"]
    assert by_name["portes"]["outcomes"]["points"] == [1.0, 2.0, 2.0, -1.0, -2.0, -2.0]
    assert by_name["tapa"]["draws"] and not by_name["fevga"]["draws"]


def test_the_copies_that_stay_outside_the_registry_agree_with_it():
    """What cannot import the registry keeps a copy, tied here: the config's choices (the foundation layer sits
    below the rules) and the numpy-only model's rule flags (a file other programs take alone)."""
    import typing

    from tapa_ai.config import Variant as ConfigVariant
    from tapa_ai.export.numpy_model import VARIANT_RULES

    from tapa_ai.config import ENCODING_VERSIONS as CONFIG_VERSIONS
    from tapa_ai.net.encoding import ENCODING_VERSIONS

    assert set(typing.get_args(ConfigVariant)) == set(REGISTRY)
    assert CONFIG_VERSIONS == ENCODING_VERSIONS
    assert set(VARIANT_RULES) == set(REGISTRY)
    for name, flags in VARIANT_RULES.items():
        rules = REGISTRY[name].rules
        assert {key: getattr(rules, key) for key in flags} == flags, name
