"""How the `wt` CLI finds and builds a runtime (seed 002).

A plugin is any object with `build(runtime_name, label, soul_path) -> AgentRuntime`, registered under
the `windtunnel.runtimes` entry-point group or named as `module:attr`. Everything else is optional and
discovered by capability:

- `max_concurrency`: int or None. How many scenario jobs may run at once; default 1; None = no limit.
  A finite value makes each sweep hold a machine-wide lock on `lock_key()` from before `build()` until
  after `post_run()`, so a second sweep queues.
- `lock_key(runtime_name) -> str`: which sweeps collide; default the runtime name.
- `model_label(runtime_name) -> str | None`: the model, as an opaque label; None when unknown.
- `pre_run(runtime, scenarios, runtime_name)`: once, before the sweep.
- `post_run(runtime, scenarios, runtime_name)`: once, after the sweep, even on abort.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from windtunnel.spi.agent_runtime import AgentRuntime

if TYPE_CHECKING:
    from windtunnel._scenario.model import Scenario

__all__ = ["RuntimePlugin", "PLUGIN_OPTIONAL_HOOKS", "container_plugin"]

PLUGIN_OPTIONAL_HOOKS: tuple[str, ...] = ("lock_key", "model_label", "pre_run", "post_run")


@runtime_checkable
class RuntimePlugin(Protocol):
    """Builds the runtime once per sweep."""

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> AgentRuntime: ...


class PrePostHooks(Protocol):
    """The optional sweep hooks, for type checking only."""

    def pre_run(self, runtime: AgentRuntime, scenarios: Sequence[Scenario], runtime_name: str) -> None: ...

    def post_run(self, runtime: AgentRuntime, scenarios: Sequence[Scenario], runtime_name: str) -> None: ...


def container_plugin(runtime_dir: Path) -> RuntimePlugin:
    """The plugin Wind Tunnel builds for a runtime directory (a Dockerfile and a runtime.toml).

    Wrap it to write a custom driver around a containerised runtime; see docs/writing-a-runtime.md.
    """
    from windtunnel._drivers.plugin import ContainerRuntimePlugin

    return ContainerRuntimePlugin(Path(runtime_dir))
