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
from windtunnel.spi.abilities import (
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
from windtunnel.spi.agent_runtime import (
    AgentConfig,
    AgentHandle,
    AgentRuntime,
    MCPHandle,
    MCPHostingAgentRuntime,
    MCPSpec,
    Message,
    MockServerPlan,
    ModelEvidenceHandle,
    ModelSpec,
    RecordingMCPHandle,
    ReferenceCapableAgentRuntime,
    Response,
    SamplingConfig,
    StateProbe,
)
from windtunnel.spi.runtime_plugin import (
    LockKeyPlugin,
    ModelLabelPlugin,
    PostRunPlugin,
    PreRunPlugin,
    RuntimePlugin,
)

if TYPE_CHECKING:
    from windtunnel._drivers.plugin import container_plugin

__all__ = [
    "AgentConfig",
    "AgentHandle",
    "AgentRuntime",
    "MCPHandle",
    "MCPHostingAgentRuntime",
    "MCPSpec",
    "Message",
    "MockServerPlan",
    "ModelEvidenceHandle",
    "ModelSpec",
    "RecordingMCPHandle",
    "ReferenceCapableAgentRuntime",
    "ReferenceCase",
    "ReferenceDecision",
    "ReferenceToolCall",
    "Response",
    "RuntimePlugin",
    "SamplingConfig",
    "StateProbe",
    # optional abilities (windtunnel._core.abilities)
    "ClosableRuntime",
    "ContainerListingRuntime",
    "EgressAttempt",
    "EgressProbingRuntime",
    "EgressReport",
    "ImageDigestsRuntime",
    "KillableHandle",
    "StateProbingRuntime",
    "ToolListingMCPHandle",
    # optional plugin hooks (windtunnel.spi.runtime_plugin)
    "LockKeyPlugin",
    "ModelLabelPlugin",
    "PostRunPlugin",
    "PreRunPlugin",
    "container_plugin",
]


def __getattr__(name: str) -> Any:
    if name == "container_plugin":
        from windtunnel._drivers.plugin import container_plugin

        return container_plugin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
