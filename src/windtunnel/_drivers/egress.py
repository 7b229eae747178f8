"""The egress probe: from the runtime's network, the gateway and the mocks answer and nothing else does.

A canary listener runs on a second, ordinary (non-internal) project network, standing in for "the
outside"; the probe must fail to reach it, while the gateway and every mock must answer (so a probe that
reaches nothing proves nothing). The probe also records whether its container has a default route.
No packet is ever sent to an address outside the project's own networks.
"""

from __future__ import annotations

import json
import uuid

from docker.errors import DockerException

from windtunnel._core.abilities import EgressReport
from windtunnel._drivers.readiness import wait_listening
from windtunnel._drivers.stack import GATEWAY_ALIAS, GATEWAY_PORT, MOCK_PORT, ContainerStack
from windtunnel.errors import HarnessError, RuntimeUnavailableError

PROBE = r"""
import json, socket, sys
def reach(target):
    host, port = target.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False
with open("/proc/net/route") as routes:
    default = any(line.split()[1] == "00000000" for line in routes.readlines()[1:] if line.split())
print(json.dumps({"default_route": default, "reached": {t: reach(t) for t in sys.argv[1:]}}))
"""


CANARY_TIMEOUT_S = 30.0


def _wait_for_canary(ip: str) -> None:
    """The host reaches the canary on its (project) network: it listens, so only the fence can stop the probe."""
    try:
        wait_listening(
            f"http://{ip}:8000",
            timeout=CANARY_TIMEOUT_S,
            what="the egress canary",
            hint="check the Docker engine; the canary is python3 -m http.server in the windtunnel image",
        )
    except RuntimeUnavailableError as exc:
        raise HarnessError(f"the egress canary never listened: {exc}", hint=exc.hint) from exc


def run_egress_probe(stack: ContainerStack) -> EgressReport:
    stack.gateway()
    inside = [f"{GATEWAY_ALIAS}:{GATEWAY_PORT}", *(f"{alias}:{MOCK_PORT}" for alias in stack.mock_aliases())]
    outside_net = stack.client.networks.create(
        f"{stack.network.name}-outside-{uuid.uuid4().hex[:4]}",
        driver="bridge",
        internal=False,
        labels={**stack.labels, "windtunnel.role": "egress-canary"},
    )
    canary = None
    try:
        canary = stack.client.containers.run(
            stack.windtunnel_image,
            entrypoint=["python3", "-m", "http.server", "8000"],
            detach=True,
            network=outside_net.name,
            labels={**stack.labels, "windtunnel.role": "egress-canary"},
        )
        canary.reload()
        outside_ip = canary.attrs["NetworkSettings"]["Networks"][outside_net.name]["IPAddress"]
        _wait_for_canary(outside_ip)  # else "not reached" could mean "not listening yet" and prove nothing
        targets = [*inside, f"{outside_ip}:8000"]
        output = stack.client.containers.run(
            stack.windtunnel_image,
            entrypoint=["python3", "-c", PROBE],
            command=targets,
            remove=True,
            network=stack.network.name,
            labels={**stack.labels, "windtunnel.role": "egress-probe"},
        )
        result = json.loads(output.decode().strip().splitlines()[-1])
    except (DockerException, ValueError, IndexError) as exc:
        raise HarnessError(f"the egress probe could not run: {exc}", hint="check the Docker engine") from exc
    finally:
        if canary is not None:
            canary.remove(force=True)
        outside_net.remove()
    return EgressReport(
        default_route=bool(result["default_route"]),
        reached=dict(result["reached"]),
        expected_reachable=tuple(inside),
        expected_blocked=(f"{outside_ip}:8000",),
    )
