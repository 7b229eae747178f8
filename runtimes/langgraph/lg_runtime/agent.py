"""The agent loop: one Contract C turn through LangGraph's prebuilt ReAct agent, langchain-openai's chat model
and langchain-mcp-adapters' tools; windtunnel_inject serves it."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, messages_to_dict
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.errors import GraphRecursionError
from langgraph.prebuilt import ToolNode, create_react_agent
from mcp.shared.exceptions import McpError
from windtunnel_inject import McpServer, Settings, Transcript, Turn, TurnFailed, describe
from windtunnel_inject.openai_errors import describe_model_failure

SESSION_HEADER = "X-WT-Session"
API_KEY = "wt-gateway"  # the gateway needs no credential; the client insists on one
# The turn deadline is the caller's timeout_s; these only bound a single hung connection.
MODEL_HTTP_TIMEOUT_S = 600.0
MCP_TIMEOUT_S = 30.0
NAMED_CHOICES = ("auto", "none", "required")

# create_react_agent is LangGraph's own prebuilt ReAct loop; LangGraph 1.x marks it deprecated in favour of
# langchain.agents.create_agent (another package, middleware for tool errors). It is kept on purpose: it is
# the graph LangGraph users run, and its ToolNode takes the error setting this runtime needs (README.md).
warnings.filterwarnings("ignore", message=r"create_react_agent has been moved", category=Warning)


def tool_error(error: Exception) -> str:
    """A failed tool call as the model hears it, for every failure, not only the adapter's isError results.

    ToolNode's default (`handle_tool_errors` unset) answers only invalid arguments and re-raises the rest:
    a JSON-RPC error, which `mcp` raises as McpError, would end the run instead of reaching the model. An
    isError result is already a ToolMessage (the adapter's own handler) and never gets here.
    """
    if isinstance(error, McpError):
        return f"error: {error.error.message}"
    return f"error: {error}"


def chat_model(settings: Settings, session_id: str) -> ChatOpenAI:
    """The gateway as an OpenAI chat model, with the configured sampling and the session header."""
    sampling = settings.sampling
    knobs: dict[str, Any] = {}
    for key in ("temperature", "top_p"):
        if key in sampling:
            knobs[key] = sampling[key]
    if "max_tokens" in sampling:
        knobs["max_tokens"] = sampling["max_tokens"]
    return ChatOpenAI(
        model=settings.model_name,
        base_url=settings.model_base_url,
        api_key=API_KEY,  # type: ignore[arg-type]  # the SDK types it SecretStr, and accepts a str
        max_retries=0,  # one scripted decision is one model call: the client must not retry a refusal
        timeout=MODEL_HTTP_TIMEOUT_S,
        default_headers={SESSION_HEADER: session_id},
        **knobs,
    )


class LangGraphLoop:
    """Turns, reset, tools and state; a fresh graph and MCP client per turn, each session's messages here.

    A turn's messages join its session only when the turn finishes, so a failed or timed-out turn leaves
    the session as it was."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._sessions: dict[str, list[BaseMessage]] = {}
        self._locks: dict[str, anyio.Lock] = {}

    async def turn(self, session_id: str, text: str) -> Turn:
        lock = self._locks.setdefault(session_id, anyio.Lock())
        async with lock:  # turns of one session run one at a time, as a chat would
            sessions = self._sessions  # a reset during the turn swaps the dict: this turn then saves nowhere
            before = list(sessions.get(session_id, ()))
            tools = await self._tools()
            graph = create_react_agent(
                self._bound(chat_model(self._settings, session_id), tools),
                ToolNode(tools, handle_tool_errors=tool_error),
                prompt=self._settings.system_prompt,
            )
            # One model call and one tool step per ReAct step, plus the end: WT_MAX_STEPS model calls.
            config = {"recursion_limit": 2 * self._settings.max_steps + 1}
            try:
                result = await graph.ainvoke({"messages": [*before, HumanMessage(text)]}, config=config)
            except GraphRecursionError as exc:
                raise TurnFailed(f"the agent made more than {self._settings.max_steps} model calls") from exc
            except Exception as exc:
                raise TurnFailed(describe_model_failure(exc)) from exc
            messages: list[BaseMessage] = result["messages"]
            report = _report(messages[len(before) + 1 :])  # raises TurnFailed for arguments not a JSON object
            sessions[session_id] = messages
        return report

    def _bound(self, model: ChatOpenAI, tools: Sequence[BaseTool]) -> Any:
        choice = self._settings.sampling.get("tool_choice")
        if not tools:
            return model
        # Any string but auto/none/required names the one tool to force (langchain-openai's rule).
        return model.bind_tools(tools, tool_choice=choice) if choice is not None else model.bind_tools(tools)

    def _client(self, servers: Sequence[McpServer]) -> MultiServerMCPClient:
        return MultiServerMCPClient(
            {
                ref.name: {"transport": "streamable_http", "url": ref.url, "timeout": MCP_TIMEOUT_S}
                for ref in servers
            }
        )

    async def _tools(self) -> list[BaseTool]:
        """Every configured server's tools; each call opens its own MCP session (the adapter's default)."""
        client = self._client(self._settings.mcp_servers)
        tools: list[BaseTool] = []
        for ref in self._settings.mcp_servers:
            try:
                tools.extend(await client.get_tools(server_name=ref.name))
            except Exception as exc:
                raise TurnFailed(
                    f"cannot connect to MCP server {ref.name!r} at {ref.url}: {describe(exc)}"
                ) from exc
        return tools

    async def list_tools(self) -> dict[str, str]:
        """Every offered tool and the server offering it: proof the tools are reachable now."""
        client = self._client(self._settings.mcp_servers)
        offered: dict[str, str] = {}
        for ref in self._settings.mcp_servers:
            for tool in await client.get_tools(server_name=ref.name):
                offered[tool.name] = ref.name
        return offered

    async def reset(self) -> None:
        """Forget every session: fresh messages and fresh locks for the next turns."""
        self._sessions = {}
        self._locks = {}

    async def snapshot(self) -> dict[str, Any]:
        return {"sessions": {sid: messages_to_dict(msgs) for sid, msgs in self._sessions.items()}}

    async def __aenter__(self) -> LangGraphLoop:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


def _report(new: Sequence[BaseMessage]) -> Turn:
    """The turn as the model emitted it, from the AIMessages the graph added, in order."""
    transcript = Transcript()
    answer = ""
    for message in new:
        if not isinstance(message, AIMessage):
            continue
        transcript.model_call(_usage(message.response_metadata))
        for call in message.tool_calls:
            # langchain-openai json-decodes the arguments, keeping the model's key order.
            transcript.tool_call(call["name"], call["args"])
        for invalid in message.invalid_tool_calls:
            # Arguments that were not JSON: reported as the raw text the model sent.
            transcript.tool_call(invalid.get("name") or "", invalid.get("args"))
        answer = message.text
    return transcript.turn(answer)


def _usage(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The gateway's own usage dict of one call (langchain-openai keeps it as token_usage)."""
    usage = metadata.get("token_usage")
    return dict(usage) if isinstance(usage, Mapping) else {}
