"""The OpenAI Responses dialect's stream: events derived from a response, and a response rebuilt from events.

    response.created, response.in_progress          the response, in progress, with no output yet
    per output item:
      response.output_item.added                    the item, in progress (empty text / arguments)
      message:       response.content_part.added, response.output_text.delta..., response.output_text.done,
                     response.content_part.done
      function_call: response.function_call_arguments.delta..., response.function_call_arguments.done
      response.output_item.done                     the finished item (Codex builds items only from these)
    response.completed                              the whole response, with usage

Each event has a `sequence_number`; there is no `[DONE]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._wire.sse import pieces


def response_events(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The events OpenAI streams for this response, in order, numbered."""
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": pending},
        {"type": "response.in_progress", "response": pending},
    ]
    for index, item in enumerate(response.get("output") or ()):
        events += _item_events(index, item)
    events.append({"type": "response.completed", "response": dict(response)})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def _item_events(index: int, item: Mapping[str, Any]) -> list[dict[str, Any]]:
    where = {"item_id": item.get("id"), "output_index": index}
    if item.get("type") == "function_call":
        arguments = str(item.get("arguments") or "")
        added = {**item, "status": "in_progress", "arguments": ""}
        body = [
            *(
                {"type": "response.function_call_arguments.delta", **where, "delta": p}
                for p in pieces(arguments)
            ),
            {"type": "response.function_call_arguments.done", **where, "arguments": arguments},
        ]
    else:
        added = {**item, "status": "in_progress", "content": []}
        body = []
        for number, part in enumerate(item.get("content") or ()):
            text = str(part.get("text") or "")
            at = {**where, "content_index": number}
            body += [
                {"type": "response.content_part.added", **at, "part": {**part, "text": ""}},
                *(
                    {"type": "response.output_text.delta", **at, "delta": p, "logprobs": []}
                    for p in pieces(text)
                ),
                {"type": "response.output_text.done", **at, "text": text, "logprobs": []},
                {"type": "response.content_part.done", **at, "part": dict(part)},
            ]
    return [
        {"type": "response.output_item.added", "output_index": index, "item": added},
        *body,
        {"type": "response.output_item.done", "output_index": index, "item": dict(item)},
    ]


def assemble_response(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The response a client ends with: response.completed's, else the created one with the done items."""
    response: dict[str, Any] = {}
    done: dict[int, Any] = {}
    for event in events:
        kind = event.get("type")
        if kind in ("response.completed", "response.failed", "response.incomplete"):
            return dict(event.get("response") or {})
        if kind == "response.created":
            response = dict(event.get("response") or {})
        elif kind == "response.output_item.done":
            done[int(event.get("output_index", len(done)))] = event.get("item")
    return {**response, "output": [done[index] for index in sorted(done)]}
