"""The runner's lifecycle (docs/writing-a-runtime.md) and its evidence checks, driven by small real runtimes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from windtunnel._mcp.inprocess import InProcessMCPHandle
from windtunnel._packs.pack import Pack
from windtunnel._runner.batch import BatchSpec, run_batch
from windtunnel._runner.output import RunWriter
from windtunnel.api import (
    MockServer,
    ReferenceCase,
    ReferenceDecision,
    Scenario,
    StateProbeAvailable,
    Tool,
    run_reference_case,
    run_scenario,
)
from windtunnel.errors import ResetFailedError, UsageError
from windtunnel.spi import AgentConfig, MCPHandle, Message, MockServerPlan


class ScriptedHandle:
    """Answers from a fixed list of responses and logs every lifecycle call."""

    def __init__(
        self,
        log: list[str],
        responses: list[Any],
        *,
        fail_reset_at: int | None = None,
        teardown_raises: bool = False,
        tools: list[InProcessMCPHandle] | None = None,
    ) -> None:
        self.log, self.responses = log, list(responses)
        self.fail_reset_at, self.teardown_raises = fail_reset_at, teardown_raises
        self.tools = tools or []
        self.resets = 0
        self.sent: list[tuple[list[Message], str]] = []

    def send(self, messages: list[Message], session_id: str) -> Mapping[str, Any]:
        self.log.append("send")
        self.sent.append((list(messages), session_id))
        response: Mapping[str, Any] = self.responses.pop(0)
        if isinstance(response, dict):
            for name, arguments in response.pop("_execute", []):
                self.tools[0].call(name, arguments)
        return response

    def reset_state(self) -> None:
        self.log.append("reset")
        self.resets += 1
        if self.fail_reset_at == self.resets:
            raise RuntimeError("index survived")

    def teardown(self) -> None:
        self.log.append("teardown")
        if self.teardown_raises:
            raise RuntimeError("teardown broke")


class ScriptedRuntime:
    def __init__(self, handle: ScriptedHandle) -> None:
        self.handle = handle

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> ScriptedHandle:
        self.handle.log.append("provision")
        return self.handle


def answer(content: str, calls: list[Any] | None = None) -> dict[str, Any]:
    return {"content": content, "tool_calls": calls or []}


SCENARIO = Scenario(name="s", prompt="Say done.", target_facts=[["done"]])


def test_provision_once_reset_before_every_run_teardown_once() -> None:
    log: list[str] = []
    runtime = ScriptedRuntime(ScriptedHandle(log, [answer("done"), answer("done"), answer("nope")]))
    results = run_scenario(runtime, SCENARIO, runs=3)
    assert log == ["provision", "reset", "send", "reset", "send", "reset", "send", "teardown"]
    assert [r.score.passed for r in results] == [True, True, False]
    assert len({r.trace.session_id for r in results}) == 3


def test_failed_wipe_is_fatal_and_keeps_what_was_recorded(tmp_path: Path) -> None:
    log: list[str] = []
    runtime = ScriptedRuntime(ScriptedHandle(log, [answer("done")] * 3, fail_reset_at=2))
    with pytest.raises(ResetFailedError, match="index survived"):
        run_scenario(runtime, SCENARIO, runs=3, out_dir=tmp_path)
    assert log == ["provision", "reset", "send", "reset", "teardown"]
    written = sorted(p.name for p in tmp_path.rglob("*.json"))
    assert written == ["run-0.score.json", "run-0.trace.json", "run-1.score.json", "run-1.trace.json"]
    assert '"kind": "setup"' in (tmp_path / "_" / "s" / "run-1.trace.json").read_text()


def test_multi_turn_reuses_one_session_and_sends_the_conversation() -> None:
    handle = ScriptedHandle([], [answer("which?"), answer("done")])
    scenario = Scenario(name="m", prompt=["refund please", "the lamp"], target_facts=[["done"]])
    (result,) = run_scenario(ScriptedRuntime(handle), scenario)
    (_first, s1), (second, s2) = handle.sent
    assert s1 == s2 == result.trace.session_id
    assert [m["content"] for m in second] == ["refund please", "which?", "the lamp"]
    assert result.score.passed and len(result.trace.turns) == 2


def test_teardown_that_raises_never_escapes() -> None:
    handle = ScriptedHandle([], [answer("done")], teardown_raises=True)
    (result,) = run_scenario(ScriptedRuntime(handle), SCENARIO)
    assert result.score.passed


def test_send_errors_are_recorded_as_runtime_errors() -> None:
    handle = ScriptedHandle([], ["not a dict"])
    (result,) = run_scenario(ScriptedRuntime(handle), SCENARIO)
    assert result.trace.error is not None and result.trace.error.kind == "runtime"
    assert result.score.status.value == "error"


def counter_server() -> MockServer:
    def bump(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        state["count"] += arguments["by"]
        return {"count": state["count"]}

    schema = {"type": "object", "properties": {"by": {"type": "integer"}}, "required": ["by"]}
    return MockServer(
        "counter", [Tool(name="bump", description="add", input_schema=schema, handler=bump)], {"count": 0}
    )


def mocks() -> list[InProcessMCPHandle]:
    return [InProcessMCPHandle(MockServerPlan(pack="p", server="counter", factory=counter_server))]


def test_hidden_tool_call_is_an_integrity_error() -> None:
    tools = mocks()
    hidden = answer("done")
    hidden["_execute"] = [("bump", {"by": 2})]
    (result,) = run_scenario(ScriptedRuntime(ScriptedHandle([], [hidden], tools=tools)), SCENARIO, mcps=tools)
    assert result.trace.error is not None and result.trace.error.kind == "integrity"
    assert "did not report" in result.trace.error.message and "bump" in result.trace.error.message


def test_reported_calls_matching_evidence_pass_and_state_is_fresh_per_run() -> None:
    tools = mocks()

    class Probe:
        def snapshot(self) -> Mapping[str, Any]:
            return {h.name: h.state() for h in tools}

    responses = []
    for _ in range(2):
        response = answer("done", [{"name": "bump", "arguments": {"by": 2}}])
        response["_execute"] = [("bump", {"by": 2})]
        responses.append(response)
    runtime = ScriptedRuntime(ScriptedHandle([], responses, tools=tools))
    results = run_scenario(runtime, SCENARIO, mcps=tools, state_probe=Probe(), runs=2)
    assert [r.trace.state for r in results] == [{"counter": {"count": 2}}] * 2
    assert all(r.trace.error is None for r in results)
    assert results[0].trace.mcp_calls is not None and results[0].trace.mcp_calls[0]["arguments"] == {"by": 2}


def test_precondition_without_probe_is_an_error() -> None:
    scenario = Scenario(name="s", prompt="p", target_facts=[["done"]], preconditions=[StateProbeAvailable()])
    (result,) = run_scenario(ScriptedRuntime(ScriptedHandle([], [answer("done")])), scenario)
    assert result.trace.error is not None and result.trace.error.kind == "precondition"


def test_failing_probe_is_probe_capture_error() -> None:
    class Broken:
        def snapshot(self) -> Mapping[str, Any]:
            raise OSError("mock gone")

    (result,) = run_scenario(
        ScriptedRuntime(ScriptedHandle([], [answer("done")])), SCENARIO, state_probe=Broken()
    )
    assert result.trace.error is not None and result.trace.error.kind == "probe-capture"
    assert "mock gone" in result.trace.error.message


def test_reference_cases_need_a_reference_capable_runtime() -> None:
    scenario = Scenario(
        name="r",
        prompt="p",
        target_facts=[["done"]],
        reference_cases=[
            ReferenceCase(name="g", kind="golden", decisions=(ReferenceDecision(content="done"),))
        ],
    )
    with pytest.raises(UsageError, match="no provision_reference"):
        run_reference_case(ScriptedRuntime(ScriptedHandle([], [])), scenario, "g")


def test_batch_writes_each_run_as_it_ends(tmp_path: Path) -> None:
    log: list[str] = []
    pack = Pack(name="p", scenarios=[SCENARIO, Scenario(name="t", prompt="x", target_facts=[["done"]])])
    runtime = ScriptedRuntime(ScriptedHandle(log, [answer("done")] * 4))
    writer = RunWriter(tmp_path)
    spec = BatchSpec(
        runtime=runtime, runtime_name="rt", pack=pack, scenarios=pack.scenarios, config=AgentConfig(), runs=2
    )
    results = run_batch(spec, writer)
    assert log.count("provision") == 1 and log.count("teardown") == 1 and log.count("reset") == 4
    assert len(results) == 4 and len(list(tmp_path.rglob("*.trace.json"))) == 4


def test_same_named_scenarios_of_two_packs_never_share_a_session(tmp_path: Path) -> None:
    writer = RunWriter(tmp_path)
    sessions = []
    for name in ("north", "south"):
        pack = Pack(name=name, scenarios=[SCENARIO])
        handle = ScriptedHandle([], [answer("done")])
        spec = BatchSpec(
            runtime=ScriptedRuntime(handle),
            runtime_name="rt",
            pack=pack,
            scenarios=pack.scenarios,
            config=AgentConfig(),
            sweep_id="sw1",
        )
        (result,) = run_batch(spec, writer)
        assert handle.sent[0][1] == result.trace.session_id
        sessions.append(result.trace.session_id)
    assert sessions == ["wt-sw1-north-s-0", "wt-sw1-south-s-0"]


def test_a_batch_whose_provision_raises_records_each_run_as_a_runtime_error(tmp_path: Path) -> None:
    class Refusing:
        def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> ScriptedHandle:
            raise ConnectionRefusedError("no backend")

    pack = Pack(name="p", scenarios=[SCENARIO])
    spec = BatchSpec(
        runtime=Refusing(),
        runtime_name="rt",
        pack=pack,
        scenarios=pack.scenarios,
        config=AgentConfig(),
        runs=2,
    )
    results = run_batch(spec, RunWriter(tmp_path))
    assert [r.score.status.value for r in results] == ["error", "error"]
    error = results[0].trace.error
    assert error is not None and error.kind.value == "runtime" and error.cause == "RuntimeFault"
    assert error.message == "runtime 'rt': provision() raised ConnectionRefusedError: no backend"
    assert len(list(tmp_path.rglob("*.score.json"))) == 2
