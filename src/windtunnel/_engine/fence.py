"""The egress fence: a runtime container lives in a holder container's network namespace, which reaches the run's
own network and nothing else.

Docker's `internal` networks still hand containers a default route (Docker 20.10) and leave the host reachable
through the bridge's own address, which is ON the run's subnet, so dropping the default route alone does
not close it. The holder (a Kubernetes-pod-style "pause" container from the small netguard image) joins
the run network under the runtime's alias, removes every default route and installs a default-deny
egress firewall: new outbound connections may go to loopback (the holder's resolver, not Docker's DNS at 127.0.0.11) and to
the run's subnet except the bridge's address (the host); replies to inbound connections pass, so the
runner can call the runtime's Contract C port from the host. The runtime then starts with
`network_mode=container:<holder>` and without NET_ADMIN, so it cannot undo the fence. Everything happens
through the Docker API inside the engine's own namespaces: no host-side iptables, so it works against a
remote or Docker-in-Docker engine too. The holder's one process (windtunnel._engine.netguard_agent) is the
namespace's resolver, answering only the run's peers, and records what the fence refuses. docs/design.md
"Containers and network" describes it.
"""

from __future__ import annotations

import io
import json
import shlex
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import docker
from docker.errors import DockerException, ImageNotFound
from docker.models.containers import Container
from docker.models.networks import Network
from docker.types import Mount

from windtunnel._engine.fence_log import EMBEDDED_DNS
from windtunnel._engine.netguard_agent import FENCED, NOT_FENCED, RESOLVER_ADDRESS
from windtunnel._engine.network import ROLE_LABEL
from windtunnel._engine.readiness import GONE_EVERY_S
from windtunnel.errors import HarnessError

if TYPE_CHECKING:
    from windtunnel._engine.stack import ContainerStack, RunningContainer

NETGUARD_TAG = "windtunnel/netguard:1"
"""Bump the number when NETGUARD_DOCKERFILE changes: the tag is the cache key."""
NETGUARD_DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iptables iproute2 \\
 && rm -rf /var/lib/apt/lists/*
"""
FENCE_ROLE = "fence"
RUNTIME_CAP_DROP = ("NET_ADMIN", "NET_RAW")
"""NET_ADMIN would let the runtime rewrite the fence; NET_RAW is not needed by any Contract C runtime."""
HOLDER_SYSCTLS = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}
"""No IPv6 at all: a link-local address would reach the host's bridge without any IPv4 route."""
NFLOG_GROUP = 29
"""The netlink log group the fence copies refused packets to (per namespace, so any fixed number works)."""
AGENT_SOURCE = (Path(__file__).parent / "netguard_agent.py").read_text(encoding="utf-8")
"""The holder's one process (resolver, fence, fence log reader), run by the image's python3: no image change."""
FENCE_TIMEOUT_S = 20.0
"""How long a holder may take to say it is fenced (its Python start-up and the rules, on a loaded machine)."""
HOLDER_LOG = {"type": "json-file", "config": {"max-size": "1m"}}
"""The holder's log is where it says it is fenced, so it must be readable whatever the engine's default
log driver is (`none`, syslog and others cannot be read back)."""


def ensure_netguard_image(
    client: docker.DockerClient,
    base_image: str | None = None,
    *,
    cache_dir: Path | None = None,
    lock_dir: Path | None = None,
) -> str:
    """The holder image (`base_image` plus iptables and iproute2), built once and then reused in any engine.

    An engine that lacks it gets it the way it gets the base image (windtunnel._engine.base_transfer):
    loaded from the tar saved under `cache_dir`, or saved now from the local engine; only where neither has
    it is it built, which needs a Debian mirror, and the build saves its tar, so no engine builds it twice."""
    from windtunnel._engine.base_transfer import save, saved_tar, transfer

    try:
        client.images.get(NETGUARD_TAG)
        return NETGUARD_TAG
    except ImageNotFound:
        pass
    except DockerException as exc:
        raise HarnessError(f"the Docker engine could not look up {NETGUARD_TAG}: {exc}") from exc
    if transfer(client, NETGUARD_TAG, cache_dir):
        return NETGUARD_TAG
    if base_image is None:
        from windtunnel._engine.base_image import ensure_base_image

        base_image = ensure_base_image(client, cache_dir=cache_dir, lock_dir=lock_dir)
    _build_netguard(client, base_image)
    save(client, NETGUARD_TAG, saved_tar(NETGUARD_TAG, cache_dir))
    return NETGUARD_TAG


def _build_netguard(client: docker.DockerClient, base_image: str) -> None:
    try:
        client.images.build(
            fileobj=io.BytesIO(NETGUARD_DOCKERFILE.encode()),
            tag=NETGUARD_TAG,
            buildargs={"BASE_IMAGE": base_image},
            labels={"windtunnel.image": "netguard"},
            rm=True,
            forcerm=True,
        )
    except DockerException as exc:
        reason = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        raise HarnessError(
            f"could not build the egress fence image {NETGUARD_TAG} from {base_image}: {reason}",
            hint="its build installs iptables and iproute2 from Debian packages once, so the engine must "
            f"reach a Debian mirror then; or `docker save {NETGUARD_TAG}` where it exists and `docker load` it here",
        ) from exc


def subnet_and_host(network: Network) -> tuple[str, str]:
    """The run network's IPv4 subnet and the bridge's own address on it (where the host answers)."""
    network.reload()
    for config in network.attrs.get("IPAM", {}).get("Config") or []:
        subnet, gateway = config.get("Subnet"), config.get("Gateway")
        if subnet and gateway and ":" not in str(subnet):
            return str(subnet), str(gateway)
    raise HarnessError(
        f"network {network.name} reports no IPv4 subnet and gateway, so its fence cannot be drawn",
        hint="check `docker network inspect` on it; Wind Tunnel creates its run networks as IPv4 bridges",
    )


def fence_rules(subnet: str, host: str) -> list[list[str]]:
    """iptables arguments, in order, for the holder's OUTPUT chain. Replies (ESTABLISHED) always pass, so
    inbound calls are answered; a new connection may go to loopback (the holder's own resolver) and the
    subnet, never to `host` nor to Docker's embedded DNS (it forwards unknown names off the machine). Each
    refusal first copies the packet to NFLOG_GROUP, where the holder's agent records it."""
    log = ["-j", "NFLOG", "--nflog-group", str(NFLOG_GROUP)]
    embedded = ["-d", f"{EMBEDDED_DNS}/32"]
    return [
        ["-P", "OUTPUT", "DROP"],
        ["-A", "OUTPUT", *embedded, *log],
        ["-A", "OUTPUT", *embedded, "-j", "REJECT", "--reject-with", "icmp-port-unreachable"],
        ["-A", "OUTPUT", "-o", "lo", "-j", "ACCEPT"],
        ["-A", "OUTPUT", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
        ["-A", "OUTPUT", "-d", f"{host}/32", *log],
        ["-A", "OUTPUT", "-d", f"{host}/32", "-j", "REJECT", "--reject-with", "icmp-admin-prohibited"],
        ["-A", "OUTPUT", "-d", subnet, "-j", "ACCEPT"],
        ["-A", "OUTPUT", *log],
        ["-A", "OUTPUT", "-j", "REJECT", "--reject-with", "icmp-net-unreachable"],
    ]


IPV6_RULES = [
    ["-P", "OUTPUT", "DROP"],
    ["-A", "OUTPUT", "-o", "lo", "-j", "ACCEPT"],
    ["-A", "OUTPUT", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
]
"""IPv6 is switched off (HOLDER_SYSCTLS); should an engine ignore that, no new IPv6 connection leaves."""


def fence_script(subnet: str, host: str) -> str:
    """The shell script the holder's agent runs once its resolver listens: no default route, then the
    firewall, then the namespace's resolv.conf (shared with the runtime) names that resolver; prints
    `fenced`. The nf_tables backend is tried first and the legacy one where the kernel has no nf_tables.
    Each table's rules go in with one `iptables-restore`, all at once: a process per rule cost more."""
    return (
        "set -eu\n"
        "IPT=iptables IP6T=ip6tables\n"
        "if ! iptables -S >/dev/null 2>&1; then IPT=iptables-legacy IP6T=ip6tables-legacy; fi\n"
        "while ip -4 route del default 2>/dev/null; do :; done\n"
        f"$IPT-restore --noflush <<'RULES'\n{restore_input(fence_rules(subnet, host))}\nRULES\n"
        f"$IP6T-restore --noflush <<'RULES'\n{restore_input(IPV6_RULES)}\nRULES\n"
        # In place: the file is bind-mounted, and the runtime container is given the same one.
        f"printf 'nameserver {RESOLVER_ADDRESS}\\noptions timeout:1 attempts:1\\n' > /etc/resolv.conf\n"
        "echo fenced\n"
    )


def restore_input(rules: Sequence[Sequence[str]]) -> str:
    """`rules` (iptables arguments for the filter table) as iptables-restore reads them: a policy (`-P
    CHAIN TARGET`) becomes the chain's header line, which sets a built-in chain's policy."""
    lines = ["*filter"]
    for rule in rules:
        lines.append(f":{rule[1]} {rule[2]} [0:0]" if rule[0] == "-P" else shlex.join(rule))
    return "\n".join([*lines, "COMMIT"])


def start_fenced(
    stack: ContainerStack,
    image: str,
    *,
    alias: str,
    env: Mapping[str, str],
    role: str = "runtime",
    mounts: Sequence[Mount] = (),
) -> RunningContainer:
    """Start `image` inside a fresh, fenced holder on the run network; the holder answers to `alias`
    and owns the IP. stack.remove() removes both, the container first (its anonymous volumes with it)."""
    from windtunnel._engine.stack import RunningContainer

    network = stack.network
    subnet, host = subnet_and_host(network)
    name = f"{network.name}-{alias}-{uuid.uuid4().hex[:4]}"
    command = holder_command(stack.peer_addresses(), fence_script(subnet, host))
    holder = _start_holder(stack, f"{name}-fence", alias=alias, command=command)
    stack.fence_log.known[host] = "the host, through the run network's gateway address"
    container: Container | None = None
    try:
        _await_fence(holder)
        container = stack.client.containers.create(
            image,
            name=name,
            environment=dict(env),
            labels={**stack.labels, ROLE_LABEL: role},
            network_mode=f"container:{holder.id}",
            cap_drop=list(RUNTIME_CAP_DROP),
            mounts=list(mounts),
            detach=True,
        )
        container.start()
        holder.reload()
    except BaseException as exc:
        for started in (container, holder):
            if started is not None:
                _remove(started)
        if isinstance(exc, DockerException):
            raise HarnessError(
                f"could not start the {role} container from {image}: {exc}",
                hint="check `docker images` for the image and `docker info` for the engine",
            ) from exc
        raise
    stack.track_fence(holder)
    ip = holder.attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
    return RunningContainer(container=container, alias=alias, ip=ip, holder=holder)


def holder_command(peers: Mapping[str, str], script: str) -> list[str]:
    """The holder's command: the netguard agent answering `peers`, installing the fence with `script` and
    reading the fence's NFLOG group."""
    # -I -S: the agent is standard library only, so it skips site and the environment (a faster start).
    return ["python3", "-I", "-S", "-c", AGENT_SOURCE, json.dumps(dict(peers)), str(NFLOG_GROUP), script]


def _start_holder(stack: ContainerStack, name: str, *, alias: str, command: list[str]) -> Container:
    """The holder runs the netguard agent (windtunnel._engine.netguard_agent): it answers the run's peers
    and no other name, fences its namespace and records what the fence refuses."""
    image = stack.netguard_image or ensure_netguard_image(stack.client)
    stack.netguard_image = image
    network = stack.network.name
    try:
        holder = stack.client.containers.create(
            image,
            command=command,
            log_config=HOLDER_LOG,
            name=name,
            labels={**stack.labels, ROLE_LABEL: FENCE_ROLE},
            network=network,
            networking_config={network: stack.client.api.create_endpoint_config(aliases=[alias])},
            cap_add=["NET_ADMIN"],
            sysctls=HOLDER_SYSCTLS,
            detach=True,
        )
    except DockerException as exc:
        raise HarnessError(
            f"could not create the egress fence for {alias}: {exc}",
            hint=f"the engine must allow NET_ADMIN for the holder container ({image}); see `docker info`",
        ) from exc
    try:
        holder.start()
    except DockerException as exc:
        _remove(holder)
        raise HarnessError(f"could not start the egress fence for {alias}: {exc}") from exc
    return holder


def _await_fence(holder: Container) -> None:
    """Return once the holder's agent says FENCED in its log; HarnessError when it says NOT_FENCED, exits,
    or says nothing within FENCE_TIMEOUT_S. The log is polled, not followed: docker-py cannot cancel a
    followed stream over ssh://, and a poll reads what a stopped holder said too."""
    checked = time.monotonic()
    deadline, pause = checked + FENCE_TIMEOUT_S, 0.005
    while True:
        try:
            lines = bytes(holder.logs() or b"").decode("utf-8", "replace").splitlines()
            if FENCED in lines:
                return
            if any(line.startswith(NOT_FENCED) for line in lines):
                raise _not_installed(holder, "by its holder")
            now = time.monotonic()
            if now >= deadline:
                raise _not_installed(
                    holder, f": its holder did not say it was fenced within {FENCE_TIMEOUT_S:.0f} s"
                )
            if now - checked >= GONE_EVERY_S:  # each state check is an inspect, as in a readiness wait
                checked = now
                holder.reload()
                if holder.status not in {"created", "running"}:
                    raise _not_installed(holder, f": its holder stopped ({holder.status})")
        except DockerException as exc:
            raise _not_installed(holder, f": its holder could not be read: {exc}") from exc
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _not_installed(holder: Container, why: str) -> HarnessError:
    try:  # the agent's last words: the fence script's failure, or why its resolver did not start
        said = bytes(holder.logs(tail=5) or b"").decode("utf-8", "replace").strip()
    except DockerException:
        said = ""
    return HarnessError(
        f"the egress fence could not be installed {why}"
        + (f"\n  the holder said: {said[-400:]}" if said else ""),
        hint="the holder needs NET_ADMIN and a kernel with iptables (nf_tables or legacy), conntrack and "
        "nfnetlink_log (NFLOG)",
    )


def _remove(container: Container) -> None:
    try:
        container.remove(force=True, v=True)
    except DockerException:
        return
