"""The agent's tools: MCP servers reached with the official `mcp` client over streamable HTTP (its HTTP
exchanges through aiohttp, see reference_agent.mcp_http).

Each server gets one long-lived client, opened on first use by an owner task (anyio scopes must be entered
and left in one task, while requests run in many) and reopened after its transport fails. The SDK is
imported by reference_agent.preload, not on the start-up path: nothing here touches it before a client opens.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from windtunnel_inject import McpServer, TurnFailed, describe

from reference_agent import preload
from reference_agent.settings import Fault

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client

T = TypeVar("T")
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]
MAX_PAGES = 100
# How long a failed request waits for the owner task to report a lost transport before judging the
# failure a plain protocol error on a live connection (no retry then: a tools/call is not idempotent).
DEATH_GRACE_S = 0.5
HEARD_LINES = 64
_LOG = logging.getLogger("reference_agent.mcp")


class ToolServerError(TurnFailed):
    """An MCP server could not be reached or listed; the turn fails (502) with this message."""


@dataclass(frozen=True, slots=True)
class OfferedTool:
    server: str
    name: str
    description: str | None
    input_schema: Mapping[str, Any]

    def openai(self) -> dict[str, Any]:
        """The tool in OpenAI function format, its schema passed through as the server declared it."""
        function: dict[str, Any] = {"name": self.name, "parameters": dict(self.input_schema)}
        if self.description:
            function["description"] = self.description
        return {"type": "function", "function": function}


@dataclass(eq=False)
class _Link:
    """One opening of a server's client: ready once connected (or failed), dead once its owner left."""

    client: Client | None = None
    error: BaseException | None = None
    ready: anyio.Event = field(default_factory=anyio.Event)
    dead: anyio.Event = field(default_factory=anyio.Event)
    closing: anyio.Event = field(default_factory=anyio.Event)


class McpConnection:
    def __init__(self, ref: McpServer, spawn: Spawn, fault: Fault | None = None) -> None:
        self.ref = ref
        self._spawn = spawn
        self._link: _Link | None = None
        self._lock = anyio.Lock()
        self._fault = fault  # a poison's WT_FAULT: how its HTTP or its callbacks mishandle what they meet
        # What the server said during calls (log messages, progress), for the runtime's own log: heard,
        # never handed to the model, never the end of a call (README, MCP client).
        self.heard: list[str] = []

    async def logged(self, params: types.LoggingMessageNotificationParams) -> None:
        self._hear(f"log {params.level} {params.logger or '-'}: {params.data}")

    async def progressed(self, progress: float, total: float | None, message: str | None) -> None:
        self._hear(f"progress {progress:g}/{total if total is not None else '?'}: {message or ''}")

    def _hear(self, line: str) -> None:
        self.heard = [*self.heard[-(HEARD_LINES - 1) :], line]
        _LOG.info("MCP server %s: %s", self.ref.name, line)

    async def _open(self) -> _Link:
        await preload.loaded()
        async with self._lock:
            if self._link is None or self._link.dead.is_set():
                link = _Link()
                self._link = link
                self._spawn(lambda: self._own(link))
            link = self._link
        await link.ready.wait()
        if link.client is None:
            reason = describe(link.error) if link.error is not None else "unknown error"
            raise ToolServerError(
                f"cannot connect to MCP server {self.ref.name!r} at {self.ref.url}: {reason}"
            )
        return link

    async def _own(self, link: _Link) -> None:
        # Loaded by now (_open awaited reference_agent.preload).
        import aiohttp
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        from reference_agent.mcp_http import mcp_http_client

        try:
            # cache=None: every tools/list goes to the server, so a restarted mock is seen as it is now.
            async with (
                aiohttp.ClientSession() as http,
                mcp_http_client(http, self._fault) as http_client,
                Client(
                    streamable_http_client(self.ref.url, http_client=http_client),
                    cache=None,
                    logging_callback=self.logged,
                    log_level="debug",  # every log message of a call: heard, never handed to the model
                    **_asking_callbacks(self._fault),
                ) as client,
            ):
                link.client = client
                link.ready.set()
                await link.closing.wait()
        except Exception as exc:  # noqa: BLE001 - any transport failure: record why, a later call reconnects
            link.error = exc
        finally:
            link.dead.set()
            link.ready.set()

    async def run(self, operation: Callable[[Client], Awaitable[T]]) -> T:
        """Run `operation` on the open client; reconnect and retry once if the transport was lost."""
        link = await self._open()
        assert link.client is not None
        try:
            return await operation(link.client)
        except Exception:
            with anyio.move_on_after(DEATH_GRACE_S):
                await link.dead.wait()
            if not link.dead.is_set():
                raise  # the connection is fine; the server answered with an error
        link = await self._open()
        assert link.client is not None
        try:
            return await operation(link.client)
        except Exception as exc:
            raise ToolServerError(
                f"MCP server {self.ref.name!r} at {self.ref.url} failed twice: {describe(exc)}"
            ) from exc

    async def close(self) -> None:
        if self._link is not None:
            self._link.closing.set()


class ToolBox:
    """Every configured MCP server's tools under one namespace; calls go to the server that owns the tool."""

    def __init__(self, refs: Sequence[McpServer], spawn: Spawn, fault: Fault | None = None) -> None:
        self._connections = {ref.name: McpConnection(ref, spawn, fault) for ref in refs}
        self._listed: dict[str, OfferedTool] | None = None
        self._fault = fault  # a poison's WT_FAULT: how result_text() (or the HTTP) mishandles what it meets

    def forget(self) -> None:
        """Drop the remembered tool list (on /wt/reset): the next turn lists the servers' tools again."""
        self._listed = None

    async def list_tools(self, *, fresh: bool = False) -> dict[str, OfferedTool]:
        """All tools by name, listed once per run and remembered until the next reset (`fresh` re-lists).

        A name offered by two servers refuses the turn (see README: name clashes).
        """
        if self._listed is not None and not fresh:
            return self._listed
        offered: dict[str, OfferedTool] = {}
        for server, connection in self._connections.items():
            for tool in await _list_all(connection):
                if tool.name in offered:
                    raise ToolServerError(
                        f"tool name clash: {tool.name!r} is offered by MCP servers {offered[tool.name].server!r} "
                        f"and {server!r}; the reference runtime cannot tell which one the model means - "
                        "rename one of the tools"
                    )
                offered[tool.name] = OfferedTool(server, tool.name, tool.description, tool.input_schema)
        self._listed = offered
        return offered

    async def call(self, tool: OfferedTool, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The text fed back to the model (JSON of the structured result, or the tool's error text), and
        whether the call failed."""
        connection = self._connections[tool.server]
        await preload.loaded()
        from mcp.shared.exceptions import MCPError  # off the start-up path (preload)

        connection.heard = []
        try:
            result = await connection.run(
                lambda client: client.call_tool(tool.name, arguments, progress_callback=connection.progressed)
            )
        except MCPError as exc:
            # A protocol-level refusal on a live connection: the model sees it, as it would a tool error.
            return f"error: MCP server {tool.server!r} refused {tool.name}: {exc.error.message}", True
        if self._fault is Fault.TRUST_SERVER_MESSAGES and connection.heard:
            return connection.heard[-1], False  # fault: what the server said last taken for the call's result
        return result_text(result, self._fault), bool(result.is_error)

    async def close(self) -> None:
        for connection in self._connections.values():
            await connection.close()


async def _list_all(connection: McpConnection) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await _list_page(connection, cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise ToolServerError(
        f"MCP server {connection.ref.name!r} kept paginating tools/list past {MAX_PAGES} pages"
    )


async def _list_page(connection: McpConnection, cursor: str | None) -> types.ListToolsResult:
    await preload.loaded()
    from mcp.shared.exceptions import MCPError  # off the start-up path (preload)

    try:
        return await connection.run(lambda client: client.list_tools(cursor=cursor))
    except MCPError as exc:
        raise ToolServerError(
            f"MCP server {connection.ref.name!r} at {connection.ref.url} refused tools/list: {exc.error.message}"
        ) from exc


def _asking_callbacks(fault: Fault | None) -> dict[str, Any]:
    """No elicitation or sampling callback: the SDK refuses both requests with a JSON-RPC error, as the
    reference declares (runtime.toml [mcp]: it has no user to ask and samples for no server). The
    WT_FAULT branch is a poison of the mcp_client elicitation and sampling checks."""
    if fault is not Fault.TRUST_SERVER_MESSAGES:
        return {}
    import mcp_types as types  # loaded with the SDK (preload)

    async def approve(_context: Any, _params: Any) -> Any:
        return types.ElicitResult(action="accept", content={})  # fault: "yes", on the user's behalf

    async def make_up(_context: Any, _params: Any) -> Any:
        text = types.TextContent(type="text", text="ok")  # fault: a reply no model wrote
        return types.CreateMessageResult(role="assistant", content=text, model="none")

    return {"elicitation_callback": approve, "sampling_callback": make_up}


def result_text(result: types.CallToolResult, fault: Fault | None = None) -> str:
    """The text the model is sent for a result: the structured result as JSON when there is one, else each
    content block as text (block_text), joined by newlines; an error's blocks always."""
    texts = [text for block in result.content if (text := block_text(block, fault)) is not None]
    if result.is_error:
        return "\n".join(texts) or "error: the tool failed without a message"
    if result.structured_content is not None:
        return json.dumps(result.structured_content)
    return "\n".join(texts)


def block_text(block: Any, fault: Fault | None = None) -> str | None:
    """One content block for the chat wire, whose tool messages hold text only (runtime.toml [mcp]):
    text as is; an image or audio as a note naming its type and size (image = "note"), never its base64;
    an embedded resource as its URI and type, then its text. The WT_FAULT branches are the mcp_client
    checks' poisons; None drops the block."""
    import mcp_types as types  # the block came from the SDK, so it is loaded

    if isinstance(block, types.TextContent):
        return block.text
    if fault is Fault.DROP_NON_TEXT_CONTENT:
        return None  # fault: the model never hears of an image or a resource
    if fault is Fault.CONTENT_AS_JSON:
        return _block_json(block)  # fault: an image's base64 as text, a resource's text JSON-escaped
    if isinstance(block, types.ImageContent | types.AudioContent):
        size = len(base64.b64decode(block.data))
        return f"[{block.type} {block.mime_type}, {size} bytes: the chat wire's tool results hold no {block.type}]"
    if isinstance(block, types.EmbeddedResource):
        return _resource_text(block.resource)
    return _block_json(block)


def _resource_text(contents: Any) -> str:
    """An embedded resource: its URI and type, then its text (a blob: its size)."""
    head = f"[resource {contents.uri} ({contents.mime_type or 'no type'})]"
    if isinstance(getattr(contents, "text", None), str):
        return f"{head}\n{contents.text}"
    return f"{head[:-1]}, {len(base64.b64decode(contents.blob))} bytes]"


def _block_json(block: Any) -> str:
    return json.dumps(block.model_dump(mode="json", by_alias=True, exclude_none=True))
