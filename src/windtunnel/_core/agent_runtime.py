"""The runtime SPI (docs/writing-a-runtime.md): what an agent platform implements so Wind Tunnel can drive it.

Lifecycle, in the order the runner calls it:

1. `AgentRuntime.provision(config, mcps)` once per batch (expensive: containers, auth, tool mounts).
   `mcps` are already-started MCP handles. Fields of `config` the runtime cannot honour raise
   `windtunnel.errors.UnsupportedConfigError`; they are never silently ignored.
2. `AgentHandle.reset_state()` after provision and before every run, the first included: drivers may use
   it as the seed point. It wipes sessions, history, memory, indexes and tool logs. A failed wipe raises
   and is fatal for the batch.
3. `AgentHandle.send(messages, session_id)` once per user turn; a multi-turn scenario reuses one
   session_id. It returns a flat `{"content", "tool_calls"}` dict, a `{"message": {...}}` wrapper, or an
   OpenAI chat completion; tool calls exactly as the platform emitted them, intermediate ones included.
4. `AgentHandle.teardown()` once, at the end of the batch, from a finally block: idempotent, never raises.

Optional abilities are Protocols of their own, detected with isinstance():
`ReferenceCapableAgentRuntime` (golden/poison self-tests), `MCPHostingAgentRuntime` (starts the pack's
MCP mocks where the agent can reach them), `ModelEvidenceHandle` (hands over the model gateway's log), and
those of windtunnel._core.abilities (close, image digests, state probe, egress probe, container listing,
killable handles). How a runtime is built and closed around these calls is windtunnel._runtimes.plugin's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:
    from windtunnel._core.mock_kit import MockServer
    from windtunnel._core.reference import ReferenceCase

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


@dataclass(frozen=True, slots=True)
class MCPSpec:
    """A declarative MCP reference: a name and the URL where it serves streamable HTTP."""

    name: str
    url: str


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Which model to run. `quant` is a quantisation label; None means the runtime's default."""

    name: str
    quant: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingConfig:
    """Sampling knobs. None means "the runtime's default"; a set value must reach the model or raise."""

    temperature: float | None = None
    top_p: float | None = None
    tool_choice: str | None = None
    max_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Only the fields that are set, in a stable order."""
        values = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "tool_choice": self.tool_choice,
            "max_tokens": self.max_tokens,
        }
        return {key: value for key, value in values.items() if value is not None}


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentConfig:
    """The agent's identity and knobs; identity lands in every Trace.

    `extensions` carries runtime-specific settings under namespaced keys. A runtime raises
    UnsupportedConfigError for any key it does not know, so a typo cannot be silently ignored.
    """

    agent_id: str = "agent"
    variant_id: str = "default"
    system_prompt: str | None = None
    persona_doc: Path | None = None
    skills: Sequence[Path] = ()
    mcp_servers: Sequence[MCPSpec] = ()
    model: ModelSpec | None = None
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    extensions: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "skills", tuple(self.skills))
        object.__setattr__(self, "mcp_servers", tuple(self.mcp_servers))
        object.__setattr__(self, "extensions", dict(self.extensions))


class Message(TypedDict):
    """One chat message sent to `send()`; the runner sends the whole conversation so far."""

    role: str
    content: str | None
    tool_calls: NotRequired[list[Any]]


Response = Mapping[str, Any]
"""A send() result: flat `{content, tool_calls}`, `{"message": {...}}`, or an OpenAI chat completion."""


@runtime_checkable
class MCPHandle(Protocol):
    """An already-started MCP server: its name and the streamable-HTTP URL it serves."""

    @property
    def name(self) -> str: ...

    @property
    def url(self) -> str: ...


@runtime_checkable
class RecordingMCPHandle(MCPHandle, Protocol):
    """An MCP mock that keeps evidence.

    `calls()` returns every tools/call received since the last `reset()`, in order, as dicts with
    server, name, arguments (raw, as received), result, is_error, violation, error and at.
    `state()` returns the mock's world state. `reset()` restores fresh fixture state and clears calls.
    """

    def calls(self) -> list[dict[str, Any]]: ...

    def state(self) -> Mapping[str, Any]: ...

    def reset(self) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class MockServerPlan:
    """One MCP mock a pack asks for: enough to build it in-process (`factory`) or elsewhere (`pack_root`)."""

    pack: str
    server: str
    factory: Callable[[], MockServer]
    pack_root: Path | None = None


@runtime_checkable
class StateProbe(Protocol):
    """Reads the world state after a run; outcome expectations are checked against its snapshot."""

    def snapshot(self) -> Mapping[str, Any]:
        """Return the current state as JSON-like data. Raise on failure; never return a guess."""
        ...


@runtime_checkable
class AgentHandle(Protocol):
    """A provisioned agent. See the module docstring for the call order."""

    def send(self, messages: list[Message], session_id: str) -> Response:
        """Drive one turn and return the response with every tool call of the turn, as emitted."""
        ...

    def reset_state(self) -> None:
        """Wipe cross-run state; cheap, called before every run, idempotent; raise if the wipe failed."""
        ...

    def teardown(self) -> None:
        """Release everything; called once per batch from a finally block; idempotent; never raises."""
        ...


@runtime_checkable
class ModelEvidenceHandle(AgentHandle, Protocol):
    """A handle whose model calls pass a gateway that logs them.

    `model_requests()` returns the gateway log entries recorded since the previous call (or since
    provision), oldest first: messages, tools, sampling, stream, usage served, and any error.
    """

    def model_requests(self) -> list[dict[str, Any]]: ...


@runtime_checkable
class AgentRuntime(Protocol):
    """Stands up live agents wired to already-started MCP handles."""

    def provision(self, config: AgentConfig, mcps: list[MCPHandle] | None = None) -> AgentHandle:
        """Called once per batch; raise UnsupportedConfigError for fields it cannot honour."""
        ...


@runtime_checkable
class ReferenceCapableAgentRuntime(AgentRuntime, Protocol):
    """A runtime that can substitute scripted decisions at its genuine model-inference seam (docs/selftests.md).

    `provision_reference()` is called once per reference case and returns an otherwise normal handle;
    its `teardown()` removes the substitution so cases cannot contaminate each other.
    """

    def provision_reference(
        self, config: AgentConfig, case: ReferenceCase, mcps: list[MCPHandle] | None = None
    ) -> AgentHandle: ...


@runtime_checkable
class MCPHostingAgentRuntime(AgentRuntime, Protocol):
    """A runtime that starts the pack's MCP mocks itself, where its agent can reach them.

    Without this ability the runner serves mocks on loopback. `stop_mcps()` is idempotent and never raises.
    """

    def start_mcps(self, plans: Sequence[MockServerPlan]) -> list[MCPHandle]: ...

    def stop_mcps(self, handles: Sequence[MCPHandle]) -> None: ...
