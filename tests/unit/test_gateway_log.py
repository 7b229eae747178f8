"""The request log: request parts as received, indices that never repeat, safe under concurrent appends."""

from __future__ import annotations

import threading
from typing import Any

from windtunnel._gateway.log import RequestLog, request_body, request_fields

BODY: dict[str, Any] = {
    "model": "m",
    "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "t", "parameters": {}}}],
    "temperature": 0.2,
    "top_p": 0.9,
    "max_completion_tokens": 64,
    "tool_choice": "auto",
    "seed": 7,
    "stop": ["\n\n"],
    "response_format": {"type": "text"},
    "n": 1,
    "stream": True,
    "stream_options": {"include_usage": True},
    "user": "u-1",
}


def test_request_fields_break_out_prompt_tools_and_sampling() -> None:
    fields = request_fields(BODY)
    assert fields["model"] == "m"
    assert fields["messages"] is BODY["messages"]
    assert fields["tools"] is BODY["tools"]
    assert fields["sampling"] == {
        "temperature": 0.2,
        "top_p": 0.9,
        "max_completion_tokens": 64,
        "tool_choice": "auto",
        "seed": 7,
        "stop": ["\n\n"],
        "response_format": {"type": "text"},
        "n": 1,
    }
    assert fields["stream"] is True
    assert fields["extra"] == {"stream": True, "stream_options": {"include_usage": True}, "user": "u-1"}


def test_request_body_rebuilds_the_body_exactly() -> None:
    assert request_body(request_fields(BODY)) == BODY
    minimal = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    assert request_body(request_fields(minimal)) == minimal
    explicit_null = {**minimal, "tools": None, "temperature": None}
    assert request_body(request_fields(explicit_null)) == explicit_null
    assert request_fields(minimal)["sampling"] == {}
    assert request_fields(minimal)["tools"] is None


def test_since_and_clear_keep_indices_growing() -> None:
    log = RequestLog()
    for number in range(5):
        assert log.append({"n": number}) == number
    assert [e["index"] for e in log.since(0)] == [0, 1, 2, 3, 4]
    assert [e["n"] for e in log.since(3)] == [3, 4]
    assert log.since(9) == []
    assert log.clear() == 5
    assert len(log) == 0
    assert log.append({"n": 5}) == 5
    assert [e["index"] for e in log.since(0)] == [5]
    assert [e["index"] for e in log.since(5)] == [5]
    assert log.since(6) == []
    assert log.next_index == 6


def test_concurrent_appends_get_distinct_contiguous_indices() -> None:
    log = RequestLog()

    def work() -> None:
        for _ in range(500):
            log.append({})

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    indices = [entry["index"] for entry in log.since(0)]
    assert indices == list(range(4000))
