"""One model call in flight at the gateway: its log entry, its refusals and how its answer is sent.

Every refusal carries `x-should-retry: false` (the OpenAI and Anthropic SDKs both honour it), so an SDK's
automatic retry never asks again and pops the next scripted answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from windtunnel._chat.mode import ModeReply
from windtunnel._gateway.state import GatewayState
from windtunnel._wire.dialect import Dialect

SESSION_HEADER = "x-wt-session"
NO_RETRY = {"x-should-retry": "false"}
"""The header every refusal carries: clients must not retry what the gateway refused."""


def refusal(dialect: Dialect, status: int, message: str, code: str, *, param: str | None = None) -> Response:
    return JSONResponse(dialect.error_body(message, code, param=param), status_code=status, headers=NO_RETRY)


class Call:
    """One model call: its log entry, filled in as the call proceeds and logged exactly once."""

    def __init__(self, state: GatewayState, request: Request, dialect: Dialect) -> None:
        self.state = state
        self.dialect = dialect
        self.started = time.perf_counter()
        self.logged = False
        self.history: list[Any] | None = None
        self.body: Mapping[str, Any] = {}  # the parsed request body, once it parsed
        self.entry: dict[str, Any] = {
            "index": None,  # set when logged
            "at": time.time(),
            "method": request.method,
            "path": request.url.path,
            "session": request.headers.get(SESSION_HEADER),
            "case": None,
            "mode": state.mode.name,
            "wire": dialect.name,
            "side": None,
            "stream": False,
        }

    def finish(
        self, status: int, *, message: Any = None, usage: Any = None, usage_sent: bool = False
    ) -> None:
        self._log(status, response=message, usage=usage, usage_sent=usage_sent, error=None, error_code=None)

    def answered(self, status: int, response: Mapping[str, Any], *, usage_sent: bool) -> None:
        """Log a served answer, and let the dialect remember it for later requests that refer to it."""
        usage = self.dialect.usage(response)
        self.finish(
            status, message=self.dialect.logged_response(response), usage=usage, usage_sent=usage_sent
        )
        self.dialect.remember(self.body, response, self.history, self.state.memory)

    def refuse(self, status: int, error: str, code: str, *, param: str | None = None) -> Response:
        self._log(status, response=None, usage=None, usage_sent=False, error=error, error_code=code)
        return refusal(self.dialect, status, error, code, param=param)

    def failed(self, status: int, error: str, code: str) -> None:
        """A scripted fault answered with an error status: logged like a refusal, but not sent as one."""
        self._log(status, response=None, usage=None, usage_sent=False, error=error, error_code=code)

    def broke_off(self, error: str, code: str, *, message: Any, usage: Any) -> None:
        """A stream that started but did not finish: what was sent is kept, with the cause."""
        self._log(200, response=message, usage=usage, usage_sent=False, error=error, error_code=code)

    def _log(self, status: int, **fields: Any) -> None:
        if self.logged:
            return
        self.logged = True
        self.entry.update(fields, status=status, latency_ms=(time.perf_counter() - self.started) * 1000)
        self.state.log.append(self.entry)


def streamed(call: Call, reply: ModeReply, body: Mapping[str, Any]) -> Response:
    if reply.chunks is not None:
        stream = _passthrough(call, reply)
    elif reply.completion is not None or reply.events is not None:
        stream = _prepared(call, reply, body)
    else:
        return call.refuse(
            500, f"gateway mode {call.state.mode.name} answered without a completion", "mode_failed"
        )
    return StreamingResponse(
        stream,
        status_code=reply.status,
        media_type="text/event-stream",
        headers={"cache-control": "no-cache"},
    )


async def _prepared(call: Call, reply: ModeReply, body: Mapping[str, Any]) -> AsyncIterator[bytes]:
    """A stream whose events are all known: logged first, then sent in one write (it is all in memory)."""
    dialect = call.dialect
    if reply.events is not None:
        events = [dict(event) for event in reply.events]
    else:
        assert reply.completion is not None  # checked by streamed()
        events = dialect.events(reply.completion, body)
    assembled = dialect.assemble(events)
    response = reply.completion if reply.completion is not None else assembled
    call.answered(reply.status, response, usage_sent=dialect.usage(assembled) is not None)
    yield b"".join(dialect.frame(event) for event in events) + dialect.done_frame


async def _passthrough(call: Call, reply: ModeReply) -> AsyncIterator[bytes]:
    """A live stream: each event is sent as it arrives; the entry is logged before the stream ends."""
    assert reply.chunks is not None
    dialect = call.dialect
    events: list[Mapping[str, Any]] = []
    upstream_error: Any = None
    try:
        async for event in reply.chunks:
            events.append(event)
            upstream_error = upstream_error or event.get("error") or _failed(event)
            yield dialect.frame(event)
        assembled = dialect.assemble(events)
        if upstream_error is not None:
            # An in-band error event from upstream: passed on as is, and the call logged as refused.
            text = f"upstream sent an error event: {json.dumps(upstream_error)[:500]}"
            usage = dialect.usage(assembled)
            call.broke_off(text, "upstream_error", message=dialect.logged_response(assembled), usage=usage)
        call.answered(reply.status, assembled, usage_sent=dialect.usage(assembled) is not None)
        yield dialect.done_frame
    except Exception as exc:  # noqa: BLE001 - the stream broke off: tell the client in-band, as the APIs do
        code = str(getattr(exc, "reason", None) or "stream_broken")
        assembled = dialect.assemble(events)
        call.broke_off(
            str(exc), code, message=dialect.logged_response(assembled), usage=dialect.usage(assembled)
        )
        yield dialect.frame(dialect.stream_error(str(exc), code))
    finally:
        if not call.logged:
            cause = "the client went away before the stream ended"
            assembled = dialect.assemble(events)
            call.broke_off(
                cause,
                "client_disconnected",
                message=dialect.logged_response(assembled),
                usage=dialect.usage(assembled),
            )
        with anyio.CancelScope(shield=True):
            await close(reply)


def _failed(event: Mapping[str, Any]) -> Any:
    """A Responses stream's failure or error event (its error sits in the response, or is the event), else
    None; chat and Anthropic error events carry an `error` object, read by the caller."""
    if event.get("type") == "response.failed":
        return (event.get("response") or {}).get("error") or "response.failed"
    return dict(event) if event.get("type") == "error" else None


async def close(reply: ModeReply) -> None:
    close_ = getattr(reply.chunks, "aclose", None)
    if close_ is not None:
        await close_()
