"""MCP mocks kept in the runner's process, for runtimes that call tools directly (in_memory)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._core.agent_runtime import MockServerPlan
from windtunnel._core.faults import ToolFault
from windtunnel._core.mock_kit import CallOutcome, MockHost
from windtunnel._core.mock_steps import unsent
from windtunnel._mcp.identity import MockIdentity


class InProcessMCPHandle(MockIdentity):
    """A RecordingMCPHandle with no transport: `call()` runs the tool in this process."""

    def __init__(self, plan: MockServerPlan) -> None:
        super().__init__(plan.server, f"inproc://{plan.pack}/{plan.server}")
        self._host = MockHost(plan.factory)

    def tools(self) -> list[dict[str, Any]]:
        return [
            {"name": tool.name, "description": tool.description, "input_schema": dict(tool.input_schema)}
            for tool in self._host.server.tools.values()
        ]

    def call(self, name: str, arguments: Any) -> CallOutcome:
        mock = self._host.server
        tool = mock.runs_steps(name, arguments)
        if tool is None:
            return mock.call(name, arguments)
        # No MCP client is on the other end of an in-process call: each step is recorded as not sent,
        # and a handler waiting for answers gets none, as it would from a client that refused.
        replies, exchanges = unsent(
            tool.steps, "the tool was called in process, with no MCP client to send to"
        )
        return mock.call(name, arguments, replies=replies, exchanges=exchanges)

    def calls(self) -> list[dict[str, Any]]:
        return self._host.server.calls()

    def requests(self) -> list[dict[str, Any]]:
        return self._host.server.requests()

    def state(self) -> Mapping[str, Any]:
        return self._host.server.snapshot()

    def reset(self) -> None:
        self._host.reset()

    def script_faults(self, faults: Sequence[ToolFault]) -> None:
        """Queue scripted faults (the in-process call serves error_result and jsonrpc_error ones; a crash
        or a late answer needs a transport, so the fault checks need an HTTP mock for those)."""
        self._host.server.script_faults(faults)
