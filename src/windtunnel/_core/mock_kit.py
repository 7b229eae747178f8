"""Tools over fixture state: the in-process core of an MCP mock, shared by every way of serving it."""

from __future__ import annotations

import copy
import functools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import jsonschema

from windtunnel._core.foreign import foreign_code
from windtunnel.errors import HarnessError, WindTunnelError

Handler = Callable[[dict[str, Any], dict[str, Any]], Any]
"""A tool handler: `handler(state, arguments) -> JSON result`. It may mutate `state`."""


class ToolError(Exception):
    """Raised by a handler: the agent gets an error result with this message."""


class InvalidParams(ToolError):
    """Raised by a handler to refuse the request itself: the agent gets JSON-RPC error -32602 (Invalid
    params) instead of a tool result, as for an unknown tool; the call is recorded anyway."""


class ToolDenied(ToolError):
    """Raised by a handler to deny a call by policy; recorded as a security violation."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """One mock tool: name, description shown to the agent, JSON schema of its arguments, handler.

    `blocking=True` is for a handler that waits (sleeps, polls) and reads no state and changes none: it
    gets an empty state, runs without the state lock and, when served over HTTP, in a worker thread, so
    the mock keeps answering every other call while it waits.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Handler
    blocking: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOutcome:
    """What one tools/call produced.

    `invalid_params` marks a call that names no tool of this server or whose arguments are not an object:
    MCP answers those with JSON-RPC error -32602 instead of a tool result (the call is recorded anyway).
    """

    result: Any
    is_error: bool
    violation: bool
    error: str | None
    invalid_params: bool = False


class MockServer:
    """A named set of tools over one fixture state; records every call it receives, bad ones included."""

    def __init__(self, name: str, tools: Sequence[Tool], state: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.tools: dict[str, Tool] = {tool.name: tool for tool in tools}
        self._state: dict[str, Any] = copy.deepcopy(dict(state or {}))
        self._calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def call(self, name: str, arguments: Any) -> CallOutcome:
        """Run one tool call against the state and record it with its raw arguments."""
        raw = copy.deepcopy(arguments)
        if self.is_blocking(name):
            outcome = self._dispatch(name, arguments, {})
            with self._lock:
                self._record(name, raw, outcome)
            return outcome
        with self._lock:
            outcome = self._dispatch(name, arguments, self._state)
            self._record(name, raw, outcome)
        return outcome

    def is_blocking(self, name: str) -> bool:
        """Whether `name` is a tool whose handler waits (see Tool.blocking)."""
        tool = self.tools.get(name)
        return tool is not None and tool.blocking

    def _record(self, name: str, raw: Any, outcome: CallOutcome) -> None:
        self._calls.append(
            {
                "server": self.name,
                "name": name,
                "arguments": raw,
                "result": copy.deepcopy(outcome.result),
                "is_error": outcome.is_error,
                "violation": outcome.violation,
                "error": outcome.error,
                "at": time.time(),
            }
        )

    def calls(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._calls)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return copy.deepcopy(self._state)

    def _dispatch(self, name: str, arguments: Any, state: dict[str, Any]) -> CallOutcome:
        tool = self.tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return _invalid(f"unknown tool {name!r} on server {self.name!r}; tools here: {known}")
        if not isinstance(arguments, dict):
            return _invalid(f"tool {name!r} takes an object of arguments, got {type(arguments).__name__}")
        try:
            _validate(arguments, tool.input_schema)
        except jsonschema.ValidationError as exc:
            return _error(f"bad arguments for {name!r}: {exc.message}")
        return _handled(tool, arguments, state)


def _handled(tool: Tool, arguments: dict[str, Any], state: dict[str, Any]) -> CallOutcome:
    """The handler's outcome: its result, or the error, denial or refusal it raised."""
    try:
        result = tool.handler(state, copy.deepcopy(arguments))
    except ToolDenied as exc:
        return CallOutcome(result=None, is_error=True, violation=True, error=f"denied: {exc}")
    except InvalidParams as exc:
        return _invalid(str(exc))
    except ToolError as exc:
        return _error(str(exc))
    return CallOutcome(result=result, is_error=False, violation=False, error=None)


def _validate(arguments: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """`jsonschema.validate()`, with each distinct schema checked and compiled once instead of per call."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        jsonschema.validate(arguments, dict(schema))
        return
    error = jsonschema.exceptions.best_match(_compiled(key).iter_errors(arguments))
    if error is not None:
        raise error


@functools.lru_cache(maxsize=256)
def _compiled(key: str) -> Any:
    # Checking the schema against its meta-schema costs more than the tool call itself; a bad schema
    # raises SchemaError here on every call, as jsonschema.validate() would, since errors are not cached.
    schema = json.loads(key)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _error(message: str) -> CallOutcome:
    return CallOutcome(result=None, is_error=True, violation=False, error=message)


def _invalid(message: str) -> CallOutcome:
    return CallOutcome(result=None, is_error=True, violation=False, error=message, invalid_params=True)


class MockHost:
    """Holds the live MockServer built by a pack factory; `reset()` builds a fresh one."""

    def __init__(self, factory: Callable[[], MockServer]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self.server = factory()

    @property
    def name(self) -> str:
        return self.server.name

    def reset(self) -> None:
        with self._lock:
            self.server = self._factory()


_T = TypeVar("_T")


def built_by_factory(
    pack: str, server: str, build: Callable[[], _T], *, error: type[WindTunnelError] = HarnessError
) -> _T:
    """`build()` with a pack's MCP server factory; an exception of the pack's code becomes `error`, naming
    the pack and the server (a WindTunnelError passes as it is)."""
    subject = f"pack {pack!r}: the factory of MCP server {server!r}"
    hint = "make the factory return a MockServer built from the pack's fixtures"
    with foreign_code(error, subject, hint=hint, pack=pack, server=server):
        return build()
