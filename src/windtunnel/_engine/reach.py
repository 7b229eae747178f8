"""Whether this process can reach containers by their addresses on a project network: a real probe.

A tiny container on a network of its own serves a random token; this process asks for it at the
container's address. The kernel's routing table is read first: an address with no directly connected
route (a remote engine's, Docker Desktop's VM's, a docker:dind service's) would only be sent to the
default gateway, so nothing is sent and the answer is "not routable". Where the probe cannot run at all,
the engine's address decides (a tcp:// or ssh:// DOCKER_HOST is another machine's engine); the operating
system alone never does.
"""

from __future__ import annotations

import ipaddress
import secrets
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from docker.errors import DockerException

from windtunnel._engine.network import ROLE_LABEL, run_labels

PORT = 8000
SERVER = (
    "import http.server, sys\n"
    "token = sys.argv[1].encode()\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def do_GET(self):\n"
    "        self.send_response(200); self.end_headers(); self.wfile.write(token)\n"
    "    def log_message(self, *a): pass\n"
    f"http.server.HTTPServer(('0.0.0.0', {PORT}), H).serve_forever()\n"
)
LISTEN_TIMEOUT_S = 20.0
ROUTES = Path("/proc/net/route")


@dataclass(frozen=True, slots=True)
class Reach:
    """`routable`: this process reaches container addresses; `evidence`: what showed it, in one line."""

    routable: bool
    evidence: str


def probe_reach(client: Any, image: str, docker_host: str | None) -> Reach:
    """Start the probe container from `image` (any image with python3) and try to reach it."""
    run_id = f"reach-{uuid.uuid4().hex[:10]}"
    labels = {**run_labels(run_id), ROLE_LABEL: "reach-probe"}
    token = secrets.token_hex(16)
    network = container = None
    try:
        network = client.networks.create(f"wt-{run_id}", driver="bridge", labels=labels)
        container = client.containers.run(
            image,
            entrypoint=["python3", "-c", SERVER, token],
            detach=True,
            network=network.name,
            labels=labels,
        )
        container.reload()
        address = container.attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
        return _reach(address, token)
    except DockerException as exc:
        return by_address(docker_host, f"the probe container could not run ({exc})")
    finally:
        _remove(container, network)


def _reach(address: str, token: str) -> Reach:
    if not directly_routed(address):
        return Reach(False, f"no directly connected route to the container address {address}")
    deadline = time.monotonic() + LISTEN_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            answer = httpx.get(f"http://{address}:{PORT}/", timeout=2.0).text
        except httpx.HTTPError:
            time.sleep(0.2)
            continue
        if answer == token:
            return Reach(True, f"reached the probe container at {address}")
        return Reach(False, f"{address} answered, but not as the probe container (another network there)")
    return Reach(False, f"the probe container at {address} did not answer in {LISTEN_TIMEOUT_S:.0f}s")


def directly_routed(address: str) -> bool:
    """Whether the kernel routes `address` to a directly connected network (no gateway) of this machine."""
    try:
        lines = ROUTES.read_text(encoding="utf-8").splitlines()[1:]
    except OSError:
        return False  # no Linux routing table: no direct route can be shown
    target = int(ipaddress.IPv4Address(address))
    best: tuple[int, bool] | None = None
    for line in lines:
        fields = line.split()
        if len(fields) < 8:
            continue
        destination, gateway, mask = (_host_order(fields[i]) for i in (1, 2, 7))
        if target & mask == destination & mask:
            prefix = bin(mask).count("1")
            if best is None or prefix > best[0]:
                best = (prefix, gateway == 0)
    return best is not None and best[1]


def _host_order(hex_field: str) -> int:
    """/proc/net/route prints addresses as little-endian hex."""
    return int.from_bytes(bytes.fromhex(hex_field), "little")


def by_address(docker_host: str | None, why: str) -> Reach:
    """The fallback evidence: an engine at tcp:// or ssh:// runs elsewhere; a local socket may be ours."""
    scheme = (docker_host or "unix://").split("://", 1)[0]
    if scheme in {"tcp", "ssh", "http", "https"}:
        return Reach(False, f"{why}; DOCKER_HOST is a {scheme}:// engine, so its containers run elsewhere")
    return Reach(True, f"{why}; the engine is a local socket")


def _remove(container: Any, network: Any) -> None:
    for item in (container, network):
        if item is None:
            continue
        try:
            item.remove(force=True) if item is container else item.remove()
        except DockerException:
            continue  # labelled: a later run's sweep takes it
