"""The seam between the gateway and a wire format: what a dialect does, and the values it reads a log into.

A dialect owns everything format-specific about one model API: its request checks, how a format-neutral
decision becomes its native JSON and its native stream events, how streamed events reassemble, its error
envelope, which body fields a tape fingerprint keeps, and how a logged call reads back as evidence. The
gateway picks the dialect by route (windtunnel._wire.registry); scripts and references stay neutral.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from windtunnel._core.reference import ReferenceDecision
from windtunnel._wire.fields import Problem


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call as the model emitted it. `name` is as emitted (qualified when the harness qualifies
    it), `arguments` decoded; `native` is the dialect's own object, untouched, for checks of raw shapes."""

    id: str | None
    name: str
    arguments: Any
    native: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Said:
    """One item of the conversation a model call was sent (or answered), read in its dialect.

    `role` is system, user, assistant or tool. An assistant item carries its `calls`; a tool item the id
    of the call it `answers` and, when the dialect has the flag, `is_error`. `native` is the item as sent.
    """

    role: str
    text: str
    calls: tuple[ToolCall, ...] = ()
    answers: str | None = None
    is_error: bool | None = None
    native: Any = None


Memory = dict[str, list[Any]]
"""A gateway's own conversation store, by answer id (one per gateway, shared by every dialect)."""


class Stateless:
    """For dialects whose requests always carry the whole conversation: nothing to recall or remember."""

    def recall(self, body: Mapping[str, Any], memory: Memory) -> tuple[list[Any] | None, Problem | None]:
        return None, None

    def remember(
        self, body: Mapping[str, Any], response: Mapping[str, Any], history: list[Any] | None, memory: Memory
    ) -> None:
        return None


@runtime_checkable
class Dialect(Protocol):
    """One wire format at the gateway boundary.

    `name` is what the log's `wire` field says. `messages_key` names the body field holding the
    conversation (logged under `messages`); `sampling_keys` the fields logged under `sampling`;
    `fingerprint_fields` the other body fields an upstream would see that a tape fingerprint keeps (it
    keeps the sampling keys too).
    `done_frame` ends a stream (b"" when the format has no terminator of its own).
    """

    name: str
    messages_key: str
    sampling_keys: frozenset[str]
    fingerprint_fields: frozenset[str]
    done_frame: bytes

    def required_problem(self, body: dict[str, Any]) -> Problem | None:
        """What every mode refuses: the fields the API requires, missing or of the wrong kind."""
        ...

    def field_problem(self, body: dict[str, Any]) -> Problem | None:
        """Types and ranges the real API refuses; checked only where the gateway plays the model."""
        ...

    def render(self, decision: ReferenceDecision, body: Mapping[str, Any]) -> dict[str, Any]:
        """The native JSON answer for `decision`; tool names resolved against the tools `body` offered
        (raises windtunnel._wire.tools.ToolNameError when a name resolves to none or several)."""
        ...

    def events(self, response: Mapping[str, Any], body: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The native stream events that carry `response`, in order."""
        ...

    def frame(self, event: Mapping[str, Any]) -> bytes:
        """One event as SSE bytes."""
        ...

    def assemble(self, events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The native answer rebuilt from its stream events, as a client would."""
        ...

    def error_body(self, message: str, code: str, *, param: str | None = None) -> dict[str, Any]:
        """The format's error envelope."""
        ...

    def stream_error(self, message: str, code: str) -> dict[str, Any]:
        """The in-stream error event sent when a stream breaks off after it started."""
        ...

    def recall(self, body: Mapping[str, Any], memory: Memory) -> tuple[list[Any] | None, Problem | None]:
        """The earlier conversation a request refers to by id (Responses' previous_response_id), from the
        gateway's own `memory`; (None, None) when it refers to none, a problem when the id is unknown."""
        ...

    def remember(
        self, body: Mapping[str, Any], response: Mapping[str, Any], history: list[Any] | None, memory: Memory
    ) -> None:
        """Keep what a later request may refer to by this answer's id."""
        ...

    def neutral_sampling(self, sampling: Mapping[str, Any]) -> dict[str, Any]:
        """A logged call's sampling in Wind Tunnel's vocabulary (WT_SAMPLING's: temperature, top_p,
        max_tokens, tool_choice as "auto" | "required" | "none" | {"type": "function", "function": {name}}),
        so one check reads every dialect."""
        ...

    def logged_response(self, response: Mapping[str, Any]) -> Any:
        """What the log keeps as the call's `response`: the answer in native shape."""
        ...

    def usage(self, response: Mapping[str, Any]) -> Any:
        """The native usage object of an answer, or None."""
        ...

    def offered_tools(self, tools: Any) -> list[str]:
        """The tool names a request offered, qualified as the model must emit them."""
        ...

    def transcript(self, entry: Mapping[str, Any]) -> list[Said]:
        """The conversation a logged call sent, item by item, system prompt first."""
        ...

    def answer(self, entry: Mapping[str, Any]) -> Said | None:
        """The logged call's answer as an assistant item (None when refused)."""
        ...
