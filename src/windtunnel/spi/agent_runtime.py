"""The runtime SPI (docs/writing-a-runtime.md): a door re-exporting windtunnel._core.agent_runtime."""

from windtunnel._core import agent_runtime as _source
from windtunnel._core.agent_runtime import *  # noqa: F403 - a door re-exports its source's __all__, listed there once
from windtunnel._core.doors import publish

__all__: list[str] = []
__all__.extend(_source.__all__)

publish(__name__, globals(), __all__)
