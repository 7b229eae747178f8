"""A small client over the official mcp SDK (streamable HTTP): list tools, call one; for tests and `wt doctor`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError

from windtunnel.errors import HarnessError

DEFAULT_TIMEOUT_S = 10.0
_T = TypeVar("_T")


async def alist_tools(url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[dict[str, Any]]:
    """The server's tools in MCP wire shape: `{"name", "description", "inputSchema", ...}`."""

    async def fetch(client: Client) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools += [_wire(tool) for tool in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                return tools

    return await _session(url, f"list the tools of {url}", timeout_s, fetch)


async def acall_tool(
    url: str, name: str, arguments: Mapping[str, Any] | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> dict[str, Any]:
    """One tools/call; the result in MCP wire shape: `{"content", "structuredContent"?, "isError"}`."""

    async def call(client: Client) -> dict[str, Any]:
        result = await client.call_tool(name, dict(arguments) if arguments is not None else None)
        return _wire(result, exclude={"meta", "result_type"})

    return await _session(url, f"call tool {name!r} on {url}", timeout_s, call)


def list_tools(url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[dict[str, Any]]:
    """Blocking `alist_tools()`; do not call it from inside an event loop."""
    return anyio.run(lambda: alist_tools(url, timeout_s=timeout_s))


def call_tool(
    url: str, name: str, arguments: Mapping[str, Any] | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> dict[str, Any]:
    """Blocking `acall_tool()`; do not call it from inside an event loop."""
    return anyio.run(lambda: acall_tool(url, name, arguments, timeout_s=timeout_s))


async def _session(url: str, what: str, timeout_s: float, work: Callable[[Client], Awaitable[_T]]) -> _T:
    try:
        with anyio.fail_after(timeout_s):
            # No response cache: every call must reach the server, or the evidence would lie.
            async with Client(url, read_timeout_seconds=timeout_s, cache=None) as client:
                return await work(client)
    except TimeoutError as exc:
        raise HarnessError(
            f"could not {what}: no answer within {timeout_s:g}s",
            hint="check that the MCP server is running and reachable from here",
            url=url,
        ) from exc
    # The SDK raises errors of its own HTTP stack wrapped in exception groups; whichever it is, the
    # server did not serve the request, and the caller needs one clear message, not a task-group trace.
    except Exception as exc:
        refused = _refusal(exc)
        if refused is not None:  # the server answered, and refused: an unknown tool, arguments not an object
            raise HarnessError(
                f"could not {what}: the server answered JSON-RPC error {refused.code}: {refused.message}",
                hint="check the tool's name and arguments against the server's tools/list",
                url=url,
            ) from exc
        raise HarnessError(
            f"could not {what}: {_describe(exc)}",
            hint="check that the MCP server is running, that the URL ends in /mcp, and that it speaks "
            "streamable HTTP",
            url=url,
        ) from exc


def _refusal(exc: BaseException) -> MCPError | None:
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        return next((found for inner in exc.exceptions if (found := _refusal(inner)) is not None), None)
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


def _wire(model: Any, exclude: set[str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True, exclude=exclude)
    data.pop("_meta", None)
    return data
