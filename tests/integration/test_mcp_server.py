"""MCP mocks served for real: the official SDK client against loopback servers and `wt mcp serve`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from windtunnel._drivers.in_memory import InMemoryRuntime
from windtunnel._mcp.client import call_tool, list_tools
from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel._mcp.inprocess import InProcessMCPHandle
from windtunnel._mcp.loopback import LoopbackMCP, start_loopback, stop_loopback
from windtunnel._packs.loader import load_pack
from windtunnel._packs.pack import Pack
from windtunnel._runner.batch import BatchSpec, run_batch
from windtunnel._runner.output import RunWriter
from windtunnel.api import ReferenceDecision, mock_state_probe, run_scenario
from windtunnel.errors import HarnessError
from windtunnel.spi import AgentConfig, MCPHandle, Message, RecordingMCPHandle

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = REPO / "scenarios" / "support_desk"
REFUND = {"order_id": "A-1042", "amount": 12.5, "reason": "damaged"}


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack(str(SUPPORT_DESK))


@pytest.fixture
def mocks(pack: Pack) -> Iterator[dict[str, LoopbackMCP]]:
    handles = start_loopback(pack.plans())
    yield {handle.name: handle for handle in handles}
    stop_loopback(handles)


async def _session(url: str, mode: str) -> tuple[list[Any], list[Any]]:
    """One SDK client session: list the tools, then a good call, an unknown tool and bad arguments."""
    async with Client(url, mode=mode, cache=None) as client:
        tools = (await client.list_tools()).tools
        good = await client.call_tool("issue_refund", REFUND)
        try:
            unknown: Any = await client.call_tool("refund_everything", {"order_id": "A-1042"})
        except MCPError as exc:  # the spec's answer to an unknown tool: JSON-RPC -32602
            unknown = exc
        bad = await client.call_tool("issue_refund", {"order_id": "A-1042", "amount": -3})
    return tools, [good, unknown, bad]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_lists_calls_and_every_call_is_recorded(
    pack: Pack, mocks: dict[str, LoopbackMCP], mode: str
) -> None:
    billing = mocks["billing"]
    tools, (good, unknown, bad) = anyio.run(_session, billing.url, mode)

    (declared,) = pack.mcp_servers["billing"]().tools.values()
    assert [(t.name, t.description, t.input_schema) for t in tools] == [
        (declared.name, declared.description, dict(declared.input_schema))
    ]
    assert not good.is_error
    assert good.structured_content == {"refund_id": "R-001", **REFUND}
    assert json.loads(good.content[0].text) == good.structured_content
    assert isinstance(unknown, MCPError) and unknown.code == -32602
    assert "unknown tool 'refund_everything'" in unknown.message
    assert bad.is_error and "bad arguments for 'issue_refund'" in bad.content[0].text

    calls = billing.calls()
    assert [(c["name"], c["arguments"], c["is_error"]) for c in calls] == [
        ("issue_refund", REFUND, False),
        ("refund_everything", {"order_id": "A-1042"}, True),
        ("issue_refund", {"order_id": "A-1042", "amount": -3}, True),
    ]
    assert calls[0]["at"] <= calls[1]["at"] <= calls[2]["at"]
    assert billing.state() == {"refunds": [{"refund_id": "R-001", **REFUND}]}
    assert mocks["orders"].calls() == []

    billing.reset()
    assert billing.state() == {"refunds": []}
    assert billing.calls() == []


def test_loopback_mocks_of_the_bundled_pack_feed_its_state_probe(
    pack: Pack, mocks: dict[str, LoopbackMCP]
) -> None:
    assert sorted(mocks) == sorted(pack.mcp_servers)
    assert all(isinstance(handle, RecordingMCPHandle) for handle in mocks.values())
    probe = mock_state_probe(list(mocks.values()))
    before = probe.snapshot()
    assert before["billing"] == {"refunds": []}
    assert "A-1042" in before["orders"]["orders"]

    looked_up = call_tool(mocks["orders"].url, "lookup_order", {"order_id": "A-1042"})
    assert looked_up["structuredContent"]["order_id"] == "A-1042"
    call_tool(mocks["billing"].url, "issue_refund", REFUND)
    assert probe.snapshot()["billing"]["refunds"][0]["amount"] == 12.5
    assert [tool["name"] for tool in list_tools(mocks["orders"].url)] == ["lookup_order"]


class McpReplayHandle:
    """An agent with no model: it plays a scenario's golden decisions, executing each call over MCP."""

    def __init__(self, decisions: Sequence[ReferenceDecision], servers: Mapping[str, str]) -> None:
        self._decisions, self._servers = list(decisions), servers
        self._tool_urls = {tool["name"]: url for url in servers.values() for tool in list_tools(url)}
        self._position = 0

    def send(self, messages: list[Message], session_id: str) -> dict[str, Any]:
        reported: list[dict[str, Any]] = []
        while self._position < len(self._decisions):
            decision = self._decisions[self._position]
            self._position += 1
            for tool_call in decision.tool_calls:
                call_tool(self._tool_urls[tool_call.name], tool_call.name, dict(tool_call.arguments))
                reported.append({"name": tool_call.name, "arguments": dict(tool_call.arguments)})
            if decision.content is not None:
                return {"content": decision.content, "tool_calls": reported}
        return {"content": "", "tool_calls": reported}

    def reset_state(self) -> None:
        self._position = 0

    def teardown(self) -> None:
        return None


class McpReplayRuntime:
    """Not MCP-hosting, so the runner serves the pack's mocks on loopback for it."""

    def __init__(self, decisions: Sequence[ReferenceDecision]) -> None:
        self.decisions = decisions
        self.seen: list[LoopbackMCP] = []

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> McpReplayHandle:
        self.seen = [handle for handle in mcps or [] if isinstance(handle, LoopbackMCP)]
        return McpReplayHandle(self.decisions, {spec.name: spec.url for spec in config.mcp_servers})


def test_a_batch_for_a_host_runtime_runs_against_loopback_mocks(pack: Pack, tmp_path: Path) -> None:
    scenario = pack.scenario("refund_damaged_item")
    runtime = McpReplayRuntime(scenario.goldens[0].decisions)
    spec = BatchSpec(
        runtime=runtime, runtime_name="replay", pack=pack, scenarios=[scenario], config=AgentConfig(), runs=2
    )
    results = run_batch(spec, RunWriter(tmp_path))

    assert [handle.name for handle in runtime.seen] == ["orders", "billing"]
    for result in results:
        assert result.score.passed, result.score.failed_checks or result.score.error
        assert [(c["server"], c["name"]) for c in result.trace.mcp_calls or []] == [
            ("orders", "lookup_order"),
            ("billing", "issue_refund"),
        ]
    # The batch is over: its mocks are gone.
    with pytest.raises(HarnessError, match="closed handle"):
        runtime.seen[0].calls()


def test_in_memory_run_scenario_still_uses_in_process_mocks(pack: Pack) -> None:
    scenario = pack.scenario("refund_damaged_item")
    handles = [InProcessMCPHandle(plan) for plan in pack.plans()]
    (result,) = run_scenario(
        InMemoryRuntime([scenario]), scenario, mcps=handles, state_probe=mock_state_probe(handles)
    )
    assert result.score.passed, result.score.failed_checks
    assert result.trace.mcp_calls and result.trace.mcp_calls[-1]["name"] == "issue_refund"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], HttpMCPHandle]]:
    port = _free_port()
    argv = [sys.executable, "-m", "windtunnel._cli.main", "mcp", "serve", "--pack", str(SUPPORT_DESK)]
    argv += [
        "--server",
        "billing",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--allow-host",
        "mock-billing",
    ]
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path, env=dict(os.environ))
    handle = HttpMCPHandle("billing", f"http://127.0.0.1:{port}/mcp")
    try:
        handle.wait_ready(20)
        yield process, handle
    finally:
        handle.close()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)
        log.close()


@pytest.mark.slow
def test_wt_mcp_serve_serves_one_server_of_the_pack(
    served: tuple[subprocess.Popen[bytes], HttpMCPHandle], tmp_path: Path
) -> None:
    process, handle = served
    assert [tool["name"] for tool in list_tools(handle.url)] == ["issue_refund"]
    assert call_tool(handle.url, "issue_refund", REFUND)["isError"] is False
    assert handle.state() == {"refunds": [{"refund_id": "R-001", **REFUND}]}
    assert [call["arguments"] for call in handle.calls()] == [REFUND]
    handle.reset()
    assert handle.state() == {"refunds": []}

    # uvicorn shuts down gracefully, then re-raises the signal so the exit status says what stopped it.
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == -signal.SIGTERM
    out = (tmp_path / "serve.log").read_text()
    assert f"serving MCP mock 'billing' of pack 'support_desk' at {handle.url}" in out


@pytest.mark.slow
def test_wt_mcp_serve_answers_only_to_the_names_it_was_given(
    served: tuple[subprocess.Popen[bytes], HttpMCPHandle],
) -> None:
    _, handle = served
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "issue_refund", "arguments": REFUND},
    }
    accept = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(timeout=10) as client:
        refused = client.post(handle.url, json=body, headers={**accept, "Host": "evil.example.com"})
        foreign = client.post(handle.url, json=body, headers={**accept, "Origin": "http://evil.example.com"})
        allowed = client.post(handle.url, json=body, headers={**accept, "Host": "mock-billing:8000"})
    assert (refused.status_code, foreign.status_code, allowed.status_code) == (421, 403, 200)
    assert [call["arguments"] for call in handle.calls()] == [REFUND]  # only the allowed one
