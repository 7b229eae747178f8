"""Stand-ins for the reference runtime's tests: an OpenAI-compatible chat-completions server and an MCP server.

Both are real servers (Starlette, and the mcp SDK's MCPServer over streamable HTTP) that the tests start on
127.0.0.1. They stand in for the model gateway and the pack mocks, which the lead's container integration
tests use instead.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from windtunnel._net.server_thread import ServerThread

RUNTIME_DIR = Path(__file__).resolve().parents[2] / "runtimes" / "reference"
REFUND_ARGS = '{"reason": "arrived broken", "order_id": "A-1042", "amount": 12.50}'

# --- the OpenAI-compatible stand-in ---------------------------------------------------------------------


def call(name: str, arguments: str) -> tuple[str, str]:
    return (name, arguments)


@dataclass
class StandInModel:
    """Answers chat completions from a script (per session, else shared), refusing once it runs out."""

    replies: dict[str | None, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: int = 0

    def script(self, *replies: dict[str, Any], session: str | None = None) -> None:
        self.replies.setdefault(session, []).extend(replies)

    def bodies(self, session: str | None = None) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if session is None or r["session"] == session]

    async def complete(self, request: Request) -> Response:
        body = await request.json()
        session = request.headers.get("x-wt-session")
        self.requests.append({"session": session, "body": body})
        queue = self.replies.get(session) or self.replies.get(None) or []
        if not queue:
            error = {
                "message": f"script exhausted: no decision left for session {session}",
                "code": "script_exhausted",
            }
            return JSONResponse({"error": error}, status_code=409)
        reply = queue.pop(0)
        await asyncio.sleep(reply.get("delay", 0))
        self.served += 1
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = [
                {"id": f"call_{self.served}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate(reply["tool_calls"])
            ]
        usage = {
            "prompt_tokens": 100 * self.served,
            "completion_tokens": 10,
            "total_tokens": 100 * self.served + 10,
        }
        if body.get("stream"):
            chunks = _chunks(message, usage if body.get("stream_options", {}).get("include_usage") else None)
            return StreamingResponse(_sse(chunks), media_type="text/event-stream")
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop",
        }
        return JSONResponse({"id": "cmpl", "object": "chat.completion", "choices": [choice], "usage": usage})

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])])


def _chunks(message: dict[str, Any], usage: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The message as OpenAI streams it: content in pieces, each call's id+name then its arguments in thirds."""
    deltas: list[dict[str, Any]] = [{"role": "assistant"}]
    text = message["content"] or ""
    deltas += [{"content": text[: len(text) // 2]}, {"content": text[len(text) // 2 :]}] if text else []
    for index, tc in enumerate(message.get("tool_calls", [])):
        head = {
            "index": index,
            "id": tc["id"],
            "type": "function",
            "function": {"name": tc["function"]["name"], "arguments": ""},
        }
        deltas.append({"tool_calls": [head]})
        args, third = tc["function"]["arguments"], len(tc["function"]["arguments"]) // 3 + 1
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": args[i : i + third]}}]}
            for i in range(0, len(args), third)
        ]
    chunks: list[dict[str, Any]] = [
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
        for d in deltas
    ]
    chunks.append(
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    )
    if usage is not None:
        chunks.append({"object": "chat.completion.chunk", "choices": [], "usage": usage})
    return chunks


async def _sse(chunks: list[dict[str, Any]]) -> AsyncIterator[str]:
    for chunk in chunks:
        yield f"data: {json.dumps(chunk)}\n\n"
    yield "data: [DONE]\n\n"


# --- the MCP stand-in -------------------------------------------------------------------------------------


def shop_server(calls: list[tuple[str, dict[str, Any]]], name: str = "shop") -> MCPServer:
    """Two tools over fixture orders; every call lands in `calls` as the evidence a mock would keep."""
    server = MCPServer(name)
    orders = {"A-1042": {"order_id": "A-1042", "item": "mug", "amount": 12.5}}

    @server.tool()
    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look up an order by id."""
        calls.append(("lookup_order", {"order_id": order_id}))
        if order_id not in orders:
            raise ToolError(f"no order {order_id}")
        return orders[order_id]

    @server.tool()
    def issue_refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
        """Refund part of an order."""
        calls.append(("issue_refund", {"order_id": order_id, "amount": amount, "reason": reason}))
        return {"refunded": amount, "order_id": order_id}

    return server


def runtime_module(name: str) -> ModuleType:
    """Import reference_agent.<name> from runtimes/reference: it is a service, not part of windtunnel."""
    if str(RUNTIME_DIR) not in sys.path:
        sys.path.insert(0, str(RUNTIME_DIR))
    return importlib.import_module(f"reference_agent.{name}")


# --- the stack: stand-ins plus runtimes served in-process --------------------------------------------------


@dataclass
class Stack:
    model: StandInModel
    mcp_calls: list[tuple[str, dict[str, Any]]]
    mcp: ServerThread
    start: Callable[..., httpx.Client]


@contextmanager
def running_stack() -> Iterator[Stack]:
    """A stand-in model and MCP server; `start(**env)` serves a reference runtime wired to them."""
    model, calls = StandInModel(), list[tuple[str, dict[str, Any]]]()
    started: list[ServerThread] = []

    def serve(app: Any) -> ServerThread:
        started.append(ServerThread(app).start())
        return started[-1]

    model_server, mcp = serve(model.app()), serve(shop_server(calls).streamable_http_app())
    clients: list[httpx.Client] = []

    def start(servers: list[dict[str, str]] | None = None, **env: str) -> httpx.Client:
        base = {
            "WT_MODEL_BASE_URL": f"{model_server.url}/v1",
            "WT_MODEL_NAME": "stand-in",
            "WT_MCP_SERVERS": json.dumps(servers or [{"name": "shop", "url": f"{mcp.url}/mcp"}]),
            "WT_SYSTEM_PROMPT": "You are the test agent.",
        }
        settings = runtime_module("settings").Settings.from_env({**base, **env})
        runtime = serve(runtime_module("app").create_app(settings))
        clients.append(httpx.Client(base_url=runtime.url, timeout=30))
        return clients[-1]

    try:
        yield Stack(model, calls, mcp, start)
    finally:
        for client in clients:
            client.close()
        for server in reversed(started):
            server.stop()


def inject(client: httpx.Client, session: str, text: str, timeout_s: float = 20.0) -> httpx.Response:
    return client.post(
        "/wt/inject",
        json={"session_id": session, "message": {"role": "user", "content": text}, "timeout_s": timeout_s},
    )


def refund_script(model: StandInModel, session: str | None = None) -> None:
    model.script(
        {"tool_calls": [call("lookup_order", '{"order_id": "A-1042"}')]},
        {"tool_calls": [call("issue_refund", REFUND_ARGS)]},
        {"content": "Refunded 12.50 for the broken mug."},
        session=session,
    )


def prompt_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])
