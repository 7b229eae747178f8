"""The runtime plugin contract (docs/writing-a-runtime.md): a door that only re-exports.

The Protocols live in windtunnel._runtimes.plugin, above the scenario model: their hooks receive the run's
Scenarios, so the core SPI modules (agent_runtime, abilities) stay below it (docs/design.md, "Layers").
"""

from windtunnel._core.doors import publish
from windtunnel._runtimes import plugin as _source
from windtunnel._runtimes.plugin import *  # noqa: F403 - a door re-exports its source's __all__, listed there once

__all__: list[str] = []
__all__.extend(_source.__all__)

publish(__name__, globals(), __all__)
