"""Removing a run's containers and networks by label, and sweeping leftovers of runs whose owner died."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import docker
from docker.errors import APIError, NotFound
from docker.models.containers import Container
from docker.models.networks import Network

from windtunnel._engine.network import OWNER_PID_LABEL, RUN_LABEL, SESSION_LABEL, owner_alive

log = logging.getLogger(__name__)


def labelled(
    client: docker.DockerClient, label: str, value: str | None = None
) -> tuple[list[Container], list[Network]]:
    """Containers (running or not) and networks carrying `label` (with `value`, if given)."""
    selector = label if value is None else f"{label}={value}"
    networks = client.networks.list(filters={"label": selector})
    return _containers(client, selector), networks


def _containers(client: docker.DockerClient, selector: str) -> list[Container]:
    """The containers with the label, each inspected; one removed between the listing and its inspection
    (another cleanup, or the engine finishing a removal its killed client asked for) is gone, not an error."""
    found: list[Container] = client.containers.list(
        all=True, filters={"label": selector}, ignore_removed=True
    )
    return found


def describe(resources: tuple[list[Container], list[Network]]) -> list[str]:
    """One line per resource, e.g. `container wt-gateway-1 (3f2a1b) run=r1`."""
    containers, networks = resources
    lines = [f"container {c.name} ({c.short_id}) {_run_of(c.labels)}" for c in containers]
    return lines + [f"network {n.name} ({n.short_id}) {_run_of(_labels(n))}" for n in networks]


def remove_labelled(client: docker.DockerClient, label: str, value: str | None = None) -> list[str]:
    """Remove every container, then every network, carrying the label; return what was removed.

    Containers go first (forced, with their anonymous volumes) because a network with endpoints cannot
    be removed. Resources that vanish meanwhile are not an error: another cleanup got there first.
    """
    containers, networks = labelled(client, label, value)
    removed = [line for c in containers if (line := _remove_container(c))]
    return removed + [line for n in networks if (line := _remove_network(n))]


def remove_run(client: docker.DockerClient, run_id: str) -> list[str]:
    return remove_labelled(client, RUN_LABEL, run_id)


def remove_session(client: docker.DockerClient, session: str) -> list[str]:
    return remove_labelled(client, SESSION_LABEL, session)


def sweep_leftovers(client: docker.DockerClient) -> list[str]:
    """Remove the resources of every run whose owner process is gone; return what was removed.

    Resources of live owners, of other hosts, or without owner labels are left alone: only a proven
    dead owner makes a run a leftover.
    """
    removed: list[str] = []
    for run_id, labels in _runs(client).items():
        if owner_alive(labels) is False:
            pid = labels.get(OWNER_PID_LABEL, "?")
            removed += [f"{line} (owner pid {pid} gone)" for line in remove_run(client, run_id)]
    if removed:
        log.warning("removed %d leftover resources of dead runs", len(removed))
    return removed


def _runs(client: docker.DockerClient) -> dict[str, Mapping[str, str]]:
    """Run id -> the labels of one of its resources (all of a run's resources share owner labels)."""
    containers, networks = labelled(client, RUN_LABEL)
    runs: dict[str, Mapping[str, str]] = {}
    for labels in [c.labels for c in containers] + [_labels(n) for n in networks]:
        runs.setdefault(labels[RUN_LABEL], labels)
    return runs


def _labels(network: Network) -> Mapping[str, str]:
    labels: Mapping[str, str] = network.attrs.get("Labels") or {}
    return labels


def _run_of(labels: Mapping[str, str]) -> str:
    return f"run={labels.get(RUN_LABEL, '?')}"


def _remove_container(container: Container) -> str | None:
    line = f"container {container.name} ({container.short_id}) {_run_of(container.labels)}"
    try:
        container.remove(force=True, v=True)
    except NotFound:
        return None
    except APIError as exc:
        if "already in progress" in str(exc):
            return None
        raise
    return line


def _remove_network(network: Network) -> str | None:
    line = f"network {network.name} ({network.short_id}) {_run_of(_labels(network))}"
    try:
        _detach_all(network)
        network.remove()
    except NotFound:
        return None
    return line


def _detach_all(network: Network) -> None:
    # A container from outside the run (or one that escaped its label) still attached would block removal.
    network.reload()
    for endpoint in network.attrs.get("Containers") or {}:
        try:
            network.disconnect(endpoint, force=True)
        except (NotFound, APIError) as exc:
            log.info("detaching %s from %s: %s", endpoint, network.name, exc)
