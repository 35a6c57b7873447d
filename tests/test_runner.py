"""The batched game runner (tapa_ai/arena/runner.py): the split by mover, the opening roll, the order of a ply's hooks."""

import numpy as np

from tapa_ai.arena.runner import DealtDice, GameRunner, choose_by_mover, deal_dice, reroll_opening_doubles
from tapa_ai.movegen import PositionBatch, generate
from tapa_ai.rules import variant_rules
from tapa_ai.rules.position import start_position


def first_move(afterstates, rng):
    return afterstates.offsets[:-1].copy()


def last_move(afterstates, rng):
    return afterstates.offsets[1:] - 1


def start_batch(rules, count):
    return PositionBatch.from_positions([start_position(rules, "X")]).take(np.zeros(count, dtype=np.int64))


def test_each_side_chooses_for_its_own_games_and_the_rows_map_back():
    rules = variant_rules("backgammon")
    afterstates = generate(start_batch(rules, 6), np.array([[3, 1], [6, 5], [4, 2], [5, 5], [2, 1], [6, 4]], np.int8))
    mover_is_a = np.array([True, False, False, True, True, False])
    seen = []

    def a_sees(part, rng):
        seen.append(len(part.offsets) - 1)
        return first_move(part, rng)

    chosen = choose_by_mover(afterstates, mover_is_a, a_sees, last_move, np.random.default_rng(0))
    assert seen == [3]
    assert np.array_equal(chosen[mover_is_a], afterstates.offsets[:-1][mover_is_a])
    assert np.array_equal(chosen[~mover_is_a], afterstates.offsets[1:][~mover_is_a] - 1)


def test_opening_doubles_are_drawn_again_and_only_they():
    rng = np.random.default_rng(3)
    dice = np.array([[2, 2], [3, 1], [6, 6], [4, 4], [5, 2]])
    reroll_opening_doubles(dice, np.array([0, 1, 2]), rng)
    assert (dice[:3, 0] != dice[:3, 1]).all() and dice[1].tolist() == [3, 1] and dice[3].tolist() == [4, 4]
    table = deal_dice(variant_rules("tapa"), np.random.default_rng(1), 500, 3)
    assert (table[:, 0, 0] != table[:, 0, 1]).all() and (table[:, 1, 0] == table[:, 1, 1]).any()


class Recorder(GameRunner):
    """Stops slot 1 before its first roll, plays the others to their ply limit, then starts one more game."""

    def __init__(self, rules, table):
        super().__init__((first_move, last_move), np.random.default_rng(0), 4, 2, DealtDice(table, np.arange(4)))
        self.rules, self.calls, self.restarted = rules, [], False

    def before_roll(self):
        self.calls.append(("before_roll", self.games.tolist()))
        return np.flatnonzero(self.games == 1) if self.ply == 0 else None

    def after_choice(self, ply):
        self.calls.append(("after_choice", ply.games.tolist(), ply.mover_is_a.tolist()))

    def unfinished(self, rows):
        self.calls.append(("unfinished", self.games[rows].tolist(), self.plies[self.games[rows]].tolist()))

    def after_step(self):
        if not self.games.size and not self.restarted:
            self.restarted = True
            self.start(np.array([1]), start_batch(self.rules, 1), np.array([False]))


def test_a_ply_runs_its_hooks_in_order_and_new_games_follow_the_running_ones():
    rules = variant_rules("backgammon")
    runner = Recorder(rules, deal_dice(rules, np.random.default_rng(2), 4, 2))
    runner.start(np.arange(3), start_batch(rules, 3), np.array([True, False, True]))
    runner.start(np.array([3]), start_batch(rules, 1), np.array([False]))
    runner.run()
    assert runner.calls == [
        ("before_roll", [0, 1, 2, 3]), ("after_choice", [0, 2, 3], [True, True, False]),
        ("before_roll", [0, 2, 3]), ("after_choice", [0, 2, 3], [False, False, True]),
        ("unfinished", [0, 2, 3], [2, 2, 2]),
        ("before_roll", [1]), ("after_choice", [1], [False]),
        ("before_roll", [1]), ("after_choice", [1], [True]), ("unfinished", [1], [2]),
    ]
