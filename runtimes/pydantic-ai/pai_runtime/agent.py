"""The agent loop: one Contract C turn through pydantic-ai's Agent, OpenAI chat model, MCP toolset and
conversation store; windtunnel_inject serves it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from openai import AsyncOpenAI
from pydantic_ai import Agent, AgentRunResult, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import InMemoryConversationStore
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, ToolCallPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.profiles.openai import OpenAIModelProfile
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits
from windtunnel_inject import McpServer, Settings, Transcript, Turn, TurnFailed, describe
from windtunnel_inject.openai_errors import describe_model_failure

SESSION_HEADER = "X-WT-Session"
API_KEY = "wt-gateway"  # the gateway needs no credential; the client insists on one
# The turn deadline is the caller's timeout_s; these only bound a single hung connection.
MODEL_HTTP_TIMEOUT_S = 600.0
MCP_TIMEOUT_S = 30.0
# The gateway is an OpenAI-compatible server, not OpenAI: the max_tokens setting goes out as `max_tokens`,
# and no model name makes the SDK drop sampling knobs as it does for OpenAI's reasoning models.
GATEWAY_PROFILE = OpenAIModelProfile(
    openai_chat_supports_max_completion_tokens=False, openai_supports_reasoning=False
)


def model_settings(sampling: Mapping[str, Any]) -> ModelSettings:
    """The configured knobs in the SDK's own ModelSettings (only those set)."""
    settings = ModelSettings()
    if "temperature" in sampling:
        settings["temperature"] = sampling["temperature"]
    if "top_p" in sampling:
        settings["top_p"] = sampling["top_p"]
    if "max_tokens" in sampling:
        settings["max_tokens"] = sampling["max_tokens"]
    choice = sampling.get("tool_choice")
    if choice is not None:
        # "auto", "none", "required" pass as they are; another string names the one tool to force.
        settings["tool_choice"] = choice if choice in ("auto", "none", "required") else [choice]
    return settings


@dataclass
class Sampling(AbstractCapability[Any]):
    """The sampling knobs as per-step settings: the SDK refuses a static tool_choice="required" (it would
    forbid the final answer), but forwards it per step, which is how WT_SAMPLING means it: on every call."""

    settings: ModelSettings

    def get_model_settings(self) -> Callable[[RunContext[Any]], ModelSettings]:
        return lambda _ctx: ModelSettings(**self.settings)


class PydanticAILoop:
    """Turns, reset, tools and state; one model, a fresh agent and MCP link per turn. The server enters it
    as a context manager, so shutdown closes the model client."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._client = AsyncOpenAI(
            base_url=settings.model_base_url, api_key=API_KEY, max_retries=0, timeout=MODEL_HTTP_TIMEOUT_S
        )
        provider = OpenAIProvider(openai_client=self._client)
        self._model = OpenAIChatModel(settings.model_name, provider=provider, profile=GATEWAY_PROFILE)
        self._sampling = Sampling(model_settings(settings.sampling))
        self._store = InMemoryConversationStore()
        self._locks: dict[str, anyio.Lock] = {}

    async def turn(self, session_id: str, text: str) -> Turn:
        lock = self._locks.setdefault(session_id, anyio.Lock())
        async with lock:  # turns of one session run one at a time, as a chat would
            store = self._store  # a reset during the turn swaps the store: this turn then saves nowhere
            conversation = await store.load(session_id) or Conversation(conversation_id=session_id)
            try:
                async with self._tools() as toolsets:
                    result = await self._agent(toolsets).run(
                        text,
                        conversation=conversation,
                        model_settings=ModelSettings(extra_headers={SESSION_HEADER: session_id}),
                        usage_limits=UsageLimits(request_limit=self._settings.max_steps),
                    )
            except TurnFailed:
                raise
            except Exception as exc:
                raise TurnFailed(describe_model_failure(exc)) from exc
            await store.save(result)  # only a finished turn joins the conversation
        return _report(result)

    def _agent(self, toolsets: Sequence[MCPToolset[None]]) -> Agent[None, str]:
        capabilities = [self._sampling] if self._sampling.settings else []
        return Agent(
            self._model,
            system_prompt=self._settings.system_prompt,
            toolsets=list(toolsets),
            capabilities=capabilities,
        )

    @asynccontextmanager
    async def _tools(self) -> AsyncIterator[Sequence[MCPToolset[None]]]:
        """Every configured MCP server, connected for this turn; the run reuses the open connections."""
        async with AsyncExitStack() as stack:
            toolsets = []
            for ref in self._settings.mcp_servers:
                toolset = _toolset(ref)
                try:
                    await stack.enter_async_context(toolset)
                except Exception as exc:
                    raise TurnFailed(
                        f"cannot connect to MCP server {ref.name!r} at {ref.url}: {describe(exc)}"
                    ) from exc
                toolsets.append(toolset)
            yield toolsets

    async def list_tools(self) -> dict[str, str]:
        """Every offered tool and the server offering it: proof the tools are reachable now."""
        offered: dict[str, str] = {}
        async with self._tools() as toolsets:
            for ref, toolset in zip(self._settings.mcp_servers, toolsets, strict=True):
                for tool in await toolset.list_tools():
                    offered[tool.name] = ref.name
        return offered

    async def reset(self) -> None:
        """Forget every conversation: a fresh store, and fresh locks for the next turns."""
        self._store = InMemoryConversationStore()
        self._locks = {}

    async def snapshot(self) -> dict[str, Any]:
        sessions: dict[str, Any] = {}
        for record in await self._store.read_records():
            loaded = await self._store.load(record.conversation_id)
            if loaded is not None:
                sessions[record.conversation_id] = ModelMessagesTypeAdapter.dump_python(
                    loaded.messages, mode="json"
                )
        return {"sessions": sessions}

    async def __aenter__(self) -> PydanticAILoop:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.close()


def _toolset(ref: McpServer) -> MCPToolset[None]:
    # 'failed': a tool error goes back to the model as the tool's answer, as with any platform, instead of
    # counting against the SDK's retry budget.
    return MCPToolset(
        ref.url,
        id=ref.name,
        tool_error_behavior="failed",
        init_timeout=MCP_TIMEOUT_S,
        read_timeout=MCP_TIMEOUT_S,
    )


def _report(result: AgentRunResult[str]) -> Turn:
    """The turn as the model emitted it, from the SDK's ModelResponse parts, in order."""
    transcript = Transcript()
    for response in (m for m in result.new_messages() if isinstance(m, ModelResponse)):
        transcript.model_call(_usage(response))
        for part in response.parts:
            # Calls the model asked this agent to run; a NativeToolCallPart (run by the provider) is not one.
            if isinstance(part, ToolCallPart):
                transcript.tool_call(part.tool_name, part.args)
    return transcript.turn(str(result.output))


def _usage(response: ModelResponse) -> dict[str, Any]:
    usage = response.usage
    if not usage.has_values():
        return {}  # the gateway reported nothing for this call: say nothing rather than zeros
    reported: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        reported["cached_tokens"] = usage.cache_read_tokens
    return reported
