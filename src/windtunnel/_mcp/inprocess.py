"""MCP mocks kept in the runner's process, for runtimes that call tools directly (in_memory)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel._core.agent_runtime import MockServerPlan
from windtunnel._core.mock_kit import CallOutcome, MockHost
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
        return self._host.server.call(name, arguments)

    def calls(self) -> list[dict[str, Any]]:
        return self._host.server.calls()

    def state(self) -> Mapping[str, Any]:
        return self._host.server.snapshot()

    def reset(self) -> None:
        self._host.reset()
