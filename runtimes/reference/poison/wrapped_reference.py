"""What the reference runtime's driver poisons share: the container driver around runtimes/reference, with
each handle it provisions passed through the poison's own hook. The runtime itself is untouched.

The drivers (attach_outside_network/, routable_network/, teardown_raises/) import it by adding this directory to sys.path:
Wind Tunnel puts only a driver's own directory there, and runtime directories share one import namespace,
hence the module name no other runtime uses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from windtunnel.spi import container_plugin

REFERENCE = Path(__file__).resolve().parents[1]

Hook = Callable[[Any, Any], Any]
"""(the reference runtime, a handle it provisioned) -> the handle the poison hands out instead."""


class WrappedRuntime:
    """The reference runtime, with every handle it provisions passed through `hook`; all else delegated."""

    def __init__(self, inner: Any, hook: Hook) -> None:
        self._inner = inner
        self._hook = hook

    def provision(self, config: Any, mcps: Any = None) -> Any:
        return self._hook(self._inner, self._inner.provision(config, mcps))

    def provision_reference(self, config: Any, case: Any, mcps: Any = None) -> Any:
        return self._hook(self._inner, self._inner.provision_reference(config, case, mcps))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class WrappingPlugin:
    """A runtime plugin building the reference runtime's container driver, each runtime wrapped with a
    fresh hook from `make_hook()` (a hook may keep state for the runtime it serves)."""

    max_concurrency = 1

    def __init__(self, make_hook: Callable[[], Hook]) -> None:
        self._base = container_plugin(REFERENCE)
        self._make_hook = make_hook

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> WrappedRuntime:
        return WrappedRuntime(self._base.build(runtime_name, label, soul_path), self._make_hook())
