"""The Docker executor's plumbing around the plan: sweep leftovers of dead runs, find what a run left."""

from __future__ import annotations

from windtunnel._engine.cleanup import describe, labelled, remove_labelled, sweep_leftovers
from windtunnel._engine.docker_env import docker_client
from windtunnel._engine.network import CALLER_LABEL
from windtunnel.errors import EngineUnavailableError

ENGINE_CHECK_S = 10.0


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

    def check_engine(self) -> None:
        """A ping within a few seconds, or EngineUnavailableError saying the engine went away mid-run."""
        try:
            docker_client(timeout=ENGINE_CHECK_S).close()
        except EngineUnavailableError as exc:
            raise EngineUnavailableError(
                f"the Docker engine stopped answering during the run: {exc.message}",
                hint="start the engine again (or point DOCKER_HOST at it) and run again; the evidence recorded "
                "so far stays in --out, unsigned, and what this run left behind goes with the next run or "
                "`wt images sweep`",
            ) from exc
