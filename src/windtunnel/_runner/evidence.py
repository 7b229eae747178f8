"""Evidence a run collects besides the runtime's own report, and the integrity cross-check."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel._core.abilities import ToolListingMCPHandle
from windtunnel._core.agent_runtime import (
    AgentHandle,
    MCPHandle,
    ModelEvidenceHandle,
    RecordingMCPHandle,
    StateProbe,
)
from windtunnel._trace.models import Trace
from windtunnel._trace.shapes import call_arguments, call_name
from windtunnel.errors import IntegrityError, ProbeError, WindTunnelError


def recording(mcps: Sequence[MCPHandle]) -> list[RecordingMCPHandle]:
    return [handle for handle in mcps if isinstance(handle, RecordingMCPHandle)]


def reset_mocks(mcps: Sequence[MCPHandle]) -> None:
    """Fresh fixture state and an empty call log on every recording mock, before each run."""
    for handle in recording(mcps):
        handle.reset()


def drain_model_requests(handle: AgentHandle) -> list[dict[str, Any]] | None:
    if isinstance(handle, ModelEvidenceHandle):
        return handle.model_requests()
    return None


def mcp_calls(mcps: Sequence[MCPHandle]) -> list[dict[str, Any]] | None:
    handles = recording(mcps)
    if not handles:
        return None
    calls = [call for handle in handles for call in handle.calls()]
    return sorted(calls, key=lambda call: float(call.get("at") or 0.0))


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


def _key(name: object, arguments: object) -> str:
    return json.dumps([name, arguments], sort_keys=True, default=str)


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
    """Every reported tool call must have reached a mock, and every call a mock received must be reported.

    Calls compare as a multiset of (name, decoded arguments): runtimes may run a turn's calls in
    parallel, so arrival order is not evidence; a missing, extra or altered call is. A reported call to a
    tool name no mock of the run serves is not hidden from the mocks: the model invented the tool and the
    runtime told it so. Such calls go to `trace.unknown_tool_calls` as evidence. The mocks' tool lists
    are only read when some reported call reached no mock.
    """
    if trace.mcp_calls is None:
        return
    reported_calls = [(turn.index, call) for turn in trace.turns for call in turn.tool_calls]
    reported = Counter(_key(call_name(call), call_arguments(call)) for _, call in reported_calls)
    received = Counter(_key(call.get("name"), call.get("arguments")) for call in trace.mcp_calls)
    if reported == received:
        return
    hidden = list((received - reported).elements())
    invented = reported - received
    served = served_tools(mcps) if invented else None
    if served is not None:
        unknown = _unknown_calls(reported_calls, invented, served)
        if unknown:
            trace.unknown_tool_calls = unknown
            invented -= Counter(_key(entry["name"], entry["arguments"]) for entry in unknown)
    _raise_mismatch(hidden, list(invented.elements()))


def _unknown_calls(
    reported: Sequence[tuple[int, Any]], invented: Counter[str], served: frozenset[str]
) -> list[dict[str, Any]]:
    """The reported calls no mock received whose tool no mock serves, in report order."""
    left = Counter(invented)
    unknown = []
    for turn, call in reported:
        name, arguments = call_name(call), call_arguments(call)
        key = _key(name, arguments)
        if name is not None and name not in served and left[key] > 0:
            left[key] -= 1
            unknown.append({"turn": turn, "name": name, "arguments": arguments})
    return unknown


def _raise_mismatch(hidden: list[str], invented: list[str]) -> None:
    parts = []
    if hidden:
        parts.append(
            f"the mocks received {len(hidden)} call(s) the runtime did not report: {', '.join(hidden)}"
        )
    if invented:
        parts.append(f"the runtime reported {len(invented)} call(s) no mock received: {', '.join(invented)}")
    if not parts:
        return
    raise IntegrityError(
        "; ".join(parts),
        hint="report every tool call of the turn, intermediate ones included, exactly as executed (docs/conformance.md#intermediate_tool_calls)",
    )
