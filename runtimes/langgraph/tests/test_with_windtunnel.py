"""Example runtime-author test (docs/testing.md): the langgraph runtime in its container, a scripted model
behind Wind Tunnel's gateway, and the support_desk pack's orders mock, through windtunnel.testing's fixtures."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from windtunnel.testing import GatewayContainer, McpMockContainer, ScriptedModel, WindTunnelStack

pytestmark = pytest.mark.docker


def test_the_agent_calls_the_tool_the_mock_gets_it_and_the_runtime_reports_it(
    wt_stack: WindTunnelStack,
    wt_gateway: GatewayContainer,
    wt_mcp: Callable[[str, str], McpMockContainer],
) -> None:
    orders = wt_mcp("scenarios/support_desk", "orders")
    wt_gateway.install(
        ScriptedModel().calls_tool("lookup_order", order_id="A-1042").answers("Your mug shipped.")
    )

    reply = wt_stack.runtime("langgraph").send("Where is order A-1042?")

    assert [(call["name"], call["arguments"]) for call in orders.calls()] == [
        ("lookup_order", {"order_id": "A-1042"})
    ]
    assert reply.tool_calls == [{"name": "lookup_order", "arguments": {"order_id": "A-1042"}}]
    assert reply.content == "Your mug shipped."
