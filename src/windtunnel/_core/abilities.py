"""Optional abilities of runtimes and handles, each a runtime_checkable Protocol whose docstring is its contract.

A runtime without an ability is still a valid runtime: the check that needs it reports NOT_MEASURED and
says why. Wind Tunnel detects abilities with isinstance() where it needs them, never once per turn (an
isinstance() against a runtime_checkable Protocol inspects the object's attributes each time).
See also `ReferenceCapableAgentRuntime`, `MCPHostingAgentRuntime` and `ModelEvidenceHandle` in
windtunnel._core.agent_runtime.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, TypeVar, runtime_checkable

from windtunnel._core.agent_runtime import MCPHandle, StateProbe
from windtunnel._core.faults import ToolFault

__all__ = [
    "ClosableRuntime",
    "ContainerListingRuntime",
    "EgressAttempt",
    "EgressProbingRuntime",
    "EgressReport",
    "ImageDigestsRuntime",
    "KillableHandle",
    "ReachAttempt",
    "ReachRecordingRuntime",
    "StateProbingRuntime",
    "ToolListingMCPHandle",
]

_A = TypeVar("_A")


def has_ability(value: object, ability: Callable[..., _A]) -> TypeGuard[_A]:
    """`isinstance(value, ability)` for a runtime_checkable Protocol, cheap when the answer is yes.

    On Python 3.11 every isinstance() against a Protocol lists the Protocol's members again (a walk of
    its classes' namespaces). Its rule for yes is that the value has every member, a method not None:
    here the member names are listed once per Protocol and the value's attributes read, a few dict
    lookups. Anything else (a member missing or None, a Python whose typing lists no members) is
    isinstance()'s to decide, so the answer is always isinstance()'s.
    """
    members = _members(ability)
    if members is not None and all(getattr(value, name, None) is not None for name in members):
        return True
    return isinstance(value, typing.cast(type, ability))


@functools.cache
def _members(ability: object) -> frozenset[str] | None:
    listed = getattr(ability, "__protocol_attrs__", None)  # Python 3.12 keeps them on the class
    if listed is None:
        lister = getattr(typing, "_get_protocol_attrs", None)  # Python 3.11 lists them on each check
        listed = lister(ability) if lister is not None else None
    return frozenset(listed) if listed is not None else None


CONNECTED = "connected"
ROUTABLE = "routable"
"""Outcomes of an egress attempt that mean a way out: a TCP connection was made, or (for a target that is
looked up, never sent to, such as the metadata address) the routing table has a route to it."""


@dataclass(frozen=True, slots=True)
class EgressAttempt:
    """One attempt from inside the runtime's network namespace: `target` (`address:port`, or an address
    that is only looked up in the routing table), what it `stands_for`, and its `outcome`: `connected`,
    `refused`, `unreachable`, `timed out`, `no route` or `routable` (the last two: looked up, not sent).
    A `peer` (the gateway, a mock) must connect; every other target must not."""

    target: str
    stands_for: str
    outcome: str
    peer: bool = False

    @property
    def open(self) -> bool:
        return self.outcome in {CONNECTED, ROUTABLE}


@dataclass(frozen=True, slots=True)
class ReachAttempt:
    """Something a runtime tried to reach and its fence refused, `count` times: a name its resolver refused
    (`kind` "lookup", `protocol` "dns", `detail` the query types) or a connection the firewall blocked
    (`kind` "connection", `target` the address, `port` and `protocol` as sent; `detail` what the address
    is, when known)."""

    kind: str
    target: str
    protocol: str
    count: int
    port: int | None = None
    detail: str = ""

    def line(self) -> str:
        """How the report lists it: `tried to reach <name>: 3 lookups, refused`."""
        if self.kind == "lookup":
            what = f"{self.count} lookup{'s' if self.count != 1 else ''} ({self.detail}), refused"
            return f"tried to reach {self.target}: {what}"
        where = f"{self.target}:{self.port}" if self.port is not None else self.target
        known = f" ({self.detail})" if self.detail else ""
        plural = "s" if self.count != 1 else ""
        return f"tried to reach {where}/{self.protocol}{known}: {self.count} packet{plural}, blocked"


@dataclass(frozen=True, slots=True)
class EgressReport:
    """What a probe in the runtime's own network namespace could reach, and that namespace's routes.

    `routes` are its routing table as `destination/prefix` (`via gateway` when routed through one);
    `allowed_routes` the peers' subnet, the only route a closed namespace may have. `control` records the
    same host targets tried from the run's network without the fence: evidence of what the fence stops,
    never judged.
    """

    attempts: tuple[EgressAttempt, ...]
    routes: tuple[str, ...]
    allowed_routes: tuple[str, ...]
    control: tuple[EgressAttempt, ...] = ()
    fence_recorded: tuple[ReachAttempt, ...] = ()
    """The probe's own blocked attempts as the fence recorded them: evidence that the record bites."""

    @property
    def default_route(self) -> bool:
        return any(route.startswith("0.0.0.0/0") or route.startswith("::/0") for route in self.routes)

    def problems(self) -> list[str]:
        """Why the namespace is not closed (empty when it is): a peer that did not answer (then "nothing
        else answered" proves nothing), a non-peer that did, a route other than the peers' subnet."""
        found = [
            f"peer {a.stands_for} ({a.target}) did not answer: {a.outcome}"
            for a in self.attempts
            if a.peer and a.outcome != CONNECTED
        ]
        if not any(a.peer for a in self.attempts):
            found.append("no peer was tried, so an attempt that reached nothing proves nothing")
        found += [f"{a.stands_for} ({a.target}): {a.outcome}" for a in self.attempts if not a.peer and a.open]
        found += [
            f"route {route} (only {', '.join(self.allowed_routes)} may exist)"
            for route in self.routes
            if route not in self.allowed_routes
        ]
        return found

    @property
    def closed(self) -> bool:
        return not self.problems()


@runtime_checkable
class ClosableRuntime(Protocol):
    """A runtime that holds resources for its whole run (containers, networks, connections)."""

    def close(self) -> object:
        """Release them. The lifecycle calls it once, after post_run(), on every exit path (error, Ctrl-C, a
        stop signal); it must be idempotent. What it raises is reported (by `wt certify` as a harness
        error), never in place of the run's own error. The return value is ignored."""
        ...


@runtime_checkable
class PrestartingRuntime(Protocol):
    """A runtime that can start the next handle's process while the current one is in use."""

    def prestart_next(self) -> None:
        """From now on, each provision also starts, in the background, a fresh process for the next
        provision that asks for the same (config, mocks); a provision asking for anything else gets one
        started on demand, as without this. Every handle is still a process nothing was sent to before.
        Idempotent; close() stops it and removes what it started, on every exit path; never raises."""
        ...

    def prestarted(self) -> frozenset[str]:
        """The names of the runtime containers started ahead and not handed to any handle yet (a start
        still in flight is waited for): what ContainerListingRuntime lists beyond its handles' containers.
        Empty before prestart_next(); never raises."""
        ...


@runtime_checkable
class ImageDigestsRuntime(Protocol):
    """A runtime that runs images Wind Tunnel built or pulled, so the bundle can name them by digest."""

    @property
    def image_digests(self) -> Mapping[str, str]:
        """Content digests (`sha256:...`) by role: `windtunnel` (gateway and mocks), `runtime:<name>`,
        `netguard` (the egress fence's holder, where the runtime's containers are fenced).
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
        """Probe the network namespace of the most recently provisioned handle, while it runs: the
        gateway and the started mocks must answer; the host, other networks and the metadata address must
        not, and no route but the peers' subnet may exist. Probes and listeners are removed before it
        returns. Raises HarnessError when the probe cannot run or no handle runs."""
        ...


@runtime_checkable
class ReachRecordingRuntime(Protocol):
    """A runtime whose fence records what it tried to reach outside its peers."""

    def reach_attempts(self) -> tuple[ReachAttempt, ...]:
        """Every refused lookup and blocked connection of every container this runtime started so far
        (also of the fresh runtimes it made for tapes), aggregated by what was tried, most tried first.
        Complete once the runtime is closed; never raises."""
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
class SandboxWatchingHandle(Protocol):
    """A handle whose runtime runs in a sandbox the harness can tell apart from a restarted one."""

    def sandbox_identity(self) -> str | None:
        """The life of the sandbox's main process now (its start and process id, as its engine records
        them), equal from one call to the next while that process lives; None when it does not run. Never
        raises. A handle with this ability also fails any turn answered by a restarted sandbox."""
        ...


@runtime_checkable
class MemoryStarvingHandle(Protocol):
    """A handle whose runtime's memory limit the harness controls, so it can be made to run out."""

    def starve_memory(self, headroom: int) -> dict[str, Any]:
        """Lower the runtime's memory limit to what it holds now plus `headroom` bytes, no swap: its next
        large allocation is killed for want of memory. Lasts until teardown. Returns what was held and the
        limit set (bytes); raises HarnessError when it cannot."""
        ...


@runtime_checkable
class SmallTmpRuntime(Protocol):
    """A runtime whose sandboxes can start with a small /tmp of their own, for the harness to fill."""

    def small_tmp(self, size: int) -> AbstractContextManager[None]:
        """Within the block, each provisioned sandbox's /tmp is a filesystem of `size` bytes its handle can
        fill (DiskFillingHandle); outside it, the image's own."""
        ...


@runtime_checkable
class DiskFillingHandle(Protocol):
    """A handle whose runtime's /tmp the harness can fill from outside."""

    def fill_tmp(self) -> dict[str, Any]:
        """Fill the sandbox's small /tmp until no byte is left; what was written and the refusal that
        proves it full. Raises HarnessError when it cannot (a sandbox started outside small_tmp())."""
        ...


@runtime_checkable
class PeerCuttingHandle(Protocol):
    """A handle whose runtime's network the harness controls, so one peer can vanish for it."""

    def cut_off(self, mcp: MCPHandle) -> None:
        """From now on refuse the runtime's every connection to `mcp`'s server, open ones included, as a
        server that is gone would; the server and other handles are untouched. Lasts until teardown. Raises
        HarnessError when it cannot."""
        ...


@runtime_checkable
class ToolListingMCPHandle(MCPHandle, Protocol):
    """An MCP handle that can say which tools its server serves."""

    def tools(self) -> list[dict[str, Any]]:
        """Every tool the server serves, as MCP tool objects (name, description, inputSchema). Raises
        HarnessError when the server cannot be asked."""
        ...


@runtime_checkable
class RequestLoggingMCPHandle(MCPHandle, Protocol):
    """An MCP mock that records every request other than a tools/call it ran (resources, prompts, the
    first round of a call that needs the client's input under the 2026-07-28 transport)."""

    def requests(self) -> list[dict[str, Any]]:
        """Those requests since the last reset, in order, each with server, method, params, answer, error
        and at. Raises HarnessError when the mock cannot be asked."""
        ...


@runtime_checkable
class FaultScriptingMCPHandle(MCPHandle, Protocol):
    """An MCP mock whose next calls can be made to fail as scripted (windtunnel._core.faults)."""

    def script_faults(self, faults: Sequence[ToolFault]) -> None:
        """Queue `faults`; each answers the next call of its tool. Raises HarnessError when the mock
        cannot be asked."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteOutcome:
    """What the official MCP conformance suite judged of one client scenario: its checks (as its checks.json
    holds them), its log, and the URL it gave its client before Wind Tunnel named the server by its alias."""

    scenario: str
    checks: list[dict[str, Any]]
    log: str
    suite_url: str


@runtime_checkable
class McpSuiteScenario(Protocol):
    """A started client scenario of the official MCP conformance suite."""

    @property
    def server(self) -> MCPHandle:
        """The scenario's test server, as the runtime's containers reach it."""
        ...

    def finish(self) -> SuiteOutcome:
        """Tell the suite its client is done (the runtime's turns are over) and return its verdict."""
        ...

    def close(self) -> None:
        """Remove what the scenario started; idempotent, never raises."""
        ...


@runtime_checkable
class McpSuiteHostingRuntime(Protocol):
    """A runtime that can run a client scenario of the official MCP conformance suite where its MCP client
    reaches the scenario's server (the `mcp_client/suite_*` checks drive its agent loop against it)."""

    def start_mcp_suite(self, scenario: str, *, client_timeout_s: float) -> McpSuiteScenario:
        """Start `scenario` and return it once its server listens; the suite waits `client_timeout_s` for
        the client to finish before it judges."""
        ...
