"""A pure-numpy whole-turn generator for backgammon, kept only to measure the technique (docs/movegen.md).

Not part of the package: ``scripts/bench_movegen.py --numpy-prototype`` times
it, to show what array code without a compiled kernel costs. It expands a frontier of boards one die at a time for the whole batch
at once (every state times every source point as one mask), then
deduplicates the leaves per source position with ``np.unique`` over the raw
bytes. It plays backgammon steps (bar first, hits, bearing off) in both
orders of the dice and four steps of doubles, but leaves out the whole-turn
filters (maximum use, higher die), so it does less than the real generator
and its time is a lower bound for this approach.
"""

from __future__ import annotations

import numpy as np

from tapa_ai.movegen.batch import PositionBatch


def _step(board, bar, off, opp_bar, root, die):
    """Every legal single step of ``die`` from every state; returns the children and which states had none.

    ``board`` (F, 24) int8 signed mover-relative; ``bar``, ``off``, ``opp_bar``, ``root`` (F,).
    """
    states = board.shape[0]
    own = board > 0
    not_home = own[:, 6:].any(axis=1) | (bar > 0)
    targets = np.arange(24) - die  # column index of the landing point
    open_target = np.zeros((states, 24), dtype=bool)
    inside = targets >= 0
    open_target[:, inside] = board[:, targets[inside]] >= -1
    normal = own & open_target & (bar == 0)[:, None]
    # Bearing off: exactly from point ``die``, or from the highest point when the die is larger.
    highest = np.where(own.any(axis=1), 23 - np.argmax(own[:, ::-1], axis=1), -1)
    bear = np.zeros((states, 24), dtype=bool)
    home = ~not_home
    bear[:, die - 1] = own[:, die - 1] & home
    larger = home & (highest < die - 1) & (highest >= 0)
    bear[np.flatnonzero(larger), highest[larger]] = True
    enter = (bar > 0) & (board[:, 24 - die] >= -1)
    state_index, source = np.nonzero(normal | bear)
    entering = np.flatnonzero(enter)
    all_states = np.concatenate([state_index, entering])
    all_sources = np.concatenate([source, np.full(entering.size, 24)])
    child = board[all_states].copy()
    child_bar = bar[all_states].copy()
    child_off = off[all_states].copy()
    child_opp_bar = opp_bar[all_states].copy()
    rows = np.arange(all_states.size)
    from_board = all_sources < 24
    child[rows[from_board], all_sources[from_board]] -= 1
    child_bar[~from_board] -= 1
    target = np.where(from_board, all_sources - die, 24 - die)
    landing = target >= 0
    hit = landing.copy()
    hit[landing] = child[rows[landing], target[landing]] == -1
    child[rows[hit], target[hit]] = 0
    child_opp_bar[hit] += 1
    child[rows[landing], target[landing]] += 1
    child_off[~landing] += 1
    stuck = np.ones(states, dtype=bool)
    stuck[all_states] = False
    return (child, child_bar, child_off, child_opp_bar, root[all_states]), stuck


def generate_numpy(batch: PositionBatch, dice: np.ndarray):
    """(roots, boards) of the distinct leaves per position: (L,) int32 and (L, 27) int8 (board, bar, off, opp bar)."""
    leaves = []
    board = batch.board.astype(np.int8)
    start = (board, batch.bar[:, 0].astype(np.int8), batch.off[:, 0].astype(np.int8),
             batch.bar[:, 1].astype(np.int8), np.arange(len(batch), dtype=np.int32))
    doubles = dice[:, 0] == dice[:, 1]
    high, low = dice.max(axis=1), dice.min(axis=1)
    plans = []
    for die in range(1, 7):
        for other in range(1, 7):
            if die == other:
                mask = doubles & (high == die)
                plans.append((mask, [die] * 4))
            else:
                mask = (~doubles) & (((high == die) & (low == other)) | ((high == other) & (low == die)))
                plans.append((mask, [die, other]))
    for mask, order in plans:
        if not mask.any():
            continue
        state = tuple(array[mask] for array in start)
        for die in order:
            children, stuck = _step(*state, die)
            # States with no step for this die end their sequence here (whole-turn filters left out).
            leaves.append(tuple(array[stuck] for array in state))
            state = children
        leaves.append(state)
    roots = np.concatenate([leaf[4] for leaf in leaves])
    packed = np.concatenate(
        [np.concatenate([leaf[0], leaf[1][:, None], leaf[2][:, None], leaf[3][:, None]], axis=1) for leaf in leaves]
    )
    keyed = np.concatenate([roots.view(np.int8).reshape(-1, 4), packed], axis=1)
    unique = np.unique(np.ascontiguousarray(keyed).view(np.dtype((np.void, keyed.shape[1]))))
    rows = unique.view(np.int8).reshape(-1, keyed.shape[1])
    return rows[:, :4].copy().view(np.int32).ravel(), rows[:, 4:]
