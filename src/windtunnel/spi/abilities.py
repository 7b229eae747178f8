"""The optional runtime abilities (Protocols detected with isinstance()): re-exports windtunnel._core.abilities."""

from windtunnel._core import abilities as _source
from windtunnel._core.abilities import *  # noqa: F403 - a door re-exports its source's __all__, listed there once
from windtunnel._core.doors import publish

__all__: list[str] = []
__all__.extend(_source.__all__)

publish(__name__, globals(), __all__)
