"""Runtime-author test (docs/testing.md): the langgraph runtime in its container, a scripted model behind Wind
Tunnel's gateway, and the support_desk pack's orders mock, through windtunnel.testing's fixtures."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from windtunnel.testing import GatewayContainer, McpMockContainer, ScriptedModel, WindTunnelStack

pytestmark = pytest.mark.docker


def test_a_refused_tool_call_reaches_the_model_as_an_error_and_the_turn_goes_on(
    wt_stack: WindTunnelStack,
    wt_gateway: GatewayContainer,
    wt_mcp: Callable[[str, str], McpMockContainer],
) -> None:
    orders = wt_mcp("scenarios/support_desk", "orders")
    # `order` is not lookup_order's parameter: the mock refuses the call (an isError result).
    wt_gateway.install(
        ScriptedModel().calls_tool("lookup_order", order="A-1042").answers("I could not look.")
    )

    reply = wt_stack.runtime("langgraph", mocks=[orders]).send("Where is order A-1042?")

    assert reply.tool_calls == [{"name": "lookup_order", "arguments": {"order": "A-1042"}}]
    assert reply.content == "I could not look."
    second = wt_gateway.requests()[1]
    [result] = [m for m in second["messages"] if m.get("role") == "tool"]
    assert "bad arguments for 'lookup_order'" in str(result["content"])  # the mock's own words
