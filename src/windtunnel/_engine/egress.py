"""The egress probe: from inside a runtime's own network namespace, its peers answer and nothing else does.

A probe container joins the namespace of the runtime's fence holder (windtunnel._engine.fence), so it sees
exactly what the runtime sees. It tries, by TCP: the gateway and every started mock (peers: they must
answer, else "nothing else answered" proves nothing); a listener the harness starts in the engine host's
network namespace on all interfaces, through the run network's gateway address and every other address
the host holds (docker0 and the other bridges' gateways among them); and a canary on a second, ordinary
project network. Every listener has said it listens before any attempt. The metadata address
(169.254.169.254) is looked up in the namespace's routing table, never sent to, as no packet may leave this
machine. The routing table itself (IPv4 and IPv6) is read from /proc and may hold the run's subnet only.
A control attempt on the host listener from the run's network without the fence shows what the fence stops.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import struct
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from docker.errors import DockerException
from docker.models.containers import Container
from docker.models.networks import Network

from windtunnel._core.abilities import EgressAttempt, EgressReport, ReachAttempt
from windtunnel._engine.fence import subnet_and_host
from windtunnel._engine.fence_log import PROBE_UID, attempts_of, read_events
from windtunnel._engine.network import ROLE_LABEL
from windtunnel._engine.stack import GATEWAY_ALIAS, GATEWAY_PORT, MOCK_PORT, ContainerStack, RunningContainer
from windtunnel.errors import HarnessError

METADATA_ADDRESS = "169.254.169.254"
LISTEN_TIMEOUT_S = 30.0
LISTENER_LIFETIME_S = 600
RECORD_WAIT_S = 2.0
"""A listener ends itself after this long even if the harness dies before removing it."""

LISTENER = r"""
import signal, socket, sys
signal.alarm(int(sys.argv[1]))  # never outlives the check, even if the harness dies
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("0.0.0.0", 0))
server.listen(64)
local, last = set(), None
for line in open("/proc/net/fib_trie").read().splitlines():
    if "|--" in line:
        last = line.split("|--")[1].strip()
    elif "/32 host LOCAL" in line and last and not last.startswith("127."):
        local.add(last)
print("LISTENING", server.getsockname()[1], *sorted(local), flush=True)
while True:
    server.accept()[0].close()
"""
"""Listens on a free port on all interfaces; prints that port and this namespace's own IPv4 addresses."""

PROBE = r"""
import errno, json, socket, sys
from concurrent.futures import ThreadPoolExecutor
def attempt(target):
    host, port = target.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            return "connected"
    except socket.timeout:
        return "timed out"
    except ConnectionRefusedError:
        return "refused"
    except socket.gaierror as exc:
        return "name not resolved: %s" % exc
    except OSError as exc:
        if exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EACCES, errno.EPERM):
            return "unreachable"
        return "failed: %s" % exc
def read(path):
    try:
        return open(path).read()
    except OSError:
        return ""
targets = sys.argv[1:]
with ThreadPoolExecutor(16) as pool:
    outcomes = dict(zip(targets, pool.map(attempt, targets)))
print(json.dumps({"outcomes": outcomes, "route": read("/proc/net/route"), "ipv6_route": read("/proc/net/ipv6_route")}))
"""


@dataclass(frozen=True, slots=True)
class Route:
    """One route of a namespace: destination network and, when routed through one, the gateway."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    gateway: str | None

    def __str__(self) -> str:
        return f"{self.network} via {self.gateway}" if self.gateway else str(self.network)


def _ipv4(hex_le: str) -> str:
    return socket.inet_ntoa(struct.pack("<L", int(hex_le, 16)))


def parse_ipv4_routes(text: str) -> list[Route]:
    """/proc/net/route: addresses are little-endian hex; the mask gives the prefix."""
    routes = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        destination, gateway, mask = _ipv4(fields[1]), _ipv4(fields[2]), _ipv4(fields[7])
        network = ipaddress.IPv4Network(f"{destination}/{mask}", strict=False)
        routes.append(Route(network, None if int(fields[2], 16) == 0 else gateway))
    return routes


def parse_ipv6_routes(text: str) -> list[Route]:
    """/proc/net/ipv6_route, loopback device routes left out (they lead nowhere else)."""
    routes = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 10 or fields[9] == "lo":
            continue
        address = ipaddress.IPv6Address(bytes.fromhex(fields[0]))
        nexthop = ipaddress.IPv6Address(bytes.fromhex(fields[4]))
        network = ipaddress.IPv6Network(f"{address}/{int(fields[1], 16)}", strict=False)
        routes.append(Route(network, None if nexthop.is_unspecified else str(nexthop)))
    return routes


def route_for(address: str, routes: Sequence[Route]) -> Route | None:
    """The route the kernel would pick for `address` (longest prefix), or None: looked up, not sent."""
    target = ipaddress.ip_address(address)
    matching = [r for r in routes if r.network.version == target.version and target in r.network]
    return max(matching, key=lambda r: r.network.prefixlen, default=None)


def run_egress_probe(stack: ContainerStack, runtime: RunningContainer) -> EgressReport:
    """Probe `runtime`'s namespace (see the module docstring); every helper is removed before returning."""
    stack.gateway()
    subnet, host = subnet_and_host(stack.network)
    peers = {f"{GATEWAY_ALIAS}:{GATEWAY_PORT}": "peer: the model gateway"}
    peers |= {f"{alias}:{MOCK_PORT}": f"peer: MCP mock {alias}" for alias in stack.mock_aliases()}
    helpers: list[Container] = []
    outside = stack.client.networks.create(
        f"{stack.network.name}-outside-{uuid.uuid4().hex[:4]}",
        driver="bridge",
        internal=False,
        labels={**stack.labels, ROLE_LABEL: "egress-canary"},
    )
    try:
        listener, canary = _start_listeners(stack, outside.name, helpers)
        port, host_addresses = listener[0], listener[1]
        canary_ip = _address_on(helpers[1], outside.name)
        blocked = _host_targets(stack, host, port, host_addresses)
        blocked[f"{canary_ip}:{canary[0]}"] = "canary on another project network"
        targets = {**peers, **blocked}
        with ThreadPoolExecutor(2) as pool:
            fenced = pool.submit(_probe, stack, list(targets), f"container:{runtime.namespace.id}")
            control = pool.submit(_probe, stack, [f"{host}:{port}"], stack.network.name)
            result, control_result = fenced.result(), control.result()
    except DockerException as exc:
        raise HarnessError(f"the egress probe could not run: {exc}", hint="check the Docker engine") from exc
    finally:
        for helper in helpers:
            _remove(helper)
        _remove_network(outside)
    # The probe ran as PROBE_UID: what the fence recorded of it proves the record of blocked attempts bites.
    probed = _probe_events(runtime, host)
    recorded = tuple(attempts_of(probed, stack.fence_log.known))
    return _report(result, control_result, targets, peers, subnet, host, port, recorded)


def _probe_events(runtime: RunningContainer, host: str) -> list[dict[str, Any]]:
    """The fence's record of the probe's own blocked attempts. The kernel hands a refused packet to the
    holder's agent asynchronously, so the record is read again (up to RECORD_WAIT_S) until the attempt on
    the host's bridge address, which every fenced probe makes, is in it."""
    deadline = time.monotonic() + RECORD_WAIT_S
    while True:
        probed = [e for e in read_events(runtime.namespace) if e.get("uid") == PROBE_UID]
        if any(e.get("destination") == host for e in probed) or time.monotonic() >= deadline:
            return probed
        time.sleep(0.05)


def _report(
    result: ProbeResult,
    control: ProbeResult,
    targets: dict[str, str],
    peers: dict[str, str],
    subnet: str,
    host: str,
    port: int,
    recorded: tuple[ReachAttempt, ...] = (),
) -> EgressReport:
    attempts = [
        EgressAttempt(target, what, result.outcomes.get(target, "not tried"), peer=target in peers)
        for target, what in targets.items()
    ]
    routes = result.routes
    route = route_for(METADATA_ADDRESS, routes)
    attempts.append(
        EgressAttempt(
            METADATA_ADDRESS,
            "the cloud metadata address (looked up in the routing table, never sent to)",
            "no route" if route is None else "routable",
        )
    )
    control_outcome = control.outcomes.get(f"{host}:{port}", "not tried")
    return EgressReport(
        attempts=tuple(attempts),
        routes=tuple(str(r) for r in routes),
        allowed_routes=(str(ipaddress.ip_network(subnet, strict=False)),),
        control=(
            EgressAttempt(
                f"{host}:{port}",
                "host listener via the run network's gateway, from the run network WITHOUT the fence",
                control_outcome,
            ),
        ),
        fence_recorded=recorded,
    )


def _host_targets(stack: ContainerStack, host: str, port: int, addresses: Sequence[str]) -> dict[str, str]:
    """The host listener through every host address: the run network's gateway first, then each other
    bridge's gateway (named by its network) and every other address the host holds."""
    bridges = bridge_gateways(stack.client.networks.list(filters={"driver": "bridge"}), addresses)
    targets = {f"{host}:{port}": "host listener via the run network's gateway"}
    for address in sorted({*addresses, *bridges} - {host}, key=_sort_key):
        if ":" in address:
            continue  # IPv6: the fenced namespace has no IPv6 at all (its routes show it)
        # Docker's default bridge by its name; other runs' networks on a shared engine stay unnamed.
        named = bridges.get(address)
        where = (
            "a host address"
            if named is None
            else "the engine's default bridge (docker0)"
            if named == "bridge"
            else "the gateway of another bridge network"
        )
        targets[f"{address}:{port}"] = f"host listener via {where}"
    return targets


def bridge_gateways(networks: Sequence[Network], addresses: Sequence[str]) -> dict[str, str]:
    """Each bridge network's gateway address -> the network's name. An engine may list a subnet without
    its gateway (a fresh engine's default bridge does): then the host address inside that subnet is it."""
    bridges: dict[str, str] = {}
    for network in networks:
        for config in network.attrs.get("IPAM", {}).get("Config") or []:
            if config.get("Gateway"):
                bridges.setdefault(str(config["Gateway"]), str(network.name))
            elif config.get("Subnet"):
                subnet = ipaddress.ip_network(str(config["Subnet"]), strict=False)
                for address in addresses:
                    if ipaddress.ip_address(address) in subnet:
                        bridges.setdefault(address, str(network.name))
    return bridges


def _sort_key(address: str) -> tuple[int, str]:
    return (len(address), address)


def _start_listeners(
    stack: ContainerStack, outside: str, helpers: list[Container]
) -> tuple[tuple[int, list[str]], tuple[int, list[str]]]:
    """The host listener (engine host's namespace) and the canary (the outside network), both listening."""
    labels = {**stack.labels, ROLE_LABEL: "egress-listener"}
    command = ["python3", "-c", LISTENER, str(LISTENER_LIFETIME_S)]
    for network_mode in ("host", outside):
        helpers.append(
            stack.client.containers.run(
                stack.windtunnel_image,
                entrypoint=command[:1],
                command=command[1:],
                detach=True,
                network_mode=network_mode,
                labels=labels,
            )
        )
    return _listening(helpers[0]), _listening(helpers[1])


def _listening(container: Container) -> tuple[int, list[str]]:
    """Wait for the listener's LISTENING line (printed after listen()): its port and addresses."""
    deadline = time.monotonic() + LISTEN_TIMEOUT_S
    while time.monotonic() < deadline:
        for line in container.logs().decode("utf-8", "replace").splitlines():
            if line.startswith("LISTENING "):
                fields = line.split()[1:]
                return int(fields[0]), fields[1:]
        container.reload()
        if container.status in {"exited", "dead"}:
            break
        time.sleep(0.05)
    tail = container.logs(tail=10).decode("utf-8", "replace")
    raise HarnessError(
        f"the egress listener {container.name} never listened: {tail.strip() or container.status}",
        hint="check the Docker engine; the listener is python3 in the windtunnel image",
    )


def _address_on(container: Container, network: str) -> str:
    container.reload()
    return str(container.attrs["NetworkSettings"]["Networks"][network]["IPAddress"])


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What one probe saw: each target's outcome and its namespace's routes."""

    outcomes: dict[str, str]
    routes: list[Route]


def _probe(stack: ContainerStack, targets: list[str], network_mode: str) -> ProbeResult:
    output = stack.client.containers.run(
        stack.windtunnel_image,
        entrypoint=["python3", "-c", PROBE],
        command=targets,
        remove=True,
        network_mode=network_mode,
        user=str(PROBE_UID),  # the fence's record tells the probe's attempts from the runtime's by it
        labels={**stack.labels, ROLE_LABEL: "egress-probe"},
    )
    try:
        result = json.loads(bytes(output).decode().strip().splitlines()[-1])
        routes = parse_ipv4_routes(result["route"]) + parse_ipv6_routes(result["ipv6_route"])
        return ProbeResult(outcomes={str(k): str(v) for k, v in result["outcomes"].items()}, routes=routes)
    except (ValueError, IndexError, KeyError, TypeError, AttributeError) as exc:
        raise HarnessError(f"the egress probe printed no readable result: {output!r:.300}") from exc


def _remove(container: Container) -> None:
    try:
        container.remove(force=True)
    except DockerException:
        return


def _remove_network(network: Network) -> None:
    try:
        network.remove()
    except DockerException:
        return
