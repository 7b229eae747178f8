"""windtunnel.testing for real: the fixtures start the gateway, a support_desk mock and the reference runtime
in containers (images built as `wt certify` builds them) on one labelled project network.

A scripted model drives the reference runtime; the mock's own record and the runtime's report are read
back, so a runtime that skipped or changed the call would fail these tests.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from windtunnel._engine.cleanup import labelled
from windtunnel._engine.network import OWNER_PID_LABEL, ROLE_LABEL, RUN_LABEL
from windtunnel._engine.topology import ServicePlan
from windtunnel.errors import RuntimeFault, RuntimeUnavailableError, UsageError
from windtunnel.testing import (
    GatewayContainer,
    McpMockContainer,
    PlannedContainer,
    ScriptedModel,
    WindTunnelStack,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = "scenarios/support_desk"
TAPES = REPO / "scenarios" / "support_desk" / "tapes" / "reference"
Mcp = Callable[[str, str], McpMockContainer]


def test_the_agent_calls_the_tool_the_mock_receives_it_and_the_runtime_reports_it(
    wt_stack: WindTunnelStack, wt_gateway: GatewayContainer, wt_mcp: Mcp
) -> None:
    orders = wt_mcp(SUPPORT_DESK, "orders")
    wt_gateway.install(ScriptedModel().calls_tool("lookup_order", order_id="A-1042").answers("It shipped."))
    reply = wt_stack.runtime("reference").send("Where is order A-1042?")
    assert [(c["name"], c["arguments"]) for c in orders.calls()] == [("lookup_order", {"order_id": "A-1042"})]
    assert reply.tool_calls == [{"name": "lookup_order", "arguments": {"order_id": "A-1042"}}]
    assert reply.content == "It shipped."
    assert len(wt_gateway.requests()) == 2  # the tool call, then the answer


def test_the_mock_records_what_the_model_asked_not_what_a_test_expects(
    wt_stack: WindTunnelStack, wt_gateway: GatewayContainer, wt_mcp: Mcp
) -> None:
    orders = wt_mcp(SUPPORT_DESK, "orders")
    assert orders.calls() == []  # fresh for this test: the previous test's call is gone
    wt_gateway.install(ScriptedModel().calls_tool("lookup_order", order_id="B-7").answers("No such order."))
    reply = wt_stack.runtime("reference").send("Where is order A-1042?")
    assert [c["arguments"] for c in orders.calls()] == [{"order_id": "B-7"}]
    assert reply.tool_calls[0]["arguments"] == {"order_id": "B-7"}


def test_each_test_starts_with_no_script_so_an_unscripted_turn_fails(wt_stack: WindTunnelStack) -> None:
    assert wt_stack.gateway.client.scripts()["global"] is None
    with pytest.raises(RuntimeFault, match=r"no_script|no script"):
        wt_stack.runtime("reference").send("Hello?")


def test_containers_carry_the_run_labels_and_get_files_by_copy_not_bind_mount(
    wt_stack: WindTunnelStack, wt_mcp: Mcp
) -> None:
    wt_mcp(SUPPORT_DESK, "billing")
    client = docker.from_env()
    containers, networks = labelled(client, RUN_LABEL, wt_stack.network.run_id)
    roles = {c.labels[ROLE_LABEL] for c in containers}
    assert {"gateway", "mock"} <= roles
    assert [n.name for n in networks] == [wt_stack.network.name]
    assert all(c.labels.get(OWNER_PID_LABEL) for c in containers)
    for container in containers:
        assert not container.attrs["HostConfig"].get("Binds"), container.name
        assert not container.attrs.get("Mounts"), container.name


def test_a_tape_is_copied_into_a_replay_gateway_and_the_stack_removes_everything() -> None:
    tape = next(TAPES.glob("support_desk.refund_damaged_item.*.jsonl"))
    stack = WindTunnelStack(project=REPO, gateway=GatewayContainer.tape_mode(tape)).start()
    try:
        run_id = stack.network.run_id
        status = stack.gateway.client.tape()
        assert status["mode"] == "replay" and status["tape"]["interactions"] > 0
        assert status["tape"]["name"].startswith("support_desk.refund_damaged_item")
    finally:
        stack.stop()
    assert labelled(docker.from_env(), RUN_LABEL, run_id) == ([], [])


def test_a_service_that_exits_fails_its_readiness_wait_at_once_with_its_logs(
    wt_stack: WindTunnelStack,
) -> None:
    broken = ServicePlan(
        role="mock",
        alias="broken-mock",
        port=8000,
        args=("mcp", "serve", "--pack", "/nowhere", "--server", "orders", "--host", "0.0.0.0"),
    )
    image = str(wt_stack.gateway.image)
    with pytest.raises(RuntimeUnavailableError, match=r"container exited[\s\S]*last log lines"):
        PlannedContainer(broken, image, wt_stack.network).start()


def test_an_unknown_server_of_a_pack_is_a_usage_error_naming_the_servers(wt_stack: WindTunnelStack) -> None:
    with pytest.raises(UsageError, match="billing, orders"):
        wt_stack.mcp(SUPPORT_DESK, "crm")


def test_a_live_gateway_alone_joins_an_open_network_and_it_goes_with_the_stack() -> None:
    # The upstream is the container's own loopback: nothing is sent anywhere (no model call is made).
    spec = GatewayContainer.live_mode("http://127.0.0.1:9/v1", api_key="test-key-not-secret")
    assert spec.mode == "live" and "--upstream" in spec.extra_args and spec.needs_egress
    stack = WindTunnelStack(project=REPO, gateway=spec).start()
    client = docker.from_env()
    try:
        run_id, name = stack.network.run_id, stack.network.name
        gateway = stack.gateway.get_wrapped_container()
        gateway.reload()
        attached = {
            n: client.networks.get(n).attrs["Internal"] for n in gateway.attrs["NetworkSettings"]["Networks"]
        }
        assert attached == {name: True, f"{name}-egress": False}
        assert stack.gateway.client.health()
    finally:
        stack.stop()
    assert labelled(client, RUN_LABEL, run_id) == ([], [])
