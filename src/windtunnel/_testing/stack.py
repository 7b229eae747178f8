"""WindTunnelStack: a gateway, MCP mocks and runtimes on one project network, images built as `wt certify`
builds them, everything removed together (by the run's label) when the stack stops."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from docker.errors import DockerException

from windtunnel._config import load_settings
from windtunnel._core.agent_runtime import AgentConfig
from windtunnel._drivers.container_plugin import (
    DriverSettings,
    prepare_runtime_image,
    prepare_windtunnel_image,
    sweep_dead_runs,
)
from windtunnel._engine.base_image import ensure_base_image
from windtunnel._engine.docker_env import docker_client
from windtunnel._engine.stack import GatewaySpec
from windtunnel._env_values import process_env
from windtunnel._packs.loader import load_pack
from windtunnel._runtimes.manifest import check_buildable
from windtunnel._runtimes.resolve import resolve_runtime
from windtunnel._testing.containers import ProjectNetwork
from windtunnel._testing.services import GatewayContainer, McpMockContainer, RuntimeContainer
from windtunnel.errors import HarnessError, UsageError


class WindTunnelStack:
    """The containers of one test session. `project` is the directory whose pyproject.toml
    ([tool.windtunnel]) names runtimes and packs (default: the current directory); `gateway` how the
    gateway serves (GatewayContainer.script_mode(), tape_mode(path) or live_mode(url)); `env` the environment
    its settings are read from, the driver's among them (WT_BASE_IMAGE, WT_CACHE_DIR, WT_INJECT_TIMEOUT_S,
    WT_LOCK_DIR; default: the process environment).

    Start it (or use it as a context manager), then ask for mocks with mcp() and runtimes with runtime().
    """

    def __init__(
        self,
        *,
        project: Path | None = None,
        gateway: GatewaySpec | None = None,
        env: Mapping[str, str] | None = None,
        session: str | None = None,
    ) -> None:
        _no_reaper()
        # One environment for both (the project's settings and the driver's), so the runtimes it resolves,
        # the images it builds and their locks all read the same values.
        self.settings = load_settings(project or Path.cwd(), env=env)
        self.driver = DriverSettings.from_env(self.settings.env)
        self.gateway_spec = gateway or GatewaySpec()
        self.session = session
        self._client: Any = None
        self._network: ProjectNetwork | None = None
        self._gateway: GatewayContainer | None = None
        self._base = ""
        self._windtunnel_image = ""
        self._mocks: dict[tuple[str, str], McpMockContainer] = {}
        self.runtimes: list[RuntimeContainer] = []

    # -- life cycle ----------------------------------------------------------------------------------
    def start(self) -> WindTunnelStack:
        """Build (or reuse) the images, create the network and start the gateway."""
        if self._gateway is not None:
            return self
        self._client = docker_client()
        sweep_dead_runs(self._client)
        self._base = ensure_base_image(self._client, self.driver.base_image, lock_dir=self.driver.lock_dir)
        self._windtunnel_image = prepare_windtunnel_image(self._client, self._base, self.driver).id
        self._network = ProjectNetwork(self._client, session=self.session).create()
        try:
            self._gateway = GatewayContainer(self._windtunnel_image, self._network, self.gateway_spec).start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Remove every container and network of the stack (by its run label); idempotent."""
        started = [*self.runtimes, *self._mocks.values(), *([self._gateway] if self._gateway else [])]
        for container in started:
            with contextlib.suppress(DockerException):
                container.stop()
        self.runtimes.clear()
        self._mocks.clear()
        self._gateway = None
        if self._network is not None:
            self._network.remove()
            self._network = None

    def __enter__(self) -> WindTunnelStack:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    # -- services ------------------------------------------------------------------------------------
    @property
    def network(self) -> ProjectNetwork:
        return _started(self._network)

    @property
    def gateway(self) -> GatewayContainer:
        return _started(self._gateway)

    def mcp(self, pack: str, server: str) -> McpMockContainer:
        """The mock for `server` of `pack` (a pack directory, module:attr or installed pack name), started on
        first use and reset (fresh state, no calls) every time it is asked for."""
        key = (pack, server)
        if key not in self._mocks:
            self._mocks[key] = McpMockContainer(
                self._windtunnel_image,
                self.network,
                _plan(pack, server, self.settings.root),
            ).start()
        mock = self._mocks[key]
        mock.reset()
        return mock

    @property
    def mocks(self) -> list[McpMockContainer]:
        return list(self._mocks.values())

    def runtime(
        self,
        ref: str,
        *,
        mocks: Sequence[McpMockContainer] | None = None,
        config: AgentConfig | None = None,
    ) -> RuntimeContainer:
        """Start runtime `ref` (a name, a runtime directory or an image reference, resolved as every `wt`
        verb resolves it) wired to the gateway and `mocks` (default: every mock started so far)."""
        description = resolve_runtime(ref, self.settings)
        manifest = description.manifest
        if manifest is None or manifest.plugin:
            raise UsageError(
                f"runtime {ref!r} is not a container runtime ({description.origin})",
                hint="windtunnel.testing starts runtimes from their image: give a runtime.toml with [image]",
                runtime=ref,
            )
        check_buildable(manifest)
        image, _ = prepare_runtime_image(self._client, manifest, self._base, self.driver)
        running = RuntimeContainer(
            image,
            self.network,
            manifest,
            mocks=self.mocks if mocks is None else mocks,
            config=config,
            timeout_s=self.driver.timeout_s,
        )
        self.runtimes.append(running.start())
        return running

    # -- between tests -------------------------------------------------------------------------------
    def reset(self) -> None:
        """A clean slate for the next test: no script, empty gateway log, fresh mocks."""
        self.gateway.clear()
        for mock in self._mocks.values():
            mock.reset()

    def stop_runtimes(self) -> None:
        for running in self.runtimes:
            running.stop()
        self.runtimes.clear()


_Service = TypeVar("_Service")


def _started(service: _Service | None) -> _Service:
    """A service of the started stack; before start() or after stop() it is None, which is a usage error."""
    if service is None:
        raise HarnessError("the stack is not started", hint="call start() or use `with WindTunnelStack()`")
    return service


def _plan(pack: str, server: str, root: Path) -> Any:
    loaded = load_pack(pack, base=root)
    plans = {plan.server: plan for plan in loaded.plans()}
    if server not in plans:
        raise UsageError(
            f"pack {loaded.name!r} has no MCP server {server!r}",
            hint=f"use one of: {', '.join(sorted(plans)) or 'none'}",
            pack=pack,
        )
    return plans[server]


def _no_reaper() -> None:
    """testcontainers' reaper (Ryuk) is an image pulled from a registry; Wind Tunnel's own labels and
    leftover sweep remove what a crashed session left, so the reaper is off unless asked for."""
    if "TESTCONTAINERS_RYUK_DISABLED" not in process_env():
        from testcontainers.core.config import testcontainers_config

        testcontainers_config.ryuk_disabled = True
