"""One client scenario of the official MCP conformance suite, run as a peer container on a run's network.

The suite (`conformance client --scenario S --command C`) starts its scenario's test server on all
interfaces and runs C with the server's URL. C here is the image's `wt-suite-client`: it writes the URL to
/wt/url and waits for /wt/done. Wind Tunnel reads the URL, names the server by the container's alias instead
of `localhost` (the runtime is fenced to its run network and its peers), drives the runtime's agent loop
against it, then writes /wt/done; the suite judges the traffic its server saw and writes its checks.
"""

from __future__ import annotations

import json
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import docker
from docker.errors import DockerException

from windtunnel._core.abilities import SuiteOutcome
from windtunnel._core.agent_runtime import MCPSpec
from windtunnel._engine.files import copy_out
from windtunnel._engine.mcp_suite_image import TAG, build_suite_image
from windtunnel._engine.stack import ContainerStack, RunningContainer, logs_tail
from windtunnel._engine.topology import ServicePlan, alias_for
from windtunnel.errors import HarnessError

URL_FILE = "/wt/url"
DONE_FILE = "/wt/done"
OUT_DIR = "/wt/out"
ROLE = "mcp-suite"
START_TIMEOUT_S = 60.0
FINISH_TIMEOUT_S = 60.0
POLL_S = 0.1
SERVER_NAME = "suite"
"""The name the runtime is given for the suite's server in WT_MCP_SERVERS."""


@dataclass(slots=True, kw_only=True)
class SuiteScenario:
    """A started client scenario: its server, then finish() for the suite's verdict; close() removes it."""

    scenario: str
    stack: ContainerStack
    running: RunningContainer
    server: MCPSpec
    """The suite's test server as the runtime reaches it (an MCPHandle)."""
    suite_url: str
    """The URL the suite gave its client (`http://localhost:<port>...`), before the alias replaced localhost."""
    closed: bool = field(default=False)

    def finish(self) -> SuiteOutcome:
        """Tell the client command the runtime is done, wait for the suite to judge, and read its checks."""
        container = self.running.container
        try:
            container.exec_run(["touch", DONE_FILE], user="nobody")
            container.wait(timeout=FINISH_TIMEOUT_S)
        except Exception as exc:  # the engine's errors and the HTTP client's timeout both end the wait
            raise HarnessError(
                f"the MCP conformance suite ({self.scenario}) did not finish within {FINISH_TIMEOUT_S:g} s: {exc}"
                f"\n  its last log lines:\n{logs_tail(container)}"
            ) from exc
        log = container.logs().decode("utf-8", "replace")
        with tempfile.TemporaryDirectory(prefix="wt-suite-") as tmp:
            written = copy_out(container, OUT_DIR, Path(tmp))
            found = [path for path in written if path.name == "checks.json"]
            checks: Any = json.loads(found[0].read_text()) if found else None
        if not isinstance(checks, list):
            raise HarnessError(
                f"the MCP conformance suite ({self.scenario}) wrote no checks.json\n  its log:\n{log[-2000:]}"
            )
        return SuiteOutcome(scenario=self.scenario, checks=checks, log=log, suite_url=self.suite_url)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.stack.remove(self.running)


def start_scenario(stack: ContainerStack, scenario: str, *, client_timeout_s: float) -> SuiteScenario:
    """Start the suite's `scenario` on the stack's network, as a peer runtimes started later can reach; the
    suite gives its client command `client_timeout_s` before it judges a client that never finished."""
    image = suite_image(stack)
    service = ServicePlan(
        role=ROLE,
        alias=alias_for(ROLE, uuid.uuid4().hex[:6]),
        port=0,
        args=(
            "client",
            "--command",
            "wt-suite-client",
            "--scenario",
            scenario,
            "--timeout",
            str(int(client_timeout_s * 1000)),
            "-o",
            OUT_DIR,
        ),
    )
    running = stack.start_peer(service, image=image)
    try:
        suite_url = _read_url(running, scenario)
    except BaseException:
        stack.remove(running)
        raise
    server = MCPSpec(SERVER_NAME, by_alias(suite_url, running.alias))
    return SuiteScenario(scenario=scenario, stack=stack, running=running, server=server, suite_url=suite_url)


def by_alias(url: str, alias: str) -> str:
    """`url` with its host (`localhost`: the suite's own view) replaced by the container's alias."""
    parts = urlsplit(url)
    if parts.port is None:
        raise HarnessError(f"the MCP conformance suite gave its client a URL without a port: {url!r}")
    return urlunsplit(parts._replace(netloc=f"{alias}:{parts.port}"))


def suite_image(stack: ContainerStack) -> str:
    """The suite's image, built once per content hash (windtunnel._engine.mcp_suite_image) on the base image."""
    if stack.suite_image is None:
        stack.suite_image = ensure_suite_image(stack.client)
    return stack.suite_image


def ensure_suite_image(client: docker.DockerClient) -> str:
    from windtunnel._engine.base_image import ensure_base_image

    built = build_suite_image(client, base_image=ensure_base_image(client))
    return built.id or TAG


def _read_url(running: RunningContainer, scenario: str) -> str:
    container = running.container
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            code, output = container.exec_run(["cat", URL_FILE], user="nobody")
        except DockerException as exc:
            raise HarnessError(
                f"the MCP conformance suite ({scenario}) exited before it ran its client: {exc}"
                f"\n  its last log lines:\n{logs_tail(container)}"
            ) from exc
        if code == 0 and output.strip():
            return str(output.decode().strip())
        time.sleep(POLL_S)
    raise HarnessError(
        f"the MCP conformance suite ({scenario}) started no client within {START_TIMEOUT_S:g} s"
        f"\n  its last log lines:\n{logs_tail(container)}"
    )
