"""The bound driver: a runtime whose containers another executor already started (Dagger services, compose).

Wind Tunnel reaches the runtime (Contract C), the gateway's admin API and the MCP mocks at the URLs in
WT_BOUND_STACKS (JSON, see `ContainerPlan.bound_document()`):

    {"schema": "1", "stacks": {"<runtime>": {
        "gateway": "http://reference-gateway:8000",
        "mocks": {"<pack>/<server>": {"url": "<what the runtime uses>", "admin": "<what we use>"}},
        "runtimes": {"<profile key>": "http://reference-runtime-...:8647"},
        "images": {"windtunnel": "sha256:...", "runtime:<name>": "sha256:..."}}}}

A runtime's env is fixed when it starts, so the executor starts one runtime service per env the stage plan
asks for (a "profile", `container_plan.provisions()`). `provision()` computes the env exactly as the Docker
driver would, and uses the running service started with that env; the runner's `reset_state()` (POST
/wt/reset) wipes it between runs, where Docker would start a fresh container. A provision nobody foresaw
raises HarnessError: it never runs against a runtime with a different env.

What it cannot do, it does not pretend to: handles have no `kill()` (the services belong to the other
executor) and the runtime has no `probe_egress()` (Wind Tunnel cannot place a probe on the runtime's
network), so the conformance checks `recovery` and `egress_closed` report NOT_MEASURED.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from windtunnel._core.agent_runtime import (
    AgentConfig,
    MCPHandle,
    Message,
    MockServerPlan,
    Response,
    StateProbe,
)
from windtunnel._core.reference import ReferenceCase
from windtunnel._drivers.readiness import wait_listening
from windtunnel._drivers.state_probe import LatestStateProbe, read_state_dump
from windtunnel._drivers.topology import GATEWAY_URL_FOR_AGENTS, profile_key, runtime_env
from windtunnel._gateway.client import GatewayClient, LogCursor, start_scripted
from windtunnel._mcp.http_handle import HttpMCPHandle
from windtunnel._runtimes.config_fields import refuse_fields
from windtunnel._runtimes.http_inject import DEFAULT_TIMEOUT_S, HttpInjectHandle
from windtunnel._runtimes.manifest import RuntimeManifest
from windtunnel.errors import (
    ConfigFileError,
    HarnessError,
)

ENV_VAR = "WT_BOUND_STACKS"
READY_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundMock:
    url: str
    admin: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundStack:
    """One runtime's running services, as this process reaches them."""

    runtime: str
    gateway: str
    mocks: Mapping[str, BoundMock]
    runtimes: Mapping[str, str]
    images: Mapping[str, str]


def load_bound_stacks(text: str) -> dict[str, BoundStack]:
    """Parse WT_BOUND_STACKS; ConfigFileError names the bad field."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _bad("<document>", f"is not JSON: {exc}") from exc
    stacks = data.get("stacks") if isinstance(data, dict) else None
    if not isinstance(stacks, dict) or not stacks:
        raise _bad("stacks", "is missing or empty")
    return {name: _stack(name, entry) for name, entry in stacks.items()}


def _stack(name: str, entry: Any) -> BoundStack:
    if not isinstance(entry, dict) or not isinstance(entry.get("gateway"), str):
        raise _bad(f"stacks.{name}.gateway", "must be the gateway's URL")
    mocks, runtimes = entry.get("mocks", {}), entry.get("runtimes")
    if (
        not isinstance(runtimes, dict)
        or not runtimes
        or not all(isinstance(u, str) for u in runtimes.values())
    ):
        raise _bad(f"stacks.{name}.runtimes", "must map profile keys to runtime URLs")
    if not isinstance(mocks, dict) or not all(
        isinstance(m, dict) and isinstance(m.get("url"), str) and isinstance(m.get("admin"), str)
        for m in mocks.values()
    ):
        raise _bad(f"stacks.{name}.mocks", 'must map "pack/server" to {"url", "admin"}')
    images = entry.get("images", {})
    if not isinstance(images, dict):
        raise _bad(f"stacks.{name}.images", "must map image names to digests")
    return BoundStack(
        runtime=name,
        gateway=entry["gateway"],
        mocks={key: BoundMock(url=m["url"], admin=m["admin"]) for key, m in mocks.items()},
        runtimes=dict(runtimes),
        images={str(k): str(v) for k, v in images.items()},
    )


def _bad(field: str, problem: str) -> ConfigFileError:
    return ConfigFileError(
        f"{ENV_VAR}: {field} {problem}",
        hint="the executor that started the services writes it (`wt certify --print-plan` shows the plan)",
        field=field,
    )


class BoundHandle:
    """Contract C to the running service of one profile; the gateway's log as model evidence."""

    def __init__(self, runtime: BoundRuntime, url: str, *, case: str | None) -> None:
        self._runtime = runtime
        self.url = url
        self._case = case
        self._inject = HttpInjectHandle(url, runtime.timeout_s, runtime=runtime.manifest.name)
        self._cursor = LogCursor(runtime.gateway().next_index())
        self._torn_down = False

    def send(self, messages: list[Message], session_id: str) -> Response:
        return self._inject.send(messages, session_id)

    def reset_state(self) -> None:
        self._inject.reset_state()

    def model_requests(self) -> list[dict[str, Any]]:
        return self._cursor.read(self._runtime.gateway())

    def runtime_state(self) -> Mapping[str, Any]:
        """The runtime's state dump (manifest `state_route`), for the hermetic reset canary."""
        return read_state_dump(self._runtime.manifest, self.url)

    def teardown(self) -> None:
        """Idempotent, never raises; the service keeps running (it is not ours), the script is cleared."""
        if self._torn_down:
            return
        self._torn_down = True
        self._inject.teardown()
        if self._case is not None:
            # Teardown must not raise; a script left behind is replaced by the next install anyway.
            with contextlib.suppress(Exception):
                self._runtime.gateway().clear_script()


class BoundRuntime:
    """AgentRuntime and MCPHostingAgentRuntime over a bound stack (see the module docstring)."""

    def __init__(
        self, manifest: RuntimeManifest, stack: BoundStack, *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self.manifest = manifest
        self.stack = stack
        self.timeout_s = timeout_s
        self.image_digests = dict(stack.images)
        self.latest: BoundHandle | None = None
        self._gateway: GatewayClient | None = None
        self._mocks: dict[str, HttpMCPHandle] = {}
        self._ready: set[str] = set()

    def gateway(self) -> GatewayClient:
        if self._gateway is None:
            client = GatewayClient(self.stack.gateway)
            client.wait_until_healthy(timeout=READY_TIMEOUT_S)
            self._gateway = client
        return self._gateway

    def start_mcps(self, plans: Sequence[MockServerPlan]) -> list[MCPHandle]:
        """The bound mocks of these plans, each reset to fresh fixture state (as Docker's pooled mocks are)."""
        handles: list[MCPHandle] = []
        for plan in plans:
            handle = self._mock(f"{plan.pack}/{plan.server}")
            handle.reset()
            handles.append(handle)
        return handles

    def _mock(self, key: str) -> HttpMCPHandle:
        if key not in self._mocks:
            bound = self.stack.mocks.get(key)
            if bound is None:
                raise HarnessError(
                    f"runtime {self.manifest.name!r}: no bound MCP mock {key!r} (bound: {', '.join(sorted(self.stack.mocks)) or 'none'})",
                    hint="the executor starts the mocks the container plan lists; add the pack to the plan",
                )
            handle = HttpMCPHandle(key.split("/", 1)[1], bound.url, bound.admin)
            handle.wait_ready(READY_TIMEOUT_S)
            self._mocks[key] = handle
        return self._mocks[key]

    def stop_mcps(self, handles: Sequence[MCPHandle]) -> None:
        return None  # they belong to the executor; each start resets them

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> BoundHandle:
        return self._start(config, mcps or [], case=None)

    def _start(self, config: AgentConfig, mcps: Sequence[MCPHandle], *, case: str | None) -> BoundHandle:
        refuse_fields(config, self.manifest.supported, self.manifest.name)
        env = runtime_env(self.manifest, config, mcps, GATEWAY_URL_FOR_AGENTS)
        key = profile_key(env)
        url = self.stack.runtimes.get(key)
        if url is None:
            raise HarnessError(
                f"runtime {self.manifest.name!r}: no running service was started with the env this provision "
                f"needs (profile {key}; bound profiles: {', '.join(sorted(self.stack.runtimes))})\n"
                f"  env: {json.dumps(env, sort_keys=True)}",
                hint="the executor starts one runtime service per profile in container_plan.provisions(); "
                "a stage that provisions with another config or other mocks must be listed there",
            )
        self._wait_ready(url)
        self.latest = BoundHandle(self, url, case=case)
        return self.latest

    def _wait_ready(self, url: str) -> None:
        if url in self._ready:
            return
        wait_listening(
            url,
            timeout=READY_TIMEOUT_S,
            what=f"runtime {self.manifest.name!r}",
            hint="see the runtime service's log in the executor that started it",
            runtime=self.manifest.name,
        )
        self._ready.add(url)

    def state_probe(self) -> StateProbe | None:
        if self.manifest.state_route is None:
            return None
        return LatestStateProbe(self)

    def close(self) -> list[str]:
        """Release connections; the services stay (the executor that started them stops them)."""
        for handle in self._mocks.values():
            handle.close()
        if self._gateway is not None:
            self._gateway.close()
        return []


class BoundReferenceRuntime(BoundRuntime):
    """Every model call of the runtime goes through the bound gateway, so cases can be scripted."""

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> BoundHandle:
        return start_scripted(self.gateway(), case, partial(self._start, config, mcps or [], case=case.name))


class BoundRuntimePlugin:
    """A runtime plugin for a runtime.toml whose services run elsewhere; reads WT_INJECT_TIMEOUT_S at build."""

    max_concurrency = 1

    def __init__(
        self, manifest: RuntimeManifest, stack: BoundStack, env: Mapping[str, str] | None = None
    ) -> None:
        self.manifest = manifest
        self._stack = stack
        self._env = env

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> BoundRuntime:
        env = os.environ if self._env is None else self._env
        timeout = float(env.get("WT_INJECT_TIMEOUT_S", DEFAULT_TIMEOUT_S))
        kind = BoundReferenceRuntime if self.manifest.reference else BoundRuntime
        return kind(self.manifest, self._stack, timeout_s=timeout)

    def lock_key(self, runtime_name: str) -> str:
        return f"bound:{runtime_name}:{self._stack.gateway}"
