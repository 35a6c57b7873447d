"""Issue 50's mutation spot-check: a planted bug that survived every test, caught here where the module's own
test file was being changed by others at the time (this test belongs with tests/test_distributed_search.py).

The learner of expert iteration (:meth:`DistributedTrainer._take`) keeps each position an actor labelled with
that position's own search target: a learner that paired them otherwise (shifted, reversed, another batch's)
would fit targets to the wrong positions, and the run would still train without an error.
"""

import numpy as np

from tapa_ai.config import load_config
from tapa_ai.training.actor import SelfPlayActor, numpy_state
from tapa_ai.training.distributed import DistributedTrainer
from tapa_ai.training.schedule import Schedule

TINY = ["selfplay.parallel_games=8", "model.hidden=16", "learning.batch_size=64", "eval.every_games=100000",
        "eval.games=8", "logging.tensorboard=false", "distributed.workers=2", "distributed.games_per_batch=4",
        "learning.targets=search", "learning.search_fraction=0.2", "learning.search_plies=0",
        "learning.replay_size=5000", "learning.replay_ratio=2"]


def test_the_learner_keeps_each_actor_label_with_the_position_it_was_searched_for(tmp_path):
    config = load_config("configs/quick.toml", [*TINY, f"checkpoint.directory={tmp_path}"])
    trainer = DistributedTrainer(config, tmp_path / "run")
    batches = []
    for slot in (0, 1):  # two actors' batches, learned one after the other
        actor = SelfPlayActor(config, slot=slot, seed=[7, slot])
        actor.set_weights(0, numpy_state(trainer.net))
        batches.append(actor.play(4, epsilon=0.1))
    states = np.concatenate([batch.search_states for batch in batches])
    targets = np.concatenate([batch.search_targets for batch in batches])
    # the labelled positions and their targets differ from one another (a position may come up twice: the
    # opening), so a wrong pairing shows
    assert len(states) > 4 and all(len(batch.search_states) > 1 for batch in batches)
    assert len({row.tobytes() for row in states}) > len(states) / 2
    assert len({row.tobytes() for row in targets}) > len(targets) / 2
    schedule = Schedule(trainer, progress=False)
    try:
        for batch in batches:
            trainer._take(batch, schedule)
    finally:
        schedule.close()
    assert trainer.labels_added == len(trainer.replay) == len(states)
    assert trainer.learner.replay_credit == 2 * len(states) and not trainer.pending
    assert np.array_equal(trainer.replay.states[:len(states)], states)
    assert np.array_equal(trainer.replay.targets[:len(states)], targets)
    # what the learner then fits: each drawn position with its own target
    labels = {}
    for row, target in zip(states, targets):
        labels.setdefault(row.tobytes(), []).append(target.tobytes())
    drawn_states, drawn_targets = trainer.learner.draw_replay()
    assert len(drawn_states) == 2 * len(states)
    assert all(target.tobytes() in labels[row.tobytes()] for row, target in zip(drawn_states, drawn_targets))
