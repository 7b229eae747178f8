"""`wt doctor`'s tools step: a reference-capable runtime must call a tool of every mock itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from windtunnel._canary.doctor_tools import sample_arguments, tools_step
from windtunnel._mcp.client import call_tool
from windtunnel._packs.loader import kit_pack
from windtunnel.errors import WindTunnelError
from windtunnel.spi import AgentConfig, MCPHandle, Message, ReferenceCase


class ToolLoopHandle:
    """Plays the scripted decisions; with `wired`, its tool calls reach the real (loopback) mocks."""

    def __init__(self, case: ReferenceCase, mcps: list[MCPHandle], wired: bool) -> None:
        self.decisions, self.mcps, self.wired = list(case.decisions), mcps, wired

    def send(self, messages: list[Message], session_id: str) -> Mapping[str, Any]:
        calls = []
        for decision in self.decisions:
            for tool in decision.tool_calls:
                if self.wired:
                    call_tool(self.mcps[0].url, tool.name, dict(tool.arguments))
                calls.append({"name": tool.name, "arguments": dict(tool.arguments)})
        return {"content": self.decisions[-1].content, "tool_calls": calls}

    def reset_state(self) -> None:
        return None

    def teardown(self) -> None:
        return None


class ToolLoopRuntime:
    def __init__(self, wired: bool) -> None:
        self.wired = wired

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> ToolLoopHandle:
        raise AssertionError("the tools step provisions reference-capable runtimes with a script")

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> ToolLoopHandle:
        return ToolLoopHandle(case, list(mcps or []), self.wired)


class ListOnlyRuntime:
    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> ToolLoopHandle:
        raise AssertionError("a runtime without the inference seam is not driven")


def test_tools_are_called_through_a_wired_runtime() -> None:
    assert tools_step(ToolLoopRuntime(wired=True), [kit_pack()]) == [
        "wt-conformance/notes: echo called through the runtime (6 listed)"
    ]


def test_a_runtime_that_never_reaches_the_mock_fails_the_step() -> None:
    with pytest.raises(
        WindTunnelError, match="asked the runtime to call 'echo', but the mock received no call"
    ):
        tools_step(ToolLoopRuntime(wired=False), [kit_pack()])


def test_without_the_inference_seam_the_tools_are_only_listed() -> None:
    [line] = tools_step(ListOnlyRuntime(), [kit_pack()])
    assert (
        line.startswith("wt-conformance/notes: echo, lookup, pause, read_document, store")
        and "live model" in line
    )


def test_sample_arguments_fill_the_required_properties() -> None:
    schema = {
        "type": "object",
        "properties": {
            "key": {"type": "string"},
            "count": {"type": "integer"},
            "mode": {"enum": ["fast", "slow"]},
            "nested": {
                "type": "object",
                "properties": {"id": {"type": ["null", "number"]}},
                "required": ["id"],
            },
            "optional": {"type": "string"},
        },
        "required": ["key", "count", "mode", "nested"],
    }
    assert sample_arguments(schema) == {"key": "wt-doctor", "count": 1, "mode": "fast", "nested": {"id": 1}}
    assert sample_arguments({}) == {}
