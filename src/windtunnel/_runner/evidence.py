"""Evidence a run collects besides the runtime's own report, and the integrity cross-check."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from windtunnel._trace.models import Trace
from windtunnel._trace.shapes import call_arguments, call_name
from windtunnel.errors import IntegrityError, ProbeError, WindTunnelError
from windtunnel.spi.agent_runtime import (
    AgentHandle,
    MCPHandle,
    ModelEvidenceHandle,
    RecordingMCPHandle,
    StateProbe,
)


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


def check_integrity(trace: Trace) -> None:
    """Every reported tool call must have reached a mock, and every call a mock received must be reported.

    Calls compare as a multiset of (name, decoded arguments): runtimes may run a turn's calls in
    parallel, so arrival order is not evidence; a missing, extra or altered call is.
    """
    if trace.mcp_calls is None:
        return
    reported = Counter(
        _key(call_name(call), call_arguments(call)) for turn in trace.turns for call in turn.tool_calls
    )
    received = Counter(_key(call.get("name"), call.get("arguments")) for call in trace.mcp_calls)
    if reported == received:
        return
    hidden = list((received - reported).elements())
    invented = list((reported - received).elements())
    parts = []
    if hidden:
        parts.append(
            f"the mocks received {len(hidden)} call(s) the runtime did not report: {', '.join(hidden)}"
        )
    if invented:
        parts.append(f"the runtime reported {len(invented)} call(s) no mock received: {', '.join(invented)}")
    raise IntegrityError(
        "; ".join(parts),
        hint="report every tool call of the turn, intermediate ones included, exactly as executed (seed 002)",
    )
