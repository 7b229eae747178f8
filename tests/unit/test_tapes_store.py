"""Tape files: round trip, atomic and verified writes, and load failures that name their cause and line."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.errors import TAPE_ERRORS, TapeCorrupt, TapeMissing, TapeSecretFound
from windtunnel._tapes.model import RecordedResponse, Tape
from windtunnel._tapes.store import dumps_tape, load_tape, write_tape
from windtunnel.errors import TapeError

UPSTREAM = "http://127.0.0.1:9/v1"
PATH = "/v1/chat/completions"
WHEN = datetime(2030, 1, 1, tzinfo=UTC)


def sample(count: int = 3) -> Tape:
    builder = TapeBuilder("sample", upstream=UPSTREAM, clock=lambda: WHEN)
    for index in range(count):
        body = {"model": "m", "messages": [{"role": "user", "content": f"question {index}"}]}
        builder.add("POST", PATH, body, RecordedResponse(status=200, body={"answer": index}))
    return builder.build()


def written(tmp_path: Path, count: int = 3) -> Path:
    path = tmp_path / "sample.jsonl"
    write_tape(sample(count), path)
    return path


def replace_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_written_tape_loads_back_identical(tmp_path: Path) -> None:
    tape = sample()
    path = tmp_path / "sample.jsonl"
    loaded = write_tape(tape, path)
    assert loaded.path == path
    assert dumps_tape(loaded) == dumps_tape(tape) == path.read_text(encoding="utf-8")
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first["kind"] == "header"
    assert first["schema_version"] == 1
    assert first["fingerprint_version"] == 1
    assert [i.seq for i in loaded.interactions] == [0, 1, 2]


def test_writing_leaves_no_temporary_file_and_exclusive_never_overwrites(tmp_path: Path) -> None:
    path = written(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.jsonl"]
    before = path.read_bytes()
    with pytest.raises(FileExistsError):
        write_tape(sample(1), path, exclusive=True)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.jsonl"]


def test_a_missing_tape_is_its_own_error(tmp_path: Path) -> None:
    with pytest.raises(TapeMissing) as caught:
        load_tape(tmp_path / "nope.jsonl")
    assert caught.value.tape == str(tmp_path / "nope.jsonl")
    assert caught.value.hint


def test_a_corrupt_line_names_its_line_number(tmp_path: Path) -> None:
    path = written(tmp_path)
    replace_line(path, 3, '{"kind": "interaction", "seq": 1, "fingerprint": ')
    with pytest.raises(TapeCorrupt) as caught:
        load_tape(path)
    assert caught.value.line == 3
    assert "line 3 is not JSON" in str(caught.value)
    assert "rerecord" in str(caught.value)


def test_an_invalid_interaction_names_the_line_and_the_field(tmp_path: Path) -> None:
    path = written(tmp_path)
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    del record["response"]["status"]
    replace_line(path, 2, json.dumps(record))
    with pytest.raises(TapeCorrupt, match=r"line 2: response/status") as caught:
        load_tape(path)
    assert caught.value.line == 2


def test_out_of_order_sequence_numbers_are_corrupt(tmp_path: Path) -> None:
    path = written(tmp_path)
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[2])
    record["seq"] = 5
    replace_line(path, 3, json.dumps(record))
    with pytest.raises(TapeCorrupt, match="line 3 has seq 5, expected 1"):
        load_tape(path)


@pytest.mark.parametrize(
    ("field", "value"), [("schema_version", 2), ("fingerprint_version", 9), ("kind", "x")]
)
def test_a_header_this_version_cannot_read_is_corrupt_at_line_1(
    tmp_path: Path, field: str, value: object
) -> None:
    path = written(tmp_path)
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    header[field] = value
    replace_line(path, 1, json.dumps(header))
    with pytest.raises(TapeCorrupt) as caught:
        load_tape(path)
    assert caught.value.line == 1


def test_an_empty_file_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    with pytest.raises(TapeCorrupt, match="empty"):
        load_tape(path)


def test_a_planted_secret_fails_the_load_with_its_line_and_kind(tmp_path: Path) -> None:
    path = written(tmp_path)
    key = "sk-proj-" + "Zq9" * 15
    text = path.read_text(encoding="utf-8").replace("question 2", f"question {key}")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TapeSecretFound) as caught:
        load_tape(path)
    assert caught.value.line == 4
    assert caught.value.kind == "openai-key"
    assert key not in str(caught.value), "the report must not repeat the secret"


def test_a_key_in_use_is_found_even_when_it_matches_no_pattern(tmp_path: Path) -> None:
    path = written(tmp_path)
    key = "local-gateway-key-777"
    path.write_text(path.read_text(encoding="utf-8").replace("question 1", key), encoding="utf-8")
    load_tape(path)  # no known pattern matches this key
    with pytest.raises(TapeSecretFound) as caught:
        load_tape(path, known_secrets=[key])
    assert caught.value.kind == "key-in-use"


def test_a_secret_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    tape = sample(1)
    path = tmp_path / "leaky.jsonl"
    with pytest.raises(TapeSecretFound):
        write_tape(tape, path, known_secrets=["question 0"])
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_every_tape_error_is_a_tape_error_with_a_code_for_the_gateway() -> None:
    codes = {cls.code for cls in TAPE_ERRORS}
    assert len(codes) == len(TAPE_ERRORS)
    assert all(issubclass(cls, TapeError) for cls in TAPE_ERRORS)
