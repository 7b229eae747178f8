"""The gateway, an MCP mock and a runtime as testcontainers containers, each described by the container plan
(windtunnel._engine.topology) that the Docker and Dagger executors start."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from windtunnel._core.agent_runtime import AgentConfig, Message, MockServerPlan
from windtunnel._core.reference import ReferenceDecision
from windtunnel._drivers.container_plugin import gateway_spec
from windtunnel._drivers.http_inject import DEFAULT_TIMEOUT_S, HttpInjectHandle
from windtunnel._engine.network import attach_egress
from windtunnel._engine.topology import (
    GATEWAY_URL_FOR_AGENTS,
    GatewaySpec,
    gateway_service,
    mock_service,
)
from windtunnel._engine.topology import runtime_service as planned_runtime
from windtunnel._gateway.client import GatewayClient
from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel._runtimes.config_fields import refuse_fields
from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel._tape_runs.containers import replay_spec
from windtunnel._testing.containers import PlannedContainer, ProjectNetwork
from windtunnel._testing.reply import Reply
from windtunnel._testing.script import ScriptedModel
from windtunnel.errors import UsageError


class GatewayContainer(PlannedContainer):
    """The model gateway: script mode (the default), a tape replayed, or live to an upstream model."""

    def __init__(self, image: str, network: ProjectNetwork, spec: GatewaySpec | None = None) -> None:
        self.spec = spec or GatewaySpec()
        if self.spec.outputs:
            raise UsageError(
                "windtunnel.testing starts no record gateway (its tape is copied out by the certify driver)",
                hint="record tapes with `wt tapes record`; replay them with GatewaySpec tape mode",
            )
        # A live gateway's upstream key goes in as the driver puts it: a file, never env or argv.
        super().__init__(gateway_service(self.spec), image, network, secrets=self.spec.secrets)
        self._client: GatewayClient | None = None

    @staticmethod
    def script_mode() -> GatewaySpec:
        return GatewaySpec()

    @staticmethod
    def tape_mode(tape: Path) -> GatewaySpec:
        """Replay `tape` (a .jsonl tape file), as the certify tapes stage replays it."""
        if not tape.is_file():
            raise UsageError(f"no tape file at {tape}", hint="pass the path of a recorded .jsonl tape")
        return replay_spec(tape)

    @staticmethod
    def live_mode(upstream: str, *, api_key: str | None = None) -> GatewaySpec:
        """Proxy to an OpenAI-compatible `upstream`, as `WT_GATEWAY_MODE=live` does for the driver."""
        env = {"WT_GATEWAY_MODE": "live", "WT_UPSTREAM_URL": upstream, "WT_UPSTREAM_API_KEY": api_key or ""}
        return gateway_spec(env)

    def start(self) -> Self:
        super().start()
        if self.spec.needs_egress:
            network = self.project_network
            attach_egress(network.client, network.network, self.get_wrapped_container(), network.labels)
        return self

    @property
    def client(self) -> GatewayClient:
        """The gateway's admin client (scripts, log, tape), reaching it from this process."""
        if self._client is None:
            self._client = GatewayClient(self.base_url)
            self._close_at_stop(self._client.close)
        return self._client

    @property
    def url_for_agents(self) -> str:
        """The OpenAI-compatible base URL a runtime on the stack's network uses (WT_MODEL_BASE_URL)."""
        return GATEWAY_URL_FOR_AGENTS

    def install(
        self,
        script: ScriptedModel | Sequence[ReferenceDecision],
        *,
        case: str = "test",
        session: str | None = None,
    ) -> dict[str, Any]:
        """Install a script (globally, or for one Contract C session); returns its summary."""
        decisions = script.decisions if isinstance(script, ScriptedModel) else tuple(script)
        return self.client.install_script(case, decisions, session=session)

    def requests(self) -> list[dict[str, Any]]:
        """Every model request the gateway logged since the last clear, oldest first."""
        return self.client.log()

    def clear(self) -> None:
        """Remove every installed script and the request log: a fresh gateway for the next test."""
        self.client.clear_script()
        self.client.clear_log()


class McpMockContainer(PlannedContainer):
    """One MCP mock server of a pack, serving its tools over streamable HTTP; its pack directory is copied in."""

    def __init__(self, image: str, network: ProjectNetwork, plan: MockServerPlan) -> None:
        super().__init__(mock_service(plan), image, network)
        self.plan = plan
        self._handle: HttpMCPHandle | None = None

    @property
    def handle(self) -> HttpMCPHandle:
        """The mock's admin handle (calls, state, reset, tools), reaching it from this process."""
        if self._handle is None:
            url = str(self.service.url)
            self._handle = HttpMCPHandle(self.plan.server, url, f"http://{self.ip}:{self.service.port}")
            self._close_at_stop(self._handle.close)
        return self._handle

    @property
    def name(self) -> str:
        return self.plan.server

    @property
    def url(self) -> str:
        """The streamable-HTTP URL runtimes on the stack's network use."""
        return str(self.service.url)

    def calls(self) -> list[dict[str, Any]]:
        """Every tools/call the mock received since its last reset, in order: {"name", "arguments", ...}."""
        return self.handle.calls()

    def state(self) -> Mapping[str, Any]:
        return self.handle.state()

    def reset(self) -> None:
        """Fresh state from the pack's factory, and no calls recorded."""
        self.handle.reset()


class RuntimeContainer(PlannedContainer):
    """A runtime under test, from its image, wired by WT_* env to the stack's gateway and `mocks`."""

    def __init__(
        self,
        image: str,
        network: ProjectNetwork,
        manifest: RuntimeManifest,
        *,
        mocks: Sequence[McpMockContainer] = (),
        config: AgentConfig | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        config = config or AgentConfig()
        refuse_fields(config, manifest.supported, manifest.name)
        service = planned_runtime(manifest, config, list(mocks), suffix=uuid.uuid4().hex[:8])
        super().__init__(service, image, network)
        self.manifest = manifest
        self.timeout_s = timeout_s
        self._inject: HttpInjectHandle | None = None

    @property
    def inject(self) -> HttpInjectHandle:
        """Contract C to the runtime (POST /wt/inject and /wt/reset), from this process."""
        if self._inject is None:
            self._inject = HttpInjectHandle(self.base_url, self.timeout_s, runtime=self.manifest.name)
            self._close_at_stop(self._inject.teardown)
        return self._inject

    def send(self, message: str | Sequence[Message], *, session_id: str | None = None) -> Reply:
        """One turn: a user message (or messages); returns what the runtime reported (answer, tool calls)."""
        messages: list[Message] = (
            [{"role": "user", "content": message}] if isinstance(message, str) else list(message)
        )
        return Reply.of(self.inject.send(messages, session_id or f"test-{uuid.uuid4().hex[:8]}"))

    def reset(self) -> None:
        self.inject.reset_state()
