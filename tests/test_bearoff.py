"""One-sided bear-off database: exact small cases, ranks, and GNU Backgammon's database on every position."""

import json

import numpy as np
import pytest

from tapa_ai.bearoff.one_sided import MAX_TURNS, POSITIONS, build_tables, rank, unrank
from tests.requires import require


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
    gnubg = require("gnubg_nn")
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
        # the shape by the protocol's schema (home[1]: must be an integer 0..15), the sum by the database
        assert response["error"].startswith(("home: must be a list of 6 items", "home[", "'home' must be a list of 6 "
                                             "integers >= 0 summing to at most 15")), (home, response)
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
    monkeypatch.setattr(database, "_LOADED", {})
    wins = database.two_sided(2, tmp_path)
    assert builds == [2] and wins.shape == (28, 28) and wins.dtype == np.float32
    assert "no database at" in capsys.readouterr().err
    database._LOADED.clear()
    assert np.array_equal(database.two_sided(2, tmp_path), wins) and builds == [2]
    path = database.two_sided_path(2, tmp_path)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["wins"] = arrays["wins"] * 0.5
    np.savez(path, **arrays)
    database._LOADED.clear()
    assert np.array_equal(database.two_sided(2, tmp_path), wins) and builds == [2, 2]
    assert "fails its checksum" in capsys.readouterr().err
    # A file of another table size is rebuilt too, and no temporary file is left behind.
    np.savez(path, wins=np.zeros((3, 3), dtype=np.float32), sha256=database._checksum(np.zeros((3, 3), np.float32)),
             format_version=database.FORMAT_VERSION)
    database._LOADED.clear()
    assert np.array_equal(database.two_sided(2, tmp_path), wins) and builds == [2, 2, 2]
    assert "not (28, 28)" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == [path.name]


def test_the_builders_play_enumeration_is_the_reference_rules_legal_moves():
    """one_sided._roll_plays (both builders' one list of the plays of a roll) reaches, once each, exactly the
    homes the reference generator's legal moves reach: every home of up to 5 checkers, every roll."""
    from itertools import product

    from tapa_ai.bearoff.one_sided import _BINOMIAL, _roll_plays
    from tapa_ai.notation.mini import board
    from tapa_ai.rules.reference import legal_moves

    seen = np.full(POSITIONS, -1, dtype=np.int64)
    out = np.zeros(POSITIONS, dtype=np.int64)
    dice = np.zeros(4, dtype=np.int64)
    stamp = 0
    for home in (home for home in product(range(6), repeat=6) if 0 < sum(home) <= 5):
        position = board("backgammon", " ".join(f"{p + 1}:{'X' * n}" for p, n in enumerate(home) if n) + " 24:O")
        for a in range(1, 7):
            for b in range(a, 7):
                stamp += 1
                found = _roll_plays(np.array(home, dtype=np.int64), a, b, _BINOMIAL, dice, seen, stamp, out)
                reached = {rank(tuple(move.position.points[p].count("X") for p in range(6)))
                           for move in legal_moves(position, (a, b))}
                assert sorted(out[:found].tolist()) == sorted(reached), (home, a, b)


# -- evaluation of bear-off positions (tapa_ai.bearoff.evaluate) ------------------------------------
VARIANTS = ("tapa", "plakoto", "backgammon")


def random_home(rng, most=15):
    """A random home board of 1 to ``most`` checkers (counts on the 1- to 6-points)."""
    checkers = int(rng.integers(1, most + 1))
    return tuple(int(n) for n in np.bincount(rng.integers(0, 6, size=checkers), minlength=6))


def bearoff_position(variant, mine, theirs, turn="X"):
    """The position with X's home ``mine`` and O's ``theirs`` (each on its own 1- to 6-points), ``turn`` to move."""
    from tapa_ai.notation.mini import board
    from tapa_ai.rules import variant_rules

    x_home, o_home = (mine, theirs) if turn == "X" else (theirs, mine)
    to_x = variant_rules(variant).opponent_point  # O's point q is X's 25 - q (q + 12 in the running games)
    layout = [f"{point + 1}:{'X' * n}" for point, n in enumerate(x_home) if n]
    layout += [f"{to_x(point + 1)}:{'O' * n}" for point, n in enumerate(o_home) if n]
    return board(variant, " ".join(layout), turn)


def random_bearoffs(variant, count, rng, most=15):
    return [bearoff_position(variant, random_home(rng, most), random_home(rng, most), "XO"[int(rng.integers(2))])
            for _ in range(count)]


def test_bear_off_values_are_in_the_outcome_classes_of_the_rules():
    """The databases value a bear-off in the outcome classes of tapa_ai.rules.outcomes: as many as the rule set
    has (a draw column where it has draws), only singles and gammons ever non-zero."""
    from tapa_ai.bearoff.evaluate import bearoff_distributions
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.notation.mini import board
    from tapa_ai.rules import variant_rules
    from tapa_ai.rules.outcomes import CLASS_NAMES, LOSE_GAMMON, LOSE_SINGLE, WIN_GAMMON, WIN_SINGLE, num_outcomes

    for variant in VARIANTS:
        rules = variant_rules(variant)
        positions = [board(variant, "1:X 2:X 19:OOO 20:OOO 21:OOO 22:OO 23:OO 24:OO"),  # X bears off both: a gammon
                     board(variant, "6:XXXXX 3:XX 20:OOO 19:O")]
        rows, dist = bearoff_distributions(PositionBatch.from_positions(positions))
        assert rows.tolist() == [0, 1] and dist.shape == (2, num_outcomes(rules)) == (2, len(CLASS_NAMES) - (
            0 if rules.has_draws else 1))
        assert np.allclose(dist.sum(axis=1), 1.0)
        assert np.all(np.delete(dist, [WIN_SINGLE, WIN_GAMMON, LOSE_SINGLE, LOSE_GAMMON], axis=1) == 0.0)
        assert dist[0, WIN_GAMMON] == pytest.approx(1.0, abs=1e-6) and dist[1, WIN_GAMMON] == dist[1, LOSE_GAMMON] == 0.0


@pytest.mark.parametrize("variant", VARIANTS)
def test_once_every_checker_is_home_no_contact_comes_back_and_only_singles_and_gammons_end_it(variant):
    """The reference rules: every legal move of every roll from a bear-off is a bear-off again or a win by
    a single or a gammon (a gammon only when the loser has borne off none): never a hit, a pin, a
    backgammon, a mother win or a draw."""
    from tapa_ai.bearoff.evaluate import bearoff_mask
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.rules.reference import legal_moves

    rng = np.random.default_rng(20)
    starts = random_bearoffs(variant, 40, rng)
    starts += [bearoff_position(variant, (0, 0, 0, 5, 5, 5), (0, 0, 0, 0, 0, 15)),
               bearoff_position(variant, (1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 15))]
    rolls = [(a, b) for a in range(1, 7) for b in range(a, 7)]
    assert bearoff_mask(PositionBatch.from_positions(starts)).all()
    kinds = set()
    for position in starts:
        after = [move.position for roll in rolls for move in legal_moves(position, roll)]
        going_on = [p for p in after if p.result is None]
        assert bearoff_mask(PositionBatch.from_positions(going_on)).all() if going_on else True
        for finished in (p for p in after if p.result is not None):
            loser = "O" if position.turn == "X" else "X"
            assert finished.result.kind == ("gammon" if finished.off_count(loser) == 0 else "single")
            kinds.add(finished.result.kind)
    assert kinds == {"single", "gammon"}


def test_mask_is_the_absence_of_every_problem_and_the_problems_name_what_is_missing():
    from tapa_ai.bearoff.evaluate import bearoff_mask, bearoff_problems, exact_mask
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.movegen.random_positions import endgame_positions, mixed_positions
    from tapa_ai.notation.mini import board

    rng = np.random.default_rng(4)
    for variant in VARIANTS:
        batch = endgame_positions(variant, 300, rng)
        built = PositionBatch.from_positions(random_bearoffs(variant, 50, rng))
        assert bearoff_mask(built).all()
        for other in (mixed_positions(variant, 100, rng), built):
            mask, exact = bearoff_mask(other), exact_mask(other)
            assert np.array_equal(mask, bearoff_mask(other.flipped())) and not (exact & ~mask).any()
            assert [not bearoff_problems(other, row) for row in range(len(other))] == mask.tolist()
        mask = bearoff_mask(batch)
        assert 0 < mask.sum() < len(batch)  # the end-game sampler gives both kinds
        assert [not bearoff_problems(batch, row) for row in range(len(batch))] == mask.tolist()

    def problems(variant, layout, turn="X"):
        return bearoff_problems(PositionBatch.from_positions([board(variant, layout, turn)]), 0)

    assert problems("backgammon", "6:XX 8:X 9:X 20:OO") == ["X has 2 checkers outside its home board"]
    assert problems("backgammon", "6:XX bar:O 20:OO") == ["O has 1 checker on the bar"]
    assert problems("tapa", "2:XO 23:O", "O") == ["O has 1 checker outside its home board", "X has 1 checker pinned"]
    assert problems("plakoto", "6:XX 3:X 22:OO 20:O", "O") == []
    six = PositionBatch.from_positions([board("tapa", "6:XXXXXX 19:OOOOOO"), board("tapa", "6:XXXXXXX 19:OOOOOO")])
    assert exact_mask(six).tolist() == [True, False] and bearoff_mask(six).tolist() == [True, True]


def test_vectorized_ranks_and_homes_are_the_one_sided_numbering():
    from tapa_ai.bearoff.evaluate import _ranks, homes
    from tapa_ai.movegen import PositionBatch

    rng = np.random.default_rng(1)
    found = np.array([random_home(rng) for _ in range(500)] + [(0,) * 6, (15, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 15)])
    assert _ranks(found).tolist() == [rank(home) for home in found]
    position = bearoff_position("tapa", (1, 2, 0, 0, 3, 0), (0, 4, 0, 0, 0, 1), "O")
    assert homes(PositionBatch.from_positions([position])).tolist() == [[[1, 2, 0, 0, 3, 0], [0, 4, 0, 0, 0, 1]]]


def plain_one_sided(turns, first_off, mine, theirs, mine_off_none, theirs_off_none):
    """win, win_gammon, lose, lose_gammon by plain loops over the roller's turns K and the other's J."""
    t_mine, t_theirs = turns[rank(mine)].astype(float), turns[rank(theirs)].astype(float)
    f_mine, f_theirs = first_off[rank(mine)].astype(float), first_off[rank(theirs)].astype(float)
    length = len(t_mine)
    win = sum(t_mine[k] * t_theirs[j] for k in range(length) for j in range(length) if k <= j)
    lose = sum(t_mine[k] * t_theirs[j] for k in range(length) for j in range(length) if j < k)
    win_gammon = sum(t_mine[k] * f_theirs[f] for k in range(length) for f in range(length) if k <= f)
    lose_gammon = sum(t_theirs[j] * f_mine[f] for j in range(length) for f in range(length) if f > j)
    total = win + lose
    return (win / total, win_gammon / total * theirs_off_none, lose / total, lose_gammon / total * mine_off_none)


@pytest.mark.parametrize("variant", VARIANTS)
def test_values_are_the_two_sided_table_or_the_plain_one_sided_convolution(variant):
    from tapa_ai.bearoff import evaluate
    from tapa_ai.bearoff.database import one_sided, two_sided
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.notation.mini import board
    from tapa_ai.rules import outcomes, variant_rules

    rng = np.random.default_rng({"tapa": 1, "plakoto": 2, "backgammon": 3}[variant])
    positions = random_bearoffs(variant, 60, rng) + random_bearoffs(variant, 30, rng, most=6)
    contact = board(variant, "7:X 2:X 3:O 21:O")
    batch = PositionBatch.from_positions([contact] + positions)
    rows, dist = evaluate.bearoff_distributions(batch)
    values = evaluate.bearoff_values(batch)
    assert rows.tolist() == list(range(1, len(batch))) and np.array_equal(values.distributions, dist)
    assert dist.dtype == np.float64 and dist.shape[1] == outcomes.num_outcomes(variant_rules(variant))
    np.testing.assert_allclose(dist.sum(axis=1), 1.0, atol=1e-12)
    assert (dist >= 0).all() and not dist[:, [outcomes.WIN_TOP, outcomes.LOSE_TOP]].any() and not dist[:, 6:].any()
    tables, wins = one_sided(progress=False), two_sided()
    exact_seen = 0
    for row, position, value, exact in zip(rows, positions, dist, values.exact):
        mover = position.turn
        other = "O" if mover == "X" else "X"
        mine, theirs = values.homes[row - 1]
        assert exact == (sum(mine) <= 6 and sum(theirs) <= 6)
        if exact:  # the table's chance, exactly; no gammon with 9 or more checkers off
            exact_seen += 1
            chance = min(max(float(wins[rank(mine), rank(theirs)]), 0.0), 1.0)  # the table holds -2e-16 for 0
            assert value[outcomes.WIN_SINGLE] == chance and value[outcomes.LOSE_SINGLE] == 1.0 - chance
            assert value[outcomes.WIN_GAMMON] == value[outcomes.LOSE_GAMMON] == 0.0
        else:
            win, win_gammon, lose, lose_gammon = plain_one_sided(
                tables.turns, tables.first_off, mine, theirs, position.off_count(mover) == 0, position.off_count(other) == 0)
            np.testing.assert_allclose(value[[0, 1, 3, 4]], [win - win_gammon, win_gammon, lose - lose_gammon, lose_gammon],
                                       atol=1e-12)
    assert exact_seen >= 20
    # A gammon by hand: one checker on the 6-point against 15 on the other's 6-point. The roller is off at
    # once with 27 rolls of 36, else surely next turn; in between the other gets a first checker off with
    # 17 rolls of 36 (any 6, 5-1, 4-2, 3-3, 2-2), and can never bear off all 15 first.
    lone = evaluate.bearoff_distributions(PositionBatch.from_positions(
        [bearoff_position(variant, (0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 15))]))[1][0]
    gammon = 27 / 36 + 9 / 36 * 19 / 36
    assert lone[:6].tolist() == pytest.approx([1 - gammon, gammon, 0, 0, 0, 0], abs=1e-7)


def test_bearoff_values_refuse_a_batch_mixing_six_and_seven_classes():
    from tapa_ai.bearoff.evaluate import bearoff_distributions
    from tapa_ai.movegen import PositionBatch

    mixed = PositionBatch.from_positions([bearoff_position("tapa", (1,) * 6, (1,) * 6),
                                          bearoff_position("backgammon", (1,) * 6, (1,) * 6)])
    with pytest.raises(ValueError, match="mixes rule sets"):
        bearoff_distributions(mixed)
    rows, dist = bearoff_distributions(mixed.take(np.array([1])))
    assert rows.tolist() == [0] and dist.shape == (1, 6)


def test_databases_are_loaded_only_when_a_bearoff_is_met(monkeypatch):
    from tapa_ai.bearoff import database, evaluate
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.notation.mini import board

    loads = []
    real_one, real_two = database.one_sided, database.two_sided
    monkeypatch.setattr(evaluate, "_TABLES", {})
    monkeypatch.setattr(database, "one_sided", lambda **kw: loads.append("one") or real_one(**kw))
    monkeypatch.setattr(database, "two_sided", lambda *a, **kw: loads.append("two") or real_two(*a, **kw))
    contact = PositionBatch.from_positions([board("backgammon", "9:X 3:X 5:O 22:O")])
    rows, dist = evaluate.bearoff_distributions(contact)
    assert rows.size == 0 and dist.shape == (0, 6) and loads == []
    exact = PositionBatch.from_positions([bearoff_position("backgammon", (1, 1, 0, 0, 0, 0), (0, 0, 2, 0, 0, 0))])
    evaluate.bearoff_distributions(exact)
    assert loads == ["two"]
    race = PositionBatch.from_positions([bearoff_position("backgammon", (3, 3, 3, 0, 0, 0), (0, 0, 2, 0, 0, 0))])
    evaluate.bearoff_distributions(race)
    evaluate.bearoff_distributions(race)
    assert loads == ["two", "one"]  # once per process


def test_processes_building_at_once_build_once_and_leave_one_whole_file(tmp_path):
    """pytest-xdist workers or a match's worker processes meeting an empty cache together: the lock makes
    one build while the others wait and read its file; the file appears by an atomic rename."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from tapa_ai.bearoff import database; "
            "w = database.two_sided(3, Path(sys.argv[1])); print(float(w.sum()))")
    runs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    assert len({out for out, _ in outputs}) == 1
    assert sum("building" in err for _, err in outputs) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bearoff-two-sided-3-v1.npz",
                                                          "bearoff-two-sided-3-v1.npz.lock"]


# -- the engine's bearoff command on a whole position ---------------------------------------------------
def test_engine_bearoff_position_answers_both_sides_and_the_chances_of_the_side_to_move():
    from tapa_ai.bearoff.database import one_sided
    from tapa_ai.bearoff.evaluate import bearoff_distributions
    from tapa_ai.engine.protocol import Engine
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.rules.outcomes import outcome_names, outcome_points
    from tapa_ai.notation.json_position import position_to_json
    from tapa_ai.rules import variant_rules

    engine = Engine(generator="reference")
    tables = one_sided(progress=False)
    for variant, mine, theirs, turn, exact in (("tapa", (0, 1, 0, 2, 0, 0), (1, 0, 0, 0, 0, 2), "O", True),
                                               ("backgammon", (2, 2, 3, 3, 2, 3), (0, 0, 0, 0, 0, 1), "X", False),
                                               ("plakoto", (0, 0, 0, 0, 0, 15), (0, 0, 0, 0, 0, 2), "X", False)):
        position = bearoff_position(variant, mine, theirs, turn)
        answer = json.loads(engine.handle_line(json.dumps({"cmd": "bearoff", "position": position_to_json(position),
                                                           "id": 7})))
        other = "O" if turn == "X" else "X"
        assert answer["id"] == 7 and answer["turn"] == turn and answer["exact"] is exact
        for side, home in ((turn, mine), (other, theirs)):
            turns, first_off = tables.distributions(home)
            assert answer[side] == {"home": list(home), "turns": pytest.approx(turns), "first_off": pytest.approx(first_off)}
        rules = variant_rules(variant)
        expected = bearoff_distributions(PositionBatch.from_positions([position]))[1][0]
        assert list(answer["probabilities"]) == list(outcome_names(rules))
        assert list(answer["probabilities"].values()) == pytest.approx(expected.tolist(), abs=1e-15)
        assert answer["equity"] == pytest.approx(float(expected @ outcome_points(rules)))
    assert answer["probabilities"]["win_gammon"] == 0.0 and answer["probabilities"]["lose_gammon"] > 0.0


def test_engine_bearoff_position_refuses_contact_and_says_what_is_not_home():
    from tapa_ai.engine.protocol import Engine
    from tapa_ai.notation.json_position import position_to_json
    from tapa_ai.notation.mini import board

    engine = Engine(generator="reference")

    def error(request):
        return json.loads(engine.handle_line(json.dumps({"cmd": "bearoff", **request})))["error"]

    contact = position_to_json(board("backgammon", "6:XX 8:X 9:X 20:OO bar:O"))
    message = error({"position": contact})
    assert "not a bear-off position" in message
    assert "X has 2 checkers outside its home board" in message and "O has 1 checker on the bar" in message
    assert "not both" in error({"position": contact, "home": [1, 0, 0, 0, 0, 0]})
    over = position_to_json(board("backgammon", "20:OO"))
    assert "already over" in error({"position": over})
    assert "'position'" in error({})


def test_engine_evaluate_and_hint_value_bear_offs_as_the_bot_does():
    """The engine's 0-ply evaluate and hint take the database's value in a bear-off, like NetBot plays."""
    from tapa_ai.bearoff.evaluate import bearoff_distributions
    from tapa_ai.bots.spec import make_bot
    from tapa_ai.engine.protocol import Engine
    from tapa_ai.movegen.batch import PositionBatch
    from tapa_ai.movegen.generate import generate
    from tapa_ai.notation.json_position import position_from_json

    points = [""] * 24
    points[0], points[2], points[4] = "X", "XX", "X"
    points[23], points[20] = "OO", "O"
    data = {"variant": "backgammon", "points": points, "off": {"X": 11, "O": 12}, "turn": "X"}
    engine = Engine(bot="net:checkpoints/backgammon.pt")
    answer = engine.handle({"cmd": "evaluate", "position": data})
    position = position_from_json(data)
    _, exact = bearoff_distributions(PositionBatch.from_positions([position]))
    assert answer["exact"] is True
    assert list(answer["probabilities"].values()) == pytest.approx(exact[0].tolist(), abs=1e-12)
    hint = engine.handle({"cmd": "hint", "position": data, "dice": [4, 1], "count": 100, "plies": 0})
    bot = make_bot("net:checkpoints/backgammon.pt")
    afterstates = generate(PositionBatch.from_positions([position]), np.array([[4, 1]], dtype=np.int8))
    best = int(bot.choose(afterstates, np.random.default_rng(0))[0])
    assert hint["moves"][0]["move"] == afterstates.move_text(best) or \
        hint["moves"][0]["equity"] == pytest.approx(hint["moves"][1]["equity"], abs=1e-12)


def test_nobearoff_spec_option_gives_the_pure_network():
    from tapa_ai.bots.base import BotError
    from tapa_ai.bots.spec import make_bot
    from tapa_ai.movegen.batch import PositionBatch
    from tapa_ai.movegen.generate import generate
    from tapa_ai.notation.json_position import position_from_json
    from tapa_ai.rules.options import variant_rules

    points = [""] * 24
    points[1], points[3], points[5] = "XX", "X", "XXX"
    points[22], points[19] = "OO", "OOO"
    position = position_from_json({"variant": "tapa", "points": points, "off": {"X": 9, "O": 10}, "turn": "X"})
    afterstates = generate(PositionBatch.from_positions([position]), np.array([[6, 2]], dtype=np.int8))
    with_db, pure = make_bot("net:checkpoints/tapa.pt"), make_bot("net:checkpoints/tapa.pt,nobearoff")
    assert with_db.bearoff and not pure.bearoff and pure.name.endswith(",nobearoff")
    assert not np.allclose(with_db.evaluate(afterstates), pure.evaluate(afterstates), atol=1e-4)
    with pytest.raises(BotError, match="nobearoff is an option of net: bots"):
        make_bot("heuristic,nobearoff", variant_rules("tapa"))


RUNNING = ("fevga", "narde")


@pytest.mark.parametrize("variant", RUNNING)
def test_running_game_bear_offs_never_meet_again_and_end_in_singles_and_gammons(variant):
    """In the running games the other's home is the mover's points 13-18 (docs/rules.md 8.1): once both sides
    are home, every legal move of every roll leads to a bear-off again or a single or gammon win."""
    from tapa_ai.bearoff.evaluate import bearoff_mask
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.rules.reference import legal_moves

    rng = np.random.default_rng(21)
    starts = random_bearoffs(variant, 25, rng)
    starts += [bearoff_position(variant, (1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 15))]
    assert bearoff_mask(PositionBatch.from_positions(starts)).all()
    kinds = set()
    for position in starts:
        after = [move.position for a in range(1, 7) for b in range(a, 7) for move in legal_moves(position, (a, b))]
        going_on = [p for p in after if p.result is None]
        if going_on:
            assert bearoff_mask(PositionBatch.from_positions(going_on)).all()
        for finished in (p for p in after if p.result is not None):
            loser = "O" if position.turn == "X" else "X"
            assert finished.result.kind == ("gammon" if finished.off_count(loser) == 0 else "single")
            kinds.add(finished.result.kind)
    assert kinds == {"single", "gammon"}


@pytest.mark.parametrize("variant", RUNNING)
def test_running_game_bear_offs_are_valued_as_the_same_homes_in_backgammon(variant):
    """The end game is the same in every variant: a running-game bear-off's distribution, homes and
    exactness equal backgammon's for the same two home boards, from either side's view."""
    from tapa_ai.bearoff.evaluate import bearoff_problems, bearoff_values
    from tapa_ai.movegen import PositionBatch
    from tapa_ai.notation.mini import board

    rng = np.random.default_rng(22)
    pairs = [(random_home(rng, most), random_home(rng, most), "XO"[int(rng.integers(2))])
             for most in (15, 6) for _ in range(30)]
    running = PositionBatch.from_positions([bearoff_position(variant, *pair) for pair in pairs])
    classic = PositionBatch.from_positions([bearoff_position("backgammon", *pair) for pair in pairs])
    for ours, theirs in ((running, classic), (running.flipped(), classic.flipped())):
        mine, reference = bearoff_values(ours), bearoff_values(theirs)
        assert mine.rows.tolist() == reference.rows.tolist() == list(range(len(pairs)))
        assert np.array_equal(mine.homes, reference.homes) and np.array_equal(mine.exact, reference.exact)
        assert np.array_equal(mine.distributions, reference.distributions)
    # O on its 7-point (X's 19) is outside its home; on its 1-point (X's 13) it is home.
    assert bearoff_problems(PositionBatch.from_positions([board(variant, "3:X 19:O")]), 0) == [
        "O has 1 checker outside its home board"]
    assert bearoff_problems(PositionBatch.from_positions([board(variant, "3:X 13:O")]), 0) == []
