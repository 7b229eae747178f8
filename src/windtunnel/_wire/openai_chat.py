"""The OpenAI chat-completions dialect: assistant messages, completions, usage estimates and error bodies."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from windtunnel._core.reference import ReferenceDecision
from windtunnel._wire import openai_chat_check
from windtunnel._wire.dialect import Said, Stateless, ToolCall
from windtunnel._wire.openai_chat_stream import DONE_FRAME, assemble_completion, chunks_from_completion
from windtunnel._wire.reading import decoded, text_of
from windtunnel._wire.sse import frame
from windtunnel._wire.tools import resolve

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


def decision_message(
    decision: ReferenceDecision,
    new_id: Callable[[], str] = next_call_id,
    *,
    offered: Sequence[str] = (),
) -> dict[str, Any]:
    """The assistant message OpenAI would send for this decision.

    With tool calls, content is null unless the decision also carries text (OpenAI sends both then);
    arguments are the JSON string of the decision's arguments; names resolve against the `offered` tools.
    """
    if not decision.tool_calls:
        return {"role": "assistant", "content": decision.content, "refusal": None}
    calls = [
        {
            "id": new_id(),
            "type": "function",
            "function": {"name": resolve(call.name, offered), "arguments": json.dumps(dict(call.arguments))},
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


class OpenAIChat(Stateless):
    """The Dialect of POST /v1/chat/completions."""

    name = "openai-chat"
    messages_key = "messages"
    sampling_keys = SAMPLING_KEYS
    fingerprint_fields = (
        frozenset(
            {"model", "messages", "tools", "tool_choice", "parallel_tool_calls", "functions", "function_call"}
        )
        | {"response_format", "modalities", "audio", "prediction", "reasoning_effort"}
        | {"stream", "stream_options"}
    )
    done_frame = DONE_FRAME

    # What needs no dialect state is module functions: the request checks (windtunnel._wire.openai_chat_check),
    # the SSE framing, reassembly and the error envelope.
    required_problem = staticmethod(openai_chat_check.required_problem)
    field_problem = staticmethod(openai_chat_check.field_problem)
    frame = staticmethod(frame)
    assemble = staticmethod(assemble_completion)
    error_body = staticmethod(error_body)

    def render(self, decision: ReferenceDecision, body: Mapping[str, Any]) -> dict[str, Any]:
        message = decision_message(decision, offered=self.offered_tools(body.get("tools")))
        usage = estimate_usage(body.get("messages"), body.get("tools"), message)
        return completion_object(message, model=str(body.get("model")), usage=usage)

    def events(self, response: Mapping[str, Any], body: Mapping[str, Any]) -> list[dict[str, Any]]:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return chunks_from_completion(response, include_usage=include_usage)

    def stream_error(self, message: str, code: str) -> dict[str, Any]:
        return error_body(message, code)

    def neutral_sampling(self, sampling: Mapping[str, Any]) -> dict[str, Any]:
        return dict(sampling)  # chat's names are Wind Tunnel's (max_completion_tokens is read as max_tokens)

    def logged_response(self, response: Mapping[str, Any]) -> Any:
        return first_message(response)

    def usage(self, response: Mapping[str, Any]) -> Any:
        return response.get("usage")

    def offered_tools(self, tools: Any) -> list[str]:
        names = []
        for tool in tools if isinstance(tools, list) else ():
            function = tool.get("function") if isinstance(tool, Mapping) else None
            name = function.get("name") if isinstance(function, Mapping) else None
            if isinstance(name, str):
                names.append(name)
        return names

    def transcript(self, entry: Mapping[str, Any]) -> list[Said]:
        messages = entry.get("messages")
        return [_said(m) for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []

    def answer(self, entry: Mapping[str, Any]) -> Said | None:
        response = entry.get("response")
        return _said(response) if isinstance(response, Mapping) else None


def _said(message: Mapping[str, Any]) -> Said:
    role = str(message.get("role") or "")
    role = "system" if role == "developer" else "tool" if role == "function" else role
    calls = tuple(
        ToolCall(
            id=call.get("id"),
            name=str((call.get("function") or {}).get("name") or ""),
            arguments=decoded((call.get("function") or {}).get("arguments")),
            native=call,
        )
        for call in message.get("tool_calls") or ()
        if isinstance(call, Mapping)
    )
    answers = message.get("tool_call_id") if role == "tool" else None
    return Said(role=role, text=text_of(message.get("content")), calls=calls, answers=answers, native=message)
