"""The Docker executor's plumbing around the plan: sweep leftovers of dead runs, find what a run left."""

from __future__ import annotations

from windtunnel._drivers.cleanup import describe, labelled, remove_labelled, sweep_leftovers
from windtunnel._drivers.docker_env import docker_client
from windtunnel._drivers.network import CALLER_LABEL


class DockerExecutor:
    """Every container and network of a run carries `windtunnel.caller=<certify run id>` (whatever
    WT_SESSION_LABEL puts under `windtunnel.session`); that label finds and removes them."""

    def prepare(self, run_id: str) -> list[str]:
        return sweep_leftovers(docker_client())

    def leftovers(self, run_id: str) -> list[str]:
        client = docker_client()
        found = describe(labelled(client, CALLER_LABEL, run_id))
        if found:
            remove_labelled(client, CALLER_LABEL, run_id)  # recorded as a failed check, then cleaned anyway
        return found
