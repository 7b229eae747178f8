"""The runtime under a conformance check, and scripted sessions on it (inference scripted, all else live)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from windtunnel._conformance.failure import failed_mid_turn, runtime_log_tail, scripted_step
from windtunnel._conformance.model import NotMeasured
from windtunnel._conversation.build import TurnEvidence, conversation, from_trace
from windtunnel._conversation.model import Conversation, Finding
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
from windtunnel._runtimes.manifest_model import DEFAULT_WIRE
from windtunnel._runtimes.mcp_client import McpClientPolicy
from windtunnel._runtimes.resolve import RuntimeDescription
from windtunnel._scenario.model import Scenario
from windtunnel._trace.models import Trace
from windtunnel._trace.shapes import ReadResponse, read_response
from windtunnel.errors import RuntimeFault


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
    error: str | None = None
    """Why the runtime broke the turn off (its answer is then empty), else None."""


_NO_ANSWER = ReadResponse(shape="flat", content=None, tool_calls=[], usage=None, rendered_prompt=None)


@dataclass(slots=True)
class Session:
    """A provisioned, scripted handle with the kit's mocks; `turn()` sends and collects the model evidence."""

    handle: AgentHandle
    mcps: list[MCPHandle]
    config: AgentConfig
    runtime_name: str
    turns: list[TurnRecord] = field(default_factory=list)
    traces: list[Trace] = field(default_factory=list)
    decisions: tuple[ReferenceDecision, ...] = ()
    findings: list[Finding] = field(default_factory=list)
    """A check's own comparisons on this session, shown with its conversation in the report."""
    run_failure: dict[str, Any] = field(default_factory=dict)
    """For a runner-path run that failed: the scripted step it was on and the runtime's last log lines."""

    def turn(self, text: str, session_id: str = "wt-kit-1", history: Sequence[Any] = ()) -> TurnRecord:
        try:
            return self.turn_or_fault(text, session_id, history)
        except RuntimeFault as fault:
            raise self.failure(fault, text, session_id) from fault

    def turn_or_fault(
        self, text: str, session_id: str = "wt-kit-1", history: Sequence[Any] = ()
    ) -> TurnRecord:
        """One turn. A turn the runtime failed (an error envelope, a 5xx, a timeout) is recorded with its
        error and its model calls so far, and its RuntimeFault raised: `turn` makes that the check's
        failure; a check where failing the turn is a right answer (the fault checks) catches it."""
        drain_model_requests(self.handle)
        try:
            response = self.handle.send([*history, {"role": "user", "content": text}], session_id)
        except RuntimeFault as fault:
            self._record_failed(fault, text, session_id)
            raise
        record = TurnRecord(read_response(response), drain_model_requests(self.handle), session_id, text)
        self.turns.append(record)
        return record

    def broke_off(self, fault: RuntimeFault, text: str, session_id: str) -> Exception:
        """Record a turn the runtime failed (its model calls so far, the error) and return the check's
        failure, naming the scripted step and carrying the runtime's last log lines."""
        self._record_failed(fault, text, session_id)
        return self.failure(fault, text, session_id)

    def failure(self, fault: RuntimeFault, text: str, session_id: str) -> Exception:
        """The check's failure for a turn already recorded as failed."""
        served = sum(len(turn.requests or []) for turn in self.turns)
        step = scripted_step(self.decisions, served)
        return failed_mid_turn(
            fault, text=text, session_id=session_id, step=step, log=runtime_log_tail(self.handle)
        )

    def _record_failed(self, fault: RuntimeFault, text: str, session_id: str) -> None:
        requests = drain_model_requests(self.handle)
        self.turns.append(TurnRecord(_NO_ANSWER, requests, session_id, text, error=str(fault)))

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
        if result.trace.error is not None:  # read now: the container and its log go with the session
            served = len(result.trace.model_requests or [])
            self.run_failure = {
                "scripted_step": scripted_step(case.decisions if case else self.decisions, served),
                "runtime_log": runtime_log_tail(self.handle),
            }
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
            errors = [f"turn {n + 1}: {t.error}" for n, t in enumerate(self.turns) if t.error]
            found.append(
                conversation(
                    title=f"session {sessions}",
                    runtime=self.runtime_name,
                    source="session",
                    turns=turns,
                    mock_calls=mcp_calls(self.mcps),
                    error="; ".join(errors) or None,
                ).model_copy(update={"findings": list(self.findings)})
            )
        return found


DECLARED = ("supported", "unsupported", "wire", "faults", "mcp")
"""The fields of a Subject its runtime.toml declares, named as RuntimeManifest names them."""


@dataclass(slots=True)
class Subject:
    """A built runtime and what is known of it: the AgentConfig fields it declares it honours."""

    name: str
    runtime: AgentRuntime
    supported: frozenset[str] | None = None
    unsupported: Mapping[str, str] = field(default_factory=dict)
    """`[config] unsupported`: fields it declares it cannot honour, each with the reason (INFO where measured)."""
    manifest: str | None = None
    """Its runtime.toml as messages show it (a missing declaration names the file); None without one."""
    wire: str = DEFAULT_WIRE
    """The model wire its manifest declares (`[model] wire`; chat, Contract C's default, without one)."""
    faults: FaultPolicy = field(default_factory=FaultPolicy)
    """Its runtime.toml's `[faults]`: the fault policy the fault checks hold it to (default: no retries)."""
    mcp: McpClientPolicy = field(default_factory=McpClientPolicy)
    """Its runtime.toml's `[mcp]`: what its MCP client declares it hands the model (the mcp_client checks)."""
    pack: Pack = field(default_factory=kit_pack)
    recorded: list[Conversation] = field(default_factory=list)
    """The conversations of the scripted sessions since the last check began (the kit empties it)."""

    @classmethod
    def of(cls, description: RuntimeDescription, runtime: AgentRuntime, *, name: str) -> Subject:
        """The subject `runtime` (built from `description`) is, with what its manifest declares (the
        defaults above when it has none)."""
        manifest = description.manifest
        declared = {key: getattr(manifest, key) for key in DECLARED} if manifest is not None else {}
        return cls(name=name, runtime=runtime, manifest=description.manifest_shown, **declared)

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
        pack: Pack | None = None,
        servers: Sequence[MCPHandle] = (),
    ) -> Iterator[Session]:
        """A fresh handle whose model answers with `decisions`, torn down (never raising) on exit; its
        tools are the mocks of `pack` (the kit's own by default), or `servers` alone when given (MCP
        servers already started elsewhere, such as the official conformance suite's)."""
        runtime = self.reference()
        case = ReferenceCase(name=name, kind="golden", decisions=tuple(decisions))
        plans = (pack or self.pack).plans() if with_tools and not servers else []
        with started_mcps(runtime, plans) as started:
            mcps = [*started, *servers]
            full = with_mcp_specs(config or AgentConfig(), mcps)
            with provisioned(runtime, full, mcps, runtime_name=self.name, case=case) as handle:
                session = Session(handle, list(mcps), full, self.name, decisions=tuple(decisions))
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
