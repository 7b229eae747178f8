"""One MockHost served with the official mcp SDK over streamable HTTP at /mcp, plus plain /wt/* admin routes.

Routes of the app built by `mock_app(host)`:

    POST /mcp          MCP streamable HTTP (stateless, JSON responses): tools/list, tools/call
                       (a MockServer with sessions=True: Mcp-Session-Id, SSE, GET/DELETE /mcp too)
    GET  /wt/calls     {"server": name, "calls": [...]}  every tools/call since the last reset, in order
    GET  /wt/requests  {"server": name, "requests": [...]}  every other request it served (resources, ...)
    GET  /wt/state     {"server": name, "state": {...}}  the fixture state as it is now
    POST /wt/reset     {"server": name, "reset": true}   fresh state from the factory, empty call log
    PUT  /wt/faults    {"faults": [{"tool", "kind", "seconds"}]}  queue scripted faults (windtunnel._mcp.faults)
    GET  /wt/faults    {"faults": [...]}  the faults still queued (a reset clears them)
    GET  /wt/health    {"status": "ok", "server": name, "tools": [...]}

`name` is the server's name in its pack (the key of `Pack.mcp_servers`), so a client can check that it
reached the mock it meant to. Every route first passes the Host/Origin guard (windtunnel._mcp.hosts).

The mock advertises `tools`, and the capabilities of what its pack declared beyond tools (resources,
prompts, completions, logging: windtunnel._mcp.surface); the SDK answers initialize (with version
negotiation), ping and notifications, and JSON-RPC -32601 for every method the mock does not serve.

Every tools/call reaches `MockServer.call()` with its arguments as received, so unknown tools, arguments
that break the tool's schema and even arguments that are not an object are recorded as evidence, with the
session its X-WT-Session header names when one was sent (the session the mock served the call for). The
agent gets what the MCP spec prescribes: an isError result for a call the tool refused (schema violation,
tool error, denial), JSON-RPC error -32602 (Invalid params) for a request that names no tool of this
server or whose arguments are not an object.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from windtunnel._core.mock_kit import CallOutcome, MockHost, MockServer
from windtunnel._core.mock_steps import Reply
from windtunnel._core.mock_surface import ToolResult
from windtunnel._limits import DEFAULT_MAX_BODY_BYTES
from windtunnel._mcp.events import MemoryEventStore
from windtunnel._mcp.faults import Crash, fault_routes, serve_fault
from windtunnel._mcp.hosts import AllowedHosts, HostGuard
from windtunnel._mcp.steps import LogLevels, input_required, per_request, run_steps, wt_session
from windtunnel._mcp.surface import register
from windtunnel._net.body_limit import BodyLimit

MCP_PATH = "/mcp"
ADMIN_PREFIX = "/wt"
RETRY_MS = 500
"""The reconnection delay a session mock's SSE priming events suggest (the SSE `retry` field)."""


def mock_app(
    host: MockHost,
    *,
    name: str | None = None,
    allowed_hosts: Iterable[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> Starlette:
    """The ASGI app serving `host` as `name` (default: the MockServer's own name). Run it with lifespan on.

    `allowed_hosts` are the names, besides the loopback names and the address a connection reaches, that
    clients may send as Host or Origin (windtunnel._mcp.hosts); a UsageError names a malformed one. A request
    body over `max_body_bytes` is refused with 413 before it is read (windtunnel._limits).
    """
    name = name or host.name
    allowed = AllowedHosts.of(allowed_hosts)
    sessions = host.server.sessions
    server = _mcp_server(host, name)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        # Stateless: every request stands alone, so a client survives a mock restart or reset and no
        # session can hold state across cases. JSON responses keep each round trip to one body.
        # A pack opts in to sessions (MockServer(sessions=True)) for what needs them: requests to the
        # client, notifications during a call, resumable SSE streams (events kept in memory).
        stateless_http=not sessions,
        json_response=not sessions,
        event_store=MemoryEventStore() if sessions else None,
        retry_interval=RETRY_MS if sessions else None,
        # The SDK's own check guards /mcp only, with a fixed list of names; HostGuard guards every route
        # (the admin routes reset and read state) and also accepts the address a connection reached.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        custom_starlette_routes=_admin_routes(host, name),
    )
    app.add_middleware(Crash, host=host, path=MCP_PATH)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(HostGuard, allowed=allowed)
    return app


def _mcp_server(host: MockHost, name: str) -> Server[Any]:
    levels = LogLevels()

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_tool_listing(host))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments if params.arguments is not None else {}
        mock = host.server  # one server for the whole call, even if a reset swaps it meanwhile
        replies: list[Reply] = []
        exchanges: list[dict[str, Any]] = []
        if (faulted := await serve_fault(mock, params.name, arguments)) is not None:
            return faulted
        tool = mock.runs_steps(params.name, arguments)
        responses = params.input_responses
        if tool is not None and tool.asks and per_request(ctx) and responses is None:
            first = input_required(tool, arguments)  # a round of the call, not the call: see steps.py
            answer = first.model_dump(by_alias=True, mode="json", exclude_none=True)
            mock.record_request("tools/call", {"name": params.name, "arguments": arguments}, answer)
            return first
        if tool is not None and tool.steps:  # only a call the tool will run sends its steps
            replies, exchanges = await run_steps(ctx, tool, arguments, levels, responses)
        session = wt_session(ctx)
        if mock.is_blocking(params.name):  # a waiting tool must not hold up the mock's event loop
            return await anyio.to_thread.run_sync(
                _run, mock, params.name, arguments, replies, exchanges, session
            )
        return _run(mock, params.name, arguments, replies, exchanges, session)

    server: Server[Any] = Server(
        f"windtunnel-mock-{name}",
        version="1",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        # No schema means no Mcp-Param-* header check: that check would answer before our handler and
        # the call would never be recorded.
        get_tool_input_schema=lambda _name: None,
    )
    server.middleware.insert(0, _NonObjectArguments(host))
    register(server, host, levels)
    return server


def _tool_listing(host: MockHost) -> list[types.Tool]:
    """Every tool exactly as the pack declared it: name, description, input JSON schema."""
    return [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=dict(tool.input_schema),
            output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        )
        for tool in host.server.tools.values()
    ]


def _run(
    mock: MockServer,
    name: str,
    arguments: Any,
    replies: list[Reply] | None = None,
    exchanges: list[dict[str, Any]] | None = None,
    session: str | None = None,
) -> types.CallToolResult:
    # Handlers are small functions over in-memory state; running them on the event loop avoids a
    # thread hop per call, which is most of a mock's latency budget.
    outcome = mock.call(name, arguments, replies=replies or (), exchanges=exchanges or (), session=session)
    return _as_result(outcome)


def _as_result(outcome: CallOutcome) -> types.CallToolResult:
    """The tool result for a recorded call; MCPError (-32602) when the request itself was invalid."""
    if outcome.invalid_params:
        raise MCPError(code=types.INVALID_PARAMS, message=outcome.error or "invalid tools/call parameters")
    if outcome.is_error:
        message = outcome.error or "the tool failed"
        return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
    if isinstance(outcome.result, ToolResult):  # content blocks as the pack declared them
        return types.CallToolResult.model_validate(outcome.result.wire())
    try:
        text = json.dumps(outcome.result, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        message = f"the tool returned a value that is not JSON ({exc}); pack handlers must return JSON data"
        return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
    # structuredContent must be an object; other JSON values are wrapped so the agent still gets them.
    structured = outcome.result if isinstance(outcome.result, dict) else {"result": outcome.result}
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


class _NonObjectArguments:
    """Record a tools/call whose arguments are not an object before the SDK's spec check rejects it.

    A runtime that forwards OpenAI's JSON-string arguments untouched is a real wiring bug; recording the
    call keeps it visible in the evidence. The agent then gets the JSON-RPC error the SDK would have sent.
    """

    def __init__(self, host: MockHost) -> None:
        self._host = host

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, Mapping):
            name, arguments = params.get("name"), params.get("arguments")
            if isinstance(name, str) and arguments is not None and not isinstance(arguments, Mapping):
                return _run(self._host.server, name, arguments)
        return await call_next(ctx)


def _admin_routes(host: MockHost, name: str) -> list[Route]:
    async def calls(_request: Request) -> Response:
        return _json({"server": name, "calls": host.server.calls()})

    async def requests(_request: Request) -> Response:
        return _json({"server": name, "requests": host.server.requests()})

    async def state(_request: Request) -> Response:
        return _json({"server": name, "state": host.server.snapshot()})

    async def reset(_request: Request) -> Response:
        host.reset()
        return _json({"server": name, "reset": True})

    async def health(_request: Request) -> Response:
        return _json({"status": "ok", "server": name, "tools": sorted(host.server.tools)})

    faults = fault_routes(host, name)
    return [
        Route(f"{ADMIN_PREFIX}/faults", faults["PUT"], methods=["PUT"]),
        Route(f"{ADMIN_PREFIX}/faults", faults["GET"], methods=["GET"]),
        Route(f"{ADMIN_PREFIX}/calls", calls, methods=["GET"]),
        Route(f"{ADMIN_PREFIX}/requests", requests, methods=["GET"]),
        Route(f"{ADMIN_PREFIX}/state", state, methods=["GET"]),
        Route(f"{ADMIN_PREFIX}/reset", reset, methods=["POST"]),
        Route(f"{ADMIN_PREFIX}/health", health, methods=["GET"]),
    ]


def _json(body: Mapping[str, Any]) -> Response:
    # Evidence must stay readable even if a handler stored something JSON cannot encode.
    text = json.dumps(body, ensure_ascii=False, default=repr)
    return Response(text, media_type="application/json")
