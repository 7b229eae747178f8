"""Evidence a run collects besides the runtime's own report, and the integrity cross-check."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._conversation.build import from_trace
from windtunnel._conversation.compare import INTEGRITY_KINDS, judge
from windtunnel._core.abilities import RequestLoggingMCPHandle, ToolListingMCPHandle, has_ability
from windtunnel._core.agent_runtime import (
    AgentHandle,
    MCPHandle,
    ModelEvidenceHandle,
    RecordingMCPHandle,
    StateProbe,
)
from windtunnel._trace.models import Trace
from windtunnel.errors import IntegrityError, ProbeError, WindTunnelError


def recording(mcps: Sequence[MCPHandle]) -> list[RecordingMCPHandle]:
    return [handle for handle in mcps if has_ability(handle, RecordingMCPHandle)]


def reset_mocks(mcps: Sequence[MCPHandle]) -> None:
    """Fresh fixture state and an empty call log on every recording mock, before each run."""
    for handle in recording(mcps):
        handle.reset()


def drain_model_requests(handle: AgentHandle) -> list[dict[str, Any]] | None:
    """The gateway's log of the agent's model calls since the last drain. Side traffic (a harness's title,
    summary, quota or token-count calls, logged with `side`) is not the agent loop: it is left out."""
    if has_ability(handle, ModelEvidenceHandle):  # once per turn: the cheap check
        return [entry for entry in handle.model_requests() if not entry.get("side")]
    return None


def mcp_calls(mcps: Sequence[MCPHandle]) -> list[dict[str, Any]] | None:
    handles = recording(mcps)
    if not handles:
        return None
    calls = [call for handle in handles for call in handle.calls()]
    return sorted(calls, key=lambda call: float(call.get("at") or 0.0))


def mcp_requests(mcps: Sequence[MCPHandle]) -> list[dict[str, Any]]:
    """Every request other than a tools/call run that the mocks recorded, in order (none: no such mock)."""
    requests = [
        request
        for handle in mcps
        if has_ability(handle, RequestLoggingMCPHandle)
        for request in handle.requests()
    ]
    return sorted(requests, key=lambda request: float(request.get("at") or 0.0))


def capture_state(probe: StateProbe | None) -> dict[str, Any] | None:
    if probe is None:
        return None
    try:
        snapshot = probe.snapshot()
    except WindTunnelError:
        raise
    except Exception as exc:
        raise ProbeError(
            f"the state probe failed to capture state: {type(exc).__name__}: {exc}",
            hint="check that the pack's mocks are up and its state_probe_factory reads them",
        ) from exc
    try:
        state: dict[str, Any] = json.loads(json.dumps(dict(snapshot)))
    except (TypeError, ValueError) as exc:
        raise ProbeError(
            f"the state probe returned state that is not JSON ({exc})",
            hint="return only JSON values from StateProbe.snapshot()",
        ) from exc
    return state


def served_tools(mcps: Sequence[MCPHandle]) -> frozenset[str] | None:
    """The tool names the run's mocks serve; None when any mock cannot say.

    A mock says through `tools()` (ToolListingMCPHandle: in-process mocks, and mocks over HTTP, which list
    them over MCP). A mock that cannot list its tools makes the set unknowable: the integrity check then
    treats every unreceived call as an error, as it always did.
    """
    names: set[str] = set()
    for handle in mcps:
        served = _served_by(handle) if isinstance(handle, ToolListingMCPHandle) else None
        if served is None:
            return None
        names |= served
    return frozenset(names)


def _served_by(handle: ToolListingMCPHandle) -> frozenset[str] | None:
    try:
        listed = [tool.get("name") if isinstance(tool, Mapping) else tool for tool in handle.tools()]
    except Exception:  # noqa: BLE001 - an unreadable answer only means we cannot tell
        return None
    names = [name for name in listed if isinstance(name, str)]
    return frozenset(names) if len(names) == len(listed) else None


def check_integrity(trace: Trace, mcps: Sequence[MCPHandle] = ()) -> None:
    """The three views of every tool call agree, one to one and in order, turn by turn: the call the model
    emitted (the gateway's log, when handed over), the call a mock received and the call the runtime
    reported; and the result the model was sent for each call is what the mock answered.

    One comparison (windtunnel._conversation: the conformance checks use the same): a turn's calls may
    reach the mocks in any order (a runtime may run them in parallel), so the runtime's order is compared
    with the model's, never with the mocks'. A reported call to a tool no mock of the run serves is not
    hidden from the mocks: the model invented the tool and the runtime told it so; it goes to
    `trace.unknown_tool_calls` as evidence. The mocks' tool lists are read only when such a call exists.
    """
    if trace.mcp_calls is None:
        return
    conversation = from_trace(trace)
    if not conversation.disagreements:
        return
    judged = judge(conversation, _LazyServed(mcps), INTEGRITY_KINDS)
    if judged.unknown_tools:
        trace.unknown_tool_calls = judged.unknown_tools
    if judged.broken:
        shown = [f"turn {found.turn}: {found.text}" for found in judged.broken[:_SHOWN]]
        more = len(judged.broken) - len(shown)
        raise IntegrityError(
            f"the model's, the mocks' and the runtime's views of the tool calls disagree: {'; '.join(shown)}"
            + (f"; and {more} more" if more > 0 else ""),
            hint="report every tool call of the turn, intermediate ones included, exactly as the model emitted "
            "it and the mock received it, in the model's order, and send the model each result as the tool "
            "answered it (docs/contract-c.md, POST /wt/inject)",
        )


_SHOWN = 5


class _LazyServed:
    """The run's served tool names, asked of the mocks only when a judgement needs them."""

    def __init__(self, mcps: Sequence[MCPHandle]) -> None:
        self._mcps = mcps
        self._known: frozenset[str] | None = None
        self._asked = False

    def get(self) -> frozenset[str] | None:
        if not self._asked:
            self._known, self._asked = served_tools(self._mcps), True
        return self._known
