"""Learning from search: fit a network's 0-ply evaluation to its own n-ply search values.

TD(lambda) self-play learns from the net's 0-ply value of the next
positions; a **search target** looks deeper: after a roll, the move the net's
n-ply search plays (:class:`~tapa_ai.bots.search.NetBot`: 0-ply filter, the
candidates searched n plies) and that move's n-ply value, for one sampled
roll or averaged over the 21. Distilling it back into the 0-ply net moves
the net toward its own search strength, as GNU Backgammon's nets were
trained on rollouts and deeper evaluations. At 0 plies the target is the
TD(0) target of the greedy move: the control of every experiment.

Three steps, each its own function so experiments can mix them:

1. :func:`collect_states` - positions before the roll, from 0-ply self-play of the teacher;
2. :func:`search_targets` - the value of the move the teacher's n-ply search plays after a roll;
3. :func:`fit` - minibatch cross-entropy steps of the student toward them (the trainer's loss).

``scripts/search_distill.py`` runs them on a shipped checkpoint and measures the result
(docs/training.md, *Learning from search*).
"""

from __future__ import annotations

import copy
import hashlib
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch
from tqdm import tqdm

from ..bots.base import BotError
from ..rules.rolls import ROLL_WEIGHTS, ROLLS
from ..bots.search import (DEFAULT_CANDIDATES, DEFAULT_MARGIN, MAX_PLIES, NetBot,
                           check_last_ply_dice)
from ..errors import TapaError
from ..movegen.choice import segment_argmax
from ..movegen.generate import generate
from ..net.fast_eval import fast_encode
from ..net.model import EvaluatorNet, soft_cross_entropy
from ..rules.outcomes import outcome_points
from .selfplay import SelfPlay, state_width, unpack_states


class DistillError(TapaError, ValueError):
    """A distillation request that cannot be carried out; the message says why."""


def collect_states(net: EvaluatorNet, states: int, rng: np.random.Generator, parallel_games: int = 128,
                   every: int = 1, max_turns: int = 1000, progress: bool = False) -> np.ndarray:
    """(states, 52) int8 compact positions before the roll (mover's view) from greedy 0-ply self-play of ``net``.

    Every ``every``-th turn of each game is kept (1 = all), so fewer
    consecutive, strongly correlated positions enter the sample. The first
    turn is left out: under ``use-opening-dice`` it plays the opening roll,
    which a target's ordinary roll would misrepresent.
    """
    if states <= 0:
        raise DistillError(f"states={states}: ask for at least one position")
    if every < 1:
        raise DistillError(f"every={every}: keep every 1st, 2nd, ... turn (>= 1)")
    selfplay = SelfPlay(net.rules, net, parallel_games, rng, max_turns)
    kept: list[np.ndarray] = []
    total = 0
    with tqdm(total=states, desc="positions", unit="pos", disable=not progress) as bar:
        while total < states:
            for game in selfplay.play_ply(epsilon=0.0):
                rows = game.states[1::every]
                kept.append(rows)
                total += len(rows)
                bar.update(len(rows))
    return np.concatenate(kept)[:states]


def search_targets(net: EvaluatorNet, states: np.ndarray, plies: int, rng: Optional[np.random.Generator] = None,
                   rolls: str = "sample", candidates: Optional[int] = DEFAULT_CANDIDATES,
                   margin: Optional[float] = DEFAULT_MARGIN, chunk: int = 256, progress: bool = False,
                   refine: Optional[tuple[int, float]] = None, bearoff: bool = False,
                   last_ply_dice: Optional[int] = None) -> np.ndarray:
    """(N, K) float32 search values of compact positions before the roll, from the mover's view.

    For each position and roll, the move a ``plies``-ply :class:`NetBot` would
    play (0-ply equity, then the best ``candidates`` within ``margin`` searched
    ``plies`` deep) and its ``plies``-ply value: with ``rolls="all"`` averaged
    over the 21 rolls, with ``rolls="sample"`` for one roll drawn from ``rng``
    (21 times cheaper; unbiased, like a TD target). ``plies = 0`` with one
    sampled roll is the TD(0) target of the net's greedy move: the control.
    ``refine``: the second move filter of :class:`NetBot` (searches of 2 plies or more).
    ``bearoff``: bear-offs valued by the exact databases (config ``learning.bearoff_targets``).
    ``last_ply_dice = k``: the chosen move's value averages the search's last ply over ``k`` of the 36 dice
    drawn from ``rng`` (:func:`~tapa_ai.bots.search.sampled_rolls`) instead of all 21 rolls: unbiased,
    about 21 / k times cheaper at that ply, noisier by what the benchmark of docs/big-machines.md measures.
    Only where the move is chosen before the last ply is searched: 2 plies or more with ``refine = (1, m)``.
    """
    if not 0 <= plies <= MAX_PLIES:
        raise DistillError(f"plies={plies}: search targets come from 0 to {MAX_PLIES} plies")
    if rolls not in ("sample", "all"):
        raise DistillError(f"rolls={rolls!r}: 'sample' (one roll per position) or 'all' (the 21 rolls)")
    if rolls == "sample" and rng is None:
        raise DistillError("rolls='sample' needs a random generator (rng) to draw the dice")
    states = np.asarray(states, dtype=np.int8)
    width = state_width(net.rules)
    if states.ndim != 2 or states.shape[1] != width:
        raise DistillError(f"states of shape {states.shape}: expected (N, {width}) compact positions")
    try:
        # The pure network's search by default (training's default); bearoff=True: the databases value bear-offs.
        bot = NetBot(net, plies=plies, candidates=candidates, margin=margin, refine=refine, bearoff=bearoff)
        last_ply = None if last_ply_dice is None else (check_last_ply_dice(last_ply_dice), rng)
    except BotError as error:
        raise DistillError(str(error)) from None
    if last_ply is not None:
        if plies < 2 or bot.refine is None or bot.refine[0] != 1:
            raise DistillError(f"last_ply_dice={last_ply_dice}: sampled last-ply dice need a search of 2 plies "
                               f"or more whose second move filter keeps one move (refine=(1, margin)); got "
                               f"plies={plies}, refine={refine}: the move would be chosen by noisy values")
        if rng is None:
            raise DistillError("last_ply_dice needs a random generator (rng) to draw the dice")
    out = np.empty((len(states), net.num_outcomes), dtype=np.float32)
    with tqdm(total=len(states), desc=f"{plies}-ply targets", unit="pos", disable=not progress) as bar:
        for start in range(0, len(states), chunk):
            batch = unpack_states(states[start:start + chunk], net.rules)
            count = len(batch)
            if rolls == "all":
                batch = batch.take(np.repeat(np.arange(count), len(ROLLS)))
                dice = np.tile(ROLLS, (count, 1))
            else:
                dice = rng.integers(1, 7, size=(count, 2)).astype(np.int8)
            afterstates = generate(batch, dice)
            rows, values, equities = bot.ranked(afterstates, last_ply)
            best = segment_argmax(equities, np.searchsorted(rows, afterstates.offsets))
            chosen = values[best]  # the mover's view: the side that moved
            if rolls == "all":
                chosen = np.einsum("nrk,r->nk", chosen.reshape(count, len(ROLLS), -1), ROLL_WEIGHTS)
            out[start:start + count] = chosen
            bar.update(count)
    return out


def label_positions(net: EvaluatorNet, states: np.ndarray, learning, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Expert iteration's labels: a ``learning.search_fraction`` sample of ``states`` and their search targets.

    ``learning``: a :class:`~tapa_ai.config.LearningConfig` (``search_fraction``, ``search_plies``, the second
    move filter ``search_refine``/``search_refine_margin`` at 2 plies or more, ``bearoff_targets``,
    ``search_last_ply_dice``). Each
    position is kept with probability ``search_fraction`` (one ``rng.random`` draw per row), then the kept
    ones are labelled by :func:`search_targets` with the same ``rng``. The one function both the
    single-process trainer (in its learner) and the distributed actors (before they send a batch) call,
    so that the same weights, positions and generator give the same labels wherever they are made.
    Returns ``(labelled states, (L, K) float32 targets)``.
    """
    states = np.asarray(states, dtype=np.int8).reshape(-1, state_width(net.rules))
    labelled = states[rng.random(len(states)) < learning.search_fraction]
    if len(labelled) == 0:
        return labelled, np.zeros((0, net.num_outcomes), dtype=np.float32)
    refine = (learning.search_refine, learning.search_refine_margin) if learning.search_refine else None
    training = net.training
    net.eval()
    try:
        targets = search_targets(net, labelled, learning.search_plies, rng,
                                 refine=refine if learning.search_plies >= 2 else None,
                                 bearoff=learning.bearoff_targets, last_ply_dice=learning.search_last_ply_dice or None)
    finally:
        net.train(training)
    return labelled, targets


@dataclass
class FitReport:
    epochs: int
    steps: int
    train_loss: list[float]
    """Mean training cross-entropy of each epoch."""
    held_out_before: float
    held_out_after: float
    """Cross-entropy on the held-out positions before and after fitting (targets' entropy is the floor)."""
    held_out_entropy: float


def fit(net: EvaluatorNet, states: np.ndarray, targets: np.ndarray, rng: np.random.Generator, epochs: int = 4,
        learning_rate: float = 1e-4, batch_size: int = 256, held_out: float = 0.05,
        progress: bool = False) -> FitReport:
    """Fit ``net`` in place toward ``targets`` by Adam on the trainer's cross-entropy; the fast evaluator follows.

    A ``held_out`` fraction of the positions is kept out of the steps and
    reports the loss before and after, so over-fitting shows.
    """
    if len(states) != len(targets):
        raise DistillError(f"{len(states)} positions but {len(targets)} targets")
    if not 0 <= held_out < 1:
        raise DistillError(f"held_out={held_out}: a fraction in [0, 1)")
    if epochs < 1 or batch_size < 1 or not learning_rate > 0:
        raise DistillError(f"epochs={epochs}, batch_size={batch_size}, learning_rate={learning_rate}: "
                           "all must be positive")
    device = next(net.parameters()).device
    features = torch.from_numpy(fast_encode(unpack_states(states, net.rules), net.encoding_version)).to(device)
    targets_t = torch.from_numpy(np.asarray(targets, dtype=np.float32)).to(device)
    order = rng.permutation(len(states))
    test_count = int(round(held_out * len(states)))
    test, train = order[:test_count], order[test_count:]
    if train.size == 0:
        raise DistillError(f"no positions left to fit after holding out {test_count}")

    def held_out_loss() -> float:
        if test.size == 0:
            return float("nan")
        with torch.inference_mode():
            return float(soft_cross_entropy(net(features[test]), targets_t[test]))

    target_test = targets_t[test]
    entropy = float(-(target_test * torch.log(target_test.clamp_min(1e-12))).sum(-1).mean()) if test.size else float("nan")
    before = held_out_loss()
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    losses: list[float] = []
    steps = 0
    for _ in tqdm(range(epochs), desc="fit", unit="epoch", disable=not progress):
        permutation = torch.from_numpy(rng.permutation(train)).to(device)
        epoch_losses = []
        for start in range(0, len(permutation), batch_size):
            index = permutation[start:start + batch_size]
            loss = soft_cross_entropy(net(features[index]), targets_t[index])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            steps += 1
            epoch_losses.append(float(loss.detach()))
        losses.append(float(np.mean(epoch_losses)))
    return FitReport(epochs, steps, losses, before, held_out_loss(), entropy)


def student_of(teacher: EvaluatorNet) -> EvaluatorNet:
    """An independent copy of ``teacher`` to fit (the teacher's weights, and its targets, stay as they were)."""
    return copy.deepcopy(teacher)


def distill(teacher: EvaluatorNet, states: np.ndarray, plies: int, rng: np.random.Generator,
            targets: Optional[np.ndarray] = None, **fit_options) -> tuple[EvaluatorNet, FitReport]:
    """A copy of ``teacher`` fitted to its own ``plies``-ply values of ``states`` (or the given ``targets``)."""
    if targets is None:
        targets = search_targets(teacher, states, plies, rng)
    student = student_of(teacher)
    return student, fit(student, states, targets, rng, **fit_options)


def save_student(student: EvaluatorNet, teacher_path: str | Path, path: str | Path, facts: dict) -> Path:
    """Write ``student`` as a network-only checkpoint: the teacher's config and counters, new weights.

    ``facts`` (plain data: how it was fitted) go to ``extra["distill"]``; the
    file plays and evaluates like any checkpoint (``net:PATH``) but cannot be resumed.
    """
    from ..net.checkpoint import slim_checkpoint

    return slim_checkpoint(teacher_path, path, model_state=student.state_dict(),
                           extra={"distilled_from": str(teacher_path), "distill": facts})


def experiment(checkpoint: str | Path, out: str | Path, states: int = 200_000, every: int = 1,
               plies: Sequence[int] = (0, 1), rolls: str = "sample", epochs: int = 4, learning_rate: float = 1e-4,
               batch_size: int = 256, pairs: int = 5000, opponents: Sequence[str] = ("heuristic",),
               seed: int = 1, eval_seed: int = 1, progress: bool = True,
               refine: Optional[tuple[int, float]] = None) -> dict:
    """Distil a checkpoint's n-ply search into copies of it and measure them; returns the report (also out/report.json).

    Every student is fitted from the same teacher on the same positions; the
    ``plies = 0`` student (the TD(0) target, no search) is the control, so the
    comparison isolates what search adds. Targets are kept under ``out`` (a
    rerun with the same settings reuses them; other settings are refused).
    Measured: teacher and every student at 0-ply against each opponent
    (``pairs`` duplicate pairs, ``eval_seed``: the same deals for all), every
    student against the teacher, and every student against the control.
    """
    import json

    from ..arena.duels import duel
    from ..arena.match import claim_directory
    from ..bots.spec import make_bot
    from ..net.atomic_files import atomic_write
    from ..net.checkpoint import load_network

    out = Path(out)
    teacher = load_network(checkpoint)
    settings = {"checkpoint": str(checkpoint), "sha256": hashlib.sha256(Path(checkpoint).read_bytes()).hexdigest(),
                "states": states, "every": every, "rolls": rolls, "seed": seed}
    if refine is not None:
        # Only when given, so that directories of targets made before the option still match.
        settings["refine"] = list(refine)
    claim_directory(out, "targets.json", settings, "targets of other settings", DistillError)
    rng = np.random.default_rng(seed)
    state_path = out / "states.npy"
    if state_path.exists():
        sample = np.load(state_path)
    else:
        sample = collect_states(teacher, states, rng, every=every, progress=progress)
        # Kept files are reused by a rerun, so each is whole or absent: temporary file, fsync, rename.
        atomic_write(state_path, lambda handle: np.save(handle, sample))
    report: dict = {"settings": {**settings, "plies": list(plies), "epochs": epochs, "learning_rate": learning_rate,
                                 "batch_size": batch_size, "pairs": pairs, "eval_seed": eval_seed},
                    "students": {}}
    students: dict[int, EvaluatorNet] = {}
    for depth in plies:
        target_path = out / f"targets_{depth}ply.npz"
        if target_path.exists():
            with np.load(target_path) as kept_targets:
                targets, seconds = kept_targets["targets"], float(kept_targets["cpu_seconds"])
        else:
            start = time.process_time()
            targets = search_targets(teacher, sample, depth, np.random.default_rng([seed, depth]), rolls=rolls,
                                     progress=progress, refine=refine)
            seconds = time.process_time() - start
            atomic_write(target_path, lambda handle: np.savez(handle, targets=targets, cpu_seconds=seconds))
        student, fitted = distill(teacher, sample, depth, np.random.default_rng([seed, depth, 1]), targets=targets,
                                  epochs=epochs, learning_rate=learning_rate, batch_size=batch_size,
                                  progress=progress)
        facts = {"plies": depth, "rolls": rolls, "states": len(sample), "epochs": epochs,
                 "learning_rate": learning_rate, "batch_size": batch_size, "seed": seed,
                 "target_cpu_seconds": seconds, **asdict(fitted)}
        save_student(student, checkpoint, out / f"student_{depth}ply.pt", facts)
        students[depth] = student
        report["students"][f"{depth}ply"] = facts
    rules = teacher.rules
    report["matches"] = matches = {}
    for name in opponents:
        opponent = make_bot(name, rules)
        matches[f"teacher_vs_{name}"] = duel(rules, NetBot(teacher), opponent, pairs, eval_seed).summary()
        for depth, student in students.items():
            matches[f"{depth}ply_vs_{name}"] = duel(rules, NetBot(student), opponent, pairs, eval_seed).summary()
    for depth, student in students.items():
        matches[f"{depth}ply_vs_teacher"] = duel(rules, NetBot(student), NetBot(teacher), pairs,
                                                 eval_seed + 3).summary()
        if depth != 0 and 0 in students:
            matches[f"{depth}ply_vs_0ply"] = duel(rules, NetBot(student), NetBot(students[0]), pairs,
                                                  eval_seed + 3).summary()
    text = (json.dumps(report, indent=1) + "\n").encode()
    atomic_write(out / "report.json", lambda handle: handle.write(text))
    return report


def label_noise(net: EvaluatorNet, states: np.ndarray, plies: int, rng: np.random.Generator, samples: int = 4,
                refine: Optional[tuple[int, float]] = None) -> dict:
    """What an expert-iteration label carries: the search's correction of the net against the dice's noise.

    For each position (before the roll, mover's view), in equity: the net's own value ``V``, the
    ``plies``-ply search value averaged over the 21 rolls ``S`` (a ``rolls="all"`` label, 21 times the cost)
    and ``samples`` single-roll labels ``s`` (``rolls="sample"``, what training uses by default), plus the
    0-ply search over the 21 rolls ``S0`` (the TD(0) target's mean, a 1-ply value). Returns root mean squares
    (``rms_signal``: of ``S - V``, what the search would teach the net; ``rms_noise``: of ``s - S``, the
    roll's noise in one sampled label; ``rms_beyond_1ply``: of ``S - S0``, what the search adds over TD(0)),
    their means, and ``sampled_labels_per_signal``: ``(rms_noise / rms_signal) ** 2``, how many sampled
    labels of the same position average the noise down to the size of the signal.
    """
    if samples < 2:
        raise DistillError(f"samples={samples}: at least 2 sampled labels a position, to measure their spread")
    states = np.asarray(states, dtype=np.int8)
    points = outcome_points(net.rules)
    training = net.training
    net.eval()
    try:
        with torch.inference_mode():
            features = torch.from_numpy(fast_encode(unpack_states(states, net.rules), net.encoding_version))
            own = net.equity(features).numpy()
        averaged = search_targets(net, states, plies, rolls="all", refine=refine) @ points
        one_ply = search_targets(net, states, 0, rolls="all") @ points
        start = time.process_time()
        sampled = np.stack([search_targets(net, states, plies, rng, refine=refine) @ points for _ in range(samples)])
        sample_ms = (time.process_time() - start) / (samples * len(states)) * 1e3
    finally:
        net.train(training)

    def rms(values: np.ndarray) -> float:
        return float(np.sqrt(np.mean(np.square(values))))

    signal, noise, beyond = averaged - own, sampled - averaged[None, :], averaged - one_ply
    return {"positions": int(len(states)), "plies": plies, "samples": samples,
            "refine": list(refine) if refine else None,
            "rms_signal": rms(signal), "mean_signal": float(signal.mean()),
            "rms_noise": rms(noise), "mean_noise": float(noise.mean()),
            "rms_beyond_1ply": rms(beyond), "mean_beyond_1ply": float(beyond.mean()),
            "rms_1ply_vs_net": rms(one_ply - own), "mean_1ply_vs_net": float((one_ply - own).mean()),
            "sampled_labels_per_signal": (rms(noise) / max(rms(signal), 1e-12)) ** 2,
            "sampled_label_cpu_ms": sample_ms}
