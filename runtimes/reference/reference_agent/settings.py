"""The runtime's configuration, read once from the WT_* environment and validated before serving."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

DEFAULT_PORT = 8647
DEFAULT_MODEL = "wt-default"
DEFAULT_SYSTEM_PROMPT = (
    "You are a careful support agent. Use the tools you are given to look things up and to act; "
    "never invent facts a tool can tell you. Answer briefly once the task is done."
)
SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "tool_choice")
DEFAULT_MAX_STEPS = 16


class Fault(Enum):
    """Known-broken behaviours for the conformance suite's poison runtimes (issue 4). Unset = correct."""

    HIDE_INTERMEDIATE_TOOL_CALLS = "hide_intermediate_tool_calls"
    NORMALIZE_TOOL_ARGUMENTS = "normalize_tool_arguments"
    KEEP_CONVERSATION_ACROSS_RESET = "keep_conversation_across_reset"
    KEEP_SEARCH_INDEX_ACROSS_RESET = "keep_search_index_across_reset"
    IGNORE_SAMPLING = "ignore_sampling"
    BREAK_SESSION_AFFINITY = "break_session_affinity"
    RESET_NOOP = "reset_noop"
    SORT_TOOL_CALLS = "sort_tool_calls"
    IGNORE_SYSTEM_PROMPT = "ignore_system_prompt"
    CACHE_ANSWERS_ACROSS_RESET = "cache_answers_across_reset"
    DROP_TOOL_CALL_IDS = "drop_tool_call_ids"
    HARDCODE_SAMPLING_DEFAULTS = "hardcode_sampling_defaults"
    REPORT_LAST_CALL_USAGE = "report_last_call_usage"
    SUMMARIZE_TOOL_RESULTS = "summarize_tool_results"
    SEND_USER_TURN_LATE = "send_user_turn_late"


class SettingsError(ValueError):
    """The environment does not describe a runtime we can start; the message names the variable."""


@dataclass(frozen=True, slots=True)
class McpServerRef:
    name: str
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    model_base_url: str
    model_name: str = DEFAULT_MODEL
    mcp_servers: tuple[McpServerRef, ...] = ()
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    sampling: Mapping[str, Any] = field(default_factory=dict)
    stream: bool = False
    fault: Fault | None = None
    host: str = "0.0.0.0"  # noqa: S104 - the container's published port must be reachable from its network
    port: int = DEFAULT_PORT
    max_steps: int = DEFAULT_MAX_STEPS

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Build settings from `env` (os.environ in the service); raises SettingsError naming the variable."""
        base_url = env.get("WT_MODEL_BASE_URL", "").strip()
        if not base_url:
            raise SettingsError(
                "WT_MODEL_BASE_URL is not set: expected the OpenAI-compatible base URL of the model gateway, "
                "e.g. http://gateway:8000/v1"
            )
        return cls(
            model_base_url=base_url.rstrip("/"),
            model_name=env.get("WT_MODEL_NAME") or DEFAULT_MODEL,
            mcp_servers=_mcp_servers(env.get("WT_MCP_SERVERS", "")),
            system_prompt=env.get("WT_SYSTEM_PROMPT") or DEFAULT_SYSTEM_PROMPT,
            sampling=_sampling(env.get("WT_SAMPLING", "")),
            stream=_flag(env, "WT_STREAM"),
            fault=_fault(env.get("WT_FAULT", "")),
            host=env.get("WT_INJECT_HOST") or "0.0.0.0",  # noqa: S104 - see the field's comment
            port=_int(env, "WT_INJECT_PORT", DEFAULT_PORT),
            max_steps=_int(env, "WT_MAX_STEPS", DEFAULT_MAX_STEPS),
        )


def _json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{name} is not valid JSON ({exc}): {text[:200]!r}") from exc


def _mcp_servers(text: str) -> tuple[McpServerRef, ...]:
    if not text.strip():
        return ()
    data = _json("WT_MCP_SERVERS", text)
    if not isinstance(data, list):
        raise SettingsError(
            f'WT_MCP_SERVERS must be a JSON list of {{"name", "url"}}, got {type(data).__name__}'
        )
    servers: list[McpServerRef] = []
    for index, item in enumerate(data):
        if not (
            isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("url"), str)
        ):
            raise SettingsError(f'WT_MCP_SERVERS[{index}] must be {{"name": str, "url": str}}, got {item!r}')
        servers.append(McpServerRef(name=item["name"], url=item["url"]))
    names = [server.name for server in servers]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SettingsError(f"WT_MCP_SERVERS names must be unique; repeated: {', '.join(duplicates)}")
    return tuple(servers)


def _sampling(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    data = _json("WT_SAMPLING", text)
    if not isinstance(data, dict):
        raise SettingsError(f"WT_SAMPLING must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(SAMPLING_KEYS))
    if unknown:
        # Refusing beats ignoring: a knob we silently drop would make the bench lie (seed 002).
        raise SettingsError(
            f"WT_SAMPLING has keys this runtime cannot honour: {unknown}; known: {list(SAMPLING_KEYS)}"
        )
    # A key set to null is "not set": forward only what the caller actually chose.
    return {key: value for key, value in data.items() if value is not None}


def _fault(text: str) -> Fault | None:
    if not text.strip():
        return None
    try:
        return Fault(text.strip())
    except ValueError:
        known = ", ".join(fault.value for fault in Fault)
        raise SettingsError(
            f"WT_FAULT={text!r} is not a known fault; known faults: {known} (unset = correct)"
        ) from None


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in ("", "0", "false", "no"):
        return False
    if value in ("1", "true", "yes"):
        return True
    raise SettingsError(f"{name}={value!r}: expected 1 or 0")


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise SettingsError(f"{name}={text!r} is not an integer") from None
    if value <= 0:
        raise SettingsError(f"{name}={value} must be positive")
    return value
