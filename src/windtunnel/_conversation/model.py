"""The conversation evidence model: one versioned record a trace or a conformance session turns into.

Every tool call is seen three times: as the model emitted it (the gateway's log), as an MCP mock received
and answered it, and as the runtime reported it. A conversation lines the three views up one to one per
turn (`ToolCallRow`) and lists where they disagree (`Disagreement`); the report renders it (docs/bundle.md,
"The report"). Checks that compare the views record conversations in their evidence, so any verdict can be
read against the same timeline.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CONVERSATION_SCHEMA_VERSION = 1


class View(StrEnum):
    MODEL = "model"
    MOCK = "mock"
    RUNTIME = "runtime"


class DiffKind(StrEnum):
    """How the views of a tool call disagree."""

    NOT_RECEIVED = "not_received"
    """The model emitted the call but no MCP mock received it."""
    NOT_REPORTED = "not_reported"
    """A mock received the call but the runtime did not report it."""
    NOT_EMITTED = "not_emitted"
    """A mock received or the runtime reported a call the model never emitted."""
    REPORTED_NOT_RECEIVED = "reported_not_received"
    """The runtime reported a call that no mock received."""
    ARGUMENTS = "arguments"
    """The same tool call carries different arguments in two views."""
    ORDER = "order"
    """The runtime reported the calls in another order than the model emitted them."""
    RESULT = "result"
    """The result the model was sent for a call is not what the mock answered for it."""
    FINAL_ANSWER = "final_answer"
    """The turn's reported answer is not the model's last message of the turn as the gateway served it."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CallView(_Model):
    """One view of one tool call: the tool, its arguments as that view holds them, and what it knows more."""

    name: str | None
    arguments: Any = Field(description="decoded when the view holds JSON text; as held otherwise")
    argument_text: str | None = Field(default=None, description="the argument text exactly as held")
    call_id: str | None = None
    server: str | None = Field(default=None, description="mock view: the MCP server that received it")
    result: Any = Field(default=None, description="mock view: what the tool answered")
    is_error: bool | None = Field(default=None, description="mock view: whether the answer was an error")
    error: str | None = Field(default=None, description="mock view: why the call was refused")


class ToolCallRow(_Model):
    """One tool call in its three views, side by side; a view is null when it lacks the call."""

    step: int | None = Field(description="the model call (position in the turn) that emitted it, if any")
    model: CallView | None = None
    mock: CallView | None = None
    runtime: CallView | None = None
    result_to_model: str | None = Field(
        default=None, description="the tool message content the next model call carried for this call's id"
    )


class ModelCallView(_Model):
    """One model call as the gateway saw it: what it was sent and what it answered."""

    index: int | None = Field(default=None, description="the gateway log's index")
    model: str | None = None
    messages: list[Any] = Field(default_factory=list, description="the rendered prompt exactly as received")
    tools: list[str] = Field(default_factory=list, description="the names of the tools offered")
    sampling: dict[str, Any] = Field(default_factory=dict)
    content: str | None = Field(default=None, description="the answer's text")
    tool_calls: list[Any] = Field(default_factory=list, description="the answer's tool calls as served")
    status: int | None = None
    error: str | None = None
    session: str | None = Field(default=None, description="the X-WT-Session header it carried, if any")


class ConversationTurn(_Model):
    index: int
    user: str | None
    model_calls: list[ModelCallView] = Field(default_factory=list)
    tool_calls: list[ToolCallRow] = Field(default_factory=list)
    final: str | None = Field(default=None, description="the answer the runtime reported")


class Disagreement(_Model):
    turn: int
    row: int | None = Field(description="the ToolCallRow of the turn it concerns; null for the whole turn")
    kind: DiffKind
    text: str


class Finding(_Model):
    """A check's own comparison on this conversation (bytes of a tool result, the session a call served),
    shown beside the three views: what was compared, whether it held and, when not, where it differed."""

    turn: int | None = Field(description="the turn it concerns (0-based); null for the whole conversation")
    model_call: int | None = Field(default=None, description="the model call of the turn, when one")
    compared: str = Field(description="what was compared with what")
    held: bool
    text: str = Field(description="the outcome: where it differed and both excerpts, or what agreed")


class Conversation(_Model):
    """A run's or a check session's conversation; `views` says which views were available at all."""

    schema_version: Literal[1] = 1
    title: str
    runtime: str
    source: Literal["trace", "session"]
    views: list[View] = Field(description="the views the run could see; a missing view is not a disagreement")
    turns: list[ConversationTurn] = Field(default_factory=list)
    disagreements: list[Disagreement] = Field(default_factory=list)
    error: str | None = Field(default=None, description="why the run stopped, when it did")
    findings: list[Finding] = Field(default_factory=list, description="a check's own comparisons")
