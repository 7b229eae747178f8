"""The gateway's request log: one entry per model call, the evidence conformance and traces read.

An entry (a JSON object) holds:

    index        position in the log; indices keep growing across clears, so `since` never repeats one
    at           epoch seconds when the request arrived
    method path  as received (path with or without the /v1 prefix)
    session      the X-WT-Session header, or null: the session the gateway served the call for (it takes that
                 session's own script and files the call under it; the session_attribution check compares
                 it with the session the runtime reports the turn for)
    case         the reference case whose script answered (script mode), else null
    mode         the gateway mode's name
    wire         the call's dialect: openai-chat, anthropic-messages or openai-responses (windtunnel._wire)
    side         why the call was side traffic answered beside the turn (a side model, count_tokens), else
                 null; side calls never consume a scripted decision, and evidence readers skip them
    model        the requested model
    messages     the rendered prompt exactly as received, in the dialect's own shape (chat and Anthropic
                 `messages`, Responses `input`)
    history      Responses only: the earlier conversation a previous_response_id named, as recalled
    tools        the tools offered, exactly as received (null when none were sent)
    sampling     every sampling/decoding parameter of the dialect present in the body (chat: temperature,
                 top_p, max_tokens, max_completion_tokens, tool_choice, seed, stop, ...; Anthropic:
                 max_tokens, top_k, stop_sequences, ...; Responses: max_output_tokens, reasoning, ...)
    stream       whether the reply was streamed
    extra        every other body field (stream_options, user, metadata, Anthropic `system`, Responses
                 `instructions`, ...)
    status       the HTTP status served
    usage        the usage of the served answer (null when refused)
    usage_sent   whether the client received that usage (a stream without include_usage does not)
    response     the answer served, native (chat: the assistant message; Anthropic: the message; Responses:
                 the response object); null when refused
    error        one sentence naming why the call was refused or broke off, else null
    error_code   no_script, script_exhausted, invalid_request, upstream_error, ... or null
    latency_ms   from arrival to the last byte handed to the server (streams: to the last chunk)

The parts split the native body without loss: `request_body(entry)` rebuilds it (for tape fingerprints).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from windtunnel._wire.dialect import Dialect
from windtunnel._wire.registry import CHAT, dialect_of


def request_fields(body: Mapping[str, Any], dialect: Dialect = CHAT) -> dict[str, Any]:
    """wire, model, messages, tools, sampling, stream and extra of a request body, values as received."""
    tools = body.get("tools")
    # An explicit `"tools": null` stays in `extra`, so request_body() gives back exactly what was sent.
    own = {"model", dialect.messages_key, *dialect.sampling_keys} | (
        {"tools"} if tools is not None else set()
    )
    return {
        "wire": dialect.name,
        "model": body.get("model"),
        "messages": body.get(dialect.messages_key),
        "tools": tools,
        "sampling": {key: body[key] for key in dialect.sampling_keys if key in body},
        "stream": bool(body.get("stream")),
        "extra": {key: value for key, value in body.items() if key not in own},
    }


def request_body(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The request body a log entry was made from (key order aside)."""
    body: dict[str, Any] = {**entry.get("extra", {}), **entry.get("sampling", {})}
    named = {"model": "model", "messages": dialect_of(entry).messages_key, "tools": "tools"}
    for key, field in named.items():
        if entry.get(key) is not None:
            body[field] = entry[key]
    return body


class RequestLog:
    """Entries in arrival-of-answer order; safe to use from the event loop and from other threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[dict[str, Any]] = []
        self._next = 0

    def append(self, entry: dict[str, Any]) -> int:
        """Store `entry` under the next index (set on the entry) and return that index."""
        with self._lock:
            index = self._next
            self._next += 1
            entry["index"] = index
            self._entries.append(entry)
        return index

    def since(self, index: int = 0) -> list[dict[str, Any]]:
        """Entries whose index is >= `index`, oldest first."""
        with self._lock:
            if not self._entries or index <= self._entries[0]["index"]:
                return list(self._entries)
            offset = index - self._entries[0]["index"]
            return self._entries[offset:]

    def clear(self) -> int:
        """Drop every entry (indices keep counting); returns how many were dropped."""
        with self._lock:
            dropped = len(self._entries)
            self._entries = []
        return dropped

    @property
    def next_index(self) -> int:
        with self._lock:
            return self._next

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
