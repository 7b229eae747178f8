"""A turn the runtime failed mid-check: its last log lines and the scripted step it was on, as evidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from windtunnel._conformance.model import CheckFailed
from windtunnel._core.reference import ReferenceDecision
from windtunnel.errors import RuntimeFault

LOG_LINES = 20


@runtime_checkable
class ContainerBackedHandle(Protocol):
    """A handle whose runtime runs in a container it exposes (the container driver's handles do):
    `container.container` is the engine's container object, whose `logs(tail=n)` are its last lines."""

    @property
    def container(self) -> Any: ...


def runtime_log_tail(handle: object, lines: int = LOG_LINES) -> list[str] | None:
    """The runtime's own last log lines, or None where the handle exposes no container to read them from."""
    if not isinstance(handle, ContainerBackedHandle):
        return None
    try:
        raw = handle.container.container.logs(tail=lines)
    except Exception as exc:  # noqa: BLE001 - evidence only: the failure is reported either way
        return [f"<the runtime's log could not be read: {type(exc).__name__}: {exc}>"]
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return text.splitlines()


def scripted_step(decisions: Sequence[ReferenceDecision], served: int) -> dict[str, Any]:
    """Where in its script a turn stopped: `served` model calls were answered, the next step was due."""
    due = decisions[served] if served < len(decisions) else None
    return {
        "model_calls_served": served,
        "steps_scripted": len(decisions),
        "last_served": _describe(decisions[served - 1]) if 0 < served <= len(decisions) else None,
        "next_due": _describe(due) if due is not None else "none (the script was used up)",
    }


def _describe(decision: ReferenceDecision) -> str:
    if decision.tool_calls:
        return "tool calls " + ", ".join(
            f"{call.name}({', '.join(sorted(call.arguments))})" for call in decision.tool_calls
        )
    return f"answer {decision.content!r}"


def failed_mid_turn(
    fault: RuntimeFault, *, text: str, session_id: str, step: dict[str, Any], log: list[str] | None
) -> CheckFailed:
    """The check's failure for a turn the runtime broke off (a 5xx from /wt/inject, a bad envelope, a
    timeout): what was sent, the scripted step it was on, and the runtime's own last log lines."""
    evidence: dict[str, Any] = {
        "turn": {"session_id": session_id, "user": text},
        "scripted_step": step,
        "runtime_log": log if log is not None else "not available: the handle exposes no container log",
        "error": str(fault),
    }
    where = f"after {step['model_calls_served']} of {step['steps_scripted']} scripted model call(s)"
    return CheckFailed(
        f"the runtime failed during the check, in the turn {text!r} of session {session_id!r} {where} "
        f"(next due: {step['next_due']}): {fault}",
        evidence,
    )
