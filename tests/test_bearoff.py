"""One-sided bear-off database: exact small cases, ranks, and GNU Backgammon's database on every position."""

import json

import numpy as np
import pytest

from tapa_ai.bearoff.one_sided import MAX_TURNS, POSITIONS, build_tables, rank, unrank


@pytest.fixture(scope="module")
def tables():
    return build_tables()


def test_ranks_number_the_54264_arrangements_once():
    assert POSITIONS == 54_264
    seen = {rank(unrank(index)) for index in range(0, POSITIONS, 7)}
    assert seen == set(range(0, POSITIONS, 7))
    assert unrank(rank((1, 0, 4, 1, 3, 0))) == (1, 0, 4, 1, 3, 0)
    with pytest.raises(ValueError, match="at most 15"):
        rank((5, 5, 5, 1, 0, 0))
    with pytest.raises(ValueError, match="6 counts"):
        rank((1, 2, 3))


def test_exact_small_bear_offs(tables):
    turns, first_off = tables
    assert turns[rank((0,) * 6), 0] == 1.0 and first_off[rank((0,) * 6), 0] == 1.0
    # One checker on the 6-point: it fails only on the 9 rolls whose pips (a double counted four times) total under 6.
    six = turns[rank((0, 0, 0, 0, 0, 1))]
    assert six[1] == pytest.approx(27 / 36) and six[2] == pytest.approx(9 / 36)
    # Two checkers on the 6-point: only 3-3, 4-4, 5-5 and 6-6 clear both in one turn.
    assert turns[rank((0, 0, 0, 0, 0, 2)), 1] == pytest.approx(4 / 36)
    # Two checkers on the low points always come off in one turn; their first checker too.
    assert turns[rank((1, 1, 0, 0, 0, 0)), 1] == pytest.approx(1.0)
    # The first checker off from the 5- and 6-points: at least every roll with a 5 or a 6 (20 of 36) does it at once.
    assert first_off[rank((0, 0, 0, 0, 1, 1)), 1] >= 20 / 36
    assert np.allclose(turns.sum(axis=1), 1.0) and np.allclose(first_off.sum(axis=1), 1.0)
    assert turns.shape == (POSITIONS, MAX_TURNS) and turns[:, -1].max() == 0.0


def test_one_sided_distributions_equal_gnubgs_database(tables):
    gnubg = pytest.importorskip("gnubg_nn")
    turns, _ = tables
    points = np.arange(MAX_TURNS)
    worst_mean = 0.0
    differ = []
    for index in range(1, POSITIONS):
        position = unrank(index)
        reference = np.zeros(MAX_TURNS)
        stored = gnubg.bearoff_probabilities(position)
        reference[1:1 + len(stored)] = stored
        worst_mean = max(worst_mean, abs(points @ turns[index] - points @ reference))
        gap = np.abs(turns[index] - reference).max()
        if gap > 1e-4:
            differ.append(gap)
    # gnubg stores its probabilities rounded (16-bit fractions), so where two plays' expected turns lie
    # within ~3e-5 of each other its build can choose the other one: the means agree everywhere, the
    # distributions everywhere but at those near-ties (220 of 54,263 positions, by at most 0.003 here).
    assert worst_mean < 5e-4  # its rounding alone moves a mean by up to ~2e-4
    assert len(differ) < 300 and max(differ) < 0.005


# -- the cached file ---------------------------------------------------------------------------------
def test_database_is_cached_checked_and_rebuilt_when_corrupt(tables, tmp_path, monkeypatch, capsys):
    from tapa_ai.bearoff import database

    builds = []
    monkeypatch.setattr(database, "build_tables", lambda progress=False: builds.append(1) or tables)
    monkeypatch.setattr(database, "_LOADED", {})
    first = database.one_sided(tmp_path, progress=False)
    assert builds == [1] and "no database at" in capsys.readouterr().err
    assert first.distributions([0, 0, 0, 0, 0, 1]) == (pytest.approx([0.0, 0.75, 0.25]),) * 2
    assert first.mean_turns([0, 0, 0, 0, 0, 2]) == pytest.approx(float(np.arange(MAX_TURNS) @ tables[0][rank((0, 0, 0, 0, 0, 2))]), abs=1e-6)
    database._LOADED.clear()
    again = database.one_sided(tmp_path, progress=False)
    assert builds == [1] and np.array_equal(again.turns, first.turns)  # read back, not rebuilt
    # An edited table fails its checksum; a damaged file is unreadable: both are rebuilt, saying why.
    path = database.database_path(tmp_path)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["turns"] = arrays["turns"].copy()
    arrays["turns"][5, 1] += 0.5
    np.savez(path, **arrays)
    database._LOADED.clear()
    database.one_sided(tmp_path, progress=False)
    assert builds == [1, 1] and "fails its checksum" in capsys.readouterr().err
    path.write_bytes(b"not a zip file")
    database._LOADED.clear()
    database.one_sided(tmp_path, progress=False)
    assert builds == [1, 1, 1] and "unreadable" in capsys.readouterr().err
    database._LOADED.clear()
    assert np.array_equal(database.one_sided(tmp_path, progress=False).turns, first.turns)


def test_cache_directory_follows_the_environment(monkeypatch, tmp_path):
    from tapa_ai.bearoff.database import cache_dir

    monkeypatch.setenv("TAPA_AI_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("TAPA_AI_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tapa_ai"


def test_engine_bearoff_command_answers_the_distributions_and_refuses_bad_homes(tables, monkeypatch):
    from tapa_ai.bearoff import database
    from tapa_ai.bearoff.database import OneSided
    from tapa_ai.engine.protocol import Engine

    monkeypatch.setattr(database, "one_sided", lambda **_: OneSided(*tables))
    engine = Engine()
    answer = engine.handle({"cmd": "bearoff", "home": [0, 0, 0, 0, 0, 2], "id": 4})
    assert answer["id"] == 4 and answer["home"] == [0, 0, 0, 0, 0, 2]
    assert answer["turns"] == pytest.approx(list(tables[0][rank((0, 0, 0, 0, 0, 2))][:5]))
    assert answer["turns"][1] == pytest.approx(4 / 36) and sum(answer["first_off"]) == pytest.approx(1.0)
    assert engine.handle({"cmd": "bearoff", "home": [0] * 6}) == {"home": [0] * 6, "turns": [1.0], "first_off": [1.0]}
    for home in ([1, 2, 3], [8, 8, 0, 0, 0, 0], [1, -1, 0, 0, 0, 0], [1.5, 0, 0, 0, 0, 0], "123456", [True] * 6):
        response = json.loads(engine.handle_line(json.dumps({"cmd": "bearoff", "home": home})))
        assert "'home' must be a list of 6 integers" in response["error"], home
    assert "missing 'home'" in json.loads(engine.handle_line('{"cmd": "bearoff"}'))["error"]


def test_bearoff_command_prints_the_distributions_and_refuses_a_bad_home(tables, tmp_path, monkeypatch, capsys):
    from tapa_ai.bearoff import database
    from tapa_ai.cli import main

    monkeypatch.setenv("TAPA_AI_CACHE", str(tmp_path))
    monkeypatch.setattr(database, "build_tables", lambda progress=False: tables)
    monkeypatch.setattr(database, "_LOADED", {})
    assert main(["bearoff", "--quiet"]) == 0 and "54,264 positions" in capsys.readouterr().out
    assert main(["bearoff", "0", "0", "0", "0", "0", "1", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["turns"] == pytest.approx([0.0, 0.75, 0.25]) and answer["home"] == [0, 0, 0, 0, 0, 1]
    assert main(["bearoff", "0", "0", "0", "0", "0", "2"]) == 0
    assert "turns on average" in capsys.readouterr().out
    assert main(["bearoff", "1", "2", "3"]) == 2
    assert "HOME must be 6 counts" in capsys.readouterr().err


def test_one_sided_database_equals_a_brute_force_over_the_reference_rules(tables):
    """Up to 4 checkers: each roll's legal moves from the reference generator, the best by expected turns."""
    from itertools import product

    from tapa_ai.notation.mini import board
    from tapa_ai.rules.reference import legal_moves

    turns, _ = tables
    rolls = [((a, b), (1 if a == b else 2) / 36) for a in range(1, 7) for b in range(a, 7)]
    memo = {}

    def distribution(home):
        if home in memo:
            return memo[home]
        row = np.zeros(MAX_TURNS)
        if sum(home) == 0:
            row[0] = 1.0
            memo[home] = row
            return row
        layout = " ".join(f"{point + 1}:{'X' * n}" for point, n in enumerate(home) if n) + " 24:O"
        position = board("backgammon", layout)
        for dice, weight in rolls:
            best = None
            for move in legal_moves(position, dice):
                after = tuple(move.position.points[p].count("X") for p in range(6))
                candidate = distribution(after)
                mean = np.arange(MAX_TURNS) @ candidate
                if best is None or mean < best[0] - 1e-12:
                    best = (mean, candidate)
            row[1:] += weight * best[1][:-1]
        memo[home] = row
        return row

    checked = 0
    for home in product(range(5), repeat=6):
        if sum(home) <= 4:
            assert np.allclose(distribution(home), turns[rank(home)], atol=1e-12), home
            checked += 1
    assert checked == 210


# -- the two-sided database ----------------------------------------------------------------------------
def test_two_sided_wins_equal_a_brute_force_over_the_reference_rules():
    """Up to 3 checkers a side: the mover's legal moves (reference generator) leave the opponent the least."""
    from functools import lru_cache
    from itertools import product

    from tapa_ai.bearoff.two_sided import build_two_sided, positions_up_to
    from tapa_ai.notation.mini import board
    from tapa_ai.rules.reference import legal_moves

    wins = build_two_sided(3)
    assert wins.shape == (positions_up_to(3),) * 2 == (84, 84)
    rolls = [((a, b), (1 if a == b else 2) / 36) for a in range(1, 7) for b in range(a, 7)]

    @lru_cache(maxsize=None)
    def chance(mover, opponent):
        if sum(mover) == 0:
            return 1.0
        if sum(opponent) == 0:
            return 0.0
        layout = " ".join(f"{point + 1}:{'X' * n}" for point, n in enumerate(mover) if n) + " 24:O"
        position = board("plakoto", layout)
        total = 0.0
        for dice, weight in rolls:
            least = min(chance(opponent, tuple(move.position.points[p].count("X") for p in range(6)))
                        for move in legal_moves(position, dice))
            total += weight * (1.0 - least)
        return total

    homes = [home for home in product(range(4), repeat=6) if sum(home) <= 3]
    assert len(homes) == 84
    for mover in homes[::3]:
        for opponent in homes[1:]:  # (both sides with nothing left is no position)
            assert wins[rank(mover), rank(opponent)] == pytest.approx(chance(mover, opponent), abs=1e-12)
    # One checker on each 6-point: the mover's 27 rolls of 36 win at once; after a miss the opponent's do.
    assert wins[rank((0, 0, 0, 0, 0, 1)), rank((0, 0, 0, 0, 0, 1))] == pytest.approx(27 / 36 + (9 / 36) ** 2)


def test_two_sided_table_is_cached_and_rebuilt_when_edited(tmp_path, monkeypatch, capsys):
    from tapa_ai.bearoff import database
    from tapa_ai.bearoff.two_sided import build_two_sided

    small = build_two_sided(2)
    builds = []
    monkeypatch.setattr(database, "build_two_sided", lambda checkers: builds.append(checkers) or small)
    monkeypatch.setattr(database, "_TWO_SIDED", {})
    wins = database.two_sided(2, tmp_path)
    assert builds == [2] and wins.shape == (28, 28) and wins.dtype == np.float32
    assert "no database at" in capsys.readouterr().err
    database._TWO_SIDED.clear()
    assert np.array_equal(database.two_sided(2, tmp_path), wins) and builds == [2]
    path = database.two_sided_path(2, tmp_path)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["wins"] = arrays["wins"] * 0.5
    np.savez(path, **arrays)
    database._TWO_SIDED.clear()
    assert np.array_equal(database.two_sided(2, tmp_path), wins) and builds == [2, 2]
    assert "fails its checksum" in capsys.readouterr().err
