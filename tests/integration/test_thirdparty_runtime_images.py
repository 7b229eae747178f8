"""The third-party runtimes' images for real: built offline from their Dockerfiles, run, and driven over Contract C.

Each image is built as its runtime.toml says (the shared Python runtime Dockerfile, a wheelhouse of its
requirements.txt and the windtunnel-inject library, no network in the build) and started with the host's network namespace, listening on 127.0.0.1 only, so it reaches the real
gateway (script mode) and the support_desk mocks this test serves on loopback. The certification network
(no route out) is the conformance suite's business; this proves the images themselves work.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import httpx
import pytest
from docker.models.containers import Container

from windtunnel._drivers.plugin import build_manifest_image
from windtunnel._gateway.app import create_app as create_gateway
from windtunnel._gateway.client import GatewayClient
from windtunnel._gateway.script import ScriptMode
from windtunnel._mcp.loopback import LoopbackMCP, start_loopback, stop_loopback
from windtunnel._net.server_thread import ServerThread
from windtunnel._packs.loader import load_pack
from windtunnel._runtimes.manifest import load_manifest
from windtunnel._scenario.model import Scenario

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SUPPORT_DESK = REPO / "scenarios" / "support_desk"
MODEL = "wt-test-model"
READY_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_pack(str(SUPPORT_DESK)).scenario("refund_damaged_item")


@pytest.fixture(scope="module")
def gateway() -> Iterator[GatewayClient]:
    with (
        ServerThread(create_gateway(ScriptMode(), models=[MODEL])) as server,
        GatewayClient(server.url) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def mocks() -> Iterator[list[LoopbackMCP]]:
    handles = start_loopback(load_pack(str(SUPPORT_DESK)).plans())
    yield handles
    stop_loopback(handles)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _wait_ready(url: str, container: Container) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/wt/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            container.reload()
            if container.status == "exited":
                break
            time.sleep(0.2)
    pytest.fail(f"the runtime at {url} never became healthy; its log:\n{container.logs().decode()[-3000:]}")


@pytest.mark.parametrize("name", ["openai-agents", "pydantic-ai"])
def test_the_image_builds_offline_and_serves_the_golden_refund(
    name: str,
    docker_client: docker.DockerClient,
    base_image: str,
    session_labels: dict[str, str],
    gateway: GatewayClient,
    mocks: list[LoopbackMCP],
    scenario: Scenario,
) -> None:
    image = build_manifest_image(
        docker_client, load_manifest(REPO / "runtimes" / name), base_image=base_image
    )
    port = _free_port()
    env = {
        "WT_MODEL_BASE_URL": f"{gateway.base_url}/v1",
        "WT_MODEL_NAME": MODEL,
        "WT_MCP_SERVERS": json.dumps([{"name": mock.name, "url": mock.url} for mock in mocks]),
        "WT_INJECT_HOST": "127.0.0.1",
        "WT_INJECT_PORT": str(port),
    }
    for mock in mocks:
        mock.reset()
    golden = scenario.goldens[0]
    gateway.install_script(golden.name, golden.decisions, session=f"image-{name}")
    container = docker_client.containers.run(
        image.tag, detach=True, network_mode="host", environment=env, labels=session_labels
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, container)
        message = {"role": "user", "content": str(scenario.prompt)}
        body = {"session_id": f"image-{name}", "message": message, "timeout_s": 60}
        response = httpx.post(f"{url}/wt/inject", json=body, timeout=70)
        assert response.status_code == 200, response.text
        assert [call["name"] for call in response.json()["tool_calls"]] == ["lookup_order", "issue_refund"]
        assert [call["name"] for mock in mocks for call in mock.calls()] == ["lookup_order", "issue_refund"]
        assert httpx.post(f"{url}/wt/reset", timeout=10).status_code == 200
        assert httpx.get(f"{url}/wt/state", timeout=10).json() == {"sessions": {}}
    finally:
        container.remove(force=True)
