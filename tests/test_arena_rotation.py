"""Players of a rotation (tapa_ai.bots.rotation) and a rotation's matches in the arena (tapa_ai.arena.rotation,
``match --tavli N``, ``--tabla N``, ``--rotation GAMES --length N``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tapa_ai.arena.rotation import play_rotation_pairs
from tapa_ai.bots.base import BotError
from tapa_ai.bots.rotation import make_rotation_player, rotation_models, rotation_specs
from tapa_ai.rules import outcomes
from tapa_ai.rules.rotations import ROTATIONS, parse_rotation

TAVLI, TABLA = ROTATIONS["tavli"], ROTATIONS["tabla"]
TAVLI_ROTATION = TAVLI.variants


def tavli_specs(spec: str) -> tuple:
    return tuple(rotation_specs(spec, TAVLI).values())


def make_tavli_player(spec: str):
    return make_rotation_player(spec, TAVLI)


def play_tavli_pairs(players_a, players_b, pairs, seed, match_length):
    return play_rotation_pairs(players_a, players_b, pairs, seed, match_length, TAVLI)


# -- specs ------------------------------------------------------------------------------------------------
def test_net_tavli_is_the_shipped_backgammon_plakoto_and_fevga_models():
    assert rotation_models(TAVLI) == ("net:backgammon", "net:plakoto", "net:fevga")
    assert tavli_specs("net:tavli") == tavli_specs("net:rotation") == rotation_models(TAVLI)
    assert tavli_specs("net:tavli@1ply,nocube") == ("net:backgammon@1ply,nocube", "net:plakoto@1ply,nocube",
                                                    "net:fevga@1ply,nocube")


def test_tavli_spec_gives_a_bot_per_game_in_rotation_order():
    assert tavli_specs("tavli:net:backgammon,heuristic,net:fevga") == ("net:backgammon", "heuristic", "net:fevga")


def test_options_after_a_comma_belong_to_the_spec_before_them():
    assert tavli_specs("tavli:net:backgammon,points=backgammon,heuristic,net:fevga@1ply,wins,nocube") == (
        "net:backgammon,points=backgammon", "heuristic", "net:fevga@1ply,wins,nocube")
    assert tavli_specs("tavli:random,net:plakoto,refine=2:0.04,cube_life=0.5,runner") == (
        "random", "net:plakoto,refine=2:0.04,cube_life=0.5", "runner")


def test_a_plain_spec_plays_all_three_games():
    assert tavli_specs(" heuristic ") == ("heuristic",) * 3


@pytest.mark.parametrize("spec", ["tavli:heuristic,random", "tavli:a,b,c,d", "tavli:heuristic,,random", "tavli:"])
def test_a_tavli_spec_without_three_bots_is_one_error_line(spec):
    with pytest.raises(BotError, match=r"want tavli:PORTES,PLAKOTO,FEVGA") as error:
        tavli_specs(spec)
    assert "\n" not in str(error.value)


def test_an_engine_spec_cannot_be_one_of_the_three():
    with pytest.raises(BotError, match="engine: spec"):
        tavli_specs("tavli:heuristic,engine:foo,random")


def test_a_spec_that_cannot_play_a_game_names_that_game():
    with pytest.raises(BotError, match=r"'net:plakoto' cannot play portes \(game 1 of the rotation tavli") as error:
        make_tavli_player("net:plakoto")
    assert "\n" not in str(error.value)
    with pytest.raises(BotError, match=r"cannot play fevga \(game 3 of the rotation tavli"):
        make_tavli_player("tavli:heuristic,random,net:plakoto")


def test_a_tavli_player_holds_a_bot_per_variant():
    player = make_tavli_player("tavli:heuristic,random,runner")
    assert {variant: bot.name for variant, bot in player.players.items()} == {
        "portes": "heuristic", "plakoto": "random", "fevga": "runner"}
    player.close()


# -- matches ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def records():
    a = make_tavli_player("heuristic")
    b = make_tavli_player("runner")
    return play_tavli_pairs(a.players, b.players, pairs=4, seed=[7, 0], match_length=5)


def test_games_of_every_match_rotate_portes_plakoto_fevga(records):
    for slot in range(records.slots):
        games = records.game[records.slot == slot]
        assert games.tolist() == list(range(games.size))
    assert records.variants()[:3] == list(TAVLI_ROTATION)


def test_each_match_ends_when_a_side_reaches_the_length_and_not_before(records):
    for slot in range(records.slots):
        rows = records.slot == slot
        points = records.points_for_a[rows]
        a_total = points[points > 0].sum()
        b_total = -points[points < 0].sum()
        assert (a_total, b_total) == tuple(records.match_points[slot])
        assert max(a_total, b_total) >= 5
        before_last = points[:-1]
        assert max(before_last[before_last > 0].sum(), -before_last[before_last < 0].sum()) < 5
        assert records.match_a_won[slot] == (a_total >= 5)
    assert not records.match_unfinished.any()


def test_the_winner_opens_the_next_game_and_a_draw_is_followed_by_an_opening_roll(records):
    draw = outcomes.RESULT_DRAW
    for slot in range(records.slots):
        rows = np.flatnonzero(records.slot == slot)
        for before, after in zip(rows[:-1], rows[1:]):
            if records.kind[before] != draw:
                assert records.a_opened[after] == records.a_won[before]


def test_first_games_of_a_pair_open_on_the_same_roll_with_sides_swapped(records):
    first = records.game == 0
    seat0_opened = records.a_opened[first] == (records.slot[first] % 2 == 0)
    assert (seat0_opened[0::2] == seat0_opened[1::2]).all()


def test_each_game_scores_its_kind_under_its_rules(records):
    points = np.abs(records.points_for_a)
    kinds = [outcomes.RESULT_KINDS[int(code)] for code in records.kind]
    expected = {"single": 1, "gammon": 2, "mother": 2, "draw": 0}
    assert [expected[kind] for kind in kinds] == points.astype(int).tolist()
    assert "backgammon" not in kinds  # Portes counts a backgammon as a gammon


def test_matches_depend_on_the_seed_only(records):
    a = make_tavli_player("heuristic")
    b = make_tavli_player("runner")
    again = play_tavli_pairs(a.players, b.players, pairs=4, seed=[7, 0], match_length=5)
    assert np.array_equal(again.points_for_a, records.points_for_a)
    assert np.array_equal(again.match_points, records.match_points)


def test_chunks_join_into_one_numbering_of_the_matches_whatever_the_workers():
    """run_rotation_match plays chunks of pairs (in worker processes) and joins their records: every match once,
    numbered in order, the same records with one worker or two; a length past the Tavli table is refused."""
    from tapa_ai.arena.rotation import run_rotation_match

    one = run_rotation_match("heuristic", "runner", TABLA, 3, 12, seed=5, workers=1, chunk_pairs=2, progress=False)
    two = run_rotation_match("heuristic", "runner", TABLA, 3, 12, seed=5, workers=2, chunk_pairs=2, progress=False)
    assert one.records.slots == 12 and sorted(set(one.records.slot.tolist())) == list(range(12))
    assert np.all(np.diff(one.records.slot) >= 0)
    for name in ("slot", "game", "points_for_a", "kind", "a_opened", "match_points", "match_a_won"):
        assert np.array_equal(getattr(one.records, name), getattr(two.records, name)), name
    with pytest.raises(BotError, match="tabla match length 26: a rotation's match .* is to 1 to 25 points"):
        run_rotation_match("heuristic", "runner", TABLA, 26, 2, progress=False)


# -- the command --------------------------------------------------------------------------------------------
def test_match_tavli_reports_match_wins_and_records_each_games_variant(tmp_path, capsys):
    from tapa_ai.cli import main

    out = tmp_path / "tavli.json"
    assert main(["match", "heuristic", "tavli:runner,runner,runner", "--tavli", "3", "--matches", "4",
                 "--workers", "1", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "4 matches to 3 in duplicate pairs" in printed and "A wins the match" in printed
    data = json.loads(out.read_text())
    assert data["rotation"] == "tavli" and data["matches"] == 4 and data["rotation_games"] == list(TAVLI_ROTATION)
    rows = out.with_suffix(".csv").read_text().splitlines()
    assert rows[0].split(",")[4] == "variant"
    cells = [row.split(",") for row in rows[1:]]
    assert {cell[0] for cell in cells} == {"0", "1", "2", "3"}
    assert all(cell[4] == TAVLI_ROTATION[int(cell[3]) % 3] for cell in cells)
    assert {cell[8] for cell in cells} <= {"single", "gammon", "mother", "draw"}


@pytest.mark.parametrize("extra, message", [(["--variant", "portes"], "takes no --variant"),
                                            (["--cube"], "takes no --cube"),
                                            (["--matches", "1"], "at least one pair")])
def test_match_tavli_refuses_options_it_cannot_use(extra, message, capsys):
    from tapa_ai.cli import main

    code = main(["match", "heuristic", "random", "--tavli", "3", "--quiet", *extra])
    assert code != 0
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("length", ["26", "-2"])
def test_match_tavli_length_is_within_the_tavli_match_equity_table(length, capsys):
    """A Tavli match longer than the table (25 points) is refused up front, as tapa-ai play refuses it, not
    after games are played, in the table."""
    from tapa_ai.cli import main

    assert main(["match", "net:tavli", "net:tavli", "--tavli", length, "--matches", "2", "--quiet"]) != 0
    err = capsys.readouterr().err.strip()
    assert err == (f"tapa-ai match: --tavli {length}: a rotation's match (Tavli, Tabla) is to 1 to 25 points, its "
                   "match equity table's (3, 5 or 7 are usual)")


def test_match_tavli_with_a_bot_that_cannot_play_a_game_is_one_error_line(capsys):
    from tapa_ai.cli import main

    assert main(["match", "tavli:heuristic,net:fevga,random", "random", "--tavli", "3", "--matches", "2",
                 "--quiet"]) != 0
    err = capsys.readouterr().err.strip()
    assert "cannot play plakoto (game 2 of the rotation tavli" in err and len(err.splitlines()) == 1


# -- the arena's match bookkeeping, with scripted game results ------------------------------------------------
class ScriptedGames:
    """Stands in for the arena's game runner: every game ``g`` of every match ends as ``SCRIPT[g]`` says,
    (winner "A" / "B" / None for a draw, result kind); records who was to open each game and the score (what A
    and B still need) it was played at."""

    SCRIPT = [("A", "single"), (None, "draw"), ("B", "gammon"), ("A", "gammon")]
    started: list = []

    def __init__(self, players, rng, slots, max_turns, dice, away, number, table) -> None:
        self.number = len(type(self).started)
        assert number == self.number
        self.away = away.copy()
        self.variant = players[0]
        self.points = np.zeros(slots, dtype=np.int64)
        self.a_won = np.zeros(slots, dtype=bool)
        self.kind = np.zeros(slots, dtype=np.int8)
        self.plies = np.zeros(slots, dtype=np.int64)

    def start(self, games, positions, a_moves) -> None:
        type(self).started.append((self.variant, games.copy(), a_moves.copy(), self.away[games]))
        self.games = games

    def run(self) -> None:
        winner, kind = self.SCRIPT[self.number]
        self.kind[self.games] = outcomes.RESULT_KINDS.index(kind)
        self.points[self.games] = {"single": 1, "gammon": 2, "draw": 0}[kind]
        self.a_won[self.games] = winner == "A"
        self.plies[self.games] = 10


def test_a_draw_scores_nothing_moves_the_rotation_on_and_the_next_game_opens_by_the_roll(monkeypatch):
    import tapa_ai.arena.rotation as arena_rotation

    ScriptedGames.started = []
    monkeypatch.setattr(arena_rotation, "_RotationGame", ScriptedGames)
    names = {variant: variant for variant in TAVLI_ROTATION}  # the policies' stand-ins: their variant
    records = play_tavli_pairs(names, names, pairs=8, seed=3, match_length=3)
    started = ScriptedGames.started
    assert [variant for variant, *_ in started] == ["portes", "plakoto", "fevga", "portes"]
    seat0_is_a = np.arange(16) % 2 == 0
    for number in (0, 2):  # the first game, and the game after the draw: the opening roll, the same in a pair
        seat0_opens = started[number][2] == seat0_is_a
        assert (seat0_opens[0::2] == seat0_opens[1::2]).all()
    # The score each game is played at (A, B still need): 3-3, then A's single, the draw, B's gammon.
    assert [tuple(np.unique(start[3], axis=0).ravel()) for start in started] == [(3, 3), (2, 3), (2, 3), (2, 1)]
    assert started[1][2].all()  # A won game 0: A opens game 1
    assert not started[3][2].any()  # B won game 2: B opens game 3
    assert (records.match_points == [3, 2]).all() and records.match_a_won.all()
    assert [int(records.points_for_a[k]) for k in range(4)] == [1, 0, -2, 2]
    assert records.summary()["draws"] == 8 * 2 and records.summary()["mean_games_per_match"] == 4


def test_a_game_past_the_turn_limit_leaves_its_match_unfinished_half_a_win_to_each(monkeypatch):
    import tapa_ai.arena.rotation as arena_rotation

    class Stuck(ScriptedGames):
        def run(self) -> None:  # the game still going at the turn limit: no result
            self.plies[self.games] = 2000

    Stuck.started = []
    monkeypatch.setattr(arena_rotation, "_RotationGame", Stuck)
    names = {variant: variant for variant in TAVLI_ROTATION}
    records = play_tavli_pairs(names, names, pairs=2, seed=3, match_length=3)
    assert records.match_unfinished.all() and not records.match_a_won.any()
    assert records.kind.tolist() == [0, 0, 0, 0]  # one game each, then abandoned
    assert records.summary()["match_win_rate"] == 0.5


@pytest.mark.parametrize("spec", ["net:tavli", "net:tavli@1ply", "tavli:heuristic,random,runner", "net:tabla",
                                  "tabla:heuristic,random,runner", "net:rotation,money_play", "rotation:random"])
def test_a_rotation_player_outside_a_rotation_match_is_one_error_line(spec):
    from tapa_ai.bots.spec import make_bot
    from tapa_ai.rules.options import variant_rules

    with pytest.raises(BotError, match=r"is a rotation's player .* use it with tapa-ai match --tavli/--tabla/--rotation"):
        make_bot(spec, variant_rules("portes"))


# -- Tabla and any rotation ---------------------------------------------------------------------------------------
def test_net_tabla_is_the_shipped_backgammon_gulbara_and_tapa_models():
    assert rotation_specs("net:tabla", TABLA) == {"backgammon": "net:backgammon", "gulbara": "net:gulbara",
                                                  "tapa": "net:tapa"}
    assert rotation_specs("net:tabla@1ply,money_play", TABLA)["gulbara"] == "net:gulbara@1ply,money_play"
    assert rotation_specs("tabla:heuristic,net:gulbara,wins,random", TABLA) == {
        "backgammon": "heuristic", "gulbara": "net:gulbara,wins", "tapa": "random"}
    player = make_rotation_player("net:tabla", TABLA)
    assert {v: b.rules for v, b in player.players.items()} == {v: TABLA.rules_of(v) for v in TABLA.variants}
    player.close()


@pytest.mark.parametrize("spec, rotation, message", [
    ("net:tavli", TABLA, "plays the tavli rotation .* but the match is tabla"),
    ("tabla:heuristic,random,runner", TAVLI, "plays the tabla rotation"),
    ("tabla:heuristic,random", TABLA, r"want tabla:BACKGAMMON,GULBARA,TAPA \(3 bot specs"),
    ("rotation:heuristic,random,runner", parse_rotation("tapa,fevga"), r"want rotation:TAPA,FEVGA \(2 bot specs"),
    ("rotation:heuristic,random,runner", parse_rotation("tapa,fevga,tapa"), "tapa comes twice in the rotation with "
                                                                            "two bots"),
    ("net:plakoto", TABLA, "cannot play backgammon"),
])
def test_a_rotation_player_that_does_not_fit_its_rotation_is_one_line(spec, rotation, message):
    with pytest.raises(BotError, match=message) as error:
        make_rotation_player(spec, rotation).close()
    assert "\n" not in str(error.value)


def test_tabla_matches_rotate_backgammon_gulbara_tapa_and_score_each_games_points():
    a, b = make_rotation_player("heuristic", TABLA), make_rotation_player("runner", TABLA)
    records = play_rotation_pairs(a.players, b.players, pairs=3, seed=[2, 0], match_length=7, rotation=TABLA)
    for slot in range(records.slots):
        games = records.game[records.slot == slot]
        assert games.tolist() == list(range(games.size))
    variants = records.variants()
    assert all(v == TABLA.variants[g % 3] for v, g in zip(variants, records.game))
    assert {"backgammon", "gulbara", "tapa"} <= set(variants)
    points = np.abs(records.points_for_a).astype(int)
    for variant, kind, value in zip(variants, records.kind, points):
        name = outcomes.RESULT_KINDS[int(kind)]
        assert value == {"single": 1, "gammon": 2, "backgammon": 3, "mother": 3, "draw": 0}[name], (variant, name)
        assert name != "mother" or variant == "tapa"
    summary = records.summary()
    assert set(summary["variants"]) == {"backgammon", "gulbara", "tapa"}


def test_match_tabla_and_rotation_commands(tmp_path, capsys):
    from tapa_ai.cli import main

    out = tmp_path / "tabla.json"
    assert main(["match", "heuristic", "runner", "--tabla", "3", "--matches", "4", "--workers", "1", "--quiet",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Tabla: backgammon, gulbara, tapa in turn; 4 matches to 3" in printed
    data = json.loads(out.read_text())
    assert data["rotation"] == "tabla" and data["rotation_games"] == ["backgammon", "gulbara", "tapa"]
    assert main(["match", "heuristic", "runner", "--rotation", "tapa,fevga", "--length", "2", "--matches", "2",
                 "--workers", "1", "--quiet", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rotation"] == ["tapa", "fevga"] and data["match_length"] == 2 and data["matches"] == 2


@pytest.mark.parametrize("args, message", [
    (["--rotation", "tapa,chess", "--length", "3"], "--rotation tapa,chess: unknown variant 'chess' in the rotation"),
    (["--rotation", "tapa,fevga"], "--rotation tapa,fevga: give the match's points with --length N"),
    (["--length", "3"], "--length 3 is the points of a --rotation match"),
    (["--tabla", "3", "--tavli", "3"], "--tavli and --tabla: give one rotation"),
    (["--tabla", "30"], "--tabla 30: a rotation's match (Tavli, Tabla) is to 1 to 25 points"),
    (["--rotation", "tabla", "--length", "0"], "is to 1 to 25 points"),
    (["--tabla", "0"], "--tabla 0: a rotation's match (Tavli, Tabla) is to 1 to 25 points"),
    (["--rotation", "", "--length", "3"], "--rotation '': an empty rotation"),
])
def test_bad_rotation_options_are_one_line(args, message, capsys):
    from tapa_ai.cli import main

    assert main(["match", "heuristic", "runner", *args, "--matches", "2", "--quiet"]) != 0
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
