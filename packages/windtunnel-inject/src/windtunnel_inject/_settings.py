"""The WT_* environment of a Contract C runtime, read once and validated before the server starts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

DEFAULT_PORT = 8647
DEFAULT_MODEL = "wt-default"
DEFAULT_SYSTEM_PROMPT = (
    "You are a careful support agent. Use the tools you are given to look things up and to act; "
    "never invent facts a tool can tell you. Answer briefly once the task is done."
)
SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "tool_choice")
DEFAULT_MAX_STEPS = 16
_JSON_FIX = {
    "WT_MCP_SERVERS": 'set it to a JSON list such as [{"name": "orders", "url": "http://orders:8000/mcp"}]',
    "WT_SAMPLING": 'set it to a JSON object such as {"temperature": 0.2, "max_tokens": 256}',
}
ANY_ADDRESS = "0.0.0.0"  # noqa: S104 - a runtime's published port must be reachable from its container network


class SettingsError(ValueError):
    """The environment does not describe a runtime that can start; the message names the variable and the fix."""


@dataclass(frozen=True, slots=True)
class McpServer:
    """One entry of WT_MCP_SERVERS: an MCP server speaking streamable HTTP at `url`."""

    name: str
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What the harness configured (docs/contract-c.md, "Runtimes in containers"), plus the server's own
    knobs: WT_INJECT_HOST (default 0.0.0.0: inside a container the harness reaches the runtime over its
    network, never on loopback) and WT_MAX_STEPS (model calls a turn may make, for loops that cap them).

    `env` is the whole environment it was read from, for a loop's own variables (see env_flag()).
    """

    model_base_url: str
    model_name: str = DEFAULT_MODEL
    mcp_servers: tuple[McpServer, ...] = ()
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    sampling: Mapping[str, Any] = field(default_factory=dict)
    host: str = ANY_ADDRESS
    port: int = DEFAULT_PORT
    max_steps: int = DEFAULT_MAX_STEPS
    env: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """Settings from `env` (os.environ in a server); raises SettingsError naming the variable.

        A runtime with variables of its own may subclass Settings (frozen, kw_only fields with defaults) and
        override this to add them: `replace(super(MySettings, cls).from_env(env), mine=...)` (see
        runtimes/reference; the explicit super() because a slots dataclass is a new class).
        """
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
            host=env.get("WT_INJECT_HOST") or ANY_ADDRESS,
            port=env_positive_int(env, "WT_INJECT_PORT", DEFAULT_PORT),
            max_steps=env_positive_int(env, "WT_MAX_STEPS", DEFAULT_MAX_STEPS),
            env=dict(env),
        )


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """A yes/no variable of the loop's own: unset, 0, false or no is False; 1, true or yes is True."""
    value = env.get(name, "").strip().lower()
    if value in ("", "0", "false", "no"):
        return False
    if value in ("1", "true", "yes"):
        return True
    raise SettingsError(f"{name}={value!r} is not a yes/no value: set it to 1 or 0, or leave it unset")


def env_positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    """A positive integer variable; `default` when unset or empty."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise SettingsError(
            f"{name}={text!r} is not an integer: set a positive whole number or leave it unset"
        ) from None
    if value <= 0:
        raise SettingsError(f"{name}={value} must be positive: set a whole number above 0 or leave it unset")
    return value


def _json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{name} is not valid JSON ({exc}): {text[:200]!r}; {_JSON_FIX[name]}") from exc


def _mcp_servers(text: str) -> tuple[McpServer, ...]:
    if not text.strip():
        return ()
    data = _json("WT_MCP_SERVERS", text)
    if not isinstance(data, list):
        raise SettingsError(
            f"WT_MCP_SERVERS must be a JSON list, got {type(data).__name__}; {_JSON_FIX['WT_MCP_SERVERS']}"
        )
    servers: list[McpServer] = []
    for index, item in enumerate(data):
        if not (
            isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("url"), str)
        ):
            raise SettingsError(
                f'WT_MCP_SERVERS[{index}] must be {{"name": str, "url": str}}, got {item!r}; '
                f"{_JSON_FIX['WT_MCP_SERVERS']}"
            )
        servers.append(McpServer(name=item["name"], url=item["url"]))
    names = [server.name for server in servers]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SettingsError(
            f"WT_MCP_SERVERS names must be unique; repeated: {', '.join(duplicates)}: give each server its own name"
        )
    return tuple(servers)


def _sampling(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    data = _json("WT_SAMPLING", text)
    if not isinstance(data, dict):
        raise SettingsError(
            f"WT_SAMPLING must be a JSON object, got {type(data).__name__}; {_JSON_FIX['WT_SAMPLING']}"
        )
    unknown = sorted(set(data) - set(SAMPLING_KEYS))
    if unknown:
        # Refusing beats ignoring: a knob silently dropped would make the benchmark lie (docs/contract-c.md).
        raise SettingsError(
            f"WT_SAMPLING has keys this runtime cannot honour: {unknown}; known: {list(SAMPLING_KEYS)}: "
            "drop the others"
        )
    # A key set to null is "not set": forward only what the caller actually chose.
    chosen = {key: value for key, value in data.items() if value is not None}
    _check_types(chosen)
    return chosen


def _check_types(sampling: Mapping[str, Any]) -> None:
    for key in ("temperature", "top_p"):
        value = sampling.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise SettingsError(f"WT_SAMPLING.{key} must be a number, got {value!r}")
    tokens = sampling.get("max_tokens")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0):
        raise SettingsError(f"WT_SAMPLING.max_tokens must be a positive integer, got {tokens!r}")
    choice = sampling.get("tool_choice")
    if choice is not None and (not isinstance(choice, str) or not choice):
        raise SettingsError(
            f'WT_SAMPLING.tool_choice must be "auto", "none", "required" or a tool name, got {choice!r}'
        )
