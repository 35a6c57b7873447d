"""Turns as plans of stages (docs/rules.md 2 and 10.2): the vectorized generator, the search, the TD targets and
the game flow handle a decision followed by the same side's decision.

The reference generator's cascades are checked against an independent implementation in
tests/test_gulbara_vs_independent.py; here the fast paths are checked against the reference: the same
afterstates **and** the same next decision (who plays next, turn counts, pending stage) on random and
adversarial Gul Bara positions under every remainder rule, and the parts that consume them (search, TD(lambda)
returns, online traces, the runner, the flow) by values worked out by hand.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tapa_ai.flow.game import GameState
from tapa_ai.movegen import PositionBatch, concatenate, generate
from tapa_ai.movegen.differential import compare_with_reference
from tapa_ai.movegen.random_positions import endgame_positions, playout_positions, random_dice
from tapa_ai.rules.options import GULBARA, VARIANTS
from tapa_ai.rules.position import start_position
from tapa_ai.rules.reference import legal_moves, next_turn
from tapa_ai.rules.turns import Cascade, roll_plan
from tapa_ai.training.selfplay import lambda_returns

RULE_SETS = {
    "gulbara": GULBARA,
    "opponent": GULBARA.replace(name="gulbara-opponent", cascade_remainder="opponent"),
    "cascade-at-once": GULBARA.replace(name="gulbara-now", cascade_remainder="opponent", plain_double_turns=0),
}


def with_decisions(batch: PositionBatch, rng: np.random.Generator) -> PositionBatch:
    """``batch`` with random turn counts and, for about half its positions, a random pending stage (a remainder
    only where the rule set hands remainders to the opponent; an own stage only after the plain turns)."""
    batch = batch.take(np.arange(len(batch)))
    for row in range(len(batch)):
        rules = batch.rules[batch.rules_id[row]]
        plain = rules.plain_double_turns
        batch.turns[row] = rng.integers(0, plain + 1, size=2)
        if rng.random() < 0.5:
            remainder = rules.cascade_remainder == "opponent" and rng.random() < 0.5
            if not remainder:
                batch.turns[row, 0] = plain
            batch.stage[row] = (rng.integers(1, 7), rng.integers(1, 5) if remainder else 4, remainder)
    return batch


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_the_vectorized_generator_sets_each_afterstates_next_decision_as_the_reference_does(name):
    rules = RULE_SETS[name]
    rng = np.random.default_rng([62, sorted(RULE_SETS).index(name)])
    pools = [playout_positions(rules, 120, rng, "uniform", games=12),
             with_decisions(playout_positions(rules, 80, rng, "contact", games=8), rng),
             with_decisions(endgame_positions(rules, 100, rng), rng)]
    batch = concatenate(pools)
    dice = random_dice(len(batch), rng)
    dice[::3] = dice[::3, :1]  # many doubles: the cascades' first stages
    staged = int((batch.stage[:, 0] > 0).sum())
    assert staged > 60, staged  # playouts stop inside cascades too, and the built ones add more
    seen, mismatches = compare_with_reference(batch, dice)
    assert seen > 500 and mismatches == [], mismatches[:2]


def test_a_remainder_stage_of_fewer_than_four_steps_plays_exactly_its_steps():
    rules = RULE_SETS["opponent"]
    # O's checkers on X's 13..24 leave X's low points open; X to play the 2 steps of 3 O could not play.
    position = start_position(rules, "X").with_changes(turns=(3, 3), cascade=Cascade(3, 2, True))
    moves = legal_moves(position)
    fast = generate(PositionBatch.from_positions([position]), None)
    assert {len(m.steps) for m in moves} == {2} and set(fast.n_steps.tolist()) == {2}
    assert {m.position for m in moves} == set(fast.moves_of(0)[i].position for i in range(len(fast)))
    # After the remainder's last stage (here: not of 6, but played in full, so the remainder goes on with 4s).
    assert {m.position.cascade for m in moves} == {Cascade(4, 4, True)} and {m.position.next for m in moves} == {"X"}
    assert fast.same_side.all()


def test_the_turn_plan_of_a_roll_lists_its_stages():
    assert roll_plan(GULBARA, 3, (3, 3)) == ((3,) * 4, (4,) * 4, (5,) * 4, (6,) * 4)
    assert roll_plan(GULBARA, 2, (3, 3)) == ((3,) * 4,)  # the side's third turn: still plain
    assert roll_plan(GULBARA, 3, (1, 1))[-1] == (6,) * 4 and sum(map(len, roll_plan(GULBARA, 3, (1, 1)))) == 24
    assert roll_plan(GULBARA, 3, (5, 2)) == ((5, 2),) and roll_plan(VARIANTS["narde"], 9, (3, 3)) == ((3,) * 4,)


def test_lambda_returns_read_a_sides_own_next_decision_without_swapping_the_classes():
    # Two outcome classes would hide a swap that is not there; six, as the networks have: (ws, wg, wb, ls, lg, lb).
    first, second, third = ([0.6, 0.1, 0.0, 0.2, 0.1, 0.0], [0.5, 0.2, 0.0, 0.2, 0.1, 0.0],
                            [1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    values = np.array([first, second, third], dtype=np.float64)
    lam = 0.5
    # Turn 0 is followed by the same side's stage, turn 1 by the opponent's decision.
    targets = lambda_returns(values, lam, same_side=np.array([True, False, False]))
    g2 = np.array(third)
    g1 = (1 - lam) * np.array(second) + lam * g2[[3, 4, 5, 0, 1, 2]]
    g0 = (1 - lam) * np.array(first) + lam * g1  # the same mover: read as it is
    assert np.allclose(targets, [g0, g1, g2])
    alternating = lambda_returns(values, lam)
    assert np.allclose(alternating[0], (1 - lam) * np.array(first) + lam * alternating[1][[3, 4, 5, 0, 1, 2]])
    assert not np.allclose(alternating[0], targets[0])


class PipEvaluator:
    """A stand-in network: the side to move's winning chance grows with the pip lead; six classes."""

    num_outcomes = 6
    bearoff = False
    points = np.array([1.0, 2.0, 3.0, -1.0, -2.0, -3.0])

    def _pips(self, batch):
        own = np.clip(batch.board, 0, None) @ np.arange(1, 25)
        theirs = np.clip(-batch.board, 0, None) @ ((np.arange(24) + 12) % 24 + 1)
        return own.astype(np.float64), theirs.astype(np.float64)

    def evaluate(self, batch):
        own, theirs = self._pips(batch)
        win = 1.0 / (1.0 + np.exp((own - theirs) / 30.0))
        out = np.zeros((len(batch), 6))
        out[:, 0], out[:, 3] = win, 1.0 - win
        return out

    def evaluate_flipped(self, batch):
        from tapa_ai.rules.outcomes import swap_sides

        return swap_sides(self.evaluate(batch.flipped()))

    def evaluate_next(self, batch, same_side=None):
        from tapa_ai.net.evaluator import Evaluator

        return Evaluator.evaluate_next(self, batch, same_side)

    def afterstate_distributions(self, afterstates, dtype=np.float64):
        from tapa_ai.net.evaluator import with_finished_outcomes

        values = np.array(self.evaluate_next(afterstates.positions, afterstates.same_side), dtype=dtype)
        return with_finished_outcomes(values, afterstates)


def test_the_search_plays_a_pending_stage_as_one_decision_with_no_roll():
    from tapa_ai.bots.search import afterstate_values

    evaluator = PipEvaluator()
    position = start_position(GULBARA, "X").with_changes(turns=(3, 3))
    moves = legal_moves(position, (4, 4))  # a cascade's first stage: X plays the 5s next, with no roll
    stage_move = next(m for m in moves if m.position.next == "X")
    afterstate = PositionBatch.from_positions([stage_move.position.with_changes(next=None)])
    one_ply = afterstate_values(evaluator, afterstate, 1, same_side=np.array([True]))[0]
    # By hand: X's best stage of 5s, by the stand-in's equity from X's view, is the value (no swap, no average).
    following = next_turn(stage_move.position)
    replies = legal_moves(following)
    batch = PositionBatch.from_positions([m.position.with_changes(next=None) for m in replies])
    same = np.array([m.position.next == "X" for m in replies])
    values = evaluator.evaluate_next(batch, same)
    expected = values[int(np.argmax(values @ evaluator.points))]
    assert np.allclose(one_ply, expected)
    # Read as an ordinary afterstate (the opponent rolling next) the value is another one: the flag matters.
    assert not np.allclose(afterstate_values(evaluator, afterstate, 1)[0], one_ply)


def test_the_game_flow_plays_a_cascade_stage_by_stage_with_no_roll_between():
    rolls = iter([(3, 1), (2, 1), (5, 4), (6, 5), (2, 1), (4, 3), (4, 4)])  # X's fourth roll is 4-4: it cascades

    game = GameState.new(GULBARA, opener="X")
    while True:
        if game.phase == "roll":
            game = game.rolled(next(rolls))
            if game.dice == (4, 4):
                break
        game = game.play(game.moves[0])
    numbers = []
    while game.phase == "move" and game.position.turn == "X":
        numbers.append(game.dice[0])
        game = game.play(game.moves[0])
    assert numbers == [4, 5, 6]  # three stages, each a move event, no roll event between them
    events = [e for e in game.history if e.action == "move" and e.side == "X"][-3:]
    assert [e.dice for e in events] == [(4, 4), (5, 5), (6, 6)] and game.phase == "roll" and game.position.turn == "O"
    assert GameState.from_dict(game.to_dict()) == game


def test_a_game_state_inside_a_cascade_must_be_playing_its_stage():
    from tapa_ai.flow.errors import FlowError

    position = start_position(GULBARA, "X").with_changes(turns=(3, 0), cascade=Cascade(5))
    with pytest.raises(FlowError, match="inside a cascade: it plays its stage of 5s"):
        GameState(position, "roll")
    assert GameState(position, "move", (5, 5)).moves


def test_random_games_of_gul_bara_end_and_replay_through_the_saved_game_reader():
    from tapa_ai.analysis.records import read_saved

    rng = random.Random(5)
    stages = 0
    for _ in range(6):
        game = GameState.new(GULBARA)
        while not game.is_over:
            if game.phase in ("opening", "roll"):
                game = game.roll(rng)
            else:
                stages += game.position.cascade is not None
                game = game.play(rng.choice(game.moves))
        saved = read_saved(game.to_dict(), "game")
        assert saved.record.games[0].result == game.result
    assert stages > 5


def test_every_evaluator_values_a_sides_own_next_stage_from_its_own_view():
    """The fast kernel's afterstate values equal the torch reference's on afterstates followed by the mover's own
    stage (no flip, no swap) and on the others (the opponent to move): one network, random Gul Bara positions."""
    import torch

    from tapa_ai.config import ModelConfig
    from tapa_ai.net.evaluator import KernelEvaluator, TorchEvaluator
    from tapa_ai.net.model import EvaluatorNet

    torch.manual_seed(3)
    net = EvaluatorNet(ModelConfig(encoding_version=5, layers=1, hidden=16), GULBARA, seed=3)
    rng = np.random.default_rng(9)
    batch = with_decisions(playout_positions(GULBARA, 120, rng, "uniform", games=8), rng)
    dice = random_dice(len(batch), rng)
    dice[::2] = dice[::2, :1]
    afterstates = generate(batch, dice)
    assert 0 < afterstates.same_side.sum() < len(afterstates)
    fast = KernelEvaluator(net).afterstate_distributions(afterstates)
    reference = TorchEvaluator(net).afterstate_distributions(afterstates)
    assert np.allclose(fast, reference, atol=1e-5)
    same = afterstates.same_side & ~afterstates.game_over
    own = TorchEvaluator(net).evaluate(afterstates.positions.take(same))  # the mover's own next decision
    assert np.allclose(fast[same], own, atol=1e-5)


def test_the_arena_gives_each_side_its_own_cascade_stages():
    """The runner keeps the mover after an afterstate followed by its own stage: in every ply of every game the
    side A's policy moves for is A's colour (handing a cascade's later stages to the other side's policy made
    every Gul Bara duel a coin toss)."""
    from tapa_ai.arena.duels import _Duel, random_policy
    from tapa_ai.arena.runner import DealtDice, deal_dice

    rng = np.random.default_rng(5)
    dice = deal_dice(GULBARA, rng, 6, 400)
    batch = PositionBatch.from_positions([start_position(GULBARA, "X")]).take(np.zeros(12, dtype=np.int64))
    runner = _Duel(random_policy, random_policy, rng, 12, 400, DealtDice(dice, np.arange(12) // 2), 0)
    runner.start(np.arange(12), batch, np.arange(12) % 2 == 0)
    a_colour = np.where(np.arange(12) % 2 == 0, 0, 1)  # A is X in the even games (it moves first there), else O
    stages = 0
    while runner.games.size:
        assert np.array_equal(runner.mover_is_a[runner.games], runner.positions.turn == a_colour[runner.games])
        stages += int((runner.positions.stage[:, 0] > 0).sum())
        runner.step()
    assert stages > 10 and runner.kind.all()


def test_cascade_statistics_count_every_cascade_once_with_its_stages():
    from tapa_ai.arena.cascades import cascade_stats
    from tapa_ai.arena.duels import random_policy

    stats = cascade_stats(GULBARA, random_policy, random_policy, pairs=10, seed=4)
    assert stats.games == 20 and stats.unfinished == 0
    assert stats.cascades == sum(stats.stages.values()) == sum(stats.per_game) > 20
    assert set(stats.stages) <= set(range(1, 7)) and 0 <= stats.decided <= stats.games
    # Each stage plays at most four steps; a cascade's first stage is played in part at least when it is not
    # a pass: the steps lie between none and four per stage.
    stages = sum(count * n for count, n in stats.stages.items())
    assert 0 < stats.steps <= 4 * stages
    summary = stats.summary()
    assert summary["stages_per_cascade"] == stages / stats.cascades


def test_recorded_arena_games_write_each_stage_with_its_own_dice_and_replay():
    """A duel's recorded Gul Bara games write a cascade's later stages with the stage's [k, k] (not the dice the
    runner dealt that ply), so that the saved-game reader (tapa-ai analyse, play --load) replays them."""
    from tapa_ai.analysis.records import read_saved
    from tapa_ai.arena.duels import play_pairs, random_policy
    from tapa_ai.arena.recorded_games import arena_game, games_document

    records = play_pairs(GULBARA, random_policy, random_policy, pairs=2, seed=8, record=4)
    games = [arena_game(number + 1, "A", "B", GULBARA, turns, None)
             for number, turns in enumerate(records.histories)]
    document = games_document(GULBARA, {"A": "random", "B": "random"}, games, "a test")
    saved = read_saved(document, "games")
    replayed = saved.record.games
    assert len(replayed) == 4
    stages = [turn for game in replayed for turn in game.turns if turn.position.cascade is not None]
    assert stages and all(turn.dice == (turn.position.cascade.number,) * 2 for turn in stages)


def test_the_kernels_step_arrays_hold_the_longest_decision_of_the_rules():
    from tapa_ai.movegen import kernel
    from tapa_ai.rules.turns import STAGE_STEPS

    assert kernel.MAX_STEPS == STAGE_STEPS == max(len(stage) for dice in ((a, b) for a in range(1, 7)
                                                                        for b in range(1, 7))
                                                  for stage in roll_plan(GULBARA, 3, dice))
