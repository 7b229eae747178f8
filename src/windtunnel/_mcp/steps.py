"""The steps of a tool call sent to the client with the mcp SDK, each recorded as an exchange (the evidence).

An exchange is `{"step", "kind", "sent", ...}` plus what came of it: `"delivered": false` and a `reason` for
a notification the mock did not send (no progress token, a log level the client filtered out), the client's
`answer` or its `error` for a request, and `"met"` against the step's expectation. Checks of a runtime's
MCP client read these from `/wt/calls` to see what its agent loop was sent and how it answered.

A client of the 2026-07-28 per-request transport has no back channel: there the asking steps go out all
at once as the SDK's InputRequiredResult (keys `step-<index>`), and the client's retry, carrying the
answers, is the call that runs the steps and is recorded. The first round is in `/wt/requests`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from windtunnel._core.mock_kit import Tool
from windtunnel._core.mock_steps import (
    ASKS,
    LOG_LEVELS,
    CloseStream,
    Elicit,
    Log,
    Progress,
    Reply,
    Sample,
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


def wt_session(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The Wind Tunnel session the HTTP request named (X-WT-Session, optional: Contract C), if any."""
    headers = getattr(ctx.request, "headers", None)
    return (headers.get("x-wt-session") or None) if headers is not None else None


def per_request(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client speaks the 2026-07-28 per-request transport (no back channel, no setLevel)."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def input_required(tool: Tool, arguments: Mapping[str, Any]) -> types.InputRequiredResult:
    """The first round of an asking tool for a 2026-07-28 client: every request of its steps at once."""
    requests: dict[str, Any] = {
        f"step-{index}": _request(step, arguments)
        for index, step in enumerate(tool.steps)
        if isinstance(step, ASKS)
    }
    return types.InputRequiredResult(input_requests=requests)


async def run_steps(
    ctx: ServerRequestContext[Any, Any],
    tool: Tool,
    arguments: Mapping[str, Any],
    levels: LogLevels,
    responses: Mapping[str, BaseModel] | None = None,
) -> tuple[list[Reply], list[Exchange]]:
    """Send the tool's steps in order; the client's replies to its requests and every exchange.

    `responses` are a 2026-07-28 client's answers to `input_required()`, by key: asking steps read
    their answer there instead of sending a request.
    """
    replies: list[Reply] = []
    exchanges: list[Exchange] = []
    for index, step in enumerate(tool.steps):
        if step.delay_s:
            await anyio.sleep(step.delay_s)
        exchange: Exchange = {"step": index, "at": time.time()}
        if isinstance(step, Elicit | Sample):
            request = _request(step, arguments)
            sent = request.params.model_dump(by_alias=True, mode="json", exclude_none=True)
            exchange |= {"kind": "elicitation" if isinstance(step, Elicit) else "sampling", "sent": sent}
            if responses is None:
                replies.append(await _ask(ctx, request, step, exchange))
            else:
                replies.append(_answered(responses.get(f"step-{index}"), step, exchange))
        else:
            await _notify(ctx, step, arguments, levels, exchange)
        exchanges.append(exchange)
    return replies, exchanges


async def _notify(
    ctx: ServerRequestContext[Any, Any],
    step: Progress | Log | CloseStream,
    arguments: Mapping[str, Any],
    levels: LogLevels,
    exchange: Exchange,
) -> None:
    if isinstance(step, Progress):
        await _progress(ctx, step, exchange)
    elif isinstance(step, Log):
        await _log(ctx, step, arguments, levels, exchange)
    else:
        await _close(ctx, exchange)


def _request(
    step: Elicit | Sample, arguments: Mapping[str, Any]
) -> types.ElicitRequest | types.CreateMessageRequest:
    return _elicitation(step, arguments) if isinstance(step, Elicit) else _sampling(step, arguments)


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
    if per_request(ctx) and step.level not in allowed_log_levels(ctx.protocol_version, ctx.meta):
        exchange |= {"delivered": False, "reason": "the request did not opt in to log messages of this level"}
        return
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
    request: types.ElicitRequest | types.CreateMessageRequest,
    step: Elicit | Sample,
    exchange: Exchange,
) -> Reply:
    result_type: type[BaseModel] = (
        types.ElicitResult if isinstance(step, Elicit) else types.CreateMessageResult
    )
    metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
    started = time.monotonic()
    try:
        result = await ctx.session.send_request(
            request, result_type, request_read_timeout_seconds=step.timeout_s, metadata=metadata
        )
    except MCPError as exc:  # refused, timed out, or no back channel: the SDK says which
        exchange["seconds"] = round(time.monotonic() - started, 3)
        return _judged(None, f"JSON-RPC error {exc.error.code}: {exc.error.message}", step, exchange)
    except ValidationError as exc:
        invalid = f"the client's answer is not a valid {result_type.__name__}: {exc.errors()[0]['msg']}"
        return _judged(None, invalid, step, exchange)
    exchange["seconds"] = round(time.monotonic() - started, 3)
    return _judged(result.model_dump(by_alias=True, mode="json", exclude_none=True), None, step, exchange)


def _answered(response: BaseModel | None, step: Elicit | Sample, exchange: Exchange) -> Reply:
    """A 2026-07-28 client's answer, carried by its retry of the call."""
    if response is None:
        return _judged(None, "the client's retry carried no answer to this request", step, exchange)
    return _judged(response.model_dump(by_alias=True, mode="json", exclude_none=True), None, step, exchange)


def _judged(
    answer: dict[str, Any] | None, error: str | None, step: Elicit | Sample, exchange: Exchange
) -> Reply:
    """The client's answer (or why there is none) against the step's script, recorded in `exchange`."""
    met = step.expect is None or (answer is not None and subset(step.expect, answer))
    exchange |= {"answer": answer, "met": met} | ({"error": error} if error is not None else {})
    if step.expect is not None:
        exchange["expected"] = dict(step.expect)
    why = error if error is not None or met else f"expected {dict(step.expect or {})}, got {answer}"
    return Reply(kind=exchange["kind"], answer=answer, error=why, met=met)
