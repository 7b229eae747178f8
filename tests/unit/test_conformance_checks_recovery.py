"""The recovery check over a small in-process agent loop whose tool calls reach the kit's real (loopback) MCP
mocks: the kill lands while the `pause` tool holds the turn; what the turn raised, what the teardown left
behind and how the next run went decide the status."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from windtunnel._conformance import checks_recovery
from windtunnel._conformance.kit import check_by_id, run_check
from windtunnel._conformance.subject import Subject
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._mcp.client import call_tool
from windtunnel.errors import GatewayError, HarnessError, RuntimeFault, RuntimeUnavailableError
from windtunnel.spi import AgentConfig, MCPHandle, Message, ReferenceCase


class LoopHandle:
    """Plays the runtime's script, one model call per decision; tools run on the mocks in a thread, so
    kill() can end the turn while one is still running."""

    def __init__(self, runtime: LoopRuntime, mcps: list[MCPHandle]) -> None:
        self.runtime, self.mcps = runtime, mcps
        self.killed = threading.Event()
        self.requests: list[dict[str, Any]] = []

    def send(self, messages: list[Message], session_id: str) -> Mapping[str, Any]:
        if self.runtime.script is None:
            raise GatewayError("no script installed", reason="no_script")
        calls: list[dict[str, Any]] = []
        while True:
            decision = self.runtime.script.pop(0)
            self.requests.append({"messages": list(messages), "response": {"content": decision.content}})
            if not decision.tool_calls:
                return {"content": decision.content, "tool_calls": calls}
            for tool in decision.tool_calls:
                if not self.runtime.skips_tools:
                    self._run(tool.name, dict(tool.arguments))
                calls.append({"name": tool.name, "arguments": dict(tool.arguments)})

    def _run(self, name: str, arguments: dict[str, Any]) -> None:
        done = threading.Event()

        def work() -> None:
            # A killed turn's call may outlive the mocks (they stop when its session ends), as a dead
            # runtime's open connection would: its end is nobody's evidence.
            with contextlib.suppress(HarnessError):
                call_tool(self.mcps[0].url, name, arguments)
            done.set()

        threading.Thread(target=work, daemon=True).start()
        while not done.wait(0.02):
            if self.killed.is_set():
                raise self.runtime.death

    def model_requests(self) -> list[dict[str, Any]]:
        taken, self.requests = self.requests, []
        return taken

    def kill(self) -> None:
        self.killed.set()

    def reset_state(self) -> None:
        return None

    def teardown(self) -> None:
        if not self.runtime.keeps_script:
            self.runtime.script = None


class LoopRuntime:
    """`death` is what a killed turn raises; `keeps_script` leaves a case's script installed after teardown;
    `skips_tools` answers without waiting on any tool (so the kill always comes too late)."""

    def __init__(
        self, death: Exception | None = None, keeps_script: bool = False, skips_tools: bool = False
    ) -> None:
        self.death = death or RuntimeUnavailableError("the runtime container exited mid-turn")
        self.keeps_script, self.skips_tools = keeps_script, skips_tools
        self.script: list[Any] | None = None

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> LoopHandle:
        return LoopHandle(self, list(mcps or []))

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> LoopHandle:
        self.script = list(case.decisions)
        return LoopHandle(self, list(mcps or []))


@pytest.fixture(autouse=True)
def short_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks_recovery, "PAUSE_S", 1.0)  # the mock holds the turn for a second only


def _recovery(runtime: LoopRuntime) -> tuple[CheckStatus, str, dict[str, Any]]:
    result = run_check(check_by_id("recovery"), Subject(name="loop", runtime=runtime))
    return result.status, result.detail, result.evidence


def test_a_runtime_killed_mid_turn_that_recovers_passes() -> None:
    status, detail, evidence = _recovery(LoopRuntime())
    assert status is CheckStatus.PASSED, detail
    assert evidence["killed_after_model_calls"] == 1 and evidence["kill"].startswith(
        "RuntimeUnavailableError"
    )
    assert evidence["after"]["content"] == ["copied"] and evidence["after"]["received"] == 2


def test_a_turn_that_answers_before_the_kill_is_not_measured() -> None:
    status, detail, _ = _recovery(LoopRuntime(skips_tools=True))
    assert status is CheckStatus.NOT_MEASURED and "kill came too late" in detail


def test_a_killed_turn_must_surface_as_runtime_unavailable() -> None:
    status, detail, _ = _recovery(LoopRuntime(death=RuntimeFault("HTTP 500 from the runtime")))
    assert status is CheckStatus.FAILED and "must surface as RuntimeUnavailableError" in detail


def test_a_script_that_survives_the_teardown_fails() -> None:
    status, detail, _ = _recovery(LoopRuntime(keeps_script=True))
    assert status is CheckStatus.FAILED and "still got its scripted answer" in detail


class PrestartingLoopRuntime(LoopRuntime):
    """A LoopRuntime whose handles are "containers" it lists, each provision taking the one started ahead
    and starting the next (as the container driver's PrestartingRuntime ability does); `leaves_container`:
    a killed handle's teardown leaves its container behind."""

    def __init__(self, leaves_container: bool = False) -> None:
        super().__init__()
        self.leaves_container = leaves_container
        self.containers: set[str] = set()
        self.ahead = self._new()

    def _new(self) -> str:
        name = f"runtime-{len(self.containers) + 1}"
        self.containers.add(name)
        return name

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> LoopHandle:
        handle = super().provision_reference(config, case, mcps)
        mine, self.ahead = self.ahead, self._new()
        killed = "pause" in str(case.decisions)
        original = handle.teardown

        def teardown() -> None:
            original()
            if not (killed and self.leaves_container):
                self.containers.discard(mine)

        handle.teardown = teardown  # type: ignore[method-assign]
        return handle

    def prestart_next(self) -> None:
        return None

    def prestarted(self) -> frozenset[str]:
        return frozenset({self.ahead})

    def run_network(self) -> str:
        return "run"

    def runtime_containers(self) -> dict[str, dict[str, bool]]:
        return {name: {"run": True} for name in self.containers}


def test_the_container_started_ahead_is_not_a_leftover_of_the_killed_handle() -> None:
    status, detail, evidence = _recovery(PrestartingLoopRuntime())
    assert status is CheckStatus.PASSED, detail
    assert evidence["stale_containers"] == []


def test_a_killed_handle_that_was_started_ahead_must_still_go_with_its_teardown() -> None:
    status, detail, _ = _recovery(PrestartingLoopRuntime(leaves_container=True))
    assert status is CheckStatus.FAILED and "['runtime-1'] survived its teardown" in detail
