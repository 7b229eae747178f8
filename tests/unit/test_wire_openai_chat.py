"""Reference decisions become the assistant messages OpenAI sends; usage estimates and error bodies."""

from __future__ import annotations

import json

from windtunnel._core.reference import ReferenceDecision, ReferenceToolCall
from windtunnel._wire.openai_chat import (
    completion_object,
    decision_message,
    error_body,
    estimate_tokens,
    estimate_usage,
    finish_reason,
    first_message,
)

REFUND = ReferenceToolCall("issue_refund", {"order_id": "A-1042", "amount": 12.5, "notes": ["ü", None]})


def test_a_tool_call_decision_becomes_tool_calls_with_ids_and_json_string_arguments() -> None:
    decision = ReferenceDecision(tool_calls=(REFUND, ReferenceToolCall("notify", {})))
    message = decision_message(decision)
    assert message["role"] == "assistant"
    assert message["content"] is None
    calls = message["tool_calls"]
    assert [call["type"] for call in calls] == ["function", "function"]
    assert [call["function"]["name"] for call in calls] == ["issue_refund", "notify"]
    assert isinstance(calls[0]["function"]["arguments"], str)
    assert json.loads(calls[0]["function"]["arguments"]) == dict(REFUND.arguments)
    assert calls[1]["function"]["arguments"] == "{}"
    assert all(call["id"].startswith("call_") for call in calls)
    assert calls[0]["id"] != calls[1]["id"]
    assert finish_reason(message) == "tool_calls"


def test_call_ids_are_unique_across_messages() -> None:
    decision = ReferenceDecision(tool_calls=(REFUND,))
    ids = {decision_message(decision)["tool_calls"][0]["id"] for _ in range(50)}
    assert len(ids) == 50


def test_a_content_decision_becomes_a_plain_answer_that_stops() -> None:
    message = decision_message(ReferenceDecision(content="refund issued"))
    assert message == {"role": "assistant", "content": "refund issued", "refusal": None}
    assert "tool_calls" not in message
    assert finish_reason(message) == "stop"


def test_text_alongside_tool_calls_is_kept_as_openai_does() -> None:
    message = decision_message(ReferenceDecision(content="let me check", tool_calls=(REFUND,)))
    assert message["content"] == "let me check"
    assert len(message["tool_calls"]) == 1


def test_usage_is_deterministic_and_counts_prompt_tools_and_answer() -> None:
    messages = [{"role": "user", "content": "please refund order A-1042"}]
    tools = [{"type": "function", "function": {"name": "issue_refund", "parameters": {"type": "object"}}}]
    answer = decision_message(ReferenceDecision(tool_calls=(REFUND,)), new_id=lambda: "call_x")
    usage = estimate_usage(messages, tools, answer)
    assert usage == estimate_usage(messages, tools, answer)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_tokens"] == estimate_tokens(messages) + estimate_tokens(tools)
    assert estimate_usage(messages, None, answer)["prompt_tokens"] < usage["prompt_tokens"]
    longer = [*messages, {"role": "assistant", "content": "x" * 400}]
    assert estimate_usage(longer, tools, answer)["prompt_tokens"] >= usage["prompt_tokens"] + 100
    assert usage["completion_tokens"] >= 1


def test_an_empty_answer_still_costs_a_completion_token() -> None:
    usage = estimate_usage([{"role": "user", "content": "hi"}], None, {"role": "assistant", "content": ""})
    assert usage["completion_tokens"] == 1


def test_completion_object_has_openai_fields() -> None:
    message = decision_message(ReferenceDecision(content="done"))
    usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    completion = completion_object(message, model="small-model", usage=usage, created=123)
    assert completion["object"] == "chat.completion"
    assert completion["id"].startswith("chatcmpl-")
    assert completion["model"] == "small-model"
    assert completion["created"] == 123
    assert completion["usage"] == usage
    assert completion["choices"] == [
        {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}
    ]
    assert first_message(completion) == message
    assert first_message({"choices": []}) is None


def test_error_body_is_openai_shaped() -> None:
    assert error_body("no script", "no_script", param="x") == {
        "error": {"message": "no script", "type": "invalid_request_error", "param": "x", "code": "no_script"}
    }
