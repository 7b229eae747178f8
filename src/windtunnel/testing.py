"""Test a runtime against Wind Tunnel's real model gateway and MCP mocks, in containers (docs/testing.md).

Needs the test extra (`pip install 'windtunnel[test]'`: testcontainers) and a Docker engine. The pytest
fixtures `wt_stack`, `wt_gateway` and `wt_mcp` come with windtunnel's pytest plugin::

    def test_my_agent_looks_up_the_order(wt_stack, wt_gateway, wt_mcp):
        orders = wt_mcp("scenarios/support_desk", "orders")
        wt_gateway.install(ScriptedModel().calls_tool("lookup_order", order_id="A-1042").answers("It shipped."))
        reply = wt_stack.runtime("my-runtime").send("Where is order A-1042?")
        assert [call["name"] for call in orders.calls()] == ["lookup_order"]
        assert reply.tool_names == ["lookup_order"]
"""

from __future__ import annotations

from windtunnel._core.doors import publish
from windtunnel._engine.stack import GatewaySpec
from windtunnel._testing.containers import PlannedContainer, ProjectNetwork, ServiceReady
from windtunnel._testing.reply import Reply
from windtunnel._testing.script import ScriptedModel
from windtunnel._testing.services import GatewayContainer, McpMockContainer, RuntimeContainer
from windtunnel._testing.stack import WindTunnelStack

__all__ = [
    "WindTunnelStack",
    "GatewayContainer",
    "McpMockContainer",
    "RuntimeContainer",
    "ScriptedModel",
    "Reply",
    "GatewaySpec",
    "PlannedContainer",
    "ProjectNetwork",
    "ServiceReady",
]
publish(__name__, globals(), __all__)
