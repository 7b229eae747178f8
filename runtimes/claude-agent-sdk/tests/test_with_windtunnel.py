"""The claude-agent-sdk runtime's own tests (docs/testing.md): its container (the Claude Code CLI the SDK
bundles, run offline) next to Wind Tunnel's gateway in script mode and the support_desk pack's mocks, through
windtunnel.testing's fixtures."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from windtunnel.testing import GatewayContainer, McpMockContainer, ScriptedModel, WindTunnelStack

pytestmark = pytest.mark.docker

RUNTIME = "claude-agent-sdk"


def test_the_cli_calls_the_tool_the_mock_gets_it_and_the_runtime_reports_it_as_emitted(
    wt_stack: WindTunnelStack,
    wt_gateway: GatewayContainer,
    wt_mcp: Callable[[str, str], McpMockContainer],
) -> None:
    orders = wt_mcp("scenarios/support_desk", "orders")
    # The script names the pack's tool; the gateway resolves it against what Claude Code offered.
    wt_gateway.install(
        ScriptedModel().calls_tool("lookup_order", order_id="A-1042").answers("Your mug shipped.")
    )

    reply = wt_stack.runtime(RUNTIME).send("Where is order A-1042?")

    assert [(call["name"], call["arguments"]) for call in orders.calls()] == [
        ("lookup_order", {"order_id": "A-1042"})
    ]
    # Reported exactly as the model emitted it: the name Claude Code gave the MCP tool.
    assert reply.tool_calls == [{"name": "mcp__orders__lookup_order", "arguments": {"order_id": "A-1042"}}]
    assert reply.content == "Your mug shipped."
    requests = wt_gateway.requests()
    assert {entry["wire"] for entry in requests} == {"anthropic-messages"}
    assert [entry["status"] for entry in requests] == [200, 200]


def test_a_session_remembers_its_turn_and_reset_forgets_it(
    wt_stack: WindTunnelStack, wt_gateway: GatewayContainer
) -> None:
    runtime = wt_stack.runtime(RUNTIME, mocks=[])
    wt_gateway.install(ScriptedModel().answers("Noted.").answers("The code was wt-nonce-7f3a."))
    runtime.send("The canary code is wt-nonce-7f3a.", session_id="s")
    runtime.send("Which code did I give you?", session_id="s")
    second = wt_gateway.requests()[-1]
    assert "wt-nonce-7f3a" in str(second["messages"])  # resumed from the session's transcript

    runtime.reset()
    wt_gateway.install(ScriptedModel().answers("I know of no code."))
    runtime.send("Which code did I give you?", session_id="s")
    after = wt_gateway.requests()[-1]
    assert "wt-nonce-7f3a" not in str(after["messages"])
