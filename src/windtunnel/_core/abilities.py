"""Optional abilities of runtimes and handles, each a runtime_checkable Protocol whose docstring is its contract.

A runtime without an ability is still a valid runtime: the check that needs it reports NOT_MEASURED and
says why. Wind Tunnel detects abilities with isinstance() where it needs them, never once per turn (an
isinstance() against a runtime_checkable Protocol inspects the object's attributes each time).
See also `ReferenceCapableAgentRuntime`, `MCPHostingAgentRuntime` and `ModelEvidenceHandle` in
windtunnel._core.agent_runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from windtunnel._core.agent_runtime import MCPHandle, StateProbe

__all__ = [
    "ClosableRuntime",
    "ContainerListingRuntime",
    "EgressProbingRuntime",
    "EgressReport",
    "ImageDigestsRuntime",
    "KillableHandle",
    "StateProbingRuntime",
    "ToolListingMCPHandle",
]


@dataclass(frozen=True, slots=True)
class EgressReport:
    """What a probe on the runtime's network could reach: `reached` maps each target to whether it answered.

    `default_route` is evidence only: Docker 20.10 gives internal networks a default route and blocks
    egress with firewall rules, newer engines drop the route; either way the outside must be unreachable.
    """

    default_route: bool
    reached: Mapping[str, bool]
    expected_reachable: tuple[str, ...]
    expected_blocked: tuple[str, ...]

    @property
    def closed(self) -> bool:
        """Everything expected inside answered and nothing expected outside did (unknown counts as open)."""
        inside = all(self.reached.get(target, False) for target in self.expected_reachable)
        outside = not any(self.reached.get(target, True) for target in self.expected_blocked)
        return inside and outside


@runtime_checkable
class ClosableRuntime(Protocol):
    """A runtime that holds resources for its whole run (containers, networks, connections)."""

    def close(self) -> object:
        """Release them. The lifecycle calls it once, after post_run(), on every exit path (error, Ctrl-C, a
        stop signal); it must be idempotent. What it raises is reported (by `wt certify` as a harness
        error), never in place of the run's own error. The return value is ignored."""
        ...


@runtime_checkable
class ImageDigestsRuntime(Protocol):
    """A runtime that runs images Wind Tunnel built or pulled, so the bundle can name them by digest."""

    @property
    def image_digests(self) -> Mapping[str, str]:
        """Content digests (`sha256:...`) by role: `windtunnel` (gateway and mocks), `runtime:<name>`.
        Known once build() returned; never changes afterwards and never raises."""
        ...


@runtime_checkable
class StateProbingRuntime(Protocol):
    """A runtime that can dump its own internal state (the hermetic reset canary reads it)."""

    def state_probe(self) -> StateProbe | None:
        """A StateProbe over the state dump of the most recently provisioned handle (it follows each new
        provision), or None when the runtime declares no state route. No side effect; the probe's
        snapshot() raises ProbeError when the dump cannot be read."""
        ...


@runtime_checkable
class EgressProbingRuntime(Protocol):
    """A runtime whose network Wind Tunnel can place a probe on."""

    def probe_egress(self) -> EgressReport:
        """Start a probe on the runtime's network and report what it reached: the gateway and the started
        mocks must answer, the outside and the host must not. Call it after the run's mocks started; the
        probe is removed before it returns. Raises HarnessError when the probe cannot run."""
        ...


@runtime_checkable
class ContainerListingRuntime(Protocol):
    """A runtime whose containers Wind Tunnel can list and inspect in the engine that runs them."""

    def run_network(self) -> str:
        """The name of the run's own internal network (the only one a runtime container may join)."""
        ...

    def runtime_containers(self) -> Mapping[str, Mapping[str, bool]]:
        """Every runtime container of this run, running or not, by name, with each network it is attached
        to and whether that network is internal. Asked of the engine on every call; raises HarnessError
        when the engine cannot answer."""
        ...


@runtime_checkable
class KillableHandle(Protocol):
    """A handle whose runtime can be killed from outside, as a crash would kill it."""

    def kill(self) -> None:
        """Kill the runtime behind this handle at once (SIGKILL). Safe to call from another thread while
        send() waits; never raises. teardown() is still called afterwards and must clean up."""
        ...


@runtime_checkable
class ToolListingMCPHandle(MCPHandle, Protocol):
    """An MCP handle that can say which tools its server serves."""

    def tools(self) -> list[dict[str, Any]]:
        """Every tool the server serves, as MCP tool objects (name, description, inputSchema). Raises
        HarnessError when the server cannot be asked."""
        ...
