"""The stack for the reference runtime's tests: Wind Tunnel's own model gateway and a pack's own MCP mocks.

The gateway is windtunnel's gateway app in script mode and the mocks are the support_desk pack's servers
(orders, billing) built with the mcp SDK, each served by uvicorn on 127.0.0.1. A test scripts the model
with ReferenceDecisions, reads what the runtime sent from the gateway's request log and what the tools
received from the mocks' evidence, exactly as the harness does. The reference runtime itself is served
in-process from runtimes/reference, so no Docker is needed.

One small OpenAI-compatible stand-in stays (`RawModel`), for the two faults the gateway cannot produce
by design: tool-call arguments that are not a JSON object, and a model that answers late.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from windtunnel_inject import create_app as inject_app

from windtunnel._core.mock_kit import MockHost
from windtunnel._gateway.app import create_app
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.log import request_body
from windtunnel._gateway.script import ScriptMode
from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel._mcp.loopback import LoopbackMCP, start_loopback, stop_loopback
from windtunnel._mcp.server import MCP_PATH, mock_app
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import load_pack
from windtunnel.api import ReferenceDecision, ReferenceToolCall

REPO = Path(__file__).resolve().parents[2]
RUNTIME_DIR = REPO / "runtimes" / "reference"
PACK_DIR = REPO / "scenarios" / "support_desk"
MODEL = "wt-scripted"
REFUND_ARGS: dict[str, Any] = {"reason": "damaged", "order_id": "A-1042", "amount": 12.5}
"""Keys deliberately not in alphabetical order: the runtime must report them in the order emitted."""


def calls(*pairs: tuple[str, Mapping[str, Any]]) -> ReferenceDecision:
    """One model response calling these tools, in this order."""
    return ReferenceDecision(tool_calls=tuple(ReferenceToolCall(name, dict(args)) for name, args in pairs))


def say(text: str) -> ReferenceDecision:
    return ReferenceDecision(content=text)


def runtime_module(name: str) -> ModuleType:
    """Import reference_agent.<name> from runtimes/reference: it is a service, not part of windtunnel."""
    if str(RUNTIME_DIR) not in sys.path:
        sys.path.insert(0, str(RUNTIME_DIR))
    return importlib.import_module(f"reference_agent.{name}")


class Stack:
    """The real gateway and the pack's real mocks; `start(**env)` serves a reference runtime wired to them."""

    def __init__(self) -> None:
        self.plans = load_pack(str(PACK_DIR)).plans()
        self._gateway_thread = ServerThread(create_app(ScriptMode(), models=[MODEL])).start()
        self.gateway = GatewayClient(self._gateway_thread.url)
        self._loopback = start_loopback(self.plans)
        self.mocks: dict[str, HttpMCPHandle] = {mock.name: mock for mock in self._loopback}
        self._threads: list[ServerThread] = []
        self._clients: list[httpx.Client] = []

    @property
    def gateway_url(self) -> str:
        return self._gateway_thread.url

    def start(self, servers: list[dict[str, str]] | None = None, **env: str) -> httpx.Client:
        """Serve a reference runtime on 127.0.0.1 with the WT_* env the container driver would give it."""
        base = {
            "WT_MODEL_BASE_URL": f"{self.gateway_url}/v1",
            "WT_MODEL_NAME": MODEL,
            "WT_MCP_SERVERS": json.dumps(servers if servers is not None else self.servers()),
            "WT_SYSTEM_PROMPT": "You are the test agent.",
        }
        settings = runtime_module("settings").Settings.from_env({**base, **env})
        self._threads.append(
            ServerThread(inject_app(runtime_module("loop").ReferenceLoop(settings), name="reference")).start()
        )
        self._clients.append(httpx.Client(base_url=self._threads[-1].url, timeout=30))
        return self._clients[-1]

    def script(self, *decisions: ReferenceDecision, session: str | None = None) -> None:
        """Install the model's next responses, for one session or for any request."""
        self.gateway.install_script("test", decisions, session=session)

    def requests(self, session: str | None = None) -> list[dict[str, Any]]:
        """The gateway's log entries (rendered prompt, tools, sampling, usage, response), oldest first."""
        return [e for e in self.gateway.log() if session is None or e["session"] == session]

    def bodies(self, session: str | None = None) -> list[dict[str, Any]]:
        """The request bodies the runtime sent the model, rebuilt from the gateway's log."""
        return [request_body(entry) for entry in self.requests(session)]

    def mcp_calls(self) -> list[tuple[str, Any]]:
        """What the mocks received: (tool, raw arguments), in arrival order."""
        received = [call for mock in self.mocks.values() for call in mock.calls()]
        return [(c["name"], c["arguments"]) for c in sorted(received, key=lambda call: float(call["at"]))]

    def servers(self) -> list[dict[str, str]]:
        """WT_MCP_SERVERS for the pack's mocks."""
        return [{"name": name, "url": mock.url} for name, mock in self.mocks.items()]

    def stop_mock(self, name: str) -> int:
        """Stop serving mock `name` (an outage); returns its port for restart_mock()."""
        mock = self.mocks[name]
        assert isinstance(mock, LoopbackMCP)
        port = httpx.URL(mock.admin_url).port
        assert port is not None
        mock.stop()
        return port

    def restart_mock(self, name: str, port: int) -> None:
        """Serve mock `name` again on `port` with fresh fixture state, as a restarted mock would be."""
        plan = next(plan for plan in self.plans if plan.server == name)
        thread = ServerThread(mock_app(MockHost(plan.factory), name=name), port=port).start()
        self._threads.append(thread)
        self.mocks[name] = HttpMCPHandle(name, f"{thread.url}{MCP_PATH}", thread.url)

    def close(self) -> None:
        for client in self._clients:
            client.close()
        for mock in self.mocks.values():
            mock.close()
        for server in reversed(self._threads):
            server.stop()
        self.gateway.close()
        stop_loopback(self._loopback)
        self._gateway_thread.stop()


@contextmanager
def running_stack() -> Iterator[Stack]:
    """The gateway and the support_desk mocks on 127.0.0.1, and reference runtimes started on demand."""
    stack = Stack()
    try:
        yield stack
    finally:
        stack.close()


def inject(client: httpx.Client, session: str, text: str, timeout_s: float = 20.0) -> httpx.Response:
    return client.post(
        "/wt/inject",
        json={"session_id": session, "message": {"role": "user", "content": text}, "timeout_s": timeout_s},
    )


def refund_script(stack: Stack, session: str | None = None) -> None:
    stack.script(
        calls(("lookup_order", {"order_id": "A-1042"})),
        calls(("issue_refund", REFUND_ARGS)),
        say("Refunded 12.50 for the broken mug."),
        session=session,
    )


def prompt_text(body: Mapping[str, Any]) -> str:
    return json.dumps(body["messages"])


# --- the stand-in for what the gateway will not serve ---------------------------------------------------


@dataclass
class RawModel:
    """An OpenAI-compatible endpoint answering from raw replies: arguments as any JSON text, and a delay.

    Wind Tunnel's gateway only emits what a reference decision can say (arguments are a JSON object) and
    answers at once, so the runtime's handling of non-object arguments and of a late model is tested
    against this stand-in instead.
    """

    replies: list[dict[str, Any]] = field(default_factory=list)

    async def complete(self, request: Request) -> Response:
        await request.body()
        reply = self.replies.pop(0)
        await asyncio.sleep(reply.get("delay", 0))
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": text}}
                for i, (name, text) in enumerate(reply["tool_calls"])
            ]
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return JSONResponse({"id": "raw", "object": "chat.completion", "choices": [choice]})

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])])
