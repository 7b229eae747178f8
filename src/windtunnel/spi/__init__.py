"""The door for runtime implementers: the SPI Protocols and the config values they receive.

Every module of windtunnel.spi only re-exports (agent_runtime, abilities, runtime_plugin: the import paths
docs/writing-a-runtime.md names). The Protocols live in windtunnel._core (agent_runtime, abilities: the
bottom of the layers, importing only the error tree) and windtunnel._runtimes.plugin (above the scenario
model, whose Scenarios the plugin hooks receive); nothing inside windtunnel imports a door (docs/design.md,
"Layers"). `container_plugin` is the container driver's, re-exported lazily: importing the SPI must not
start the drivers.
"""

from typing import TYPE_CHECKING, Any

from windtunnel._core.reference import ReferenceCase, ReferenceDecision, ReferenceToolCall
from windtunnel.spi import abilities as _abilities
from windtunnel.spi import agent_runtime as _agent_runtime
from windtunnel.spi.abilities import *  # noqa: F403 - a door re-exports its source's __all__, listed there once
from windtunnel.spi.agent_runtime import *  # noqa: F403 - likewise
from windtunnel.spi.runtime_plugin import (
    LockKeyPlugin,
    ModelLabelPlugin,
    PostRunPlugin,
    PreRunPlugin,
    RuntimePlugin,
)

if TYPE_CHECKING:
    from windtunnel._drivers.container_plugin import container_plugin

__all__ = [
    "ReferenceCase",
    "ReferenceDecision",
    "ReferenceToolCall",
    "RuntimePlugin",
    # optional plugin hooks (windtunnel.spi.runtime_plugin)
    "LockKeyPlugin",
    "ModelLabelPlugin",
    "PostRunPlugin",
    "PreRunPlugin",
    "container_plugin",
]
__all__ += _agent_runtime.__all__  # the runtime SPI (windtunnel._core.agent_runtime)
__all__ += _abilities.__all__  # the optional abilities (windtunnel._core.abilities)


def __getattr__(name: str) -> Any:
    if name == "container_plugin":
        from windtunnel._drivers.container_plugin import container_plugin

        return container_plugin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
