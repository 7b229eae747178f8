"""A request body before any dialect reads it: JSON, not too deep, an object, with a model (and messages).

The checks of a dialect's own fields are windtunnel._wire.fields.
"""

from __future__ import annotations

import json
from typing import Any

from windtunnel._wire.fields import Problem, kind

MAX_DEPTH = 64
"""Deeper JSON is refused: no model request nests this deep, and deeper ones only cost recursion."""

_TOO_DEEP = object()


def parse_body(raw: bytes) -> tuple[dict[str, Any], Problem | None]:
    """The body as an object, or what is wrong with it (not JSON, too deep, not an object)."""
    try:
        body = json.loads(raw)
    except RecursionError:
        body = _TOO_DEEP
    except ValueError as exc:
        return {}, (f"the request body is not JSON: {exc}", None)
    if body is _TOO_DEEP or _too_deep(body):
        return {}, (f"the request body nests deeper than {MAX_DEPTH} levels", None)
    if not isinstance(body, dict):
        return {}, (f"the request body must be a JSON object, got {kind(body)}", None)
    return body, None


def model_problem(body: dict[str, Any]) -> Problem | None:
    """Every dialect needs a model name."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter (a non-empty string)", "model"
    return None


def messages_problem(body: dict[str, Any]) -> Problem | None:
    """Chat and Anthropic requests carry their conversation as a non-empty `messages` array."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return f"messages must be a non-empty array of message objects, got {kind(messages)}", "messages"
    return None


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
