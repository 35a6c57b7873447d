"""Issue 49, item 4: ``tapa-ai analyse`` rates moves (and the cube decisions among them) in batches that the
search's budget of afterstates holds (tapa_ai.analysis.batching), so its memory stays bounded at
any depth (at 3 plies one move a batch: 32 at once took 13 GB), and the progress advances with every batch."""

import random

import pytest

import tapa_ai.bots.search as search
from tapa_ai.analysis import analyse_record, analysis_bot, record_from_json
from tapa_ai.flow import GameState


@pytest.fixture(scope="module")
def bot():
    """The shipped tapa network at 1 ply, loaded once."""
    return analysis_bot("net:checkpoints/tapa.pt@1ply")


def cube_game(moves: int = 12, seed: int = 3):
    """A tapa game of random moves played with the cube (every roll a cube decision), as a record."""
    rng = random.Random(seed)
    state = GameState.new("tapa")
    while not state.is_over and sum(event.action == "move" for event in state.history) < moves:
        state = state.roll(rng) if state.phase in ("opening", "roll") else state.play(rng.choice(state.moves))
    return record_from_json(state.to_dict())


def test_a_batch_holds_what_the_search_budget_holds_and_one_move_at_three_plies(bot):
    from tapa_ai.analysis.batching import CHUNK_MOVES, SEARCH_BUDGET, batch_sizes, expanded

    assert expanded(0) == 0 and expanded(1) == 21 * 30 and expanded(3) > 290_000
    for plies in range(4):
        moves, cube = batch_sizes(bot, plies)
        assert 1 <= moves <= CHUNK_MOVES and 1 <= cube <= CHUNK_MOVES
        assert moves == 1 or moves * bot.candidates * expanded(plies) <= SEARCH_BUDGET
        assert cube == 1 or cube * expanded(plies) <= SEARCH_BUDGET
    assert batch_sizes(bot, 3) == (1, 3)  # 3 plies: one move, three cube decisions a batch
    assert batch_sizes(bot, 1) == (CHUNK_MOVES, CHUNK_MOVES)


def test_the_search_sees_batches_within_the_budget_and_the_progress_advances_every_batch(bot, monkeypatch):
    record = cube_game()
    whole = analyse_record(record, bot)  # the default batches: all 12 moves, all 11 cube decisions at once
    assert len(whole.moves) == 12 and sum(m.cube is not None for m in whole.moves) == 11  # none at the opening

    budget = bot.candidates * 21 * 30  # one move's worth at 1 ply (8 candidates x 21 rolls x ~30 replies)
    monkeypatch.setattr("tapa_ai.analysis.batching.SEARCH_BUDGET", budget, raising=False)
    batches = []  # the afterstates the search generates (and evaluates) at once
    generate = search.generate
    monkeypatch.setattr(search, "generate", lambda *args: batches.append(len(found := generate(*args))) or found)
    cube_batches = []
    cube_equities = bot.cube_equities
    monkeypatch.setattr(bot, "cube_equities", lambda positions, *args, **kwargs: cube_batches.append(len(positions))
                        or cube_equities(positions, *args, **kwargs))
    steps = []
    small = analyse_record(record, bot, progress=steps.append)

    assert steps == [1] * 12  # one move a batch (with the cube decision before it), so the bar moves every move
    assert cube_batches == [1] * 11
    assert batches and max(batches) <= 3 * budget  # the estimate's slack (random games: rolls of 50 moves)
    # The batches change nothing rated.
    assert [(m.move, m.best, m.mark) for m in small.moves] == [(m.move, m.best, m.mark) for m in whole.moves]
    assert [m.equity for m in small.moves] == pytest.approx([m.equity for m in whole.moves], abs=1e-9)
    assert [m.cube.error for m in small.moves if m.cube] == pytest.approx(
        [m.cube.error for m in whole.moves if m.cube], abs=1e-9)


def test_batches_keep_the_order_and_both_limits():
    from tapa_ai.analysis.batching import batches

    decisions = [("move", 0, 1)] + [(kind, 0, turn) for turn in range(2, 8) for kind in ("cube", "move")]
    found = list(batches(decisions, 2, 1))
    assert [item for batch in found for item in batch] == decisions
    assert all(sum(k == "move" for k, _, _ in batch) <= 2 and sum(k == "cube" for k, _, _ in batch) <= 1
               for batch in found)
    assert [len(batch) for batch in found] == [3, 2, 2, 2, 2, 2]  # move, cube, move | cube, move | ...
    assert list(batches(decisions, 32, 32)) == [decisions] and list(batches([], 1, 1)) == []
