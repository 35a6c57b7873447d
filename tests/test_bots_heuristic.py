"""The ``heuristic`` bot: it pins, takes wins, keeps its mother safe, plays every variant and beats the baselines.

Positions are written in the mini-language of ``tapa_ai.notation.mini``
(stacks by X's point number, bottom to top; checkers not placed are borne
off); X is to move, so X's point numbers are the mover's columns + 1.
"""

import numpy as np
import pytest

from tapa_ai.arena.duels import duel, random_policy
from tapa_ai.bots.base import BotError
from tapa_ai.bots.basic import RunnerBot
from tapa_ai.bots.heuristic import HeuristicBot, hit_chances
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.rules import outcomes
from tapa_ai.movegen.random_positions import mixed_positions, random_dice
from tapa_ai.notation import board
from tapa_ai.rules import variant_rules

VARIANTS = ("tapa", "plakoto", "backgammon")


def choice(position, dice, bot=None):
    """(afterstates, chosen row) of the heuristic for one position."""
    bot = bot or HeuristicBot(position.rules)
    afterstates = generate(PositionBatch.from_positions([position]), np.array([dice], dtype=np.int8))
    row = int(bot.choose(afterstates, np.random.default_rng(0))[0])
    assert 0 <= row < len(afterstates)
    return afterstates, row


@pytest.mark.parametrize("variant", ["tapa", "plakoto"])
def test_pins_a_lone_opposing_checker_when_it_can(variant):
    # 10/7 with the 3 pins O's lone checker on X's 7-point; 10/9 10/6 or 10/7/6 would not.
    position = board(variant, "10:XX 14:X 7:O 20:OO 21:OO", "X")
    afterstates, row = choice(position, (3, 1))
    assert (afterstates.positions.pinned == -1).any(axis=1).sum() >= 1  # pinning moves exist
    assert afterstates.positions.pinned[row, 6] == -1, afterstates.move_text(row)


def test_takes_a_mother_win_when_it_can():
    # O's mother is alone on X's 1-point (O's 24-point) and X has left its own 24-point: 4/1 wins 3 points.
    position = board("tapa", "4:XX 8:XX 1:O 20:OO 12:OOO", "X")
    afterstates, row = choice(position, (3, 2))
    assert afterstates.game_over[row] and afterstates.winner[row] == 0
    assert afterstates.result_kind[row] == outcomes.RESULT_MOTHER


@pytest.mark.parametrize("variant", VARIANTS)
def test_bears_off_the_last_checkers_to_win(variant):
    position = board(variant, "2:X 1:X 20:OO", "X")
    afterstates, row = choice(position, (2, 1))
    assert afterstates.game_over[row] and afterstates.winner[row] == 0


def test_keeps_its_mother_safe_when_the_opponent_is_in_range():
    # Two X on the 24-point (O's 1-point); O's checkers 5 and 6 pips away. Moving one off the
    # 24-point leaves the mother alone in direct range; playing the 2-1 with the 13s keeps it safe.
    position = board("tapa", "24:XX 13:XX 18:OOO 19:OO", "X")
    afterstates, row = choice(position, (2, 1))
    assert afterstates.positions.board[row, 23] == 2, afterstates.move_text(row)


def test_does_not_leave_a_lone_checker_in_front_of_the_opponent_needlessly():
    # O's checkers sit on X's 1-point (O's 24-point) ready to pin anything in front of them:
    # 8/5 6/5 makes a point and leaves no lone checker; every other 3-1 leaves one or two.
    position = board("plakoto", "8:X 6:X 13:XXXXX 1:OOO", "X")
    afterstates, row = choice(position, (3, 1))
    blots = (afterstates.positions.board[row] == 1) & (afterstates.positions.pinned[row] == 0)
    assert not blots.any(), afterstates.move_text(row)


def test_hit_chances_counts_direct_and_combined_shots():
    # One opposing checker at column 0 and one target 3 columns ahead, everything open:
    # 3-x (11 rolls), 2-1 (2), 1-1 (1) hit it: 14 of 36.
    sources = np.zeros((1, 24), dtype=bool)
    sources[0, 0] = True
    targets = np.zeros((1, 24), dtype=bool)
    targets[0, 3] = True
    chances = hit_chances(sources, np.ones((1, 24), dtype=bool), targets)
    assert chances[0, 3] == pytest.approx(14 / 36)
    # Blocking the 1 and 2 steps leaves the direct 3s only.
    open_ = np.ones((1, 24), dtype=bool)
    open_[0, 1:3] = False
    assert hit_chances(sources, open_, targets)[0, 3] == pytest.approx(11 / 36)


@pytest.mark.parametrize("variant", VARIANTS)
def test_returns_a_legal_row_for_every_position_of_a_batch(variant):
    rules = variant_rules(variant)
    rng = np.random.default_rng(4)
    batch = mixed_positions(rules, 300, rng)
    afterstates = generate(batch, random_dice(len(batch), rng))
    bot = HeuristicBot(rules)
    scores = bot.scores(afterstates)
    assert scores.shape == (len(afterstates),) and np.isfinite(scores).all()
    rows = bot.choose(afterstates, rng)
    assert rows.shape == (len(batch),)
    assert ((rows >= afterstates.offsets[:-1]) & (rows < afterstates.offsets[1:])).all()
    # A winning move, where there is one, is always taken.
    won = afterstates.game_over & (afterstates.winner == afterstates.positions.turn)
    can_win = np.maximum.reduceat(won, afterstates.offsets[:-1].astype(np.intp))
    assert won[rows][can_win].all()


@pytest.mark.parametrize("variant", VARIANTS)
def test_beats_the_runner_and_random_bots(variant):
    rules = variant_rules(variant)
    bot = HeuristicBot(rules)
    for opponent in (RunnerBot(), random_policy):
        result = duel(rules, bot, opponent, pairs=60, seed=17)
        assert result.unfinished == 0
        assert result.ppg_ci95[0] > 0.5, (variant, opponent, result.summary())


def test_plays_every_variant_and_any_custom_rule_set():
    for variant in VARIANTS:
        HeuristicBot(variant_rules(variant)).check_rules(variant_rules(variant))
    custom = variant_rules("tapa").replace(name="tapa-nomother", mother_points=0)
    afterstates, row = choice(board(custom, "24:XX 13:XX 18:OOO 19:OO", "X"), (2, 1), HeuristicBot(custom))
    assert 0 <= row < len(afterstates)


def test_bot_spec_builds_the_heuristic():
    from tapa_ai.bots.spec import make_bot

    bot = make_bot("heuristic", variant_rules("plakoto"))
    assert isinstance(bot, HeuristicBot) and bot.name == "heuristic"
    with pytest.raises(BotError):
        make_bot("heuristic")  # it needs to know the rules
