"""A custom driver around the reference runtime whose handles raise from teardown(): a poison that only the
teardown check may catch. Everything else is delegated untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from windtunnel.spi import container_plugin

REFERENCE = Path(__file__).resolve().parents[2]


class RaisingTeardownHandle:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def send(self, messages: Any, session_id: str) -> Any:
        return self._inner.send(messages, session_id)

    def reset_state(self) -> None:
        self._inner.reset_state()

    def model_requests(self) -> Any:
        return self._inner.model_requests()

    def kill(self) -> None:
        self._inner.kill()

    def teardown(self) -> None:
        self._inner.teardown()
        raise RuntimeError("teardown failed: the driver could not release its session")


class Runtime:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def provision(self, config: Any, mcps: Any = None) -> RaisingTeardownHandle:
        return RaisingTeardownHandle(self._inner.provision(config, mcps))

    def provision_reference(self, config: Any, case: Any, mcps: Any = None) -> RaisingTeardownHandle:
        return RaisingTeardownHandle(self._inner.provision_reference(config, case, mcps))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class Plugin:
    max_concurrency = 1

    def __init__(self) -> None:
        self._base = container_plugin(REFERENCE)

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> Runtime:
        return Runtime(self._base.build(runtime_name, label, soul_path))


plugin = Plugin()
