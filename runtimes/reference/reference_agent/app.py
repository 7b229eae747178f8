"""The Contract C v1 service: POST /wt/inject, POST /wt/reset, GET /wt/health (and GET /wt/state)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import anyio
import anyio.abc
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from reference_agent.agent import Agent, TurnFailed
from reference_agent.memory import Memory
from reference_agent.model import ModelClient, ModelError
from reference_agent.settings import Settings
from reference_agent.tools import ToolBox, ToolServerError

INJECT_FIELDS = frozenset({"session_id", "message", "timeout_s"})
# The turn deadline is the caller's timeout_s; this only bounds a single hung model connection.
MODEL_HTTP_TIMEOUT_S = 600.0


class BadRequest(Exception):
    """The inject request breaks Contract C v1; answered 400 naming the field."""


def create_app(settings: Settings) -> Starlette:
    """The service for `settings`; run it with lifespan on (it owns the HTTP and MCP clients)."""
    spawner = _Spawner()
    memory = Memory(settings.system_prompt, settings.fault)
    tools = ToolBox(settings.mcp_servers, spawner.spawn)
    # `agent` is completed in the lifespan, where the model's HTTP client lives.
    holder: dict[str, Agent] = {}

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=MODEL_HTTP_TIMEOUT_S)) as http,
            anyio.create_task_group() as group,
        ):
            spawner.group = group
            holder["agent"] = Agent(settings, ModelClient(settings, http), tools, memory)
            yield
            await tools.close()
            group.cancel_scope.cancel()

    async def inject(request: Request) -> JSONResponse:
        try:
            session_id, text, timeout_s = _inject_request(await request.body())
        except BadRequest as exc:
            return _error(400, str(exc))
        return await _run_turn(holder["agent"], session_id, text, timeout_s)

    async def reset(_request: Request) -> JSONResponse:
        memory.reset()
        tools.forget()
        return JSONResponse({"reset": True})

    async def health(request: Request) -> JSONResponse:
        if request.query_params.get("tools") not in ("1", "true"):
            return JSONResponse({"status": "ok"})
        # Deep check: the tools are actually listable (seed 002: gate on tools being callable).
        try:
            offered = await tools.list_tools(fresh=True)
        except ToolServerError as exc:
            return JSONResponse({"status": "error", "error": str(exc)}, status_code=503)
        return JSONResponse({"status": "ok", "tools": {name: tool.server for name, tool in offered.items()}})

    async def state(_request: Request) -> JSONResponse:
        return JSONResponse(memory.snapshot())

    routes = [
        Route("/wt/inject", inject, methods=["POST"]),
        Route("/wt/reset", reset, methods=["POST"]),
        Route("/wt/health", health, methods=["GET"]),
        Route("/wt/state", state, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def create_app_from_env() -> Starlette:
    """The service as configured by the WT_* environment (uvicorn --factory entry point)."""
    return create_app(Settings.from_env(os.environ))


class _Spawner:
    """Starts background tasks in the app's task group, which exists only while the lifespan runs."""

    group: anyio.abc.TaskGroup | None = None

    def spawn(self, task: Callable[[], Coroutine[Any, Any, None]]) -> None:
        if self.group is None:
            raise RuntimeError(
                "the reference runtime was served without its lifespan; run uvicorn with lifespan on"
            )
        self.group.start_soon(task)


async def _run_turn(agent: Agent, session_id: str, text: str, timeout_s: float) -> JSONResponse:
    try:
        with anyio.fail_after(timeout_s):
            result = await agent.inject(session_id, text)
    except TimeoutError:
        return _error(504, f"the turn for session {session_id!r} exceeded timeout_s={timeout_s}")
    except (ModelError, ToolServerError, TurnFailed) as exc:
        return _error(502, str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug of ours still answers in the envelope, named
        return _error(500, f"the reference runtime failed: {type(exc).__name__}: {exc}")
    return JSONResponse(result.envelope())


def _inject_request(body: bytes) -> tuple[str, str, float]:
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


def _error(status: int, message: str) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    return JSONResponse(body, status_code=status)
