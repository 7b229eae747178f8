"""replay_check: all requests matched in order, none unused, none stale, verdicts equal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from windtunnel._chat.mode import ChatRequest
from windtunnel._tapes.builder import TapeBuilder
from windtunnel._tapes.fidelity import replay_check
from windtunnel._tapes.model import RecordedResponse, Tape
from windtunnel._wire.openai_chat_stream import assemble_completion

UPSTREAM = "http://127.0.0.1:9/v1"
PATH = "/v1/chat/completions"
WHEN = datetime(2030, 3, 1, tzinfo=UTC)


def body(text: str) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}]}


def tape(*texts: str) -> Tape:
    builder = TapeBuilder("t", upstream=UPSTREAM, clock=lambda: WHEN)
    for text in texts:
        builder.add("POST", PATH, body(text), RecordedResponse(status=200, body={"choices": []}))
    return builder.build()


def seen(*texts: str) -> list[ChatRequest]:
    return [ChatRequest(method="POST", path=PATH, body=body(t), headers={"x-request-id": t}) for t in texts]


def fresh() -> datetime:
    return WHEN + timedelta(days=1)


def test_a_faithful_replay_passes() -> None:
    report = replay_check(tape("a", "b", "a"), seen("a", "b", "a"), clock=fresh)
    assert report.ok, report.problems
    assert (report.matched, report.recorded, report.requested, report.unused) == (3, 3, 3, ())


def test_mappings_from_a_request_log_are_accepted() -> None:
    logged = [{"method": "POST", "path": PATH, "body": body("a")}]
    assert replay_check(tape("a"), logged, clock=fresh).ok


def test_out_of_order_requests_fail_with_the_diff() -> None:
    report = replay_check(tape("a", "b"), seen("b", "a"), clock=fresh)
    assert not report.ok
    assert report.matched == 0
    assert (
        'request 0 does not match seq 0: /body/messages/0/content: recorded "a", requested "b"'
        in report.problems
    )


def test_unused_and_extra_requests_fail() -> None:
    short = replay_check(tape("a", "b", "c"), seen("a"), clock=fresh)
    assert short.unused == (1, 2)
    assert "2 interaction(s) never requested: seq 1, 2" in short.problems
    long = replay_check(tape("a"), seen("a", "b"), clock=fresh)
    assert "request 1 is beyond the tape: 1 recorded" in long.problems


def test_a_stale_tape_fails_even_when_every_request_matched() -> None:
    report = replay_check(tape("a"), seen("a"), clock=lambda: WHEN + timedelta(days=31))
    assert report.stale and not report.ok
    assert "FAILED" in report.render()


def test_a_different_replayed_verdict_fails() -> None:
    same = replay_check(
        tape("a"), seen("a"), clock=fresh, recorded_verdict="passed", replayed_verdict="passed"
    )
    assert same.ok
    differs = replay_check(
        tape("a"), seen("a"), clock=fresh, recorded_verdict="passed", replayed_verdict="failed"
    )
    assert "verdict differs: recorded 'passed', replayed 'failed'" in differs.problems


def test_stream_events_assemble_into_the_completion_a_client_would_build() -> None:
    events: list[dict[str, Any]] = [
        {"id": "c1", "created": 1, "model": "m-1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "look"}}]},
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"name": "up", "arguments": '{"a"'}}]},
                }
            ]
        },
        {
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}}
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"total_tokens": 5}},
    ]
    completion = assemble_completion(events)
    assert completion["id"] == "c1" and completion["model"] == "m-1"
    assert completion["usage"] == {"total_tokens": 5}
    choice = completion["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    assert choice["message"]["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"a": 1}'}}
    ]
