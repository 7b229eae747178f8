"""The runtime plugin contract (docs/writing-a-runtime.md): a door that only re-exports.

The Protocols live in windtunnel._runtimes.plugin, above the scenario model: their hooks receive the run's
Scenarios, so the core SPI modules (agent_runtime, abilities) stay below it (docs/design.md, "Layers").
"""

from windtunnel._core.doors import publish
from windtunnel._runtimes.plugin import (
    PLUGIN_OPTIONAL_HOOKS,
    LockKeyPlugin,
    ModelLabelPlugin,
    PostRunPlugin,
    PreRunPlugin,
    RuntimePlugin,
)

__all__ = [
    "RuntimePlugin",
    "LockKeyPlugin",
    "ModelLabelPlugin",
    "PreRunPlugin",
    "PostRunPlugin",
    "PLUGIN_OPTIONAL_HOOKS",
]

publish(__name__, globals(), __all__)
