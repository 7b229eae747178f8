"""The config.toml of one session's CODEX_HOME: the gateway as a custom Responses provider, the mocks by URL."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from windtunnel_inject import McpServer, Settings

PROVIDER = "wt"
SESSION_HEADER = "X-WT-Session"
PROMPT_FILE = "instructions.md"


def gateway_base_url(settings: Settings) -> str:
    """The gateway's /v1 base, Codex appending /responses. WT_MODEL_ROOT_URL (no /v1) wins when set."""
    root = settings.env.get("WT_MODEL_ROOT_URL") or settings.model_base_url.rstrip("/").removesuffix("/v1")
    return f"{root.rstrip('/')}/v1"


def _string(value: str) -> str:
    # A JSON string is a valid TOML basic string: the same quotes and escapes.
    return json.dumps(value)


TOOL_OUTPUT_TOKEN_LIMIT = 1_000_000
"""Codex's per-result history budget, in tokens: far above any tool result a scenario serves."""


def _table(name: str, entries: Mapping[str, str]) -> str:
    return f"[{name}]\n" + "".join(f"{key} = {value}\n" for key, value in entries.items())


def render(settings: Settings, session_id: str, home: Path) -> str:
    """config.toml for `session_id`. Every setting is here because its default would reach past the gateway
    and mocks, retry a refusal (one scripted decision must be one model call) or wait on a person."""
    top = {
        "model": _string(settings.model_name),
        "model_provider": _string(PROVIDER),
        # The system prompt replaces Codex's built-in base instructions (the request's `instructions`).
        "model_instructions_file": _string(str(home / PROMPT_FILE)),
        # No person answers in a certification run: tools run without asking, and nothing else may run.
        "approval_policy": _string("never"),
        "sandbox_mode": _string("read-only"),
        "web_search": _string("disabled"),
        "check_for_update_on_startup": "false",
        # Codex keeps each tool result in the model's history within a token budget and cuts the middle of a
        # longer one out ("…N tokens truncated…": a 16 KiB result reached the model as 12 KB). The model must
        # be handed what the MCP server returned, whole (docs/conformance.md, long_tool_results).
        "tool_output_token_limit": str(TOOL_OUTPUT_TOKEN_LIMIT),
    }
    provider = {
        "name": _string("Wind Tunnel gateway"),
        "base_url": _string(gateway_base_url(settings)),
        "wire_api": _string("responses"),
        # Codex retries a request 4 times and a broken stream 5 times by default; each retry would pop the
        # next scripted decision.
        "request_max_retries": "0",
        "stream_max_retries": "0",
        # The gateway answers the WebSocket upgrade with 405; asking would be a wasted call.
        "supports_websockets": "false",
        "http_headers": "{ " + _string(SESSION_HEADER) + " = " + _string(session_id) + " }",
    }
    parts = ["".join(f"{key} = {value}\n" for key, value in top.items())]
    parts.append(_table(f"model_providers.{PROVIDER}", provider))
    for ref in settings.mcp_servers:
        parts.append(_mcp_table(ref))
    return "\n".join(parts)


def _mcp_table(ref: McpServer) -> str:
    # With approval_policy "never" an MCP tool call is refused ("requires approval") unless its server's
    # tools are approved up front.
    return _table(
        f"mcp_servers.{_string(ref.name)}",
        {"url": _string(ref.url), "default_tools_approval_mode": _string("approve")},
    )


def write_home(settings: Settings, session_id: str, home: Path) -> None:
    """A fresh CODEX_HOME: config.toml and the system prompt file it names."""
    home.mkdir(parents=True, exist_ok=True)
    (home / PROMPT_FILE).write_text(settings.system_prompt, encoding="utf-8")
    (home / "config.toml").write_text(render(settings, session_id, home), encoding="utf-8")
