"""``pubeval`` and ``gnubg:N`` against the ``gnubg_nn`` package they wrap (skipped where it is not installed,
failed under ``CI=true``: tests/requires.py).

Both bots get only afterstates; the tests hand ``gnubg_nn`` the real source
positions and dice and check that the bots choose the same resulting
positions as ``pub_best_move`` and ``bestmove``.
"""

import sys

import numpy as np
import pytest

from tapa_ai.bots.base import BotError, one_position_afterstates
from tapa_ai.bots.spec import make_bot
from tapa_ai.bots.gnubg import GnubgBot, dice_of, gnubg_boards
from tapa_ai.bots.pubeval import PubevalBot, contact_flags, pubeval_scores
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.movegen.random_positions import mixed_positions, random_dice
from tapa_ai.notation import board
from tapa_ai.rules import start_position, variant_rules
from tests.requires import require

BACKGAMMON = variant_rules("backgammon")


@pytest.fixture(scope="module")
def gnubg():
    return require("gnubg_nn")


@pytest.fixture(scope="module")
def played():
    """500 random backgammon positions (openings to bear-offs), their dice and all afterstates."""
    rng = np.random.default_rng(23)
    batch = mixed_positions(BACKGAMMON, 500, rng)
    dice = random_dice(len(batch), rng)
    return batch, dice, generate(batch, dice)


def source_board(batch, index):
    """The gnubg board of position ``index`` of a batch, with its side to move on roll."""
    mover, opponent = gnubg_boards(batch)[index].tolist()
    return [opponent, mover]


def play_pubeval_move(board_, flat):
    """The gnubg board ``[mover, opponent]`` after ``pub_best_move``'s move (0-based from/to, -1 = off)."""
    opponent, mover = [list(half) for half in board_]
    for start, end in zip(flat[::2], flat[1::2]):
        mover[start] -= 1
        if end >= 0:
            mover[end] += 1
            if opponent[23 - end] == 1:
                opponent[23 - end] = 0
                opponent[24] += 1
    return [mover, opponent]


def test_pubeval_tables_reproduce_pub_eval_score(gnubg, played):
    _, _, afterstates = played
    boards = gnubg_boards(afterstates.positions).tolist()
    direct = np.array([gnubg.pub_eval_score(b) for b in boards])
    ours = pubeval_scores(afterstates.positions, contact_flags(afterstates.positions))
    live = ~afterstates.game_over
    assert np.abs(direct - ours)[live].max() < 1e-3


def test_pubeval_plays_every_opening_roll_like_pub_best_move(gnubg):
    bot = PubevalBot(BACKGAMMON)
    start = PositionBatch.from_positions([start_position(BACKGAMMON)])
    rolls = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
    afterstates = generate(start.take(np.zeros(len(rolls), dtype=np.int64)), np.array(rolls, dtype=np.int8))
    rows = bot.choose(afterstates, np.random.default_rng(0))
    boards = gnubg_boards(afterstates.positions)
    for index, (d1, d2) in enumerate(rolls):
        expected = play_pubeval_move(source_board(start, 0), gnubg.pub_best_move(source_board(start, 0), d1, d2))
        assert boards[rows[index]].tolist() == expected, (d1, d2, afterstates.move_text(rows[index]))


def test_pubeval_agrees_with_pub_best_move_on_random_positions(gnubg, played):
    batch, dice, afterstates = played
    rows = PubevalBot(BACKGAMMON).choose(afterstates, np.random.default_rng(1))
    boards = gnubg_boards(afterstates.positions)
    checked = 0
    for index in range(len(batch)):
        if afterstates.offsets[index + 1] - afterstates.offsets[index] == 1:
            continue
        source = source_board(batch, index)
        expected = play_pubeval_move(source, gnubg.pub_best_move(source, int(dice[index, 0]), int(dice[index, 1])))
        assert boards[rows[index]].tolist() == expected, (index, afterstates.move_text(rows[index]))
        checked += 1
    assert checked > 400


def gnubg_agrees(gnubg, bot, batch, dice, afterstates, count):
    part = afterstates.of_sources(np.arange(count))
    rows = bot.choose(part, np.random.default_rng(2))
    boards = gnubg_boards(afterstates.positions)
    for index in range(count):
        if afterstates.offsets[index + 1] - afterstates.offsets[index] == 1:
            continue
        source = source_board(batch, index)
        # Moves of exactly equal equity (won races, ...) come out in the order of the dice.
        expected = [np.asarray(gnubg.boardfromkey(gnubg.bestmove(source, int(a), int(b), n=bot.plies, b=1)[1]))
                    for a, b in (dice[index], dice[index, ::-1])]
        got = boards[rows[index]]  # the first positions keep their rows in the subset
        assert any((got == want).all() for want in expected), (index, part.move_text(rows[index]))


def test_gnubg_0ply_agrees_with_bestmove_on_random_positions(gnubg, played):
    batch, dice, afterstates = played
    gnubg_agrees(gnubg, GnubgBot(BACKGAMMON, 0), batch, dice, afterstates, len(batch))


def test_gnubg_1ply_agrees_with_bestmove(gnubg, played):
    batch, dice, afterstates = played
    gnubg_agrees(gnubg, GnubgBot(BACKGAMMON, 1), batch, dice, afterstates, 25)


def test_gnubg_finds_the_unplayable_die(gnubg):
    # Only the 3 can be played (13/10 or 12/9); every 6 is blocked. The rows show one die, and the
    # other is found by asking gnubg which second die gives exactly these moves.
    position = board("backgammon", "13:X 12:X 10:X 7:OO 6:OO 4:OO 3:OO", "X")
    afterstates = generate(PositionBatch.from_positions([position]), np.array([[6, 3]], dtype=np.int8))
    assert len(afterstates) == 2 and dice_of(afterstates, 0) == (3, None)
    bot = GnubgBot(BACKGAMMON, 0)
    row = int(bot.choose(afterstates, np.random.default_rng(0))[0])
    source = source_board(PositionBatch.from_positions([position]), 0)
    want = np.asarray(gnubg.boardfromkey(gnubg.bestmove(source, 6, 3, b=1)[1]))
    assert (gnubg_boards(afterstates.positions)[row] == want).all()


def test_gnubg_rebuilds_the_source_position_and_dice(gnubg, played):
    batch, dice, afterstates = played
    bot = GnubgBot(BACKGAMMON, 0)
    boards = gnubg_boards(afterstates.positions)
    for index in range(0, len(batch), 5):
        if afterstates.offsets[index + 1] - afterstates.offsets[index] == 1:
            continue
        source, d1, d2 = bot._source_and_dice(afterstates, index, boards)
        assert set(gnubg.moves(source, d1, d2)) == set(gnubg.moves(source_board(batch, index), *map(int, dice[index])))
        first, second = dice_of(afterstates, index)
        if second is not None:
            assert sorted((first, second)) == sorted(map(int, dice[index]))


def test_a_single_legal_move_is_played_without_asking_gnubg(gnubg):
    class NoGnubg:
        def __getattr__(self, name):
            raise AssertionError("gnubg was asked")

    bot = GnubgBot(BACKGAMMON, 2)
    bot.gnubg = NoGnubg()
    position = board("backgammon", "bar:XX 1:XX 19:OO 20:OO 21:OO 22:OO 23:OO", "X")
    afterstates = generate(PositionBatch.from_positions([position]), np.array([[6, 1]], dtype=np.int8))
    assert len(afterstates) == 1
    assert bot.choose(afterstates, np.random.default_rng(0)).tolist() == [0]


def test_names_and_wrong_variants(gnubg):
    assert PubevalBot(BACKGAMMON).name == "pubeval"
    assert GnubgBot(BACKGAMMON, 1).name == "gnubg:1"
    for variant in ("tapa", "plakoto"):
        with pytest.raises(BotError, match="backgammon"):
            PubevalBot(variant_rules(variant))
        with pytest.raises(BotError, match="backgammon"):
            GnubgBot(variant_rules(variant), 0)
    with pytest.raises(BotError):
        GnubgBot(BACKGAMMON, 3)


def test_missing_package_is_a_bot_error_saying_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gnubg_nn", None)  # import gnubg_nn now raises ImportError
    with pytest.raises(BotError, match="pip install gnubg-nn"):
        GnubgBot(BACKGAMMON, 0)
    with pytest.raises(BotError, match="pip install gnubg-nn"):
        PubevalBot(BACKGAMMON)


# --- Portes (docs/rules.md 9): gnubg's probabilities valued with Portes' points ---------------------------------

PORTES = variant_rules("portes")


def test_gnubg_valuing_backgammon_points_by_probabilities_agrees_with_bestmove(gnubg, played):
    # The Portes path's equity with backgammon's points is gnubg's own cubeless equity: the same 0-ply choices
    # as bestmove (up to ties between moves of equal equity), so the boards are read from the right side.
    batch, dice, afterstates = played
    bot = GnubgBot(BACKGAMMON, 0)
    boards = gnubg_boards(afterstates.positions)
    compared = 0
    for index in range(120):
        lo, hi = int(afterstates.offsets[index]), int(afterstates.offsets[index + 1])
        if hi - lo < 2 or afterstates.game_over[lo:hi].any():
            continue
        equities = bot.afterstate_equities(afterstates, np.arange(lo, hi), 0)
        source = source_board(batch, index)
        want = np.asarray(gnubg.boardfromkey(gnubg.bestmove(source, int(dice[index, 0]), int(dice[index, 1]),
                                                            n=0, b=1)[1]))
        mine = [row for row in range(lo, hi) if (boards[row] == want).all()]
        assert len(mine) == 1
        assert equities[mine[0] - lo] >= equities.max() - 1e-6
        compared += 1
    assert compared > 60


def test_gnubg_plays_portes_with_a_backgammon_counting_as_a_gammon(gnubg):
    bot = GnubgBot(PORTES, 0)
    assert bot.by_points and not GnubgBot(BACKGAMMON, 0).by_points
    # Mover X bears off its last checker while O still has a checker in X's home board: a backgammon in
    # backgammon (3 points), a gammon in Portes (2).
    position = board(PORTES, "1:X 2:O 20:OOOOOOOOOOOOOO", turn="X")
    afterstates = one_position_afterstates(position, (6, 5))
    assert afterstates.game_over.all()
    assert bot.afterstate_equities(afterstates, np.arange(len(afterstates)), 0).tolist() == [2.0] * len(afterstates)


def test_gnubg_portes_equity_drops_the_backgammon_term(gnubg, played):
    batch, dice, afterstates = played
    rows = np.flatnonzero(~afterstates.game_over)[:40]
    portes = GnubgBot(PORTES, 0).afterstate_equities(afterstates, rows, 0)  # games going on: boards only
    money = GnubgBot(BACKGAMMON, 0).afterstate_equities(afterstates, rows, 0)
    boards = gnubg_boards(afterstates.positions.take(rows)).tolist()
    for k, board_ in enumerate(boards):
        win, win_gammon, win_bg, lose_gammon, lose_bg = gnubg.probabilities(board_, 0)
        assert portes[k] == pytest.approx(-(2 * win - 1 + win_gammon - lose_gammon))
        assert money[k] == pytest.approx(portes[k] - (win_bg - lose_bg))


def test_gnubg_plays_portes_games_and_refuses_other_board_games(gnubg):
    from tapa_ai.arena.duels import duel

    summary = duel(PORTES, GnubgBot(PORTES, 0), make_bot("heuristic", PORTES), 2, seed=4).summary()
    assert summary["games"] == 4
    with pytest.raises(BotError, match="plays only backgammon's board game .*not 'plakoto'"):
        make_bot("gnubg:0", variant_rules("plakoto"))
