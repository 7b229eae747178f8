"""SSE chunks derived from a completion follow OpenAI's format and reassemble to the same message."""

from __future__ import annotations

import json
from typing import Any

from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._wire.openai_chat import completion_object, decision_message
from windtunnel._wire.openai_chat_stream import DONE_FRAME, assemble_completion, chunks_from_completion
from windtunnel._wire.sse import PIECE, frame

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
LONG_ARGS = {"note": "n" * (3 * PIECE), "amount": 12.5}


def completion(decision: ReferenceDecision) -> dict[str, Any]:
    return completion_object(decision_message(decision), model="m", usage=USAGE, created=1)


def test_tool_calls_stream_as_openai_deltas_and_reassemble() -> None:
    decision = ReferenceDecision(
        tool_calls=(ReferenceToolCall("issue_refund", LONG_ARGS), ReferenceToolCall("notify", {"to": "a"}))
    )
    full = completion(decision)
    chunks = chunks_from_completion(full, include_usage=False)
    assert all(chunk["object"] == "chat.completion.chunk" and chunk["id"] == full["id"] for chunk in chunks)
    assert all("usage" not in chunk for chunk in chunks)
    first = chunks[0]["choices"][0]["delta"]
    assert first == {"role": "assistant", "content": None, "refusal": None}
    heads = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[1:-1]]
    assert heads[0]["id"] == full["choices"][0]["message"]["tool_calls"][0]["id"]
    assert heads[0]["function"] == {"name": "issue_refund", "arguments": ""}
    argument_pieces = [h for h in heads if h["index"] == 0 and "id" not in h]
    assert len(argument_pieces) > 1, "long arguments arrive in several chunks, as from OpenAI"
    assert chunks[-1]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "tool_calls",
    }
    assembled = assemble_completion(chunks)["choices"][0]
    assert assembled["message"] == {
        "role": "assistant",
        "content": None,
        "tool_calls": full["choices"][0]["message"]["tool_calls"],
    }
    assert assembled["finish_reason"] == "tool_calls"


def test_content_streams_in_pieces_and_usage_comes_last_when_asked() -> None:
    text = "refund issued for order A-1042, " * 4
    chunks = chunks_from_completion(completion(ReferenceDecision(content=text)), include_usage=True)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    assert all(chunk["usage"] is None for chunk in chunks[:-1])
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == USAGE
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assembled = assemble_completion(chunks)
    assert assembled["choices"][0]["message"]["content"] == text
    assert assembled["usage"] == USAGE


def test_frames_are_data_lines_with_a_blank_line() -> None:
    raw = frame({"a": "ü"})
    assert raw == 'data: {"a":"ü"}\n\n'.encode()
    assert json.loads(raw[len(b"data: ") :]) == {"a": "ü"}
    assert DONE_FRAME == b"data: [DONE]\n\n"
