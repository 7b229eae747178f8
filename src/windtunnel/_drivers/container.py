"""The container driver: a runtime image speaking Contract C, wired to the model gateway and the pack's
MCP mocks on a per-run network it cannot leave.

`ContainerRuntime` implements AgentRuntime and MCPHostingAgentRuntime, the optional abilities of
windtunnel._core.abilities (close, image digests, state probe, egress probe, reach record, container listing; its handles
can be killed) and FreshGatewayRuntime (windtunnel._runtimes.abilities: a fresh runtime for the tapes); `ReferenceContainerRuntime` adds provision_reference() for runtimes whose manifest says
every model call goes through the gateway.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Hashable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from docker.errors import DockerException

from windtunnel._core.abilities import EgressReport, McpSuiteScenario, ReachAttempt
from windtunnel._core.agent_runtime import (
    AgentConfig,
    MCPHandle,
    Message,
    MockServerPlan,
    Response,
    StateProbe,
)
from windtunnel._core.reference import ReferenceCase
from windtunnel._drivers.http_inject import DEFAULT_TIMEOUT_S, HttpInjectHandle
from windtunnel._drivers.sandbox import (
    cut_off,
    fill_tmp,
    sandbox_identity,
    small_tmp,
    starve_memory,
)
from windtunnel._drivers.spare import Spare
from windtunnel._drivers.state_probe import LatestStateProbe, read_state_dump
from windtunnel._engine.fence import start_fenced
from windtunnel._engine.network import CALLER_LABEL
from windtunnel._engine.stack import ContainerStack, GatewaySpec, RunningContainer, logs_tail
from windtunnel._engine.topology import DEFAULT_MODEL, runtime_env, runtime_service
from windtunnel._gateway.client import LogCursor, start_scripted
from windtunnel._runtimes.config_fields import refuse_fields
from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel.errors import (
    HarnessError,
    RuntimeFault,
    RuntimeTimeoutError,
    RuntimeUnavailableError,
)

__all__ = [
    "DEFAULT_MODEL",
    "ContainerHandle",
    "ContainerRuntime",
    "EgressReport",
    "ReferenceContainerRuntime",
]

START_TIMEOUT_S = 60.0
# A runtime that dies mid-turn drops its connection at once (the kernel closes a killed process's
# sockets); the engine may take a moment longer to report the container as exited.
DEATH_CONFIRM_S = 2.0
DEATH_POLL_S = 0.05


class ContainerHandle:
    """A provisioned runtime container: Contract C to it, the gateway's log as model evidence."""

    def __init__(self, runtime: ContainerRuntime, running: RunningContainer, *, case: str | None) -> None:
        self._runtime = runtime
        self._running = running
        self._case = case
        port = runtime.manifest.port
        self._inject = HttpInjectHandle(
            f"http://{running.ip}:{port}", runtime.timeout_s, runtime=runtime.manifest.name
        )
        self._cursor = LogCursor(runtime.gateway_cursor())
        self._torn_down = False
        self._identity = sandbox_identity(running.container)
        """The life of the container's main process this handle serves; a turn of another is never passed."""

    @property
    def container(self) -> RunningContainer:
        return self._running

    @property
    def torn_down(self) -> bool:
        return self._torn_down

    def send(self, messages: list[Message], session_id: str) -> Response:
        """Contract C send on the caller's thread. A container that dies mid-turn drops the connection,
        which fails the turn at once; the failure then names the death, its exit code and last log lines."""
        try:
            response = self._inject.send(messages, session_id)
        except RuntimeFault as exc:
            if isinstance(exc, RuntimeUnavailableError) and not self._torn_down:
                self._raise_if_gone(exc, confirm_s=DEATH_CONFIRM_S)  # torn down: gone by design, not mid-turn
            elif isinstance(exc, RuntimeTimeoutError):
                self._raise_if_gone(
                    exc, confirm_s=0.0
                )  # a turn that ran out of time because its container died
            if (gone := self._runtime.stack.gateway_gone()) is not None:  # the runtime's model calls failed
                raise HarnessError(
                    f"{gone}\n  so the turn failed: {exc.message}",
                    hint="Wind Tunnel's model gateway died (killed, out of memory, crashed), not the runtime",
                ) from exc
            self._raise_if_restarted()
            raise
        self._raise_if_restarted()
        return response

    def sandbox_identity(self) -> str | None:
        """The container's main process as the engine sees it now (None when it is not running)."""
        now = sandbox_identity(self._running.container)
        return None if now is None else now.line()

    def _raise_if_restarted(self) -> None:
        """A container whose main process died and came back (a restart policy, a supervisor, an OOM kill
        answered by a restart) lost the turn's state: its answer is never recorded as a passed turn."""
        now = sandbox_identity(self._running.container)
        if self._identity is None or now is None or now == self._identity:
            return  # not running: the death is reported by the caller's own path
        what = "restarted"
        if now.oom_kills != self._identity.oom_kills:
            what = "had a process OOM-killed (killed for want of memory)"
        raise RuntimeUnavailableError(
            f"runtime {self._runtime.manifest.name!r}: its container {what} during the session (was "
            f"{self._identity.line()}; now {now.line()}): its answer comes from a sandbox that lost its "
            "state and is not recorded as a turn",
            hint="the runtime's process died (out of memory, or brought back by a restart policy or a "
            "supervisor); see its log lines with `docker logs`",
            runtime=self._runtime.manifest.name,
        )

    def starve_memory(self, headroom: int) -> dict[str, Any]:
        """Lower the container's memory limit to what it holds now plus `headroom` bytes, no swap (the
        `oom` fault): its next large allocation is OOM-killed. Lasts until teardown."""
        return starve_memory(self._running.container, headroom)

    def fill_tmp(self) -> dict[str, Any]:
        """Fill the container's small /tmp (started under ContainerRuntime.small_tmp) until no byte is
        left (the `disk_full` fault). Lasts until teardown."""
        return fill_tmp(self._running.container)

    def cut_off(self, mcp: MCPHandle) -> None:
        """From now on the runtime's every connection to `mcp`'s server is refused (the `mcp_gone` fault),
        its open ones included; the server itself and other runtimes are untouched. Lasts until teardown."""
        holder = self._running.holder
        address = self._runtime.stack.peer_addresses().get(urlsplit(mcp.url).hostname or "")
        if holder is None or address is None:
            raise HarnessError(
                f"runtime {self._runtime.manifest.name!r} is not fenced or {mcp.url} is not a peer of its "
                "run, so it cannot be cut off from it"
            )
        cut_off(holder, mcp.url, address)

    def _raise_if_gone(self, cause: RuntimeFault, *, confirm_s: float) -> None:
        """Raise a RuntimeUnavailableError naming the container's death if it died; the engine may report
        the exit a moment after the connection dropped, so it is asked again for up to `confirm_s`.
        Returns when the container is still running by then (the caller re-raises `cause`)."""
        container = self._running.container
        deadline = time.monotonic() + confirm_s
        while True:
            try:
                container.reload()
            except DockerException:
                status, code = "removed", None
            else:
                state = container.attrs.get("State", {})
                status, code = container.status, state.get("ExitCode")
                code = f"{code}, OOM-killed: out of memory" if state.get("OOMKilled") else code
            if status in {"exited", "dead", "removed"}:
                raise RuntimeUnavailableError(
                    f"runtime {self._runtime.manifest.name!r}: its container {status} mid-turn "
                    f"(exit code {code}): {cause.message}\n  its last log lines:\n{logs_tail(container)}",
                    hint="the runtime crashed or was killed; see its log lines above",
                    runtime=self._runtime.manifest.name,
                ) from cause
            if time.monotonic() >= deadline:
                return
            time.sleep(DEATH_POLL_S)

    def reset_state(self) -> None:
        self._inject.reset_state()

    def model_requests(self) -> list[dict[str, Any]]:
        return self._cursor.read(self._runtime.stack.gateway())

    def runtime_state(self) -> Mapping[str, Any]:
        """The runtime's own state dump (manifest `state_route`), for the hermetic reset canary."""
        manifest = self._runtime.manifest
        return read_state_dump(manifest, f"http://{self._running.ip}:{manifest.port}")

    def kill(self) -> None:
        """SIGKILL the runtime container: the recovery check's "kill the bench mid-run"."""
        with contextlib.suppress(Exception):
            self._running.container.kill()

    def teardown(self) -> None:
        if self._torn_down:
            return
        self._torn_down = True
        self._inject.teardown()
        self._runtime.stack.remove(self._running)
        if self._case is not None:
            with contextlib.suppress(
                Exception
            ):  # teardown must not raise; the next install replaces it anyway
                self._runtime.stack.gateway().clear_script()


class ContainerRuntime:
    """Builds nothing itself: images come ready (see windtunnel._engine.images); this starts containers."""

    def __init__(
        self,
        manifest: RuntimeManifest,
        stack: ContainerStack,
        runtime_image: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        image_digests: Mapping[str, str] | None = None,
    ) -> None:
        self.manifest = manifest
        self.stack = stack
        self.runtime_image = runtime_image
        self.timeout_s = timeout_s
        self.image_digests: Mapping[str, str] = dict(image_digests or {})
        self.latest: ContainerHandle | None = None
        self.spare = Spare(stack.remove)
        self._tmp_bytes: int | None = None
        """The size of the /tmp of the containers started now (small_tmp); None: the image's own."""

    @contextlib.contextmanager
    def small_tmp(self, size: int) -> Iterator[None]:
        """Containers provisioned inside start with a /tmp of `size` bytes their handle can fill (the
        `disk_full` fault); a container prestarted for another provision is never taken for one."""
        self._tmp_bytes = size
        try:
            yield
        finally:
            self._tmp_bytes = None

    def gateway_cursor(self) -> int:
        return self.stack.gateway().next_index()

    def start_mcps(self, plans: Sequence[MockServerPlan]) -> list[MCPHandle]:
        self.stack.start_early(plans)  # the gateway and every mock boot side by side, then each is awaited
        return [self.stack.mock(plan) for plan in plans]

    def stop_mcps(self, handles: Sequence[MCPHandle]) -> None:
        return None  # pooled for the run; each start resets them, close() removes them

    def start_mcp_suite(self, scenario: str, *, client_timeout_s: float) -> McpSuiteScenario:
        """The McpSuiteHostingRuntime ability: the suite's scenario as a peer on this run's network."""
        from windtunnel._engine.mcp_suite import start_scenario

        return start_scenario(self.stack, scenario, client_timeout_s=client_timeout_s)

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> ContainerHandle:
        return self._start(config, mcps or [], case=None)

    def _start(self, config: AgentConfig, mcps: list[MCPHandle], *, case: str | None) -> ContainerHandle:
        refuse_fields(config, self.manifest.supported, self.manifest.name)
        self.stack.gateway()
        key = self._start_key(config, mcps)
        start = partial(
            self._start_container, config, mcps, self._tmp_bytes
        )  # bound now: a spare starts later
        running = self.spare.take(key) or start()
        self.spare.start_next(key, start)
        try:
            self.stack.wait_listening(
                running, self.manifest.port, timeout=START_TIMEOUT_S, what=f"runtime {self.manifest.name!r}"
            )
        except BaseException:
            self.stack.remove(running)
            raise
        self.latest = ContainerHandle(self, running, case=case)
        return self.latest

    def _start_container(
        self, config: AgentConfig, mcps: list[MCPHandle], tmp_bytes: int | None = None
    ) -> RunningContainer:
        """A fenced runtime container for `config` and `mcps`, started, not yet awaited."""
        service = runtime_service(
            self.manifest,
            config,
            mcps,
            suffix=uuid.uuid4().hex[:6],
            gateway_url=self.stack.gateway_url_for_agents,
        )
        mounts = [small_tmp(tmp_bytes)] if tmp_bytes else []
        return start_fenced(
            self.stack, self.runtime_image, alias=service.alias, env=service.env, mounts=mounts
        )

    def _start_key(self, config: AgentConfig, mcps: list[MCPHandle]) -> Hashable:
        """What a prestarted container must have been started for to serve this provision: its whole
        environment (config, mocks, gateway) and the peers its fence's resolver answers."""
        env = runtime_env(self.manifest, config, mcps, self.stack.gateway_url_for_agents)
        peers = tuple(sorted(self.stack.peer_addresses().items()))
        return (tuple(sorted(env.items())), peers, self._tmp_bytes)

    def prestart_next(self) -> None:
        """The PrestartingRuntime ability: from now on each provision starts the next one's container
        (windtunnel._drivers.spare); close() stops it and removes what it started."""
        self.spare.enable()

    def prestarted(self) -> frozenset[str]:
        """The PrestartingRuntime ability: the runtime container started ahead, not handed out yet."""
        ahead = self.spare.ahead()
        return frozenset() if ahead is None else frozenset({str(ahead.container.name)})

    def state_probe(self) -> StateProbe | None:
        """A StateProbe over the most recently provisioned container's state dump, when the manifest has one."""
        if self.manifest.state_route is None:
            return None
        return LatestStateProbe(self)

    def probe_egress(self) -> EgressReport:
        """Probe the latest handle's fenced namespace: gateway and mocks must answer, nothing else may."""
        from windtunnel._engine.egress import run_egress_probe

        latest = self.latest
        if latest is None or latest.torn_down:
            raise HarnessError(
                f"runtime {self.manifest.name!r} has no running handle whose network could be probed",
                hint="provision a handle first and probe while it runs",
            )
        return run_egress_probe(self.stack, latest.container)

    def reach_attempts(self) -> tuple[ReachAttempt, ...]:
        """What this runtime's containers tried to reach outside their peers (windtunnel._engine.fence_log),
        every removed container's record read (the holders' retirement settled first)."""
        self.stack.settle()
        return self.stack.fence_log.attempts()

    def run_network(self) -> str:
        return str(self.stack.network.name)

    def runtime_containers(self) -> dict[str, dict[str, bool]]:
        """Every runtime container of this run (running or not) with its networks (name -> internal)."""
        return self.stack.runtime_containers()

    def close(self) -> list[str]:
        self.spare.close()  # first: its worker's Docker calls end before the run's containers are listed
        return self.stack.close()

    def with_gateway(self, gateway: GatewaySpec) -> ContainerRuntime:
        """The FreshGatewayRuntime ability (windtunnel._runtimes.abilities): this runtime's images on a new
        stack with a gateway of its own (a tape replayed or recorded). Always the plain ContainerRuntime:
        tapes run through provision(), never provision_reference()."""
        stack = ContainerStack(
            self.stack.client,
            windtunnel_image=self.stack.windtunnel_image,
            session=self.stack.session,
            gateway=gateway,
            labels={key: value for key, value in self.stack.labels.items() if key == CALLER_LABEL},
            netguard_image=self.stack.netguard_image,
            fence_log=self.stack.fence_log,  # what the tapes' containers tried counts for this runtime too
        )
        return ContainerRuntime(self.manifest, stack, self.runtime_image, timeout_s=self.timeout_s)


class ReferenceContainerRuntime(ContainerRuntime):
    """A container runtime whose every model call goes through the gateway, so cases can be scripted."""

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> ContainerHandle:
        start = partial(self._start, config, mcps or [], case=case.name)
        return start_scripted(self.stack.gateway(), case, start)
