"""The small MCP client: wire-shaped results from a real loopback mock, one clear error when none answers."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from windtunnel._core.mock_kit import MockServer, Tool
from windtunnel._mcp.client import call_tool, list_tools
from windtunnel._mcp.loopback import LoopbackMCP, start_loopback, stop_loopback
from windtunnel.errors import HarnessError
from windtunnel.spi.agent_runtime import MockServerPlan

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def echo_server() -> MockServer:
    tool = Tool(
        name="echo",
        description="Echo the text.",
        input_schema=SCHEMA,
        handler=lambda s, a: {"echo": a["text"]},
    )
    return MockServer("echo", [tool])


@pytest.fixture
def mock() -> Iterator[LoopbackMCP]:
    (handle,) = start_loopback([MockServerPlan(pack="p", server="echo", factory=echo_server)])
    yield handle
    stop_loopback([handle])


def test_list_tools_gives_the_wire_shape(mock: LoopbackMCP) -> None:
    assert list_tools(mock.url) == [{"name": "echo", "description": "Echo the text.", "inputSchema": SCHEMA}]


def test_call_tool_gives_the_wire_shape(mock: LoopbackMCP) -> None:
    assert call_tool(mock.url, "echo", {"text": "hi"}) == {
        "content": [{"type": "text", "text": '{"echo": "hi"}'}],
        "structuredContent": {"echo": "hi"},
        "isError": False,
    }
    assert call_tool(mock.url, "echo", {})["isError"] is True
    assert [call["arguments"] for call in mock.calls()] == [{"text": "hi"}, {}]


def test_no_server_is_one_harness_error_naming_the_url() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    with pytest.raises(HarnessError, match=rf"could not call tool 'echo' on {url}: .*ConnectError"):
        call_tool(url, "echo", {"text": "hi"}, timeout_s=5)
    with pytest.raises(HarnessError, match=rf"could not list the tools of {url}"):
        list_tools(url, timeout_s=5)


def test_a_refused_call_is_one_harness_error_with_the_json_rpc_code(mock: LoopbackMCP) -> None:
    with pytest.raises(
        HarnessError, match=r"the server answered JSON-RPC error -32602: unknown tool 'nope'"
    ) as raised:
        call_tool(mock.url, "nope", {})
    assert raised.value.hint and "tools/list" in raised.value.hint
    assert [call["name"] for call in mock.calls()] == ["nope"]
