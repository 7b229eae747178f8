"""The agent loop: one Contract C turn through the Claude Agent SDK's query(), which runs the bundled Claude
Code CLI against the model gateway with the MCP mocks as its only tools; windtunnel_inject serves it."""

from __future__ import annotations

import collections
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    query,
)
from claude_agent_sdk.types import McpHttpServerConfig
from windtunnel_inject import Settings, SettingsError, Transcript, Turn, TurnFailed, describe

from ca_runtime.cli import check_cli, claude_cli
from ca_runtime.quiet import QUIET, STDERR_LINES
from ca_runtime.sessions import SessionEntry, Sessions

SESSION_HEADER = "X-WT-Session"
API_KEY = "wt-gateway"  # the gateway needs no credential; the CLI insists on one
ROOT_URL_VARIABLE = "WT_MODEL_ROOT_URL"
RESERVED_SERVER_NAMES = frozenset(
    {
        "workspace",
        "terminal",
        "office",
        "visualize",
        "window_halo",
        "dev_debug",
        "ccd_session",
        "ccd_session_mgmt",
    }
)
"""MCP server names Claude Code 2.1.332 reserves for its own servers: a server given one of them is dropped
with only a warning ("is a reserved MCP server name and was not loaded"), so it goes in as wt_<name>."""
WORKDIR = "wt-claude-work"
SIDE_MODEL = "wt-claude-side"
"""The model name of the CLI's side calls (titles, summaries, quota checks: its "small fast" Haiku model),
fixed so the gateway can be told it is side traffic that never consumes a scripted decision."""


def root_url(settings: Settings) -> str:
    """The gateway's root URL (the CLI appends /v1/messages): WT_MODEL_ROOT_URL, else WT_MODEL_BASE_URL less
    its /v1 (for a harness that hands only the OpenAI-style base URL)."""
    given = settings.env.get(ROOT_URL_VARIABLE, "").strip().rstrip("/")
    return given or settings.model_base_url.removesuffix("/v1")


class ClaudeAgentLoop:
    """Turns, reset, tools and state: one CLI process per turn, resuming the session's transcript kept in
    the session's own config directory."""

    def __init__(self, settings: Settings) -> None:
        unsupported = sorted(set(settings.sampling) - {"max_tokens"})
        if unsupported:
            # Claude Code has no setting for them: refusing beats ignoring (docs/contract-c.md).
            raise SettingsError(
                f"WT_SAMPLING sets {unsupported}, which Claude Code cannot honour (it takes max_tokens only): "
                "leave them unset"
            )
        self._settings = settings
        self._cli = claude_cli(settings)
        self.version = check_cli(self._cli)
        self._root_url = root_url(settings)
        self._servers = {claude_name(ref.name): ref.url for ref in settings.mcp_servers}
        # One working directory for every session: the CLI names it in the prompt, so a per-session random
        # path would make every session's first request differ (tapes, prompt-cache checks). It holds no
        # state: the transcripts live in each session's own CLAUDE_CONFIG_DIR.
        self._cwd = Path(tempfile.gettempdir()) / WORKDIR
        self._cwd.mkdir(exist_ok=True)
        tokens = settings.sampling.get("max_tokens")
        # The CLI's own setting for the max_tokens of every model call.
        self._sampling = {} if tokens is None else {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(tokens)}
        self.sessions = Sessions()

    def _options(
        self, session_id: str, entry: SessionEntry, stderr: collections.deque[str]
    ) -> ClaudeAgentOptions:
        servers: dict[str, Any] = {
            name: McpHttpServerConfig(type="http", url=url) for name, url in self._servers.items()
        }
        directory = str(entry.directory)
        return ClaudeAgentOptions(
            cli_path=self._cli,  # the CLI the start probe ran, not one the SDK looks up again
            tools=[],  # no built-in tool (Bash, Read, WebFetch ...): the mocks are the only tools
            mcp_servers=servers,
            strict_mcp_config=True,  # no .mcp.json, user or plugin servers: only these
            # Every tool of the given servers runs without asking; anything else is denied, not prompted.
            allowed_tools=[f"mcp__{name}" for name in servers],
            permission_mode="dontAsk",
            setting_sources=[],  # no settings files, CLAUDE.md or hooks from disk
            system_prompt=self._settings.system_prompt,
            model=self._settings.model_name,
            max_turns=self._settings.max_steps,
            cwd=str(self._cwd),
            session_id=None if entry.started else entry.claude_session,
            resume=entry.claude_session if entry.started else None,
            env={
                **QUIET,
                "ANTHROPIC_BASE_URL": self._root_url,
                "ANTHROPIC_API_KEY": API_KEY,
                "ANTHROPIC_CUSTOM_HEADERS": f"{SESSION_HEADER}: {session_id}",
                "ANTHROPIC_DEFAULT_HAIKU_MODEL": SIDE_MODEL,
                "ANTHROPIC_SMALL_FAST_MODEL": SIDE_MODEL,
                "CLAUDE_CONFIG_DIR": directory,
                "HOME": directory,
                **self._sampling,
            },
            stderr=stderr.append,
        )

    async def turn(self, session_id: str, text: str) -> Turn:
        entry = self.sessions.get(session_id)
        async with entry.lock:  # turns of one session run one at a time, as a chat would
            before = entry.files()
            stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
            try:
                turn = await self._run(text, self._options(session_id, entry, stderr))
            except BaseException as exc:
                # A failed turn leaves no trace in the session: its transcript goes back as it was.
                with anyio.CancelScope(shield=True):
                    entry.restore(before)
                if isinstance(exc, Exception) and not isinstance(exc, TurnFailed):
                    said = " | ".join(line.strip() for line in stderr if line.strip())
                    raise TurnFailed(describe(exc) + (f"; Claude Code said: {said}" if said else "")) from exc
                raise
            entry.started = True
            return turn

    async def _run(self, text: str, options: ClaudeAgentOptions) -> Turn:
        """The turn as the model emitted it: every tool_use block of the top-level assistant messages, in
        order, names as emitted (mcp__<server>__<tool>), and the final answer's text."""
        transcript = Transcript()
        answer = ""
        messages: set[str | None] = set()
        async for message in query(prompt=text, options=options):
            if isinstance(message, SystemMessage) and message.subtype == "init":
                _check_servers(message.data, self._servers)
            elif isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                if message.message_id not in messages:  # the CLI may split one answer over messages
                    messages.add(message.message_id)
                    transcript.model_call()
                for block in message.content:
                    if isinstance(block, ToolUseBlock):
                        transcript.tool_call(block.name, block.input)
                    elif isinstance(block, TextBlock):
                        answer = block.text
            elif isinstance(message, ResultMessage):
                if message.is_error:
                    raise TurnFailed(f"Claude Code ended the turn with an error: {_result_error(message)}")
                answer = message.result if message.result is not None else answer
        # Usage is left out: the CLI's counts are its own estimates, not what the gateway served.
        return Turn(answer, transcript.tool_calls)

    async def reset(self) -> None:
        self.sessions.reset()

    async def snapshot(self) -> Mapping[str, Any]:
        return {"sessions": self.sessions.snapshot()}


def claude_name(name: str) -> str:
    """The name a WT_MCP_SERVERS server goes to Claude Code under: its own, unless Claude Code reserves it."""
    return f"wt_{name}" if name in RESERVED_SERVER_NAMES else name


def _check_servers(init: Mapping[str, Any], servers: Mapping[str, str]) -> None:
    """Every configured MCP server connected, as the CLI's init message reports them: a server it dropped
    or could not reach fails the turn naming it, never a turn run without its tools."""
    status = {server.get("name"): server.get("status") for server in init.get("mcp_servers") or ()}
    for name, url in servers.items():
        if status.get(name) != "connected":
            seen = status.get(name) or "not loaded"
            raise TurnFailed(f"cannot connect to MCP server {name!r} at {url}: Claude Code says {seen}")


def _result_error(message: ResultMessage) -> str:
    details = [*(message.errors or []), *([message.result] if message.result else [])]
    return "; ".join(details) or message.subtype
