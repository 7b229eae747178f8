"""Scripted faults of an MCP mock (windtunnel._core.faults): queued by PUT /wt/faults, served to the next
call of their tool, recorded in /wt/calls with `fault` set (a crash: in /wt/requests).

error_result and jsonrpc_error answer in place of the tool; late runs the tool after its delay; crash
drops the connection after the first bytes of the answer, before the tool runs (the `Crash` middleware,
since the SDK's handlers cannot reach the connection), recorded in /wt/requests with its error: the tool
did not run, so it is no served call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from windtunnel._core.faults import tool_faults_from_json
from windtunnel._core.mock_kit import MockHost, MockServer
from windtunnel.errors import UsageError

MCP_INTERNAL_ERROR = -32603


async def serve_fault(mock: MockServer, name: str, arguments: Any) -> types.CallToolResult | None:
    """The answer to a tools/call that a scripted fault of `name` takes over; None to run the tool (after
    a late fault's delay)."""
    fault = mock.take_fault(name)
    if fault is None:
        return None
    message = f"scripted fault: {fault.kind} of tool {name!r}"
    if fault.kind == "late":
        await anyio.sleep(fault.seconds)
        return None
    mock.record_fault(name, arguments, fault, message)
    if fault.kind == "jsonrpc_error":
        raise MCPError(code=MCP_INTERNAL_ERROR, message=message)
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def fault_routes(host: MockHost, name: str) -> dict[str, Any]:
    """The handlers of PUT /wt/faults (queue faults) and GET /wt/faults (what is still queued)."""

    async def put(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"null")
            faults = tool_faults_from_json(body)
        except (ValueError, UsageError) as exc:
            return Response(json.dumps({"error": str(exc)}), status_code=400, media_type="application/json")
        unknown = sorted({fault.tool for fault in faults} - set(host.server.tools))
        if unknown:
            error = f"faults name tool {unknown[0]!r}, which server {host.name!r} does not have"
            return Response(json.dumps({"error": error}), status_code=400, media_type="application/json")
        host.server.script_faults(faults)
        return _listing(host, name)

    async def get(_request: Request) -> Response:
        return _listing(host, name)

    return {"PUT": put, "GET": get}


def _listing(host: MockHost, name: str) -> Response:
    body = {"server": name, "faults": host.server.pending_faults()}
    return Response(json.dumps(body), media_type="application/json")


class Crash:
    """Drops the connection of a tools/call whose tool has a queued crash fault, after a first byte."""

    def __init__(self, app: ASGIApp, *, host: MockHost, path: str) -> None:
        self.app = app
        self.host = host
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        crashing = {f["tool"] for f in self.host.server.pending_faults() if f["kind"] == "crash"}
        if not crashing or scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        body = await _read(receive)
        params = _tool_call(body)
        mock = self.host.server
        if params is not None and params[0] in crashing:
            name, arguments = params
            fault = mock.take_fault(name, kinds=("crash",))  # only when the tool's next fault is a crash
            if fault is not None:
                # The tool never ran, so this is no call a runtime made the server serve: it is kept with
                # the other requests, and a client that asks again is answered (or crashed) afresh.
                params_ = {"name": name, "arguments": arguments}
                mock.record_request("tools/call", params_, None, f"scripted fault: crash of tool {name!r}")
                start = {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
                await send(start)
                await send({"type": "http.response.body", "body": b'{"jsonrpc": "2.0", ', "more_body": True})
                return  # the response never completes: the server closes the connection
        await self.app(scope, _replay(body, receive), send)


async def _read(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _tool_call(body: bytes) -> tuple[str, Any] | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, Mapping) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    if not isinstance(params, Mapping) or not isinstance(params.get("name"), str):
        return None
    return params["name"], params.get("arguments")
