"""The dialects the gateway speaks, by name; a log entry names its dialect in `wire` (none: chat, as before)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel._wire.anthropic_messages import AnthropicMessages
from windtunnel._wire.dialect import Dialect
from windtunnel._wire.openai_chat import OpenAIChat
from windtunnel._wire.openai_responses import OpenAIResponses

CHAT: Dialect = OpenAIChat()
MESSAGES: Dialect = AnthropicMessages()
RESPONSES: Dialect = OpenAIResponses()
DIALECTS: dict[str, Dialect] = {dialect.name: dialect for dialect in (CHAT, MESSAGES, RESPONSES)}
BY_WIRE: dict[str, Dialect] = {"chat": CHAT, "messages": MESSAGES, "responses": RESPONSES}
"""The dialect of each wire a runtime declares (runtime.toml `[model] wire`, WT_MODEL_WIRE)."""


def dialect_of(entry: Mapping[str, Any]) -> Dialect:
    """The dialect a logged call was made in; entries from before dialects existed are chat."""
    return DIALECTS.get(str(entry.get("wire") or CHAT.name), CHAT)


def dialect_for_path(path: str) -> Dialect:
    """The dialect of a model route (what the gateway's routes pick; tapes read it from a recorded path)."""
    route = path.split("?", 1)[0].rstrip("/")
    if route.endswith("/messages"):
        return MESSAGES
    if route.endswith("/responses"):
        return RESPONSES
    return CHAT
