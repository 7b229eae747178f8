"""Server-sent events in OpenAI's wire format: chunks derived from a completion, framing, and reassembly."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

DONE_FRAME = b"data: [DONE]\n\n"
PIECE = 32
"""Characters of content or arguments per chunk: several chunks per message, so clients must reassemble."""


def frame(chunk: Mapping[str, Any]) -> bytes:
    """One SSE event: `data: <compact JSON>` and a blank line, as OpenAI sends it."""
    return b"data: " + json.dumps(chunk, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


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
    deltas = [opening, *({"content": piece} for piece in _pieces(content or ""))]
    for number, call in enumerate(calls):
        function = call.get("function") or {}
        head = {"index": number, "id": call.get("id"), "type": call.get("type", "function")}
        head["function"] = {"name": function.get("name", ""), "arguments": ""}
        deltas.append({"tool_calls": [head]})
        deltas += [
            {"tool_calls": [{"index": number, "function": {"arguments": piece}}]}
            for piece in _pieces(function.get("arguments") or "")
        ]
    return deltas


def _pieces(text: str) -> list[str]:
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)]


class ChunkAssembler:
    """Rebuilds choice 0's message, finish reason and the usage from streamed chunks, as a client would."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {"role": "assistant", "content": None}
        self.finish_reason: str | None = None
        self.usage: Any = None
        self._calls: dict[int, dict[str, Any]] = {}

    def add(self, chunk: Mapping[str, Any]) -> None:
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) == 0:
                self._merge(choice)

    def add_all(self, chunks: Iterable[Mapping[str, Any]]) -> ChunkAssembler:
        for chunk in chunks:
            self.add(chunk)
        return self

    def _merge(self, choice: Mapping[str, Any]) -> None:
        delta = choice.get("delta") or {}
        if delta.get("role"):
            self.message["role"] = delta["role"]
        if isinstance(delta.get("content"), str):
            self.message["content"] = (self.message["content"] or "") + delta["content"]
        for piece in delta.get("tool_calls") or ():
            self._merge_call(piece)
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]

    def _merge_call(self, piece: Mapping[str, Any]) -> None:
        call = self._calls.setdefault(
            int(piece.get("index", len(self._calls))),
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if piece.get("id"):
            call["id"] = piece["id"]
        if piece.get("type"):
            call["type"] = piece["type"]
        function = piece.get("function") or {}
        call["function"]["name"] += function.get("name") or ""
        call["function"]["arguments"] += function.get("arguments") or ""

    def result(self) -> dict[str, Any]:
        """The assembled message (with tool_calls in index order when there were any)."""
        message = dict(self.message)
        if self._calls:
            message["tool_calls"] = [self._calls[index] for index in sorted(self._calls)]
        return message
