"""What a training checkpoint holds of a run, and a run restored from one: the one place of that mapping.

A checkpoint (:func:`~tapa_ai.net.checkpoint.make_payload`'s fields) keeps the network, the optimizer, the
counters and the run's numpy generator; its ``extra`` keeps the running self-play games (``selfplay``), the
finished games not learned from yet (``pending``), the replay buffer of expert iteration with its credit and
label count (``replay``), the weights self-play plays with under ``learning.overlap`` (``play_weights``), the
best score and the opponents it was measured against (``best_score``, ``best_opponents``), the run's clocks
(``cpu_seconds``, ``wall_seconds``), the learner's updates (``learner_updates``) and every evaluation
(``evaluations``). A run restored from it continues exactly as if it had never stopped; files written before a
key existed still resume (the key's value starts afresh).
"""

from __future__ import annotations

import math
import sys
from typing import Protocol

import numpy as np
import torch

from ..config import TrainConfig
from ..net.checkpoint import Checkpoint
from ..net.encoding import ENCODING_NAME
from ..rules.options import RuleOptions
from .evaluation import EvalRecord, Evaluation
from .learner import Learner
from .runs import TrainingError
from .selfplay import FinishedGame, SelfPlay

__all__ = ["TrainingRun", "payload", "restore", "check_optimizer_state"]


class TrainingRun(Protocol):
    """The parts of a trainer a checkpoint holds (:class:`~tapa_ai.training.trainer.Trainer`)."""

    config: TrainConfig
    rules: RuleOptions
    rng: np.random.Generator
    learner: Learner
    selfplay: SelfPlay
    evaluation: Evaluation
    pending: list[FinishedGame]
    cpu_seconds: float
    wall_seconds: float


def payload(run: TrainingRun) -> dict:
    """The keyword arguments of :func:`~tapa_ai.net.checkpoint.make_payload` for ``run`` as it stands (its
    learning pass in flight, if any, finished first)."""
    learner, evaluation = run.learner, run.evaluation
    learner.join()
    net = learner.net
    return dict(
        model_state={k: v.detach().cpu() for k, v in net.state_dict().items()},
        model_config=net.architecture(),
        encoding=(ENCODING_NAME, net.encoding_version),
        rule_options=run.rules,
        config=run.config,
        games=run.selfplay.stats.games,
        steps=learner.steps,
        decisions=run.selfplay.stats.decisions,
        optimizer_state=learner.optimizer.state_dict(),
        save_torch_rng=False,
        numpy_generator=run.rng,
        extra={
            "selfplay": run.selfplay.state_dict(),
            "pending": [game.to_plain() for game in run.pending],
            "replay": None if learner.replay is None else {**learner.replay.state_dict(),
                                                          "credit": learner.replay_credit,
                                                          "labels": learner.labels_added},
            # learning.overlap: the weights self-play plays with (one learning pass behind the net).
            "play_weights": None if not learner.overlaps else {
                k: v.detach().cpu() for k, v in learner.play_net.state_dict().items()},
            "best_score": evaluation.best_score if math.isfinite(evaluation.best_score) else None,
            "best_opponents": list(run.config.eval.opponents),
            "cpu_seconds": run.cpu_seconds,
            "learner_updates": learner.updates,
            "wall_seconds": run.wall_seconds,
            "evaluations": [record.to_plain() for record in evaluation.records],
        },
    )


def restore(run: TrainingRun, checkpoint: Checkpoint) -> None:
    """Set ``run`` (built from the checkpoint's config, any ``--set`` overrides applied) to the checkpoint's
    state; :class:`TrainingError` if the checkpoint does not fit it."""
    learner, evaluation = run.learner, run.evaluation
    try:
        learner.net.load_state_dict(checkpoint.model_state)
        if checkpoint.optimizer_state is not None:
            optimizer = learner.optimizer
            check_optimizer_state(optimizer, checkpoint.optimizer_state)
            optimizer.load_state_dict(checkpoint.optimizer_state)
            # The stored state carries the old hyperparameters; the config (with any
            # --set override given on resume) decides the learning rate from here on.
            for group in optimizer.param_groups:
                group["lr"] = run.config.learning.learning_rate
                group["weight_decay"] = run.config.learning.weight_decay
                if isinstance(optimizer, torch.optim.Adam):  # older checkpoints stored foreach=None
                    group["foreach"] = True
        checkpoint.restore_rng(numpy_generator=run.rng)
        run.selfplay.load_state_dict(checkpoint.extra["selfplay"])
        run.pending = [FinishedGame.from_plain(game) for game in checkpoint.extra.get("pending", [])]
        if learner.overlaps:
            # A run that overlapped before plays on with the weights it played with; one that starts
            # overlapping here plays with the net's.
            learner.play_net.load_state_dict(checkpoint.extra.get("play_weights") or checkpoint.model_state)
        if learner.replay is not None:
            replay = checkpoint.extra.get("replay")
            if replay is None:
                # A run switched to expert iteration on resume (e.g. a TD-trained net fine-tuned by
                # search targets): it starts with an empty buffer, as a new run does.
                print(f"{checkpoint.path}: trained without search targets; expert iteration "
                      "starts here with an empty replay buffer", file=sys.stderr)
            else:
                learner.replay.load_state_dict(replay)
                learner.replay_credit = float(replay["credit"])
                learner.labels_added = int(replay.get("labels", 0))  # files before the count: from here
    except (KeyError, RuntimeError, ValueError) as error:
        raise TrainingError(f"{checkpoint.path}: cannot resume from this checkpoint: {error}") from None
    learner.steps = checkpoint.steps
    learner.updates = int(checkpoint.extra.get("learner_updates", 0))
    run.cpu_seconds = float(checkpoint.extra.get("cpu_seconds", 0.0))
    run.wall_seconds = float(checkpoint.extra.get("wall_seconds", 0.0))
    best = checkpoint.extra.get("best_score")
    # A best score measured against other opponents (eval.opponents changed on resume) says nothing.
    records = checkpoint.extra.get("evaluations", [])
    last = max((r["games_trained"] for r in records), default=None)
    # Files from before "best_opponents" was stored: the opponents of their last evaluation.
    best_opponents = checkpoint.extra.get(
        "best_opponents", [r["opponent"] for r in records if r["games_trained"] == last])
    same_opponents = list(best_opponents) == list(run.config.eval.opponents)
    evaluation.best_score = -math.inf if best is None or not same_opponents else float(best)
    evaluation.records = [EvalRecord.from_plain(r) for r in records]


def check_optimizer_state(optimizer: torch.optim.Optimizer, state: dict) -> None:
    """Raise ValueError unless each stored moment fits its parameter and is finite (torch checks neither)."""
    parameters = [parameter for group in optimizer.param_groups for parameter in group["params"]]
    for index, entry in (state.get("state") or {}).items():
        for key, value in (entry.items() if isinstance(entry, dict) else ()):
            if not isinstance(value, torch.Tensor) or value.dim() == 0:
                continue  # the step count
            if not isinstance(index, int) or not 0 <= index < len(parameters) \
                    or value.shape != parameters[index].shape:
                raise ValueError(f"optimizer state {index}.{key} does not fit the network")
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                raise ValueError(f"optimizer state {index}.{key} holds non-finite numbers (NaN or infinity)")
