"""What a chat-completions request must look like before a mode sees it.

Every mode: a model and a non-empty messages array. When the gateway itself plays the model (script and
replay modes), also OpenAI's types and ranges for the fields it knows, so `temperature: "hot"` is the 400
OpenAI would answer, naming the field, not a 200 that hides a runtime's bug.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel._wire import fields
from windtunnel._wire.body import messages_problem, model_problem
from windtunnel._wire.fields import Problem

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


def required_problem(body: dict[str, Any]) -> Problem | None:
    return model_problem(body) or messages_problem(body)


def field_problem(body: dict[str, Any]) -> Problem | None:
    """The first known field whose type or range OpenAI would refuse (None is always allowed: the default)."""
    for index, message in enumerate(body["messages"]):
        if (problem := _message_problem(index, message)) is not None:
            return problem
    return fields.first_problem(body, _FIELDS)


def _message_problem(index: int, message: Any) -> Problem | None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        return f"{where} must be a message object, got {fields.kind(message)}", where
    role = message.get("role")
    if role not in ROLES:
        return (
            f"{where}.role must be one of {', '.join(sorted(ROLES))}, got {fields.kind(role)}",
            f"{where}.role",
        )
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        return (
            f"{where}.content must be a string, an array of parts or null, got {fields.kind(content)}",
            f"{where}.content",
        )
    calls = message.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
        return (
            f"{where}.tool_calls must be an array of tool call objects, got {fields.kind(calls)}",
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


_FIELDS: dict[str, fields.Field] = {
    "temperature": fields.between(0, 2),
    "top_p": fields.between(0, 1),
    "presence_penalty": fields.between(-2, 2),
    "frequency_penalty": fields.between(-2, 2),
    "max_tokens": fields.at_least(1),
    "max_completion_tokens": fields.at_least(1),
    "n": fields.whole(1, 128),
    "seed": (fields.integer(-(2**63), 2**63 - 1), "a whole number"),
    "top_logprobs": fields.whole(0, 20),
    "stream": fields.BOOLEAN,
    "logprobs": fields.BOOLEAN,
    "parallel_tool_calls": fields.BOOLEAN,
    "store": fields.BOOLEAN,
    "stream_options": fields.OBJECT,
    "response_format": fields.OBJECT,
    "metadata": fields.OBJECT,
    "logit_bias": fields.OBJECT,
    "user": fields.STRING,
    "tools": (_tools, "an array of {type, function: {name, ...}} objects"),
    "tool_choice": (_tool_choice, '"none", "auto", "required" or an object'),
    "stop": (fields.strings, "a string or an array of strings"),
}
