"""Per-run Docker networks and the labels that tie every container and network to its run and owner.

Docker's `internal` networks drop traffic leaving them with iptables but still hand containers a
default route; `drop_default_route` / `start_netns_holder` remove it so "no route out" holds inside the
container's own namespace.

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
from docker.errors import DockerException
from docker.models.containers import Container
from docker.models.networks import Network

from windtunnel.errors import HarnessError

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
    nothing beyond. (They still get a default route; see start_netns_holder to have none.)"""
    return client.networks.create(
        name or network_name(run_id),
        driver="bridge",
        internal=internal,
        check_duplicate=True,
        labels={**run_labels(run_id, session=session), **(labels or {})},
    )


def gateway_address(network: Network) -> str | None:
    """The bridge's own address on `network`: where containers on it reach services on the host."""
    network.reload()
    for config in network.attrs.get("IPAM", {}).get("Config") or []:
        gateway = config.get("Gateway")
        if gateway:
            return str(gateway)
    return None


DROP_DEFAULT_ROUTES = r"""
import fcntl, socket, struct
SIOCDELRT, RTF_UP = 0x890C, 0x1
def sockaddr(ip):
    return struct.pack("=HH4s8x", socket.AF_INET, 0, socket.inet_aton(ip))
# struct rtentry in native layout: pad1, dst, gateway, genmask, flags, pad2, pad3, pad4, metric, dev,
# mtu, window, irtt. dst 0.0.0.0/0 with RTF_UP names a default route, whatever its gateway.
entry = struct.pack("@L16s16s16sHhLPhPLLH0L", 0, sockaddr("0.0.0.0"), sockaddr("0.0.0.0"),
                    sockaddr("0.0.0.0"), RTF_UP, 0, 0, 0, 0, 0, 0, 0, 0)
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    while True:
        try:
            fcntl.ioctl(s.fileno(), SIOCDELRT, entry)
        except OSError:
            break
left = [l for l in open("/proc/net/route").read().splitlines()[1:] if l.split()[1] == "00000000"]
print(len(left))
"""
"""Run inside the target's network namespace (needs CAP_NET_ADMIN); prints how many default routes
remain. Plain Python, so any image with python3 can be the helper."""


def drop_default_route(
    client: docker.DockerClient, container: Container, *, helper_image: str, labels: Mapping[str, str]
) -> None:
    """Remove every IPv4 default route from `container`'s network namespace.

    Docker 20.10 gives a container on an internal network a default route via the bridge and relies on
    iptables to drop what takes it. Removing the route makes "no way out" hold inside the namespace
    itself, where a check can read it. Connected routes stay: the run's network, and the bridge
    gateway (the host's services) on it, remain reachable. A short-lived helper container with
    NET_ADMIN joins the namespace; the target keeps no extra capability.
    """
    try:
        output = client.containers.run(
            helper_image,
            ["python3", "-c", DROP_DEFAULT_ROUTES],
            network_mode=f"container:{container.id}",
            cap_add=["NET_ADMIN"],
            labels=dict(labels),
            remove=True,
        )
    except DockerException as exc:
        raise HarnessError(
            f"could not remove the default route of container {container.name}: {exc}",
            hint="the engine must allow NET_ADMIN for a helper container; check the engine's log",
        ) from exc
    remaining = bytes(output).decode().strip()
    if remaining != "0":
        raise HarnessError(
            f"container {container.name} still has a default route after removal (helper said {remaining!r})",
            hint="check the engine's log; the run cannot be shown to have no way out",
        )


def start_netns_holder(
    client: docker.DockerClient,
    network: Network,
    *,
    image: str,
    labels: Mapping[str, str],
    name: str | None = None,
) -> Container:
    """A container that only holds a network namespace on `network`, with its default route removed.

    Start the real container with `network_mode=f"container:{holder.id}"`: it shares the namespace from
    its first instruction, so there is no moment with a route out (the pattern of a Kubernetes pod's
    pause container). Remove the holder after the container that uses it.
    """
    holder = client.containers.run(
        image, ["sleep", "infinity"], detach=True, network=network.name, labels=dict(labels), name=name
    )
    try:
        drop_default_route(client, holder, helper_image=image, labels=labels)
    except HarnessError:
        holder.remove(force=True)
        raise
    return holder


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
