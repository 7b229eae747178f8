"""Runtime-author tests (docs/testing.md): the codex runtime in its container, a scripted model behind Wind
Tunnel's gateway on the Responses wire, and the support_desk pack's orders mock, through windtunnel.testing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from windtunnel.testing import GatewayContainer, McpMockContainer, ScriptedModel, WindTunnelStack

pytestmark = pytest.mark.docker


def test_the_golden_refund_over_two_mocks_is_reported_as_the_model_emitted_it_in_namespaces(
    wt_stack: WindTunnelStack,
    wt_gateway: GatewayContainer,
    wt_mcp: Callable[[str, str], McpMockContainer],
) -> None:
    mocks = [wt_mcp("scenarios/support_desk", "orders"), wt_mcp("scenarios/support_desk", "billing")]
    wt_gateway.install(
        ScriptedModel()
        .calls_tool("lookup_order", order_id="A-1042")
        .calls_tool("issue_refund", order_id="A-1042", amount=12.5, reason="damaged")
        .answers("Refunded.")
    )

    reply = wt_stack.runtime("codex", mocks=mocks).send("Refund the broken mug of order A-1042.")

    assert reply.tool_names == ["lookup_order", "issue_refund"]
    assert [call["name"] for mock in mocks for call in mock.calls()] == ["lookup_order", "issue_refund"]
    assert reply.content == "Refunded."
    # Codex offers each server's tools in a Responses namespace, and the model's calls carry it.
    first = str(wt_gateway.requests()[0])
    assert "mcp__orders" in first
    assert "mcp__billing" in first


def test_a_second_turn_resumes_the_thread_with_the_first_turn_in_the_model_input(
    wt_stack: WindTunnelStack,
    wt_gateway: GatewayContainer,
    wt_mcp: Callable[[str, str], McpMockContainer],
) -> None:
    orders = wt_mcp("scenarios/support_desk", "orders")
    wt_gateway.install(ScriptedModel().answers("Which order?").answers("Order A-1042 shipped."))
    runtime = wt_stack.runtime("codex", mocks=[orders])

    first = runtime.send("Where is my order?", session_id="resume-1")
    second = runtime.send("It is A-1042.", session_id="resume-1")

    assert (first.content, second.content) == ("Which order?", "Order A-1042 shipped.")
    requests = wt_gateway.requests()
    assert [request["path"] for request in requests] == ["/v1/responses", "/v1/responses"]
    # Codex resumed its thread: the second call carries the first turn's words.
    assert "Which order?" in str(requests[1])
    assert "Where is my order?" in str(requests[1])
