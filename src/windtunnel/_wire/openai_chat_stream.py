"""The chat dialect's stream: chat.completion.chunk objects derived from a completion, framing, reassembly."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from windtunnel._wire.sse import pieces

DONE_FRAME = b"data: [DONE]\n\n"


def chunks_from_completion(completion: Mapping[str, Any], *, include_usage: bool) -> list[dict[str, Any]]:
    """The chat.completion.chunk objects OpenAI streams for this completion.

    Per choice: a role delta, content in pieces, each tool call (id, type, name, then arguments in pieces),
    and a finish chunk. With `include_usage` every chunk carries `"usage": null` and a last chunk with no
    choices carries the usage (stream_options.include_usage); without it no chunk has a usage field.
    """
    base = {
        "id": completion.get("id"),
        "object": "chat.completion.chunk",
        "created": completion.get("created"),
        "model": completion.get("model"),
        "system_fingerprint": completion.get("system_fingerprint"),
    }
    chunks: list[dict[str, Any]] = []
    for choice in completion.get("choices") or ():
        index = choice.get("index", 0)
        for delta in _deltas(choice.get("message") or {}):
            chunks.append({**base, "choices": [_choice(index, delta, None)]})
        chunks.append({**base, "choices": [_choice(index, {}, choice.get("finish_reason") or "stop")]})
    if include_usage:
        for chunk in chunks:
            chunk["usage"] = None
        chunks.append({**base, "choices": [], "usage": completion.get("usage")})
    return chunks


def _choice(index: int, delta: Mapping[str, Any], finish: str | None) -> dict[str, Any]:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}


def _deltas(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") or []
    content = message.get("content")
    opening: dict[str, Any] = {"role": message.get("role", "assistant")}
    opening["content"] = None if calls and not content else ""
    opening["refusal"] = None
    deltas = [opening, *({"content": piece} for piece in pieces(content or ""))]
    for number, call in enumerate(calls):
        function = call.get("function") or {}
        head = {"index": number, "id": call.get("id"), "type": call.get("type", "function")}
        head["function"] = {"name": function.get("name", ""), "arguments": ""}
        deltas.append({"tool_calls": [head]})
        deltas += [
            {"tool_calls": [{"index": number, "function": {"arguments": piece}}]}
            for piece in pieces(function.get("arguments") or "")
        ]
    return deltas


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
