"""A reference-capable runtime over servers this test process started on 127.0.0.1 (the reference app, the
gateway app, the kit's MCP mocks): the conformance kit's checks run against it without Docker.

A runtime's env is fixed when its server starts, so one server runs per env the kit provisions with (a
"profile"); `provision()` computes the env exactly as the container driver does
(windtunnel._engine.topology.runtime_env) and uses the server started with it, and `reset_state()` wipes
it between runs where Docker would start a fresh container. A provision nobody foresaw fails loudly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel._core.agent_runtime import AgentConfig, MCPHandle, Message, MockServerPlan, Response
from windtunnel._core.reference import ReferenceCase
from windtunnel._drivers.http_inject import HttpInjectHandle
from windtunnel._drivers.state_probe import LatestStateProbe
from windtunnel._engine.topology import GATEWAY_URL_FOR_AGENTS, runtime_env
from windtunnel._gateway.client import GatewayClient
from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel._runtimes.config_fields import refuse_fields
from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel.spi.agent_runtime import StateProbe


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A mock as a runtime sees it (name and URL): what runtime_env() reads of an MCP handle."""

    name: str
    url: str


def profile_key(env: Mapping[str, str]) -> str:
    """Names a runtime env: the same env gives the same key."""
    return hashlib.sha256(json.dumps(dict(env), sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopbackMock:
    url: str
    admin: str


class LoopbackHandle:
    """Contract C to the server of one profile; the gateway's log as model evidence."""

    def __init__(self, runtime: LoopbackRuntime, url: str, *, case: str | None) -> None:
        self._runtime = runtime
        self.url = url
        self._case = case
        self._inject = HttpInjectHandle(url, runtime.timeout_s, runtime=runtime.manifest.name)
        self._cursor = runtime.gateway().next_index()

    def send(self, messages: list[Message], session_id: str) -> Response:
        return self._inject.send(messages, session_id)

    def reset_state(self) -> None:
        self._inject.reset_state()

    def model_requests(self) -> list[dict[str, Any]]:
        entries = self._runtime.gateway().log(since=self._cursor)
        if entries:
            self._cursor = int(entries[-1]["index"]) + 1
        return entries

    def runtime_state(self) -> Mapping[str, Any]:
        import httpx

        response = httpx.get(f"{self.url}{self._runtime.manifest.state_route}", timeout=10.0)
        response.raise_for_status()
        state: dict[str, Any] = response.json()
        return state

    def teardown(self) -> None:
        self._inject.teardown()
        if self._case is not None:
            with contextlib.suppress(Exception):  # the next install replaces a script left behind anyway
                self._runtime.gateway().clear_script()


class LoopbackRuntime:
    """AgentRuntime, MCPHostingAgentRuntime and provision_reference() over loopback servers."""

    def __init__(
        self,
        manifest: RuntimeManifest,
        *,
        gateway: str,
        mocks: Mapping[str, LoopbackMock],
        runtimes: Mapping[str, str],
        timeout_s: float = 30.0,
    ) -> None:
        self.manifest = manifest
        self.timeout_s = timeout_s
        self._gateway = GatewayClient(gateway)
        self._mocks = {key: HttpMCPHandle(key.split("/", 1)[1], m.url, m.admin) for key, m in mocks.items()}
        self._runtimes = dict(runtimes)
        self.latest: LoopbackHandle | None = None

    def gateway(self) -> GatewayClient:
        return self._gateway

    def start_mcps(self, plans: Sequence[MockServerPlan]) -> list[MCPHandle]:
        handles: list[MCPHandle] = []
        for plan in plans:
            handle = self._mocks[f"{plan.pack}/{plan.server}"]
            handle.reset()
            handles.append(handle)
        return handles

    def stop_mcps(self, handles: Sequence[MCPHandle]) -> None:
        return None

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> LoopbackHandle:
        return self._start(config, mcps or [], case=None)

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> LoopbackHandle:
        self._gateway.clear_script()
        self._gateway.install_script(case.name, case.decisions)
        return self._start(config, mcps or [], case=case.name)

    def _start(self, config: AgentConfig, mcps: Sequence[MCPHandle], *, case: str | None) -> LoopbackHandle:
        refuse_fields(config, self.manifest.supported, self.manifest.name)
        env = runtime_env(self.manifest, config, mcps, GATEWAY_URL_FOR_AGENTS)
        url = self._runtimes.get(profile_key(env))
        if url is None:
            raise AssertionError(f"no loopback server was started with this env: {json.dumps(env)}")
        self.latest = LoopbackHandle(self, url, case=case)
        return self.latest

    def state_probe(self) -> StateProbe | None:
        return LatestStateProbe(self) if self.manifest.state_route is not None else None

    def close(self) -> list[str]:
        for handle in self._mocks.values():
            handle.close()
        self._gateway.close()
        return []
