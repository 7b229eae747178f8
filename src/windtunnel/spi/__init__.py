"""The door for runtime implementers: the SPI Protocols and the config values they receive."""

from windtunnel._scenario.model import ReferenceCase, ReferenceDecision, ReferenceToolCall
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
from windtunnel.spi.runtime_plugin import RuntimePlugin, container_plugin

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
    "container_plugin",
]
