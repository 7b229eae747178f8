"""The gateway's HTTP app: OpenAI-compatible chat completions (JSON and SSE), model listing, and /wt/ admin.

Routes (each also without the /v1 prefix):

    POST /v1/chat/completions   answered by the mode; refusals are OpenAI error bodies, never a default answer
    GET  /v1/models             the configured model names
    GET  /v1/models/{model}

The admin routes are in windtunnel._gateway.admin (tapes: windtunnel._gateway.tape_admin). The app owns
HTTP, SSE framing and the request log; the mode (windtunnel._chat.mode) only decides what the model says.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from windtunnel._chat.mode import ChatRequest, GatewayMode, ModeReply
from windtunnel._chat.wire import error_body, first_message
from windtunnel._gateway.admin import admin_routes
from windtunnel._gateway.log import request_fields
from windtunnel._gateway.request_check import STRICT_MODES, field_problem, parse_request
from windtunnel._gateway.sse import DONE_FRAME, ChunkAssembler, chunks_from_completion, frame
from windtunnel._gateway.state import GatewayState
from windtunnel._gateway.tape_admin import tape_routes
from windtunnel._limits import DEFAULT_MAX_BODY_BYTES
from windtunnel._net.body_limit import BodyLimit
from windtunnel.errors import TapeError

logger = logging.getLogger(__name__)

SESSION_HEADER = "x-wt-session"
PASSED_HEADERS: frozenset[str] = frozenset(
    {
        "accept",
        "content-type",
        "user-agent",
        "openai-beta",
        "openai-organization",
        "openai-project",
        "x-request-id",
        SESSION_HEADER,
    }
)
"""Request headers a mode may see (ChatRequest.headers); credentials and transport headers never reach it."""

_ENTRY_FIELDS = frozenset(
    {"index", "at", "method", "path", "session", "mode", "status", "usage", "usage_sent", "response"}
    | {"error", "error_code", "latency_ms", "model", "messages", "tools", "sampling", "stream", "extra"}
)


def create_app(
    mode: GatewayMode, *, models: Sequence[str], max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
) -> Starlette:
    """The gateway as an ASGI app; `app.state.gateway` is its GatewayState. Shutdown closes the mode.
    A request body over `max_body_bytes` is refused with 413 before it is read (windtunnel._limits)."""
    state = GatewayState(mode=mode, models=tuple(models))

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            try:
                await state.mode.aclose()
            except TapeError as exc:
                state.shutdown_error = exc

    routes = [
        *_model_routes(state, "/v1"),
        *_model_routes(state, ""),
        *admin_routes(state),
        *tape_routes(state),
    ]
    handlers = {404: _http_error, 405: _http_error}
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers=handlers,
        middleware=[Middleware(BodyLimit, max_bytes=max_body_bytes)],
    )
    app.state.gateway = state
    return app


def _model_routes(state: GatewayState, prefix: str) -> list[Route]:
    async def chat(request: Request) -> Response:
        return await _chat(state, request)

    async def models(_request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [_model(name) for name in state.models]})

    async def model(request: Request) -> Response:
        name = request.path_params["model"]
        if name not in state.models:
            body = error_body(f"the model {name!r} does not exist", "model_not_found", param="model")
            return JSONResponse(body, status_code=404)
        return JSONResponse(_model(name))

    return [
        Route(f"{prefix}/chat/completions", chat, methods=["POST"]),
        Route(f"{prefix}/models", models, methods=["GET"]),
        Route(f"{prefix}/models/{{model:path}}", model, methods=["GET"]),
    ]


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "windtunnel"}


async def _http_error(_request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    return JSONResponse(error_body(str(detail), "not_found" if status == 404 else "bad_method"), status)


class _Call:
    """One model call in flight: its log entry, filled in as the call proceeds and logged exactly once."""

    def __init__(self, state: GatewayState, request: Request) -> None:
        self.state = state
        self.started = time.perf_counter()
        self.logged = False
        self.entry: dict[str, Any] = {
            "index": None,  # set when logged
            "at": time.time(),
            "method": request.method,
            "path": request.url.path,
            "session": request.headers.get(SESSION_HEADER),
            "case": None,
            "mode": state.mode.name,
            "stream": False,
        }

    def finish(
        self, status: int, *, message: Any = None, usage: Any = None, usage_sent: bool = False
    ) -> None:
        self._log(status, response=message, usage=usage, usage_sent=usage_sent, error=None, error_code=None)

    def refuse(self, status: int, error: str, code: str, *, param: str | None = None) -> Response:
        self._log(status, response=None, usage=None, usage_sent=False, error=error, error_code=code)
        return JSONResponse(error_body(error, code, param=param), status_code=status)

    def broke_off(self, error: str, code: str, *, message: Any, usage: Any) -> None:
        """A stream that started but did not finish: what was sent is kept, with the cause."""
        self._log(200, response=message, usage=usage, usage_sent=False, error=error, error_code=code)

    def _log(self, status: int, **fields: Any) -> None:
        if self.logged:
            return
        self.logged = True
        self.entry.update(fields, status=status, latency_ms=(time.perf_counter() - self.started) * 1000)
        self.state.log.append(self.entry)


async def _chat(state: GatewayState, request: Request) -> Response:
    call = _Call(state, request)
    body, problem = parse_request(await request.body())
    if problem is None and state.mode.name in STRICT_MODES:
        problem = field_problem(body)
    if problem is not None:
        message, param = problem
        return call.refuse(400, message, "invalid_request", param=param)
    call.entry.update(request_fields(body))
    headers = {k: v for k, v in request.headers.items() if k in PASSED_HEADERS}
    chat = ChatRequest(
        method=request.method,
        path=request.url.path,
        body=body,
        headers=headers,
        session=call.entry["session"],
    )
    try:
        reply = await state.mode.complete(chat)
    except Exception as exc:  # a broken mode still yields a logged refusal, never a hung or empty answer
        logger.exception("gateway mode %s failed", state.mode.name)
        return call.refuse(
            500, f"gateway mode {state.mode.name} failed: {type(exc).__name__}: {exc}", "mode_failed"
        )
    call.entry.update({k: v for k, v in reply.context.items() if k not in _ENTRY_FIELDS})
    if reply.error is not None:
        return call.refuse(reply.status, reply.error, reply.error_code or "refused")
    if chat.stream:
        return _streamed(call, reply, body)
    if reply.completion is None:
        await _close(reply)
        return call.refuse(
            500, f"gateway mode {state.mode.name} answered without a completion", "mode_failed"
        )
    usage = reply.completion.get("usage")
    call.finish(
        reply.status, message=first_message(reply.completion), usage=usage, usage_sent=usage is not None
    )
    return JSONResponse(reply.completion, status_code=reply.status)


def _streamed(call: _Call, reply: ModeReply, body: Mapping[str, Any]) -> Response:
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


async def _prepared(call: _Call, reply: ModeReply, body: Mapping[str, Any]) -> AsyncIterator[bytes]:
    """A stream whose chunks are all known: logged first, then sent in one write (it is all in memory)."""
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    if reply.events is not None:
        chunks = [dict(event) for event in reply.events]
    else:
        assert reply.completion is not None  # checked by _streamed
        chunks = chunks_from_completion(reply.completion, include_usage=include_usage)
    assembled = ChunkAssembler().add_all(chunks)
    message = first_message(reply.completion) if reply.completion else assembled.result()
    usage = reply.completion.get("usage") if reply.completion else assembled.usage
    call.finish(reply.status, message=message, usage=usage, usage_sent=assembled.usage is not None)
    yield b"".join(frame(chunk) for chunk in chunks) + DONE_FRAME


async def _passthrough(call: _Call, reply: ModeReply) -> AsyncIterator[bytes]:
    """A live stream: each chunk is sent as it arrives; the entry is logged before [DONE] goes out."""
    assert reply.chunks is not None
    assembled = ChunkAssembler()
    upstream_error: Any = None
    try:
        async for chunk in reply.chunks:
            assembled.add(chunk)
            upstream_error = upstream_error or chunk.get("error")
            yield frame(chunk)
        if upstream_error is not None:
            # An in-band error event from upstream: passed on as is, and the call logged as refused.
            text = f"upstream sent an error event: {json.dumps(upstream_error)[:500]}"
            call.broke_off(text, "upstream_error", message=assembled.result(), usage=assembled.usage)
        sent = assembled.usage is not None
        call.finish(reply.status, message=assembled.result(), usage=assembled.usage, usage_sent=sent)
        yield DONE_FRAME
    except Exception as exc:  # noqa: BLE001 - the stream broke off: tell the client in-band, as OpenAI does
        code = str(getattr(exc, "reason", None) or "stream_broken")
        call.broke_off(str(exc), code, message=assembled.result(), usage=assembled.usage)
        yield frame(error_body(str(exc), code))
    finally:
        if not call.logged:
            cause = "the client went away before the stream ended"
            call.broke_off(cause, "client_disconnected", message=assembled.result(), usage=assembled.usage)
        with anyio.CancelScope(shield=True):
            await _close(reply)


async def _close(reply: ModeReply) -> None:
    close = getattr(reply.chunks, "aclose", None)
    if close is not None:
        await close()
