"""One run of one scenario on a provisioned handle: reset, preconditions, turns, evidence, score."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from windtunnel._core.agent_runtime import AgentConfig, AgentHandle, MCPHandle, Message, StateProbe
from windtunnel._core.reference import ReferenceCase
from windtunnel._core.tiers import tier_of
from windtunnel._runner.evidence import (
    capture_state,
    check_integrity,
    drain_model_requests,
    mcp_calls,
    reset_mocks,
)
from windtunnel._scenario.model import Scenario
from windtunnel._scenario.preconditions import PreconditionContext
from windtunnel._score.gates import score_trace
from windtunnel._score.models import Score
from windtunnel._trace.models import ErrorKind, Trace, TraceError, Turn
from windtunnel._trace.shapes import read_response
from windtunnel._trace.usage import model_calls, summed_usage
from windtunnel.errors import (
    GatewayError,
    IntegrityError,
    ProbeError,
    ResetFailedError,
    RuntimeFault,
    WindTunnelError,
)


@dataclass(frozen=True, slots=True)
class RunResult:
    trace: Trace
    score: Score


@dataclass(frozen=True, slots=True, kw_only=True)
class RunContext:
    """Everything one run needs besides the handle."""

    scenario: Scenario
    runtime_name: str
    config: AgentConfig
    mcps: Sequence[MCPHandle] = ()
    state_probe: StateProbe | None = None
    run_index: int = 0
    reference_case: ReferenceCase | None = None
    sweep_id: str = ""
    model_label: str | None = None
    attempt: int = 0


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _RunFailed(Exception):
    def __init__(self, error: TraceError) -> None:
        self.error = error


def run_once(handle: AgentHandle, context: RunContext) -> RunResult:
    """Execute one run. A failed wipe raises ResetFailedError after the trace is recorded; all else is scored."""
    trace = _new_trace(context)
    wipe: ResetFailedError | None = None
    try:
        _reset(handle, context)
        _check_preconditions(context)
        drain_model_requests(handle)
        _drive_turns(handle, context, trace)
        _collect_evidence(context, trace)
    except _RunFailedWipe as failed:
        trace.error, wipe = failed.error, failed.wipe
    except _RunFailed as failed:
        trace.error = failed.error
        _salvage_evidence(handle, context, trace)
    trace.ended_at = now()
    result = RunResult(trace=trace, score=score_trace(context.scenario, trace))
    if wipe is not None:
        raise WipeFailed(result, wipe)
    return result


def failed_result(context: RunContext, kind: ErrorKind, exc: BaseException) -> RunResult:
    """The record of a run that failed before it had a handle (mocks, probe or provision raised): a trace
    carrying the error and its ERROR score, written like any other run."""
    trace = _new_trace(context)
    trace.error = _error(kind, exc)
    trace.ended_at = trace.started_at
    return RunResult(trace=trace, score=score_trace(context.scenario, trace))


class WipeFailed(Exception):
    """Carries the recorded result of a run whose wipe failed, so the batch can write it, then stop."""

    def __init__(self, result: RunResult, error: ResetFailedError) -> None:
        super().__init__(str(error))
        self.result = result
        self.error = error


def _new_trace(context: RunContext) -> Trace:
    run_id = uuid.uuid4().hex[:12]
    case = context.reference_case
    return Trace(
        run_id=run_id,
        scenario=context.scenario.name,
        pack=context.scenario.pack,
        runtime=context.runtime_name,
        agent_id=context.config.agent_id,
        variant_id=context.config.variant_id,
        session_id=session_id(context, run_id),
        run_index=context.run_index,
        attempt=context.attempt,
        tier=tier_of(context.scenario),
        model_label=context.model_label,
        reference_case=case.name if case else None,
        reference_kind=case.kind if case else None,
        started_at=now(),
    )


def session_id(context: RunContext, run_id: str) -> str:
    """One session per run: sweep, pack, scenario, reference case and run index, so no two runs share one
    (same-named scenarios of two packs, or a golden and a poison of one scenario, in one sweep)."""
    parts = [context.sweep_id or run_id, context.scenario.pack or "_", context.scenario.name]
    if context.reference_case is not None:
        parts.append(context.reference_case.name)
    parts.append(str(context.run_index))
    if context.attempt:
        parts.append(f"retry{context.attempt}")  # a retried live-flaky run starts a session of its own
    return "wt-" + "-".join(parts)


def _error(kind: ErrorKind, exc: BaseException, hint: str | None = None) -> TraceError:
    if isinstance(exc, WindTunnelError):
        return TraceError(kind=kind, message=exc.message, hint=exc.hint or hint, cause=type(exc).__name__)
    return TraceError(kind=kind, message=f"{type(exc).__name__}: {exc}", hint=hint, cause=type(exc).__name__)


def _reset(handle: AgentHandle, context: RunContext) -> None:
    try:
        reset_mocks(context.mcps)
    except Exception as exc:
        raise _RunFailed(_error(ErrorKind.SETUP, exc, "the MCP mocks could not be reset")) from exc
    try:
        handle.reset_state()
    except Exception as exc:
        wipe = (
            exc
            if isinstance(exc, ResetFailedError)
            else ResetFailedError(
                f"reset_state() raised {type(exc).__name__}: {exc}",
                hint="reset_state() must wipe every session, memory and index and return; the batch stops here",
                runtime=context.runtime_name,
            )
        )
        raise _RunFailedWipe(_error(ErrorKind.SETUP, wipe), wipe) from exc


class _RunFailedWipe(_RunFailed):
    def __init__(self, error: TraceError, wipe: ResetFailedError) -> None:
        super().__init__(error)
        self.wipe = wipe


def _check_preconditions(context: RunContext) -> None:
    view = PreconditionContext(
        scenario=context.scenario.name, runtime=context.runtime_name, state_probe=context.state_probe
    )
    for precondition in context.scenario.preconditions:
        reason = precondition.check(view)
        if reason is not None:
            raise _RunFailed(
                TraceError(kind=ErrorKind.PRECONDITION, message=reason, cause=type(precondition).__name__)
            )


def _drive_turns(handle: AgentHandle, context: RunContext, trace: Trace) -> None:
    messages: list[Message] = []
    for index, user in enumerate(context.scenario.turns):
        messages.append({"role": "user", "content": user})
        started = time.perf_counter()
        try:
            response = handle.send(list(messages), trace.session_id)
            read = read_response(response)
        except (RuntimeFault, GatewayError) as exc:
            raise _RunFailed(_error(ErrorKind.RUNTIME, exc)) from exc
        except WindTunnelError as exc:
            raise _RunFailed(_error(ErrorKind.SETUP, exc)) from exc
        except Exception as exc:
            raise _RunFailed(_error(ErrorKind.RUNTIME, exc, "send() raised; see the runtime's logs")) from exc
        latency = (time.perf_counter() - started) * 1000
        requests = drain_model_requests(handle)
        if requests is not None:
            trace.model_requests = [*(trace.model_requests or []), *({**r, "turn": index} for r in requests)]
        prompt = read.rendered_prompt or _prompt_from_requests(requests)
        trace.turns.append(
            Turn(
                index=index,
                user=user,
                response=dict(response),
                shape=read.shape,
                content=read.content,
                tool_calls=read.tool_calls,
                usage=read.usage,
                rendered_prompt=prompt,
                latency_ms=latency,
            )
        )
        messages.append({"role": "assistant", "content": read.content})
    usages = [turn.usage for turn in trace.turns]
    trace.usage = summed_usage(usages)
    trace.model_calls = model_calls(usages, trace.session_id)


def _prompt_from_requests(requests: list[dict[str, Any]] | None) -> str | None:
    """The rendered prompt of a turn seen at the gateway: the messages of its last model call."""
    if not requests:
        return None
    messages = requests[-1].get("messages")
    return json.dumps(messages, sort_keys=True, ensure_ascii=False) if messages is not None else None


def _collect_evidence(context: RunContext, trace: Trace) -> None:
    _fail_on_gateway_error(trace)
    try:
        trace.mcp_calls = mcp_calls(context.mcps)
    except Exception as exc:
        raise _RunFailed(
            _error(ErrorKind.MCP_EVIDENCE, exc, "the MCP mocks' call logs could not be read")
        ) from exc
    try:
        check_integrity(trace, context.mcps)
    except IntegrityError as exc:
        raise _RunFailed(_error(ErrorKind.INTEGRITY, exc)) from exc
    try:
        trace.state = capture_state(context.state_probe)
    except ProbeError as exc:
        raise _RunFailed(_error(ErrorKind.PROBE_CAPTURE, exc)) from exc


def _fail_on_gateway_error(trace: Trace) -> None:
    for request in trace.model_requests or []:
        if request.get("error"):
            raise _RunFailed(
                TraceError(
                    kind=ErrorKind.RUNTIME,
                    message=f"the model gateway refused model call {request.get('index')}: {request['error']}",
                    hint="a reference case must script every model call the agent makes",
                    cause="GatewayError",
                )
            )


def _salvage_evidence(handle: AgentHandle, context: RunContext, trace: Trace) -> None:
    """After a failure, keep whatever evidence can still be read; never raise from here."""
    try:
        requests = drain_model_requests(handle)
        if requests:
            trace.model_requests = [*(trace.model_requests or []), *requests]
        if trace.mcp_calls is None:
            trace.mcp_calls = mcp_calls(context.mcps)
    except Exception:  # noqa: BLE001 - evidence is best effort once the run has already failed
        return
    if trace.error is not None and trace.error.kind is ErrorKind.RUNTIME:
        for request in trace.model_requests or []:
            if request.get("error") and "gateway" not in trace.error.message:
                trace.error = trace.error.model_copy(
                    update={"message": f"{trace.error.message} (model gateway: {request['error']})"}
                )
                break
