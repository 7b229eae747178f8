"""One run's containers: a per-run internal network, the model gateway, pooled MCP mocks, runtime containers.

Every container and the network carry the run's labels, so `close()` (or a later run's leftover sweep)
removes them by label, also after a crash. The runtime gets no way out: the network is internal, and each
runtime container lives in a fenced holder's namespace (windtunnel._engine.fence) that reaches the run's
peers and nothing else.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import httpx
from docker.errors import DockerException, NotFound
from docker.models.containers import Container
from docker.models.networks import Network

from windtunnel._core.agent_runtime import MockServerPlan
from windtunnel._engine import runner_peer
from windtunnel._engine.cleanup import remove_run
from windtunnel._engine.fence_log import FenceLog
from windtunnel._engine.files import archive_of, copy_out, empty_directories, put, secret_files
from windtunnel._engine.network import (
    ROLE_LABEL,
    RUN_LABEL,
    attach_egress,
    create_run_network,
    run_labels,
)
from windtunnel._engine.readiness import wait_listening
from windtunnel._engine.retire import Retirer
from windtunnel._engine.topology import (
    ANY_ADDRESS,
    GATEWAY_ALIAS,
    GATEWAY_PORT,
    GATEWAY_URL_FOR_AGENTS,
    MOCK_PORT,
    GatewaySpec,
    ServicePlan,
    alias_for,
    gateway_service,
    mock_service,
)
from windtunnel._gateway.client import GatewayClient
from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel._net.liveness import Liveness
from windtunnel._signals import deferred_stop
from windtunnel.errors import HarnessError

__all__ = [
    "ANY_ADDRESS",
    "GATEWAY_ALIAS",
    "GATEWAY_PORT",
    "MOCK_PORT",
    "ContainerStack",
    "GatewaySpec",
    "RunningContainer",
    "alias_for",
    "logs_tail",
]


READY_TIMEOUT_S = 60.0
"""How long the gateway and a mock may take to serve. Several stacks start at once (the tapes stage replays
its tapes side by side), and on a loaded machine a mock was seen to need close to 30 s."""


@dataclass(slots=True)
class RunningContainer:
    """A started container with its alias and IP; `holder` is the fence whose namespace (and IP) it uses."""

    container: Container
    alias: str
    ip: str
    holder: Container | None = None

    @property
    def namespace(self) -> Container:
        """The container that owns the network namespace: the holder when fenced."""
        return self.holder or self.container


class ContainerStack:
    """The containers of one run, created lazily and removed together by `close()`. `labels` are extra
    labels for every container and network of the run (the caller's own, such as `windtunnel.caller`)."""

    def __init__(
        self,
        client: docker.DockerClient,
        *,
        windtunnel_image: str,
        run_id: str | None = None,
        session: str | None = None,
        gateway: GatewaySpec | None = None,
        labels: Mapping[str, str] | None = None,
        netguard_image: str | None = None,
        fence_log: FenceLog | None = None,
    ) -> None:
        self.client = client
        self.windtunnel_image = windtunnel_image
        self.netguard_image = netguard_image
        """The egress fence's holder image; found or built on first use when None."""
        self.suite_image: str | None = None
        """The MCP conformance suite's image (windtunnel._engine.mcp_suite); built on first use when None."""
        self.fence_log = fence_log or FenceLog()
        """What the run's runtime containers tried to reach (windtunnel._engine.fence_log); a runtime's
        stacks share one."""
        self._fences: dict[str, Container] = {}  # live fence holders, by id: their logs are read at removal
        self._retirer = Retirer()  # reads a removed runtime's fence record and removes its holder
        self.run_id = run_id or f"wt-{uuid.uuid4().hex[:10]}"
        self.session = session
        self.gateway_spec = gateway or GatewaySpec()
        self.labels = {**run_labels(self.run_id, session=session), **(labels or {})}
        self._network: Network | None = None
        self._gateway: RunningContainer | None = None
        self._gateway_client: GatewayClient | None = None
        self._mocks: dict[tuple[str, str, str], tuple[RunningContainer, HttpMCPHandle]] = {}
        self._starting: dict[tuple[str, str, str], RunningContainer] = {}  # started, not yet waited for
        self._peers: dict[str, RunningContainer] = {}  # other services runtimes reach, by alias
        self._closed = False

    # -- network and gateway -------------------------------------------------------------------------
    @property
    def network(self) -> Network:
        if self._closed:
            raise HarnessError(f"run {self.run_id} was closed", hint="build a new runtime for a new run")
        if self._network is None:
            with deferred_stop():  # a stop signal mid-request would leave a network close() never saw
                self._network = create_run_network(
                    self.client, self.run_id, session=self.session, labels=self.labels
                )
                runner_peer.join(self._network)  # a runner in a container reaches the run by its addresses
        return self._network

    def gateway(self) -> GatewayClient:
        """The gateway's admin client, starting the gateway container on first use."""
        if self._gateway_client is None:
            running = self._start_gateway()
            client = GatewayClient(f"http://{running.ip}:{GATEWAY_PORT}")
            self._wait(lambda: client.wait_until_healthy(timeout=READY_TIMEOUT_S), running, "model gateway")
            client.liveness = container_liveness(running, "model gateway")  # from now on, a death is named
            self._gateway_client = client
        return self._gateway_client

    def gateway_gone(self) -> str | None:
        """Why the model gateway's container is gone (exit code, log lines), or None (also before it ran)."""
        client = self._gateway_client
        return client.liveness() if client is not None and client.liveness is not None else None

    def start_early(self, plans: Sequence[MockServerPlan]) -> None:
        """Start the gateway's and the plans' mock containers without waiting for any: they boot side by
        side, and gateway() and mock() then wait for each as before."""
        self._start_gateway()
        for plan in plans:
            if plan.pack_root is not None:
                self._start_mock(plan)

    def _start_gateway(self) -> RunningContainer:
        if self._gateway is None:
            spec = self.gateway_spec
            self._gateway = self.start(
                gateway_service(spec), outputs=list(spec.outputs), secrets=dict(spec.secrets)
            )
            if spec.needs_egress:
                self._attach_egress(self._gateway.container)
        return self._gateway

    def collect_outputs(self) -> list[Path]:
        """Copy the gateway's `outputs` directories out to their host directories; the files written."""
        if self._gateway is None:
            return []
        container = self._gateway.container
        return [
            path
            for inside, host in self.gateway_spec.outputs.items()
            for path in copy_out(container, inside, host)
        ]

    @property
    def gateway_url_for_agents(self) -> str:
        return GATEWAY_URL_FOR_AGENTS

    def _attach_egress(self, container: Container) -> None:
        """Live and record modes reach an upstream model: only the gateway joins a second, open network."""
        attach_egress(self.client, self.network, container, self.labels)

    # -- mocks ---------------------------------------------------------------------------------------
    def mock(self, plan: MockServerPlan) -> HttpMCPHandle:
        """A mock container for the plan, pooled by (pack root, pack, server) and reset to fresh state.

        The reset rebuilds the state with the pack's factory inside the container: fresh pack factories
        per case (docs/selftests.md, "Order and isolation"), without paying a container start each time.
        """
        service = mock_service(plan)  # refuses a plan without a pack directory
        key = _mock_key(plan)
        if key not in self._mocks:
            running = self._start_mock(plan)
            del self._starting[key]
            handle = HttpMCPHandle(plan.server, str(service.url), f"http://{running.ip}:{service.port}")
            what = f"MCP mock {plan.pack}/{plan.server}"
            self._wait(lambda: handle.wait_ready(READY_TIMEOUT_S), running, what)
            handle.liveness = container_liveness(running, what)
            self._mocks[key] = (running, handle)
        handle = self._mocks[key][1]
        handle.reset()
        return handle

    def _start_mock(self, plan: MockServerPlan) -> RunningContainer:
        key = _mock_key(plan)
        if key in self._mocks:
            return self._mocks[key][0]
        if key not in self._starting:
            self._starting[key] = self.start(mock_service(plan))
        return self._starting[key]

    def mock_aliases(self) -> list[str]:
        return [running.alias for running, _ in self._mocks.values()]

    def peer_addresses(self) -> dict[str, str]:
        """The names a runtime may look up, with their addresses: the gateway and every started mock."""
        running = [
            self._gateway,
            *(r for r, _ in self._mocks.values()),
            *self._starting.values(),
            *self._peers.values(),
        ]
        return {r.alias: r.ip for r in running if r is not None}

    def start_peer(self, service: ServicePlan, *, image: str) -> RunningContainer:
        """Start `service` from `image` as a peer: runtime containers started after it reach it by its alias
        (their fence answers its name), as they reach a mock. remove() ends it."""
        running = self.start(service, image=image)
        self._peers[running.alias] = running
        return running

    # -- containers ----------------------------------------------------------------------------------
    def start(
        self,
        service: ServicePlan,
        *,
        image: str | None = None,
        outputs: Sequence[str] = (),
        secrets: Mapping[str, str] | None = None,
    ) -> RunningContainer:
        """Start a service of the container plan as a labelled container on the run network under its alias
        (from the windtunnel image unless `image` is given); return it with its IP.

        The plan's `files` (container path -> host file or directory) and `secrets` (container path ->
        content) are copied in before it starts, and `outputs` (container directories) are created empty
        for it to write into (windtunnel._engine.files).
        """
        role, alias, files = service.role, service.alias, service.files
        image = image or self.windtunnel_image
        command = None if service.args is None else list(service.args)
        name = f"{self.network.name}-{alias}-{uuid.uuid4().hex[:4]}"
        copied = [(archive_of(files), f"the {role}'s files")] if files else []
        if secrets:
            copied.append((secret_files(secrets), f"the {role}'s secret files"))
        if outputs:
            copied.append((empty_directories(list(outputs)), f"the {role}'s output directories"))
        try:
            # Whole or not at all: a stop signal in the middle of a request leaves a container the engine
            # finishes creating after close() has listed the run's containers.
            with deferred_stop():
                container = self._create(image, command, name, service.env, role, alias, copied)
        except DockerException as exc:
            raise HarnessError(
                f"could not start the {role} container from {image}: {exc}",
                hint="check `docker images` for the image and `docker info` for the engine",
            ) from exc
        ip = container.attrs["NetworkSettings"]["Networks"][self.network.name]["IPAddress"]
        return RunningContainer(container=container, alias=alias, ip=ip)

    def _create(
        self,
        image: str,
        command: list[str] | None,
        name: str,
        env: Mapping[str, str] | None,
        role: str,
        alias: str,
        copied: Sequence[tuple[bytes, str]],
    ) -> Container:
        container = self.client.containers.create(
            image,
            command=command,
            name=name,
            environment=dict(env or {}),
            labels={**self.labels, ROLE_LABEL: role},
            network=self.network.name,
            detach=True,
            networking_config={self.network.name: self.client.api.create_endpoint_config(aliases=[alias])},
        )
        for archive, what in copied:
            put(container, archive, what)
        container.start()
        container.reload()
        return container

    def _wait(self, ready: Any, running: RunningContainer, what: str) -> None:
        try:
            ready()
        except (HarnessError, httpx.HTTPError) as exc:
            raise HarnessError(
                f"the {what} container did not become ready: {exc}\n  its last log lines:\n{logs_tail(running.container)}",
                hint="run `docker logs` on it for more, or `wt images build` to rebuild the image",
            ) from exc

    def wait_listening(self, running: RunningContainer, port: int, *, timeout: float, what: str) -> None:
        """Wait until the container answers HTTP on `port` (windtunnel._engine.readiness); fail fast
        when it exits."""

        def gone() -> str | None:
            running.container.reload()
            status = running.container.status
            return f"container {status}" if status in {"exited", "dead"} else None

        wait_listening(
            f"http://{running.ip}:{port}",
            timeout=timeout,
            what=what,
            gone=gone,
            details=lambda: f"\n  its last log lines:\n{logs_tail(running.container)}",
            hint="fix the runtime's start-up (see the log lines above); it must serve Contract C "
            "on WT_INJECT_PORT",
        )

    def track_fence(self, holder: Container) -> None:
        """A fence holder started for this run: its log is read before it is removed (remove(), close())."""
        self._fences[str(holder.id)] = holder

    def _collect_fence(self, holder: Container) -> None:
        if self._fences.pop(str(holder.id), None) is not None:
            self.fence_log.collect(holder)

    def remove(self, running: RunningContainer) -> None:
        """Remove the container at once, then its fence holder (the namespace must outlive its user) on the
        retiring thread (windtunnel._engine.retire), after reading the holder's record of what the container
        tried to reach: complete, as the container is gone. `settle()` waits for that."""
        if self._peers.get(running.alias) is running:
            del self._peers[running.alias]
        self._remove_container(running.container)
        if running.holder is not None:
            holder = running.holder
            self._retirer.later(lambda: self._retire_holder(holder))

    def _retire_holder(self, holder: Container) -> None:
        self._collect_fence(holder)
        self._remove_container(holder)

    def settle(self) -> None:
        """Wait until every removed runtime's fence record is read and its holder removed."""
        self._retirer.settle()

    @staticmethod
    def _remove_container(container: Container) -> None:
        try:
            container.remove(force=True, v=True)  # its anonymous volumes (a small /tmp) with it
        except DockerException:  # already gone (NotFound) or the engine refused: close() sweeps by label
            return

    def runtime_containers(self) -> dict[str, dict[str, bool]]:
        """The run's runtime containers (running or not), by name, each with every network it is attached
        to and whether that network is internal (no way out). HarnessError when the engine cannot say."""
        selectors = [f"{RUN_LABEL}={self.run_id}", f"{ROLE_LABEL}=runtime"]
        try:
            # A container removed between the listing and its inspection (a retired or prestarted one) is
            # no longer the run's: skipped, never an error.
            # The listing inspects each container it lists: its attributes are fresh, not read again.
            found = self.client.containers.list(all=True, filters={"label": selectors}, ignore_removed=True)
            return {str(container.name): self._attachments(container) for container in found}
        except DockerException as exc:
            raise HarnessError(
                f"could not list or inspect the containers of run {self.run_id}: {exc}",
                hint="check the Docker engine",
            ) from exc

    def _attachments(self, container: Container) -> dict[str, bool]:
        """The networks `container` is on and whether each is internal."""
        mode = str((container.attrs.get("HostConfig") or {}).get("NetworkMode") or "")
        if mode.startswith("container:"):  # a fenced runtime: its networks are its holder's
            try:
                container = self.client.containers.get(mode.partition(":")[2])
            except NotFound:  # the runtime is still there but its namespace's holder is not: no network
                return {}
        names = sorted((container.attrs.get("NetworkSettings") or {}).get("Networks") or {})
        return {name: bool(self.client.networks.get(name).attrs.get("Internal")) for name in names}

    def close(self) -> list[str]:
        """Remove every container and network of this run; idempotent, never raises."""
        if self._closed:
            return []
        self._closed = True
        self._retirer.close()  # first: the holders it still holds are read and removed before the sweep
        for _, handle in self._mocks.values():
            handle.close()
        if self._gateway_client is not None:
            self._gateway_client.close()
        for holder in list(self._fences.values()):
            self._collect_fence(holder)
        try:
            return remove_run(self.client, self.run_id)
        except DockerException:
            return []


def _mock_key(plan: MockServerPlan) -> tuple[str, str, str]:
    """Mocks are pooled by (pack root, pack, server)."""
    return (str(plan.pack_root), plan.pack, plan.server)


def container_liveness(running: RunningContainer, what: str) -> Liveness:
    """Why `running` is gone (exited with its code, or removed), with its last log lines; None while it runs."""

    def gone() -> str | None:
        container = running.container
        try:
            container.reload()
        except DockerException:
            return f"the {what} container is gone (removed)"
        if container.status not in {"exited", "dead"}:
            return None
        code = container.attrs.get("State", {}).get("ExitCode")
        return f"the {what} container exited (code {code})\n  its last log lines:\n{logs_tail(container)}"

    return gone


def logs_tail(container: Container, lines: int = 20) -> str:
    try:
        text = container.logs(tail=lines).decode("utf-8", "replace")
    except DockerException:
        return "    <no logs>"
    return "\n".join(f"    {line}" for line in text.splitlines()) or "    <empty>"
