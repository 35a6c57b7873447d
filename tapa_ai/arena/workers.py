"""The arena's workers: chunks of games (or positions) played in this process, in spawned processes or as Ray
tasks, each worker building its two bots once from their spec strings.

:func:`play_jobs` runs a list of jobs through a *chunk function*: a
module-level function ``job -> (index, result)`` (it pickles by name) that
plays with the worker's bots, :data:`WORKER` ``["a"]`` and ``["b"]``, and
rules ``["rules"]``. Matches (:mod:`tapa_ai.arena.match`), rollouts, the
benchmark's builds and scores bring their own chunk functions. Chunks seed
themselves from their index, so the results do not depend on which worker
played which chunk, nor in which order.
"""

from __future__ import annotations

import os
from typing import Callable, Optional

import numpy as np

from ..bots.base import BotError
from ..bots.spec import BotSpec, make_bot, parse_spec
from ..rules.options import RuleOptions
from ..rules.rotations import Rotation

Chunk = Callable[[tuple], tuple]
"""A chunk function: ``job -> (index, result)``, playing with the bots of :data:`WORKER`."""


# -- before the clock starts -------------------------------------------------------------------
def warm_up(bot, rules: RuleOptions) -> None:
    """``bot`` chooses a move of ``rules``' opening: numba compiles (or loads from its cache) the kernels it
    uses in this process now, before a progress bar is drawn and a clock starts, so a first run's games/s leaves
    the compile out and the compile notice has a line of its own; worker processes then load them from the cache."""
    from ..rules.position import start_position

    bot.choose_position(start_position(rules), (6, 5), np.random.default_rng(0))


def check_and_warm_up(specs, rules: RuleOptions) -> None:
    """Build each bot of ``specs`` (a bad spec fails here, with its message, not in a worker) and :func:`warm_up` it."""
    for spec in dict.fromkeys(specs):
        bot = make_bot(spec, rules)
        try:
            warm_up(bot, rules)
        finally:
            bot.close()


# -- a worker's bots -----------------------------------------------------------------------------
WORKER: dict = {}
"""This process's worker state: ``rules``, the bots ``a`` and ``b`` (and ``key``: the (A, B, rules) of a Ray
worker's bots)."""


def init_worker(spec_a: "str | BotSpec", spec_b: "str | BotSpec", rules: "RuleOptions | Rotation",
                threads: int) -> None:
    """Build this process's worker bots (closing any earlier ones), its kernels on ``threads`` threads.

    ``rules`` a :class:`~tapa_ai.rules.rotations.Rotation`: the specs are players of its match
    (:func:`tapa_ai.bots.rotation.make_rotation_player`), a bot per game."""
    close_worker()  # bots of an earlier match in this process (an engine: bot holds a process)
    os.environ["TAPA_MOVEGEN_THREADS"] = str(threads)
    import numba
    import torch

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    torch.set_num_threads(threads)
    if isinstance(rules, Rotation):  # a rotation's match: a player per game (tapa_ai.bots.rotation)
        from ..bots.rotation import make_rotation_player

        WORKER.update(rules=rules, a=make_rotation_player(spec_a, rules), b=make_rotation_player(spec_b, rules))
        return
    WORKER.update(rules=rules, a=make_bot(spec_a, rules), b=make_bot(spec_b, rules))


def close_worker() -> None:
    """Close this process's worker bots (ending the process of an ``engine:`` bot) and forget them."""
    for key in ("a", "b"):
        bot = WORKER.pop(key, None)
        if bot is not None:
            bot.close()


# -- over a Ray cluster ------------------------------------------------------------------------------
def ray_chunk(chunk: Chunk, spec_a: str, spec_b: str, rules: RuleOptions, job: tuple) -> tuple[int, object]:
    """One chunk as a Ray task; the worker process keeps the bots of its last (A, B, rules) between tasks."""
    key = (spec_a, spec_b, rules)
    if WORKER.get("key") != key:
        for bot in (WORKER.get("a"), WORKER.get("b")):
            if bot is not None:
                bot.close()
        init_worker(spec_a, spec_b, rules, threads=1)
        WORKER["key"] = key
    return chunk(job)


def run_on_ray(chunk: Chunk, spec_a: str, spec_b: str, rules: RuleOptions, jobs: list[tuple], ray_address: str,
               done) -> int:
    """Play ``jobs`` as Ray tasks on the cluster at ``ray_address``; ``done(index, result)`` as each ends.

    Returns the cluster's CPU count (the workers that could play at once).
    """
    from ..ray_cluster import RayUnavailable, connect, disconnect, require_ray

    try:
        ray = require_ray()
        connected = connect(ray_address, num_cpus=os.cpu_count())
    except RayUnavailable as error:
        raise BotError(str(error)) from None
    try:
        task = ray.remote(num_cpus=1, max_retries=2)(ray_chunk)
        # Chunks seed themselves ([seed, index]): a retried or reordered task plays the same games.
        calls = [task.remote(chunk, spec_a, spec_b, rules, job) for job in jobs]
        while calls:
            ready, calls = ray.wait(calls, num_returns=1)
            done(*ray.get(ready[0]))
        return int(ray.cluster_resources().get("CPU", 1))
    finally:
        disconnect(connected)


# -- anywhere ------------------------------------------------------------------------------------------
def play_jobs(chunk: Chunk, spec_a: str, spec_b: str, rules: RuleOptions, jobs: list[tuple], workers: int,
              ray_address: Optional[str], done) -> int:
    """Play ``jobs`` through the chunk function ``chunk`` with the bots ``spec_a`` and ``spec_b``: on Ray, in
    this process or in ``workers`` spawned processes; ``done(index, result)`` as each chunk ends. Returns the
    number of workers that played. The specs are read once, here (:func:`~tapa_ai.bots.spec.parse_spec`): the
    workers receive them as frozen :class:`~tapa_ai.bots.spec.BotSpec` objects and only build their bots."""
    if not isinstance(rules, Rotation):  # (a rotation's players are read per game by make_rotation_player)
        spec_a, spec_b = parse_spec(spec_a), parse_spec(spec_b)
    if ray_address:
        return min(run_on_ray(chunk, spec_a, spec_b, rules, jobs, ray_address, done), len(jobs))
    if workers == 1 or len(jobs) == 1:
        try:
            init_worker(spec_a, spec_b, rules,
                        threads=int(os.environ.get("TAPA_MOVEGEN_THREADS", os.cpu_count() or 1)))
            for job in jobs:
                done(*chunk(job))
        finally:
            close_worker()
        return workers
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    pool = context.Pool(min(workers, len(jobs)), initializer=init_worker, initargs=(spec_a, spec_b, rules, 1))
    try:
        for index, result in pool.imap_unordered(chunk, jobs):
            done(index, result)
        # Workers told to stop exit normally, closing their bots as they go (an engine: bot's finalizer);
        # terminate() would kill them first.
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    return workers
