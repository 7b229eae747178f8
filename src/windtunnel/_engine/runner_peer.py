"""The runner container as a peer on a run's networks, when Wind Tunnel certifies from inside the engine.

When container addresses are not routable from the process that runs the stage plan (a remote engine,
Docker Desktop, a docker:dind service), `wt certify` runs in a runner container inside the engine
(windtunnel._pipeline.in_container), named by WT_RUNNER_CONTAINER. That runner joins each network a run
creates, as the run creates it, so it reaches the gateway, the mocks and the runtime by their addresses as
a local runner would. It only initiates connections; the egress fence (windtunnel._engine.fence) lets
the runtime answer it, since the runner is one more peer on the run's subnet (the fence blocks only the
bridge's own address there, and everything off the subnet).
Removing a network detaches whatever is still attached to it (windtunnel._engine.cleanup), the runner too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docker.errors import DockerException

from windtunnel._env_values import process_env
from windtunnel.errors import HarnessError

RUNNER_ENV = "WT_RUNNER_CONTAINER"


def runner_name(env: Mapping[str, str] | None = None) -> str | None:
    """The name of the runner container this process runs in, or None for a runner on the host."""
    return (process_env() if env is None else env).get(RUNNER_ENV) or None


def join(network: Any) -> None:
    """Attach the runner container (if this process runs in one) to `network`."""
    name = runner_name()
    if name is None:
        return
    try:
        network.connect(name)
    except DockerException as exc:
        raise HarnessError(
            f"the runner container {name} could not join the run network {network.name}: {exc}",
            hint="check the engine (`docker info`); the runner container must still run",
        ) from exc
