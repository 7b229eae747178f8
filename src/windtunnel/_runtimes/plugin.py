"""The runtime plugin contract: how Wind Tunnel finds, builds and drives a runtime (docs/writing-a-runtime.md).

Re-exported by the public door windtunnel.spi.runtime_plugin (and windtunnel.spi).

A plugin is any object with `build(runtime_name, label, soul_path) -> AgentRuntime`. Wind Tunnel finds it
by what the user names: a `[tool.windtunnel] runtimes` entry, a runtime directory (or its runtime.toml), a
`module:attr` path, a name registered under the `windtunnel.runtimes` entry-point group, a
`runtimes/**/runtime.toml` name, or an image reference. Every verb resolves a name the same way.

Everything else on a plugin is optional. `max_concurrency` is an attribute (an int, or None for no limit;
default 1): how many scenario jobs may run at once, each provisioning its own handle from the one built
runtime. Each optional hook is a Protocol of its own, detected with isinstance(): `LockKeyPlugin`,
`ModelLabelPlugin`, `PreRunPlugin`, `PostRunPlugin`.

The lifecycle is the same for every verb (`wt run`, `selftest`, `prove`, `doctor`, `certify` and the
conformance suite):

1. With a finite max_concurrency, a machine-wide lock on `lock_key()` is taken before `build()` and held
   until after `post_run()` and `close()`, so a second sweep against the same backend queues.
2. `build()` once.
3. `pre_run()` once, before the first provision (`wt selftest` calls it after selecting the scenarios and
   checking the runtime is reference-capable, so an unsupported runtime prepares nothing).
4. Provision, reset, send, teardown per batch or case (see windtunnel._core.agent_runtime).
5. `post_run()` once, whatever happened after a successful build (error, Ctrl-C, a stop signal); then
   the runtime's own `close()` when it is a `ClosableRuntime`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from windtunnel._core.agent_runtime import AgentRuntime

if TYPE_CHECKING:
    from windtunnel._scenario.model import Scenario

__all__ = [
    "RuntimePlugin",
    "LockKeyPlugin",
    "ModelLabelPlugin",
    "PreRunPlugin",
    "PostRunPlugin",
    "PLUGIN_OPTIONAL_HOOKS",
]

PLUGIN_OPTIONAL_HOOKS: tuple[str, ...] = ("lock_key", "model_label", "pre_run", "post_run")
"""The optional hooks' names: a plugin that has one must make it callable (checked when it loads)."""


@runtime_checkable
class RuntimePlugin(Protocol):
    """Builds the runtime once per sweep."""

    def build(self, runtime_name: str, label: str, soul_path: Path | None) -> AgentRuntime:
        """Construct the runtime without starting a run; called once, inside the lock. `label` names the
        run (a certify run's id) for anything the runtime starts. Raise a windtunnel error saying what is
        missing; anything else is reported as a PluginError naming the plugin."""
        ...


@runtime_checkable
class LockKeyPlugin(Protocol):
    """A plugin that says which sweeps collide."""

    def lock_key(self, runtime_name: str) -> str:
        """The machine-wide lock's key: two sweeps with the same key take turns. Default: the runtime
        name. Key by the backend when one name can reach several. Answers without side effects; called
        before build()."""
        ...


@runtime_checkable
class ModelLabelPlugin(Protocol):
    """A plugin that knows which model its runtime answers with."""

    def model_label(self, runtime_name: str) -> str | None:
        """The model as an opaque label (it scopes ladder evidence); None when unknown, never a guess."""
        ...


@runtime_checkable
class PreRunPlugin(Protocol):
    """A plugin with setup to do once the runtime is built and the scenarios are known."""

    def pre_run(self, runtime: AgentRuntime, scenarios: Sequence[Scenario], runtime_name: str) -> None:
        """Called once, after build() and before the first provision. It may install or replace a selected
        pack's state_probe_factory once its live fixture is ready. What it raises stops the sweep: every
        selected run is recorded as an ERROR naming the plugin and the hook."""
        ...


@runtime_checkable
class PostRunPlugin(Protocol):
    """A plugin with cleanup to do after the sweep."""

    def post_run(self, runtime: AgentRuntime, scenarios: Sequence[Scenario], runtime_name: str) -> None:
        """Called once after a successful build, however the sweep ended (also on error, Ctrl-C or a stop
        signal), before the runtime's close(). What it raises is reported as a problem of the sweep."""
        ...
