"""Preconditions checked before a run is scored; a failed one makes the run an ERROR (precondition)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from windtunnel._core.agent_runtime import StateProbe


@dataclass(frozen=True, slots=True, kw_only=True)
class PreconditionContext:
    """What a precondition may look at: only what the caller wired, never runtime internals (docs/selftests.md)."""

    scenario: str
    runtime: str
    state_probe: StateProbe | None


@runtime_checkable
class Precondition(Protocol):
    """`check()` returns None when it holds, or one sentence saying why it does not."""

    def check(self, context: PreconditionContext) -> str | None: ...


@dataclass(frozen=True, slots=True)
class StateProbeAvailable:
    """Holds when the caller passed a StateProbe; it does not discover probes hidden elsewhere."""

    def check(self, context: PreconditionContext) -> str | None:
        if context.state_probe is None:
            return (
                "StateProbeAvailable(): no state probe was wired for this run; give the pack a "
                "state_probe_factory or pass state_probe= to run_scenario()"
            )
        return None
