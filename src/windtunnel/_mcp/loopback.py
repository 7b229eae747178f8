"""The pack's MCP mocks served on 127.0.0.1 in this process, one server thread each, for host-side runtimes."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from windtunnel._core.agent_runtime import MCPHandle, MockServerPlan
from windtunnel._core.mock_kit import MockHost, built_by_factory
from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel._mcp.server import MCP_PATH, mock_app
from windtunnel._net.server_thread import ServerThread
from windtunnel.errors import HarnessError

log = logging.getLogger("windtunnel.mcp")


class LoopbackMCP(HttpMCPHandle):
    """A mock served on loopback by this process; evidence is read over its admin routes like any other."""

    def __init__(self, plan: MockServerPlan, thread: ServerThread) -> None:
        super().__init__(plan.server, f"{thread.url}{MCP_PATH}", thread.url)
        self.plan = plan
        self._thread = thread

    def request_stop(self) -> None:
        """Ask the server to stop without waiting for it (stop_loopback stops many in one tick)."""
        self._thread.request_stop()

    def stop(self) -> None:
        """Stop serving; idempotent."""
        self.close()
        self._thread.stop()


def start_loopback(plans: Sequence[MockServerPlan]) -> list[LoopbackMCP]:
    """Start one mock per plan on a free loopback port; on any failure stop those already started."""
    started: list[LoopbackMCP] = []
    try:
        for plan in plans:
            started.append(_start(plan))
    except BaseException:
        stop_loopback(started)
        raise
    return started


def _start(plan: MockServerPlan) -> LoopbackMCP:
    host = built_by_factory(plan.pack, plan.server, lambda: MockHost(plan.factory))
    thread = ServerThread(mock_app(host, name=plan.server), name=f"wt-mcp-{plan.pack}-{plan.server}")
    try:
        thread.start()
    except RuntimeError as exc:
        thread.stop()
        raise HarnessError(
            f"MCP mock {plan.server!r} of pack {plan.pack!r} did not start on loopback: {exc}",
            hint="run with -v to see the server's log",
            pack=plan.pack,
            server=plan.server,
        ) from exc
    return LoopbackMCP(plan, thread)


def stop_loopback(handles: Sequence[MCPHandle]) -> None:
    """Stop every loopback mock; idempotent, never raises (it runs in finally blocks)."""
    for handle in handles:
        if isinstance(handle, LoopbackMCP):
            handle.request_stop()
    for handle in handles:
        if not isinstance(handle, LoopbackMCP):
            continue
        try:
            handle.stop()
        except Exception as exc:  # noqa: BLE001 - teardown must go on to the next mock and never raise
            log.warning("stopping MCP mock %s failed: %s: %s", handle.name, type(exc).__name__, exc)
