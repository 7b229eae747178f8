"""The MCP fault checks (`faults/mcp_*`): a tool call fails as scripted on the mock, and the runtime must
report what really happened (docs/conformance.md, "Faults"). `mcp_gone` is the harness's own: the server
is cut off from the runtime's network (every connection refused) when the turn starts.

The script: one lookup, then an answer. The mock answers that lookup with the fault. The runtime may
report the turn failed (a Contract C error). If it answers instead, the three views must agree on the
calls (each reported call one the mock received), and the model must be told the truth about the call:
an error result's or a JSON-RPC error's text, a crash as a failure (its result names an error), a late
answer as the answer the tool gave. A fault the policy names in `unhandled` is INFO with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from windtunnel._conformance.checks_faults import attempt, declared_unhandled, session_id
from windtunnel._conformance.checks_views import views_of
from windtunnel._conformance.model import CheckFailed, NotMeasured
from windtunnel._conformance.subject import Session, Subject, call, say, tools
from windtunnel._conversation.compare import INTEGRITY_KINDS, judge, result_problem
from windtunnel._conversation.model import DiffKind, ToolCallRow
from windtunnel._core.abilities import FaultScriptingMCPHandle, PeerCuttingHandle, ToolListingMCPHandle
from windtunnel._core.agent_runtime import MCPHandle
from windtunnel._core.faults import TOOL_FAULT_CLASSES, ToolFault
from windtunnel._runner.evidence import mcp_calls
from windtunnel.errors import HarnessError

LATE_S = 2.0
"""How late a `late` tool answers: within any runtime's patience for one tool call."""
DONE = "wt-fault-tool-done"
WARM = "wt-fault-tool-warm"
TITLES = {
    "mcp_error": "a tool's error result reaches the model as that call's result",
    "mcp_jsonrpc_error": "a JSON-RPC error reaches the model as that call's failure",
    "mcp_crash": "a server that drops the connection mid-call is reported as a failed call, never a result",
    "mcp_late": "a tool that answers late: the answer it gave reaches the model",
    "mcp_gone": "a server gone when the turn starts is reported as a failed call or turn, never a result",
}
GONE = "gone"
"""The kind of `mcp_gone`: no server answers at all (the harness refuses the runtime's connections)."""
UNSERVED = frozenset({"crash", GONE})
"""The kinds that leave a call no server received: the model must be told it failed."""
FAILURE_WORDS = re.compile(
    r"error|fail|clos|disconnect|crash|abort|unavailable|broken|timeout", re.IGNORECASE
)
"""What a result the model is sent for a crashed call must say in some form: that the call failed."""


def tool_fault_check(fault: str) -> Callable[[Subject], dict[str, Any]]:
    kind = TOOL_FAULT_CLASSES.get(fault, GONE)

    def run(subject: Subject) -> dict[str, Any]:
        declared_unhandled(subject.faults, fault)
        # A gone server was there for the session's first turn: the runtime had it connected and listed.
        warm = [say(WARM)] if kind == GONE else []
        script = [*warm, tools(call("lookup", key="alpha")), say(DONE)]
        with subject.scripted(script, name=f"fault-{fault}") as session:
            subject.needs_model_evidence(session)
            mock = next((m for m in session.mcps if "lookup" in _tools(m)), None)
            sid = session_id(fault)
            if warm:
                session.turn("Answer.", sid)
            _arm(subject, session, mock, kind)
            evidence = attempt(session, "Read note alpha, then answer.", sid)
            if kind == GONE:
                _confirm_gone(mock, evidence)
            if "failed" in evidence:  # reported as failed: honest whatever the fault
                return evidence
            conversation, served = views_of(session)
        rows = [row for turn in conversation.turns for row in turn.tool_calls]
        evidence["rows"] = [_row(row) for row in rows]
        # Results are judged below, fault by fault; a crashed call is one no server received.
        unserved = {DiffKind.NOT_RECEIVED, DiffKind.REPORTED_NOT_RECEIVED} if kind in UNSERVED else set()
        broken = judge(conversation, served, INTEGRITY_KINDS - {DiffKind.RESULT, *unserved}).broken
        if broken:
            raise CheckFailed(
                f"after a {fault} the views disagree: {'; '.join(b.text for b in broken[:3])}", evidence
            )
        for row in rows:
            problem = _untold(kind, row)
            if problem is not None:
                raise CheckFailed(problem, evidence)
        return evidence

    return run


def _arm(subject: Subject, session: Session, mock: MCPHandle | None, kind: str) -> None:
    """Make the lookup server fail as `kind` says from the next call on."""
    if kind == GONE:
        if mock is None or not isinstance(session.handle, PeerCuttingHandle):
            raise NotMeasured(f"{subject.name}'s handle cannot be cut off from an MCP server (no cut_off())")
        session.handle.cut_off(mock)
        return
    if not isinstance(mock, FaultScriptingMCPHandle):
        raise NotMeasured(f"{subject.name}'s MCP mocks cannot be scripted to fail (no script_faults())")
    # Twice for a crash: a client's transport may send a request again once when its connection drops
    # (aiohttp does); the runtime itself must still meet the failure.
    faults = [ToolFault(tool="lookup", kind=kind, seconds=LATE_S)] * (2 if kind == "crash" else 1)  # type: ignore[arg-type]
    mock.script_faults(faults)


def _confirm_gone(mock: MCPHandle | None, evidence: dict[str, Any]) -> None:
    """The cut-off server received nothing: otherwise the fault never happened (Wind Tunnel's error)."""
    received = mcp_calls([mock]) if mock is not None else []
    evidence["gone_server_received"] = [c.get("name") for c in received or []]
    if received:
        raise HarnessError(
            f"the MCP server cut off from the runtime still received {evidence['gone_server_received']}: "
            "the mcp_gone fault did not happen"
        )


def _tools(mock: MCPHandle) -> list[str]:
    """The tool names `mock` serves; [] for a mock that cannot list them. A listing that fails raises its
    HarnessError: calling a slow mock one that "cannot be scripted" would hide the real fault."""
    return [str(t.get("name")) for t in mock.tools()] if isinstance(mock, ToolListingMCPHandle) else []


def _untold(kind: str, row: ToolCallRow) -> str | None:
    """Why the model was not told the truth about this call; None when it was."""
    sent = row.result_to_model
    if row.mock is None:  # no server served it: only a crash or a gone server leaves such a call
        if kind in UNSERVED and row.model is not None and sent is not None and not FAILURE_WORDS.search(sent):
            return (
                f"the MCP server was unreachable ({kind}) during {row.model.name}, yet the model was sent "
                f"{sent[:160]!r}, which does not say the call failed: a result no server served"
            )
        return None
    if sent is None:
        return f"the model was never sent a result for {row.mock.name}, yet the turn answered"
    return result_problem(row)


def _row(row: ToolCallRow) -> dict[str, Any]:
    mock = row.mock
    return {
        "tool": mock.name if mock else None,
        "mock_error": mock.error if mock else None,
        "is_error": mock.is_error if mock else None,
        "result_to_model": row.result_to_model,
    }


def tool_fault_checks() -> list[tuple[str, str, Callable[[Subject], dict[str, Any]]]]:
    """(fault, title, check) of every MCP tool fault."""
    return [(fault, TITLES[fault], tool_fault_check(fault)) for fault in (*TOOL_FAULT_CLASSES, "mcp_gone")]
