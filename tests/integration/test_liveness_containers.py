"""A dead gateway or mock is named, with real containers: kill the model gateway (or an MCP mock) of a
running stack, and the runner's next call says which container exited and its exit code, instead of a
transport error with hints about URLs (windtunnel._net.liveness, ContainerStack.container_liveness)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from windtunnel._drivers.container_plugin import ContainerRuntimePlugin
from windtunnel._engine.network import RUN_LABEL
from windtunnel._packs.loader import load_pack
from windtunnel._runtimes.manifest import load_manifest
from windtunnel.errors import HarnessError
from windtunnel.spi import AgentConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def runtime(docker_client: docker.DockerClient, base_image: str, run_label: str) -> Iterator[Any]:
    env = {**os.environ, "WT_BASE_IMAGE": base_image, "WT_SESSION_LABEL": run_label}
    built = ContainerRuntimePlugin(load_manifest(REPO / "tests/fixtures/runtimes/two_routes"), env=env).build(
        "two-routes", "t", None
    )
    yield built
    built.close()


def kill(client: docker.DockerClient, run_id: str, role: str) -> None:
    (container,) = client.containers.list(
        filters={"label": [f"{RUN_LABEL}={run_id}", f"windtunnel.role={role}"]}
    )
    container.kill()
    container.wait(timeout=30)


def test_a_killed_gateway_is_named_by_the_turn_and_by_the_gateway_log(
    runtime: Any, docker_client: docker.DockerClient
) -> None:
    handle = runtime.provision(AgentConfig(), [])
    try:
        kill(docker_client, runtime.stack.run_id, "gateway")
        with pytest.raises(HarnessError) as turn:
            handle.send([{"role": "user", "content": "Hello?"}], "s1")
        assert turn.value.message.startswith("the model gateway container exited (code 137)")
        assert "so the turn failed" in turn.value.message and "not the runtime" in str(turn.value.hint)
        with pytest.raises(HarnessError) as log:
            handle.model_requests()
        assert log.value.message.startswith("the model gateway container exited (code 137)")
        assert "its last log lines" in log.value.message
    finally:
        handle.teardown()


def test_a_killed_mock_is_named_when_its_calls_are_read(
    runtime: Any, docker_client: docker.DockerClient
) -> None:
    pack = load_pack(str(REPO / "scenarios" / "support_desk"))
    plan = pack.plans()[0]
    mock = runtime.stack.mock(plan)
    assert mock.calls() == []
    kill(docker_client, runtime.stack.run_id, "mock")
    with pytest.raises(HarnessError) as read:
        mock.calls()
    assert read.value.message.startswith(
        f"the MCP mock {plan.pack}/{plan.server} container exited (code 137)"
    )
