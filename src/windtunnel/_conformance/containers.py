"""What the Docker engine says about a containerised runtime's run: its runtime containers and their networks.

Only runtimes whose driver keeps a run stack (the container driver, and wrappers that forward to it) can be
inspected; for any other runtime `run_view()` is None and a check says what it could not see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from docker.errors import DockerException

from windtunnel._drivers.network import RUN_LABEL
from windtunnel.errors import HarnessError

ROLE_LABEL = "windtunnel.role"  # the stack labels each container with its role (runtime, gateway, mock...)


@dataclass(frozen=True, slots=True)
class RunView:
    client: Any
    run_id: str
    network: str


def run_view(runtime: Any) -> RunView | None:
    """The engine view of the runtime's run, when its driver keeps one."""
    stack: Any = getattr(runtime, "stack", None)
    client, run_id = getattr(stack, "client", None), getattr(stack, "run_id", None)
    if client is None or not isinstance(run_id, str):
        return None
    return RunView(client=client, run_id=run_id, network=str(stack.network.name))


def runtime_containers(view: RunView) -> dict[str, Any]:
    """The run's runtime containers (running or not), by name."""
    selectors = [f"{RUN_LABEL}={view.run_id}", f"{ROLE_LABEL}=runtime"]
    try:
        found = view.client.containers.list(all=True, filters={"label": selectors})
    except DockerException as exc:
        raise HarnessError(
            f"could not list the run's containers: {exc}", hint="check the Docker engine"
        ) from exc
    return {str(container.name): container for container in found}


def attachments(view: RunView, container: Any) -> dict[str, bool]:
    """Every network the container is attached to, and whether that network is internal (no way out)."""
    try:
        container.reload()
        names = sorted((container.attrs.get("NetworkSettings") or {}).get("Networks") or {})
        return {name: bool(view.client.networks.get(name).attrs.get("Internal")) for name in names}
    except DockerException as exc:
        raise HarnessError(
            f"could not inspect the networks of container {container.name}: {exc}",
            hint="check the Docker engine",
        ) from exc
