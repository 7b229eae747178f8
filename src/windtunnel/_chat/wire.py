"""OpenAI chat-completions wire shapes: assistant messages, completions, usage estimates and error bodies."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from windtunnel._core.reference import ReferenceDecision

SAMPLING_KEYS: frozenset[str] = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "max_tokens",
        "max_completion_tokens",
        "tool_choice",
        "parallel_tool_calls",
        "seed",
        "stop",
        "response_format",
        "n",
        "frequency_penalty",
        "presence_penalty",
        "repetition_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "reasoning_effort",
    }
)
"""Request fields that shape the answer beyond the prompt and tools: the gateway logs them under `sampling`,
and each takes part in a tape's fingerprint (windtunnel._tapes.fingerprint.BODY_FIELDS)."""


INVALID_REQUEST = "invalid_request_error"
"""OpenAI's error `type` for a request the server refuses; every gateway refusal uses it."""

_call_numbers: Iterator[int] = itertools.count(1)
_completion_numbers: Iterator[int] = itertools.count(1)


def next_call_id() -> str:
    """A tool-call id unique within this gateway process; sequential, so a replayed run renders the same ids."""
    return f"call_wt{next(_call_numbers):08d}"


def next_completion_id() -> str:
    return f"chatcmpl-wt{next(_completion_numbers):08d}"


def decision_message(decision: ReferenceDecision, new_id: Callable[[], str] = next_call_id) -> dict[str, Any]:
    """The assistant message OpenAI would send for this decision.

    With tool calls, content is null unless the decision also carries text (OpenAI sends both then);
    arguments are the JSON string of the decision's arguments.
    """
    if not decision.tool_calls:
        return {"role": "assistant", "content": decision.content, "refusal": None}
    calls = [
        {
            "id": new_id(),
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
        }
        for call in decision.tool_calls
    ]
    return {"role": "assistant", "content": decision.content, "refusal": None, "tool_calls": calls}


def finish_reason(message: Mapping[str, Any]) -> str:
    return "tool_calls" if message.get("tool_calls") else "stop"


def estimate_tokens(value: Any) -> int:
    """About four characters of compact JSON per token: deterministic, cheap, never zero for content."""
    if value is None:
        return 0
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (len(text) + 3) // 4


def estimate_usage(messages: Any, tools: Any, message: Mapping[str, Any]) -> dict[str, int]:
    """Usage for a served message: the prompt counts messages and tools offered, as OpenAI bills them."""
    prompt = estimate_tokens(messages) + estimate_tokens(tools)
    calls = message.get("tool_calls") or []
    completion = estimate_tokens(message.get("content")) + sum(
        estimate_tokens(call["function"]["name"]) + estimate_tokens(call["function"]["arguments"])
        for call in calls
    )
    completion = max(completion, 1)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion_object(
    message: Mapping[str, Any], *, model: str, usage: Mapping[str, int], created: int | None = None
) -> dict[str, Any]:
    """A chat.completion with one choice, exactly the fields OpenAI sends."""
    return {
        "id": next_completion_id(),
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [
            {"index": 0, "message": dict(message), "logprobs": None, "finish_reason": finish_reason(message)}
        ],
        "usage": dict(usage),
        "system_fingerprint": None,
    }


def error_body(message: str, code: str, *, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error envelope; clients read `error.message` and `error.code`."""
    return {"error": {"message": message, "type": INVALID_REQUEST, "param": param, "code": code}}


def first_message(completion: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """choices[0].message of a completion, or None when it has none (a malformed upstream answer)."""
    choices = completion.get("choices")
    if isinstance(choices, Sequence) and choices and isinstance(choices[0], Mapping):
        message = choices[0].get("message")
        return message if isinstance(message, Mapping) else None
    return None
