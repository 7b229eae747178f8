"""The integrity cross-check against real mocks: hidden and fabricated calls are errors, invented tools are evidence."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from windtunnel._mcp.client import call_tool
from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel._mcp.inprocess import InProcessMCPHandle
from windtunnel._mcp.loopback import start_loopback, stop_loopback
from windtunnel._runner.evidence import check_integrity, drain_model_requests, mcp_calls, served_tools
from windtunnel._trace.models import Trace, Turn
from windtunnel.api import MockServer, Scenario, Tool, run_scenario
from windtunnel.errors import HarnessError, IntegrityError
from windtunnel.spi import AgentConfig, MCPHandle, Message, MockServerPlan


def counter_server() -> MockServer:
    def bump(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        state["count"] += arguments["by"]
        return {"count": state["count"]}

    schema = {"type": "object", "properties": {"by": {"type": "integer"}}, "required": ["by"]}
    return MockServer(
        "counter", [Tool(name="bump", description="add", input_schema=schema, handler=bump)], {"count": 0}
    )


PLAN = MockServerPlan(pack="p", server="counter", factory=counter_server)


@pytest.fixture(params=["in-process", "over-http"])
def mock(request: pytest.FixtureRequest) -> Iterator[InProcessMCPHandle | HttpMCPHandle]:
    """The same mock kept in this process (tools()) or served on 127.0.0.1 (its /wt/health lists tools)."""
    if request.param == "in-process":
        yield InProcessMCPHandle(PLAN)
        return
    served = start_loopback([PLAN])
    try:
        yield served[0]
    finally:
        stop_loopback(served)


def _execute(handle: InProcessMCPHandle | HttpMCPHandle, name: str, arguments: dict[str, Any]) -> None:
    if isinstance(handle, InProcessMCPHandle):
        handle.call(name, arguments)
        return
    call_tool(handle.url, name, arguments)  # a real MCP client over streamable HTTP


def _trace(*turn_calls: list[dict[str, Any]]) -> Trace:
    turns = [
        Turn(index=i, user="u", response={}, shape="flat", content="c", tool_calls=calls)
        for i, calls in enumerate(turn_calls)
    ]
    return Trace(
        run_id="r",
        scenario="s",
        pack="p",
        runtime="rt",
        agent_id="a",
        variant_id="v",
        session_id="sess",
        started_at="now",
        turns=turns,
    )


def _checked(trace: Trace, mcps: list[MCPHandle]) -> Trace:
    trace.mcp_calls = mcp_calls(mcps)
    check_integrity(trace, mcps)
    return trace


def test_the_mocks_say_which_tools_they_serve(mock: InProcessMCPHandle | HttpMCPHandle) -> None:
    assert served_tools([mock]) == frozenset({"bump"})


def test_an_invented_tool_the_runtime_never_forwarded_is_evidence_not_an_error(
    mock: InProcessMCPHandle | HttpMCPHandle,
) -> None:
    _execute(mock, "bump", {"by": 1})
    reported = [{"name": "bump", "arguments": {"by": 1}}, {"name": "teleport", "arguments": {"to": "moon"}}]
    trace = _checked(_trace(reported, [{"name": "teleport", "arguments": {"to": "mars"}}]), [mock])
    assert trace.unknown_tool_calls == [
        {"turn": 0, "name": "teleport", "arguments": {"to": "moon"}},
        {"turn": 1, "name": "teleport", "arguments": {"to": "mars"}},
    ]
    assert "unknown_tool_calls" in trace.model_dump_json()


def test_a_served_tool_no_mock_received_is_still_an_integrity_error(
    mock: InProcessMCPHandle | HttpMCPHandle,
) -> None:
    reported = [{"name": "teleport", "arguments": {}}, {"name": "bump", "arguments": {"by": 5}}]
    with pytest.raises(IntegrityError, match="but no mock received it") as raised:
        _checked(_trace(reported), [mock])
    assert (
        'the runtime reported bump {"by": 5}' in raised.value.message
        and "teleport" not in raised.value.message
    )


def test_an_altered_call_and_a_hidden_one_are_integrity_errors(
    mock: InProcessMCPHandle | HttpMCPHandle,
) -> None:
    _execute(mock, "bump", {"by": 2})
    _execute(mock, "bump", {"by": 3})
    with pytest.raises(IntegrityError) as raised:
        _checked(_trace([{"name": "bump", "arguments": {"by": 20}}]), [mock])
    # both sides shown: the altered call beside what the mock received, and the hidden one
    assert 'mock: bump {"by": 2}; runtime: bump {"by": 20}' in raised.value.message
    assert 'the mock received bump {"by": 3} but the runtime did not report it' in raised.value.message


def test_a_forwarded_unknown_tool_matches_what_the_mock_recorded(
    mock: InProcessMCPHandle | HttpMCPHandle,
) -> None:
    if isinstance(mock, HttpMCPHandle):  # over MCP the mock refuses it (-32602) but records it all the same
        with pytest.raises(HarnessError, match="JSON-RPC error -32602: unknown tool 'teleport'"):
            _execute(mock, "teleport", {"to": "moon"})
    else:
        _execute(mock, "teleport", {"to": "moon"})  # the mock records unknown tools too (as errors)
    trace = _checked(_trace([{"name": "teleport", "arguments": {"to": "moon"}}]), [mock])
    assert trace.unknown_tool_calls is None and trace.mcp_calls is not None and trace.mcp_calls[0]["is_error"]


class _Silent:
    """A recording mock that cannot say which tools it serves."""

    name, url = "silent", "inproc://silent"

    def calls(self) -> list[dict[str, Any]]:
        return []

    def state(self) -> Mapping[str, Any]:
        return {}

    def reset(self) -> None:
        return None


def test_when_a_mock_cannot_say_its_tools_every_unreceived_call_is_an_error() -> None:
    assert served_tools([_Silent()]) is None
    with pytest.raises(IntegrityError, match="teleport"):
        _checked(_trace([{"name": "teleport", "arguments": {}}]), [_Silent()])


class _InventingRuntime:
    """A runtime whose model invented a tool: it reports the call and answers the model itself."""

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> _InventingRuntime:
        return self

    def send(self, messages: list[Message], session_id: str) -> Mapping[str, Any]:
        return {"content": "done", "tool_calls": [{"name": "teleport", "arguments": {"to": "moon"}}]}

    def reset_state(self) -> None:
        return None

    def teardown(self) -> None:
        return None


def test_the_runner_keeps_the_invented_call_in_the_trace_and_scores_the_run() -> None:
    mocks: list[MCPHandle] = [InProcessMCPHandle(PLAN)]
    scenario = Scenario(name="s", prompt="Say done.", target_facts=[["done"]])
    (result,) = run_scenario(_InventingRuntime(), scenario, mcps=mocks)
    assert result.trace.error is None and result.score.passed
    assert result.trace.unknown_tool_calls == [{"turn": 0, "name": "teleport", "arguments": {"to": "moon"}}]


def _with_model(trace: Trace, emitted: list[int], results: list[str]) -> Trace:
    """The gateway's log of one turn: a model call emitting bump(by=n) for each n at once, then one that
    carries a tool result per call and answers."""
    calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": "bump", "arguments": f'{{"by": {n}}}'}}
        for i, n in enumerate(emitted)
    ]
    answered = [
        {"role": "tool", "tool_call_id": f"call_{i}", "content": text} for i, text in enumerate(results)
    ]
    trace.model_requests = [
        {
            "index": 0,
            "turn": 0,
            "at": 0.0,
            "messages": [],
            "response": {"content": None, "tool_calls": calls},
        },
        {"index": 1, "turn": 0, "at": 0.0, "messages": answered, "response": {"content": "c"}},
    ]
    return trace


def test_calls_run_in_parallel_may_reach_the_mocks_in_any_order(
    mock: InProcessMCPHandle | HttpMCPHandle,
) -> None:
    _execute(mock, "bump", {"by": 2})  # arrives first, though the model emitted it second
    _execute(mock, "bump", {"by": 1})
    reported = [{"name": "bump", "arguments": {"by": 1}}, {"name": "bump", "arguments": {"by": 2}}]
    _checked(_with_model(_trace(reported), [1, 2], ['{"count": 3}', '{"count": 2}']), [mock])


def test_a_report_in_another_order_than_the_models_is_an_integrity_error(
    mock: InProcessMCPHandle | HttpMCPHandle,
) -> None:
    _execute(mock, "bump", {"by": 1})
    _execute(mock, "bump", {"by": 2})
    reported = [{"name": "bump", "arguments": {"by": 2}}, {"name": "bump", "arguments": {"by": 1}}]
    with pytest.raises(IntegrityError, match="another order: emitted bump, bump"):
        _checked(_with_model(_trace(reported), [1, 2], ['{"count": 1}', '{"count": 3}']), [mock])


def test_a_result_the_mock_did_not_answer_is_an_integrity_error_naming_both_sides(
    mock: InProcessMCPHandle | HttpMCPHandle,
) -> None:
    _execute(mock, "bump", {"by": 1})
    reported = [{"name": "bump", "arguments": {"by": 1}}]
    with pytest.raises(IntegrityError) as raised:
        _checked(_with_model(_trace(reported), [1], ["bump succeeded"]), [mock])
    assert "'bump succeeded'" in raised.value.message and '{"count": 1}' in raised.value.message


class _LoggedHandle:
    """A handle whose gateway log holds a turn's model call and a harness's side call beside it."""

    def send(self, messages: list[Any], session_id: str) -> dict[str, Any]:
        return {"content": "ok"}

    def reset_state(self) -> None:
        return None

    def teardown(self) -> None:
        return None

    def model_requests(self) -> list[dict[str, Any]]:
        return [{"index": 0, "side": "side model wt-side"}, {"index": 1, "side": None}, {"index": 2}]


def test_side_traffic_is_left_out_of_a_runs_model_requests() -> None:
    assert [r["index"] for r in drain_model_requests(_LoggedHandle()) or []] == [1, 2]
