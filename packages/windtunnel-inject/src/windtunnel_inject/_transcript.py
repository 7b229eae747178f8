"""What a turn reports over Contract C (content, the ordered tool calls, usage), and how a loop records it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeVar

E = TypeVar("E", bound=BaseException)


class TurnFailed(Exception):
    """The turn cannot finish (a model refusal, unreachable tools, an endless loop); the server answers 502
    with `str(exc)` as the error, so say what failed and, where you can, the other side's own message."""


class ToolCall(TypedDict):
    """One tool call as Contract C reports it: the name and the arguments exactly as the model emitted them."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    """A finished turn: the answer, every tool call of the turn in the order the model made them
    (intermediate ones included), and the usage if the model reported any."""

    content: str
    tool_calls: Sequence[ToolCall] = ()
    usage: Mapping[str, Any] | None = None

    def envelope(self) -> dict[str, Any]:
        """The 200 body of POST /wt/inject: `content`, `tool_calls` (present even when empty), `usage`."""
        body: dict[str, Any] = {"content": self.content, "tool_calls": list(self.tool_calls)}
        if self.usage is not None:
            body["usage"] = self.usage
        return body


@dataclass(slots=True)
class Transcript:
    """A turn's record, kept as the loop runs: call model_call() for each model answer, tool_call() for each
    tool call it emitted, then turn(content).

    `steps` holds the tool calls of each model call and `usages` the usage each reported ({} for none),
    both in order, for loops that report something other than everything (see runtimes/reference).
    """

    steps: list[list[ToolCall]] = field(default_factory=list)
    usages: list[dict[str, Any]] = field(default_factory=list)

    def model_call(self, usage: Mapping[str, Any] | None = None) -> None:
        """The model answered once; `usage` is what that call reported (None or {}: nothing)."""
        self.steps.append([])
        self.usages.append(dict(usage or {}))

    def tool_call(self, name: str, arguments: str | Mapping[str, Any] | None, where: str = "") -> ToolCall:
        """Record a call the last model answer made, its arguments decoded from the model's raw text (or
        taken as given when the SDK already decoded them); raises TurnFailed when they are not an object."""
        if not self.steps:
            self.model_call()  # a loop that does not report its model calls still gets its calls in order
        where = where or f"model call {len(self.steps)}, tool call {len(self.steps[-1])}"
        call = ToolCall(name=name, arguments=decode_arguments(name, arguments, where))
        self.steps[-1].append(call)
        return call

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every recorded call of the turn, in order."""
        return [call for step in self.steps for call in step]

    def usage(self) -> dict[str, Any] | None:
        return usage_total(self.usages)

    def turn(self, content: str) -> Turn:
        """The turn as Contract C reports it: all recorded calls, the usage summed with one entry per call."""
        return Turn(content, self.tool_calls, self.usage())


def decode_arguments(name: str, raw: str | Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    """The arguments exactly as the model emitted them: json.loads of the raw text, key order kept."""
    if isinstance(raw, Mapping):
        return dict(raw)
    text = raw or "{}"
    try:
        arguments = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise TurnFailed(f"{where} ({name}) has arguments that are not JSON ({exc}): {_clip(text)}") from exc
    if not isinstance(arguments, dict):
        # Contract C reports arguments as an object; anything else cannot be reported without reshaping it.
        raise TurnFailed(f"{where} ({name}) has arguments that are not a JSON object: {_clip(text)}")
    return arguments


def _clip(text: object) -> str:
    return repr(text[:300]) if isinstance(text, str) else repr(text)[:300]


def usage_total(calls: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A turn's usage: every count the calls reported, summed, plus `calls`, one usage dict per model call
    (docs/writing-a-runtime.md). None when no call reported any: nothing rather than zeros."""
    if not any(calls):
        return None
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


def find_cause(exc: BaseException, kind: type[E]) -> E | None:
    """The first `kind` in `exc`, its exception groups, causes and contexts: SDKs wrap what they were handed."""
    seen: set[int] = set()
    queue = [exc]
    while queue:
        current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        if isinstance(current, BaseExceptionGroup):
            queue.extend(current.exceptions)
        queue.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def describe(exc: BaseException) -> str:
    """One line naming the innermost causes of a (possibly grouped) failure: task groups wrap the real one."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
