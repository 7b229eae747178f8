"""Reading a check's evidence: whose fault a failed run is, and what the gateway's log says the model saw."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._conformance.model import CheckFailed
from windtunnel._trace.models import ErrorKind, Trace
from windtunnel._wire.dialect import Said
from windtunnel.errors import HarnessError

# Kinds of run error that Wind Tunnel's own machinery causes (mocks, probes, preconditions, setup).
_HARNESS_KINDS = frozenset(
    {ErrorKind.SETUP, ErrorKind.MCP_EVIDENCE, ErrorKind.PROBE_CAPTURE, ErrorKind.PRECONDITION}
)
# A failed wipe is reported as a setup error, but it is the runtime's reset_state() that failed.
_RUNTIME_CAUSES = frozenset({"ResetFailedError"})


def raise_for_run_error(trace: Trace, evidence: Mapping[str, Any] | None = None) -> None:
    """A run that failed before its evidence could be compared: failed when the runtime broke it,
    an error (a HarnessError) when Wind Tunnel's own part did. Integrity errors are left to the check,
    which compares the evidence itself."""
    error = trace.error
    if error is None or error.kind is ErrorKind.INTEGRITY:
        return
    if error.kind in _HARNESS_KINDS and error.cause not in _RUNTIME_CAUSES:
        raise HarnessError(
            f"the run could not be checked: Wind Tunnel's {error.kind.value} step failed: {error.message}",
            hint=error.hint or "see the trace's error; this is not the runtime's fault",
        )
    step = (evidence or {}).get("scripted_step")
    where = (
        f" after {step['model_calls_served']} of {step['steps_scripted']} scripted model call(s) (next due: "
        f"{step['next_due']})"
        if isinstance(step, Mapping)
        else ""
    )
    raise CheckFailed(
        f"the run failed before its evidence could be compared ({error.kind.value}){where}: {error.message}",
        dict(evidence or {}),
    )


def this_turn(said: Sequence[Said]) -> list[Said]:
    """The items after the last user message: this turn's own, whatever history came before."""
    users = [i for i, item in enumerate(said) if item.role == "user"]
    return list(said[users[-1] + 1 :]) if users else list(said)


def tool_id_problems(said: Sequence[Said]) -> list[str]:
    """Where a conversation's tool results do not pair up with the calls they answer.

    Every tool result must answer the id of a call of the assistant item before it, once (chat:
    `tool_call_id`; Anthropic: `tool_result.tool_use_id` <-> `tool_use.id`; Responses:
    `function_call_output.call_id` <-> `function_call.call_id`); every call of that assistant item must be
    answered before the conversation moves on. Positions count the items of windtunnel._trace.shapes.said.
    """
    problems: list[str] = []
    pending: dict[str, bool] | None = None

    def close(position: int) -> None:
        for call_id, answered in (pending or {}).items():
            if not answered:
                problems.append(f"call {call_id!r} (assistant message before {position}) got no tool result")

    for position, item in enumerate(said):
        if item.role == "tool":
            call_id = item.answers
            if pending is None or call_id not in pending:
                problems.append(
                    f"message {position}: a tool result answers call id {call_id!r}, which the assistant "
                    "message before it did not call"
                )
            elif pending[call_id]:
                problems.append(f"message {position}: a second tool result for call id {call_id!r}")
            else:
                pending[call_id] = True
            continue
        close(position)
        pending = None
        if item.role == "assistant" and item.calls:
            pending = {}
            for call in item.calls:
                if not isinstance(call.id, str) or not call.id:
                    problems.append(f"message {position}: a tool call without an id: {dict(call.native)!r}")
                else:
                    pending[call.id] = False
    close(len(said))
    return problems
