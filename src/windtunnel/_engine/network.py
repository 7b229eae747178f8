"""Per-run Docker networks and the labels that tie every container and network to its run and owner.

Docker's `internal` networks drop traffic leaving them with iptables but still hand containers a
default route, and leave the host reachable through the bridge's address; a runtime container is
therefore fenced further inside its own namespace (windtunnel._engine.fence).

A run's resources carry `windtunnel.run=<run id>`, optionally `windtunnel.session=<label>` and
`windtunnel.caller=<label>`, and the owner process (host, pid, start time), so a later run can tell
leftovers of a dead process from resources of a live one (see cleanup.sweep_leftovers).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path

import docker
from docker.models.containers import Container
from docker.models.networks import Network

RUN_LABEL = "windtunnel.run"
ROLE_LABEL = "windtunnel.role"
"""Each container's role in its run: runtime, gateway, mock, egress..."""
SESSION_LABEL = "windtunnel.session"
CALLER_LABEL = "windtunnel.caller"
"""The label a runtime plugin's build() was given (`wt certify`'s run id), under its own key:
WT_SESSION_LABEL takes `windtunnel.session` and must not hide which certify run started a container."""
OWNER_HOST_LABEL = "windtunnel.owner.host"
OWNER_PID_LABEL = "windtunnel.owner.pid"
OWNER_START_LABEL = "windtunnel.owner.start"
"""The owner's start time in clock ticks since boot (/proc/<pid>/stat field 22): a reused pid has
another start time, so a recycled pid never passes for the owner."""

_UNSAFE = re.compile(r"[^a-zA-Z0-9_.-]")


def process_start_ticks(pid: int) -> str | None:
    """When `pid` started (ticks since boot), or None when there is no such process or no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses; fields after its last ")" are plain.
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def owner_labels(pid: int | None = None) -> dict[str, str]:
    """Labels naming this process (or `pid`) as the owner of a resource."""
    pid = os.getpid() if pid is None else pid
    labels = {OWNER_HOST_LABEL: socket.gethostname(), OWNER_PID_LABEL: str(pid)}
    started = process_start_ticks(pid)
    if started is not None:
        labels[OWNER_START_LABEL] = started
    return labels


def run_labels(run_id: str, *, session: str | None = None, pid: int | None = None) -> dict[str, str]:
    """Every label a run's container or network carries: run, session (if any) and owner."""
    labels = {RUN_LABEL: run_id, **owner_labels(pid)}
    if session is not None:
        labels[SESSION_LABEL] = session
    return labels


def owner_alive(labels: Mapping[str, str], *, host: str | None = None) -> bool | None:
    """Whether the process that owns a resource still runs: True, False, or None when this host cannot
    tell (another host's resource, or no owner labels). Only False justifies removing it."""
    here = host or socket.gethostname()
    pid_text = labels.get(OWNER_PID_LABEL, "")
    if labels.get(OWNER_HOST_LABEL) != here or not pid_text.isdigit():
        return None
    started = process_start_ticks(int(pid_text))
    if started is None:
        return False
    recorded = labels.get(OWNER_START_LABEL)
    return recorded is None or recorded == started


def network_name(run_id: str) -> str:
    """A Docker-safe network name for a run: `wt-<run id>` with other characters replaced by `-`."""
    return "wt-" + _UNSAFE.sub("-", run_id)


def create_run_network(
    client: docker.DockerClient,
    run_id: str,
    *,
    session: str | None = None,
    name: str | None = None,
    internal: bool = True,
    labels: Mapping[str, str] | None = None,
) -> Network:
    """A bridge network for one run. With `internal=True` (the default) the engine drops whatever tries
    to leave it: its containers reach each other and host services listening on the bridge gateway,
    nothing beyond. (They still get a default route; windtunnel._engine.fence closes that for runtimes.)"""
    return client.networks.create(
        name or network_name(run_id),
        driver="bridge",
        internal=internal,
        check_duplicate=True,
        labels={**run_labels(run_id, session=session), **(labels or {})},
    )


def attach_egress(
    client: docker.DockerClient, network: Network, container: Container, labels: Mapping[str, str]
) -> Network:
    """Live and record gateways reach an upstream model: only the gateway joins a second, open network
    (`<run network>-egress`, labelled with the run's labels and role `egress`, so cleanup removes it)."""
    egress = client.networks.create(
        f"{network.name}-egress", driver="bridge", internal=False, labels={**labels, ROLE_LABEL: "egress"}
    )
    egress.connect(container)
    return egress
