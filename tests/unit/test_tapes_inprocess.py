"""Tapes in this process through the public door: written as record mode writes, replayed as the gateway
replays, failing closed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from windtunnel.api import TapeExchange, TapeReplay, build_tape
from windtunnel.errors import TapeError

UPSTREAM = "http://upstream.test.invalid/v1"
PATH = "/v1/chat/completions"


def request(text: str) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}]}


def completion(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {
        "id": "c",
        "object": "chat.completion",
        "model": "m-1",
        "choices": [{"index": 0, "message": message}],
    }


@pytest.fixture
def tape(tmp_path: Path) -> Path:
    exchanges = [
        TapeExchange("POST", PATH, request("one"), completion("first")),
        TapeExchange("POST", PATH, request("one"), completion("second")),
        TapeExchange("POST", PATH, request("two"), {"error": {"message": "rate limited"}}, status=429),
    ]
    return build_tape("inprocess", exchanges, tmp_path / "inprocess.jsonl", upstream=UPSTREAM)


def test_the_written_tape_is_the_tape_record_mode_writes(tape: Path) -> None:
    header, *lines = (json.loads(line) for line in tape.read_text().splitlines())
    assert header["tape"] == "inprocess"
    assert header["lineage"]["upstream"] == UPSTREAM
    assert [line["seq"] for line in lines] == [0, 1, 2]
    assert lines[0]["fingerprint"] == lines[1]["fingerprint"] != lines[2]["fingerprint"]


def test_duplicates_replay_in_order_and_errors_as_recorded(tape: Path) -> None:
    replay = TapeReplay(tape)
    first, second = (replay.reply("POST", PATH, request("one")) for _ in range(2))
    assert [first.status, second.status] == [200, 200]
    assert [r.completion["choices"][0]["message"]["content"] for r in (first, second) if r.completion] == [
        "first",
        "second",
    ]
    failed = replay.reply("POST", PATH, request("two"))
    assert (failed.status, failed.completion) == (429, None)
    assert failed.error is not None and "rate limited" in failed.error
    assert replay.finish() == 0


def test_an_unknown_request_and_a_used_up_one_are_refused(tape: Path) -> None:
    replay = TapeReplay(tape)
    with pytest.raises(TapeError, match="fingerprint"):
        replay.reply("POST", PATH, request("three"))
    replay.reply("POST", PATH, request("two"))
    with pytest.raises(TapeError):
        replay.reply("POST", PATH, request("two"))


def test_strict_replay_refuses_unused_interactions_and_again_starts_afresh(tape: Path) -> None:
    replay = TapeReplay(tape)
    replay.reply("POST", PATH, request("one"))
    with pytest.raises(TapeError, match="never requested"):
        replay.finish()
    assert TapeReplay(tape, strict=False).finish() == 3
    fresh = replay.again()
    assert fresh.reply("POST", PATH, request("one")).completion == completion("first")
