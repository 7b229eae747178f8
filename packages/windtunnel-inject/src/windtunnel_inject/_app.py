"""The Contract C v1 server around an agent loop: POST /wt/inject, POST /wt/reset, GET /wt/health, and
GET /wt/state when the loop can snapshot its state (docs/contract-c.md)."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, cast

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from windtunnel_inject._loop import AgentLoop, ListsTools, SnapshotsState
from windtunnel_inject._transcript import TurnFailed, describe

INJECT_FIELDS = frozenset({"session_id", "message", "timeout_s"})
REQUIRED = ("turn", "reset")
Endpoint = Callable[[Request], Awaitable[JSONResponse]]


class BadRequest(Exception):
    """The inject request breaks Contract C v1; answered 400 naming the field."""


def create_app(loop: AgentLoop, *, name: str) -> Starlette:
    """The Contract C server for `loop`; `name` (the runtime's) appears in its 500 answers.

    Serve it with lifespan on: a loop that is an async context manager is entered there.
    """
    _check_loop(loop)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if isinstance(loop, AbstractAsyncContextManager):
            async with cast("AbstractAsyncContextManager[Any]", loop):
                yield
        else:
            yield

    async def inject(request: Request) -> JSONResponse:
        try:
            session_id, text, timeout_s = inject_request(await request.body())
        except BadRequest as exc:
            return error(400, str(exc))
        return await _run_turn(loop, name, session_id, text, timeout_s)

    async def reset(_request: Request) -> JSONResponse:
        try:
            await loop.reset()
        except Exception as exc:  # noqa: BLE001 - any non-200 is a failed wipe to the harness; say why
            return error(500, f"the {name} runtime could not reset: {type(exc).__name__}: {exc}")
        return JSONResponse({"reset": True})

    routes = [
        Route("/wt/inject", inject, methods=["POST"]),
        Route("/wt/reset", reset, methods=["POST"]),
        Route("/wt/health", _health(loop), methods=["GET"]),
    ]
    if isinstance(loop, SnapshotsState):
        routes.append(Route("/wt/state", _state(loop), methods=["GET"]))
    return Starlette(routes=routes, lifespan=lifespan)


def _check_loop(loop: object) -> None:
    if not isinstance(loop, AgentLoop):
        missing = [method for method in REQUIRED if not hasattr(loop, method)]
        raise TypeError(
            f"{type(loop).__name__} is not an agent loop: it has no {' or '.join(missing)}(); "
            "see windtunnel_inject.AgentLoop"
        )


def _health(loop: AgentLoop) -> Endpoint:
    async def health(request: Request) -> JSONResponse:
        if request.query_params.get("tools") not in ("1", "true"):
            return JSONResponse({"status": "ok"})
        if not isinstance(loop, ListsTools):
            return JSONResponse(
                {
                    "status": "error",
                    "error": "this runtime cannot list its tools (its loop has no list_tools)",
                },
                status_code=404,
            )
        # Deep check: the tools are actually listable now.
        try:
            offered = await loop.list_tools()
        except Exception as exc:  # noqa: BLE001 - any failure to reach the tools is the answer here
            reason = str(exc) if isinstance(exc, TurnFailed) else describe(exc)
            return JSONResponse({"status": "error", "error": reason}, status_code=503)
        return JSONResponse({"status": "ok", "tools": dict(offered)})

    return health


def _state(loop: SnapshotsState) -> Endpoint:
    async def state(_request: Request) -> JSONResponse:
        return JSONResponse(await loop.snapshot())

    return state


async def _run_turn(loop: AgentLoop, name: str, session_id: str, text: str, timeout_s: float) -> JSONResponse:
    try:
        with anyio.fail_after(timeout_s):
            turn = await loop.turn(session_id, text)
    except TimeoutError:
        return error(504, f"the turn for session {session_id!r} exceeded timeout_s={timeout_s}")
    except TurnFailed as exc:
        return error(502, str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug of the runtime still answers in the envelope, named
        return error(500, f"the {name} runtime failed: {type(exc).__name__}: {exc}")
    return JSONResponse(turn.envelope())


def inject_request(body: bytes) -> tuple[str, str, float]:
    """(session_id, the user's text, timeout_s) of a POST /wt/inject body; BadRequest naming the field."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadRequest(f"the body must be an object, got {type(data).__name__}")
    unknown = sorted(set(data) - INJECT_FIELDS)
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}; Contract C v1 sends only {sorted(INJECT_FIELDS)}")
    session_id = data.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        raise BadRequest(f"session_id must be a non-empty string, got {session_id!r}")
    message = data.get("message")
    if (
        not isinstance(message, dict)
        or message.get("role") != "user"
        or not isinstance(message.get("content"), str)
    ):
        raise BadRequest(f'message must be {{"role": "user", "content": str}}, got {message!r}')
    timeout_s = data.get("timeout_s")
    if (
        isinstance(timeout_s, bool)
        or not isinstance(timeout_s, int | float)
        or not math.isfinite(timeout_s)
        or timeout_s <= 0
    ):
        raise BadRequest(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
    return session_id, message["content"], float(timeout_s)


def error(status: int, message: str) -> JSONResponse:
    """A non-200 answer in Contract C's error shape: {"error": message}."""
    return JSONResponse({"error": message}, status_code=status)
