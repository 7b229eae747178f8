"""One planned service as a testcontainers container: the container plan's command, env, alias and
readiness (windtunnel._engine.topology), files copied in before start through the driver's own copy-in
(windtunnel._engine.files; never bind-mounted), on a labelled project network."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Self

import docker
import httpx
from docker.errors import DockerException
from docker.models.networks import Network as DockerNetwork
from testcontainers.core.container import DockerContainer
from testcontainers.core.network import Network
from testcontainers.core.waiting_utils import WaitStrategy, WaitStrategyTarget

from windtunnel._engine.cleanup import remove_run
from windtunnel._engine.files import archive_of, put, secret_files
from windtunnel._engine.network import ROLE_LABEL, create_run_network, run_labels
from windtunnel._engine.readiness import wait_listening
from windtunnel._engine.stack import logs_tail
from windtunnel._engine.topology import ServicePlan
from windtunnel.errors import HarnessError

READY_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class _Archive:
    """A tar put into the created container before it starts (windtunnel._engine.files.put)."""

    data: bytes
    what: str


class ProjectNetwork(Network):
    """The stack's network, made by the driver's own create_run_network(): internal (no way out), with the
    run's labels and this process as owner, so `wt images sweep` and later runs clean up after a crash."""

    def __init__(self, client: docker.DockerClient, *, session: str | None = None) -> None:
        super().__init__()
        self.client = client
        self.run_id = f"wt-testing-{uuid.uuid4().hex[:10]}"
        self.labels = run_labels(self.run_id, session=session)
        self.name = ""

    def create(self) -> ProjectNetwork:
        self._network = create_run_network(self.client, self.run_id, labels=self.labels)
        self.name = str(self._network.name)
        return self

    @property
    def network(self) -> DockerNetwork:
        if self._network is None:
            raise HarnessError("the project network is not created yet", hint="start the stack first")
        return self._network

    def remove(self) -> None:
        """Remove every container and network of the run (by its label), not only this network."""
        remove_run(self.client, self.run_id)


class PlannedContainer(DockerContainer):
    """A service of the container plan (its command, env, alias and readiness) on a project network.

    The plan's `files` and any `secrets` (container path -> content: 0400 in a 0700 directory, as the
    driver puts a gateway's upstream key) go in after the container is created and before it starts, with
    the driver's own archives; nothing is bind-mounted.
    """

    def __init__(
        self,
        service: ServicePlan,
        image: str,
        network: ProjectNetwork,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            image,
            env=dict(service.env),
            network=network,
            network_aliases=[service.alias],
            name=f"{network.name}-{service.alias}-{uuid.uuid4().hex[:4]}",
            labels={**network.labels, ROLE_LABEL: service.role},
        )
        if service.args is not None:
            self.with_command(list(service.args))
        if service.files:
            self._put_before_start(_Archive(archive_of(service.files), f"the {service.role}'s files"))
        if secrets:
            self._put_before_start(_Archive(secret_files(secrets), f"the {service.role}'s secrets"))
        self.service = service
        self.project_network = network
        self.waiting_for(ServiceReady(service))
        self._at_stop: list[Callable[[], None]] = []

    def _close_at_stop(self, close: Callable[[], None]) -> None:
        """Run `close` (of a client this process made to the service) whenever the container stops."""
        self._at_stop.append(close)

    def _put_before_start(self, archive: _Archive) -> None:
        # testcontainers copies its transferables in between create and start; ours is a whole archive,
        # put by _transfer_into_container below.
        self.with_copy_into_container(archive, "/")  # type: ignore[arg-type]

    def _transfer_into_container(self, transferable: Any, destination_in_container: str, mode: int) -> None:
        if isinstance(transferable, _Archive):
            put(self._container, transferable.data, transferable.what)
            return
        super()._transfer_into_container(transferable, destination_in_container, mode)

    @property
    def ip(self) -> str:
        """The container's address on the project network: where this process reaches it."""
        container = self.get_wrapped_container()
        container.reload()
        address: str = container.attrs["NetworkSettings"]["Networks"][self.project_network.name]["IPAddress"]
        return address

    @property
    def base_url(self) -> str:
        return f"http://{self.ip}:{self.service.port}"

    def start(self) -> Self:
        try:
            super().start()
        except DockerException as exc:
            raise HarnessError(
                f"could not start the {self.service.role} container {self.service.alias}: {exc}",
                hint="check `docker images` for the image and `docker info` for the engine",
            ) from exc
        return self

    def stop(self, force: bool = True, delete_volume: bool = True) -> None:
        for close in self._at_stop:
            close()
        super().stop(force=force, delete_volume=delete_volume)

    def gone(self) -> str | None:
        """Why the container stopped (its state), or None while it runs."""
        container = self.get_wrapped_container()
        try:
            container.reload()
        except DockerException:
            return "container removed"
        return f"container {container.status}" if container.status in {"exited", "dead"} else None

    def log_tail(self) -> str:
        return logs_tail(self.get_wrapped_container())


class ServiceReady(WaitStrategy):
    """The plan's readiness: the service answers HTTP on its port (a container that exits fails at once),
    and, unless the plan takes any answer (runtimes, Contract C), its ready_path answers 200."""

    def __init__(self, service: ServicePlan) -> None:
        super().__init__()
        self.service = service
        self.with_startup_timeout(int(READY_TIMEOUT_S))

    def wait_until_ready(self, container: WaitStrategyTarget) -> None:
        if not isinstance(container, PlannedContainer):
            raise TypeError(f"ServiceReady waits for a PlannedContainer, not {type(container).__name__}")
        what = f"the {self.service.role} container {self.service.alias}"
        url = container.base_url
        wait_listening(
            url,
            timeout=self._startup_timeout,
            what=what,
            gone=container.gone,
            details=lambda: f"\n  its last log lines:\n{container.log_tail()}",
            hint="run `docker logs` on it for more, or `wt images build` to rebuild the image",
        )
        if self.service.ready_any_answer:
            return
        answer = httpx.get(f"{url}{self.service.ready_path}", timeout=READY_TIMEOUT_S)
        if answer.status_code != httpx.codes.OK:
            raise HarnessError(
                f"{what} answered GET {self.service.ready_path} with HTTP {answer.status_code}, not 200\n"
                f"  its last log lines:\n{container.log_tail()}",
                hint="run `docker logs` on it for more, or `wt images build` to rebuild the image",
            )
