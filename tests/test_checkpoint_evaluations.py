"""A checkpoint's evaluation history (``extra.evaluations``, written by tapa_ai/training/evaluation.py and read
back by a resume, ``tapa-ai strength``'s training curve and :func:`tapa_ai.net.checkpoint.load_checkpoint`):
every field of a record is checked when the file is read, and a damaged one is one line naming the file and the
field (tapa_ai/net/checkpoint_read.py). Each case changes one field of one record of a shipped model's history.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tapa_ai.cli import main
from tapa_ai.errors import TapaError
from tapa_ai.net.checkpoint import CheckpointError, load_checkpoint

SHIPPED = Path(__file__).resolve().parent.parent / "tapa_ai" / "models" / "tapa.pt"


@pytest.fixture(scope="module")
def payload():
    return torch.load(SHIPPED, weights_only=True, map_location="cpu")


def written(payload, tmp_path: Path, change) -> Path:
    import copy

    data = copy.deepcopy(payload)
    change(data["extra"]["evaluations"][3])
    path = tmp_path / "damaged.pt"
    torch.save(data, path)
    return path


def test_the_shipped_history_is_read_as_it_was_written(payload, tmp_path):
    path = written(payload, tmp_path, lambda record: None)
    records = load_checkpoint(path).extra["evaluations"]
    assert records == payload["extra"]["evaluations"] and all(record["games"] >= 1 for record in records)


CASES = {
    "negative games": (lambda r: r.update(games=-400), "extra.evaluations[3].games should be an integer >= 1, got -400"),
    "no games": (lambda r: r.update(games=0), "extra.evaluations[3].games should be an integer >= 1, got 0"),
    "games not an integer": (lambda r: r.update(games=400.0), "extra.evaluations[3].games should be an integer, "
                                                               "got float"),
    "games missing": (lambda r: r.pop("games"), "extra.evaluations[3].games should be an integer, got NoneType"),
    "negative games trained": (lambda r: r.update(games_trained=-1),
                               "extra.evaluations[3].games_trained should be an integer >= 0, got -1"),
    "opponent not a name": (lambda r: r.update(opponent=3), "extra.evaluations[3].opponent should be a string, got int"),
    "ppg not finite": (lambda r: r.update(ppg=float("nan")), "extra.evaluations[3].ppg should be a finite number"),
    "interval of three": (lambda r: r.update(ppg_ci95=[0.1, 0.2, 0.3]),
                          "extra.evaluations[3].ppg_ci95 should be a pair of numbers, got 3 items"),
    "win rate above one": (lambda r: r.update(win_rate=1.5),
                           "extra.evaluations[3].win_rate should be a number from 0 to 1, got 1.5"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_damaged_evaluation_record_is_one_line_naming_the_file_and_the_field(payload, tmp_path, case):
    change, message = CASES[case]
    path = written(payload, tmp_path, change)
    with pytest.raises(CheckpointError) as raised:
        load_checkpoint(path)
    assert isinstance(raised.value, TapaError)
    assert str(raised.value).startswith(f"{path} is damaged: ") and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_negative_evaluation_game_count_stops_a_command_with_one_line(payload, tmp_path, capsys):
    path = written(payload, tmp_path, lambda r: r.update(games=-5))
    code = main(["export", str(path), "--format", "npz", "--out", str(tmp_path / "model.npz")])
    error = capsys.readouterr().err
    assert code == 2 and "Traceback" not in error
    assert [line for line in error.splitlines() if "compiling the numba kernels" not in line] == [
        f"tapa-ai export: {path} is damaged: extra.evaluations[3].games should be an integer >= 1, got -5"]
    assert not (tmp_path / "model.npz").exists()
