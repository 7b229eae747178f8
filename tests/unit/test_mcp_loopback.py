"""start_loopback/stop_loopback: one real mock server per plan on 127.0.0.1, stopped whatever happens."""

from __future__ import annotations

import threading

import httpx
import pytest

from windtunnel._core.mock_kit import MockServer, Tool
from windtunnel._mcp.inprocess import InProcessMCPHandle
from windtunnel._mcp.loopback import start_loopback, stop_loopback
from windtunnel.errors import HarnessError
from windtunnel.spi import RecordingMCPHandle
from windtunnel.spi.agent_runtime import MockServerPlan


def _server(name: str) -> MockServer:
    tool = Tool(
        name=f"{name}_ping", description="ping", input_schema={"type": "object"}, handler=lambda s, a: "pong"
    )
    return MockServer(name, [tool], {"name": name})


def plan(server: str) -> MockServerPlan:
    return MockServerPlan(pack="p", server=server, factory=lambda: _server(server))


def test_each_plan_gets_its_own_recording_server_on_loopback() -> None:
    handles = start_loopback([plan("alpha"), plan("beta")])
    try:
        assert [handle.name for handle in handles] == ["alpha", "beta"]
        assert all(isinstance(handle, RecordingMCPHandle) for handle in handles)
        assert all(
            handle.url.startswith("http://127.0.0.1:") and handle.url.endswith("/mcp") for handle in handles
        )
        assert handles[0].url != handles[1].url
        assert [handle.state() for handle in handles] == [{"name": "alpha"}, {"name": "beta"}]
        assert handles[0].calls() == []
    finally:
        stop_loopback(handles)


def test_stop_is_idempotent_and_the_port_is_closed_afterwards() -> None:
    (handle,) = start_loopback([plan("alpha")])
    admin = handle.admin_url
    stop_loopback([handle])
    stop_loopback([handle])
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{admin}/wt/health")


def test_a_failing_factory_stops_the_servers_already_started() -> None:
    def broken() -> MockServer:
        raise KeyError("fixtures/orders.json")

    plans = [plan("alpha"), MockServerPlan(pack="p", server="b", factory=broken)]
    with pytest.raises(HarnessError, match="the factory of MCP server 'b' raised KeyError"):
        start_loopback(plans)
    assert not [thread for thread in threading.enumerate() if thread.name == "wt-mcp-p-alpha"]


def test_stop_leaves_other_handles_alone_and_never_raises() -> None:
    other = InProcessMCPHandle(plan("gamma"))
    stop_loopback([other])
    assert other.state() == {"name": "gamma"}
