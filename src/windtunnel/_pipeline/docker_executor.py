"""The Docker executor's plumbing around the plan: sweep leftovers of dead runs, find what a run left."""

from __future__ import annotations

from windtunnel._drivers.cleanup import describe, labelled, remove_session, sweep_leftovers
from windtunnel._drivers.docker_env import docker_client
from windtunnel._drivers.network import SESSION_LABEL


class DockerExecutor:
    """Every container of a run carries `windtunnel.session=<run id>`; that label finds and removes them."""

    def prepare(self, run_id: str) -> list[str]:
        return sweep_leftovers(docker_client())

    def leftovers(self, run_id: str) -> list[str]:
        client = docker_client()
        found = describe(labelled(client, SESSION_LABEL, run_id))
        if found:
            remove_session(client, run_id)  # recorded as a failed check, then cleaned anyway
        return found
