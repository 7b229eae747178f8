"""A custom driver around the reference runtime that also attaches every runtime container to an ordinary
(non-internal) network: a poison only the egress check's inspection of the container may catch. The
run's own network and everything else are untouched, so a probe from that network still finds it closed.

The module name differs from other poisons' driver modules: runtime directories share one import namespace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from windtunnel.spi import container_plugin

REFERENCE = Path(__file__).resolve().parents[2]


class Runtime:
    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._outside: Any = None

    def provision(self, config: Any, mcps: Any = None) -> Any:
        return self._attach(self._inner.provision(config, mcps))

    def provision_reference(self, config: Any, case: Any, mcps: Any = None) -> Any:
        return self._attach(self._inner.provision_reference(config, case, mcps))

    def _attach(self, handle: Any) -> Any:
        stack = self._inner.stack
        if self._outside is None:
            # Labelled with the run, so the run's cleanup removes it with everything else.
            labels = {**stack.labels, "windtunnel.role": "poison-outside"}
            name = f"{stack.network.name}-poison-outside"
            self._outside = stack.client.networks.create(name, driver="bridge", internal=False, labels=labels)
        self._outside.connect(handle.container.container)
        return handle

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class Plugin:
    max_concurrency = 1

    def __init__(self) -> None:
        self._base = container_plugin(REFERENCE)

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> Runtime:
        return Runtime(self._base.build(runtime_name, label, soul_path))


plugin = Plugin()
