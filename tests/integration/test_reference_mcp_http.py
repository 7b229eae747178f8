"""The reference runtime's MCP client with its HTTP through aiohttp (runtimes/reference/reference_agent/mcp_http.py).

The support_desk mocks the other reference-runtime tests use answer stateless JSON; a third-party MCP server
may instead keep a session, answer in SSE streams, send notifications before the result, or gzip its
answers. Each is served here by a real mcp SDK server (MCPServer) under uvicorn on 127.0.0.1, and reached
with the runtime's own ToolBox (the official mcp Client over the aiohttp transport). No Docker.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPDeprecationWarning
from starlette.applications import Starlette
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from windtunnel_inject import McpServer

from tests.integration.reference_standins import runtime_module
from windtunnel._net.server_thread import ServerThread

LONG_TEXT = "every word of this answer must arrive " * 200  # well past GZipMiddleware's 500-byte floor


def _server() -> MCPServer:
    server = MCPServer("third-party")

    @server.tool()
    def add(a: int, b: int) -> dict[str, Any]:
        """Add two numbers."""
        return {"sum": a + b}

    @server.tool()
    async def chatty(steps: int, ctx: Context) -> dict[str, Any]:
        """Report progress and log before answering: notifications on the call's SSE stream."""
        for step in range(steps):
            with (
                warnings.catch_warnings()
            ):  # logging is deprecated in 2026-07-28, still sent to older clients
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await ctx.info(f"step {step}")
            await ctx.report_progress(step + 1, steps)
        return {"steps": steps}

    @server.tool()
    def essay() -> str:
        """A long plain-text answer."""
        return LONG_TEXT

    return server


@pytest.fixture(params=["sse-session", "json-stateless"])
def third_party(request: pytest.FixtureRequest) -> Iterator[str]:
    """A real MCP server, gzip-compressing its answers: SSE with a session, or stateless JSON."""
    sse = request.param == "sse-session"
    app = _server().streamable_http_app(
        json_response=not sse,
        stateless_http=not sse,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.add_middleware(GZipMiddleware, minimum_size=500)
    with ServerThread(app) as served:
        yield f"{served.url.rstrip('/')}/mcp"


def _toolbox(url: str) -> Any:
    return runtime_module("tools"), McpServer("third-party", url)


async def _with_toolbox(url: str, work: Any) -> Any:
    import anyio

    tools, ref = _toolbox(url)
    async with anyio.create_task_group() as group:
        box = tools.ToolBox([ref], group.start_soon)
        try:
            return await work(box)
        finally:
            await box.close()


def test_list_and_call_against_a_third_party_server(third_party: str) -> None:
    async def work(box: Any) -> tuple[set[str], Any, Any, Any]:
        offered = await box.list_tools()
        added = await box.call(offered["add"], {"a": 2, "b": 40})
        chatty = await box.call(offered["chatty"], {"steps": 3})
        essay = await box.call(offered["essay"], {})
        return set(offered), added, chatty, essay

    names, added, chatty, essay = asyncio.run(_with_toolbox(third_party, work))
    assert names == {"add", "chatty", "essay"}
    assert added == ('{"sum": 42}', False)  # (the text fed back to the model, whether the call failed)
    assert chatty == ('{"steps": 3}', False)  # the result arrives after the notifications on the same stream
    assert (
        LONG_TEXT in essay[0] and essay[1] is False
    )  # gzip-decoded once, by httpx2, exactly as without aiohttp


def test_many_calls_reuse_one_connection(third_party: str) -> None:
    async def work(box: Any) -> list[tuple[str, bool]]:
        offered = await box.list_tools()
        return [await box.call(offered["add"], {"a": n, "b": 1}) for n in range(30)]

    answers = asyncio.run(_with_toolbox(third_party, work))
    assert answers == [(f'{{"sum": {n + 1}}}', False) for n in range(30)]


def test_an_unreachable_server_is_a_tool_server_error_naming_it() -> None:
    tools, _ = _toolbox("http://127.0.0.1:9/mcp")

    async def work(box: Any) -> str:
        with pytest.raises(tools.ToolServerError) as raised:
            await box.list_tools()
        return str(raised.value)

    message = asyncio.run(_with_toolbox("http://127.0.0.1:9/mcp", work))
    assert "cannot connect to MCP server 'third-party' at http://127.0.0.1:9/mcp: ConnectError" in message


def _slow_app() -> Starlette:
    async def slow(_request: Request) -> Response:
        await asyncio.sleep(2.0)
        return Response(b"{}", media_type="application/json")

    return Starlette(routes=[Route("/", slow, methods=["GET", "POST"])])


def test_the_transport_maps_aiohttp_failures_to_httpx2_errors() -> None:
    mcp_http = runtime_module("mcp_http")

    async def read_timeout(url: str) -> None:
        import aiohttp

        async with aiohttp.ClientSession() as session, mcp_http.mcp_http_client(session) as client:
            await client.post(url, json={}, timeout=httpx2.Timeout(5.0, read=0.2))

    async def refused() -> None:
        import aiohttp

        async with aiohttp.ClientSession() as session, mcp_http.mcp_http_client(session) as client:
            await client.get("http://127.0.0.1:9/")

    with ServerThread(_slow_app()) as served:
        started = time.monotonic()
        with pytest.raises(httpx2.ReadTimeout):
            asyncio.run(read_timeout(served.url))
        assert time.monotonic() - started < 1.5  # the read timeout applied, not the server's 2 s
    with pytest.raises(httpx2.ConnectError):
        asyncio.run(refused())
