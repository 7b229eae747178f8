"""A request body before any dialect reads it: JSON, not too deep, an object; and the value checks dialects share.

A problem is (message, param): the 400's error message and the field it names.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
"""Deeper JSON is refused: no model request nests this deep, and deeper ones only cost recursion."""

Problem = tuple[str, str | None]
Check = Callable[[Any], bool]
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


def fields_problem(body: dict[str, Any], fields: dict[str, tuple[Check, str]]) -> Problem | None:
    """The first field of `fields` present (and not null, the default) whose value fails its check."""
    for name, (check, expected) in fields.items():
        value = body.get(name)
        if value is not None and not check(value):
            return f"{name} must be {expected}, got {kind(value)}", name
    return None


def number(low: float, high: float) -> Check:
    return lambda v: (
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and low <= v <= high
    )


def integer(low: float, high: float = math.inf) -> Check:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def exactly(type_: type) -> Check:
    """Exactly `type_`: a boolean is not a number, and a number is not a boolean."""
    return lambda v: isinstance(v, type_) and (type_ is bool or not isinstance(v, bool))


def strings(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(s, str) for s in value))


def objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


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


def kind(value: Any) -> str:
    """A value as an error message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    return "a JSON array" if isinstance(value, list) else "a JSON object"
