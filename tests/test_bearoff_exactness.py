"""The bear-off databases declare the rule sets they are exact for (``tapa_ai.bearoff.exactness``), and every place
that applies or serves their values goes by that one declaration: cascading doubles (Gul Bara, docs/rules.md 10.2)
get the network's value, and the engine's ``bearoff`` command and ``tapa-ai bearoff`` refuse them in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tapa_ai.bearoff import exact_for, why_not_exact
from tapa_ai.bearoff.evaluate import (bearoff_distributions, bearoff_mask, bearoff_values, database_mask, exact_mask,
                                      exact_rules_mask)
from tapa_ai.movegen import PositionBatch
from tapa_ai.net.evaluator import BearoffEvaluator, Evaluator
from tapa_ai.notation import board
from tapa_ai.rules.options import GULBARA, REGISTRY, VARIANTS, variant_rules
from tapa_ai.rules.outcomes import swap_sides

FEVGA = variant_rules("fevga")
CASCADING = (GULBARA, FEVGA.replace(doubles="cascade"), FEVGA.replace(doubles="cascade", cascade_remainder="opponent"),
             variant_rules("backgammon").replace(doubles="cascade", plain_double_turns=0))

# Each side's home of a running game: X on its points 2 and 4, O on its points 1 and 6 (X's 13 and 18);
# 3 checkers a side (the two-sided table answers) and a one-sided case (X 7 checkers).
EXACT_LAYOUT = "2:X 4:XX 13:O 18:OO"
ONE_SIDED_LAYOUT = "1:XXX 5:XXXX 13:O 18:OO"


def _batch(*rule_sets, layout=EXACT_LAYOUT, turn="X"):
    return PositionBatch.from_positions([board(rules, layout, turn) for rules in rule_sets])


class Marker(Evaluator):
    """A stand-in network: the same distribution for every position, none that the databases give."""

    VALUE = np.array([0.05, 0.1, 0.15, 0.2, 0.25, 0.25])

    def __init__(self, rules):
        self.rules = rules
        self.name = "marker"

    def evaluate_flipped(self, batch):
        return np.tile(self.VALUE, (len(batch), 1))

    def evaluate(self, batch):
        return np.tile(self.VALUE, (len(batch), 1))


# -- the declaration ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_databases_are_exact_for_every_preset_with_plain_doubles(name):
    rules = REGISTRY[name].rules
    assert exact_for(rules) == (rules.doubles == "plain") == (why_not_exact(rules) is None)
    assert exact_for(VARIANTS[name]) == exact_for(rules)
    if name == "gulbara":  # the one preset whose doubles cascade (docs/rules.md 10.1)
        assert "gulbara's doubles cascade" in why_not_exact(rules)


@pytest.mark.parametrize("rules", CASCADING, ids=lambda rules: f"{rules.name}-{rules.cascade_remainder}")
def test_the_databases_are_not_exact_where_doubles_cascade_and_say_so_in_one_line(rules):
    assert not exact_for(rules)
    why = why_not_exact(rules)
    assert "\n" not in why and "doubles" in why and "cascade" in why and "docs/rules.md 10.2" in why
    assert f"{rules.name}'s doubles" in why
    # The options that play a double plainly are exact again, whatever else the rule set changes.
    assert exact_for(rules.replace(doubles="plain"))


# -- the masks and values of tapa_ai.bearoff.evaluate -----------------------------------------------------
@pytest.mark.parametrize("layout", [EXACT_LAYOUT, ONE_SIDED_LAYOUT], ids=["two-sided", "one-sided"])
def test_a_cascading_bear_off_is_a_bear_off_but_never_valued_by_the_databases(layout):
    batch = _batch(FEVGA, GULBARA, FEVGA.replace(doubles="cascade"), variant_rules("narde"), layout=layout)
    assert len(batch.rules) == 4
    assert bearoff_mask(batch).tolist() == [True] * 4  # no contact is left, whatever the rules
    assert exact_rules_mask(batch).tolist() == [True, False, False, True]
    assert database_mask(batch).tolist() == [True, False, False, True]
    assert exact_mask(batch).tolist() == ([True, False, False, True] if layout == EXACT_LAYOUT else [False] * 4)
    values = bearoff_values(batch)
    assert values.rows.tolist() == [0, 3]
    rows, distributions = bearoff_distributions(batch)
    assert rows.tolist() == [0, 3] and np.array_equal(distributions[0], distributions[1])
    # Seen from the other side (an afterstate's view) too.
    assert database_mask(batch.flipped()).tolist() == [True, False, False, True]
    assert not bearoff_values(_batch(GULBARA, layout=layout)).rows.size


# -- the evaluator's substitution -------------------------------------------------------------------------
@pytest.mark.parametrize("layout", [EXACT_LAYOUT, ONE_SIDED_LAYOUT], ids=["two-sided", "one-sided"])
def test_the_bear_off_wrapper_gives_the_database_value_under_fevga_and_the_networks_under_cascading_doubles(layout):
    fevga = _batch(FEVGA, layout=layout)
    database = bearoff_distributions(fevga)[1][0]
    assert not np.allclose(database, Marker.VALUE)
    for rules in (GULBARA, FEVGA.replace(doubles="cascade")):
        wrapped = BearoffEvaluator(Marker(rules))
        cascading = _batch(rules, layout=layout)
        assert np.array_equal(wrapped.evaluate(cascading)[0], Marker.VALUE)
        assert np.array_equal(wrapped.evaluate_flipped(cascading)[0], Marker.VALUE)
    wrapped = BearoffEvaluator(Marker(FEVGA))
    assert np.array_equal(wrapped.evaluate(fevga)[0], database)
    assert np.array_equal(wrapped.evaluate_flipped(fevga)[0], swap_sides(bearoff_distributions(fevga.flipped())[1])[0])
    # One batch of both rule sets: row by row, by the batch's rules table and rules_id.
    mixed = _batch(FEVGA, GULBARA, FEVGA, layout=layout)
    values = BearoffEvaluator(Marker(FEVGA)).evaluate(mixed)
    assert np.array_equal(values[0], database) and np.array_equal(values[2], database)
    assert np.array_equal(values[1], Marker.VALUE)


def test_the_bear_off_wrapper_values_cascading_afterstates_by_the_network():
    from dataclasses import replace

    from tapa_ai.movegen.generate import generate

    batch = _batch(FEVGA, FEVGA, FEVGA, layout=ONE_SIDED_LAYOUT)
    fevga = generate(batch, np.array([[6, 5], [2, 1], [1, 1]]))  # X's bear-off moves, O to roll next
    going_on = np.flatnonzero(~fevga.game_over)
    assert going_on.size and bearoff_mask(fevga.positions)[going_on].all()
    # The same afterstates under Gul Bara's rules: the batch's rules table relabelled.
    gulbara = replace(fevga, positions=replace(fevga.positions, rules=(GULBARA,) * len(fevga.positions.rules)))
    database = swap_sides(bearoff_distributions(fevga.positions.take(going_on).flipped())[1])
    values = BearoffEvaluator(Marker(FEVGA)).afterstate_distributions(fevga)
    assert np.array_equal(values[going_on], database)
    values = BearoffEvaluator(Marker(GULBARA)).afterstate_distributions(gulbara)
    assert np.array_equal(values[going_on], np.tile(Marker.VALUE, (going_on.size, 1)))


# -- the engine's bearoff command and tapa-ai bearoff ------------------------------------------------------
def test_the_engine_bearoff_command_refuses_a_cascading_rule_set_naming_the_option():
    from tapa_ai.analysis.analyzer import AnalysisError
    from tapa_ai.engine.bearoff_command import answer_bearoff
    from tapa_ai.engine.protocol import Engine
    from tapa_ai.notation.json_position import position_to_json

    position = board(GULBARA, EXACT_LAYOUT, "X")
    with pytest.raises(AnalysisError, match=r"exact only for plain doubles \(rule option doubles='plain'\); "
                                            r"gulbara's doubles cascade \(docs/rules.md 10.2\)"):
        answer_bearoff({}, position)
    assert answer_bearoff({}, board(FEVGA, EXACT_LAYOUT, "X"))["exact"] is True
    # Through the protocol: one error line (the position as the request's would be read).
    engine = Engine(generator="reference")
    request = {"cmd": "bearoff", "position": position_to_json(board(FEVGA, EXACT_LAYOUT, "X")), "id": 9}
    assert json.loads(engine.handle_line(json.dumps(request)))["exact"] is True
    engine._position = lambda request: position
    answer = json.loads(engine.handle_line(json.dumps(request)))
    assert answer["id"] == 9 and "\n" not in answer["error"]
    assert answer["error"].endswith(why_not_exact(GULBARA))


@pytest.fixture()
def cached_tables(tmp_path, monkeypatch):
    from tapa_ai.bearoff import database
    from tapa_ai.bearoff.one_sided import build_tables

    monkeypatch.setenv("TAPA_AI_CACHE", str(tmp_path))
    monkeypatch.setattr(database, "_LOADED", {})
    return build_tables


def test_the_bearoff_cli_refuses_a_cascading_rule_set_naming_the_option(cached_tables, capsys):
    from tapa_ai.cli import main

    home = ["0", "0", "0", "0", "0", "1"]
    assert main(["bearoff", "--quiet", "--variant", '{"variant": "fevga", "doubles": "cascade"}', *home]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "fevga's doubles cascade (docs/rules.md 10.2)" in error
    assert "rule option doubles='plain'" in error
    assert main(["bearoff", "--quiet", "--variant", json.dumps(GULBARA.to_dict()), *home]) == 2
    assert "gulbara's doubles cascade" in capsys.readouterr().err
    # Every preset is served.
    assert main(["bearoff", "--quiet", "--variant", "fevga", "--json", *home]) == 0
    assert json.loads(capsys.readouterr().out)["turns"] == pytest.approx([0.0, 0.75, 0.25])
    assert main(["bearoff", "--quiet", "--variant", "nope", *home]) == 2
    assert "unknown variant 'nope'" in capsys.readouterr().err
    assert main(["bearoff", "--quiet", "--variant", '{"variant": "fevga", "nope": 1}', *home]) == 2
    assert "unknown rule option(s) ['nope']" in capsys.readouterr().err
