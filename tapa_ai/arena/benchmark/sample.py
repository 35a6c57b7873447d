"""Drawing the positions of a benchmark set: sampling games, phases, stratification (docs/benchmark.md).

Positions come from seeded games of a strong ``player`` (the shipped net at 0-ply) against each ``source``
opponent (itself, weaker bots, an older generation), both sides' decisions kept: each position before its
roll with the roll that came, when that roll has two or more distinct legal moves (forced rolls are counted,
not kept). Each is classified into a phase (:func:`classify`), and the set is stratified to a target
``mix`` of phases over the sources' weights (:func:`sample_positions`), positions of distinct games first;
what one source's games cannot fill of a phase goes to its other phases by the mix. The positions are then
put in a random order, so that the first k of a set (a partial build) are a random sample of it. The draw
depends on the arguments and the seed alone (source ``s`` plays rounds of games seeded ``[seed, s, round]``,
side by side on the game runner, :mod:`tapa_ai.arena.runner`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...bots.base import BotError
from ...movegen.batch import PositionBatch, concatenate
from ...notation.json_position import position_to_json
from ...rules.options import RuleOptions
from ...rules.position import start_position
from .file import BenchmarkError
from ..runner import DealtDice, GameRunner, Ply, deal_dice

PHASES = ("contact", "pins", "mother", "race", "bearoff")
"""contact: the rest; pins: a checker pinned (pin variants); mother: a side's last checker on its 24-point,
alone or pinned (mother variants); race: no contact left, not yet a bear-off; bearoff: no contact, all home."""
CONTACT, PINS, MOTHER, RACE, BEAROFF = range(5)
DEFAULT_MIX = {"hit": {"contact": 0.6, "race": 0.2, "bearoff": 0.2},
               "pin": {"contact": 0.35, "pins": 0.25, "mother": 0.1, "race": 0.15, "bearoff": 0.15},
               "block": {"contact": 0.6, "race": 0.2, "bearoff": 0.2}}
"""The phase shares of a set, by the rule set's ``contact`` (the running games, ``block``, have no pins or
mother: their contact phase is the blockade, the start and the primes)."""
MAX_TURNS = 1000
ROUND_GAMES = 64


def gnubg_available() -> bool:
    return importlib.util.find_spec("gnubg_nn") is not None


def _model(variant: str) -> str:
    """The shipped model that plays ``variant`` (portes: backgammon's, ``net.shipped.model_variant``)."""
    from ...net.shipped import model_variant

    return model_variant(variant)


def _generations(variant: str) -> list[str]:
    from ...net.shipped import shipped_names

    model = _model(variant)
    names = [name for name in shipped_names() if name.startswith(f"{model}-g")]
    return sorted(names, key=lambda name: -int(name.rsplit("-g", 1)[1]))


def default_sources(variant: str) -> list[tuple[str, float]]:
    """(opponent, weight) of the sampling games of the shipped net: itself 0.35, heuristic 0.2, the middle kept
    generation 0.15, runner 0.05, random 0.1, and gnubg:0 0.15 for backgammon with gnubg-nn (else itself)."""
    generations = _generations(variant)
    self_weight = 0.35
    sources = [("heuristic", 0.2)]
    if generations:
        sources.append((f"net:{generations[len(generations) // 2]}", 0.15))
    else:
        self_weight += 0.15
    sources += [("runner", 0.05), ("random", 0.1)]
    if _model(variant) == "backgammon" and gnubg_available():
        sources.insert(1, ("gnubg:0", 0.15))
    else:
        self_weight += 0.15
    return [("self", round(self_weight, 2)), *sources]


def default_references(variant: str) -> list[str]:
    """The bots whose moves are candidates beside the ranker's best: the shipped net at 0 and 1 ply, its kept
    generations, heuristic; pubeval and gnubg at 0 and 1 ply for backgammon when gnubg-nn is installed."""
    model = _model(variant)
    refs = [f"net:{model}", f"net:{model}@1ply", *(f"net:{name}" for name in _generations(variant)),
            "heuristic"]
    if model == "backgammon" and gnubg_available():
        # pubeval plays backgammon's scoring only; gnubg any rule set of its board game (portes).
        refs += (["pubeval"] if variant == "backgammon" else []) + ["gnubg:0", "gnubg:1"]
    return refs


def parse_weights(items: Sequence[str], what: str) -> list[tuple[str, float]]:
    """``["self=0.5", "heuristic=0.2"]`` -> [("self", 0.5), ("heuristic", 0.2)] (the number after the last =)."""
    parsed = []
    for item in items:
        name, sep, number = str(item).rpartition("=")
        try:
            weight = float(number)
        except ValueError:
            weight = -1.0
        if not sep or not name or not weight >= 0:
            raise BenchmarkError(f"{what} {item!r}: want NAME=WEIGHT with a weight >= 0, e.g. heuristic=0.2")
        parsed.append((name, weight))
    if not parsed or sum(w for _, w in parsed) <= 0:
        raise BenchmarkError(f"{what}: give at least one positive weight")
    return parsed


# -- phases -------------------------------------------------------------------------------------------
def classify(batch: PositionBatch, rules: RuleOptions) -> np.ndarray:
    """(B,) phase codes (:data:`PHASES` order) of positions seen from their side to move."""
    from ...bearoff.evaluate import bearoff_mask
    from ...net.fast_kernel import race_flags

    board, pinned = np.ascontiguousarray(batch.board), np.ascontiguousarray(batch.pinned)
    code = np.full(len(batch), CONTACT, dtype=np.int64)
    if not len(batch):
        return code
    if rules.pins:
        code[(pinned != 0).any(axis=1)] = PINS
        if rules.mother_points:  # the mover's 24-point is column 23, the opponent's column 0
            mother = (((board[:, 23] == 1) & (pinned[:, 23] == 0)) | (pinned[:, 23] == 1)
                      | ((board[:, 0] == -1) & (pinned[:, 0] == 0)) | (pinned[:, 0] == -1))
            code[mother] = MOTHER
    code[race_flags(board, pinned, np.ascontiguousarray(batch.bar), batch.parallel_rows())] = RACE
    code[bearoff_mask(batch)] = BEAROFF
    return code


def _allocate(total: int, weights: np.ndarray) -> np.ndarray:
    """``total`` split in proportion to ``weights`` (largest remainder, ties to the first)."""
    weights = np.asarray(weights, dtype=np.float64)
    if total <= 0 or weights.sum() <= 0:
        return np.zeros(weights.shape, dtype=np.int64)
    exact = total * weights / weights.sum()
    counts = np.floor(exact).astype(np.int64)
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[:total - counts.sum()]] += 1
    return counts


# -- sampling games -----------------------------------------------------------------------------------
@dataclass
class _Decisions:
    positions: PositionBatch
    dice: np.ndarray
    game: np.ndarray
    phase: np.ndarray
    player_moves: np.ndarray
    games: int
    forced: int


def _play_games(rules: RuleOptions, player, opponent, games: int, seed, offset: int) -> _Decisions:
    """``games`` games of ``player`` against ``opponent`` (the player first in even games), every decision
    with two or more distinct moves kept; games numbered from ``offset``. The player playing itself chooses
    for all games at once."""
    rng = np.random.default_rng(seed)
    dice = DealtDice(deal_dice(rules, rng, games, MAX_TURNS), np.arange(games))
    runner = _SamplingGames(rules, player if opponent is player else (player, opponent), rng, games, dice, offset)
    runner.start(np.arange(games), PositionBatch.from_positions([start_position(rules, "X")]).take(
        np.zeros(games, dtype=np.int64)), np.arange(games) % 2 == 0)
    runner.run()
    return runner.decisions()


class _SamplingGames(GameRunner):
    """The sampling games on the game runner (A is the player): each decision kept before its move."""

    def __init__(self, rules: RuleOptions, players, rng, games: int, dice: DealtDice, offset: int) -> None:
        super().__init__(players, rng, games, MAX_TURNS, dice)
        self.rules, self.offset, self.size = rules, offset, games
        self.kept: list[tuple] = []
        self.forced = 0

    def after_choice(self, ply: Ply) -> None:
        choices = np.flatnonzero(np.diff(ply.afterstates.offsets) >= 2)
        self.forced += ply.games.size - choices.size
        if choices.size:
            part = ply.positions.take(choices)
            self.kept.append((part, ply.dice[choices], ply.games[choices] + self.offset, classify(part, self.rules),
                              ply.mover_is_a[choices]))

    def decisions(self) -> _Decisions:
        kept = self.kept
        if not kept:
            empty = PositionBatch.from_positions([])
            return _Decisions(empty, np.zeros((0, 2), np.int8), *(np.zeros(0, np.int64) for _ in range(2)),
                              np.zeros(0, bool), self.size, self.forced)
        return _Decisions(concatenate([k[0] for k in kept]), np.concatenate([k[1] for k in kept]),
                          *(np.concatenate([k[i] for k in kept]) for i in (2, 3, 4)), games=self.size,
                          forced=self.forced)


def _pick(decisions: list[_Decisions], quota: np.ndarray, rng) -> list[tuple[int, int]]:
    """(round, row) of the decisions taken: ``quota[p]`` of phase ``p`` at random, one position a game first."""
    rounds = np.concatenate([np.full(len(d.game), r) for r, d in enumerate(decisions)])
    rows = np.concatenate([np.arange(len(d.game)) for d in decisions])
    game = np.concatenate([d.game for d in decisions])
    phase = np.concatenate([d.phase for d in decisions])
    taken = []
    for code in range(len(PHASES)):
        members = rng.permutation(np.flatnonzero(phase == code))
        seen: dict[int, int] = {}
        occurrence = np.zeros(len(members), dtype=np.int64)
        for k, g in enumerate(game[members].tolist()):
            occurrence[k] = seen.get(g, 0)
            seen[g] = occurrence[k] + 1
        chosen = members[np.argsort(occurrence, kind="stable")][:quota[code]]
        taken += [(int(rounds[i]), int(rows[i])) for i in chosen]
    return taken


def _fill(quota: np.ndarray, available: np.ndarray, mix_weights: np.ndarray) -> np.ndarray:
    """``quota`` with what ``available`` cannot fill moved to the phases that have more, by the mix."""
    total = int(quota.sum())
    quota = np.minimum(quota, available)
    while quota.sum() < total:
        room = np.where(available > quota, mix_weights, 0.0)
        if room.sum() <= 0:
            break
        quota = quota + np.minimum(_allocate(total - int(quota.sum()), room), available - quota)
    return quota


def sample_positions(rules: RuleOptions, positions: int, seed: int, player: str,
                     sources: list[tuple[str, float]], mix: dict[str, float], progress: bool = False
                     ) -> tuple[list[dict], dict]:
    """The set's positions in their final order (dicts: position, dice, phase, source, mover) and what the
    sampling games came to; the same for the same arguments."""
    from tqdm import tqdm

    from ...bots.spec import make_bot

    weights = np.array([w for _, w in sources], dtype=np.float64)
    mix_weights = np.array([mix.get(name, 0.0) for name in PHASES])
    cells = _allocate(positions, (weights[:, None] * mix_weights[None, :]).ravel()).reshape(len(sources), -1)
    plan, stats = [], {"games": {}, "decisions_per_game": {}, "decisions": 0, "forced": 0}
    natural = np.zeros(len(PHASES))
    built = {}
    bar = tqdm(total=positions, unit="position", desc="drawing positions", disable=not progress, dynamic_ncols=True)
    try:
        bot_player = make_bot(player, rules)
        for number, (opponent_spec, weight) in enumerate(sources):
            quota = cells[number].copy()
            if quota.sum() == 0:
                continue
            if opponent_spec == "self":
                opponent, label = bot_player, f"{player} vs itself"
            else:
                opponent = built.get(opponent_spec) or make_bot(opponent_spec, rules)
                built[opponent_spec] = opponent
                label = f"{player} vs {opponent_spec}"
            decisions: list[_Decisions] = []
            played, cap = 0, max(400, 20 * int(quota.sum()))
            while True:
                games = min(ROUND_GAMES * (1 + len(decisions)), 1024)
                decisions.append(_play_games(rules, bot_player, opponent, games, [seed, number, len(decisions)],
                                             played))
                played += games
                phase = np.concatenate([d.phase for d in decisions])
                game = np.concatenate([d.game for d in decisions])
                distinct = np.array([np.unique(game[phase == code]).size for code in range(len(PHASES))])
                if (distinct >= quota).all() or played >= cap:
                    break
            available = np.bincount(phase, minlength=len(PHASES))
            taken = _pick(decisions, _fill(quota, available, mix_weights), np.random.default_rng([seed, number, 99]))
            counts = np.bincount(phase, minlength=len(PHASES)).astype(np.float64)
            natural += weight * counts / max(counts.sum(), 1.0)
            stats["games"][label] = played
            stats["decisions_per_game"][label] = round(float(counts.sum()) / played, 2)  # both sides, not forced
            stats["decisions"] += int(counts.sum())
            stats["forced"] += sum(d.forced for d in decisions)
            for round_, row in taken:
                d = decisions[round_]
                mover = player if d.player_moves[row] else (player if opponent_spec == "self" else opponent_spec)
                plan.append({"position": position_to_json(d.positions.position(row)),
                             "dice": [int(x) for x in d.dice[row]], "phase": PHASES[int(d.phase[row])],
                             "source": label, "mover": mover})
            bar.update(len(taken))
    except BotError as error:
        raise BenchmarkError(str(error)) from None
    finally:
        bar.close()
        for bot in built.values():
            bot.close()
    if len(plan) < positions:
        raise BenchmarkError(f"the sampling games gave {len(plan)} positions for the mix asked, not {positions}: "
                             f"give more sources or another --mix")
    order = np.random.default_rng([seed, 7]).permutation(len(plan))
    plan = [plan[i] for i in order]
    total = natural.sum()
    stats["natural_phase_share"] = {name: round(float(natural[i] / total), 4) if total else 0.0
                                    for i, name in enumerate(PHASES) if mix.get(name, 0) > 0 or natural[i]}
    stats["forced_share"] = round(stats["forced"] / max(stats["forced"] + stats["decisions"], 1), 4)
    return plan, stats
