"""The evaluator interface: values of whole batches of positions in the outcome classes.

Everything that plays or rates by a model (the n-ply search and every net-like
bot, duels, rollouts, the benchmark, analysis, self-play) asks an
:class:`Evaluator`, as wildbg's ``Evaluator::eval_batch`` is asked: it never
needs to know what computes the numbers. An evaluator gives

- :meth:`Evaluator.evaluate_flipped`: (B, K) the values of ``batch.flipped()``
  (the other side to roll), read back from ``batch``'s side to move; an
  afterstate batch is exactly this case (the side that moved is ``turn``, the
  opponent rolls next), so it is the one method an implementation must have;
- :meth:`Evaluator.evaluate`: (B, K) the values of positions before their side
  to move rolls, from its view;
- :meth:`Evaluator.afterstate_distributions`: (N, K) the values of a move
  generation's afterstates from the mover's view, a finished game its exact
  outcome (one-hot).

Implementations:

- :class:`TorchEvaluator`: :func:`~tapa_ai.net.encoding.encode` and the torch
  network (the reference);
- :class:`KernelEvaluator`: the sparse numba kernel of
  :mod:`tapa_ai.net.fast_eval` over a copy of the network's weights (about 7x
  faster; the default, :func:`evaluator_for`). It owns that copy: it is
  refreshed when the network's parameters change (their versions are compared
  on each call, a cheap tuple), or at once by :meth:`KernelEvaluator.refresh`;
- :class:`EncodedEvaluator`: any function from encoded inputs to class
  probabilities, such as an ONNX session (``onnx:`` bots) or the numpy-only
  model of an exported ``.npz`` (:func:`numpy_evaluator`);
- :class:`BearoffEvaluator`: a wrapper over any of them that values every
  bear-off by the exact databases (:mod:`tapa_ai.bearoff.evaluate`) instead;
- :class:`RulesEvaluator`: a wrapper that lets a model play another rule set of
  the same board game (the backgammon network playing Portes): positions are
  shown to the model as its own rule set's, and its outcome classes are valued
  with the playing rule set's points (:func:`playing_rules`).

The values are float32 from the networks (float64 where the databases
answer); :meth:`Evaluator.afterstate_distributions` casts to the ``dtype``
asked for.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from ..bearoff.evaluate import bearoff_distributions, bearoff_mask
from ..errors import TapaError
from ..movegen.batch import PositionBatch
from ..movegen.generate import Afterstates
from ..rules.options import SCORING_OPTIONS, RuleOptions, board_game_difference
from ..rules.outcomes import num_outcomes, outcome_classes, outcome_points, swap_sides

__all__ = ["Evaluator", "TorchEvaluator", "KernelEvaluator", "EncodedEvaluator", "BearoffEvaluator",
           "RulesEvaluator", "evaluator_for", "numpy_evaluator", "with_finished_outcomes", "kernel_available",
           "playing_rules", "check_same_board_game", "OtherBoardGameError"]


def with_finished_outcomes(distributions: np.ndarray, afterstates: Afterstates) -> np.ndarray:
    """``distributions`` (N, K, the mover's view) with every afterstate that ended the game set to its exact
    outcome (one-hot; the mover is the side that can win by its own move), in place; returned."""
    over = np.flatnonzero(afterstates.game_over)
    if over.size:
        classes = outcome_classes(afterstates.result_kind[over], np.ones(over.size, dtype=bool))
        distributions[over] = 0.0
        distributions[over, classes] = 1.0
    return distributions


class Evaluator(ABC):
    """Values of batches of positions in the outcome classes of :attr:`rules` (module docstring)."""

    rules: RuleOptions
    name: str = "evaluator"

    @property
    def num_outcomes(self) -> int:
        return num_outcomes(self.rules)

    @property
    def points(self) -> np.ndarray:
        """(K,) float64 points of each outcome class (the equity is ``values @ points``)."""
        return outcome_points(self.rules).astype(np.float64)

    @property
    def bearoff(self) -> bool:
        """Whether bear-offs are valued by the exact databases (:class:`BearoffEvaluator`)."""
        return False

    @property
    def model(self) -> "Evaluator":
        """The evaluator of the model itself, without the databases (self, unless this is a wrapper)."""
        return self

    @property
    def model_rules(self) -> RuleOptions:
        """The rule set the model was trained for (:attr:`rules`, except where a :class:`RulesEvaluator` plays
        another rule set of its board game)."""
        return self.rules

    def refresh(self) -> None:
        """Follow the model's weights now (nothing to do for a model that reads them on every call)."""

    @abstractmethod
    def evaluate_flipped(self, batch: PositionBatch) -> np.ndarray:
        """(B, K) the values of ``batch.flipped()`` (the other side to roll), from ``batch``'s side to move."""

    def evaluate(self, batch: PositionBatch) -> np.ndarray:
        """(B, K) the values of positions before their side to move rolls, from its view."""
        return swap_sides(self.evaluate_flipped(batch.flipped()))

    def evaluate_next(self, afterstates: PositionBatch, same_side: Optional[np.ndarray] = None) -> np.ndarray:
        """(B, K) the values of afterstates' next decisions, from the view of the side that moved: the
        opponent's (:meth:`evaluate_flipped`), or where ``same_side`` the mover's own next decision inside a
        cascade (docs/rules.md 10.2; :meth:`evaluate` of the afterstate itself, which carries that decision)."""
        if same_side is None or not same_side.any():
            return self.evaluate_flipped(afterstates)
        values = np.empty((len(afterstates), self.num_outcomes), dtype=np.float64)
        if not same_side.all():
            values[~same_side] = self.evaluate_flipped(afterstates.take(~same_side))
        values[same_side] = self.evaluate(afterstates.take(same_side))
        return values

    def afterstate_distributions(self, afterstates: Afterstates, dtype=np.float64) -> np.ndarray:
        """(N, K) the afterstates' values from the view of the side that moved, as ``dtype``: a finished game
        its exact outcome, any other the value of its next decision (:meth:`evaluate_next`)."""
        if len(afterstates) == 0:
            return np.zeros((0, self.num_outcomes), dtype=dtype)
        values = np.array(self.evaluate_next(afterstates.positions, afterstates.same_side), dtype=dtype, copy=True)
        return with_finished_outcomes(values, afterstates)

    def check_rules(self, rules: RuleOptions, who: Optional[str] = None) -> None:
        """ValueError (one line) unless this evaluator values positions of ``rules``."""
        if rules != self.rules:
            raise ValueError(f"{who or self.name!r} was trained for rule set {self.rules.name!r}; it cannot play "
                             f"{rules.name!r}")

    def model_batch(self, batch: PositionBatch) -> PositionBatch:
        """``batch`` as the model is shown it (the same positions; :class:`RulesEvaluator` relabels the rules)."""
        return batch


class TorchEvaluator(Evaluator):
    """The torch network on :func:`~tapa_ai.net.encoding.encode`'s inputs (the reference path)."""

    def __init__(self, net: Any, name: Optional[str] = None) -> None:
        self.net = net
        self.rules = net.rules
        self.encoding_version = net.encoding_version
        self.name = name or "torch"

    def evaluate_flipped(self, batch: PositionBatch) -> np.ndarray:
        return swap_sides(self._probabilities(batch.flipped()))

    def evaluate(self, batch: PositionBatch) -> np.ndarray:
        return self._probabilities(batch)

    def _probabilities(self, batch: PositionBatch) -> np.ndarray:
        import torch

        from .encoding import encode

        features = encode(batch, version=self.encoding_version)
        with torch.inference_mode():
            logits = self.net(torch.from_numpy(features).to(self.net.points.device))
            return torch.softmax(logits, dim=-1).cpu().numpy()


def kernel_available(net: Any) -> bool:
    """Whether the kernel can evaluate ``net``: an activation it implements, and ``TAPA_FAST_EVAL`` not 0."""
    from .fast_eval import ACTIVATION_CODES

    return os.environ.get("TAPA_FAST_EVAL", "1") != "0" and net.config.activation in ACTIVATION_CODES


def _parameter_versions(net: Any) -> tuple:
    # Every in-place change of a tensor (optimizer step, load_state_dict, copy_) bumps its version.
    return tuple((id(p), p._version) for p in net.parameters())  # noqa: SLF001


class KernelEvaluator(Evaluator):
    """The sparse numba kernel over this evaluator's own copy of a network's weights (module docstring).

    The copy follows the network: a call after the network's parameters changed
    (a learning step, ``load_state_dict``) copies them first. :meth:`adopt`
    takes a kernel already built from the same weights elsewhere (the
    overlapped trainer builds the next one in its learner thread).
    """

    def __init__(self, net: Any, threads: Optional[int] = None, dense: Optional[str] = None,
                 name: Optional[str] = None) -> None:
        from .fast_eval import FastEvaluator

        self.net = net
        self.rules = net.rules
        self.encoding_version = net.encoding_version
        self.name = name or "kernel"
        self.kernel = FastEvaluator(net, threads, dense)
        self._versions = _parameter_versions(net)

    def refresh(self) -> None:
        """Copy the network's current weights now."""
        self.kernel.refresh(self.net)
        self._versions = _parameter_versions(self.net)

    def adopt(self, kernel: Any) -> None:
        """Use ``kernel`` (a :class:`~tapa_ai.net.fast_eval.FastEvaluator` built from the network's current
        weights) from now on."""
        self.kernel = kernel
        self._versions = _parameter_versions(self.net)

    def current(self) -> Any:
        """The kernel, refreshed first if the network's weights changed since it copied them."""
        versions = _parameter_versions(self.net)
        if versions != self._versions:
            self.kernel.refresh(self.net)
            self._versions = versions
        return self.kernel

    def evaluate_flipped(self, batch: PositionBatch) -> np.ndarray:
        return self.current().evaluate_flipped(batch)[0]

    def evaluate(self, batch: PositionBatch) -> np.ndarray:
        return self.current().evaluate(batch)[0]

    def afterstate_distributions(self, afterstates: Afterstates, dtype=np.float64) -> np.ndarray:
        # The kernel writes finished games' exact outcomes itself and skips evaluating them.
        return self.current().afterstate_distributions(afterstates)[0].astype(dtype, copy=False)


class EncodedEvaluator(Evaluator):
    """Any model from encoded inputs to class probabilities: ``probabilities(features (B, F) float32) -> (B, K)``
    from the side to move (an ONNX session, the numpy-only model of an exported ``.npz``)."""

    def __init__(self, probabilities: Callable[[np.ndarray], np.ndarray], rules: RuleOptions,
                 encoding_version: int, name: str) -> None:
        self.probabilities = probabilities
        self.rules = rules
        self.encoding_version = encoding_version
        self.name = name

    def evaluate(self, batch: PositionBatch) -> np.ndarray:
        from .encoding import encode

        if len(batch) == 0:
            return np.zeros((0, self.num_outcomes), dtype=np.float32)
        return np.asarray(self.probabilities(encode(batch, version=self.encoding_version)), dtype=np.float32)

    def evaluate_flipped(self, batch: PositionBatch) -> np.ndarray:
        return swap_sides(self.evaluate(batch.flipped()))


def numpy_evaluator(model: Any, name: str = "npz") -> EncodedEvaluator:
    """An :class:`EncodedEvaluator` of an exported numpy-only model
    (:class:`tapa_ai.export.numpy_model.NumpyEvaluator`, as ``numpy_model.load`` gives it)."""
    rules = RuleOptions.from_dict(model.metadata["rule_options"])
    return EncodedEvaluator(lambda features: model.evaluate(features)[0], rules, model.encoding_version, name)


class BearoffEvaluator(Evaluator):
    """Another evaluator, except that every bear-off is valued by the exact databases
    (:func:`tapa_ai.bearoff.evaluate.bearoff_distributions`), as GNU Backgammon values them: the bear-offs of rule
    sets they are exact for (:func:`tapa_ai.bearoff.evaluate.database_mask`, by the one declaration
    :func:`tapa_ai.bearoff.exactness.why_not_exact`); those of another rule set (cascading doubles) keep the
    inner evaluator's value."""

    def __init__(self, inner: Evaluator) -> None:
        if isinstance(inner, BearoffEvaluator):
            inner = inner.inner
        self.inner = inner
        self.rules = inner.rules
        self.name = inner.name

    @property
    def bearoff(self) -> bool:
        return True

    @property
    def model(self) -> Evaluator:
        return self.inner

    @property
    def points(self) -> np.ndarray:
        return self.inner.points

    @property
    def model_rules(self) -> RuleOptions:
        return self.inner.model_rules

    def model_batch(self, batch: PositionBatch) -> PositionBatch:
        return self.inner.model_batch(batch)

    def refresh(self) -> None:
        self.inner.refresh()

    def evaluate_flipped(self, batch: PositionBatch) -> np.ndarray:
        return self._with_databases(batch, self.inner.evaluate_flipped, flipped=True)

    def evaluate(self, batch: PositionBatch) -> np.ndarray:
        return self._with_databases(batch, self.inner.evaluate, flipped=False)

    def _with_databases(self, batch: PositionBatch, model_values: Callable[[PositionBatch], np.ndarray],
                        flipped: bool) -> np.ndarray:
        """``model_values(batch)``, with the databases' values of the bear-offs instead (the mask is the same from
        either side's view); ``flipped``: of ``batch.flipped()`` read back from ``batch``'s side (sides swapped).
        Only where the databases are exact for the row's rule set (:func:`~tapa_ai.bearoff.evaluate.database_mask`)."""
        from ..bearoff.evaluate import database_mask

        known = np.flatnonzero(database_mask(batch))
        if not known.size:
            return model_values(batch)
        values = np.empty((len(batch), self.num_outcomes))
        rest = np.setdiff1d(np.arange(len(batch)), known, assume_unique=True)
        if rest.size:
            values[rest] = model_values(batch.take(rest))
        bearoffs = batch.take(known)
        values[known] = (swap_sides(bearoff_distributions(bearoffs.flipped())[1]) if flipped else
                         bearoff_distributions(bearoffs)[1])
        return values

    def afterstate_distributions(self, afterstates: Afterstates, dtype=np.float64) -> np.ndarray:
        from ..bearoff.evaluate import database_mask  # the bear-offs of rule sets the databases are exact for

        known = np.flatnonzero(database_mask(afterstates.positions) & ~afterstates.game_over)
        if not known.size:
            return self.inner.afterstate_distributions(afterstates, dtype)
        values = np.empty((len(afterstates), self.num_outcomes), dtype=dtype)
        rest = np.setdiff1d(np.arange(len(afterstates)), known, assume_unique=True)
        if rest.size:
            values[rest] = self.inner.afterstate_distributions(afterstates.rows(rest), dtype)
        values[known] = swap_sides(bearoff_distributions(afterstates.positions.take(known).flipped())[1])
        return values


class OtherBoardGameError(TapaError, ValueError):
    """A model asked to play a rule set of another board game (one line, naming the options that differ)."""


class RulesEvaluator(Evaluator):
    """A model of one rule set valuing positions of another rule set of the same board game.

    The backgammon network plays Portes this way (docs/rules.md 9: the same board
    game, scored without backgammons or cube): every position of ``rules`` is
    shown to the model as a position of the model's own rule set (the same
    board; the rule-flag inputs it was trained with: the encoding's
    ``rules.*`` columns, the fast kernel's rule bias), so its outcome
    probabilities are the ones it learnt; they are read as ``rules``' outcome
    classes (the same classes; a finished game is its exact outcome under
    ``rules``: a backgammon of Portes is a gammon) and valued with the points
    of ``points_rules`` (default ``rules``: Portes counts the top class, the
    model's backgammons, 2). ``points_rules`` of another rule set values the
    same probabilities with its points instead: ``net:backgammon,points=backgammon``
    playing Portes values backgammons at 3, the baseline of docs/portes.md.
    """

    def __init__(self, inner: Evaluator, rules: RuleOptions, points_rules: Optional[RuleOptions] = None) -> None:
        check_same_board_game(inner.rules, rules, repr(inner.name))
        if points_rules is not None:
            check_same_board_game(inner.rules, points_rules, repr(inner.name))
        self.inner = inner
        self.rules = rules
        self.points_rules = points_rules
        """The rule set whose points value the classes, where not :attr:`rules` (None: :attr:`rules`')."""
        self.name = inner.name
        self.encoding_version = getattr(inner, "encoding_version", None)
        self.net = getattr(inner, "net", None)

    @property
    def points(self) -> np.ndarray:
        return outcome_points(self.points_rules or self.rules).astype(np.float64)

    @property
    def model_rules(self) -> RuleOptions:
        return self.inner.rules

    def refresh(self) -> None:
        self.inner.refresh()

    def model_batch(self, batch: PositionBatch) -> PositionBatch:
        """``batch`` with its rule set ``rules`` relabelled as the model's (the same arrays, shared)."""
        if self.inner.rules in batch.rules and self.rules not in batch.rules:
            return batch
        return replace(batch, rules=tuple(self.inner.rules if rules == self.rules else rules for rules in batch.rules))

    def evaluate_flipped(self, batch: PositionBatch) -> np.ndarray:
        return self.inner.evaluate_flipped(self.model_batch(batch))

    def evaluate(self, batch: PositionBatch) -> np.ndarray:
        return self.inner.evaluate(self.model_batch(batch))

    def afterstate_distributions(self, afterstates: Afterstates, dtype=np.float64) -> np.ndarray:
        # The finished games keep their result under the playing rules (the generator's result codes).
        shown = replace(afterstates, positions=self.model_batch(afterstates.positions))
        return self.inner.afterstate_distributions(shown, dtype)


def check_same_board_game(model_rules: RuleOptions, rules: RuleOptions, who: str = "the model") -> None:
    """:class:`OtherBoardGameError` (one line) unless a model of ``model_rules`` can play ``rules``: the same board
    game, differing at most in scoring, cube and opening (:data:`~tapa_ai.rules.options.SCORING_OPTIONS`)."""
    difference = board_game_difference(model_rules, rules)
    if difference:
        changed = ", ".join(f"{option}={theirs!r} (the model's {mine!r})"
                            for option, (mine, theirs) in sorted(difference.items()))
        raise OtherBoardGameError(
            f"{who} was trained for rule set {model_rules.name!r}; it cannot play {rules.name!r}, another board "
            f"game: {changed} (a model plays the rule sets of its own board game, which may differ only in "
            f"{', '.join(SCORING_OPTIONS[1:])})")


def playing_rules(evaluator: Evaluator, rules: RuleOptions, points_rules: Optional[RuleOptions] = None
                  ) -> Evaluator:
    """``evaluator``'s model valuing positions of ``rules`` (with the points of ``points_rules``, default
    ``rules``'s; given, it is kept even where it is ``rules``, so that the bot keeps it when set to play another
    rule set), in the bear-off databases where ``evaluator`` is; ``evaluator``'s model itself for its own rules and
    no ``points_rules``. :class:`OtherBoardGameError` for a rule set of another board game."""
    model = evaluator.model
    if isinstance(model, RulesEvaluator):
        model = model.inner
    adapted = model if rules == model.rules and points_rules is None else RulesEvaluator(model, rules, points_rules)
    return BearoffEvaluator(adapted) if evaluator.bearoff else adapted


def evaluator_for(net: Any, bearoff: bool = True, name: Optional[str] = None) -> Evaluator:
    """The evaluator a network plays by: the kernel where it can run the network (:func:`kernel_available`),
    else torch; wrapped in the bear-off databases unless ``bearoff=False``."""
    model = KernelEvaluator(net, name=name) if kernel_available(net) else TorchEvaluator(net, name=name)
    return BearoffEvaluator(model) if bearoff else model
