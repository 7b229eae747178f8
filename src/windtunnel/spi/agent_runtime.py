"""The runtime SPI (docs/writing-a-runtime.md): a door re-exporting windtunnel._core.agent_runtime."""

from windtunnel._core.agent_runtime import (
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
from windtunnel._core.doors import publish

__all__ = [
    "MCPSpec",
    "ModelSpec",
    "SamplingConfig",
    "AgentConfig",
    "Message",
    "Response",
    "MCPHandle",
    "RecordingMCPHandle",
    "MockServerPlan",
    "StateProbe",
    "AgentHandle",
    "ModelEvidenceHandle",
    "AgentRuntime",
    "ReferenceCapableAgentRuntime",
    "MCPHostingAgentRuntime",
]

publish(__name__, globals(), __all__)
