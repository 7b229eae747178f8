"""windtunnel_inject's Transcript, Turn envelope and error descriptions."""

from __future__ import annotations

import json

import pytest
from windtunnel_inject import (
    Transcript,
    Turn,
    TurnFailed,
    decode_arguments,
    describe,
    find_cause,
    usage_total,
)


def test_a_transcript_keeps_every_call_of_every_model_call_in_order_with_the_raw_argument_order() -> None:
    transcript = Transcript()
    transcript.model_call({"prompt_tokens": 10, "completion_tokens": 2})
    transcript.tool_call("lookup_order", '{"order_id": "A-1"}')
    transcript.tool_call("lookup_order", '{"order_id": "A-1"}')  # a repeat stays: nothing is deduplicated
    transcript.model_call({"prompt_tokens": 20, "completion_tokens": 3, "details": {"cached": 4}})
    transcript.tool_call("issue_refund", '{"reason": "damaged", "amount": 12.5, "order_id": "A-1"}')
    transcript.model_call(None)
    turn = transcript.turn("Refunded.")
    assert [call["name"] for call in turn.tool_calls] == ["lookup_order", "lookup_order", "issue_refund"]
    assert list(turn.tool_calls[2]["arguments"]) == ["reason", "amount", "order_id"]
    assert [len(step) for step in transcript.steps] == [2, 1, 0]
    assert turn.usage == {
        "prompt_tokens": 30,
        "completion_tokens": 5,
        "details": {"cached": 4},
        "calls": [
            {"prompt_tokens": 10, "completion_tokens": 2},
            {"prompt_tokens": 20, "completion_tokens": 3, "details": {"cached": 4}},
            {},
        ],
    }


def test_a_call_before_any_model_call_is_recorded_and_decoded_arguments_are_taken_as_given() -> None:
    transcript = Transcript()
    call = transcript.tool_call("search", {"q": "mug", "limit": 3})
    assert call == {"name": "search", "arguments": {"q": "mug", "limit": 3}}
    assert transcript.turn("ok").tool_calls == [call]
    assert transcript.usage() is None  # no call reported usage: nothing rather than zeros


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"a": ', "model call 1, tool call 0 \\(f\\) has arguments that are not JSON"),
        (
            "[1, 2]",
            "model call 1, tool call 0 \\(f\\) has arguments that are not a JSON object: '\\[1, 2\\]'",
        ),
    ],
)
def test_arguments_that_are_not_a_json_object_fail_the_turn_naming_the_call(raw: str, message: str) -> None:
    transcript = Transcript()
    transcript.model_call()
    with pytest.raises(TurnFailed, match=message):
        transcript.tool_call("f", raw)


def test_empty_arguments_are_an_empty_object() -> None:
    assert decode_arguments("f", None, "here") == {} == decode_arguments("f", "", "here")


def test_the_envelope_always_has_tool_calls_and_usage_only_when_reported() -> None:
    assert Turn("hi").envelope() == {"content": "hi", "tool_calls": []}
    body = Turn("hi", [{"name": "f", "arguments": {}}], {"total_tokens": 3}).envelope()
    assert json.loads(json.dumps(body)) == {
        "content": "hi",
        "tool_calls": [{"name": "f", "arguments": {}}],
        "usage": {"total_tokens": 3},
    }


def test_usage_skips_flags_and_keeps_counts_that_do_not_add_up_as_they_came() -> None:
    total = usage_total([{"total_tokens": 3, "estimated": True}, {"total_tokens": 4, "model": "m"}])
    assert total == {
        "total_tokens": 7,
        "calls": [{"total_tokens": 3, "estimated": True}, {"total_tokens": 4, "model": "m"}],
    }
    assert usage_total([{}, {}]) is None


def test_causes_are_found_through_groups_causes_and_contexts() -> None:
    inner = KeyError("the real one")
    try:
        try:
            raise inner
        except KeyError:
            raise RuntimeError("wrapped") from None  # context kept, cause suppressed
    except RuntimeError as wrapped:
        group = ExceptionGroup("task group", [ValueError("other"), wrapped])
    assert find_cause(group, KeyError) is inner
    assert find_cause(group, OSError) is None
    assert describe(group) == "ValueError: other; RuntimeError: wrapped"
