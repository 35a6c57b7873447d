"""Rotations as data (tapa_ai/rules/rotations.py, docs/rules.md 9 and 10.4): the presets, the forms a user and a file
name a rotation by, and the one-line errors."""

from __future__ import annotations

import pytest

from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.rotations import (MAX_ROTATION_GAMES, ROTATIONS, Rotation, RotationError, parse_rotation,
                                     rotation_from_data)


def test_presets_are_tavli_and_tabla():
    assert sorted(ROTATIONS) == ["tabla", "tavli"]
    assert ROTATIONS["tavli"].variants == ("portes", "plakoto", "fevga")
    assert ROTATIONS["tabla"].variants == ("backgammon", "gulbara", "tapa")
    assert ROTATIONS["tavli"].games == tuple(variant_rules(v) for v in ("portes", "plakoto", "fevga"))
    assert ROTATIONS["tabla"].title() == "Tabla (Backgammon, Gul Bara, Tapa)"


def test_every_game_of_a_rotation_has_no_cube():
    rotation = parse_rotation("backgammon,tapa,narde")
    assert [rules.cube for rules in rotation.games] == [False, False, False]
    assert [rules.crawford for rules in rotation.games] == [False, False, False]
    with pytest.raises(RotationError, match="has a cube"):
        Rotation("custom", (variant_rules("backgammon"),))
    with pytest.raises(RotationError, match="cube must be false"):
        Rotation.of(["backgammon"], changes={"backgammon": {"cube": True}})


def test_command_line_forms():
    assert parse_rotation("tabla") is ROTATIONS["tabla"]
    assert parse_rotation(" backgammon, gulbara ,tapa ") == ROTATIONS["tabla"]  # a list naming a preset's games
    assert parse_rotation("backgammon,gulbara,tapa").name == "tabla"
    custom = parse_rotation("tapa,fevga")
    assert custom.name == "custom" and custom.variants == ("tapa", "fevga") and len(custom) == 2
    assert [custom.variant(n) for n in range(1, 6)] == ["tapa", "fevga", "tapa", "fevga", "tapa"]
    assert parse_rotation("narde").variants == ("narde",)  # one game is a rotation too


@pytest.mark.parametrize("text, message", [
    ("", "an empty rotation"),
    ("   ", "an empty rotation"),
    ("chess", "unknown rotation 'chess'"),
    ("tapa,chess", "unknown variant 'chess' in the rotation"),
    ("tapa,,fevga", "an empty game name between commas"),
    (",".join(["tapa"] * (MAX_ROTATION_GAMES + 1)), f"at most {MAX_ROTATION_GAMES} games"),
])
def test_bad_rotations_are_one_line(text, message):
    with pytest.raises(RotationError, match=message) as caught:
        parse_rotation(text)
    assert "\n" not in str(caught.value)


def test_data_forms_round_trip():
    for rotation in (ROTATIONS["tavli"], ROTATIONS["tabla"], parse_rotation("tapa,fevga"),
                     Rotation.of(["plakoto", "narde"], changes={"plakoto": {"mother_points": 3}})):
        data = rotation.to_data()
        assert rotation_from_data(data) == rotation
    assert ROTATIONS["tabla"].to_data() == "tabla"
    assert parse_rotation("tapa,fevga").to_data() == ["tapa", "fevga"]
    changed = Rotation.of(["plakoto", "narde"], changes={"plakoto": {"mother_points": 3}})
    assert changed.to_data() == [{"variant": "plakoto", "rules": {"mother_points": 3}}, "narde"]
    assert changed.rules(1).mother_points == 3
    assert rotation_from_data(["portes", "plakoto", "fevga"]) is ROTATIONS["tavli"]


@pytest.mark.parametrize("data, message", [
    (5, "a preset's name"),
    ("backgammon", "unknown rotation 'backgammon'"),
    ([], "at least one game"),
    ([7], "a variant's name or"),
    ([{"variant": "tapa", "extra": 1}], "a variant's name or"),
    ([{"variant": "tapa", "rules": {"bogus": 1}}], "unknown rule option"),
    ([{"variant": "tapa", "rules": {"mother_points": 2}}, {"variant": "tapa", "rules": {"mother_points": 3}}],
     "comes twice with different options"),
])
def test_bad_rotation_data_is_one_line_naming_the_place(data, message):
    with pytest.raises(RotationError, match=message) as caught:
        rotation_from_data(data, "request.rotation")
    assert str(caught.value).startswith("request.rotation")


def test_a_variant_twice_plays_by_one_rule_set():
    rotation = parse_rotation("tapa,fevga,tapa")
    assert rotation.distinct == ("tapa", "fevga") and rotation.rules(1) == rotation.rules(3)
    with pytest.raises(RotationError, match="twice in the rotation with different options"):
        Rotation("custom", (variant_rules("tapa").replace(cube=False, crawford=False),
                            variant_rules("tapa").replace(cube=False, crawford=False, mother_points=2)))


def test_game_numbers_start_at_one():
    with pytest.raises(RotationError, match="game number 0"):
        ROTATIONS["tabla"].rules(0)
    with pytest.raises(RotationError, match="not in the rotation"):
        ROTATIONS["tabla"].rules_of("fevga")
