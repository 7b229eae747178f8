"""The gateway's HTTP app: every dialect's model routes at once, model listing, side traffic and /wt/ admin.

Routes (each model route also without the /v1 prefix); the route picks the dialect (windtunnel._wire):

    POST /v1/chat/completions         OpenAI chat completions (JSON, or SSE data: frames ending [DONE])
    POST /v1/messages                 Anthropic Messages (JSON, or SSE event:+data: frames; ?beta=true too)
    POST /v1/messages/count_tokens    Anthropic token count: side traffic, {"input_tokens": n}
    POST /v1/responses                OpenAI Responses (JSON, or SSE event:+data: frames)
    GET  /v1/responses                refused (405): a WebSocket upgrade, so clients fall back to HTTP
    GET  /v1/models                   the configured model names (Anthropic's list shape for an Anthropic client)
    GET  /v1/models/{model}
    HEAD|GET /, /api/hello            200: harness preflights (Claude Code checks the base URL is up)

A model call is answered by the mode, unless its model is a declared side model (titles, summaries, quota
checks a harness makes beside the turn): a side responder answers those, logged with `side`, and they never
consume a scripted decision. Refusals are the dialect's error body, with `x-should-retry: false`, never a
default answer. A scripted fault (windtunnel._gateway.faults) is served as scripted, without that header.
The admin routes are in windtunnel._gateway.admin (tapes: windtunnel._gateway.tape_admin).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket

from windtunnel._chat.mode import ChatRequest, GatewayMode, ModeReply
from windtunnel._core.reference import ReferenceDecision
from windtunnel._gateway.admin import admin_routes
from windtunnel._gateway.calls import SESSION_HEADER, Call, close, refusal, streamed
from windtunnel._gateway.faults import faulted
from windtunnel._gateway.log import request_fields
from windtunnel._gateway.state import GatewayState
from windtunnel._gateway.tape_admin import tape_routes
from windtunnel._limits import DEFAULT_MAX_BODY_BYTES
from windtunnel._net.body_limit import BodyLimit
from windtunnel._wire.anthropic_messages import prompt_tokens
from windtunnel._wire.body import messages_problem, model_problem, parse_body
from windtunnel._wire.dialect import Dialect
from windtunnel._wire.fields import Problem
from windtunnel._wire.registry import CHAT, MESSAGES, RESPONSES
from windtunnel.errors import TapeError

logger = logging.getLogger(__name__)

STRICT_MODES = frozenset({"script", "replay"})
"""Modes where the gateway itself plays the model, and so refuses what the real API would refuse; in live
and record modes the upstream is the authority and answers for itself."""
SIDE_ANSWER = "ok"
"""What the side responder says: a title, a summary or a quota check needs an answer, not a scripted one."""
PASSED_HEADERS: frozenset[str] = frozenset(
    {
        "accept",
        "content-type",
        "user-agent",
        "openai-beta",
        "openai-organization",
        "openai-project",
        "x-request-id",
        "anthropic-version",
        "anthropic-beta",
        "x-app",
        "originator",
        SESSION_HEADER,
    }
)
"""Request headers a mode may see (ChatRequest.headers); credentials and transport headers never reach it."""

_ENTRY_FIELDS = frozenset(
    {"index", "at", "method", "path", "session", "mode", "status", "usage", "usage_sent", "response"}
    | {"error", "error_code", "latency_ms", "model", "messages", "tools", "sampling", "stream", "extra"}
    | {"wire", "side", "history", "fault"}
)


def create_app(
    mode: GatewayMode,
    *,
    models: Sequence[str],
    side_models: Sequence[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> Starlette:
    """The gateway as an ASGI app; `app.state.gateway` is its GatewayState. Shutdown closes the mode.
    `side_models` are the model names a runtime's side calls use (answered beside the script).
    A request body over `max_body_bytes` is refused with 413 before it is read (windtunnel._limits)."""
    state = GatewayState(mode=mode, models=tuple(models), side_models=frozenset(side_models))

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            try:
                await state.mode.aclose()
            except TapeError as exc:
                state.shutdown_error = exc

    routes: list[BaseRoute] = [
        *_model_routes(state, "/v1"),
        *_model_routes(state, ""),
        Route("/", _up, methods=["GET", "HEAD"]),
        Route("/api/hello", _up, methods=["GET", "HEAD"]),
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


def _model_routes(state: GatewayState, prefix: str) -> list[BaseRoute]:
    def answering(dialect: Dialect) -> Any:
        async def endpoint(request: Request) -> Response:
            return await _model_call(state, dialect, request)

        return endpoint

    async def count_tokens(request: Request) -> Response:
        return await _count_tokens(state, request)

    async def models(request: Request) -> Response:
        if _anthropic(request):
            data = [_anthropic_model(name) for name in state.models]
            ends = {"first_id": data[0]["id"], "last_id": data[-1]["id"]} if data else {}
            return JSONResponse({"data": data, "has_more": False, **ends})
        return JSONResponse({"object": "list", "data": [_model(name) for name in state.models]})

    async def model(request: Request) -> Response:
        name = request.path_params["model"]
        dialect = MESSAGES if _anthropic(request) else CHAT
        if name not in state.models:
            message = f"the model {name!r} does not exist"
            return refusal(dialect, 404, message, "not_found" if dialect is MESSAGES else "model_not_found")
        return JSONResponse(_anthropic_model(name) if dialect is MESSAGES else _model(name))

    return [
        Route(f"{prefix}/chat/completions", answering(CHAT), methods=["POST"]),
        Route(f"{prefix}/messages", answering(MESSAGES), methods=["POST"]),
        Route(f"{prefix}/messages/count_tokens", count_tokens, methods=["POST"]),
        Route(f"{prefix}/responses", answering(RESPONSES), methods=["POST"]),
        Route(f"{prefix}/responses", _no_websocket, methods=["GET"]),
        WebSocketRoute(f"{prefix}/responses", _refuse_websocket),
        Route(f"{prefix}/models", models, methods=["GET"]),
        Route(f"{prefix}/models/{{model:path}}", model, methods=["GET"]),
    ]


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "windtunnel"}


def _anthropic(request: Request) -> bool:
    """GET /v1/models is shared: an Anthropic client (it sends anthropic-version) gets Anthropic's shape."""
    return "anthropic-version" in request.headers


def _anthropic_model(name: str) -> dict[str, Any]:
    return {"type": "model", "id": name, "display_name": name, "created_at": "1970-01-01T00:00:00Z"}


async def _up(_request: Request) -> Response:
    return JSONResponse({"status": "ok"})


WEBSOCKET_REFUSED = (
    "the gateway serves the Responses API over HTTP POST /v1/responses only: WebSocket upgrades are refused, "
    "so clients fall back to HTTP (Codex: set supports_websockets = false to skip the attempt)"
)


async def _no_websocket(_request: Request) -> Response:
    """A GET on /v1/responses is a WebSocket upgrade attempt (a server without WebSocket support sees it
    as plain HTTP): refused, so the client falls back to POST."""
    return refusal(RESPONSES, 405, WEBSOCKET_REFUSED, "websocket_refused")


async def _refuse_websocket(websocket: WebSocket) -> None:
    # Closing before accepting makes the server answer the handshake with 403: the upgrade is refused.
    await websocket.close(code=1008, reason="websockets refused: use HTTP POST /v1/responses")


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    dialect = MESSAGES if "/messages" in request.url.path else CHAT
    return refusal(dialect, status, str(detail), "not_found" if status == 404 else "bad_method")


async def _model_call(state: GatewayState, dialect: Dialect, request: Request) -> Response:
    call = Call(state, request, dialect)
    body, problem = parse_body(await request.body())
    if problem is None:
        problem = _problem(state, call, body)
    if problem is not None:
        message, param = problem
        return call.refuse(400, message, "invalid_request", param=param)
    call.body = body
    call.entry.update(request_fields(body, dialect), history=call.history)
    if body.get("model") in state.side_models:
        return _side(call, body, f"side model {body['model']}")
    chat = ChatRequest(
        method=request.method,
        path=request.url.path,
        body=body,
        headers={k: v for k, v in request.headers.items() if k in PASSED_HEADERS},
        session=call.entry["session"],
        wire=dialect.name,
    )
    return await _answer(state, call, chat)


async def _answer(state: GatewayState, call: Call, chat: ChatRequest) -> Response:
    """The mode's reply to a model call, sent in the call's dialect (JSON or stream) or refused."""
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
    if reply.fault is not None and (broken := await faulted(call, reply, chat.body)) is not None:
        return broken
    if chat.stream:
        return streamed(call, reply, chat.body)
    if reply.completion is None:
        await close(reply)
        return call.refuse(
            500, f"gateway mode {state.mode.name} answered without a completion", "mode_failed"
        )
    usage_sent = call.dialect.usage(reply.completion) is not None
    call.answered(reply.status, reply.completion, usage_sent=usage_sent)
    return JSONResponse(reply.completion, status_code=reply.status)


def _problem(state: GatewayState, call: Call, body: dict[str, Any]) -> Problem | None:
    """What the dialect refuses in this body: its required fields always; where the gateway plays the model,
    also the types and ranges the real API refuses and an earlier answer it cannot recall."""
    dialect = call.dialect
    problem = dialect.required_problem(body)
    if problem is None and state.mode.name in STRICT_MODES:
        problem = dialect.field_problem(body)
        if problem is None:
            call.history, problem = dialect.recall(body, state.memory)
    return problem


def _side(call: Call, body: dict[str, Any], reason: str) -> Response:
    """Side traffic: answered by the side responder in the call's dialect; the mode never sees it."""
    call.entry["side"] = reason
    response = call.dialect.render(ReferenceDecision(content=SIDE_ANSWER), body)
    if body.get("stream"):
        return streamed(call, ModeReply(completion=response), body)
    call.answered(200, response, usage_sent=True)
    return JSONResponse(response)


async def _count_tokens(state: GatewayState, request: Request) -> Response:
    """Anthropic's token count (Claude Code asks it beside the turn): an estimate, logged as side traffic."""
    call = Call(state, request, MESSAGES)
    body, problem = parse_body(await request.body())
    if problem is None:
        problem = model_problem(body) or messages_problem(body)
    if problem is not None:
        return call.refuse(400, problem[0], "invalid_request", param=problem[1])
    call.entry.update(request_fields(body, MESSAGES), side="count_tokens")
    answer = {"input_tokens": prompt_tokens(body)}
    call.finish(200, message=answer)
    return JSONResponse(answer)
