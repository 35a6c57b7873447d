"""The bounded JSON reader behind ``play``'s load and ``analyse`` (tapa_ai/notation/json_file.py)."""

from __future__ import annotations

import json

import pytest

from tapa_ai.analysis import RecordError, read_record
from tapa_ai.notation.json_file import MAX_FILE_BYTES, MAX_NESTING, JsonFileError, nesting, read_json_file
from tapa_ai.play.saves import SaveError, read_file


def _write(tmp_path, name, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    return path


BAD = {
    "missing": (None, "no file"),
    "truncated": (b'{"format": "tapa-ai/games", "games": [1, 2', "the file ends too early: truncated?"),
    "not-json": (b"{not json}", "is not valid JSON (line 1, column 2"),
    "latin-1": ("{\"a\": \"caf\u00e9\"}".encode("latin-1"), "is not UTF-8 text (invalid continuation byte at byte"),
    "too-deep": (b"[" * (MAX_NESTING + 1) + b"]" * (MAX_NESTING + 1),
                 f"nests arrays or objects more than {MAX_NESTING} deep"),
    "past-recursion-limit": (b"[" * 200_000 + b"]" * 200_000, f"nests arrays or objects more than {MAX_NESTING} deep"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_every_refusal_is_one_line_naming_the_file_and_both_readers_say_the_same(tmp_path, case):
    content, message = BAD[case]
    path = tmp_path / "missing.json" if content is None else _write(tmp_path, f"{case}.json", content)
    with pytest.raises(JsonFileError) as plain:
        read_json_file(path, "a thing")
    with pytest.raises(SaveError) as save:
        read_file(path)
    with pytest.raises(RecordError) as record:
        read_record(path)
    for error in (plain.value, save.value, record.value):
        text = str(error)
        assert message in text and repr(str(path)) in text and "\n" not in text, text
    if case in ("latin-1", "too-deep"):  # says what the file should have been
        assert str(save.value).endswith("not a saved game or a position")
        assert str(record.value).endswith("not a game record")


def test_a_file_over_the_bound_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 10)  # sparse
    with pytest.raises(RecordError, match=r"is larger than 16 MB: not a game record \(reading stopped there\)"):
        read_record(path)


def test_nesting_counts_arrays_and_objects_and_stops_past_the_bound():
    assert nesting(3) == 0 and nesting([]) == 1 and nesting({"a": [1, {"b": []}]}) == 4
    deep: list = []
    for _ in range(MAX_NESTING * 3):
        deep = [deep]
    assert nesting(deep) == MAX_NESTING + 1


def test_good_json_at_the_bound_is_read(tmp_path):
    data = {"a": [[1, 2], {"b": None}], "c": "caf\u00e9"}
    nested: list = []
    for _ in range(MAX_NESTING - 2):
        nested = [nested]
    path = _write(tmp_path, "ok.json", json.dumps({"data": data, "deep": nested}).encode())
    got = read_json_file(path, "a thing")
    assert got["data"] == data and nesting(got["deep"]) == MAX_NESTING - 1 and nesting(got) == MAX_NESTING
