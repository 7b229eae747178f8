"""What a chat-completions request must look like before a mode sees it.

Every mode: a model and a non-empty messages array. When the gateway itself plays the model (script and
replay modes), also OpenAI's types and ranges for the fields it knows, so `temperature: "hot"` is the 400
OpenAI would answer, naming the field, not a 200 that hides a runtime's bug.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel._wire.body import (
    Check,
    Problem,
    exactly,
    fields_problem,
    integer,
    kind,
    messages_problem,
    model_problem,
    number,
    strings,
)

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


def required_problem(body: dict[str, Any]) -> Problem | None:
    return model_problem(body) or messages_problem(body)


def field_problem(body: dict[str, Any]) -> Problem | None:
    """The first known field whose type or range OpenAI would refuse (None is always allowed: the default)."""
    for index, message in enumerate(body["messages"]):
        if (problem := _message_problem(index, message)) is not None:
            return problem
    return fields_problem(body, _FIELDS)


def _message_problem(index: int, message: Any) -> Problem | None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        return f"{where} must be a message object, got {kind(message)}", where
    role = message.get("role")
    if role not in ROLES:
        return f"{where}.role must be one of {', '.join(sorted(ROLES))}, got {kind(role)}", f"{where}.role"
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        return (
            f"{where}.content must be a string, an array of parts or null, got {kind(content)}",
            f"{where}.content",
        )
    calls = message.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
        return (
            f"{where}.tool_calls must be an array of tool call objects, got {kind(calls)}",
            f"{where}.tool_calls",
        )
    return None


def _tools(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(tool, Mapping)
        and isinstance(tool.get("function"), Mapping)
        and isinstance(tool["function"].get("name"), str)
        for tool in value
    )


def _tool_choice(value: Any) -> bool:
    return value in ("none", "auto", "required") or isinstance(value, dict)


_FIELDS: dict[str, tuple[Check, str]] = {
    "temperature": (number(0, 2), "a number between 0 and 2"),
    "top_p": (number(0, 1), "a number between 0 and 1"),
    "presence_penalty": (number(-2, 2), "a number between -2 and 2"),
    "frequency_penalty": (number(-2, 2), "a number between -2 and 2"),
    "max_tokens": (integer(1), "a whole number of at least 1"),
    "max_completion_tokens": (integer(1), "a whole number of at least 1"),
    "n": (integer(1, 128), "a whole number from 1 to 128"),
    "seed": (integer(-(2**63), 2**63 - 1), "a whole number"),
    "top_logprobs": (integer(0, 20), "a whole number from 0 to 20"),
    "stream": (exactly(bool), "true or false"),
    "logprobs": (exactly(bool), "true or false"),
    "parallel_tool_calls": (exactly(bool), "true or false"),
    "store": (exactly(bool), "true or false"),
    "stream_options": (exactly(dict), "an object"),
    "response_format": (exactly(dict), "an object"),
    "metadata": (exactly(dict), "an object"),
    "logit_bias": (exactly(dict), "an object"),
    "user": (exactly(str), "a string"),
    "tools": (_tools, "an array of {type, function: {name, ...}} objects"),
    "tool_choice": (_tool_choice, '"none", "auto", "required" or an object'),
    "stop": (strings, "a string or an array of strings"),
}
