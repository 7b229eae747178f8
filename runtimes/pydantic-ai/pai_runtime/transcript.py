"""What a turn reports over Contract C: content, the ordered tool calls, usage, or why it failed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import openai


class TurnFailed(Exception):
    """The turn cannot finish (model refusal, unreachable tools, endless loop); answered 502 with this message."""


@dataclass(frozen=True, slots=True)
class TurnResult:
    content: str
    tool_calls: list[dict[str, Any]]
    usage: dict[str, Any] | None

    def envelope(self) -> dict[str, Any]:
        body: dict[str, Any] = {"content": self.content, "tool_calls": self.tool_calls}
        if self.usage is not None:
            body["usage"] = self.usage
        return body


def decode_arguments(name: str, text: str | None, where: str) -> dict[str, Any]:
    """The arguments exactly as the model emitted them: json.loads of the raw text, key order kept."""
    try:
        arguments = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise TurnFailed(f"{where} ({name}) has arguments that are not JSON ({exc}): {text!r:.300}") from exc
    if not isinstance(arguments, dict):
        # Contract C reports arguments as an object; anything else cannot be reported without reshaping it.
        raise TurnFailed(f"{where} ({name}) has arguments that are not a JSON object: {text!r:.300}")
    return arguments


def usage_total(calls: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The turn's usage: every reported count summed, plus one usage dict per model call (seed 002)."""
    if not any(calls):
        return None  # no model call reported usage: say nothing rather than report zeros
    total: dict[str, Any] = {}
    for call in calls:
        _add(total, call)
    total["calls"] = [dict(call) for call in calls]
    return total


def _add(total: dict[str, Any], usage: Mapping[str, Any]) -> None:
    for key, value in usage.items():
        if isinstance(value, bool):
            continue
        current = total.get(key)
        if isinstance(value, int | float) and (current is None or isinstance(current, int | float)):
            total[key] = (current or 0) + value
        elif isinstance(value, Mapping) and (current is None or isinstance(current, dict)):
            _add(total.setdefault(key, {}), value)


def describe(exc: BaseException) -> str:
    """One line naming the cause, with the model gateway's own error message when it refused the call."""
    found = _find(exc, openai.APIError)
    if isinstance(found, openai.APIStatusError):
        return _refusal(found)
    if isinstance(found, openai.APIError):
        url = found.request.url if found.request is not None else "the model gateway"
        return f"model call to {url} failed: {type(found).__name__}: {found.message}"
    return _innermost(exc)


def _refusal(exc: openai.APIStatusError) -> str:
    body = exc.body
    message, code = exc.message, exc.code
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            message = str(error.get("message") or message)
            code = code or error.get("code") or error.get("type")
    suffix = f" (code {code})" if code else ""
    return f"model call to {exc.request.url} answered HTTP {exc.status_code}: {message}{suffix}"


def _find(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first `kind` in exc, its groups, causes and contexts: SDKs wrap the error they were handed."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        current = stack.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def _innermost(exc: BaseException) -> str:
    """The innermost causes of a (possibly grouped) failure, one line: task groups wrap the real error."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_innermost(inner) for inner in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
