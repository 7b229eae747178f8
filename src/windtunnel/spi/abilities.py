"""The optional runtime abilities (Protocols detected with isinstance()): re-exports windtunnel._core.abilities."""

from windtunnel._core.abilities import (
    ClosableRuntime,
    ContainerListingRuntime,
    EgressAttempt,
    EgressProbingRuntime,
    EgressReport,
    ImageDigestsRuntime,
    KillableHandle,
    StateProbingRuntime,
    ToolListingMCPHandle,
)
from windtunnel._core.doors import publish

__all__ = [
    "ClosableRuntime",
    "ContainerListingRuntime",
    "EgressAttempt",
    "EgressProbingRuntime",
    "EgressReport",
    "ImageDigestsRuntime",
    "KillableHandle",
    "StateProbingRuntime",
    "ToolListingMCPHandle",
]

publish(__name__, globals(), __all__)
