"""What a chat-completions request must look like before a mode sees it.

Every mode: JSON, nested at most MAX_DEPTH levels, an object with a model and a non-empty messages array.
When the gateway itself plays the model (script and replay modes), also OpenAI's types and ranges for the
fields it knows, so `temperature: "hot"` is the 400 OpenAI would answer, naming the field, not a 200 that
hides a runtime's bug. In live and record modes the upstream is the authority and answers for itself.
A problem is (message, param): the 400's error message and the field it names.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

MAX_DEPTH = 64
"""Deeper JSON is refused: no chat request nests this deep, and deeper ones only cost recursion."""
STRICT_MODES = frozenset({"script", "replay"})
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

Problem = tuple[str, str | None]
_TOO_DEEP = object()


def parse_request(raw: bytes) -> tuple[dict[str, Any], Problem | None]:
    """The body as an object, or what is wrong with it (not JSON, too deep, not an object, no model...)."""
    try:
        body = json.loads(raw)
    except RecursionError:
        body = _TOO_DEEP
    except ValueError as exc:
        return {}, (f"the request body is not JSON: {exc}", None)
    if body is _TOO_DEEP or _too_deep(body):
        return {}, (f"the request body nests deeper than {MAX_DEPTH} levels", None)
    if not isinstance(body, dict):
        return {}, (f"the request body must be a JSON object, got {_kind(body)}", None)
    return body, _required_problem(body)


def _required_problem(body: Mapping[str, Any]) -> Problem | None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter (a non-empty string)", "model"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return f"messages must be a non-empty array of message objects, got {_kind(messages)}", "messages"
    return None


def field_problem(body: Mapping[str, Any]) -> Problem | None:
    """The first known field whose type or range OpenAI would refuse (None is always allowed: the default)."""
    for index, message in enumerate(body["messages"]):
        if (problem := _message_problem(index, message)) is not None:
            return problem
    for name, (check, expected) in _FIELDS.items():
        value = body.get(name)
        if value is not None and not check(value):
            return f"{name} must be {expected}, got {_kind(value)}", name
    return None


def _message_problem(index: int, message: Any) -> Problem | None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        return f"{where} must be a message object, got {_kind(message)}", where
    role = message.get("role")
    if role not in ROLES:
        return f"{where}.role must be one of {', '.join(sorted(ROLES))}, got {_kind(role)}", f"{where}.role"
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        return (
            f"{where}.content must be a string, an array of parts or null, got {_kind(content)}",
            f"{where}.content",
        )
    calls = message.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
        return (
            f"{where}.tool_calls must be an array of tool call objects, got {_kind(calls)}",
            f"{where}.tool_calls",
        )
    return None


def _number(low: float, high: float) -> Callable[[Any], bool]:
    return lambda v: (
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and low <= v <= high
    )


def _integer(low: float, high: float = math.inf) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _is(kind: type) -> Callable[[Any], bool]:
    """Exactly `kind`: a boolean is not a number, and a number is not a boolean."""
    return lambda v: isinstance(v, kind) and (kind is bool or not isinstance(v, bool))


def _tools(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(tool, dict)
        and isinstance(tool.get("function"), dict)
        and isinstance(tool["function"].get("name"), str)
        for tool in value
    )


def _stop(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(s, str) for s in value))


def _tool_choice(value: Any) -> bool:
    return value in ("none", "auto", "required") or isinstance(value, dict)


_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "temperature": (_number(0, 2), "a number between 0 and 2"),
    "top_p": (_number(0, 1), "a number between 0 and 1"),
    "presence_penalty": (_number(-2, 2), "a number between -2 and 2"),
    "frequency_penalty": (_number(-2, 2), "a number between -2 and 2"),
    "max_tokens": (_integer(1), "a whole number of at least 1"),
    "max_completion_tokens": (_integer(1), "a whole number of at least 1"),
    "n": (_integer(1, 128), "a whole number from 1 to 128"),
    "seed": (_integer(-(2**63), 2**63 - 1), "a whole number"),
    "top_logprobs": (_integer(0, 20), "a whole number from 0 to 20"),
    "stream": (_is(bool), "true or false"),
    "logprobs": (_is(bool), "true or false"),
    "parallel_tool_calls": (_is(bool), "true or false"),
    "store": (_is(bool), "true or false"),
    "stream_options": (_is(dict), "an object"),
    "response_format": (_is(dict), "an object"),
    "metadata": (_is(dict), "an object"),
    "logit_bias": (_is(dict), "an object"),
    "user": (_is(str), "a string"),
    "tools": (_tools, "an array of {type, function: {name, ...}} objects"),
    "tool_choice": (_tool_choice, '"none", "auto", "required" or an object'),
    "stop": (_stop, "a string or an array of strings"),
}


def _too_deep(value: Any) -> bool:
    """Whether `value` nests deeper than MAX_DEPTH (iteratively: a deep value must not recurse here)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return False


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    return "a JSON array" if isinstance(value, list) else "a JSON object"
