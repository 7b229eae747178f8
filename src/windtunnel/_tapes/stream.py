"""Streams on tape: SSE data lines to event objects, and events back into one chat.completion."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

DONE = "[DONE]"


def sse_data(line: str) -> str | None:
    """The payload of an SSE `data:` line, or None for comments, other fields and blank lines."""
    if not line.startswith("data:"):
        return None
    return line[5:].lstrip(" ")


def parse_event(payload: str) -> dict[str, Any]:
    event = json.loads(payload)
    if not isinstance(event, dict):
        raise ValueError(f"an SSE event is a JSON {type(event).__name__}, expected an object")
    return event


def assemble_completion(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The chat.completion a client would build from these chunks (content, tool calls, usage)."""
    first: Mapping[str, Any] = {}
    choices: dict[int, dict[str, Any]] = {}
    usage: Any = None
    for event in events:
        first = first or event
        usage = event.get("usage") or usage
        for choice in event.get("choices") or ():
            _merge_choice(choices, choice)
    for slot in choices.values():
        calls = slot["message"].pop("_calls", {})
        if calls:
            slot["message"]["tool_calls"] = [calls[index] for index in sorted(calls)]
    completion: dict[str, Any] = {
        "id": first.get("id"),
        "object": "chat.completion",
        "created": first.get("created"),
        "model": first.get("model"),
        "choices": [choices[index] for index in sorted(choices)],
    }
    if usage is not None:
        completion["usage"] = usage
    return completion


def _merge_choice(choices: dict[int, dict[str, Any]], choice: Mapping[str, Any]) -> None:
    index = int(choice.get("index", 0))
    slot = choices.setdefault(
        index, {"index": index, "message": {"role": "assistant", "content": None}, "finish_reason": None}
    )
    message = slot["message"]
    delta = choice.get("delta") or {}
    if delta.get("role"):
        message["role"] = delta["role"]
    if delta.get("content") is not None:
        message["content"] = (message["content"] or "") + delta["content"]
    for call in delta.get("tool_calls") or ():
        _merge_call(message.setdefault("_calls", {}), call)
    if choice.get("finish_reason"):
        slot["finish_reason"] = choice["finish_reason"]


def _merge_call(calls: dict[int, dict[str, Any]], piece: Mapping[str, Any]) -> None:
    index = int(piece.get("index", 0))
    call = calls.setdefault(
        index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
    )
    if piece.get("id"):
        call["id"] = piece["id"]
    function = piece.get("function") or {}
    call["function"]["name"] += function.get("name") or ""
    call["function"]["arguments"] += function.get("arguments") or ""
