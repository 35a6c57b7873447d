"""The evaluator: input encoding, the network and its outcomes, the fast kernel, afterstate values, checkpoints.

``encoding`` turns position batches into the ``tapa-td`` input (docs/encoding.md);
``model`` is the network (:class:`~tapa_ai.net.model.EvaluatorNet`), its outcome
classes and equity; ``fast_eval`` computes encoding and network in one sparse
numba kernel; ``afterstates`` values every afterstate of a move generation for
the side that moved (what self-play, the bots, the search and the arena play
by); ``checkpoint`` writes and loads self-describing checkpoints; ``shipped``
names the models installed with the package (``net:tapa``, from any
directory: :func:`~tapa_ai.net.shipped.resolve_model_path`). This package
imports only the foundation modules, ``rules`` and ``movegen``.
"""
