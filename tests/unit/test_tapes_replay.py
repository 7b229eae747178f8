"""Replay: FIFO per fingerprint, fail closed with a distinct error per cause, and never a network call."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from windtunnel._chat.mode import ChatRequest, GatewayMode
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.errors import TapeCorrupt, TapeExhausted, TapeMismatch, TapeStale, TapeUnused
from windtunnel._tapes.model import RecordedResponse, Tape
from windtunnel._tapes.replay import ReplayMode
from windtunnel._tapes.store import load_tape, write_tape

UPSTREAM = "http://127.0.0.1:9/v1"
PATH = "/v1/chat/completions"
RECORDED = datetime(2030, 6, 1, tzinfo=UTC)


def body(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


def answer(text: str) -> RecordedResponse:
    message = {"role": "assistant", "content": text}
    return RecordedResponse(status=200, body={"choices": [{"index": 0, "message": message}], "model": "m-1"})


def tape_of(*pairs: tuple[dict[str, Any], RecordedResponse], times: list[datetime] | None = None) -> Tape:
    clock_values = iter(times or [RECORDED] * len(pairs))
    builder = TapeBuilder("t", upstream=UPSTREAM, clock=lambda: next(clock_values))
    for request_body, response in pairs:
        builder.add("POST", PATH, request_body, response)
    return builder.build()


def request(text: str, **extra: Any) -> ChatRequest:
    return ChatRequest(method="POST", path=PATH, body=body(text, **extra))


def now(days: float = 1) -> datetime:
    return RECORDED + timedelta(days=days)


def replay(tape: Tape, **options: Any) -> ReplayMode:
    options.setdefault("clock", now)
    return ReplayMode(tape, **options)


def content(mode: ReplayMode, req: ChatRequest) -> str:
    reply = asyncio.run(mode.complete(req))
    assert reply.error is None, reply.error
    assert reply.completion is not None
    return str(reply.completion["choices"][0]["message"]["content"])


def test_replay_mode_is_a_gateway_mode() -> None:
    assert isinstance(replay(tape_of((body("a"), answer("A")))), GatewayMode)


def test_duplicates_replay_first_in_first_out_per_fingerprint() -> None:
    tape = tape_of(
        (body("same"), answer("first")),
        (body("other"), answer("X")),
        (body("same"), answer("second")),
    )
    mode = replay(tape)
    assert content(mode, request("same")) == "first"
    assert content(mode, request("same")) == "second"
    assert content(mode, request("other")) == "X"
    assert mode.finish().ok


def test_a_poison_tape_fails_with_the_mismatch_error_the_diff_and_the_rerecord_command(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    write_tape(tape_of((body("refund the mug"), answer("done"))), path)
    # Change one byte of the recorded request: "mug" -> "mog".
    raw = path.read_bytes()
    position = raw.index(b"refund the mug") + len("refund the m")
    path.write_bytes(raw[:position] + b"o" + raw[position + 1 :])
    mode = replay(load_tape(path))
    with pytest.raises(TapeMismatch) as caught:
        mode.match("POST", PATH, body("refund the mug"))
    error = caught.value
    text = str(error)
    assert "/body/messages/0/content" in text
    assert '"refund the mog"' in text and '"refund the mug"' in text
    assert error.rerecord_command == f"wt tapes rerecord --tape {path} --upstream {UPSTREAM}"
    assert error.rerecord_command in text
    assert error.nearest[0].changes[0].pointer == "/body/messages/0/content"
    assert error.tape == str(path)


def test_a_refusal_reaches_the_gateway_as_an_error_reply_with_its_code() -> None:
    mode = replay(tape_of((body("a"), answer("A"))))
    reply = asyncio.run(mode.complete(request("b")))
    assert reply.completion is None
    assert reply.error_code == "tape_mismatch"
    assert reply.status == 400
    assert reply.error is not None and "no recorded request matches" in reply.error
    assert isinstance(mode.refusals[0], TapeMismatch)


def test_an_exhausted_fingerprint_says_how_often_it_was_recorded_and_requested() -> None:
    mode = replay(tape_of((body("a"), answer("1")), (body("a"), answer("2"))))
    content(mode, request("a"))
    content(mode, request("a"))
    with pytest.raises(TapeExhausted, match="recorded 2, requested 3") as caught:
        mode.match("POST", PATH, body("a"))
    assert (caught.value.recorded, caught.value.requested) == (2, 3)
    reply = asyncio.run(mode.complete(request("a")))
    assert reply.error_code == "tape_exhausted"


def test_staleness_counts_from_the_oldest_interaction_and_fails_certification() -> None:
    old, recent = RECORDED, RECORDED + timedelta(days=25)
    tape = tape_of((body("a"), answer("A")), (body("b"), answer("B")), times=[old, recent])
    ReplayMode(tape, clock=lambda: old + timedelta(days=30))  # exactly 30 days: still fresh
    with pytest.raises(TapeStale, match=r"31\.0 days ago") as caught:
        ReplayMode(tape, clock=lambda: old + timedelta(days=31))
    assert caught.value.max_age_days == 30
    assert "wt tapes rerecord" in str(caught.value)


def test_a_stale_tape_only_warns_in_development(caplog: pytest.LogCaptureFixture) -> None:
    tape = tape_of((body("a"), answer("A")))
    with caplog.at_level(logging.WARNING, logger="windtunnel.tapes"):
        mode = ReplayMode(tape, certification=False, clock=lambda: now(45))
    assert mode.warnings and "stale" in mode.warnings[0]
    assert "stale" in caplog.text
    assert content(mode, request("a")) == "A"


def test_the_unused_report_lists_what_was_never_requested_and_strict_mode_fails() -> None:
    tape = tape_of((body("a"), answer("A")), (body("b"), answer("B")), (body("c"), answer("C")))
    lenient = replay(tape)
    content(lenient, request("b"))
    report = lenient.finish()
    assert [i.seq for i in report.unused] == [0, 2]
    assert "2 of 3 interaction(s) never requested" in report.render()
    strict = replay(tape, strict=True)
    content(strict, request("a"))
    with pytest.raises(TapeUnused) as caught:
        asyncio.run(strict.aclose())
    assert caught.value.unused == [1, 2]


def test_a_stream_replays_its_recorded_events_and_their_assembled_completion() -> None:
    chunks = [
        {
            "id": "c",
            "model": "m-1",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "he"}}],
        },
        {
            "id": "c",
            "model": "m-1",
            "choices": [{"index": 0, "delta": {"content": "llo"}, "finish_reason": "stop"}],
        },
    ]
    streamed = RecordedResponse(status=200, events=chunks)
    mode = replay(tape_of((body("s", stream=True), streamed)))
    reply = asyncio.run(mode.complete(request("s", stream=True)))
    assert reply.events is not None and [dict(e) for e in reply.events] == chunks
    assert reply.completion is not None
    assert reply.completion["choices"][0]["message"]["content"] == "hello"


def test_a_recorded_upstream_error_replays_as_that_error() -> None:
    failed = RecordedResponse(status=429, body={"error": {"message": "rate limited"}})
    mode = replay(tape_of((body("a"), failed)))
    reply = asyncio.run(mode.complete(request("a")))
    assert (reply.status, reply.error_code) == (429, "upstream_error")
    assert reply.error is not None and "rate limited" in reply.error


def test_a_request_edited_on_tape_never_answers_by_its_stale_stored_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_tape(tape_of((body("a"), answer("A"))), path)
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["request"]["body"]["temperature"] = 0.5  # stored fingerprint left as it was
    path.write_text("\n".join([lines[0], json.dumps(record)]) + "\n", encoding="utf-8")
    mode = replay(load_tape(path))
    with pytest.raises(TapeMismatch, match="/body/temperature"):
        mode.match("POST", PATH, body("a"))


def test_replay_opens_no_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("replay tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    mode = replay(tape_of((body("a"), answer("A")), (body("b"), answer("B"))))
    assert asyncio.run(mode.complete(request("zzz"))).error_code == "tape_mismatch"
    assert content(mode, request("a")) == "A"
    assert content(mode, request("b")) == "B"
    assert asyncio.run(mode.complete(request("zzz"))).error_code == "tape_exhausted"


def test_a_request_after_the_last_interaction_was_served_is_exhausted_not_a_mismatch() -> None:
    mode = replay(tape_of((body("a"), answer("A")), (body("b"), answer("B"))))
    content(mode, request("a"))
    content(mode, request("b"))
    with pytest.raises(TapeExhausted, match="recorded 2, requested 3") as caught:
        mode.match("POST", PATH, body("c"))
    error = caught.value
    assert (error.recorded, error.requested) == (2, 3)
    assert "all 2 recorded interaction(s) were served" in str(error)
    assert "nearest recorded request: seq" in str(error)  # the diff still shows how it differs
    assert "wt tapes rerecord --tape" in str(error)


def test_the_mode_keeps_every_request_seen_and_the_seq_that_answered_it() -> None:
    mode = replay(tape_of((body("a"), answer("A")), (body("b"), answer("B"))))
    content(mode, request("b"))
    asyncio.run(mode.complete(request("zzz")))
    content(mode, request("a"))
    assert mode.answered == [1, None, 0]
    assert [seen["body"]["messages"][0]["content"] for seen in mode.seen] == ["b", "zzz", "a"]
    assert mode.seen[0]["path"] == PATH and mode.seen[0]["method"] == "POST"


def test_a_tape_hashed_with_unknown_volatile_rules_is_refused_naming_them() -> None:
    tape = tape_of((body("hi"), answer("hello")))
    assert tape.header.volatile_rules is None, "a chat-only tape names no rules: its fingerprints are v1's"
    header = tape.header.model_copy(update={"volatile_rules": "wt-volatile-v9"})
    foreign = Tape(header=header, interactions=tape.interactions)
    with pytest.raises(TapeCorrupt, match="wt-volatile-v9"):
        replay(foreign)
