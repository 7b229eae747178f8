"""Tools over fixture state: the in-process core of an MCP mock, shared by every way of serving it."""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import jsonschema

from windtunnel._core.faults import ToolFault
from windtunnel._core.foreign import foreign_code
from windtunnel._core.frozen import freeze
from windtunnel._core.json_copy import json_copy
from windtunnel._core.mock_steps import ASKS, Log, Reply, Step, check_steps
from windtunnel._core.mock_surface import Prompt, Resource, ResourceTemplate, ToolResult
from windtunnel.errors import HarnessError, PackError, WindTunnelError

Handler = Callable[..., Any]
"""A tool handler: `handler(state, arguments) -> JSON result or ToolResult`. It may mutate `state`. A tool
whose steps ask the client something (Elicit, Sample) gets the answers too: `handler(state, arguments,
replies)`, one Reply per asking step, in order."""


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

    `output_schema` is listed as the tool's outputSchema; structured results are checked against it.
    `steps` are sent to the client during the call, in order, before the handler runs (progress, log
    messages, elicitation and sampling requests, closing the stream): windtunnel._core.mock_steps.
    A tool with steps needs a server with sessions=True.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Handler
    blocking: bool = False
    output_schema: Mapping[str, Any] | None = None
    steps: Sequence[Step] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", check_steps(f"Tool {self.name!r}: steps", self.steps))
        schema = self.output_schema
        if schema is not None and (not isinstance(schema, Mapping) or schema.get("type") != "object"):
            raise PackError(
                f"Tool {self.name!r}: output_schema is not an object schema",
                hint='MCP structured content is an object: give {"type": "object", ...}',
                field="output_schema",
            )

    @property
    def asks(self) -> bool:
        """Whether the tool sends the client requests (Elicit, Sample) whose answers its handler gets."""
        return any(isinstance(step, ASKS) for step in self.steps)


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
    """A named set of tools over one fixture state; records every call it receives, bad ones included.

    Opt-in, beyond tools (docs/design.md, "MCP mocks"): `resources`, `resource_templates` and `prompts`
    are served and announced as capabilities; `sessions=True` serves with Mcp-Session-Id, SSE responses
    and resumable streams, which tools with steps need. A server that declares none of these is served
    as ever: tools only, stateless, one JSON body per POST.
    """

    def __init__(
        self,
        name: str,
        tools: Sequence[Tool],
        state: Mapping[str, Any] | None = None,
        *,
        resources: Sequence[Resource] = (),
        resource_templates: Sequence[ResourceTemplate] = (),
        prompts: Sequence[Prompt] = (),
        sessions: bool = False,
    ) -> None:
        self.name = name
        self.tools: dict[str, Tool] = {tool.name: tool for tool in tools}
        self.resources: tuple[Resource, ...] = _typed(name, "resources", resources, Resource)
        self.resource_templates: tuple[ResourceTemplate, ...] = _typed(
            name, "resource_templates", resource_templates, ResourceTemplate
        )
        self.prompts: tuple[Prompt, ...] = _typed(name, "prompts", prompts, Prompt)
        self.sessions = sessions
        for tool in self.tools.values():
            if tool.steps and not sessions:
                raise PackError(
                    f"MockServer {name!r}: tool {tool.name!r} declares steps, which a stateless server cannot send",
                    hint=f"pass sessions=True to MockServer({name!r}, ...)",
                    field="sessions",
                )
        self._state: dict[str, Any] = json_copy(dict(state or {}))
        self._calls: list[dict[str, Any]] = []
        self._requests: list[dict[str, Any]] = []
        self._faults: list[ToolFault] = []  # scripted by PUT /wt/faults; a reset builds a server without
        self._lock = threading.Lock()

    @property
    def logs(self) -> bool:
        """Whether a tool sends log messages (then the server announces `logging`)."""
        return any(isinstance(step, Log) for tool in self.tools.values() for step in tool.steps)

    @property
    def completes(self) -> bool:
        """Whether a prompt argument or a template variable offers completions (`completions`)."""
        return any(arg.completions for prompt in self.prompts for arg in prompt.arguments) or any(
            template.completions for template in self.resource_templates
        )

    def call(
        self,
        name: str,
        arguments: Any,
        *,
        replies: Sequence[Reply] = (),
        exchanges: Sequence[Mapping[str, Any]] = (),
        session: str | None = None,
    ) -> CallOutcome:
        """Run one tool call against the state and record it with its raw arguments.

        `replies` are the client's answers to the tool's asking steps; `exchanges` is what the mock sent
        the client during the call and what came back, recorded with the call as evidence. `session` is
        the Wind Tunnel session the call was served for (its X-WT-Session header), recorded when sent.
        """
        raw = json_copy(arguments)
        if self.is_blocking(name):
            outcome = self._dispatch(name, arguments, {}, replies)
            with self._lock:
                self._record(name, raw, outcome, exchanges, session=session)
            return outcome
        with self._lock:
            outcome = self._dispatch(name, arguments, self._state, replies)
            self._record(name, raw, outcome, exchanges, session=session)
        return outcome

    def runs_steps(self, name: str, arguments: Any) -> Tool | None:
        """The tool a call of `name` with `arguments` would run, when that tool sends steps (Tool.steps);
        None when it sends none or the call is refused first. A tool without steps is answered without
        validating here: `call()` validates every call once, and this is on every call's path."""
        tool = self.tools.get(name)
        if tool is None or not tool.steps or not isinstance(arguments, dict):
            return None
        try:
            _validate(arguments, tool.input_schema)
        except jsonschema.ValidationError:
            return None
        return tool

    def record_request(self, method: str, params: Any, answer: Any, error: str | None = None) -> None:
        """Record a request other than tools/call (resources, prompts, completion, logging level)."""
        entry = {"server": self.name, "method": method, "params": json_copy(params)}
        entry |= {"answer": json_copy(answer), "error": error, "at": time.time()}
        with self._lock:
            self._requests.append(entry)

    def requests(self) -> list[dict[str, Any]]:
        """Every request other than tools/call since the last reset, in order."""
        with self._lock:
            return json_copy(self._requests)

    def script_faults(self, faults: Sequence[ToolFault]) -> None:
        """Queue scripted faults (windtunnel._core.faults); each is served to the next call of its tool."""
        with self._lock:
            self._faults.extend(faults)

    def take_fault(self, name: str, *, kinds: Collection[str] | None = None) -> ToolFault | None:
        """The first queued fault of tool `name`, taken off the queue if its kind is one of `kinds` (any,
        when None); None otherwise."""
        with self._lock:
            index = next((i for i, fault in enumerate(self._faults) if fault.tool == name), None)
            if index is None or (kinds is not None and self._faults[index].kind not in kinds):
                return None
            return self._faults.pop(index)

    def pending_faults(self) -> list[dict[str, Any]]:
        with self._lock:
            return [fault.to_json() for fault in self._faults]

    def record_fault(self, name: str, arguments: Any, fault: ToolFault, error: str) -> None:
        """Record a call that a scripted fault answered instead of the tool (the tool did not run)."""
        outcome = CallOutcome(result=None, is_error=True, violation=False, error=error)
        with self._lock:
            self._record(name, json_copy(arguments), outcome, (), fault=fault.kind)

    def is_blocking(self, name: str) -> bool:
        """Whether `name` is a tool whose handler waits (see Tool.blocking)."""
        tool = self.tools.get(name)
        return tool is not None and tool.blocking

    def _record(
        self,
        name: str,
        raw: Any,
        outcome: CallOutcome,
        exchanges: Sequence[Mapping[str, Any]],
        *,
        fault: str | None = None,
        session: str | None = None,
    ) -> None:
        result = outcome.result.wire() if isinstance(outcome.result, ToolResult) else outcome.result
        entry = {
            "server": self.name,
            "name": name,
            "arguments": raw,
            "result": json_copy(result),
            "is_error": outcome.is_error,
            "violation": outcome.violation,
            "error": outcome.error,
            "at": time.time(),
        }
        if exchanges:  # only tools with steps have them: every other call's record is as it always was
            entry["exchanges"] = json_copy(list(exchanges))
        if fault is not None:  # likewise only a call a scripted fault answered
            entry["fault"] = fault
        if session is not None:  # and only a call that named its session (X-WT-Session is optional)
            entry["session"] = session
        self._calls.append(entry)

    def calls(self) -> list[dict[str, Any]]:
        with self._lock:
            return json_copy(self._calls)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return json_copy(self._state)

    def _dispatch(
        self, name: str, arguments: Any, state: dict[str, Any], replies: Sequence[Reply]
    ) -> CallOutcome:
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
        unmet = next((reply for reply in replies if not reply.met), None)
        if unmet is not None:  # the script's expectation failed: the tool stops, as a real one would
            return _error(f"the client's {unmet.kind} answer was not the one expected: {unmet.error}")
        return _handled(tool, arguments, state, replies)


def _handled(
    tool: Tool, arguments: dict[str, Any], state: dict[str, Any], replies: Sequence[Reply]
) -> CallOutcome:
    """The handler's outcome: its result, or the error, denial or refusal it raised."""
    extra = (tuple(replies),) if tool.asks else ()
    try:
        result = tool.handler(state, json_copy(arguments), *extra)
    except ToolDenied as exc:
        return CallOutcome(result=None, is_error=True, violation=True, error=f"denied: {exc}")
    except InvalidParams as exc:
        return _invalid(str(exc))
    except ToolError as exc:
        return _error(str(exc))
    return _checked(tool, result)


def _checked(tool: Tool, result: Any) -> CallOutcome:
    """The result, or an error naming how its structured content breaks the tool's output schema."""
    structured = result.structured if isinstance(result, ToolResult) else result
    if tool.output_schema is not None:
        if not isinstance(structured, Mapping):  # MCP: a tool with an outputSchema MUST return an object
            return _error(
                f"{tool.name!r} declares an output_schema but returned no structured content object"
            )
        try:
            _validate(dict(structured), tool.output_schema)
        except jsonschema.ValidationError as exc:
            return _error(f"the result of {tool.name!r} breaks its output_schema: {exc.message}")
    return CallOutcome(result=result, is_error=False, violation=False, error=None)


def _typed(server: str, field: str, values: Any, kind: type) -> tuple[Any, ...]:
    """A declaration list as a tuple of `kind`; a PackError naming the server and field otherwise."""
    frozen = freeze(values)
    if not isinstance(frozen, tuple) or not all(isinstance(value, kind) for value in frozen):
        raise PackError(
            f"MockServer {server!r}: {field} must be a list of {kind.__name__}, got {frozen!r}"[:300],
            hint=f"write {field}=[{kind.__name__}(...), ...]",
            field=field,
        )
    return frozen


def _validate(arguments: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """`jsonschema.validate()`, with each distinct schema checked and compiled once instead of per call."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        jsonschema.validate(arguments, dict(schema))
        return
    validator = _compiled(key)
    if validator.is_valid(arguments):  # the usual call: no search for the best of no errors
        return
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
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
