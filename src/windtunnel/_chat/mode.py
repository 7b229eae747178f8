"""The gateway's one seam: a mode turns a model request (in any dialect) into a reply.

Modes: `script` (reference decisions), `live` (proxy and log), `record` (proxy, write a tape),
`replay` (serve from a tape, fail closed). The server owns HTTP, SSE framing and the request log;
a mode only decides what the model says, in the request's dialect (windtunnel._wire).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from windtunnel._core.faults import ModelFault


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRequest:
    """One model request as received. `headers` holds only allowlisted headers; `wire` names its dialect
    (windtunnel._wire.registry.DIALECTS), picked by the route."""

    method: str
    path: str
    body: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)
    session: str | None = None
    wire: str = "openai-chat"

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ModeReply:
    """What the mode answers.

    Success: `completion` (the native answer of the request's dialect: a chat.completion, an Anthropic
    message, a Responses response) and, for streamed requests when the mode has them, `events` (the
    dialect's stream events, in order; the server frames them as SSE). When a streamed request gets only
    `completion`, the server derives the events from it.
    Refusal: `error` (one sentence naming the cause, e.g. "script exhausted: ...") and an HTTP `status`;
    the client gets its dialect's error body, never a default answer.
    Live streams: `chunks` instead of `completion`, an async iterator of event objects the server passes
    through as they arrive (a proxied upstream stream); the mode closes its source when the iterator ends
    or is closed, and raises from it to report a stream that broke off.
    `context`: mode-specific facts the server adds to the request's log entry (script mode: `case`).
    `fault`: a scripted fault (windtunnel._core.faults) the server serves instead of, or breaking, the
    `completion` (None for the status faults); unlike a refusal it does not forbid the client's retry.
    """

    status: int = 200
    completion: Mapping[str, Any] | None = None
    events: tuple[Mapping[str, Any], ...] | None = None
    error: str | None = None
    error_code: str | None = None
    chunks: AsyncIterator[Mapping[str, Any]] | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    fault: ModelFault | None = None


@runtime_checkable
class GatewayMode(Protocol):
    name: str

    async def complete(self, request: ChatRequest) -> ModeReply: ...

    async def aclose(self) -> None:
        """Release resources (upstream clients, open tapes); idempotent."""
        ...
