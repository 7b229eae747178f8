"""Reading a check's evidence: whose fault a failed run is, and what the gateway's log says the model saw."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._conformance.model import CheckFailed
from windtunnel._trace.models import ErrorKind, Trace
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
    raise CheckFailed(
        f"the run failed before its evidence could be compared ({error.kind.value}): {error.message}",
        dict(evidence or {}),
    )


def this_turn(messages: Sequence[Any]) -> list[Mapping[str, Any]]:
    """The messages after the last user message: this turn's own, whatever history came before."""
    dicts = [m for m in messages if isinstance(m, Mapping)]
    users = [i for i, m in enumerate(dicts) if m.get("role") == "user"]
    return dicts[users[-1] + 1 :] if users else dicts


def tool_id_problems(messages: Sequence[Any]) -> list[str]:
    """Where a conversation's tool results do not pair up with the calls they answer.

    Every `tool` message must answer a `tool_call_id` of the assistant message before it, once; every
    call of that assistant message must be answered before the conversation moves on.
    """
    problems: list[str] = []
    pending: dict[str, bool] | None = None

    def close(position: int) -> None:
        for call_id, answered in (pending or {}).items():
            if not answered:
                problems.append(f"call {call_id!r} (assistant message before {position}) got no tool result")

    for position, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "tool":
            call_id = message.get("tool_call_id")
            if pending is None or call_id not in pending:
                problems.append(
                    f"message {position}: a tool result answers tool_call_id {call_id!r}, which the assistant "
                    "message before it did not call"
                )
            elif pending[call_id]:
                problems.append(f"message {position}: a second tool result for tool_call_id {call_id!r}")
            else:
                pending[call_id] = True
            continue
        close(position)
        pending = None
        if role == "assistant" and message.get("tool_calls"):
            pending = {}
            for call in message["tool_calls"]:
                call_id = call.get("id") if isinstance(call, Mapping) else None
                if not isinstance(call_id, str) or not call_id:
                    problems.append(f"message {position}: a tool call without an id: {call!r}")
                else:
                    pending[call_id] = False
    close(len(messages))
    return problems
