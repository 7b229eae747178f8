"""The steps of a tool call sent to the client with the mcp SDK, each recorded as an exchange (the evidence).

An exchange is `{"step", "kind", "sent", ...}` plus what came of it: `"delivered": false` and a `reason` for
a notification the mock did not send (no progress token, a log level the client filtered out), the client's
`answer` or its `error` for a request, and `"met"` against the step's expectation. Checks of a runtime's
MCP client read these from `/wt/calls` to see what its agent loop was sent and how it answered.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel, ValidationError

from windtunnel._core.mock_kit import Tool
from windtunnel._core.mock_steps import (
    LOG_LEVELS,
    CloseStream,
    Elicit,
    Log,
    Progress,
    Reply,
    Sample,
    Step,
    subset,
)
from windtunnel._core.mock_surface import fill

Exchange = dict[str, Any]


class LogLevels:
    """The level each session asked for with logging/setLevel (None: a stateless client); unset sends all."""

    def __init__(self) -> None:
        self._levels: dict[str | None, str] = {}

    def set(self, session: str | None, level: str) -> None:
        self._levels[session] = level

    def allows(self, session: str | None, level: str) -> bool:
        wanted = self._levels.get(session, LOG_LEVELS[0])
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(wanted)


def session_id(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The Mcp-Session-Id of the HTTP request that carried this message, if any."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


async def run_steps(
    ctx: ServerRequestContext[Any, Any], tool: Tool, arguments: Mapping[str, Any], levels: LogLevels
) -> tuple[list[Reply], list[Exchange]]:
    """Send the tool's steps in order; the client's replies to its requests and every exchange."""
    replies: list[Reply] = []
    exchanges: list[Exchange] = []
    for index, step in enumerate(tool.steps):
        if step.delay_s:
            await anyio.sleep(step.delay_s)
        exchange: Exchange = {"step": index, "at": time.time()}
        reply = await _one(ctx, step, arguments, levels, exchange)
        if reply is not None:
            replies.append(reply)
        exchanges.append(exchange)
    return replies, exchanges


async def _one(
    ctx: ServerRequestContext[Any, Any],
    step: Step,
    arguments: Mapping[str, Any],
    levels: LogLevels,
    exchange: Exchange,
) -> Reply | None:
    if isinstance(step, Progress):
        await _progress(ctx, step, exchange)
    elif isinstance(step, Log):
        await _log(ctx, step, arguments, levels, exchange)
    elif isinstance(step, CloseStream):
        await _close(ctx, exchange)
    elif isinstance(step, Elicit):
        return await _ask(
            ctx, "elicitation", _elicitation(step, arguments), types.ElicitResult, step, exchange
        )
    else:
        return await _ask(
            ctx, "sampling", _sampling(step, arguments), types.CreateMessageResult, step, exchange
        )
    return None


def _elicitation(step: Elicit, arguments: Mapping[str, Any]) -> types.ElicitRequest:
    params = {"mode": "form", "message": fill(step.message, arguments), "requestedSchema": dict(step.schema)}
    return types.ElicitRequest(params=types.ElicitRequestFormParams.model_validate(params))


def _sampling(step: Sample, arguments: Mapping[str, Any]) -> types.CreateMessageRequest:
    message = {"role": "user", "content": {"type": "text", "text": fill(step.prompt, arguments)}}
    params: dict[str, Any] = {"messages": [message], "maxTokens": step.max_tokens}
    if step.system_prompt is not None:
        params["systemPrompt"] = fill(step.system_prompt, arguments)
    return types.CreateMessageRequest(params=types.CreateMessageRequestParams.model_validate(params))


async def _progress(ctx: ServerRequestContext[Any, Any], step: Progress, exchange: Exchange) -> None:
    meta = (ctx.params or {}).get("_meta") or {}
    token = meta.get("progressToken") if isinstance(meta, Mapping) else None
    sent = {"progressToken": token, "progress": step.progress, "total": step.total, "message": step.message}
    exchange |= {"kind": "progress", "sent": {key: value for key, value in sent.items() if value is not None}}
    if token is None:
        exchange |= {"delivered": False, "reason": "the request carried no progress token"}
        return
    # The SDK sends it against the caller's token, on the call's own stream.
    await ctx.session.report_progress(step.progress, step.total, step.message)
    exchange["delivered"] = True


async def _log(
    ctx: ServerRequestContext[Any, Any],
    step: Log,
    arguments: Mapping[str, Any],
    levels: LogLevels,
    exchange: Exchange,
) -> None:
    data = fill(step.data, arguments) if isinstance(step.data, str) else step.data
    sent = {"level": step.level, "data": data} | ({"logger": step.logger} if step.logger else {})
    exchange |= {"kind": "log", "sent": sent}
    if not levels.allows(session_id(ctx), step.level):
        exchange |= {"delivered": False, "reason": "below the level the client set with logging/setLevel"}
        return
    notification = types.LoggingMessageNotification(
        params=types.LoggingMessageNotificationParams.model_validate(sent)
    )
    # Sent as the typed notification on the call's stream: the SDK's send_log_message is deprecated
    # for 2026-07-28 clients, and this mock must keep serving the handshake versions that have logging.
    await ctx.session.send_notification(notification, related_request_id=ctx.request_id)
    exchange["delivered"] = True


async def _close(ctx: ServerRequestContext[Any, Any], exchange: Exchange) -> None:
    exchange["kind"] = "close_stream"
    if ctx.close_sse_stream is None:
        # The SDK offers it only on a session stream of 2025-11-25 (older clients cannot resume; the
        # 2026-07-28 transport has no session streams).
        exchange |= {"delivered": False, "reason": "this client's protocol version has no stream to resume"}
        return
    await ctx.close_sse_stream()
    exchange["delivered"] = True


async def _ask(
    ctx: ServerRequestContext[Any, Any],
    kind: Any,
    request: types.ElicitRequest | types.CreateMessageRequest,
    result_type: type[BaseModel],
    step: Elicit | Sample,
    exchange: Exchange,
) -> Reply:
    sent = request.params.model_dump(by_alias=True, mode="json", exclude_none=True)
    exchange |= {"kind": kind, "sent": sent}
    metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
    started = time.monotonic()
    try:
        result = await ctx.session.send_request(
            request,
            result_type,
            request_read_timeout_seconds=step.timeout_s,
            metadata=metadata,
        )
    except MCPError as exc:  # refused, timed out, or no back channel: the SDK says which
        exchange |= {"answer": None, "error": f"JSON-RPC error {exc.error.code}: {exc.error.message}"}
        exchange |= {"seconds": round(time.monotonic() - started, 3), "met": step.expect is None}
        return Reply(kind=kind, answer=None, error=exchange["error"], met=step.expect is None)
    except ValidationError as exc:
        invalid = f"the client's answer is not a valid {result_type.__name__}: {exc.errors()[0]['msg']}"
        exchange |= {"answer": None, "error": invalid, "met": False}
        return Reply(kind=kind, answer=None, error=invalid, met=False)
    answer = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    met = step.expect is None or subset(step.expect, answer)
    exchange |= {"answer": answer, "met": met, "seconds": round(time.monotonic() - started, 3)}
    if step.expect is not None:
        exchange["expected"] = dict(step.expect)
    error = None if met else f"expected {dict(step.expect or {})}, got {answer}"
    return Reply(kind=kind, answer=answer, error=error, met=met)
