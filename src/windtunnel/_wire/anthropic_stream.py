"""The Anthropic Messages dialect's stream: events derived from a message, and a message rebuilt from events.

    message_start                 the message with empty content, usage with input_tokens
    content_block_start           per block: {type: text, text: ""} or {type: tool_use, id, name, input: {}}
    content_block_delta           text_delta (text) or input_json_delta (partial_json), in PIECE-sized pieces
    content_block_stop
    message_delta                 stop_reason, stop_sequence and the cumulative usage
    message_stop

No `[DONE]`: the stream ends after message_stop. Every frame carries an `event:` line (windtunnel._wire.sse).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._wire.sse import pieces


def message_events(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The events Anthropic streams for this message, in order."""
    usage = dict(message.get("usage") or {})
    opening = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    opening["usage"] = {**usage, "output_tokens": min(1, int(usage.get("output_tokens") or 0))}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": opening}]
    for index, block in enumerate(message.get("content") or ()):
        events += _block_events(index, block)
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")}
    events.append({"type": "message_delta", "delta": delta, "usage": usage})
    events.append({"type": "message_stop"})
    return events


def _block_events(index: int, block: Mapping[str, Any]) -> list[dict[str, Any]]:
    if block.get("type") == "tool_use":
        start = {**block, "input": {}}
        text = json.dumps(block.get("input") or {}, ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces(text)]
    else:
        start = {**block, "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in pieces(str(block.get("text") or ""))]
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def assemble_message(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The message a client builds from these events: blocks merged by index, partial_json parsed, and
    stop reason and usage from message_delta (cumulative values overwrite message_start's)."""
    message: dict[str, Any] = {"content": []}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = {**(event.get("message") or {}), "content": []}
        elif kind == "content_block_start":
            blocks[int(event.get("index", 0))] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            _merge_delta(blocks, partial, int(event.get("index", 0)), event.get("delta") or {})
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            message["usage"] = {**(message.get("usage") or {}), **(event.get("usage") or {})}
    for index, text in partial.items():
        if index in blocks:
            blocks[index]["input"] = _decoded(text)
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


def _merge_delta(
    blocks: dict[int, dict[str, Any]], partial: dict[int, str], index: int, delta: Mapping[str, Any]
) -> None:
    block = blocks.setdefault(index, {"type": "text", "text": ""})
    if delta.get("type") == "text_delta":
        block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
    elif delta.get("type") == "input_json_delta":
        partial[index] = partial.get(index, "") + str(delta.get("partial_json") or "")


def _decoded(text: str) -> Any:
    """The tool input as parsed JSON; the raw text when it is not JSON (kept, so a check can see it)."""
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text
