"""The agent loop: one Contract C turn through the OpenAI Agents SDK's Runner, its default Responses model (or
its chat-completions model, WT_MODEL_WIRE=chat), MCP and sessions; windtunnel_inject serves it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
from agents import (
    Agent,
    Model,
    ModelSettings,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    RunResult,
    set_tracing_disabled,
)
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI
from windtunnel_inject import McpServer, Settings, SettingsError, Transcript, Turn, TurnFailed, describe
from windtunnel_inject.openai_errors import describe_model_failure

from oa_runtime.sessions import SessionEntry, Sessions

SESSION_HEADER = "X-WT-Session"
API_KEY = "wt-gateway"  # the gateway needs no credential; the client insists on one
# The turn deadline is the caller's timeout_s; these only bound a single hung connection.
MODEL_HTTP_TIMEOUT_S = 600.0
MCP_TIMEOUT_S = 30.0
AGENT_NAME = "wt-openai-agents"
WIRE_VARIABLE = "WT_MODEL_WIRE"
MODELS: dict[str, type[OpenAIResponsesModel] | type[OpenAIChatCompletionsModel]] = {
    "responses": OpenAIResponsesModel,  # the SDK's default model
    "chat": OpenAIChatCompletionsModel,
}
"""The model API the runtime speaks, by WT_MODEL_WIRE (unset: responses, as the SDK does by default)."""


def sdk_model(settings: Settings, client: AsyncOpenAI) -> Model:
    """The SDK's model for the wire WT_MODEL_WIRE names; another value is a SettingsError naming it."""
    wire = settings.env.get(WIRE_VARIABLE, "").strip() or "responses"
    if wire not in MODELS:
        raise SettingsError(
            f"{WIRE_VARIABLE}={wire!r} is not a wire this runtime speaks: set it to {' or '.join(MODELS)}"
        )
    return MODELS[wire](settings.model_name, client)


def model_settings(sampling: Mapping[str, Any]) -> ModelSettings:
    """The configured knobs in the SDK's own ModelSettings; raw usage kept for the per-call report."""
    return ModelSettings(
        temperature=sampling.get("temperature"),
        top_p=sampling.get("top_p"),
        max_tokens=sampling.get("max_tokens"),
        # "auto", "none", "required" pass as they are; any other string names a tool to force (SDK rule).
        tool_choice=sampling.get("tool_choice"),
        preserve_raw_usage=True,
    )


class OpenAIAgentsLoop:
    """Turns, reset, tools and state; one model client, a fresh agent and MCP link per turn. The server
    enters it as a context manager, so shutdown closes the sessions and the model client."""

    def __init__(self, settings: Settings) -> None:
        set_tracing_disabled(True)  # also OPENAI_AGENTS_DISABLE_TRACING=1 (oa_runtime): nothing phones home
        self._settings = settings
        self._client = AsyncOpenAI(
            base_url=settings.model_base_url, api_key=API_KEY, max_retries=0, timeout=MODEL_HTTP_TIMEOUT_S
        )
        self._model = sdk_model(settings, self._client)
        self._model_settings = model_settings(settings.sampling)
        self.sessions = Sessions()

    async def turn(self, session_id: str, text: str) -> Turn:
        entry = self.sessions.get(session_id)
        async with entry.lock:  # turns of one session run one at a time, as a chat would
            before = await entry.session.get_items()
            try:
                result = await self._run(session_id, text, entry)
                return _report(result)
            except BaseException as exc:
                # A failed turn leaves no trace in the session: the SDK saved the user turn as it started.
                with anyio.CancelScope(shield=True):
                    await entry.restore(before)
                if isinstance(exc, Exception) and not isinstance(exc, TurnFailed):
                    raise TurnFailed(describe_model_failure(exc)) from exc
                raise

    async def _run(self, session_id: str, text: str, entry: SessionEntry) -> RunResult:
        async with self._tools() as servers:
            agent = Agent(
                name=AGENT_NAME,
                instructions=self._settings.system_prompt,
                model=self._model,
                model_settings=self._model_settings,
                mcp_servers=list(servers),
                # Keep a configured tool_choice on every model call, not only the first (the SDK's default).
                reset_tool_choice=False,
            )
            run_config = RunConfig(
                model_settings=ModelSettings(extra_headers={SESSION_HEADER: session_id}),
                tracing_disabled=True,
                workflow_name=AGENT_NAME,
                # A tool nobody offers is the model's mistake to hear about, as with any tool error,
                # not the end of the run (the SDK's default).
                tool_not_found_behavior="return_error_to_model",
            )
            return await Runner.run(
                agent, text, session=entry.session, max_turns=self._settings.max_steps, run_config=run_config
            )

    @asynccontextmanager
    async def _tools(self) -> AsyncIterator[Sequence[MCPServerStreamableHttp]]:
        """Every configured MCP server, connected for this turn (the SDK's session is per task)."""
        async with AsyncExitStack() as stack:
            servers = []
            for ref in self._settings.mcp_servers:
                servers.append(await stack.enter_async_context(_connect(ref)))
            yield servers

    async def list_tools(self) -> dict[str, str]:
        """Every offered tool and the server offering it: proof the tools are reachable now."""
        offered: dict[str, str] = {}
        async with self._tools() as servers:
            for server in servers:
                for tool in await server.list_tools():
                    offered[tool.name] = server.name
        return offered

    async def reset(self) -> None:
        await self.sessions.reset()

    async def snapshot(self) -> dict[str, Any]:
        return {"sessions": await self.sessions.snapshot()}

    async def __aenter__(self) -> OpenAIAgentsLoop:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.sessions.close()
        await self._client.close()


def _tool_error(_context: Any, error: Exception) -> str:
    """A failed tool call as the model hears it: the server's own message (a JSON-RPC error such as -32602
    included). The SDK's default replaces it with a fixed "An error occurred" line, so the model could not
    tell what failed (docs/conformance.md, tool_errors)."""
    detail = getattr(getattr(error, "error", None), "message", None) or str(error)
    return f"error: {detail}"


@asynccontextmanager
async def _connect(ref: McpServer) -> AsyncIterator[MCPServerStreamableHttp]:
    server = MCPServerStreamableHttp(
        {"url": ref.url, "timeout": MCP_TIMEOUT_S},
        name=ref.name,
        client_session_timeout_seconds=MCP_TIMEOUT_S,
        failure_error_function=_tool_error,
    )
    # The SDK leaves connect() and cleanup() unannotated.
    try:
        await server.connect()  # type: ignore[no-untyped-call]
    except Exception as exc:
        await server.cleanup()  # type: ignore[no-untyped-call]
        raise TurnFailed(f"cannot connect to MCP server {ref.name!r} at {ref.url}: {describe(exc)}") from exc
    try:
        yield server
    finally:
        await server.cleanup()  # type: ignore[no-untyped-call]


def _report(result: RunResult) -> Turn:
    """The turn as the model emitted it, from the SDK's raw model responses, in order."""
    transcript = Transcript()
    for response in result.raw_responses:
        transcript.model_call(response.raw_usage)
        for item in response.output:
            if getattr(item, "type", None) == "function_call":
                transcript.tool_call(str(getattr(item, "name", "")), getattr(item, "arguments", None))
    content = result.final_output
    return transcript.turn("" if content is None else str(content))
