"""The runtime under a conformance check, and scripted sessions on it (inference scripted, all else live)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from windtunnel._conformance.model import NotMeasured
from windtunnel._conversation.build import TurnEvidence, conversation, from_trace
from windtunnel._conversation.model import Conversation
from windtunnel._core.agent_runtime import (
    AgentConfig,
    AgentHandle,
    AgentRuntime,
    MCPHandle,
    ModelEvidenceHandle,
    ReferenceCapableAgentRuntime,
)
from windtunnel._core.reference import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel._packs.loader import kit_pack
from windtunnel._packs.pack import Pack
from windtunnel._runner.evidence import drain_model_requests, mcp_calls, reset_mocks
from windtunnel._runner.execute import RunContext, RunResult, run_once
from windtunnel._runner.lifecycle import provisioned, started_mcps, with_mcp_specs
from windtunnel._runtimes.fault_policy import FaultPolicy
from windtunnel._scenario.model import Scenario
from windtunnel._trace.models import Trace
from windtunnel._trace.shapes import ReadResponse, read_response


def call(name: str, **arguments: Any) -> ReferenceToolCall:
    return ReferenceToolCall(name, arguments)


def tools(*calls: ReferenceToolCall) -> ReferenceDecision:
    return ReferenceDecision(tool_calls=calls)


def say(content: str) -> ReferenceDecision:
    return ReferenceDecision(content=content)


def two_step_script() -> list[ReferenceDecision]:
    """The kit pack's `two_step` scenario done right: look up alpha, store the note under beta, report."""
    return [
        tools(call("lookup", key="alpha")),
        tools(call("store", key="beta", value="first note")),
        say("copied"),
    ]


@dataclass(slots=True)
class TurnRecord:
    read: ReadResponse
    requests: list[dict[str, Any]] | None
    session_id: str
    user: str | None = None


@dataclass(slots=True)
class Session:
    """A provisioned, scripted handle with the kit's mocks; `turn()` sends and collects the model evidence."""

    handle: AgentHandle
    mcps: list[MCPHandle]
    config: AgentConfig
    runtime_name: str
    turns: list[TurnRecord] = field(default_factory=list)
    traces: list[Trace] = field(default_factory=list)

    def turn(self, text: str, session_id: str = "wt-kit-1", history: Sequence[Any] = ()) -> TurnRecord:
        drain_model_requests(self.handle)
        response = self.handle.send([*history, {"role": "user", "content": text}], session_id)
        record = TurnRecord(read_response(response), drain_model_requests(self.handle), session_id, text)
        self.turns.append(record)
        return record

    def run(self, scenario: Scenario, case: ReferenceCase | None = None) -> RunResult:
        """The ordinary runner path on this handle (reset, turns, evidence, score)."""
        context = RunContext(
            scenario=scenario,
            runtime_name=self.runtime_name,
            config=self.config,
            mcps=self.mcps,
            reference_case=case,
        )
        result = run_once(self.handle, context)
        self.traces.append(result.trace)
        return result

    def model_evidence(self) -> bool:
        return isinstance(self.handle, ModelEvidenceHandle)

    def conversations(self) -> list[Conversation]:
        """What this session's runs and turns looked like to the model, the mocks and the runtime (read
        before teardown: the mocks' call logs go with them)."""
        found = [from_trace(trace) for trace in self.traces]
        if self.turns:
            sessions = ", ".join(sorted({turn.session_id for turn in self.turns}))
            turns = [TurnEvidence(t.user, t.requests, t.read.tool_calls, t.read.content) for t in self.turns]
            found.append(
                conversation(
                    title=f"session {sessions}",
                    runtime=self.runtime_name,
                    source="session",
                    turns=turns,
                    mock_calls=mcp_calls(self.mcps),
                )
            )
        return found


@dataclass(slots=True)
class Subject:
    """A built runtime and what is known of it: the AgentConfig fields it declares it honours."""

    name: str
    runtime: AgentRuntime
    supported: frozenset[str] | None = None
    manifest: str | None = None
    """Its runtime.toml as messages show it (a missing declaration names the file); None without one."""
    faults: FaultPolicy = field(default_factory=FaultPolicy)
    """Its runtime.toml's `[faults]`: the fault policy the fault checks hold it to (default: no retries)."""
    pack: Pack = field(default_factory=kit_pack)
    recorded: list[Conversation] = field(default_factory=list)
    """The conversations of the scripted sessions since the last check began (the kit empties it)."""

    def reference(self) -> ReferenceCapableAgentRuntime:
        if not isinstance(self.runtime, ReferenceCapableAgentRuntime):
            raise NotMeasured(
                f"{self.name} has no provision_reference(): this check needs scripted inference at the "
                "runtime's model seam (the model gateway)"
            )
        return self.runtime

    @contextmanager
    def scripted(
        self,
        decisions: Sequence[ReferenceDecision],
        config: AgentConfig | None = None,
        *,
        name: str = "kit",
        with_tools: bool = True,
    ) -> Iterator[Session]:
        """A fresh handle whose model answers with `decisions`, torn down (never raising) on exit."""
        runtime = self.reference()
        case = ReferenceCase(name=name, kind="golden", decisions=tuple(decisions))
        with started_mcps(runtime, self.pack.plans() if with_tools else []) as mcps:
            full = with_mcp_specs(config or AgentConfig(), mcps)
            with provisioned(runtime, full, mcps, runtime_name=self.name, case=case) as handle:
                session = Session(handle, list(mcps), full, self.name)
                try:
                    handle.reset_state()
                    reset_mocks(mcps)  # the session's views hold its own calls only (bound mocks outlive it)
                    yield session
                finally:
                    self._record(session)

    def _record(self, session: Session) -> None:
        """Keep the session's conversations as evidence; a failure to read them never changes a check."""
        try:
            self.recorded += session.conversations()
        except Exception as exc:  # noqa: BLE001 - evidence for the report only: noted where a reader sees it
            self.recorded.append(
                Conversation(
                    title=f"session of {self.name}",
                    runtime=self.name,
                    source="session",
                    views=[],
                    error=f"the conversation could not be read: {type(exc).__name__}: {exc}",
                )
            )

    def needs_model_evidence(self, session: Session) -> None:
        if not session.model_evidence():
            raise NotMeasured(f"{self.name}'s handle does not hand over the model gateway's log")
