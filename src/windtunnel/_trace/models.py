"""The Trace: a versioned record of one run, written as JSON next to its score sidecar."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from windtunnel._core.tiers import Tier

TRACE_SCHEMA_VERSION = 1


class ErrorKind(StrEnum):
    """Why a run was invalid; the selftest ERROR subkinds (docs/selftests.md), plus where the fault lies."""

    PRECONDITION = "precondition"
    INTEGRITY = "integrity"
    SETUP = "setup"
    RUNTIME = "runtime"
    PROBE_CAPTURE = "probe-capture"
    MCP_EVIDENCE = "mcp-evidence"


class TraceError(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    message: str
    hint: str | None = None
    cause: str | None = Field(default=None, description="the error class that raised it")


class Turn(BaseModel):
    """One user turn and the response, with tool calls exactly as the runtime emitted them."""

    index: int
    user: str
    response: dict[str, Any] = Field(description="the send() result, untouched")
    shape: Literal["flat", "wrapper", "openai"]
    content: str | None
    tool_calls: list[Any] = Field(description="as emitted; never normalised")
    usage: dict[str, Any] | None = None
    rendered_prompt: str | None = None
    rendered_prompt_hash: str | None = None
    latency_ms: float = 0.0

    @model_validator(mode="after")
    def _hash_prompt(self) -> Turn:
        if self.rendered_prompt is not None:
            digest = hashlib.sha256(self.rendered_prompt.encode()).hexdigest()
            object.__setattr__(self, "rendered_prompt_hash", f"sha256:{digest}")
        else:
            object.__setattr__(self, "rendered_prompt_hash", None)
        return self


class Usage(BaseModel):
    """Summed OpenAI-style usage of every send; `known` is false when any send reported none."""

    known: bool
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


class ModelCall(BaseModel):
    """One inference call's usage (docs/estate.md); a field is null when that call did not report it."""

    conversation: str
    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None


class Trace(BaseModel):
    """One run of one scenario against one runtime."""

    schema_version: Literal[1] = 1
    run_id: str
    scenario: str
    pack: str | None
    runtime: str
    agent_id: str
    variant_id: str
    session_id: str
    run_index: int = 0
    attempt: int = Field(
        default=0,
        description="0 for the first try; n for the n-th retry of a failed live-flaky run, whose earlier "
        "attempts are recorded beside it",
    )
    tier: Tier = Field(
        default="stable", description="the scenario's run tier: when it runs, not what it asserts"
    )
    model_label: str | None = Field(
        default=None,
        description="the model the runtime answered with (its plugin's model_label()); null when unknown, "
        "never guessed. Evidence and scores are scoped to it",
    )
    reference_case: str | None = None
    reference_kind: Literal["golden", "poison"] | None = None
    started_at: str
    ended_at: str | None = None
    turns: list[Turn] = Field(default_factory=list)
    usage: Usage = Field(default_factory=lambda: Usage(known=False))
    model_calls: list[ModelCall] | None = None
    model_requests: list[dict[str, Any]] | None = Field(
        default=None, description="the model gateway's log for this run, when the runtime hands it over"
    )
    mcp_calls: list[dict[str, Any]] | None = Field(
        default=None, description="every tools/call the MCP mocks received during this run"
    )
    unknown_tool_calls: list[dict[str, Any]] | None = Field(
        default=None,
        description="reported tool calls ({turn, name, arguments}) to a tool no MCP mock of the run serves, "
        "which no mock received: the model invented the tool and the runtime answered it itself. Evidence, "
        "not an integrity error",
    )
    state: dict[str, Any] | None = Field(default=None, description="the StateProbe snapshot after the run")
    error: TraceError | None = None

    @property
    def final_content(self) -> str | None:
        return self.turns[-1].content if self.turns else None
